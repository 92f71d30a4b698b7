package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
)

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// stage stages zip for pkg in m and returns it with its sums.
func stage(t *testing.T, m *fs.Mirror, pkg backends.Package, zip []byte) (backends.Staged, hashing.Sums) {
	t.Helper()
	st, err := m.Stage(context.Background(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(zip); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(st.Path(), hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st, sums
}

// An archive being staged has no name in the mirror on Linux (an unnamed
// file, O_TMPFILE), so nothing half-written is ever seen and a killed run
// leaves nothing behind; elsewhere, or where the filesystem cannot, it has
// a hidden staging name. Either way it lands under its name only when
// committed, a different archive in place is refused unless forced and
// then replaced, and no staging file is left.
func TestStagingLandsOnlyWhenCommitted(t *testing.T) {
	for _, mode := range []string{"unnamed", "named"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			m := mustOpen(t, dir)
			if mode == "named" {
				fs.NameStagingFiles(m)
			}
			pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
			pdir := filepath.Join(dir, "example.com/acme/alpha")
			unnamed := mode == "unnamed" && runtime.GOOS == "linux"

			st, _ := stage(t, m, pkg, backendtest.ProviderZip(t, pkg, ""))
			switch got := names(t, pdir); {
			case unnamed && len(got) != 0:
				t.Fatalf("a staged archive is seen as %v", got)
			case !unnamed && len(got) != 1:
				t.Fatalf("a staged archive is seen as %v, want one staging name", got)
			}
			if err := st.Abort(); err != nil {
				t.Fatal(err)
			}
			if got := names(t, pdir); len(got) != 0 {
				t.Fatalf("after Abort: %v", got)
			}

			st, sums := stage(t, m, pkg, backendtest.ProviderZip(t, pkg, ""))
			if err := st.Commit(ctx, sums, false); err != nil {
				t.Fatal(err)
			}
			want := []string{".tfmirror-lock", pkg.Filename()}
			if got := names(t, pdir); !slices.Equal(got, want) {
				t.Fatalf("after Commit: %v, want %v", got, want)
			}
			// The index documents are staged the same way: new ones take
			// their names, changed ones replace the old in one step.
			if err := m.Flush(ctx, pkg.Provider); err != nil {
				t.Fatal(err)
			}
			want = []string{".tfmirror-lock", "1.0.0.json", "index.json", pkg.Filename()}
			if got := names(t, pdir); !slices.Equal(got, want) {
				t.Fatalf("after Flush: %v, want %v", got, want)
			}

			other, otherSums := stage(t, m, pkg, backendtest.ProviderZip(t, pkg, "another build"))
			if err := other.Commit(ctx, otherSums, false); !errors.Is(err, backends.ErrConflict) {
				t.Fatalf("a different archive committed without force: %v", err)
			}
			if got := names(t, pdir); !slices.Equal(got, want) {
				t.Fatalf("after a refused Commit: %v, want %v", got, want)
			}
			if now, _ := hashing.HashPath(filepath.Join(pdir, pkg.Filename()), hashing.Options{}); now.ZH != sums.ZH {
				t.Fatalf("a refused Commit changed the archive: %s", now.ZH)
			}

			other, otherSums = stage(t, m, pkg, backendtest.ProviderZip(t, pkg, "another build"))
			if err := other.Commit(ctx, otherSums, true); err != nil {
				t.Fatal(err)
			}
			if got := names(t, pdir); !slices.Equal(got, want) {
				t.Fatalf("after a forced Commit: %v, want %v", got, want)
			}
			if now, _ := hashing.HashPath(filepath.Join(pdir, pkg.Filename()), hashing.Options{}); now.ZH != otherSums.ZH {
				t.Fatalf("a forced Commit left %s, want %s", now.ZH, otherSums.ZH)
			}
			if err := m.Flush(ctx, pkg.Provider); err != nil {
				t.Fatal(err)
			}
			if got := names(t, pdir); !slices.Equal(got, want) {
				t.Fatalf("after the second Flush: %v, want %v", got, want)
			}
			if doc, err := os.ReadFile(filepath.Join(pdir, "1.0.0.json")); err != nil || !strings.Contains(string(doc), string(otherSums.ZH)) || strings.Contains(string(doc), string(sums.ZH)) {
				t.Fatalf("the version document does not list the replaced archive alone: %s, %v", doc, err)
			}
			if fi, err := os.Stat(filepath.Join(pdir, pkg.Filename())); err != nil || fi.Mode().Perm() != 0o644 {
				t.Fatalf("the landed archive: %v, %v; want mode 0644", fi, err)
			}
		})
	}
}
