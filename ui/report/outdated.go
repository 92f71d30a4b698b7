package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tfmirror/tfmirror/sync"
)

// OutdatedJSON is one row of `outdated --json`.
type OutdatedJSON struct {
	Provider string      `json:"provider"`
	Version  string      `json:"version,omitempty"`
	Status   sync.Status `json:"status"`
	// Newest is the newest version the mirror holds.
	Newest string `json:"newest,omitempty"`
	Source string `json:"source,omitempty"`
	Detail string `json:"detail"`
}

// Outdated writes outdated's rows: the releases upstream that the mirror
// lacks, missing when wanted and newer when not, and the providers whose
// upstream could not be read.
func Outdated(w io.Writer, rows []sync.OutdatedRow, asJSON bool) error {
	out := make([]OutdatedJSON, 0, len(rows))
	for _, r := range rows {
		f := r.Finding()
		row := OutdatedJSON{Provider: r.Provider.String(), Status: f.Status, Source: r.Source, Detail: f.Detail}
		if r.Version != nil {
			row.Version = r.Version.String()
		}
		if r.Newest != nil {
			row.Newest = r.Newest.String()
		}
		out = append(out, row)
	}
	if asJSON {
		return writeJSON(w, out)
	}
	if len(out) == 0 {
		return nil // the closing line says it is up to date
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tPROVIDER\tVERSION\tMIRROR'S NEWEST\tDETAIL")
	for _, r := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Status, r.Provider, orDash(r.Version), orDash(r.Newest), r.Detail)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
