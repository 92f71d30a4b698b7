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

func verified(status sync.Status, sums hashing.Sums) *verification {
	return &verification{finding: sync.Finding{Status: status, Result: &hashing.Result{Sums: sums}}}
}

func TestCellMarks(t *testing.T) {
	ok, miss, diff, unv, load, bad := theme.MarkOK, theme.MarkMissing, theme.MarkDiffers, theme.MarkUnverified, theme.MarkLoading, theme.MarkError
	loaded := func(a *backends.Archive) cellInput { return cellInput{state: stateLoaded, archive: a} }
	for _, tc := range []struct {
		name string
		in   []cellInput
		want []theme.Mark
	}{
		{"one mirror, stated", []cellInput{loaded(stated(zha))}, []theme.Mark{ok}},
		{"one mirror, nothing stated", []cellInput{loaded(stated())}, []theme.Mark{unv}},
		{"missing in the second", []cellInput{loaded(stated(zha)), loaded(nil)}, []theme.Mark{ok, miss}},
		{"same in both", []cellInput{loaded(stated(zha, h1a)), loaded(stated(zha, h1a))}, []theme.Mark{ok, ok}},
		{"differs", []cellInput{loaded(stated(zha)), loaded(stated(zhb))}, []theme.Mark{ok, diff}},
		{"the first states nothing: the second is the reference", []cellInput{loaded(stated()), loaded(stated(zha)), loaded(stated(zha))}, []theme.Mark{unv, ok, ok}},
		{"not comparable", []cellInput{loaded(stated(zha)), loaded(stated(h1a))}, []theme.Mark{ok, unv}},
		{"verified sums make it comparable",
			[]cellInput{loaded(stated(zha)), {state: stateLoaded, archive: stated(h1a), verify: verified(sync.StatusOK, hashing.Sums{H1: h1a, ZH: zha})}},
			[]theme.Mark{ok, ok}},
		{"failed verification is a cross whatever is stated",
			[]cellInput{{state: stateLoaded, archive: stated(zha), verify: verified(sync.StatusMismatch, hashing.Sums{})}, loaded(stated(zha))},
			[]theme.Mark{diff, ok}},
		{"loading and failed listings", []cellInput{{state: stateLoading}, {state: stateFailed}, loaded(nil)}, []theme.Mark{load, bad, miss}},
		{"none", nil, nil},
	} {
		if got := cellMarks(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
