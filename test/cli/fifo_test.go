package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runNoHang runs tfmirror with stdin a pipe nobody writes to (so a link to
// /dev/stdin is a pipe). A run that has not ended within a generous bound
// is sent SIGTERM, and killed if that does not end it either: the test
// then fails, saying which.
func runNoHang(t *testing.T, args ...string) result {
	t.Helper()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	defer stdinW.Close()
	cmd := exec.Command(tfmirrorBin, args...)
	cmd.Env = cleanEnv(t)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
			t.Fatalf("tfmirror %s hung for 30 s (SIGTERM ended it)\n%s%s", strings.Join(args, " "), out.String(), errb.String())
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("tfmirror %s hung for 30 s, and SIGTERM did not end it\n%s%s", strings.Join(args, " "), out.String(), errb.String())
		}
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	return result{out.String(), errb.String(), code}
}

// oddFiles makes, in dir, a named pipe, a link to it and a link to
// /dev/stdin, each named name plus a suffix, and returns them by what
// they are.
func oddFiles(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	fifo := filepath.Join(dir, name+"-fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, name+"-link")
	stdin := filepath.Join(dir, name+"-stdin")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/stdin", stdin); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"named pipe": fifo, "link to a named pipe": link, "link to stdin": stdin}
}

// A named pipe, a link to one or a link to /dev/stdin given as a file to
// read (or, --audit, to append to) ends the command at once with exit 2,
// naming the file and what it is; nothing waits on the pipe (issue 31,
// item 8).
func TestCLIPipesGivenAsFilesAreRefused(t *testing.T) {
	src, _ := fsMirror(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	for _, tc := range []struct {
		flag string
		args func(file string) []string
	}{
		{"--lock", func(f string) []string { return []string{"check", src, "--lock", f} }},
		{"--spec", func(f string) []string { return []string{"sync", "--spec", f} }},
		{"--policy", func(f string) []string {
			return []string{"sync", src, dst, "-p", "example.com/acme/alpha", "--policy", f}
		}},
		{"--audit", func(f string) []string {
			return []string{"sync", src, dst, "-p", "example.com/acme/alpha", "--audit", f}
		}},
		{"--signing-key", func(f string) []string {
			return []string{"push", src, "oci://127.0.0.1:1/p/${namespace}/${type}", "-p", "example.com/acme/alpha", "--signing-key", f}
		}},
		{"--ca-cert", func(f string) []string { return []string{"ls", "https://127.0.0.1:1/", "--ca-cert", f} }},
	} {
		for what, file := range oddFiles(t, dir, strings.TrimPrefix(tc.flag, "--")) {
			t.Run(tc.flag+" "+what, func(t *testing.T) {
				r := runNoHang(t, tc.args(file)...)
				if r.code != 2 || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "not a regular file") {
					t.Errorf("exit %d, want 2 and a message naming %s as not a regular file:\n%s%s", r.code, file, r.stdout, r.stderr)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "example.com")); err == nil {
		t.Errorf("a refused run synced into %s", dst)
	}
}
