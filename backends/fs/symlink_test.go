package fs_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	tffs "github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
)

// A mirror holding symbolic links that lead outside it (left there by hand,
// or planted) is read through them, but never written through: staging,
// landing, index documents, the provider lock, provenance, the unpacked
// layout and removals all refuse, naming the link, and nothing appears or
// goes outside the mirror. A link that stays inside the mirror is followed.
func TestNoWritesThroughLinksLeavingTheMirror(t *testing.T) {
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	zip := backendtest.ProviderZip(t, pkg, "")
	for _, c := range []struct {
		name     string
		link     string // the link's path in the mirror
		unpacked bool
	}{
		{"hostname", "example.com", false},
		{"namespace", "example.com/acme", false},
		{"type", "example.com/acme/alpha", false},
		{"lock file", "example.com/acme/alpha/.tfmirror-lock", false},
		{"provenance", "example.com/acme/alpha/.tfmirror-provenance", false},
		{"unpacked version", "example.com/acme/alpha/1.0.0", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir, outside := filepath.Join(root, "mirror"), filepath.Join(root, "outside")
			for _, d := range []string{filepath.Dir(filepath.Join(dir, c.link)), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			target := outside
			if strings.HasSuffix(c.link, "lock") {
				target = filepath.Join(outside, "planted")
			}
			if err := os.Symlink(target, filepath.Join(dir, c.link)); err != nil {
				t.Fatal(err)
			}
			m, err := tffs.Open(dir, dir, tffs.Options{Unpacked: c.unpacked})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			err = stageCommitFlush(ctx, m, pkg, zip)
			if c.name == "provenance" {
				if err != nil {
					t.Fatalf("landing beside the provenance link: %v", err)
				}
				seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
				pr := backendtest.NewSigner(t, "acme").Provenance(t, seeds)
				err = m.WriteProvenance(ctx, pkg.Provider, pkg.Version, pr)
			}
			if err == nil || !strings.Contains(err.Error(), c.link+" is a symbolic link") {
				t.Errorf("writing through %s: err = %v, want a refusal naming the link", c.link, err)
			}
			if c.name != "provenance" && c.name != "unpacked version" {
				_, err = m.Remove(ctx, pkg.Provider, []backends.Archive{{Package: pkg}})
				if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
					t.Errorf("Remove through %s: err = %v, want a refusal", c.link, err)
				}
			}
			var found []string
			filepath.WalkDir(outside, func(p string, e fs.DirEntry, err error) error {
				if p != outside {
					found = append(found, p)
				}
				return nil
			})
			if len(found) > 0 {
				t.Errorf("written outside the mirror through %s: %v", c.link, found)
			}
		})
	}

	// A link at the hostname level that stays inside the mirror is not
	// followed by the clients: writing through it would land what nobody
	// sees.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "real.example.com"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.example.com", filepath.Join(dir, "example.com")); err != nil {
		t.Fatal(err)
	}
	m, _ := tffs.Open(dir, dir, tffs.Options{})
	if err := stageCommitFlush(context.Background(), m, pkg, zip); err == nil || !strings.Contains(err.Error(), "example.com is a symbolic link") {
		t.Errorf("a hostname link inside the mirror: err = %v, want a refusal", err)
	}

	// A provider directory linked to another directory of the mirror is
	// read through, and written through.
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "example.com/acme/store"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("store", filepath.Join(dir, "example.com/acme/alpha")); err != nil {
		t.Fatal(err)
	}
	m, _ = tffs.Open(dir, dir, tffs.Options{})
	if err := stageCommitFlush(context.Background(), m, pkg, zip); err != nil {
		t.Fatalf("a provider link inside the mirror: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "example.com/acme/store", pkg.Filename())); err != nil {
		t.Error(err)
	}
	if as, err := m.Archives(context.Background(), pkg.Provider, pkg.Version); err != nil || len(as) != 1 {
		t.Errorf("read back through the link: %v, %v", as, err)
	}
}

func stageCommitFlush(ctx context.Context, m *tffs.Mirror, pkg backends.Package, zip []byte) error {
	st, err := m.Stage(ctx, pkg)
	if err != nil {
		return err
	}
	st.Write(zip)
	sums, err := hashing.HashPath(st.Path(), hashing.Options{})
	if err != nil {
		st.Abort()
		return err
	}
	if err := st.Commit(ctx, sums, false); err != nil {
		return err
	}
	return m.Flush(ctx, pkg.Provider)
}

// A file where the layout needs a directory is named.
func TestFileWhereADirectoryIsNeeded(t *testing.T) {
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "example.com"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := tffs.Open(dir, dir, tffs.Options{})
	err := stageCommitFlush(context.Background(), m, pkg, backendtest.ProviderZip(t, pkg, ""))
	if err == nil || !strings.Contains(err.Error(), "example.com is a file where the mirror's layout needs a directory") {
		t.Errorf("err = %v", err)
	}
}
