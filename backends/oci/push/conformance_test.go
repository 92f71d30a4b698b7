package push_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/push"
)

// TestConformance runs the case of every capability a set of release
// zips has (backendtest.Capabilities) against zips in a temp dir, as push
// reads them.
func TestConformance(t *testing.T) {
	backendtest.Conformance(t, backendtest.Place{Seeded: func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		dir := t.TempDir()
		var files []push.ZipFile
		for _, s := range seeds {
			p := filepath.Join(dir, s.Package.Provider.Type+"-"+s.Package.Filename())
			if err := os.WriteFile(p, s.Zip, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, push.ZipFile{Path: p, Package: s.Package})
		}
		z, err := push.NewZips(context.Background(), files, nil)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}, Signed: func(t *testing.T, seeds []backendtest.Seed, signer *backendtest.Signer) backends.Reader {
		// A release directory as goreleaser makes it: the zips, their
		// SHA256SUMS and its .sig, checked with the signing key.
		if len(backendtest.Versions(seeds)) != 1 {
			t.Fatal("a release directory holds one version")
		}
		dir := t.TempDir()
		for _, s := range seeds {
			write(t, filepath.Join(dir, s.Package.Filename()), s.Zip)
		}
		pr := signer.Provenance(t, seeds)
		p := seeds[0].Package
		sums := filepath.Join(dir, "terraform-provider-"+p.Provider.Type+"_"+p.Version.String()+"_SHA256SUMS")
		write(t, sums, pr.SHA256SUMS)
		write(t, sums+".sig", pr.Signature)
		key := filepath.Join(t.TempDir(), "key.asc")
		write(t, key, []byte(signer.Armor))
		f, err := backends.ParseProviderFilter(p.Provider.String())
		if err != nil {
			t.Fatal(err)
		}
		z, err := push.OpenReleaseDir(context.Background(), dir, dir, push.ReleaseOptions{Naming: push.Naming{Providers: []backends.ProviderFilter{f}}, SigningKeys: []string{key}})
		if err != nil {
			t.Fatal(err)
		}
		return z
	}})
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
