package push_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/oci/push"
)

// goreleaserDist writes what goreleaser leaves in dist/ for a provider
// release: the zips, the SHA256SUMS and its detached signature by signer,
// the registry manifest, its reports and the per-platform build
// directories holding the bare executable. It returns dist/ and the path
// of the SHA256SUMS.
func goreleaserDist(t *testing.T, signer *backendtest.Signer, typ, version string, plats ...string) (string, string) {
	t.Helper()
	dist := t.TempDir()
	var zips []string
	for _, plat := range plats {
		zips = append(zips, releaseZip(t, dist, typ, version, plat, ""))
		build := filepath.Join(dist, "terraform-provider-"+typ+"_"+plat+"_v1")
		writeTestFile(t, filepath.Join(build, "terraform-provider-"+typ+"_v"+version), "#!/bin/sh\n")
	}
	prefix := "terraform-provider-" + typ + "_" + version
	sums := writeSums(t, dist, prefix+"_SHA256SUMS", zips, nil)
	doc, _ := os.ReadFile(sums)
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, signer.Entity, bytes.NewReader(doc), nil); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, sums+".sig", sig.String())
	writeTestFile(t, filepath.Join(dist, prefix+"_manifest.json"), `{"version":1,"metadata":{"protocol_versions":["6.0"]}}`)
	for _, name := range []string{"artifacts.json", "metadata.json"} {
		writeTestFile(t, filepath.Join(dist, name), "{}")
	}
	writeTestFile(t, filepath.Join(dist, "config.yaml"), "project_name: terraform-provider-"+typ+"\n")
	return dist, sums
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func distGlob(t *testing.T, dist string) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(dist, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return all
}

type verifyRow struct {
	Platform, Status, Detail string
	Signer                   *signerJSON
}

type signerJSON struct {
	KeyID       string `json:"key_id"`
	Fingerprint string `json:"fingerprint"`
	Source      string `json:"source"`
}

func verifyJSON(t *testing.T, reg *ocitest.Registry, args ...string) []verifyRow {
	t.Helper()
	r := run(t, reg, append([]string{"verify", "--json"}, args...)...)
	var rows []verifyRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 || len(rows) == 0 {
		t.Fatalf("verify --json: %v\n%s", err, r)
	}
	return rows
}

// push dist/* and push dist/ of a signed goreleaser release land the same
// packages, skip goreleaser's other outputs in one note, and keep the
// signed SHA256SUMS in the registry, so verify and export name the signer.
func TestPushGoreleaserDist(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	dist, _ := goreleaserDist(t, signer, "alpha", "1.2.3", "linux_amd64", "darwin_arm64")
	key := filepath.Join(t.TempDir(), "acme.asc")
	writeTestFile(t, key, signer.Armor)
	const addr = "registry.opentofu.org/acme/alpha"
	var rows [2][]lsRow
	for i, src := range [][]string{distGlob(t, dist), {dist + "/"}} {
		dst := "oci://" + reg.Host() + []string{"/glob", "/dir"}[i] + "/${namespace}/${type}"
		args := append(append([]string{"push", "-p", addr, "--signing-key", key}, src...), dst)
		r := run(t, reg, args...)
		if r.code != 0 {
			t.Fatalf("push %v: %s", src, r)
		}
		notes := strings.Count(r.stderr, "note: not pushed")
		for _, want := range []string{"artifacts.json", "config.yaml", "metadata.json", "terraform-provider-alpha_1.2.3_manifest.json", "terraform-provider-alpha_linux_amd64_v1/"} {
			if notes != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("push %v: want one note naming %s:\n%s", src, want, r)
			}
		}
		rows[i] = lsJSON(t, reg, dst, "-p", addr)
		for _, row := range verifyJSON(t, reg, dst, "-p", addr) {
			if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != signer.Fingerprint() || !strings.Contains(row.Detail, "signed SHA256SUMS") {
				t.Errorf("verify %s: %+v, want ok and signed by %s", dst, row, signer.Fingerprint())
			}
		}
	}
	if len(rows[0]) != 2 || !reflect.DeepEqual(rows[0], rows[1]) {
		t.Errorf("push dist/* listed %+v, push dist/ %+v", rows[0], rows[1])
	}
	bundle := filepath.Join(t.TempDir(), "b.tar")
	if r := run(t, reg, "export", "oci://"+reg.Host()+"/dir/${namespace}/${type}", bundle, "-p", addr); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "1 versions with their signed SHA256SUMS") {
		t.Errorf("export of the pushed release: %s", r)
	}

	// --json: each done event names the signer, as ls --json and verify --json do.
	r := run(t, reg, append(append([]string{"push", "--json", "-p", addr, "--signing-key", key}, distGlob(t, dist)...), "oci://"+reg.Host()+"/json/${namespace}/${type}")...)
	done := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct {
			Type   string
			Signer *signerJSON
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("decoding line: %v\n%s", err, line)
		}
		if ev.Type == "done" {
			done++
			if ev.Signer == nil || ev.Signer.Fingerprint != signer.Fingerprint() || ev.Signer.KeyID != signer.KeyID() || ev.Signer.Source != key {
				t.Errorf("done event without the signer %s (key %s): %s", signer.Fingerprint(), key, line)
			}
		}
	}
	if r.code != 0 || done != 2 {
		t.Errorf("push --json: %d done events: %s", done, r)
	}

	// Without --signing-key: pushed as before, with a note to pass one.
	nokey := "oci://" + reg.Host() + "/nokey/${namespace}/${type}"
	r = run(t, reg, append(append([]string{"push", "-p", addr}, distGlob(t, dist)...), nokey)...)
	if r.code != 0 || !strings.Contains(r.stderr, ".sig is not checked: pass the release's public key with --signing-key") {
		t.Errorf("push without a key: %s", r)
	}
	for _, row := range verifyJSON(t, reg, nokey, "-p", addr) {
		if row.Signer != nil {
			t.Errorf("pushed without a key, yet signed: %+v", row)
		}
	}
	// The same release again with the key: nothing uploaded, and the
	// signature kept for the version already there (as sync backfills it).
	reg.ResetRequests()
	if r := run(t, reg, "push", "-p", addr, "--signing-key", key, dist, nokey); r.code != 0 || reg.BlobUploads() > 1 {
		t.Errorf("push with the key after a push without (%d blob uploads): %s", reg.BlobUploads(), r)
	}
	for _, row := range verifyJSON(t, reg, nokey, "-p", addr) {
		if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != signer.Fingerprint() {
			t.Errorf("after pushing again with the key: %+v, want signed by %s", row, signer.Fingerprint())
		}
	}
}

// A SHA256SUMS altered after signing refuses its release (exit 1, the
// file and the key's fingerprint named, nothing pushed); a key the policy
// does not pin and --require-signature without a signature refuse too; a
// file push does not know is exit 2 naming it.
func TestPushGoreleaserDistRefused(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	dist, sums := goreleaserDist(t, signer, "alpha", "1.2.3", "linux_amd64", "darwin_arm64")
	key := filepath.Join(t.TempDir(), "acme.asc")
	writeTestFile(t, key, signer.Armor)
	const addr = "registry.opentofu.org/acme/alpha"
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"

	doc, _ := os.ReadFile(sums)
	tampered := strings.Replace(string(doc), string(doc[:8]), "00000000", 1)
	writeTestFile(t, sums, tampered)
	r := run(t, reg, "push", "-p", addr, "--signing-key", key, dist, dst)
	if r.code != 1 || !strings.Contains(r.stderr, sums) || !strings.Contains(r.stderr, signer.Fingerprint()) {
		t.Errorf("push of a tampered SHA256SUMS: %s", r)
	}
	if rows := lsQuiet(t, reg, dst, "-p", addr); len(rows) != 0 {
		t.Errorf("a tampered release landed: %+v", rows)
	}
	writeTestFile(t, sums, string(doc))

	other := backendtest.NewSigner(t, "someone else")
	policy := filepath.Join(t.TempDir(), "trust.hcl")
	writeTestFile(t, policy, "provider \"acme/alpha\" {\n  fingerprints = [\""+other.Fingerprint()+"\"]\n}\n")
	r = run(t, reg, "push", "-p", addr, "--signing-key", key, "--policy", policy, dist, dst)
	if r.code != 1 || !strings.Contains(r.stderr, "pins fingerprint "+other.Fingerprint()) || !strings.Contains(r.stderr, signer.Fingerprint()) {
		t.Errorf("push signed by a key the policy does not pin: %s", r)
	}
	unsigned := []string{"push", "-p", addr, "--require-signature", filepath.Join(dist, "terraform-provider-alpha_1.2.3_linux_amd64.zip"), sums, dst}
	if r := run(t, reg, unsigned...); r.code != 1 || !strings.Contains(r.stderr, "a signature is required") {
		t.Errorf("push --require-signature of an unsigned release: %s", r)
	}
	otherKey := filepath.Join(t.TempDir(), "other.asc")
	writeTestFile(t, otherKey, other.Armor)
	if r := run(t, reg, "push", "-p", addr, "--signing-key", otherKey, dist, dst); r.code != 1 || !strings.Contains(r.stderr, other.Fingerprint()) || !strings.Contains(r.stderr, sums) {
		t.Errorf("push checked with a key that did not sign: %s", r)
	}
	if rows := lsQuiet(t, reg, dst, "-p", addr); len(rows) != 0 {
		t.Errorf("a refused release landed: %+v", rows)
	}

	stray := filepath.Join(dist, "notes.txt")
	writeTestFile(t, stray, "release notes")
	for _, src := range [][]string{{dist}, distGlob(t, dist)} {
		args := append(append([]string{"push", "-p", addr, "--signing-key", key}, src...), dst)
		if r := run(t, reg, args...); r.code != 2 || !strings.Contains(r.stderr, stray) {
			t.Errorf("push of a dist holding %s: %s", stray, r)
		}
	}
	notKey := filepath.Join(t.TempDir(), "key.asc")
	writeTestFile(t, notKey, "not a key")
	if r := run(t, reg, "push", "-p", addr, "--signing-key", notKey, sums, sums+".sig", filepath.Join(dist, "terraform-provider-alpha_1.2.3_linux_amd64.zip"), dst); r.code != 2 || !strings.Contains(r.stderr, notKey) {
		t.Errorf("push with a --signing-key that is no key: %s", r)
	}
}

// lsQuiet is ls --json of what may not be there: no rows when the
// repository does not exist.
func lsQuiet(t *testing.T, reg *ocitest.Registry, args ...string) []lsRow {
	t.Helper()
	r := run(t, reg, append([]string{"ls", "--json"}, args...)...)
	var rows []lsRow
	if strings.TrimSpace(r.stdout) == "" && strings.Contains(r.stderr, "the repository does not exist") {
		return nil // nothing was ever pushed there
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("decoding r.stdout: %v\n%s", err, r.stdout)
	}
	return rows
}

// The publisher's key kept inside dist/ (given to --signing-key, or any
// *.asc or *.id there) does not stop push of the directory: it is named in
// the note of what was not pushed, and the release lands signed.
func TestPushDistHoldingItsKey(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	dist, _ := goreleaserDist(t, signer, "alpha", "1.2.3", "linux_amd64")
	key := filepath.Join(dist, "acme.asc")
	writeTestFile(t, key, signer.Armor)
	writeTestFile(t, filepath.Join(dist, "acme.id"), signer.KeyID()+"\n")
	// The key given to --signing-key, whatever its name.
	pub := filepath.Join(dist, "release-key.pub")
	writeTestFile(t, pub, signer.Armor)
	const addr = "registry.opentofu.org/acme/alpha"
	for i, src := range [][]string{{dist}, distGlob(t, dist)} {
		dst := "oci://" + reg.Host() + []string{"/dir", "/glob"}[i] + "/${namespace}/${type}"
		r := run(t, reg, append(append([]string{"push", "-p", addr, "--signing-key", pub}, src...), dst)...)
		if r.code != 0 || !strings.Contains(r.stderr, "acme.asc") || !strings.Contains(r.stderr, "acme.id") || !strings.Contains(r.stderr, "release-key.pub") {
			t.Fatalf("push %v with its key inside: %s", src, r)
		}
		for _, row := range verifyJSON(t, reg, dst, "-p", addr) {
			if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != signer.Fingerprint() {
				t.Errorf("%s: %+v, want signed by %s", dst, row, signer.Fingerprint())
			}
		}
	}
}

// With --signing-key, a zip that no checked signature covers (an extra
// version left in dist/ with its own SHA256SUMS and no .sig, or no
// SHA256SUMS at all) refuses the push, naming it, and nothing lands
// (issue 31 item 6).
func TestPushSigningKeyRefusesAnUnsignedZip(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	dist, _ := goreleaserDist(t, signer, "alpha", "1.2.3", "linux_amd64")
	key := filepath.Join(t.TempDir(), "acme.asc")
	writeTestFile(t, key, signer.Armor)
	const addr = "registry.opentofu.org/acme/alpha"
	extra := releaseZip(t, dist, "alpha", "9.9.9", "linux_amd64", "unsigned")
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	for _, withSums := range []bool{false, true} {
		if withSums {
			writeSums(t, dist, "terraform-provider-alpha_9.9.9_SHA256SUMS", []string{extra}, nil)
		}
		for _, src := range [][]string{{dist}, distGlob(t, dist)} {
			r := run(t, reg, append(append([]string{"push", "-p", addr, "--signing-key", key}, src...), dst)...)
			if r.code != 1 || !strings.Contains(r.stderr, extra) || !strings.Contains(r.stderr, "no signature") {
				t.Errorf("push of a dist with an unsigned 9.9.9 (SHA256SUMS %v): %s", withSums, r)
			}
		}
	}
	if rows := lsQuiet(t, reg, dst, "-p", addr); len(rows) != 0 {
		t.Errorf("pushed with an unsigned zip among the signed: %+v", rows)
	}
	// Without a key the same dist goes up as before (with a note that the
	// .sig is not checked).
	if r := run(t, reg, "push", "-p", addr, dist, dst); r.code != 0 {
		t.Errorf("push without a key: %s", r)
	}
}

// A release directory opens as a read-only place wherever a place is
// accepted, named by -p HOST/NAMESPACE/TYPE (refused, exit 2, without it)
// and checked with --signing-key as push checks it: ls lists its
// platforms, verify names the signer, sync copies it into an OCI mirror
// with its provenance, and a key that did not sign refuses it.
func TestReleaseDirectoryAsAPlace(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	dist, _ := goreleaserDist(t, signer, "alpha", "1.2.3", "linux_amd64", "darwin_arm64")
	key := filepath.Join(dist, "acme.asc")
	writeTestFile(t, key, signer.Armor)
	const addr = "registry.opentofu.org/acme/alpha"

	r := run(t, reg, "ls", dist)
	if r.code != 2 || !strings.Contains(r.stderr, dist+" is a release directory") || !strings.Contains(r.stderr, "-p HOST/NAMESPACE/TYPE") {
		t.Errorf("ls of a release directory without -p: %s", r)
	}
	r = run(t, reg, "ls", dist, "-p", "acme/alpha")
	if r.code != 2 || !strings.Contains(r.stderr, "HOSTNAME/acme/alpha") {
		t.Errorf("ls of a release directory with a bare NAMESPACE/TYPE: %s", r)
	}
	rows := lsJSON(t, reg, dist, "-p", addr, "--signing-key", key)
	if len(rows) != 2 || rows[0].Provider != addr || rows[0].Version != "1.2.3" {
		t.Errorf("ls of the release directory: %+v", rows)
	}
	for _, row := range verifyJSON(t, reg, dist, "-p", addr, "--signing-key", key) {
		if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != signer.Fingerprint() {
			t.Errorf("verify of the release directory: %+v, want ok and signed by %s", row, signer.Fingerprint())
		}
	}
	dst := "oci://" + reg.Host() + "/rel/${namespace}/${type}"
	if r := run(t, reg, "sync", dist, dst, "-p", addr, "--signing-key", key); r.code != 0 {
		t.Fatalf("sync of the release directory: %s", r)
	}
	for _, row := range verifyJSON(t, reg, dst, "-p", addr) {
		if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != signer.Fingerprint() {
			t.Errorf("verify of the mirror synced from the release directory: %+v", row)
		}
	}
	other := backendtest.NewSigner(t, "someone else")
	otherKey := filepath.Join(t.TempDir(), "other.asc")
	writeTestFile(t, otherKey, other.Armor)
	dst2 := "oci://" + reg.Host() + "/other/${namespace}/${type}"
	if r := run(t, reg, "sync", dist, dst2, "-p", addr, "--signing-key", otherKey); r.code != 1 || !strings.Contains(r.stdout+r.stderr, other.Fingerprint()) {
		t.Errorf("sync of the release directory checked with a key that did not sign it: %s", r)
	}
	if rows := lsQuiet(t, reg, dst2, "-p", addr); len(rows) != 0 {
		t.Errorf("landed with a signature that does not check: %+v", rows)
	}
	if r := run(t, reg, "sync", dst, dist, "-p", addr); r.code != 2 || !strings.Contains(r.stderr, "release directory is read-only") {
		t.Errorf("sync into a release directory: %s", r)
	}
}

// TestReleaseDirIsNotAMirror: release zips and their SHA256SUMS at the top
// make a release directory, unless the directory also has a filesystem
// mirror's HOST/NAMESPACE/TYPE layout; a symbolic link at the first levels
// is not part of that layout, as the clients do not follow it.
func TestReleaseDirIsNotAMirror(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "dist")
	backendtest.NewSeededSigner(t, "acme releases", 5).ReleaseDir(t, dir, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	if !push.IsReleaseDir(ctx, dir) {
		t.Fatalf("%s is not taken for a release directory", dir)
	}
	elsewhere := filepath.Join(t.TempDir(), "acme", "alpha")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(elsewhere), filepath.Join(dir, "example.com")); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	if !push.IsReleaseDir(ctx, dir) {
		t.Errorf("a linked HOST directory made %s a mirror", dir)
	}
	if err := os.Remove(filepath.Join(dir, "example.com")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "example.com", "acme", "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	if push.IsReleaseDir(ctx, dir) {
		t.Errorf("%s has a mirror's layout and is still taken for a release directory", dir)
	}
}
