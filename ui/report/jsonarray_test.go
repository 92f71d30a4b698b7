package report

import (
	"bytes"
	"testing"

	"github.com/tfmirror/tfmirror/hashing"
)

// The array written a row at a time is byte for byte the one writeJSON
// writes of the whole slice.
func TestJSONArrayWritesWhatWriteJSONWrites(t *testing.T) {
	size := int64(42)
	for _, rows := range [][]PackageJSON{
		{},
		{{Provider: "example.com/acme/alpha", Version: "1.0.0", Platform: "linux_amd64", Hashes: []hashing.Hash{}}},
		{{Provider: "a<b>&c", Version: "1.0.0", Platform: "linux_amd64", Hashes: []hashing.Hash{"h1:x=", "zh:00"}, Size: &size},
			{Provider: "example.com/acme/beta", Version: "2.0.0-rc.1", Platform: "darwin_arm64", Hashes: []hashing.Hash{}, Layout: "unpacked", SignerError: "bad"}},
	} {
		var whole, streamed bytes.Buffer
		if err := writeJSON(&whole, rows); err != nil {
			t.Fatal(err)
		}
		a := newJSONArray(&streamed)
		for _, r := range rows {
			if err := a.add(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.close(); err != nil {
			t.Fatal(err)
		}
		if whole.String() != streamed.String() {
			t.Errorf("streamed:\n%s\nwriteJSON:\n%s", streamed.String(), whole.String())
		}
	}
}
