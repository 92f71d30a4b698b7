package sync_test

import (
	"testing"

	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// TestAgree is the one rule both the sync plan and the UI's matrix compare
// archives by.
func TestAgree(t *testing.T) {
	const (
		h1a = hashing.Hash("h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
		h1b = hashing.Hash("h1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=")
		zha = hashing.Hash("zh:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
		zhb = hashing.Hash("zh:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")
	)
	for _, tc := range []struct {
		name       string
		a, b       []hashing.Hash
		shared     hashing.Hash
		comparable bool
	}{
		{"same zh", []hashing.Hash{zha}, []hashing.Hash{zha}, zha, true},
		{"other zh", []hashing.Hash{zha}, []hashing.Hash{zhb}, "", true},
		{"zh decides over h1", []hashing.Hash{zha, h1a}, []hashing.Hash{zhb, h1a}, "", true},
		{"h1 when zh is on one side only", []hashing.Hash{zha, h1a}, []hashing.Hash{h1a}, h1a, true},
		{"other h1", []hashing.Hash{h1a}, []hashing.Hash{h1b}, "", true},
		{"any of several", []hashing.Hash{h1a, h1b}, []hashing.Hash{h1b}, h1b, true},
		{"no common scheme", []hashing.Hash{zha}, []hashing.Hash{h1a}, "", false},
		{"nothing on one side", nil, []hashing.Hash{h1a}, "", false},
		{"unknown schemes do not count", []hashing.Hash{"xx:1"}, []hashing.Hash{"xx:1"}, "", false},
	} {
		shared, comparable := sync.Agree(tc.a, tc.b)
		if shared != tc.shared || comparable != tc.comparable {
			t.Errorf("%s: shared %q comparable %v, want %q %v", tc.name, shared, comparable, tc.shared, tc.comparable)
		}
	}
}
