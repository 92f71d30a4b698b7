package ui

import (
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// verification is the outcome of recomputing one archive's hashes in one
// mirror, by `v` or by a job that landed there.
type verification struct {
	finding sync.Finding
	origin  string // "verify" or "transfer"
}

// failed reports whether the archive disagreed with what is stated about it,
// or could not be hashed.
func (v *verification) failed() bool {
	return v != nil && (v.finding.Status == sync.StatusMismatch || v.finding.Status == sync.StatusError)
}

type verifyKey struct {
	mirror int
	pkg    backends.PackageKey
}

// known returns the hashes that describe an archive: those stated for it
// and, once computed, its own.
func known(a backends.Archive, v *verification) []hashing.Hash {
	var hs []hashing.Hash
	for _, h := range a.Hashes() {
		if h.Known() {
			hs = append(hs, h)
		}
	}
	if v != nil && !v.failed() && v.finding.Result != nil {
		hs = append(hs, v.finding.Result.Sums.List()...)
	}
	return hashing.SortUnique(hs)
}

// cellInput is what one compared mirror has for one package.
type cellInput struct {
	state   loadState
	archive *backends.Archive
	verify  *verification
}

// cellMarks decides the mark of each compared mirror for one package. The
// reference is the first mirror holding the package with hashes known; each
// other mirror is compared with it, as a sync plan would (sync.Agree).
func cellMarks(in []cellInput, out []theme.Mark) []theme.Mark {
	out = out[:0]
	ref := -1
	var refHashes []hashing.Hash
	for i, c := range in {
		if c.archive != nil && !c.verify.failed() {
			if hs := known(*c.archive, c.verify); len(hs) > 0 {
				ref, refHashes = i, hs
				break
			}
		}
	}
	for i, c := range in {
		switch {
		case c.archive == nil && c.state == stateLoading:
			out = append(out, theme.MarkLoading)
		case c.archive == nil && c.state == stateFailed:
			out = append(out, theme.MarkError)
		case c.archive == nil:
			out = append(out, theme.MarkMissing)
		case c.verify.failed():
			out = append(out, theme.MarkDiffers)
		case i == ref:
			out = append(out, theme.MarkOK)
		default:
			hs := known(*c.archive, c.verify)
			shared, comparable := sync.Agree(hs, refHashes)
			switch {
			case len(hs) == 0 || !comparable:
				out = append(out, theme.MarkUnverified)
			case shared != "":
				out = append(out, theme.MarkOK)
			default:
				out = append(out, theme.MarkDiffers)
			}
		}
	}
	return out
}
