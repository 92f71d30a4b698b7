package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
)

// Prune never removes what another writer added meanwhile: a writer that
// holds the provider's lock while prune waits for it replaces one archive
// the plan removes and adds a platform to the version the plan removes.
// Prune then removes only what is as the plan saw it, says which archive it
// left (exit 1), and the mirror verifies clean.
func TestPruneLeavesWhatAnotherWriterAdded(t *testing.T) {
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	dir := sourceMirror(t, seeds)
	pdir := filepath.Join(dir, "example.com", "acme", "alpha")

	// The other writer takes the lock every tfmirror writer takes.
	lock, err := os.OpenFile(filepath.Join(pdir, ".tfmirror-lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tfmirrorBin, "prune", dir, "--keep", "1", "--yes")
	cmd.Env = cleanEnv(t)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The plan is made and printed before prune asks for the lock.
	lines := bufio.NewScanner(stderr)
	var errText strings.Builder
	for lines.Scan() && !strings.Contains(lines.Text(), "2 remove, 2 keep") {
		errText.WriteString(lines.Text() + "\n")
	}
	if ctx.Err() != nil || lines.Err() != nil {
		t.Fatalf("no plan from prune: %v\n%s", lines.Err(), errText.String())
	}

	linux := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	windows := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "windows_amd64")
	replaced := writeListed(t, pdir, "1.0.0", linux.Platform.String(), linux.Filename(), backendtest.ProviderZip(t, linux, "replaced"))
	writeListed(t, pdir, "1.0.0", windows.Platform.String(), windows.Filename(), backendtest.ProviderZip(t, windows, ""))
	lock.Close() // releases the lock

	go func() {
		for lines.Scan() {
			errText.WriteString(lines.Text() + "\n")
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("prune: %v, want exit 1 for the archive it left\n%s", err, stdout.String())
	}
	out := stdout.String()
	if !hasLineWith(out, "removed", "1.0.0", "darwin_arm64") || !hasLineWith(out, "left", "1.0.0", "linux_amd64", "another writer") || strings.Contains(out, "windows_amd64") {
		t.Fatalf("prune rows:\n%s", out)
	}
	got := strings.Join(held(t, dir), "\n")
	want := "example.com/acme/alpha 1.0.0 linux_amd64\nexample.com/acme/alpha 1.0.0 windows_amd64\nexample.com/acme/alpha 2.0.0 darwin_arm64\nexample.com/acme/alpha 2.0.0 linux_amd64"
	if got != want {
		t.Fatalf("the mirror holds\n%s\nwant\n%s", got, want)
	}
	if now, _ := hashing.HashPath(filepath.Join(pdir, linux.Filename()), hashing.Options{}); now.ZH != replaced.ZH {
		t.Fatalf("the replaced archive is %s, want the other writer's %s", now.ZH, replaced.ZH)
	}
	if r := run(t, nil, "verify", dir); r.code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// writeListed writes an archive into a provider directory and lists it,
// with its hashes, in the version's document: what a writer holding the
// provider's lock does.
func writeListed(t *testing.T, pdir, version, platform, name string, zip []byte) hashing.Sums {
	t.Helper()
	path := filepath.Join(pdir, name)
	if err := os.WriteFile(path, zip, 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(path, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	docPath := filepath.Join(pdir, version+".json")
	var doc struct {
		Archives map[string]any `json:"archives"`
	}
	b, err := os.ReadFile(docPath)
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		t.Fatal(err)
	}
	doc.Archives[platform] = map[string]any{"hashes": []string{string(sums.H1), string(sums.ZH)}, "url": name}
	b, _ = json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(docPath+".new", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(docPath+".new", docPath); err != nil {
		t.Fatal(err)
	}
	return sums
}
