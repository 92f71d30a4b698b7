package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// The events a line records.
const (
	// Landed: an archive landed in the destination, verified.
	Landed = "landed"
	// Refused: an archive was not mirrored (a signature that does not
	// check, a key the trust policy does not pin, no signature where one
	// is required).
	Refused = "refused"
	// Removed: prune removed an archive.
	Removed = "removed"
	// Unlisted: an archive that landed is not listed by the destination's
	// index documents after all (their write failed), so clients do not
	// find it; Detail says why.
	Unlisted = "unlisted"
)

// Entry is one line of the log.
type Entry struct {
	Time time.Time `json:"time"`
	// Event is Landed, Refused or Removed.
	Event    string `json:"event"`
	Provider string `json:"provider"`
	Version  string `json:"version"`
	Platform string `json:"platform"`
	// Source is where the archive came from (empty for a removal);
	// Destination the place changed (or not, when refused).
	Source      string `json:"source,omitempty"`
	Destination string `json:"destination"`
	// Hashes are the archive's: computed as it landed, or as the place
	// stated them before a removal.
	Hashes []hashing.Hash `json:"hashes,omitempty"`
	Size   int64          `json:"size,omitempty"`
	// Signer is who signed the archive's version, by the provenance that
	// travelled with it; absent when there was none.
	Signer *provenance.Signer `json:"signer,omitempty"`
	// Detail says why an archive was refused.
	Detail string `json:"detail,omitempty"`
	// Command is the tfmirror command that wrote the line (sync, push,
	// prune, import), Tool its version.
	Command string `json:"command"`
	Tool    string `json:"tool"`
}

// Log appends entries to a file. Its methods are safe for concurrent use.
type Log struct {
	f       *os.File
	command string
	tool    string
	now     func() time.Time

	mu     gosync.Mutex
	jobs   map[engine.JobID]engine.JobInfo
	landed map[engine.JobID]bool
	err    error // the first write that failed
}

var _ sync.Sink = (*Log)(nil)

// Open opens (creating it) the log file at path for appending; command and
// tool name what writes to it. The error wraps backends.ErrUsage when the
// file cannot be opened: the command line named it. What is not a regular
// file is refused without waiting (a named pipe nobody reads would block
// the open, one whose reader stops would block a write): the log is a
// record kept in a file.
func Open(path, command, tool string) (*Log, error) {
	f, err := regular.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, backends.Usagef("audit log: %v", err)
	}
	return &Log{f: f, command: command, tool: tool, now: time.Now, jobs: map[engine.JobID]engine.JobInfo{}, landed: map[engine.JobID]bool{}}, nil
}

// Show implements sync.Sink: it records the jobs that are queued, and
// writes a line for each that lands, each plan item refused, and each
// package removed.
func (l *Log) Show(ev engine.Event) {
	switch e := ev.(type) {
	case engine.JobQueued:
		l.mu.Lock()
		l.jobs[e.Job.ID] = e.Job
		l.mu.Unlock()
	case engine.JobDone:
		l.mu.Lock()
		info, ok := l.jobs[e.ID]
		l.landed[e.ID] = ok
		l.mu.Unlock()
		if ok && info.Name == "" {
			l.write(Entry{Event: Landed, Source: info.Src, Destination: info.Dst, Hashes: e.Sums.List(), Size: e.Bytes, Signer: info.Signer}, info.Package)
		}
	case engine.JobFailed:
		l.mu.Lock()
		info, landed := l.jobs[e.ID], l.landed[e.ID]
		l.mu.Unlock()
		if landed && info.Name == "" && e.Err != nil {
			l.write(Entry{Event: Unlisted, Source: info.Src, Destination: info.Dst, Detail: e.Err.Error()}, info.Package)
		}
	case sync.PlanItemLeft:
		if e.Item.Status == sync.StatusError {
			l.write(Entry{Event: Refused, Source: e.Src, Destination: e.Dst, Hashes: e.Item.Archive.Hashes(), Detail: e.Item.Detail}, e.Item.Archive.Package)
		}
	case sync.PackageRemoved:
		size := e.Archive.Size
		if size < 0 {
			size = 0
		}
		l.write(Entry{Event: Removed, Destination: e.Dst, Hashes: e.Archive.Hashes(), Size: size, Signer: e.Signer}, e.Archive.Package)
	}
}

// Record appends the line e says of pkg, for writers whose events come
// from engines of their own (a pull-through mirror's fetches): its time,
// command, tool and package fields are filled in here.
func (l *Log) Record(e Entry, pkg backends.Package) { l.write(e, pkg) }

// write appends one line, in one write.
func (l *Log) write(e Entry, pkg backends.Package) {
	e.Time = l.now().UTC()
	e.Command, e.Tool = l.command, l.tool
	e.Provider = pkg.Provider.String()
	if pkg.Version != nil {
		e.Version = pkg.Version.String()
	}
	e.Platform = pkg.Platform.String()
	b, err := json.Marshal(e)
	if err == nil {
		_, err = l.f.Write(append(b, '\n'))
	}
	if err != nil {
		l.mu.Lock()
		if l.err == nil {
			l.err = fmt.Errorf("audit log %s: %w", l.f.Name(), err)
		}
		l.mu.Unlock()
	}
}

// Close closes the file and returns the first error any write met, so
// that a run whose log is incomplete does not pass for audited.
func (l *Log) Close() error {
	err := l.f.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.err, err)
}

// Read parses a log, line by line; a line that is not an entry is an
// error naming it.
func Read(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("line %d: %v", n, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// Entered returns the entry that says when the archive whose zh: (or h1:)
// hash is h last entered destination, and who signed it; ok is false when
// the log has none.
func Entered(entries []Entry, destination string, h hashing.Hash) (Entry, bool) {
	var found Entry
	ok := false
	for _, e := range entries {
		if e.Event != Landed || e.Destination != destination {
			continue
		}
		for _, x := range e.Hashes {
			if x == h {
				found, ok = e, true
			}
		}
	}
	return found, ok
}
