package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// o (gaps only) says in the matrix's title that it is on, and how to turn
// it off; a second o takes the sign away with the filter.
func TestGapsOnlySignInTheTitle(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("enter")
	title := func() string { return strings.Split(h.screen(), "\n")[1] }
	if strings.Contains(title(), "gaps only") {
		t.Fatalf("gaps only before o: %q", title())
	}
	h.press("o")
	if got := title(); !strings.Contains(got, " ─ o: gaps only") {
		t.Errorf("after o the matrix's title is %q, want it to say o: gaps only", got)
	}
	h.press("o")
	if got := title(); strings.Contains(got, "gaps only") {
		t.Errorf("after a second o the title still says gaps only: %q", got)
	}
}

// A failed job redone by a later one (the cell queued again once the
// source answers) no longer reads as a failure: the status line says
// "0 failed" and what was redone, not the stale "✗ ... 1 failed".
func TestRedoneFailureLeavesNoStaleFailure(t *testing.T) {
	w := newWorld(t)
	m, err := fs.Open(w.Primary, w.Primary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var missing atomic.Bool
	missing.Store(true)
	nh := netmirror.NewHandler(m, nil, hashing.Options{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".zip") && missing.Load() {
			http.Error(rw, "gone for now", http.StatusNotFound)
			return
		}
		nh.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	net, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}, {Reader: w.secondary, Kind: "fs"}}}, 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "linux_amd64")
	h.press("enter", "enter") // one writable mirror: straight to confirm
	h.until("the job to fail and the queue to idle", func(m Model) bool { return jobsEnded(1)(m) && !m.queueActive })
	if st := h.m.status(); stateOf(h.m, 0) != engine.Failed || st.kind != statusBad || !strings.Contains(st.text, "1 failed") {
		t.Fatalf("job %s, status %q (kind %v); want failed, said", stateOf(h.m, 0), st.text, st.kind)
	}
	missing.Store(false)
	h.gotoCell("2.1.0", "linux_amd64")
	h.press("enter", "enter")
	h.until("the job redone and the queue idle", func(m Model) bool { return jobsEnded(2)(m) && !m.queueActive })
	st := h.m.status()
	if stateOf(h.m, 1) != engine.Done || st.kind == statusBad || !strings.Contains(st.text, "1 done, 0 failed") || !strings.Contains(st.text, "1 failed, then redone") {
		t.Errorf("after the redo: job %s, status %q (kind %v); want done, \"1 done, 0 failed ... (1 failed, then redone)\", not a failure", stateOf(h.m, 1), st.text, st.kind)
	}
	if line := strings.Split(h.screen(), "\n")[38]; strings.Contains(line, "✗") {
		t.Errorf("the status line still shows a failure: %q", line)
	}
}
