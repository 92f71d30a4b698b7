package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mirror anyone could have written holds terminal escape sequences in a
// file name and in the hashes of a version document: no command prints
// them to the terminal (they would clear the screen, retitle the window,
// or hide lines); each is written out as \x1b.
func TestNoTerminalEscapesFromAPlace(t *testing.T) {
	dir, _ := fsMirror(t)
	const esc = "\x1b]0;pwned\x07\x1b[2J"
	prov := filepath.Join(dir, "example.com", "acme", "alpha")
	if err := os.WriteFile(filepath.Join(prov, "junk"+esc+"\x9b31m.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	zip, err := os.ReadFile(filepath.Join(prov, "terraform-provider-alpha_1.0.0_linux_amd64.zip"))
	if err != nil {
		t.Fatal(err)
	}
	// A platform with an escape in it: not a platform.
	if err := os.WriteFile(filepath.Join(prov, "terraform-provider-alpha_1.0.0_linux"+esc+"_amd64.zip"), zip, 0o644); err != nil {
		t.Fatal(err)
	}
	// fsMirror writes no index documents: one as a mirror would, but for
	// its hashes.
	hashes, _ := json.Marshal([]string{esc + "evil:x", "h1:" + esc + strings.Repeat("A", 30) + "=", "zh:" + esc})
	doc := `{"archives":{"linux_amd64":{"url":"terraform-provider-alpha_1.0.0_linux_amd64.zip","hashes":` + string(hashes) + `}}}`
	if err := os.WriteFile(filepath.Join(prov, "1.0.0.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	for _, args := range [][]string{
		{"ls", dir},
		{"verify", dir, "-p", "example.com/acme/alpha"},
		{"diff", dir, filepath.Join(t.TempDir(), "empty"), "-p", "example.com/acme/alpha"},
		{"sync", dir, filepath.Join(t.TempDir(), "dst"), "-p", "example.com/acme/alpha"},
		{"lock", dir, "-p", "example.com/acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--lock", lock},
	} {
		r := run(t, nil, args...)
		noCrash(t, args[0], r)
		out := r.stdout + r.stderr
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("%s: a control character reached the terminal (exit %d):\n%q", args[0], r.code, out)
		}
		if args[0] != "diff" && !strings.Contains(out, `\x1b`) {
			t.Errorf("%s: the escape is not written out where the hostile text is named:\n%s", args[0], out)
		}
	}
}
