package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	gosync "sync"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/lipgloss/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// SyncMode is how a SyncReporter shows events.
type SyncMode int

const (
	// Plain prints a line per finished job, for logs and pipes.
	Plain SyncMode = iota
	// Live redraws progress bars for running jobs in place, for terminals.
	Live
	// JSONLines prints one JSON object per event, for scripts.
	JSONLines
)

// SyncOptions configure a SyncReporter.
type SyncOptions struct {
	Mode  SyncMode
	Color bool // colour marks (Live and Plain on a terminal without NO_COLOR)
	Width int  // the terminal's width, for Live; 80 when unknown
	// Err receives what is not a job's line: packages left out of the run
	// and the closing summary (stderr; the output writer when nil).
	Err io.Writer
	// Push words the lines for tfmirror push: "pushed" and "already there",
	// and in Plain mode a line per archive with its hashes and rate.
	Push bool
	// Noun names what moves in the closing line ("modules"); none for
	// provider archives.
	Noun string
	// Redraw is the least time between two repaints of the live block;
	// 100ms when zero.
	Redraw time.Duration
}

// SyncReporter shows a run's events on a writer: it is the command line's
// sync.Sink.
type SyncReporter struct {
	w, errw io.Writer
	// held holds JSON lines until the run has no event ready (Idle):
	// one write for a burst of them, not one each.
	held    *bufio.Writer
	o       SyncOptions
	tracker *engine.Tracker
	bar     progress.Model
	live    int // lines of the live block on screen
	drawn   time.Time
	// mu orders the run's lines and the places' notices, which come from
	// the goroutines that write to them.
	mu gosync.Mutex
}

var _ sync.Sink = (*SyncReporter)(nil)

// NewSyncReporter returns a reporter writing job lines to w.
func NewSyncReporter(w io.Writer, o SyncOptions) *SyncReporter {
	if o.Width <= 0 {
		o.Width = 80
	}
	errw := o.Err
	if errw == nil {
		errw = w
	}
	opts := []progress.Option{progress.WithWidth(20), progress.WithoutPercentage()}
	if !o.Color {
		opts = append(opts, progress.WithColors(lipgloss.NoColor{}))
	}
	r := &SyncReporter{w: w, errw: errw, o: o, tracker: engine.NewTracker(), bar: progress.New(opts...)}
	if o.Mode == JSONLines {
		r.held = bufio.NewWriterSize(w, 64<<10)
	}
	return r
}

// Idle writes out the lines held: a run calls it when no event is ready,
// and every other output of the reporter comes after them.
func (r *SyncReporter) Idle() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idle()
}

func (r *SyncReporter) idle() {
	if r.held != nil {
		_ = r.held.Flush() // stdout, as fmt.Fprint: no one left to tell
	}
}

// Noun sets what the closing line says moved ("3 modules synced").
func (r *SyncReporter) Noun(n string) { r.o.Noun = n }

// Tracker returns the state built from the events seen so far.
func (r *SyncReporter) Tracker() *engine.Tracker { return r.tracker }

// Show shows one event.
func (r *SyncReporter) Show(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.tracker.Apply(ev)
	if r.o.Mode == JSONLines {
		b, _ := json.Marshal(EventJSON(ev, j))
		r.held.Write(append(b, '\n'))
		return
	}
	switch ev := ev.(type) {
	case sync.PlanItemLeft:
		r.leftLine(ev)
		return
	}
	line := r.finishedLine(ev, j)
	if r.o.Push && r.o.Mode == Plain {
		line = pushLine(ev, j)
	}
	switch {
	case r.o.Mode == Plain && line != "":
		fmt.Fprintln(r.w, line)
	case r.o.Mode == Live && line != "":
		r.clearLive()
		if _, failed := ev.(engine.JobFailed); !failed {
			line = truncate(line, r.o.Width-1)
		}
		fmt.Fprintln(r.w, line)
		r.redraw(true)
	case r.o.Mode == Live:
		r.redraw(false)
	}
}

// Finish ends the run's output with its summary: the closing line (and one
// line per failure) on stderr, or the {"type":"summary"} JSON line, which is
// always the last line of --json output.
func (r *SyncReporter) Finish(s sync.Summary) { r.FinishWith(s, nil) }

// FinishWith is Finish for a command that did more than the run: with
// --json, extra's fields (what export wrote, what import verified) join the
// summary line, which stays the last line.
func (r *SyncReporter) FinishWith(s sync.Summary, extra map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idle()
	switch r.o.Mode {
	case JSONLines:
		m := summaryJSON(s)
		for k, v := range extra {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		fmt.Fprintf(r.w, "%s\n", b)
		return
	case Live:
		r.clearLive()
	}
	r.summaryLines(s)
}

// Notice shows what a place says as the run goes (backends.Notice): a
// {"type":"waiting"|"warning","dst":PLACE,"detail":MESSAGE} line with
// --json, written at once; otherwise "warning: MESSAGE" on stderr, above
// the live block.
func (r *SyncReporter) Notice(n backends.Notice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.o.Mode == JSONLines {
		b, _ := json.Marshal(map[string]any{"type": n.Kind, "dst": n.Place, "detail": n.Message})
		r.held.Write(append(b, '\n'))
		_ = r.held.Flush() // stdout, as fmt.Fprint: no one left to tell
		return
	}
	if r.o.Mode == Live {
		r.clearLive()
	}
	fmt.Fprintf(r.errw, "%s: %s\n", n.Kind, backends.Printable(n.Message))
	if r.o.Mode == Live {
		r.redraw(true)
	}
}

// leftLine says why a package of the plan is not transferred.
func (r *SyncReporter) leftLine(ev sync.PlanItemLeft) {
	it := ev.Item
	if it.Status != sync.StatusPresent {
		fmt.Fprintf(r.errw, "%s %s: skipped: %s\n", it.Status, it.Archive.Package, advisedDetail(it.Finding()))
	} else if r.o.Push {
		fmt.Fprintf(r.w, "= %s: already in %s (%s)\n", it.Archive.Package, backends.PrintableLine(ev.Dst), backends.Printable(it.Detail))
	}
}

// summaryLines is the closing line, and one line per failure.
func (r *SyncReporter) summaryLines(s sync.Summary) {
	// Place names come from a command line or a spec, and may be anyone's.
	verb, present, place := "synced", "already present", backends.PrintableLine(s.Src+" -> "+s.Dst)
	if r.o.Push {
		verb, present, place = "pushed", "already there", backends.PrintableLine(s.Dst)
	}
	if r.o.Noun != "" {
		verb = r.o.Noun + " " + verb
	}
	if s.Interrupted {
		fmt.Fprintf(r.errw, "%s: interrupted: %d %s (%s), %d %s, %d failed, %d not started or cancelled\n",
			place, s.Done, verb, HumanBytes(s.Bytes), s.Present, present, len(s.Failed), s.Canceled)
		return
	}
	fmt.Fprintf(r.errw, "%s: %d %s (%s) in %s, %d %s, %d failed, %d skipped\n",
		place, s.Done, verb, HumanBytes(s.Bytes), s.Duration.Round(time.Millisecond), s.Present, present, len(s.Failed), len(s.Skipped)+s.Unsupplied)
	for _, j := range s.Failed {
		fmt.Fprintf(r.errw, "  failed: %s: %s\n", j.Info.Label(), Advised(j.Err))
	}
}

// finishedLine is the permanent line for events that end something.
func (r *SyncReporter) finishedLine(ev engine.Event, j *engine.TrackedJob) string {
	switch ev := ev.(type) {
	case engine.JobDone:
		verified := "not verified: the source states no hash"
		if ev.Verified {
			verified = checksSummary(ev.Result.Checks)
		}
		return fmt.Sprintf("%s %s  %s  %s", r.style("✓", "2"), j.Info.Label(), HumanBytes(ev.Bytes), verified)
	case engine.JobFailed:
		if ev.Canceled {
			return fmt.Sprintf("%s %s: cancelled", r.style("-", "3"), j.Info.Label())
		}
		return fmt.Sprintf("%s %s: %s", r.style("✗", "1"), j.Info.Label(), Advised(ev.Err))
	case engine.JobRetrying:
		return fmt.Sprintf("%s %s: attempt %d failed, retrying in %s: %s", r.style("↻", "3"), j.Info.Label(), ev.Attempt, ev.Delay, backends.Printable(ev.Err.Error()))
	case engine.IndexWritten:
		if ev.Err != nil {
			return fmt.Sprintf("%s %s: index documents for %s: %s", r.style("✗", "1"), backends.PrintableLine(ev.Dst), ev.Provider, backends.Printable(ev.Err.Error()))
		}
	}
	return ""
}

func (r *SyncReporter) style(s, color string) string {
	if !r.o.Color {
		return s
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color(color)).Render(s)
}

func checksSummary(cs []hashing.Check) string {
	var parts []string
	for _, c := range cs {
		if c.Status == hashing.Match {
			parts = append(parts, fmt.Sprintf("%s ✓ %s", strings.TrimSuffix(string(c.Scheme), ":"), c.Source))
		}
	}
	return strings.Join(parts, ", ")
}

func (r *SyncReporter) clearLive() {
	if r.live > 0 {
		fmt.Fprintf(r.w, "\x1b[%dA\x1b[J", r.live)
		r.live = 0
	}
}

// redraw repaints the running jobs, at most every 100ms unless forced.
func (r *SyncReporter) redraw(force bool) {
	every := r.o.Redraw
	if every == 0 {
		every = 100 * time.Millisecond
	}
	if !force && time.Since(r.drawn) < every {
		return
	}
	r.drawn = time.Now()
	r.clearLive()
	c := r.tracker.Counts()
	var lines []string
	for _, id := range r.tracker.Order {
		j := r.tracker.Jobs[id]
		if j.State != engine.Running {
			continue
		}
		lines = append(lines, truncate(r.jobLine(j), r.o.Width-1))
	}
	lines = append(lines, truncate(fmt.Sprintf("  %d running · %d queued · %d done · %d failed", c[engine.Running], c[engine.Queued], c[engine.Done], c[engine.Failed]+c[engine.Canceled]), r.o.Width-1))
	for _, l := range lines {
		fmt.Fprintln(r.w, l)
	}
	r.live = len(lines)
}

// jobLine is a running job's live line: the bar, the percentage of the
// known size, the rate and the time left, or, once every byte is in and
// the archive is still being hashed, that; the bytes so far where the size
// is unknown.
func (r *SyncReporter) jobLine(j *engine.TrackedJob) string {
	if j.Phase == engine.PhaseHashing {
		return fmt.Sprintf("  %s %6s %-21s  %s", r.bar.ViewAs(1), "100%", "hashing", j.Info.Label())
	}
	rate := HumanBytes(int64(j.Rate)) + "/s"
	f, known := j.Fraction()
	if !known {
		return fmt.Sprintf("  %s %6s %9s %11s  %s", r.bar.ViewAs(0), "", rate, HumanBytes(j.Bytes), j.Info.Label())
	}
	eta := "--"
	if d, ok := j.ETA(); ok {
		eta = formatETA(d)
	}
	return fmt.Sprintf("  %s %5.1f%% %9s %5s left  %s", r.bar.ViewAs(f), f*100, rate, eta, j.Info.Label())
}

// formatETA is a short time left: "7s", "2m05s", "1h20m".
func formatETA(d time.Duration) string {
	switch d = d.Round(time.Second); {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func truncate(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r)) > w-1 {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// EventJSON is the one-line JSON form of an event, with a "type" field.
func EventJSON(ev engine.Event, j *engine.TrackedJob) map[string]any {
	m := map[string]any{}
	if j != nil {
		m["id"] = j.Info.ID
		if j.Info.Name != "" {
			// Not a provider package (a module): no platform.
			m["name"] = j.Info.Name
		} else {
			m["provider"] = j.Info.Package.Provider.String()
			m["version"] = j.Info.Package.Version.String()
			m["platform"] = j.Info.Package.Platform.String()
		}
	}
	if j != nil && j.Info.Signer != nil {
		switch ev.(type) {
		case engine.JobQueued, engine.JobDone:
			// As ls --json and verify --json name it.
			m["signer"] = j.Info.Signer
		}
	}
	switch ev := ev.(type) {
	case engine.JobQueued:
		m["type"], m["src"], m["dst"] = "queued", ev.Job.Src, ev.Job.Dst
		if ev.Job.Size >= 0 {
			m["size"] = ev.Job.Size
		}
	case engine.JobStarted:
		m["type"], m["attempt"] = "started", ev.Attempt
	case engine.JobProgress:
		m["type"], m["bytes"], m["rate"], m["phase"] = "progress", ev.Bytes, int64(ev.Rate), ev.Phase.String()
		if ev.Total >= 0 {
			m["total"] = ev.Total
		}
	case engine.HashChecked:
		m["type"], m["check"] = "hash_checked", ev.Check
	case engine.JobRetrying:
		m["type"], m["attempt"], m["error"], m["delay_ms"] = "retrying", ev.Attempt, ev.Err.Error(), ev.Delay.Milliseconds()
	case engine.JobDone:
		m["type"], m["bytes"], m["h1"], m["zh"], m["verified"], m["elapsed_ms"] = "done", ev.Bytes, ev.Sums.H1, ev.Sums.ZH, ev.Verified, ev.Elapsed.Milliseconds()
	case engine.JobFailed:
		m["type"], m["error"], m["canceled"] = "failed", Advised(ev.Err), ev.Canceled
	case engine.IndexWritten:
		m["type"], m["dst"], m["provider"] = "index_written", ev.Dst, ev.Provider.String()
		if ev.Err != nil {
			m["error"] = ev.Err.Error()
		}
	case engine.Idle:
		m["type"] = "idle"
	case sync.PlanItemLeft:
		pkg := ev.Item.Archive.Package
		m["type"], m["provider"], m["version"], m["platform"] = string(ev.Item.Status), pkg.Provider.String(), pkg.Version.String(), pkg.Platform.String()
		m["src"], m["dst"], m["detail"] = ev.Src, ev.Dst, advisedDetail(ev.Item.Finding())
	}
	return m
}

// summaryJSON is the last line of sync --json and push --json.
func summaryJSON(s sync.Summary) map[string]any {
	failed := []map[string]any{}
	for _, j := range s.Failed {
		failed = append(failed, map[string]any{"job": j.Info.Label(), "error": j.Err.Error()})
	}
	skipped := []map[string]any{}
	for _, it := range s.Skipped {
		skipped = append(skipped, map[string]any{"package": it.Archive.Package.String(), "status": string(it.Status), "detail": it.Detail})
	}
	m := map[string]any{"type": "summary", "src": s.Src, "dst": s.Dst,
		"done": s.Done, "present": s.Present, "failed": len(s.Failed), "canceled": s.Canceled, "skipped": len(s.Skipped) + s.Unsupplied,
		"index_failures": len(s.IndexFails), "bytes": s.Bytes, "duration_ms": s.Duration.Milliseconds(),
		"interrupted": s.Interrupted, "ok": s.OK(), "failures": failed, "skips": skipped}
	if s.Err != nil {
		m["error"] = s.Err.Error()
	}
	return m
}
