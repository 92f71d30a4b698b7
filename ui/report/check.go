package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
)

// LockFinding is one row of `check --from`: check's row for a package,
// with the lock file that selects it.
type LockFinding struct {
	Finding sync.Finding
	Lock    string
}

// LockFindingJSON is one row of `check --from --json`: check's row with
// "lock", the lock file.
type LockFindingJSON struct {
	FindingJSON
	Lock string `json:"lock"`
}

// LockFindings writes check --from's rows, the lock files' in turn, as a
// table or a JSON array.
func LockFindings(w io.Writer, rows []LockFinding, asJSON bool) error {
	if asJSON {
		out := make([]LockFindingJSON, 0, len(rows))
		for _, r := range rows {
			out = append(out, LockFindingJSON{FindingJSON: findingJSON(r.Finding), Lock: r.Lock})
		}
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tPROVIDER\tVERSION\tPLATFORM\tLOCK\tDETAIL")
	for _, r := range rows {
		j := findingJSON(r.Finding)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.Status, dash(j.Provider), dash(j.Version), dash(strings.Trim(j.Platform, "_")), backends.PrintableLine(r.Lock), j.Detail)
	}
	return tw.Flush()
}
