package netmirror_test

import (
	"fmt"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
)

// BenchmarkListNetworkMirror is `tfmirror ls https://... -p ...` for 20
// providers x 30 versions: a Mirror resolving a selection against a
// network mirror served by Handler on loopback, hashes already cached by the
// server (as they are after its first request for each zip).
func BenchmarkListNetworkMirror(b *testing.B) {
	const providers, versions = 20, 30
	dir := b.TempDir()
	var pkgs []pkg
	var sel sync.Selection
	for i := range providers {
		typ := fmt.Sprintf("p%02d", i)
		for j := range versions {
			pkgs = append(pkgs, pkg{"example.com", "acme", typ, fmt.Sprintf("1.%d.0", j), "linux_amd64"})
		}
		f, err := backends.ParseProviderFilter("example.com/acme/" + typ)
		if err != nil {
			b.Fatal(err)
		}
		sel.Providers = append(sel.Providers, f)
	}
	writeMirror(b, dir, pkgs...)
	srv, _, _ := serveDir(b, dir)
	list := func() {
		m := openMirror(b, srv, srv.URL+"/", nil)
		as, err := sel.Resolve(bg, m)
		if err != nil {
			b.Fatal(err)
		}
		if len(as) != providers*versions {
			b.Fatalf("listed %d packages, want %d", len(as), providers*versions)
		}
	}
	list() // the server hashes each zip once
	b.ResetTimer()
	for b.Loop() {
		list()
	}
}
