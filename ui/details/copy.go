package details

import (
	"strconv"

	"github.com/tfmirror/tfmirror/backends"
)

// Copyable is something Details shows that can be copied whole: a hash of
// the package, or where a module package lives.
type Copyable struct {
	// Text is what is copied.
	Text string
	// About says whose it is: "[1] mirror index".
	About string
}

// Copyables are what Details shows that can be copied, in the order shown:
// each distinct hash of the package under the cursor (stated by a place,
// or recomputed from its bytes), or each place's location of a module
// version.
func (m Model) Copyables() []Copyable {
	var out []Copyable
	seen := map[string]bool{}
	add := func(text, about string) {
		if text != "" && !seen[text] {
			seen[text] = true
			out = append(out, Copyable{Text: text, About: about})
		}
	}
	switch {
	case m.job == nil && m.cell != nil:
		for _, mr := range m.cell.Mirrors {
			if mr.Archive == nil {
				continue
			}
			num := "[" + strconv.Itoa(mr.Number) + "] "
			for _, ev := range mr.Archive.Evidence {
				for _, h := range ev.Hashes {
					add(h.String(), num+string(ev.Source.Kind))
				}
			}
			if mr.Verify != nil && mr.Verify.Result != nil {
				for _, h := range mr.Verify.Result.Sums.List() {
					add(h.String(), num+"recomputed")
				}
			}
		}
	case m.mod != nil:
		for _, p := range m.mod.Places {
			if p.Listing != nil && p.Listing.Err == nil {
				add(backends.PrintableLine(p.Listing.Location), "["+strconv.Itoa(p.Number)+"] location")
			}
		}
	}
	return out
}

// Subject names what Details shows, so that a change of it can be told.
func (m Model) Subject() string { return m.subject }
