package cli

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/bundle"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/test/killtest"
)

// The air gap end to end: a mirror exported into a bundle (twice: the same
// bytes), the bundle imported into a filesystem mirror and into an OCI
// registry, each verified, Terraform installing from the filesystem mirror
// and OpenTofu from the OCI mirror; a second import lands nothing new.
func TestBundleAirGapRoundTrip(t *testing.T) {
	here := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, []string{"1.0.0", "2.0.0"}, []string{here, "windows_amd64"}))
	out := t.TempDir()
	b1, b2 := filepath.Join(out, "one.tar"), filepath.Join(out, "two.tar")
	r := run(t, nil, "export", src, b1)
	if r.code != 0 || !strings.Contains(r.stderr, "8 archives of 4 versions of 2 providers") {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "export", src, b2); r.code != 0 {
		t.Fatalf("export again: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	one, _ := os.ReadFile(b1)
	two, _ := os.ReadFile(b2)
	if !bytes.Equal(one, two) {
		t.Fatalf("the same mirror exported twice made different bundles (%d and %d bytes)", len(one), len(two))
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".*")); len(left) != 0 {
		t.Errorf("export left %v beside the bundle", left)
	}

	fsDst := filepath.Join(t.TempDir(), "mirror")
	r = run(t, nil, "import", b1, fsDst)
	if r.code != 0 || !strings.Contains(r.stderr, "verified 8 archives") || !strings.Contains(r.stderr, "8 synced") {
		t.Fatalf("import into a directory: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "verify", fsDst); r.code != 0 {
		t.Fatalf("verify the imported directory: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "import", b1, fsDst); r.code != 0 || !strings.Contains(r.stderr, "0 synced") || !strings.Contains(r.stderr, "8 already present") {
		t.Errorf("import again: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tf, env := terraformEnv(t, nil, fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", fsDst))
	cfg := t.TempDir()
	writeFile(t, cfg, "main.tf", "terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\", version = \"= 2.0.0\" }\n  }\n}\n")
	if out := runTerraform(t, tf, env, "-chdir="+cfg, "init", "-input=false", "-no-color"); !strings.Contains(out, "Installed example.com/acme/alpha v2.0.0") {
		t.Errorf("terraform init from the imported mirror:\n%s", out)
	}

	// Extracted with tar alone, the bundle is a mirror Terraform installs
	// from without a word about the manifest files.
	if tarBin, err := exec.LookPath("tar"); err == nil {
		extracted := t.TempDir()
		if out, err := exec.Command(tarBin, "-xf", b1, "-C", extracted).CombinedOutput(); err != nil {
			t.Fatalf("tar -xf: %v\n%s", err, out)
		}
		tf, env := terraformEnv(t, nil, fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", extracted))
		cfg := t.TempDir()
		writeFile(t, cfg, "main.tf", "terraform {\n  required_providers {\n    beta = { source = \"example.com/acme/beta\", version = \"= 1.0.0\" }\n  }\n}\n")
		out := runTerraform(t, tf, env, "-chdir="+cfg, "init", "-input=false", "-no-color")
		if !strings.Contains(out, "Installed example.com/acme/beta v1.0.0") || strings.Contains(out, "tfmirror") {
			t.Errorf("terraform init from the extracted bundle:\n%s", out)
		}
	}

	reg := ocitest.New(t)
	tmpl := reg.Host() + "/providers/${hostname}/${namespace}/${type}"
	ociEnv := cleanEnv(t)
	r = run(t, ociEnv, "import", b1, "oci://"+tmpl, "--ca-cert", reg.CAFile())
	if r.code != 0 || !strings.Contains(r.stderr, "8 synced") {
		t.Fatalf("import into OCI: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ociEnv, "verify", "oci://"+tmpl, "--ca-cert", reg.CAFile()); r.code != 0 {
		t.Fatalf("verify the OCI mirror: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tofu := backendtest.Tofu(t, "tofu init from the OCI mirror a bundle was imported into")
	dir := t.TempDir()
	cliCfg := filepath.Join(dir, "cli.tfrc")
	os.WriteFile(cliCfg, []byte(fmt.Sprintf("provider_installation {\n  oci_mirror {\n    repository_template = %q\n    include = [\"example.com/*/*\"]\n  }\n}\n"+
		"oci_default_credentials {\n  discover_ambient_credentials = false\n}\n", tmpl)), 0o644)
	work := t.TempDir()
	writeFile(t, work, "main.tf", "terraform {\n  required_providers {\n    beta = { source = \"example.com/acme/beta\", version = \"= 1.0.0\" }\n  }\n}\n")
	cmd := exec.Command(tofu, "-chdir="+work, "init", "-input=false", "-no-color")
	cmd.Env = append(cleanEnv(t), "TF_CLI_CONFIG_FILE="+cliCfg, "SSL_CERT_FILE="+reg.CAFile(), "SSL_CERT_DIR="+dir, "TF_PLUGIN_CACHE_DIR=", "TF_IN_AUTOMATION=1")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Installed example.com/acme/beta v1.0.0") {
		t.Errorf("tofu init from the OCI mirror: %v\n%s", err, out)
	}
	// OpenTofu too installs from the bundle extracted with tar alone.
	extracted := t.TempDir()
	if out, err := exec.Command("tar", "-xf", b1, "-C", extracted).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf: %v\n%s", err, out)
	}
	os.WriteFile(cliCfg, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", extracted)), 0o644)
	work = t.TempDir()
	writeFile(t, work, "main.tf", "terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\", version = \"= 1.0.0\" }\n  }\n}\n")
	cmd = exec.Command(tofu, "-chdir="+work, "init", "-input=false", "-no-color")
	cmd.Env = append(cleanEnv(t), "TF_CLI_CONFIG_FILE="+cliCfg, "TF_PLUGIN_CACHE_DIR=", "TF_IN_AUTOMATION=1")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Installed example.com/acme/alpha v1.0.0") || strings.Contains(string(out), "tfmirror") {
		t.Errorf("tofu init from the extracted bundle: %v\n%s", err, out)
	}
}

// registryBundle exports acme/alpha 1.0.0 for two platforms from a real
// origin registry into a bundle, with the version's provenance; it returns
// the registry, the bundle and the --ca-cert file.
func registryBundle(t *testing.T) (*registrytest.Server, string, string) {
	t.Helper()
	here := runtime.GOOS + "_" + runtime.GOARCH
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	for _, plat := range []string{here, "windows_amd64"} {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	ca := writeFile(t, t.TempDir(), "ca.pem", string(reg.CertPEM()))
	b := filepath.Join(t.TempDir(), "b.tar")
	r := run(t, nil, "export", "registry://"+reg.Host(), b, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca)
	if r.code != 0 || !strings.Contains(r.stderr, "1 versions with their signed SHA256SUMS") {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return reg, b, ca
}

// Exported straight from an origin registry, a bundle carries the
// version's provenance: import checks the signature and every archive
// against the signed SHA256SUMS, the destinations (a directory, an OCI
// registry) keep the provenance, verify re-checks it there, and Terraform
// installs from the directory.
func TestBundleExportFromRegistryCarriesProvenance(t *testing.T) {
	reg, b, _ := registryBundle(t)
	names, _ := tarEntries(t, b)
	side := reg.Host() + "/acme/alpha/.tfmirror-provenance/1.0.0.json"
	if !contains(names, side) {
		t.Fatalf("the bundle lacks %s: %v", side, names)
	}
	dst := filepath.Join(t.TempDir(), "mirror")
	r := run(t, nil, "import", b, dst)
	if r.code != 0 || !strings.Contains(r.stderr, "2 match their signed SHA256SUMS (key "+reg.KeyID()) {
		t.Fatalf("import: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dst, filepath.FromSlash(side))); err != nil {
		t.Errorf("the imported mirror lacks the provenance: %v", err)
	}
	if r := run(t, nil, "verify", dst); r.code != 0 || !strings.Contains(r.stdout, reg.KeyID()) {
		t.Errorf("verify the imported mirror: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	regOCI := ocitest.New(t)
	oci := "oci://" + regOCI.Host() + "/providers/${namespace}/${type}"
	if r := run(t, cleanEnv(t), "import", b, oci, "--ca-cert", regOCI.CAFile()); r.code != 0 {
		t.Fatalf("import into OCI: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, cleanEnv(t), "verify", oci, "-p", reg.Host()+"/acme/alpha", "--ca-cert", regOCI.CAFile()); r.code != 0 || !strings.Contains(r.stdout, reg.KeyID()) {
		t.Errorf("verify the OCI mirror: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tf, env := terraformEnv(t, nil, fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", dst))
	cfg := t.TempDir()
	addr := reg.Host() + "/acme/alpha"
	writeFile(t, cfg, "main.tf", fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", addr))
	if out := runTerraform(t, tf, env, "-chdir="+cfg, "init", "-input=false", "-no-color"); !strings.Contains(out, "Installed "+addr+" v1.0.0") || strings.Contains(out, "tfmirror") {
		t.Errorf("terraform init:\n%s", out)
	}
}

// A bundle whose archive was replaced by someone who also rewrote the
// manifest, its digest and the index documents to match passes every
// check but one: the signed SHA256SUMS. It is refused, nothing landed.
func TestBundleRewrittenWholesaleCaughtBySignature(t *testing.T) {
	_, b, _ := registryBundle(t)
	names, data := tarEntries(t, b)
	var zip string
	for _, n := range names {
		if strings.HasSuffix(n, "_windows_amd64.zip") {
			zip = n
		}
	}
	old := data[zip]
	data[zip] = registrytest.Tamper(old)
	oldSums, newSums := fileSums(t, old), fileSums(t, data[zip])
	for _, n := range names {
		if n != zip {
			data[n] = bytes.ReplaceAll(bytes.ReplaceAll(data[n], []byte(oldSums.ZH.Value()), []byte(newSums.ZH.Value())), []byte(oldSums.H1), []byte(newSums.H1))
		}
	}
	rewriteManifest(t, data)
	forged := filepath.Join(t.TempDir(), "forged.tar")
	writeTar(t, forged, names, data)
	dst := filepath.Join(t.TempDir(), "mirror")
	r := run(t, nil, "import", forged, dst)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "signed SHA256SUMS") || !strings.Contains(r.stderr, "nothing was imported") {
		t.Fatalf("import of a rewritten bundle: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("import created %s", dst)
	}
}

// The trust policy applies to a bundle before anything lands: a key the
// policy does not pin for the provider is refused, naming both keys; with
// --require-signature a bundle without provenance is refused.
func TestBundleImportTrustPolicy(t *testing.T) {
	reg, b, _ := registryBundle(t)
	other := "0123456789ABCDEF0123456789ABCDEF01234567"
	policy := writeFile(t, t.TempDir(), "trust.hcl", fmt.Sprintf("provider %q {\n  fingerprints = [%q]\n}\n", reg.Host()+"/acme/alpha", other))
	dst := filepath.Join(t.TempDir(), "mirror")
	r := run(t, nil, "import", b, dst, "--policy", policy)
	if r.code != 1 || !strings.Contains(r.stdout, reg.Fingerprint()) || !strings.Contains(r.stdout, other) || !strings.Contains(r.stderr, "nothing was imported") {
		t.Fatalf("import with a policy pinning another key: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("a refused import created %s", dst)
	}
	pinned := writeFile(t, t.TempDir(), "trust.hcl", fmt.Sprintf("provider %q {\n  fingerprints = [%q]\n}\n", "acme/alpha", reg.Fingerprint()))
	if r := run(t, nil, "import", b, dst, "--policy", pinned, "--require-signature"); r.code != 0 {
		t.Fatalf("import with the signer pinned: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/beta"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	unsigned := filepath.Join(t.TempDir(), "unsigned.tar")
	if r := run(t, nil, "export", src, unsigned); r.code != 0 {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dst2 := filepath.Join(t.TempDir(), "mirror")
	r = run(t, nil, "import", unsigned, dst2, "--require-signature")
	if r.code != 1 || !strings.Contains(r.stdout, "no valid signature") {
		t.Fatalf("import of an unsigned bundle with --require-signature: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(dst2); err == nil {
		t.Errorf("a refused import created %s", dst2)
	}
}

func fileSums(t *testing.T, zb []byte) hashing.Sums {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.zip")
	os.WriteFile(p, zb, 0o644)
	s, err := hashing.HashPath(p, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rewriteManifest makes the manifest's file list and its digest match the
// entries, as a forger would.
func rewriteManifest(t *testing.T, data map[string][]byte) {
	t.Helper()
	var m bundle.Manifest
	if err := json.Unmarshal(data[bundle.ManifestName], &m); err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Files {
		sum := sha256.Sum256(data[f.Path])
		m.Files[i].Size, m.Files[i].SHA256 = int64(len(data[f.Path])), hex.EncodeToString(sum[:])
	}
	for i, p := range m.Packages {
		m.Packages[i].Size = int64(len(data[p.Path]))
	}
	raw, _ := json.MarshalIndent(m, "", "  ")
	data[bundle.ManifestName] = raw
	data[bundle.TrailerName] = []byte(fmt.Sprintf("%x  %s\n", sha256.Sum256(raw), bundle.ManifestName))
}

// tarEntries reads a tar's entries in order, with their bytes.
func tarEntries(t *testing.T, path string) ([]string, map[string][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := map[string][]byte{}
	var names []string
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names, data
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		data[hdr.Name], _ = io.ReadAll(tr)
	}
}

func writeTar(t *testing.T, path string, names []string, data map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Size: int64(len(data[n])), Mode: 0o644})
		tw.Write(data[n])
	}
	tw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A bundle with one archive's bytes changed, one cut short and one whose
// manifest was edited are refused, each saying what is wrong, and land
// nothing: the directory is not even created, the OCI registry receives no
// blob.
func TestBundleTamperedOrTruncatedLandsNothing(t *testing.T) {
	dir, good := goodBundle(t)
	names, data := tarEntries(t, good)
	raw, _ := os.ReadFile(good)

	tampered := filepath.Join(dir, "tampered.tar")
	zip := "example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip"
	d := map[string][]byte{}
	for k, v := range data {
		d[k] = append([]byte(nil), v...)
	}
	d[zip][len(d[zip])/2] ^= 1
	writeTar(t, tampered, names, d)

	truncated := filepath.Join(dir, "truncated.tar")
	os.WriteFile(truncated, raw[:len(raw)*2/3], 0o644)

	edited := filepath.Join(dir, "edited.tar")
	d2 := map[string][]byte{}
	for k, v := range data {
		d2[k] = v
	}
	d2[".tfmirror-bundle.json"] = bytes.Replace(data[".tfmirror-bundle.json"], []byte(`"size": `), []byte(`"size":  `), 1)
	writeTar(t, edited, names, d2)

	reg := ocitest.New(t)
	oci := "oci://" + reg.Host() + "/providers/${hostname}/${namespace}/${type}"
	for _, c := range []struct {
		bundle string
		want   []string
	}{
		{tampered, []string{"mismatch", zip, "refused", "nothing was imported"}},
		{truncated, []string{"truncated", "nothing in it is used"}},
		{edited, []string{"the manifest's SHA-256", "nothing in it is used"}},
	} {
		for _, dst := range []string{filepath.Join(t.TempDir(), "mirror"), oci} {
			r := run(t, cleanEnv(t), "import", c.bundle, dst, "--ca-cert", reg.CAFile())
			if r.code != 1 {
				t.Errorf("import %s into %s: exit %d, want 1\n%s%s", filepath.Base(c.bundle), dst, r.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout+r.stderr, w) {
					t.Errorf("import %s into %s does not say %q:\n%s%s", filepath.Base(c.bundle), dst, w, r.stdout, r.stderr)
				}
			}
			if _, err := os.Stat(dst); err == nil {
				t.Errorf("import %s created %s", filepath.Base(c.bundle), dst)
			}
		}
	}
	if n := reg.BlobUploads(); n != 0 {
		t.Errorf("the OCI registry received %d blob uploads from refused bundles", n)
	}
}

// An import killed once its first archive has landed leaves a destination
// that verifies, and run again it lands the rest, not what is there.
func TestBundleInterruptedImportResumes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, []string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "darwin_arm64", "windows_amd64"})
	for i := range seeds {
		body := make([]byte, 512<<10) // incompressible: each archive takes a while
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		seeds[i].Zip = backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-" + seeds[i].Package.Provider.Type, Body: body})
	}
	src := sourceMirror(t, seeds)
	b := filepath.Join(t.TempDir(), "b.tar")
	if r := run(t, nil, "export", src, b); r.code != 0 {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dst := filepath.Join(t.TempDir(), "mirror")
	// The kill comes once the first archive has landed.
	killtest.Kills{
		Start: func(t *testing.T, _ int) *exec.Cmd { return exec.Command(tfmirrorBin, "import", b, dst, "--jobs", "1") },
		Ready: func(t *testing.T, k *killtest.Kill) {
			deadline := time.Now().Add(time.Minute) // a bound for a loaded machine
			for {
				if landed, _ := filepath.Glob(filepath.Join(dst, "example.com", "acme", "*", "*.zip")); len(landed) > 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("no archive landed within a minute")
				}
				select {
				case <-k.Exited:
					t.Fatal("the import ended before it could be interrupted")
				case <-time.After(2 * time.Millisecond):
				}
			}
		},
		N: 1, MaxAttempts: 1,
	}.Run(t)
	landed, _ := filepath.Glob(filepath.Join(dst, "example.com", "acme", "*", "*.zip"))
	if len(landed) == 0 || len(landed) == len(seeds) {
		t.Fatalf("%d of %d archives landed before the kill", len(landed), len(seeds))
	}
	r := run(t, nil, "import", b, dst)
	if r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("%d synced", len(seeds)-len(landed))) || !strings.Contains(r.stderr, fmt.Sprintf("%d already present", len(landed))) {
		t.Fatalf("import again after %d landed: %d\n%s%s", len(landed), r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "verify", dst); r.code != 0 {
		t.Fatalf("verify: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The UI opens a bundle as a read-only place beside a mirror and compares
// them.
func TestBundleInTheUI(t *testing.T) {
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64"}))
	b := filepath.Join(t.TempDir(), "b.tar")
	if r := run(t, nil, "export", src, b); r.code != 0 {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	half := filepath.Join(t.TempDir(), "half")
	if r := run(t, nil, "import", b, half, "-v", "1.0.0"); r.code != 0 {
		t.Fatalf("import: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	s := newTmux(t, 120, 30, []string{"NO_COLOR=1", "HOME=" + t.TempDir()}, "ui", b, half)
	s.waitFor("acme/alpha", "(bundle)", "(fs)")
	s.keys("q")
	s.waitGone()
}

// export --spec bundles what the spec wants (its versions and platforms)
// from its source, or from SRC when one is given; a want that cannot be
// had writes no bundle.
func TestBundleExportSpec(t *testing.T) {
	upstream := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/gamma"},
		[]string{"1.0.0", "1.1.0", "1.2.0"}, []string{"linux_amd64", "darwin_arm64"}))
	specFile := specMirror(t, t.TempDir(), filepath.Join(t.TempDir(), "unused"), upstream)
	out := t.TempDir()
	b := filepath.Join(out, "spec.tar")
	r := run(t, nil, "export", b, "--spec", specFile)
	if r.code != 0 || !strings.Contains(r.stderr, "5 archives of 5 versions of 2 providers") {
		t.Fatalf("export --spec: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dst := filepath.Join(t.TempDir(), "mirror")
	if r := run(t, nil, "import", b, dst); r.code != 0 {
		t.Fatalf("import: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := "example.com/acme/alpha 1.1.0 linux_amd64\nexample.com/acme/alpha 1.2.0 linux_amd64\nexample.com/acme/gamma 1.0.0 linux_amd64\nexample.com/acme/gamma 1.1.0 linux_amd64\nexample.com/acme/gamma 1.2.0 linux_amd64"
	if got := strings.Join(held(t, dst), "\n"); got != want {
		t.Errorf("the bundle of the spec holds\n%s\nwant\n%s", got, want)
	}

	// SRC instead of the spec's source: one lacking gamma writes nothing.
	partial := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.2.0"}, []string{"linux_amd64"}))
	nothing := filepath.Join(out, "partial.tar")
	r = run(t, nil, "export", partial, nothing, "--spec", specFile)
	if r.code != 1 || !strings.Contains(r.stderr, "not written") {
		t.Fatalf("export --spec from a source lacking a want: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(nothing); err == nil {
		t.Errorf("a bundle was written though a want could not be had")
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".*")); len(left) != 0 {
		t.Errorf("export left %v", left)
	}
}

// A bundle lands in object storage as in any writable place, its
// provenance with it: verified there (naming the signer), and a second
// import moves nothing.
func TestBundleImportIntoS3(t *testing.T) {
	reg, b, _ := registryBundle(t)
	w := newS3World(t)
	dst := w.place("tf/providers")
	if r := w.must(t, "import", b, dst); !strings.Contains(r.stderr, "2 synced") {
		t.Errorf("import into the bucket:\n%s%s", r.stdout, r.stderr)
	}
	if r := w.must(t, "verify", dst); !strings.Contains(r.stdout, reg.KeyID()) {
		t.Errorf("verify the bucket does not name the signer:\n%s%s", r.stdout, r.stderr)
	}
	if r := w.must(t, "import", b, dst); !strings.Contains(r.stderr, "2 already present") {
		t.Errorf("import again:\n%s%s", r.stdout, r.stderr)
	}
}

// TestBundleExportTrustPolicy: export takes --policy and --require-signature
// as sync and import do, with the same messages: a version signed by a key
// the policy does not pin, or without a valid signature where one is
// required, is not exported and no bundle is written (exit 1); a policy
// pinning a key ID is a usage error naming its line; the signer pinned, the
// bundle is written.
func TestBundleExportTrustPolicy(t *testing.T) {
	reg, _ := hereRegistry(t)
	ca := caFile(t, reg.CertPEM())
	dir := t.TempDir()
	policy := writeFile(t, dir, "trust.hcl", fmt.Sprintf("provider %q {\n  fingerprints = [%q]\n}\n", "acme/*", reg.OtherFingerprint()))
	b := filepath.Join(dir, "providers.tar")
	from := []string{"registry://" + reg.Host(), "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca, "--policy", policy}
	s := run(t, nil, append([]string{"sync", from[0], filepath.Join(dir, "mirror")}, from[1:]...)...)
	r := run(t, nil, append([]string{"export", from[0], b}, from[1:]...)...)
	refusal := regexp.MustCompile(`(?m)^.*pins fingerprint.*$`).FindString(s.stdout + s.stderr)
	if r.code != 1 || refusal == "" || !strings.Contains(r.stdout+r.stderr, refusal) || !strings.Contains(r.stderr, "not written") {
		t.Fatalf("export with an unpinned key: exit %d, want 1 and sync's refusal %q\n%s%s", r.code, refusal, r.stdout, r.stderr)
	}
	if _, err := os.Stat(b); err == nil {
		t.Fatalf("a refused export wrote %s", b)
	}
	bad := writeFile(t, dir, "bad.hcl", "provider \"acme/*\" {\n  fingerprints = [\"1234ABCD1234ABCD\"]\n}\n")
	if r := run(t, nil, "export", from[0], b, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca, "--policy", bad); r.code != 2 || !strings.Contains(r.stderr, "bad.hcl:2") {
		t.Fatalf("export with a policy pinning a key ID: exit %d\n%s", r.code, r.stderr)
	}
	pinned := writeFile(t, dir, "pinned.hcl", fmt.Sprintf("provider %q {\n  fingerprints = [%q]\n}\n", "acme/*", reg.Fingerprint()))
	if r := run(t, nil, "export", from[0], b, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca, "--policy", pinned, "--require-signature"); r.code != 0 {
		t.Fatalf("export with the signer pinned: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("export with the signer pinned wrote no bundle: %v", err)
	}

	unsigned, _ := fsMirror(t)
	b2 := filepath.Join(dir, "unsigned.tar")
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"export", unsigned, b2, "-p", "example.com/acme/alpha", "--require-signature"}},
		{[]string{"OPENTOFU_ENFORCE_GPG_VALIDATION=true"}, []string{"export", unsigned, b2, "-p", "example.com/acme/alpha"}},
	} {
		r := run(t, c.env, c.args...)
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "no valid signature, and a signature is required") {
			t.Errorf("%v %v from a source without provenance: exit %d\n%s%s", c.env, c.args, r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(b2); err == nil {
			t.Fatalf("%v: an unsigned bundle was written", c.args)
		}
	}
}
