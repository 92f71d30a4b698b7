package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// A directory given to the UI that does not exist yet is offered to be
// created, as sync creates its DST: yes creates it and the UI opens with it
// as an empty mirror, into which a cell is then copied; no leaves nothing
// behind and the UI does not start (it was exit 2 either way).
func TestCLIUIOffersToCreateADestination(t *testing.T) {
	src, _ := fsMirror(t)
	dst := filepath.Join(t.TempDir(), "new", "mirror")
	s := newTmux(t, 120, 36, []string{"NO_COLOR=1"}, "ui", src, dst)
	s.waitFor("[2] ", "does not exist. Create it (an empty mirror)? [y/N]")
	s.keys("y", "Enter")
	s.waitLoaded("acme/alpha", "compare 1 ↔ 2", "◐○")
	if fi, err := os.Stat(dst); err != nil || !fi.IsDir() {
		t.Fatalf("%s was not created: %v", dst, err)
	}
	s.keys("Enter", "Enter") // the matrix; queue its first cell…
	s.waitFor("to which mirror?")
	s.keys("Enter") // proposed: the new mirror, which lacks it
	s.waitFor("1 to copy")
	s.keys("Enter")
	s.waitFor("1 done")
	s.keys("q")
	s.waitGone()
	if zips, _ := filepath.Glob(filepath.Join(dst, "example.com", "acme", "alpha", "*.zip")); len(zips) != 1 {
		t.Errorf("the new mirror holds %v, want the one zip copied", zips)
	}

	no := filepath.Join(t.TempDir(), "declined")
	s = newTmux(t, 120, 36, []string{"NO_COLOR=1"}, "ui", src, no)
	s.waitFor("does not exist. Create it")
	s.keys("n", "Enter")
	s.waitGone()
	if _, err := os.Stat(no); !os.IsNotExist(err) {
		t.Errorf("%s was created though the answer was no: %v", no, err)
	}
}

// export writes its BUNDLE into a directory that does not exist yet,
// making it as sync makes its DST (it failed, exit 1, "stat ...: no such
// file or directory"); an export that writes nothing leaves no directory.
func TestCLIExportCreatesTheBundlesDirectory(t *testing.T) {
	src, _ := fsMirror(t)
	b := filepath.Join(t.TempDir(), "new", "dir", "providers.tar")
	if r := run(t, nil, "export", src, b, "-p", "example.com/acme/alpha"); r.code != 0 {
		t.Fatalf("export into a new directory: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, nil, "import", b, filepath.Join(t.TempDir(), "landed")); r.code != 0 {
		t.Fatalf("import of the bundle: exit %d\n%s", r.code, r.stderr)
	}
	top := filepath.Join(t.TempDir(), "never")
	if r := run(t, nil, "export", src, filepath.Join(top, "dir", "b.tar"), "-p", "acme/nothing"); r.code != 1 {
		t.Errorf("export of nothing: exit %d, want 1\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(top); !os.IsNotExist(err) {
		t.Errorf("an export that wrote nothing left %s: %v", top, err)
	}
}
