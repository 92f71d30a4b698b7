package fs

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends/lockedtemp"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

// Every staging name in a mirror is a lockedtemp one: hidden, bearing
// lockedtemp.Marker, locked for as long as its writer lives.

// sweepOnce removes, once per directory and process, the staging files of
// runs that were killed: those no live process holds a lock on.
func (m *Mirror) sweepOnce(dir string) {
	m.mu.Lock()
	if m.swept == nil {
		m.swept = map[string]bool{}
	}
	done := m.swept[dir]
	m.swept[dir] = true
	m.mu.Unlock()
	if done {
		return
	}
	lockedtemp.Sweep(dir, ".")
	lockedtemp.Sweep(filepath.Join(dir, provenance.DirName), ".")
	if vs, err := os.ReadDir(dir); err == nil {
		for _, v := range vs {
			if v.IsDir() && !strings.HasPrefix(v.Name(), ".") {
				lockedtemp.Sweep(filepath.Join(dir, v.Name()), ".")
			}
		}
	}
}
