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
				if r.code != 2 || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "not a regular file") || strings.HasSuffix(strings.TrimSpace(r.stderr), ": usage") {
					t.Errorf("exit %d, want 2 and a message naming %s as not a regular file:\n%s%s", r.code, file, r.stdout, r.stderr)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "example.com")); err == nil {
		t.Errorf("a refused run synced into %s", dst)
	}
}

// A named pipe (or a link to one, or to /dev/stdin) where a mirror keeps a
// version document, index.json, a zip or a provenance sidecar is named in
// a warning or an error of each command that reads it (ls, verify, sync,
// check; the sidecar: verify and sync); none waits on it.
func TestCLIPipesInAMirrorAreNamed(t *testing.T) {
	for _, tc := range []struct{ what, rel string }{
		{"version document", "example.com/acme/alpha/1.0.0.json"},
		{"index.json", "example.com/acme/alpha/index.json"},
		{"zip", "example.com/acme/alpha/terraform-provider-alpha_1.1.0_linux_amd64.zip"},
		{"provenance sidecar", "example.com/acme/alpha/.tfmirror-provenance/1.0.0.json"},
	} {
		for _, kind := range []string{"named pipe", "link to stdin"} {
			t.Run(tc.what+" "+kind, func(t *testing.T) {
				src, _ := fsMirror(t)
				odd := filepath.Join(src, tc.rel)
				os.MkdirAll(filepath.Dir(odd), 0o755)
				os.Remove(odd)
				var err error
				if kind == "named pipe" {
					err = syscall.Mkfifo(odd, 0o644)
				} else {
					err = os.Symlink("/dev/stdin", odd)
				}
				if err != nil {
					t.Skip(err)
				}
				lock := writeFile(t, t.TempDir(), ".terraform.lock.hcl", "provider \"example.com/acme/alpha\" {\n  version = \"1.0.0\"\n}\n")
				runs := [][]string{
					{"verify", src},
					{"sync", src, filepath.Join(t.TempDir(), "dst")},
				}
				if tc.what != "provenance sidecar" { // read by verify and sync only
					runs = append(runs, []string{"ls", src}, []string{"check", src, "--lock", lock, "--platform", "linux_amd64"})
				}
				for _, args := range runs {
					r := runNoHang(t, args...)
					out := r.stdout + r.stderr
					if !strings.Contains(out, filepath.Base(tc.rel)) || !strings.Contains(out, "not a regular file") {
						t.Errorf("tfmirror %s: exit %d, and the %s is not named as not a regular file:\n%s", args[0], r.code, tc.what, out)
					}
				}
			})
		}
	}
}

// The same under --from: a named pipe as a configuration's .tf file or
// its lock file ends lock, check (lock files) and sync with an error
// naming it.
func TestCLIPipesUnderFromAreNamed(t *testing.T) {
	src, _ := fsMirror(t)
	for _, name := range []string{"main.tf", ".terraform.lock.hcl"} {
		for _, kind := range []string{"named pipe", "link to a named pipe", "link to stdin"} {
			t.Run(name+" "+kind, func(t *testing.T) {
				tree := t.TempDir()
				cfg := filepath.Join(tree, "app")
				os.MkdirAll(cfg, 0o755)
				if name != "main.tf" {
					writeFile(t, cfg, "main.tf", "terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\" }\n  }\n}\n")
				}
				odd := filepath.Join(cfg, name)
				var err error
				switch kind {
				case "named pipe":
					err = syscall.Mkfifo(odd, 0o644)
				case "link to a named pipe":
					if err = syscall.Mkfifo(filepath.Join(tree, "pipe"), 0o644); err == nil {
						err = os.Symlink(filepath.Join(tree, "pipe"), odd)
					}
				default:
					err = os.Symlink("/dev/stdin", odd)
				}
				if err != nil {
					t.Skip(err)
				}
				runs := [][]string{
					{"lock", src, "--from", tree, "--platform", "linux_amd64"},
					{"sync", src, filepath.Join(t.TempDir(), "dst"), "--from", tree},
				}
				if name != "main.tf" { // check reads lock files only
					runs = append(runs, []string{"check", src, "--from", tree, "--platform", "linux_amd64"})
				}
				for _, args := range runs {
					r := runNoHang(t, args...)
					if r.code == 0 || !strings.Contains(r.stdout+r.stderr, name) || !strings.Contains(r.stdout+r.stderr, "not a regular file") {
						t.Errorf("tfmirror %s --from: exit %d, and %s is not named as not a regular file:\n%s%s", args[0], r.code, name, r.stdout, r.stderr)
					}
				}
			})
		}
	}
}

// SIGTERM ends a command in whatever reading phase it lands: reading a lock
// file, a spec, a policy, a signing key, the configurations and lock files
// under --from, and a mirror's documents and zips (verify). Each command is
// signalled at moments spread over its run, from its start to its end: it
// ends within a bound every time, with 143 (the signal) or its own exit
// code where the signal came after its work, never killed by the bound.
func TestCLISignalEndsEveryReadingPhase(t *testing.T) {
	src, _ := fsMirror(t)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	for i := range 150 {
		cfg := filepath.Join(tree, "c", strings.Repeat("d", 1+i%5), "env"+string(rune('a'+i%26))+strings.Repeat("x", i/26))
		os.MkdirAll(cfg, 0o755)
		writeFile(t, cfg, "main.tf", "terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\" }\n  }\n}\n")
		writeFile(t, cfg, ".terraform.lock.hcl", "provider \"example.com/acme/alpha\" {\n  version = \"1.0.0\"\n}\n")
	}
	lock := writeFile(t, dir, "one.lock.hcl", "provider \"example.com/acme/alpha\" {\n  version = \"1.0.0\"\n}\n")
	spec := writeFile(t, dir, "spec.hcl", "destinations = [\""+filepath.Join(dir, "specdst")+"\"]\nplatforms = [\"linux_amd64\"]\nprovider \"example.com/acme/alpha\" {\n  versions = \"latest\"\n  source = \""+src+"\"\n}\n")
	policy := writeFile(t, dir, "trust.hcl", "provider \"example.com/acme/*\" {\n  fingerprints = [\"c874 011f 0ab4 0511 0d02  1055 3436 5d94 72d7 468f\"]\n}\n")
	key := writeFile(t, dir, "key.asc", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot a key\n-----END PGP PUBLIC KEY BLOCK-----\n")
	for _, tc := range []struct {
		phase string
		args  []string
	}{
		{"--lock", []string{"check", src, "--lock", lock}},
		{"--spec", []string{"sync", "--spec", spec}},
		{"--policy and --audit", []string{"sync", src, filepath.Join(dir, "pdst"), "--policy", policy, "--audit", filepath.Join(dir, "audit.log")}},
		{"--signing-key", []string{"push", src, "oci://127.0.0.1:1/p/${namespace}/${type}", "--signing-key", key}},
		{"lock --from", []string{"lock", src, "--from", tree, "--platform", "linux_amd64"}},
		{"check --from", []string{"check", src, "--from", tree}},
		{"verify", []string{"verify", src}},
	} {
		args := tc.args
		t.Run(tc.phase, func(t *testing.T) {
			// The run unsignalled gives the span to spread the signals over.
			began := time.Now()
			base := runNoHang(t, args...)
			span := time.Since(began)
			t.Logf("unsignalled: exit %d in %v", base.code, span)
			for i := range 8 {
				at := span * time.Duration(i) / 8
				code, out := signalAt(t, at, args...)
				t.Logf("SIGTERM at %v: exit %d", at, code)
				if code != 143 && code != base.code {
					t.Errorf("SIGTERM %v into tfmirror %s: exit %d, want 143 or its own %d:\n%s", at, strings.Join(args, " "), code, base.code, out)
				}
			}
		})
	}
}

// signalAt starts tfmirror, sends it SIGTERM after d, and returns its exit
// code (143 also when the signal came before it could handle it) and
// output; a run the signal does not end within a bound fails the test.
func signalAt(t *testing.T, d time.Duration, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(tfmirrorBin, args...)
	cmd.Env = cleanEnv(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(d):
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("SIGTERM %v into tfmirror %s did not end it within 30 s\n%s", d, strings.Join(args, " "), out.String())
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return 143, out.String() // before its handler was in place
		}
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}
