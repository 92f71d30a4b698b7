package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/test/killtest"
)

// goodBundle exports acme/alpha 1.0.0 on two platforms to DIR/good.tar,
// for a test to damage copies of in DIR.
func goodBundle(t *testing.T) (dir, good string) {
	t.Helper()
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64", "darwin_arm64"}))
	dir = t.TempDir()
	good = filepath.Join(dir, "good.tar")
	if r := run(t, nil, "export", src, good); r.code != 0 {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return dir, good
}

// A damaged or altered bundle is a problem found, not a mistake in the
// command line: verify, ls and sync from it exit 1 (as import does),
// saying what is wrong; a bundle that is not there is still exit 2.
func TestDamagedBundleIsAProblemForEveryCommand(t *testing.T) {
	dir, good := goodBundle(t)
	names, data := tarEntries(t, good)
	raw, _ := os.ReadFile(good)
	truncated := filepath.Join(dir, "truncated.tar")
	os.WriteFile(truncated, raw[:len(raw)*2/3], 0o644)
	edited := filepath.Join(dir, "edited.tar")
	d := map[string][]byte{}
	for k, v := range data {
		d[k] = v
	}
	d[".tfmirror-bundle.json"] = bytes.Replace(data[".tfmirror-bundle.json"], []byte(`"size": `), []byte(`"size":  `), 1)
	writeTar(t, edited, names, d)
	tampered := filepath.Join(dir, "tampered.tar")
	zip := "example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip"
	d = map[string][]byte{}
	for k, v := range data {
		d[k] = append([]byte(nil), v...)
	}
	d[zip][len(d[zip])/2] ^= 1
	writeTar(t, tampered, names, d)

	if r := run(t, nil, "verify", good); r.code != 0 {
		t.Fatalf("verify of the bundle as exported: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ bundle, want string }{
		{truncated, "truncated"},
		{edited, "the manifest's SHA-256"},
		{tampered, zip},
	} {
		for _, args := range [][]string{
			{"verify", c.bundle},
			{"ls", c.bundle},
			{"sync", c.bundle, filepath.Join(t.TempDir(), "mirror")},
		} {
			if args[0] == "ls" && c.bundle == tampered {
				continue // ls reads no archive
			}
			r := run(t, nil, args...)
			if r.code != 1 || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Errorf("%s %s: exit %d, want 1 saying %q\n%s%s", args[0], filepath.Base(c.bundle), r.code, c.want, r.stdout, r.stderr)
			}
		}
	}
	if r := run(t, nil, "verify", filepath.Join(dir, "none.tar")); r.code != 2 {
		t.Errorf("verify of a bundle that is not there: exit %d, want 2\n%s", r.code, r.stderr)
	}
}

// An export killed (SIGKILL, a real process) at random moments leaves its
// staging mirror and part-written .tar beside the bundle; the next export
// or import of that bundle removes them, while a bundle that was complete
// stays whole. A live export's staging is never taken for a dead one's.
func TestKilledExportLeavesNothingBehind(t *testing.T) {
	seed := uint64(time.Now().UnixNano()) // the zips' bytes and the kills' moments (killtest logs it)
	rng := rand.New(rand.NewPCG(seed, 31))
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, []string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "darwin_arm64", "windows_amd64"})
	for i := range seeds {
		body := make([]byte, 256<<10) // incompressible: each archive takes a while
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		seeds[i].Zip = backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-" + seeds[i].Package.Provider.Type, Body: body})
	}
	src := sourceMirror(t, seeds)
	dir := t.TempDir()
	b := filepath.Join(dir, "b.tar")
	start := time.Now()
	if r := run(t, nil, "export", src, b, "--jobs", "1"); r.code != 0 {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	full := time.Since(start)
	want, _ := os.ReadFile(b)
	only := func(when string) {
		t.Helper()
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != "b.tar" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("%s: %s holds %v, want b.tar alone", when, dir, names)
		}
	}
	leftBehind := 0
	const rounds = 10
	killtest.Kills{
		Start: func(t *testing.T, round int) *exec.Cmd {
			return exec.Command(tfmirrorBin, "export", src, b, "--jobs", "1")
		},
		Ready: func(t *testing.T, k *killtest.Kill) {
			if k.I%2 != 0 {
				return
			}
			// Wait for the staging to be there, then a moment more.
			deadline := time.Now().Add(time.Minute)
			for {
				entries, _ := os.ReadDir(dir)
				if len(entries) > 1 || time.Now().After(deadline) {
					return
				}
				select {
				case <-k.Exited:
					return
				case <-time.After(time.Millisecond):
				}
			}
		},
		Window: full, N: rounds, Seed: seed,
		Check: func(t *testing.T, k killtest.Kill) {
			round := k.I
			if entries, _ := os.ReadDir(dir); len(entries) > 1 {
				leftBehind++
			}
			if got, _ := os.ReadFile(b); !bytes.Equal(got, want) {
				t.Fatalf("round %d: the bundle is not the one exported (%d bytes, want %d)", round, len(got), len(want))
			}
			// The next export or import of the bundle sweeps; a second export
			// running meanwhile keeps its own staging.
			if round%2 == 0 {
				if r := run(t, nil, "import", b, filepath.Join(t.TempDir(), "mirror")); r.code != 0 {
					t.Fatalf("round %d: import: %d\n%s%s", round, r.code, r.stdout, r.stderr)
				}
			} else if r := run(t, nil, "export", src, b); r.code != 0 {
				t.Fatalf("round %d: export: %d\n%s%s", round, r.code, r.stdout, r.stderr)
			}
			only(fmt.Sprintf("round %d, after a kill and the next run", round))
		},
	}.Run(t)
	t.Logf("%d kills left staging behind, each swept by the next run (a full export takes %s)", leftBehind, full.Round(time.Millisecond))
	if leftBehind == 0 {
		t.Fatalf("no kill of %d left anything behind: the test did not kill an export at work", rounds)
	}

	// A live export's staging is locked: an import sweeping meanwhile
	// leaves it, and the export completes.
	cmd := exec.Command(tfmirrorBin, "export", src, b, "--jobs", "1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		entries, _ := os.ReadDir(dir)
		if len(entries) > 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the export made no staging within a minute")
		}
		time.Sleep(time.Millisecond)
	}
	if r := run(t, nil, "import", b, filepath.Join(t.TempDir(), "mirror")); r.code != 0 {
		t.Fatalf("import during an export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the export an import swept beside: %v\n%s", err, stderr.String())
	}
	only("after an export an import ran beside")
	if got, _ := os.ReadFile(b); !bytes.Equal(got, want) {
		t.Fatalf("the bundle is not the one exported")
	}
}
