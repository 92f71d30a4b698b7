package fs

import (
	"errors"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends/provenance"
)

// tempMarker is in every staging name tfmirror creates. The names start
// with "." so the clients' and tfmirror's scanners never see them. A file
// or directory bearing it is locked (flock) for as long as its writer
// lives, so one that can be locked is a dead run's and may be removed.
const tempMarker = ".tfmirror-tmp-"

// newMarker is in a staging name for the instant between its creation and
// its lock, after which it is renamed to bear tempMarker: no sweeper can
// take a file in that instant for a dead run's.
const newMarker = ".tfmirror-new-"

// createLocked creates a hidden staging file in dir, named prefix +
// tempMarker + random, already locked when it takes that name. It returns
// the open file and its path (f.Name() is the creation name).
func createLocked(dir, prefix string) (*os.File, string, error) {
	f, err := createTemp(dir, prefix+newMarker+ownPID())
	if err != nil {
		return nil, "", err
	}
	_ = lockFile(f) // where flock fails, no sweeper can lock it either
	final := filepath.Join(dir, strings.Replace(filepath.Base(f.Name()), newMarker, tempMarker, 1))
	if err := rename(f.Name(), final); err != nil {
		_ = f.Close() // removed below
		os.Remove(f.Name())
		return nil, "", err
	}
	return f, final, nil
}

// createTemp is os.CreateTemp(dir, prefix+"*") on openFile.
func createTemp(dir, prefix string) (f *os.File, err error) {
	_, err = freshName(dir, prefix, func(name string) (err error) {
		f, err = openFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}

// freshName calls take with dir/prefix followed by random digits until
// take does not find the name taken (an error matching os.ErrExist), at
// most 101 times, and returns the last name and take's error.
func freshName(dir, prefix string, take func(name string) error) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		err := take(name)
		if !errors.Is(err, iofs.ErrExist) || try == 100 {
			return name, err
		}
	}
}

// mkdirLocked is createLocked for a directory; close the returned handle
// to release the lock.
func mkdirLocked(dir, prefix string) (*os.File, string, error) {
	tmp, err := os.MkdirTemp(dir, prefix+newMarker+ownPID()+"*")
	if err != nil {
		return nil, "", err
	}
	d, err := os.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, "", err
	}
	_ = lockFile(d) // where flock fails, no sweeper can lock it either
	final := filepath.Join(dir, strings.Replace(filepath.Base(tmp), newMarker, tempMarker, 1))
	if err := os.Rename(tmp, final); err != nil {
		_ = d.Close() // removed below
		os.RemoveAll(tmp)
		return nil, "", err
	}
	return d, final, nil
}

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
	sweepStale(dir)
	sweepStale(filepath.Join(dir, provenance.DirName))
	if vs, err := os.ReadDir(dir); err == nil {
		for _, v := range vs {
			if v.IsDir() && !strings.HasPrefix(v.Name(), ".") {
				sweepStale(filepath.Join(dir, v.Name()))
			}
		}
	}
}

func sweepStale(dir string) { sweepStaleNamed(dir, ".") }

// sweepStaleNamed is sweepStale for the names that start with prefix.
func sweepStaleNamed(dir, prefix string) {
	items, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, it := range items {
		if !strings.HasPrefix(it.Name(), prefix) || !strings.HasPrefix(it.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, it.Name())
		if _, after, ok := strings.Cut(it.Name(), newMarker); ok {
			// Left by a run killed between creating and locking a staging
			// name, which takes microseconds: stale once its creator (the
			// PID the name bears) is gone, or once it is old.
			pid, _, _ := strings.Cut(after, "-")
			n, perr := strconv.Atoi(pid)
			if info, err := it.Info(); perr == nil && processGone(n) || err == nil && time.Since(info.ModTime()) > time.Minute {
				os.RemoveAll(p)
			}
			continue
		}
		if !strings.Contains(it.Name(), tempMarker) {
			continue
		}
		if it.IsDir() {
			// Unpacked staging directories and replaced ones: only this
			// process's own are live, and those are removed by their
			// deferred cleanup, so a directory seen here is stale when its
			// lock file is free.
			if f, err := os.Open(p); err == nil {
				if lockFile(f) == nil {
					os.RemoveAll(p)
				}
				_ = f.Close() // only opened to be locked
			}
			continue
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if lockFile(f) == nil {
			os.Remove(p)
		}
		_ = f.Close() // only opened to be locked
	}
}

// ownPID is the part of a new staging name that names its creator, so a
// sweeper can tell one whose creator died before locking it.
func ownPID() string { return strconv.Itoa(os.Getpid()) + "-" }
