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
	// excluded: the CLI configuration does not use the mirror for the
	// provider, so lacking the package is no gap.
	excluded bool
}

// verifiedOK reports whether recomputing the archive's hashes matched at
// least one stated hash and contradicted none.
func (v *verification) verifiedOK() bool {
	return v != nil && !v.failed() && v.finding.Result != nil && v.finding.Result.Verified()
}

// agreeing is the mark of a package whose hashes agree with the
// reference's: verified when recomputed against what is stated, stated
// when only stated, and neither when no statement describes it (its hashes
// were only computed).
func agreeing(c cellInput) theme.Mark {
	switch {
	case c.verify.verifiedOK():
		return theme.MarkVerified
	case len(known(*c.archive, nil)) > 0:
		return theme.MarkStated
	}
	return theme.MarkUnverified
}

// cellMarks decides the mark of each compared mirror for one package. The
// reference is the first mirror holding the package with hashes known; each
// other mirror is compared with it, as a sync plan would (sync.Agree).
func cellMarks(in []cellInput, out []theme.Mark) []theme.Mark {
	out = out[:0]
	ref, refHashes := reference(in)
	for i, c := range in {
		out = append(out, cellMark(c, i == ref, refHashes))
	}
	return out
}

// reference is the index of the mirror the others are compared with, -1
// when none holds the package with hashes known, and its hashes.
func reference(in []cellInput) (int, []hashing.Hash) {
	for i, c := range in {
		if c.archive != nil && !c.verify.failed() {
			if hs := known(*c.archive, c.verify); len(hs) > 0 {
				return i, hs
			}
		}
	}
	return -1, nil
}

// cellMark is one mirror's mark; ref says whether it is the reference.
func cellMark(c cellInput, ref bool, refHashes []hashing.Hash) theme.Mark {
	switch {
	case c.archive == nil && c.state == stateLoading:
		return theme.MarkLoading
	case c.archive == nil && c.state == stateFailed:
		return theme.MarkError
	case c.archive == nil && c.excluded:
		return theme.MarkNotApplicable
	case c.archive == nil:
		return theme.MarkMissing
	case c.verify.failed():
		return theme.MarkFailed
	case ref:
		return agreeing(c)
	}
	hs := known(*c.archive, c.verify)
	shared, comparable := sync.Agree(hs, refHashes)
	switch {
	case len(hs) == 0 || !comparable:
		return theme.MarkUnverified
	case shared != "":
		return agreeing(c)
	}
	return theme.MarkDiffers
}
