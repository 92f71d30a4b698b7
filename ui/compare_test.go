package ui

import (
	"slices"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/theme"
)

const (
	h1a = hashing.Hash("h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	h1b = hashing.Hash("h1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=")
	zha = hashing.Hash("zh:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	zhb = hashing.Hash("zh:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")
)

func stated(hs ...hashing.Hash) *backends.Archive {
	a := &backends.Archive{Size: 1}
	if len(hs) > 0 {
		a.Evidence = []hashing.Evidence{{Source: hashing.Source{Kind: hashing.SourceMirrorIndex}, Hashes: hs}}
	}
	return a
}

func verified(status sync.Status, sums hashing.Sums, checks ...hashing.Check) *verification {
	return &verification{finding: sync.Finding{Status: status, Result: &hashing.Result{Sums: sums, Checks: checks}}}
}

// matched is a check that passed against a mirror index.
func matched(h hashing.Hash) hashing.Check {
	return hashing.Check{Source: hashing.Source{Kind: hashing.SourceMirrorIndex}, Scheme: h.Scheme(), Status: hashing.Match, Want: []hashing.Hash{h}, Got: h}
}

func TestCellMarks(t *testing.T) {
	st, vf, miss, diff, fail, unv, load, bad, na := theme.MarkStated, theme.MarkVerified, theme.MarkMissing, theme.MarkDiffers,
		theme.MarkFailed, theme.MarkUnverified, theme.MarkLoading, theme.MarkError, theme.MarkNotApplicable
	loaded := func(a *backends.Archive) cellInput { return cellInput{state: stateLoaded, archive: a} }
	good := hashing.Sums{H1: h1a, ZH: zha}
	for _, tc := range []struct {
		name string
		in   []cellInput
		want []theme.Mark
	}{
		{"one mirror, stated", []cellInput{loaded(stated(zha))}, []theme.Mark{st}},
		{"one mirror, nothing stated", []cellInput{loaded(stated())}, []theme.Mark{unv}},
		{"missing in the second", []cellInput{loaded(stated(zha)), loaded(nil)}, []theme.Mark{st, miss}},
		{"same in both", []cellInput{loaded(stated(zha, h1a)), loaded(stated(zha, h1a))}, []theme.Mark{st, st}},
		{"differs", []cellInput{loaded(stated(zha)), loaded(stated(zhb))}, []theme.Mark{st, diff}},
		{"the first states nothing: the second is the reference", []cellInput{loaded(stated()), loaded(stated(zha)), loaded(stated(zha))}, []theme.Mark{unv, st, st}},
		{"not comparable", []cellInput{loaded(stated(zha)), loaded(stated(h1a))}, []theme.Mark{st, unv}},
		{"recomputed and matching what is stated: verified",
			[]cellInput{{state: stateLoaded, archive: stated(zha, h1a), verify: verified(sync.StatusOK, good, matched(zha), matched(h1a))}, loaded(stated(zha, h1a))},
			[]theme.Mark{vf, st}},
		{"computed sums agree, but nothing stated them: neither stated nor verified",
			[]cellInput{loaded(stated(zha)), {state: stateLoaded, archive: stated(), verify: verified(sync.StatusOK, good)}},
			[]theme.Mark{st, unv}},
		{"computed sums that differ",
			[]cellInput{loaded(stated(zhb)), {state: stateLoaded, archive: stated(), verify: verified(sync.StatusOK, good)}},
			[]theme.Mark{st, diff}},
		{"failed verification is its own mark, whatever is stated",
			[]cellInput{{state: stateLoaded, archive: stated(zha), verify: verified(sync.StatusMismatch, hashing.Sums{})}, loaded(stated(zha))},
			[]theme.Mark{fail, st}},
		{"loading and failed listings", []cellInput{{state: stateLoading}, {state: stateFailed}, loaded(nil)}, []theme.Mark{load, bad, miss}},
		{"absent where the CLI configuration excludes the provider: not applicable",
			[]cellInput{loaded(stated(zha)), {state: stateLoaded, excluded: true}}, []theme.Mark{st, na}},
		{"held where excluded: shown for what it is",
			[]cellInput{loaded(stated(zha)), {state: stateLoaded, excluded: true, archive: stated(zhb)}}, []theme.Mark{st, diff}},
		{"none", nil, nil},
	} {
		if got := cellMarks(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
