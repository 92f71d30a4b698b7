package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/audit"
)

// hereRegistry serves acme/alpha 1.0.0 and 1.1.0 for this machine's
// platform and another, signed.
func hereRegistry(t *testing.T) (*registrytest.Server, []string) {
	t.Helper()
	plats := []string{runtime.GOOS + "_" + runtime.GOARCH, "windows_amd64"}
	var versions []registrytest.Version
	for _, v := range []string{"1.0.0", "1.1.0"} {
		ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
		for _, plat := range plats {
			ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, plat), "")
		}
		versions = append(versions, ver)
	}
	return registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: versions}), plats
}

// mustRun runs tfmirror and wants exit 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := run(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("tfmirror %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

type signerJSON struct {
	KeyID       string `json:"key_id"`
	Fingerprint string `json:"fingerprint"`
	Source      string `json:"source"`
}

// TestProvenanceSidecarsInitCleanly: a filesystem mirror tfmirror filled
// from a registry keeps each version's provenance in
// .tfmirror-provenance/VERSION.json, in the packed and in the unpacked
// layout; terraform and tofu install from it and say nothing about the
// sidecars, not even in their WARN logs; ls --json and verify name the
// signer.
func TestProvenanceSidecarsInitCleanly(t *testing.T) {
	reg, _ := hereRegistry(t)
	ca := caFile(t, reg.CertPEM())
	addr := reg.Host() + "/acme/alpha"
	packed, unpacked := filepath.Join(t.TempDir(), "packed"), filepath.Join(t.TempDir(), "unpacked")
	mustRun(t, "sync", "registry://"+reg.Host(), packed, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca)
	mustRun(t, "sync", "registry://"+reg.Host(), unpacked, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca, "--unpacked")
	for _, m := range []string{packed, unpacked} {
		if _, err := os.Stat(filepath.Join(m, reg.Host(), "acme", "alpha", ".tfmirror-provenance", "1.0.0.json")); err != nil {
			t.Fatalf("no provenance sidecar in %s: %v", m, err)
		}
	}

	ls := mustRun(t, "ls", packed, "--json")
	var rows []struct {
		Platform string
		Signer   *signerJSON
	}
	if err := json.Unmarshal([]byte(ls.stdout), &rows); err != nil {
		t.Fatalf("decoding ls.stdout: %v\n%s", err, ls.stdout)
	}
	if len(rows) != 2 {
		t.Fatalf("ls: %s", ls.stdout)
	}
	for _, row := range rows {
		if row.Signer == nil || row.Signer.KeyID != reg.KeyID() || row.Signer.Fingerprint != reg.Fingerprint() || !strings.Contains(row.Signer.Source, "/acme/alpha/1.0.0/download/") {
			t.Errorf("ls --json %s: signer %+v, want key %s, fingerprint %s and the registry URL that listed it", row.Platform, row.Signer, reg.KeyID(), reg.Fingerprint())
		}
	}
	v := mustRun(t, "verify", packed, "--json")
	if !strings.Contains(v.stdout, `"fingerprint":"`+reg.Fingerprint()+`"`) && !strings.Contains(v.stdout, `"fingerprint": "`+reg.Fingerprint()+`"`) {
		t.Errorf("verify --json does not name the signer:\n%s", v.stdout)
	}

	config := fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", addr)
	clients := map[string]string{"terraform": backendtest.Terraform(t, "init from a mirror with provenance sidecars"), "tofu": tofuOrEmpty(t)}
	initFrom := func(bin, mirror string) (string, error) {
		_, env := terraformEnv(t, reg.CertPEM(), fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror))
		conf := t.TempDir()
		writeFile(t, conf, "main.tf", config)
		cmd := exec.Command(bin, "-chdir="+conf, "init", "-input=false", "-no-color")
		cmd.Env = append(append(os.Environ(), env...), "TF_LOG=WARN")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for name, bin := range clients {
		if bin == "" {
			continue
		}
		for _, m := range []string{packed, unpacked} {
			with, err := initFrom(bin, m)
			if err != nil || !strings.Contains(with, "Installed "+addr+" v1.0.0") {
				t.Errorf("%s init from the %s mirror: %v\n%s", name, filepath.Base(m), err, with)
				continue
			}
			// The same mirror without its sidecars is the baseline: the
			// clients warn about what they warn about in any mirror (a
			// lock file incomplete for other platforms; at WARN level,
			// files that are not packages), and nothing more with them.
			bare := copyTree(t, m)
			os.RemoveAll(filepath.Join(bare, reg.Host(), "acme", "alpha", ".tfmirror-provenance"))
			without, err := initFrom(bin, bare)
			if err != nil {
				t.Fatalf("%s init from the %s mirror without sidecars: %v\n%s", name, filepath.Base(m), err, without)
			}
			if strings.Contains(strings.ToLower(with), "provenance") || warnings(with) != warnings(without) {
				t.Errorf("%s init from the %s mirror warns about the sidecars:\nwith them:\n%s\nwithout them:\n%s", name, filepath.Base(m), with, without)
			}
		}
	}
}

// warnings returns the warning lines of a client's output (user-facing
// "Warning:" headings and [WARN] log lines), without their timestamps.
func warnings(out string) string {
	var ws []string
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "[WARN]"); i >= 0 {
			ws = append(ws, line[i:])
		} else if strings.Contains(line, "Warning:") {
			ws = append(ws, strings.TrimSpace(line))
		}
	}
	return strings.Join(ws, "\n")
}

// tofuOrEmpty is OpenTofu's path, or "" (logged) where it is not built.
func tofuOrEmpty(t *testing.T) string {
	var path string
	t.Run("tofu", func(t *testing.T) { path = backendtest.Tofu(t, "init from a mirror with provenance sidecars") })
	return path
}

// TestPolicyRefusesUnpinnedKeyCLI: sync --policy pinning another key for
// the provider mirrors nothing, exits 1 and names both keys; a policy that
// does not parse is a usage error; --require-signature refuses a source
// that keeps no provenance.
func TestPolicyRefusesUnpinnedKeyCLI(t *testing.T) {
	reg, _ := hereRegistry(t)
	ca := caFile(t, reg.CertPEM())
	dir := t.TempDir()
	policy := writeFile(t, dir, "trust.hcl", fmt.Sprintf("provider %q {\n  fingerprints = [%q]\n}\n", "acme/*", reg.OtherFingerprint()))
	dst := filepath.Join(dir, "mirror")
	r := run(t, nil, "sync", "registry://"+reg.Host(), dst, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca, "--policy", policy)
	out := r.stdout + r.stderr
	if r.code != 1 || !strings.Contains(out, "fingerprint "+reg.Fingerprint()) || !strings.Contains(out, "pins fingerprint "+reg.OtherFingerprint()) {
		t.Fatalf("sync with an unpinned key: exit %d\n%s", r.code, out)
	}
	if n := zipsUnder(t, dst); n != 0 {
		t.Fatalf("%d archives landed signed by a key the policy does not pin", n)
	}
	bad := writeFile(t, dir, "bad.hcl", "provider \"acme/*\" {\n  fingerprints = [\"1234ABCD1234ABCD\"]\n}\n")
	if r := run(t, nil, "sync", "registry://"+reg.Host(), dst, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca, "--policy", bad); r.code != 2 || !strings.Contains(r.stderr, "bad.hcl:2") {
		t.Fatalf("a policy pinning a key ID: exit %d\n%s", r.code, r.stderr)
	}

	unsigned, _ := fsMirror(t)
	dst2 := filepath.Join(dir, "mirror2")
	r = run(t, nil, "sync", unsigned, dst2, "-p", "example.com/acme/alpha", "--require-signature")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "no valid signature, and a signature is required") {
		t.Fatalf("sync --require-signature from a source without provenance: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := zipsUnder(t, dst2); n != 0 {
		t.Fatalf("%d unsigned archives landed with --require-signature", n)
	}
	if r := run(t, []string{"OPENTOFU_ENFORCE_GPG_VALIDATION=true"}, "sync", unsigned, dst2, "-p", "example.com/acme/alpha"); r.code != 1 {
		t.Fatalf("sync under OPENTOFU_ENFORCE_GPG_VALIDATION=true from a source without provenance: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// zipsUnder counts the zips in a directory tree.
func zipsUnder(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".zip") {
			n++
		}
		return nil
	})
	return n
}

// TestAuditLog: sync, push and prune append to one audit log (two syncs
// at once among them), and the log answers "when did this archive enter
// the mirror, and who signed it", and when it left.
func TestAuditLog(t *testing.T) {
	reg, plats := hereRegistry(t)
	oreg := ocitest.New(t)
	oca, _ := os.ReadFile(oreg.CAFile())
	ca := caFile(t, reg.CertPEM(), oca)
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	mirror, other := filepath.Join(dir, "mirror"), filepath.Join(dir, "other")
	a := start(t, "sync", "registry://"+reg.Host(), mirror, "-p", "acme/alpha", "-v", ">= 1.0.0", "--ca-cert", ca, "--audit", log)
	b := start(t, "sync", "registry://"+reg.Host(), other, "-p", "acme/alpha", "-v", ">= 1.0.0", "--ca-cert", ca, "--audit", log)
	for _, p := range []*started{a, b} {
		if r := p.wait(t); r.code != 0 {
			t.Fatalf("sync --audit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	oci := "oci://" + oreg.Host() + "/tf/${namespace}/${type}"
	mustRun(t, "push", mirror, oci, "-p", reg.Host()+"/acme/alpha", "-v", "1.1.0", "--ca-cert", ca, "--audit", log)
	mustRun(t, "prune", mirror, "--keep", "1", "--yes", "--audit", log)

	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := audit.Read(f)
	if err != nil {
		t.Fatalf("the audit log does not read back: %v", err)
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.Command+" "+e.Event]++
		if !strings.HasPrefix(e.Tool, "tfmirror ") || e.Time.IsZero() {
			t.Errorf("entry without the tool version or time: %+v", e)
		}
	}
	n := len(plats)
	if count["sync landed"] != 2*2*n || count["push landed"] != n || count["prune removed"] != n || len(entries) != 4*n+n+n {
		t.Fatalf("entries by command and event: %v (of %d lines)", count, len(entries))
	}

	// When did this archive enter ./mirror, and who signed it?
	here := plats[0]
	zh := hashing.Hash("zh:" + reg.SHA256("acme", "alpha", "1.0.0", here))
	e, ok := audit.Entered(entries, mirror, zh)
	if !ok || e.Version != "1.0.0" || e.Platform != here || e.Source != "registry://"+reg.Host() || e.Signer == nil || e.Signer.Fingerprint != reg.Fingerprint() {
		t.Fatalf("the log does not say when %s entered %s and who signed it: %+v, %v", zh, mirror, e, ok)
	}
	var removed bool
	for _, x := range entries {
		if x.Event == audit.Removed && x.Destination == mirror && x.Version == "1.0.0" && x.Platform == here {
			removed = x.Signer != nil && x.Signer.Fingerprint == reg.Fingerprint() && x.Time.After(e.Time) && contains(hashing.Strings(x.Hashes), string(zh))
		}
	}
	if !removed {
		t.Fatalf("the log does not say when %s left %s, with its hashes and signer:\n%v", zh, mirror, entries)
	}
}

// TestProvenanceThroughOCI: a mirror's provenance rides into an OCI mirror
// as a referrer of each version's index (OpenTofu installs from it as if
// it were not there), and back out into another filesystem mirror, where
// verify still names the registry's key: two hops from the registry.
func TestProvenanceThroughOCI(t *testing.T) {
	reg, _ := hereRegistry(t)
	oreg := ocitest.New(t)
	oca, _ := os.ReadFile(oreg.CAFile())
	ca := caFile(t, reg.CertPEM(), oca)
	dir := t.TempDir()
	mirror, back := filepath.Join(dir, "mirror"), filepath.Join(dir, "back")
	addr := reg.Host() + "/acme/alpha"
	mustRun(t, "sync", "registry://"+reg.Host(), mirror, "-p", "acme/alpha", "-v", "1.1.0", "--ca-cert", ca)
	oci := "oci://" + oreg.Host() + "/tf/${namespace}/${type}"
	mustRun(t, "sync", mirror, oci, "-p", addr, "--ca-cert", ca)
	v := mustRun(t, "verify", oci, "-p", addr, "-v", "1.1.0", "--ca-cert", ca, "--json")
	if !strings.Contains(v.stdout, reg.Fingerprint()) {
		t.Errorf("verify of the OCI mirror does not name the signer:\n%s", v.stdout)
	}
	mustRun(t, "sync", oci, back, "-p", addr, "-v", "1.1.0", "--ca-cert", ca)
	v = mustRun(t, "verify", back, "--json")
	var rows []struct {
		Status string
		Detail string
		Signer *signerJSON
	}
	if err := json.Unmarshal([]byte(v.stdout), &rows); err != nil {
		t.Fatalf("decoding v.stdout: %v\n%s", err, v.stdout)
	}
	if len(rows) != 2 {
		t.Fatalf("verify two hops down: %s", v.stdout)
	}
	for _, row := range rows {
		if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != reg.Fingerprint() || !strings.Contains(row.Detail, "zh matches signed SHA256SUMS (key "+reg.KeyID()) {
			t.Errorf("two hops down: %+v", row)
		}
	}
	tofuInstallsFromOCI(t, oreg, oca, addr, "1.1.0")
}

// TestPushSignedGoreleaserDist: a provider's release as goreleaser leaves
// it in dist/ (zips, a SHA256SUMS signed by the publisher's key, the
// registry manifest, reports and build directories), pushed with the
// publisher's public key: verify of the registry names the signer, and
// tofu installs from it.
func TestPushSignedGoreleaserDist(t *testing.T) {
	const addr, version = "example.com/acme/alpha", "1.3.0"
	here := runtime.GOOS + "_" + runtime.GOARCH
	seeds := backendtest.Seeds(t, []string{addr}, []string{version}, []string{here, "windows_amd64"})
	signer := backendtest.NewSigner(t, "acme releases")
	prov := signer.Provenance(t, seeds)
	dist := t.TempDir()
	for _, sd := range seeds {
		writeFile(t, dist, sd.Package.Filename(), string(sd.Zip))
		build := filepath.Join(dist, "terraform-provider-alpha_"+sd.Package.Platform.String()+"_v1")
		os.MkdirAll(build, 0o755)
		writeFile(t, build, "terraform-provider-alpha_v"+version, "#!/bin/sh\n")
	}
	sums := writeFile(t, dist, "terraform-provider-alpha_"+version+"_SHA256SUMS", string(prov.SHA256SUMS))
	writeFile(t, dist, filepath.Base(sums)+".sig", string(prov.Signature))
	writeFile(t, dist, "terraform-provider-alpha_"+version+"_manifest.json", `{"version":1,"metadata":{"protocol_versions":["5.0"]}}`)
	writeFile(t, dist, "artifacts.json", "[]")
	writeFile(t, dist, "metadata.json", "{}")
	key := writeFile(t, t.TempDir(), "acme.asc", signer.Armor)

	oreg := ocitest.New(t)
	oca, _ := os.ReadFile(oreg.CAFile())
	ca := caFile(t, oca)
	oci := "oci://" + oreg.Host() + "/tf/${namespace}/${type}"
	mustRun(t, "push", dist, oci, "-p", addr, "--signing-key", key, "--ca-cert", ca)
	v := mustRun(t, "verify", oci, "-p", addr, "--ca-cert", ca, "--json")
	var rows []struct {
		Status string
		Signer *signerJSON
	}
	if err := json.Unmarshal([]byte(v.stdout), &rows); err != nil {
		t.Fatalf("decoding v.stdout: %v\n%s", err, v.stdout)
	}
	if len(rows) != 2 {
		t.Fatalf("verify of the pushed release: %s", v.stdout)
	}
	for _, row := range rows {
		if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != signer.Fingerprint() || row.Signer.Source != key {
			t.Errorf("verify of the pushed release: %+v, want ok, signed by %s from %s", row, signer.Fingerprint(), key)
		}
	}
	tofuInstallsFromOCI(t, oreg, oca, addr, version)
}
