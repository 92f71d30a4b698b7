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

func TestAgree(t *testing.T) {
	for _, tc := range []struct {
		name             string
		a, b             []hashing.Hash
		same, comparable bool
	}{
		{"same zh", []hashing.Hash{zha}, []hashing.Hash{zha}, true, true},
		{"other zh", []hashing.Hash{zha}, []hashing.Hash{zhb}, false, true},
		{"zh decides over h1", []hashing.Hash{zha, h1a}, []hashing.Hash{zhb, h1a}, false, true},
		{"h1 when zh is on one side only", []hashing.Hash{zha, h1a}, []hashing.Hash{h1a}, true, true},
		{"other h1", []hashing.Hash{h1a}, []hashing.Hash{h1b}, false, true},
		{"any of several", []hashing.Hash{h1a, h1b}, []hashing.Hash{h1b}, true, true},
		{"no common scheme", []hashing.Hash{zha}, []hashing.Hash{h1a}, false, false},
		{"nothing on one side", nil, []hashing.Hash{h1a}, false, false},
		{"unknown schemes do not count", []hashing.Hash{"xx:1"}, []hashing.Hash{"xx:1"}, false, false},
	} {
		same, comparable := agree(tc.a, tc.b)
		if same != tc.same || comparable != tc.comparable {
			t.Errorf("%s: same %v comparable %v, want %v %v", tc.name, same, comparable, tc.same, tc.comparable)
		}
	}
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
