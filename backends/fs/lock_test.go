//go:build linux

package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
)

// lockFree reports whether another process could take the lock at path
// now: a flock through a description of its own.
func lockFree(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// flockWaiters counts the flocks waiting for the file at path
// (/proc/locks lists them with "->").
func flockWaiters(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skip("no /proc/locks here:", err)
	}
	n := 0
	ino := ":" + strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 10) + " "
	for _, line := range strings.Split(string(locks), "\n") {
		if strings.Contains(line, "->") && strings.Contains(line, ino) {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds, or fails after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A provider's lock passes from one of this process's writers to the next
// that waits, held throughout, so another process never slips between
// them; once no writer waits, it is released, also when the writer it was
// kept for gave up waiting.
func TestProviderLockPassesOnThenIsReleased(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := mustOpen(t, dir)
	p := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64").Provider
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(pdir, ".tfmirror-lock")

	release, err := fs.LockProvider(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if lockFree(t, lock) {
		t.Fatal("the lock is not held")
	}
	// Another process (a mirror of its own: a flock of its own) waits
	// for the lock, then a second writer of this one.
	taker := func(m *fs.Mirror) chan func() {
		got := make(chan func(), 1)
		go func() {
			r, err := fs.LockProvider(ctx, m, p)
			if err != nil {
				t.Error(err)
				r = func() {}
			}
			got <- r
		}()
		return got
	}
	other := taker(mustOpen(t, dir))
	waitFor(t, "the other process to wait for the flock", func() bool { return flockWaiters(t, lock) == 1 })
	next := taker(m)
	waitFor(t, "the second writer to wait", func() bool { return fs.LockWaiters(m, p) == 1 })
	release()
	select {
	case release = <-next:
	case r := <-other:
		r()
		t.Fatal("another process took the lock between two writers")
	case <-time.After(time.Minute):
		t.Fatal("the second writer never got the lock")
	}
	release()
	release = <-other
	release()
	if !lockFree(t, lock) {
		t.Fatal("the lock is still held after the last writer")
	}

	release, err = fs.LockProvider(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := fs.LockProvider(cctx, m, p)
		gaveUp <- err
	}()
	waitFor(t, "the second writer to wait", func() bool { return fs.LockWaiters(m, p) == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a writer that gave up: %v", err)
	}
	release()
	waitFor(t, "the lock to be released after a writer gave up", func() bool { return lockFree(t, lock) })
	release, err = fs.LockProvider(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	release()
}
