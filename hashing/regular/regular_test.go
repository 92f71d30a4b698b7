//go:build unix

package regular_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tfmirror/tfmirror/hashing/regular"
)

// A named pipe, a link to one, a device and a directory are refused at
// once, naming the path and what it is; nothing waits for a writer.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	stdin := filepath.Join(dir, "stdin")
	if err := os.Symlink("/dev/stdin", stdin); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "named pipe", link: "named pipe", "/dev/zero": "character device", dir: "directory"} {
		f, err := regular.Open(path)
		if err == nil {
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			t.Errorf("%s: opened", path)
			continue
		}
		if !errors.Is(err, regular.ErrNotRegular) || !strings.Contains(err.Error(), path+": is a "+kind) {
			t.Errorf("%s: %v, want it named %s", path, err, kind)
		}
	}
	// /dev/stdin is whatever fd 0 is: a pipe here, as when a command's input
	// is piped.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	saved, err := syscall.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup2(int(r.Fd()), 0); err != nil {
		t.Fatal(err)
	}
	_, err = regular.ReadFile(stdin, 0)
	syscall.Dup2(saved, 0)
	if err := syscall.Close(saved); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, regular.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("a link to /dev/stdin, a pipe: %v", err)
	}

	b, err := regular.ReadFile(file, 3)
	if err != nil || string(b) != "cont" {
		t.Errorf("ReadFile with a limit: %q, %v (want limit+1 bytes)", b, err)
	}
	if b, err := regular.ReadFile(link+"-missing", 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %q %v", b, err)
	}
}

// An append-only open (an audit log) of a pipe fails at once, with or
// without a reader at its other end; a regular file is made and appended to.
func TestOpenFileForAppendRefusesAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	flags := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if _, err := regular.OpenFile(fifo, flags, 0o644); !errors.Is(err, regular.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("no reader: %v", err)
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if _, err := regular.OpenFile(fifo, flags, 0o644); !errors.Is(err, regular.ErrNotRegular) {
		t.Errorf("with a reader: %v", err)
	}
	log := filepath.Join(dir, "audit.log")
	for range 2 {
		f, err := regular.OpenFile(log, flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("line\n")
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(log); string(b) != "line\nline\n" {
		t.Errorf("audit log: %q", b)
	}
}
