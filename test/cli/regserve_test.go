package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// hostBlock is a CLI configuration whose only setting moves the registry
// protocols of host onto the mirror at url.
func hostBlock(url, host string) string {
	return fmt.Sprintf("host %q {\n  services = {\n    \"providers.v1\" = %q\n    \"modules.v1\"   = %q\n  }\n}\n",
		host, url+"v1/providers/"+host+"/", url+"v1/modules/"+host+"/")
}

// terraform init through `serve CACHE --upstream origin` with only a host
// block for the provider's hostname: the client checks the origin's
// signature itself, so its lock file records the h1: it computed and the
// signed zh: of every platform, exactly as a direct install from the origin
// does; tofu installs the same way; and a fresh serve of the CACHE with
// the origin down answers both from the provenance it landed.
func TestProvidersV1ThroughAHostBlock(t *testing.T) {
	clients := pullClients(t)
	w := newPullWorld(t, registrytest.Faults{})
	origin, _ := os.ReadFile(w.ca)
	first := "terraform"
	if clients[first] == "" {
		first = "tofu"
	}
	direct := pullConfig(t)
	if out, err := runClient(t, clients[first], origin, "", direct, "init", "-input=false", "-no-color"); err != nil {
		t.Fatalf("%s init from the origin: %v\n%s", first, err, out)
	}
	want := lockHashes(t, filepath.Join(direct, ".terraform.lock.hcl"))
	if n := len(want); n != 3 {
		t.Fatalf("a direct install locked %v, want an h1: and the zh: of both platforms", want)
	}

	cache := filepath.Join(t.TempDir(), "cache")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1")
	caPEM, _ := os.ReadFile(cert)
	work := pullConfig(t)
	out, err := runClient(t, clients[first], caPEM, hostBlock(url, "127.0.0.1"), work, "init", "-input=false", "-no-color")
	if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
		t.Fatalf("%s init through the mirror's providers.v1: %v\n%s", first, err, out)
	}
	if got := lockHashes(t, filepath.Join(work, ".terraform.lock.hcl")); !slices.Equal(got, want) {
		t.Errorf("the lock through the mirror's providers.v1 records %v, a direct install %v", got, want)
	}
	waitLanded(t, url, caPEM)
	stop()

	w.stopOrigin()
	url, cert, stop = startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1")
	caPEM, _ = os.ReadFile(cert)
	for name, bin := range clients {
		work := pullConfig(t)
		out, err := runClient(t, bin, caPEM, hostBlock(url, "127.0.0.1"), work, "init", "-input=false", "-no-color")
		if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
			t.Errorf("%s init through providers.v1 with the origin down: %v\n%s", name, err, out)
			continue
		}
		if got := lockHashes(t, filepath.Join(work, ".terraform.lock.hcl")); !slices.Equal(got, want) {
			t.Errorf("%s locked %v through the warm mirror, a direct install %v", name, got, want)
		}
	}
	stop()
}

// `serve PLACE` of a directory sync filled from the origin answers
// providers.v1 from the provenance it keeps; a version it keeps none of
// is not offered (and the log says why); an archive or a SHA256SUMS
// altered in PLACE fails the client's own check.
func TestProvidersV1FromAPlaceFailsTheClientsCheckWhenTampered(t *testing.T) {
	clients := pullClients(t)
	w := newPullWorld(t, registrytest.Faults{})
	mirror := filepath.Join(t.TempDir(), "mirror")
	if r := run(t, w.env, "sync", "registry://127.0.0.1", mirror, "-p", pullAddr, "--version", "1.0.0", "--platform", w.plats[0]); r.code != 0 {
		t.Fatalf("sync from the origin: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	url, cert, stop := startServeWith(t, w.env, mirror)
	caPEM, _ := os.ReadFile(cert)
	// The host blocks config suggest prints are the whole CLI configuration.
	sg := run(t, w.env, "config", "suggest", mirror, "--serve-url", url)
	if sg.code != 0 || strings.Count(sg.stdout, "host \"") != 1 || !strings.Contains(sg.stdout, "Credentials") {
		t.Fatalf("config suggest --serve-url: exit %d\n%s%s", sg.code, sg.stdout, sg.stderr)
	}
	for name, bin := range clients {
		out, err := runClient(t, bin, caPEM, sg.stdout, pullConfig(t), "init", "-input=false", "-no-color")
		if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
			t.Errorf("%s init through serve PLACE's providers.v1: %v\n%s", name, err, out)
		}
	}
	stop()

	dir := filepath.Join(mirror, "127.0.0.1", "acme", "alpha")
	zip := filepath.Join(dir, fmt.Sprintf("terraform-provider-alpha_1.0.0_%s.zip", w.plats[0]))
	doc := filepath.Join(dir, provenance.DirName, provenance.FileName("1.0.0"))
	keep, _ := os.ReadFile(doc)
	zipBytes, _ := os.ReadFile(zip)
	for _, c := range []struct {
		what   string
		tamper func()
	}{
		{"archive", func() { os.WriteFile(zip, registrytest.Tamper(zipBytes), 0o644) }},
		{"SHA256SUMS", func() { tamperSums(t, doc, keep) }},
	} {
		os.WriteFile(zip, zipBytes, 0o644)
		os.WriteFile(doc, keep, 0o644)
		c.tamper()
		url, cert, stop := startServeWith(t, w.env, mirror)
		caPEM, _ := os.ReadFile(cert)
		for name, bin := range clients {
			out, err := runClient(t, bin, caPEM, hostBlock(url, "127.0.0.1"), pullConfig(t), "init", "-input=false", "-no-color")
			if err == nil || strings.Contains(out, "Installed 127.0.0.1/acme/alpha") {
				t.Errorf("%s init with the %s altered in PLACE succeeded:\n%s", name, c.what, out)
			} else if !regexp.MustCompile(`(?i)checksum|signature|hash`).MatchString(out) {
				t.Errorf("%s init with the %s altered failed, but not its own check:\n%s", name, c.what, out)
			}
		}
		stop()
	}

	os.WriteFile(zip, zipBytes, 0o644)
	os.Remove(doc)
	url, cert, stop = startServeWith(t, w.env, mirror)
	caPEM, _ = os.ReadFile(cert)
	out, err := runClient(t, clients[firstClient(clients)], caPEM, hostBlock(url, "127.0.0.1"), pullConfig(t), "init", "-input=false", "-no-color")
	if err == nil {
		t.Errorf("init of a version PLACE keeps no provenance of succeeded through providers.v1:\n%s", out)
	}
	if log := stop(); !strings.Contains(log, "1.0.0 is not offered") || !strings.Contains(log, "network mirror still serves it") {
		t.Errorf("serve's log does not say why 1.0.0 is not offered through providers.v1:\n%s", log)
	}
}

// firstClient names terraform where it is installed, else tofu.
func firstClient(clients map[string]string) string {
	if clients["terraform"] != "" {
		return "terraform"
	}
	return "tofu"
}

// tamperSums rewrites the provenance document in file with one hex digit
// of its SHA256SUMS changed.
func tamperSums(t *testing.T, file string, doc []byte) {
	t.Helper()
	pr, err := provenance.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(string(pr.SHA256SUMS))
	if b[0] == '0' {
		b[0] = '1'
	} else {
		b[0] = '0'
	}
	pr.SHA256SUMS = b
	out, err := provenance.Marshal(pr)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, out, 0o644)
}

// ls of a mirror that keeps the provenance of some versions of a provider
// and not of others says which are not offered through providers.v1.
func TestLsNotesVersionsWithoutProvenance(t *testing.T) {
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64"})
	backendtest.WritePacked(t, dir, seeds)
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	signed := backendtest.Versions(seeds)[0]
	p, v := signed[0].Package.Provider, signed[0].Package.Version
	if err := m.WriteProvenance(context.Background(), p, v, backendtest.NewSigner(t, "ls").Provenance(t, signed)); err != nil {
		t.Fatal(err)
	}
	r := run(t, cleanEnv(t), "ls", dir)
	if r.code != 0 || !strings.Contains(r.stderr, "keeps no signed SHA256SUMS of example.com/acme/alpha 2.0.0") || strings.Contains(r.stderr, "alpha 1.0.0") {
		t.Errorf("ls: exit %d, want a note naming 2.0.0 alone\n%s%s", r.code, r.stdout, r.stderr)
	}
	// ls --json says it on each row of 2.0.0, with the signer of 1.0.0's;
	// the same with a provider named (the rows listed whole).
	for _, args := range [][]string{{"ls", dir, "--json"}, {"ls", dir, "--json", "-p", "example.com/acme/alpha"}} {
		r = run(t, cleanEnv(t), args...)
		var rows []struct {
			Version  string                  `json:"version"`
			Signer   *struct{ KeyID string } `json:"signer"`
			Withheld string                  `json:"withheld"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 || len(rows) != 2 {
			t.Fatalf("%v: exit %d, %v\n%s%s", args, r.code, err, r.stdout, r.stderr)
		}
		for _, row := range rows {
			signed := row.Version == "1.0.0"
			if signed != (row.Signer != nil) || signed != (row.Withheld == "") || (!signed && !strings.Contains(row.Withheld, "not offered through providers.v1")) {
				t.Errorf("%v: row of %s: signer %v, withheld %q", args, row.Version, row.Signer, row.Withheld)
			}
		}
	}
}
