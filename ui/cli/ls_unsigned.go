package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
)

// noteUnsigned says, on w, which of the versions listed the place keeps
// no provenance of while it keeps some of the same provider's, where it
// can tell at once (a directory, a bucket): serve offers those through
// its network mirror only, not through providers.v1, which hands the
// clients the signed SHA256SUMS.
func noteUnsigned(ctx context.Context, w io.Writer, r backends.Reader, as []backends.Archive) {
	pl, ok := r.(backends.ProvenanceLister)
	if !ok {
		return
	}
	listed := map[backends.Provider]map[string]bool{}
	for _, a := range as {
		if listed[a.Provider] == nil {
			listed[a.Provider] = map[string]bool{}
		}
		listed[a.Provider][a.Version.String()] = true
	}
	var missing []string
	for p, vs := range listed {
		kept, err := pl.ProvenanceVersions(ctx, p)
		if err != nil || len(kept) == 0 {
			continue
		}
		for v := range vs {
			if !kept[v] {
				missing = append(missing, p.String()+" "+v)
			}
		}
	}
	if len(missing) == 0 {
		return
	}
	slices.Sort(missing)
	more := ""
	if len(missing) > 3 {
		missing, more = missing[:3], fmt.Sprintf(" and %d more", len(missing)-3)
	}
	fmt.Fprintf(w, "tfmirror: note: %s keeps no signed SHA256SUMS of %s%s: serve offers them through its network mirror, not providers.v1\n",
		r, strings.Join(missing, ", "), more)
}
