package details

import (
	"strconv"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Copyable is something Details shows that can be copied whole: a hash of
// the package, or where a module package lives.
type Copyable struct {
	// Text is what is copied.
	Text string
	// About says whose it is: "[1] mirror index".
	About string
}

// ClientBlock is what a copied provider_installation block is about.
const ClientBlock = "the provider_installation block for the OpenTofu CLI configuration"

// Copyables are what Details shows that can be copied, in the order shown:
// each distinct hash of the package under the cursor (stated by a place,
// or recomputed from its bytes), each place's location of a module
// version, or the client configuration of a job landed in an OCI mirror.
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
	case m.job != nil && m.job.State == engine.Done && m.job.Client != nil:
		add(m.job.Client.Block, ClientBlock)
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
