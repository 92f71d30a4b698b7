//go:build unix

package lockedtemp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A staging name left between its creation and its lock (a run killed in
// those microseconds) is swept at once when the PID it bears is gone, not
// only once it is a minute old; one whose creator lives is left. A killed
// export left one in 1 run of about 30 (TestKilledExportLeavesNothingBehind).
func TestSweepTakesANewNameWhoseCreatorIsGone(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("no true(1) to make a PID that is gone: %v", err)
	}
	gone := filepath.Join(dir, ".b.tar.staging"+newMarker+strconv.Itoa(dead.ProcessState.Pid())+"-123")
	live := filepath.Join(dir, ".b.tar.staging"+newMarker+ownPID()+"456")
	for _, d := range []string{gone, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	Sweep(dir, ".b.tar.staging")
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("%s: its creator is gone, and it is still there (%v)", gone, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s: its creator (this process) lives, and it was swept: %v", live, err)
	}
}
