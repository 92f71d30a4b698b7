package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/tfmirror/tfmirror/sync"
)

// ModuleRow is one module version as ls --module shows it.
type ModuleRow struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Listed   string `json:"listed,omitempty"`
	Location string `json:"location,omitempty"`
	Digest   string `json:"digest,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	Revision string `json:"revision,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ModuleRows writes module versions and where each package lives, as a
// table or JSON.
func ModuleRows(w io.Writer, rows []ModuleRow, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// A mirror that keeps the packages' provenance shows it: the zip's
	// sha256 and the commit it was built from (their first 12 digits).
	prov := slices.ContainsFunc(rows, func(r ModuleRow) bool { return r.SHA256 != "" || r.Revision != "" })
	if prov {
		fmt.Fprintln(tw, "MODULE\tVERSION\tSHA256\tCOMMIT\tLOCATION")
	} else {
		fmt.Fprintln(tw, "MODULE\tVERSION\tLOCATION")
	}
	for _, r := range rows {
		v := r.Version
		if r.Listed != "" {
			v += " (" + r.Listed + ")"
		}
		loc := r.Location
		if r.Error != "" {
			loc = "error: " + r.Error
		}
		if prov {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Module, v, orDash(short12(r.SHA256)), orDash(short12(r.Revision)), loc)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Module, v, loc)
	}
	return tw.Flush()
}

// ModuleSources prints, for each stored version, the source address
// to write in configurations.
func ModuleSources(w io.Writer, results []sync.ModuleResult, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range results {
			if r.Err != nil {
				continue
			}
			// To stdout, as fmt.Fprint: no one left to tell.
			_ = enc.Encode(map[string]any{
				"type": "module_source", "module": r.Spec.Module.String(), "version": r.Spec.Version.String(),
				"source": r.Stored.Address, "tag_source": r.Stored.TagAddress, "present": r.Stored.Present,
				"h1": r.Sums.H1, "zh": r.Sums.ZH,
			})
		}
		return
	}
	var ok []sync.ModuleResult
	for _, r := range results {
		if r.Err == nil {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return
	}
	fmt.Fprintln(w, "\nModule sources (source = \"...\", no version argument):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range ok {
		fmt.Fprintf(tw, "  %s %s\t%s\n", r.Spec.Module, r.Spec.Version, r.Stored.Address)
	}
	tw.Flush()
}

func short12(s string) string { return s[:min(len(s), 12)] }
