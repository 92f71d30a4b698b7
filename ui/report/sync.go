package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/lipgloss/v2"

	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
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

// SyncReporter shows engine events on a writer.
type SyncReporter struct {
	w       io.Writer
	mode    SyncMode
	color   bool
	width   int
	tracker *sync.Tracker
	bar     progress.Model
	live    int // lines of the live block on screen
	drawn   time.Time
}

// NewSyncReporter returns a reporter. width is the terminal width (Live).
func NewSyncReporter(w io.Writer, mode SyncMode, color bool, width int) *SyncReporter {
	if width <= 0 {
		width = 80
	}
	opts := []progress.Option{progress.WithWidth(20), progress.WithoutPercentage()}
	if !color {
		opts = append(opts, progress.WithColors(lipgloss.NoColor{}))
	}
	return &SyncReporter{w: w, mode: mode, color: color, width: width, tracker: sync.NewTracker(), bar: progress.New(opts...)}
}

// Tracker returns the state built from the events seen so far.
func (r *SyncReporter) Tracker() *sync.Tracker { return r.tracker }

// Run shows events until the channel closes, then returns the tracker.
func (r *SyncReporter) Run(events <-chan sync.Event) *sync.Tracker {
	for ev := range events {
		r.Show(ev)
	}
	if r.mode == Live {
		r.redraw(true)
	}
	return r.tracker
}

// Show handles one event.
func (r *SyncReporter) Show(ev sync.Event) {
	j := r.tracker.Apply(ev)
	switch r.mode {
	case JSONLines:
		b, _ := json.Marshal(EventJSON(ev, j))
		fmt.Fprintf(r.w, "%s\n", b)
	case Plain:
		if line := r.finishedLine(ev, j); line != "" {
			fmt.Fprintln(r.w, line)
		}
	case Live:
		if line := r.finishedLine(ev, j); line != "" {
			r.clearLive()
			// Everything fits one line but a failure, which keeps its whole
			// reason.
			if _, failed := ev.(sync.JobFailed); !failed {
				line = truncate(line, r.width-1)
			}
			fmt.Fprintln(r.w, line)
			r.redraw(true)
			return
		}
		r.redraw(false)
	}
}

// finishedLine is the permanent line for events that end something.
func (r *SyncReporter) finishedLine(ev sync.Event, j *sync.TrackedJob) string {
	switch ev := ev.(type) {
	case sync.JobDone:
		verified := "not verified: the source states no hash"
		if ev.Verified {
			verified = checksSummary(ev.Result.Checks)
		}
		return fmt.Sprintf("%s %s  %s  %s", r.style("✓", "2"), j.Info.Label(), HumanBytes(ev.Bytes), verified)
	case sync.JobFailed:
		if ev.Canceled {
			return fmt.Sprintf("%s %s: cancelled", r.style("-", "3"), j.Info.Label())
		}
		return fmt.Sprintf("%s %s: %v", r.style("✗", "1"), j.Info.Label(), ev.Err)
	case sync.JobRetrying:
		return fmt.Sprintf("%s %s: attempt %d failed, retrying in %s: %v", r.style("↻", "3"), j.Info.Label(), ev.Attempt, ev.Delay, ev.Err)
	case sync.IndexWritten:
		if ev.Err != nil {
			return fmt.Sprintf("%s %s: index documents for %s: %v", r.style("✗", "1"), ev.Dst, ev.Provider, ev.Err)
		}
	}
	return ""
}

func (r *SyncReporter) style(s, color string) string {
	if !r.color {
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
	if !force && time.Since(r.drawn) < 100*time.Millisecond {
		return
	}
	r.drawn = time.Now()
	r.clearLive()
	c := r.tracker.Counts()
	var lines []string
	for _, id := range r.tracker.Order {
		j := r.tracker.Jobs[id]
		if j.State != sync.Running {
			continue
		}
		pct := 0.0
		if j.Info.Size > 0 {
			pct = float64(j.Bytes) / float64(j.Info.Size)
		}
		line := fmt.Sprintf("  %s %5.1f%% %9s/s  %s", r.bar.ViewAs(min(pct, 1)), pct*100, HumanBytes(int64(j.Rate)), j.Info.Label())
		lines = append(lines, truncate(line, r.width-1))
	}
	lines = append(lines, truncate(fmt.Sprintf("  %d running · %d queued · %d done · %d failed", c[sync.Running], c[sync.Queued], c[sync.Done], c[sync.Failed]+c[sync.Canceled]), r.width-1))
	for _, l := range lines {
		fmt.Fprintln(r.w, l)
	}
	r.live = len(lines)
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
func EventJSON(ev sync.Event, j *sync.TrackedJob) map[string]any {
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
	switch ev := ev.(type) {
	case sync.JobQueued:
		m["type"], m["src"], m["dst"] = "queued", ev.Job.Src, ev.Job.Dst
		if ev.Job.Size >= 0 {
			m["size"] = ev.Job.Size
		}
	case sync.JobStarted:
		m["type"], m["attempt"] = "started", ev.Attempt
	case sync.JobProgress:
		m["type"], m["bytes"], m["rate"] = "progress", ev.Bytes, int64(ev.Rate)
		if ev.Total >= 0 {
			m["total"] = ev.Total
		}
	case sync.HashChecked:
		m["type"], m["check"] = "hash_checked", ev.Check
	case sync.JobRetrying:
		m["type"], m["attempt"], m["error"], m["delay_ms"] = "retrying", ev.Attempt, ev.Err.Error(), ev.Delay.Milliseconds()
	case sync.JobDone:
		m["type"], m["bytes"], m["h1"], m["zh"], m["verified"], m["elapsed_ms"] = "done", ev.Bytes, ev.Sums.H1, ev.Sums.ZH, ev.Verified, ev.Elapsed.Milliseconds()
	case sync.JobFailed:
		m["type"], m["error"], m["canceled"] = "failed", ev.Err.Error(), ev.Canceled
	case sync.IndexWritten:
		m["type"], m["dst"], m["provider"] = "index_written", ev.Dst, ev.Provider.String()
		if ev.Err != nil {
			m["error"] = ev.Err.Error()
		}
	case sync.Idle:
		m["type"] = "idle"
	}
	return m
}
