package modfs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modfs"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/hashing"
)

var mod = modulestest.Net

func TestPutAndList(t *testing.T) {
	root := t.TempDir()
	s, err := modfs.Open(root, root, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files := map[string]string{"main.tf": "root", "modules/vpc/main.tf": "vpc"}
	pkg := modulestest.Build(t, mod, "1.0.0", files, "modules/vpc")
	var progressed int64
	st, err := s.Put(ctx, pkg, false, func(n int64) { progressed += n })
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(root, "registry.example.com/acme/net/aws/1.0.0.zip")
	if st.Present || st.Address != zipPath+"//modules/vpc" || st.Bytes != pkg.Size || progressed != pkg.Size {
		t.Fatalf("stored %+v (progress %d)", st, progressed)
	}
	sums, err := hashing.HashPath(zipPath, hashing.Options{})
	if err != nil || sums != pkg.Sums {
		t.Fatalf("the zip hashes to %v, the package to %v (%v)", sums, pkg.Sums, err)
	}
	var rec modfs.Record
	b, _ := os.ReadFile(filepath.Join(root, "registry.example.com/acme/net/aws/1.0.0.json"))
	if err := json.Unmarshal(b, &rec); err != nil || rec.H1 != string(pkg.Sums.H1) || rec.Subdir != "modules/vpc" || rec.Address != mod.String() {
		t.Fatalf("record %s: %v", b, err)
	}
	// Again: nothing is written.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(zipPath, old, old); err != nil {
		t.Fatal(err)
	}
	again, err := s.Put(ctx, modulestest.Build(t, mod, "1.0.0", files, "modules/vpc"), false, nil)
	if err != nil || !again.Present || again.Bytes != 0 || again.Address != st.Address {
		t.Fatalf("again: %+v %v", again, err)
	}
	if fi, _ := os.Stat(zipPath); !fi.ModTime().Equal(old) {
		t.Error("the zip was rewritten")
	}
	// Different contents: a conflict, unless forced.
	other := modulestest.Build(t, mod, "1.0.0", map[string]string{"main.tf": "changed"}, "")
	if _, err := s.Put(ctx, other, false, nil); !errors.Is(err, backends.ErrConflict) || !strings.Contains(err.Error(), "1.0.0") {
		t.Fatalf("conflict: %v", err)
	}
	if st, err := s.Put(ctx, other, true, nil); err != nil || st.Present {
		t.Fatalf("forced: %+v %v", st, err)
	}
	if sums, _ := hashing.HashPath(zipPath, hashing.Options{}); sums != other.Sums {
		t.Error("force did not replace the zip")
	}
	// No temp files are left behind.
	des, _ := os.ReadDir(filepath.Dir(zipPath))
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			t.Errorf("left behind: %s", de.Name())
		}
	}
	if _, err := s.Put(ctx, modulestest.Build(t, mod, "1.1.0", files, ""), false, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(zipPath), "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls, err := s.ListModule(ctx, mod, backends.VersionConstraint{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Items) != 2 || ls.Items[0].Version.String() != "1.1.0" || ls.Items[1].Location != zipPath {
		t.Errorf("listed %+v", ls.Items)
	}
	if len(ls.Warnings) != 1 || !strings.Contains(ls.Warnings[0], "notes.txt") {
		t.Errorf("warnings %v", ls.Warnings)
	}
	if _, err := s.ListModule(ctx, modules.Module{Host: "h.com", Namespace: "a", Name: "b", System: "c"}, backends.VersionConstraint{}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("unknown module: %v", err)
	}
}

func TestOpenRefusesFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := modfs.Open(f, f, hashing.Options{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("got %v", err)
	}
}
