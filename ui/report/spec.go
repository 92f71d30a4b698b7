package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
)

// SpecFinding is one row of `diff --spec`: a package of one destination's
// plan, or something the spec wants that no source offers, with what asked
// for it.
type SpecFinding struct {
	Finding sync.Finding
	// Module, in the row of a module block's version, is the module's
	// address and ModuleVersion the version ("" when the module could not
	// be listed); Finding's package is then empty, its status and detail
	// apply.
	Module, ModuleVersion string
	// Destination is "" for what cannot be had from any source: it is
	// missing from every destination.
	Destination string
	Source      string
	// From names the spec blocks, configuration files and lock files that
	// ask for the package, FILE:LINE.
	From []string
}

// SpecFindingJSON is one row of `diff --spec --json`: diff's row with the
// destination, the source and what asked for the package.
type SpecFindingJSON struct {
	FindingJSON
	Destination string   `json:"destination,omitempty"`
	Source      string   `json:"source,omitempty"`
	From        []string `json:"from"`
}

// SpecModuleJSON is the row of a module block's version in `diff --spec
// --json`: "module" in place of "provider", no platform.
type SpecModuleJSON struct {
	Module      string      `json:"module"`
	Version     string      `json:"version"`
	Status      sync.Status `json:"status"`
	Detail      string      `json:"detail"`
	Destination string      `json:"destination,omitempty"`
	Source      string      `json:"source,omitempty"`
	From        []string    `json:"from"`
}

func specModuleJSON(f SpecFinding) SpecModuleJSON {
	row := SpecModuleJSON{Module: f.Module, Version: f.ModuleVersion, Status: f.Finding.Status, Detail: f.Finding.Detail,
		Destination: f.Destination, Source: f.Source, From: f.From}
	if row.From == nil {
		row.From = []string{}
	}
	return row
}

func specFindingJSON(f SpecFinding) SpecFindingJSON {
	row := SpecFindingJSON{FindingJSON: findingJSON(f.Finding), Destination: f.Destination, Source: f.Source, From: f.From}
	if row.From == nil {
		row.From = []string{}
	}
	if f.Finding.Package.Version == nil {
		row.Provider = f.Finding.Package.Provider.String()
	}
	return row
}

// SpecFindings writes diff --spec's rows as a table or a JSON array.
func SpecFindings(w io.Writer, rows []SpecFinding, asJSON bool) error {
	if asJSON {
		out := make([]any, 0, len(rows))
		for _, r := range rows {
			if r.Module != "" {
				out = append(out, specModuleJSON(r))
				continue
			}
			out = append(out, specFindingJSON(r))
		}
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tPROVIDER\tVERSION\tPLATFORM\tDESTINATION\tFROM\tDETAIL")
	for _, r := range rows {
		if r.Module != "" {
			m := specModuleJSON(r)
			fmt.Fprintf(tw, "%s\tmodule %s\t%s\t-\t%s\t%s\t%s\n", m.Status, m.Module, dash(m.Version), dash(backends.PrintableLine(m.Destination)),
				dash(backends.PrintableLine(strings.Join(m.From, ", "))), backends.Printable(m.Detail))
			continue
		}
		j := specFindingJSON(r)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Status, dash(j.Provider), dash(j.Version), dash(strings.Trim(j.Platform, "_")),
			dash(backends.PrintableLine(j.Destination)), dash(backends.PrintableLine(strings.Join(j.From, ", "))), j.Detail)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Unavailable reports, before a spec's runs, something it wants that no
// source offers: a line on stderr, or a {"type":"unavailable"} event.
func (r *SyncReporter) Unavailable(f SpecFinding) {
	r.Idle()
	j := specFindingJSON(f)
	if r.o.Mode == JSONLines {
		b, _ := json.Marshal(map[string]any{"type": string(j.Status), "provider": j.Provider, "version": j.Version,
			"platform": strings.Trim(j.Platform, "_"), "src": j.Source, "detail": j.Detail, "from": j.From})
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	what := strings.TrimSpace(j.Provider + " " + j.Version)
	fmt.Fprintf(r.errw, "%s %s: %s (asked for by %s)\n", j.Status, what, j.Detail, backends.PrintableLine(strings.Join(j.From, ", ")))
}

// FinishDestination ends one destination's run of a spec: its closing line
// on stderr; in JSON the spec's one summary (FinishSpec) says it.
func (r *SyncReporter) FinishDestination(s sync.Summary) {
	r.Idle()
	if r.o.Mode != JSONLines {
		r.Finish(s)
	}
}

// FinishSpec ends a spec's sync: a line with the totals over every
// destination, or the {"type":"summary"} JSON line, always the last, with
// the totals and each destination's summary.
func (r *SyncReporter) FinishSpec(spec string, sums []sync.Summary, unavailable int) {
	r.Idle()
	var done, present, failed, skipped, canceled, indexFails int
	var bytes int64
	var elapsed time.Duration
	ok, interrupted := unavailable == 0, false
	dests := []map[string]any{}
	for _, s := range sums {
		done, present, failed, skipped = done+s.Done, present+s.Present, failed+len(s.Failed), skipped+len(s.Skipped)
		canceled, indexFails, bytes, elapsed = canceled+s.Canceled, indexFails+len(s.IndexFails), bytes+s.Bytes, elapsed+s.Duration
		ok, interrupted = ok && s.OK(), interrupted || s.Interrupted
		dests = append(dests, summaryJSON(s))
	}
	if r.o.Mode == JSONLines {
		b, _ := json.Marshal(map[string]any{"type": "summary", "spec": spec, "destinations": dests,
			"done": done, "present": present, "failed": failed, "canceled": canceled, "skipped": skipped, "unavailable": unavailable,
			"index_failures": indexFails, "bytes": bytes, "duration_ms": elapsed.Milliseconds(), "interrupted": interrupted, "ok": ok})
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	fmt.Fprintf(r.errw, "%s: %d destinations: %d synced (%s) in %s, %d already present, %d failed, %d skipped, %d unavailable\n",
		backends.PrintableLine(spec), len(sums), done, HumanBytes(bytes), elapsed.Round(time.Millisecond), present, failed, skipped, unavailable)
}
