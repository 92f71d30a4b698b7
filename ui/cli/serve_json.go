package cli

import (
	"encoding/json"
	"fmt"
	"io"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/sync/pull"
)

// serveJSON is serve --json: on stdout, a {"type":"serving"} line when it
// listens, a {"type":"request"} line per request (the access log), and a
// {"type":"summary"} line when it stops, as the other commands' --json
// ends with one.
type serveJSON struct {
	w     io.Writer
	start time.Time
	mu    gosync.Mutex
	// counts of requests by outcome, and bytes sent
	requests, notFound, refused, failed, cut int
	bytes                                    int64
}

func newServeJSON(w io.Writer) *serveJSON { return &serveJSON{w: w, start: time.Now()} }

func (s *serveJSON) line(v any) {
	b, _ := json.Marshal(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "%s\n", b)
}

// serving is the first line: where it listens and how clients trust it.
func (s *serveJSON) serving(place, upstream string, sv netmirror.Serving) {
	m := map[string]any{"type": "serving", "place": place, "url": sv.URL, "addr": sv.Addr}
	if sv.CertOut != "" {
		m["cert_out"], m["hosts"] = sv.CertOut, sv.Hosts
	}
	if upstream != "" {
		m["upstream"] = upstream
	}
	s.line(m)
}

// access is one request's line.
func (s *serveJSON) access(a pull.Access) {
	a.Seconds = a.Elapsed.Seconds()
	s.mu.Lock()
	s.requests++
	s.bytes += a.Bytes
	switch {
	case a.Cut:
		s.cut++
	case a.Reason != "":
		s.refused++
	case a.Status == 404:
		s.notFound++
	case a.Status >= 500:
		s.failed++
	}
	s.mu.Unlock()
	b, _ := json.Marshal(a)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["type"] = "request"
	s.line(m)
}

// summary is the last line, when serve stops.
func (s *serveJSON) summary(err error) {
	s.mu.Lock()
	m := map[string]any{"type": "summary", "requests": s.requests, "bytes": s.bytes, "not_found": s.notFound,
		"refused": s.refused, "failed": s.failed, "cut": s.cut, "duration_ms": time.Since(s.start).Milliseconds(), "ok": err == nil}
	s.mu.Unlock()
	if err != nil {
		m["error"] = err.Error()
	}
	s.line(m)
}
