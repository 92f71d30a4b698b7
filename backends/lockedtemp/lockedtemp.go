// Package lockedtemp names the staging files and directories tfmirror
// writes beside their final place (an archive or index document of a
// filesystem mirror, a bundle being written beside its .tar): a hidden
// name bearing Marker, locked (flock) for as long as its writer lives, so
// that one nobody holds is a killed run's and Sweep removes it. The
// filesystem mirror and the bundle writer share it; neither leans on the
// other for it.
package lockedtemp

import (
	"errors"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Marker is in every staging name tfmirror creates. The names start with
// "." so the clients' and tfmirror's scanners never see them. A file or
// directory bearing it is locked for as long as its writer lives, so one
// that can be locked is a dead run's and may be removed.
const Marker = ".tfmirror-tmp-"

// newMarker is in a staging name for the instant between its creation and
// its lock, after which it is renamed to bear Marker: no sweeper can take
// a file in that instant for a dead run's.
const newMarker = ".tfmirror-new-"

// Create creates a hidden staging file in dir, named prefix + Marker +
// random, already locked when it takes that name. It returns the open file
// and its path (f.Name() is the creation name). Put it in place with Place.
func Create(dir, prefix string) (*os.File, string, error) {
	f, err := createTemp(dir, prefix+newMarker+ownPID())
	if err != nil {
		return nil, "", err
	}
	_ = Lock(f) // where flock fails, no sweeper can lock it either
	final := filepath.Join(dir, strings.Replace(filepath.Base(f.Name()), newMarker, Marker, 1))
	if err := Rename(f.Name(), final); err != nil {
		_ = f.Close() // removed below
		os.Remove(f.Name())
		return nil, "", err
	}
	return f, final, nil
}

// createTemp is os.CreateTemp(dir, prefix+"*") on OpenFile.
func createTemp(dir, prefix string) (f *os.File, err error) {
	_, err = FreshName(dir, prefix, func(name string) (err error) {
		f, err = OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}

// FreshName calls take with dir/prefix followed by random digits until
// take does not find the name taken (an error matching os.ErrExist), at
// most 101 times, and returns the last name and take's error.
func FreshName(dir, prefix string, take func(name string) error) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		err := take(name)
		if !errors.Is(err, iofs.ErrExist) || try == 100 {
			return name, err
		}
	}
}

// Mkdir is Create for a directory; close the returned handle to release
// the lock.
func Mkdir(dir, prefix string) (*os.File, string, error) {
	tmp, err := os.MkdirTemp(dir, prefix+newMarker+ownPID()+"*")
	if err != nil {
		return nil, "", err
	}
	d, err := os.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, "", err
	}
	_ = Lock(d) // where flock fails, no sweeper can lock it either
	final := filepath.Join(dir, strings.Replace(filepath.Base(tmp), newMarker, Marker, 1))
	if err := os.Rename(tmp, final); err != nil {
		_ = d.Close() // removed below
		os.RemoveAll(tmp)
		return nil, "", err
	}
	return d, final, nil
}

// Place renames the staging file tmp, open as f (so locked against
// sweepers until it bears its final name), to path; f is to be closed
// after (where an open file cannot be renamed, Place closes it first).
func Place(f *os.File, tmp, path string) error {
	if CloseBeforeRename {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return os.Rename(tmp, path)
}

// Sweep removes the staging files and directories in dir whose names start
// with prefix (and "."), and that no live process holds: what killed runs
// left.
func Sweep(dir, prefix string) {
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
		if !strings.Contains(it.Name(), Marker) {
			continue
		}
		if it.IsDir() {
			// Unpacked staging directories and replaced ones: only this
			// process's own are live, and those are removed by their
			// deferred cleanup, so a directory seen here is stale when its
			// lock file is free.
			if f, err := os.Open(p); err == nil {
				if Lock(f) == nil {
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
		if Lock(f) == nil {
			os.Remove(p)
		}
		_ = f.Close() // only opened to be locked
	}
}

// ownPID is the part of a new staging name that names its creator, so a
// sweeper can tell one whose creator died before locking it.
func ownPID() string { return strconv.Itoa(os.Getpid()) + "-" }
