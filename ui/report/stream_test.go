package report

import (
	"bytes"
	"fmt"
	"testing"
	"text/tabwriter"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
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

// Findings aligns its columns as tabwriter does, byte for byte, also
// where a cell holds a tab or a newline (then it is tabwriter's).
func TestFindingsAlignAsTabwriter(t *testing.T) {
	p := backends.Package{Provider: backends.Provider{Hostname: "example.com", Namespace: "acme", Type: "alpha"}, Platform: backends.Platform{OS: "linux", Arch: "amd64"}}
	p.Version, _ = backends.ParseVersion("1.2.3")
	long := p
	long.Provider.Type = "a-much-longer-provider-type"
	for _, fs := range [][]sync.Finding{
		nil,
		{{Package: p, Status: sync.StatusPresent, Detail: "present; zh:0123abcd… stated by both"}},
		{{Package: p, Status: sync.StatusMissing, Detail: "not in destination"}, {Package: long, Status: sync.StatusConflict, Detail: "é…"},
			{Package: backends.Package{}, Status: sync.StatusError, Detail: "no package"}},
		{{Package: p, Status: sync.StatusMissing, Detail: "two\nlines"}, {Package: long, Status: sync.StatusOK, Detail: "a\ttab"}},
	} {
		var got, want bytes.Buffer
		if err := Findings(&got, fs, false); err != nil {
			t.Fatal(err)
		}
		tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STATUS\tPROVIDER\tVERSION\tPLATFORM\tDETAIL")
		for _, f := range fs {
			prov, ver, plat := "-", "-", "-"
			if f.Package.Version != nil {
				prov, ver, plat = f.Package.Provider.String(), f.Package.Version.String(), f.Package.Platform.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Status, prov, ver, plat, advisedDetail(f))
		}
		tw.Flush()
		if got.String() != want.String() {
			t.Errorf("Findings:\n%s\ntabwriter:\n%s", got.String(), want.String())
		}
	}
}
