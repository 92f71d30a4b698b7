package push_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// A --signing-key file holding the publisher's private key is refused
// (exit 2, naming it) before anything is pushed: push keeps the key it was
// given in the registry as the version's provenance, for every reader of
// the registry to see.
func TestPushRefusesAPrivateSigningKey(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	dist, _ := goreleaserDist(t, signer, "alpha", "1.2.3", "linux_amd64")
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := signer.Entity.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "secret.asc")
	writeTestFile(t, key, b.String())
	const addr = "registry.opentofu.org/acme/alpha"
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	r := run(t, reg, "push", "-p", addr, "--signing-key", key, dist, dst)
	if r.code != 2 || !strings.Contains(r.stderr, key) || !strings.Contains(r.stderr, "private key") {
		t.Errorf("push with a private key as --signing-key: %s", r)
	}
	if rows := lsQuiet(t, reg, dst, "-p", addr); len(rows) != 0 {
		t.Errorf("pushed with a private key: %+v", rows)
	}
}

// A SHA256SUMS stating the zh: of a zip the registry already holds (the
// release before, say) for a zip that is another: the blob is there, so
// nothing would be uploaded for the registry to check, yet the new
// version must not end up naming the old zip. Exit 1, the integrity error
// naming the zip and both hashes, nothing listed for the version.
func TestPushStatedZHOfABlobTheRegistryHolds(t *testing.T) {
	reg := ocitest.New(t)
	const addr = "registry.opentofu.org/acme/alpha"
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	old := releaseZip(t, t.TempDir(), "alpha", "1.0.0", "linux_amd64", "")
	if r := run(t, reg, "push", "-p", addr, old, dst); r.code != 0 {
		t.Fatalf("push of 1.0.0: %s", r)
	}
	dist := t.TempDir()
	next := releaseZip(t, dist, "alpha", "2.0.0", "linux_amd64", "")
	oldSums, _ := hashing.HashPath(old, hashing.Options{})
	nextSums, _ := hashing.HashPath(next, hashing.Options{})
	sums := writeSums(t, dist, "terraform-provider-alpha_2.0.0_SHA256SUMS", []string{next}, map[string]string{filepath.Base(next): oldSums.ZH.Value()})
	r := run(t, reg, "push", "-p", addr, next, sums, dst)
	if r.code != 1 {
		t.Errorf("push of a zip stated as another the registry holds: %s", r)
	}
	for _, want := range []string{"integrity", next, string(oldSums.ZH), string(nextSums.ZH)} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error lacks %q:\n%s", want, r)
		}
	}
	for _, row := range lsQuiet(t, reg, dst, "-p", addr) {
		if row.Version == "2.0.0" {
			t.Errorf("2.0.0 landed as %+v (its zip is %s)", row, nextSums.ZH)
		}
	}
}

// SHA256SUMS files as people and tools write them: sha256sum -b's "*"
// before the name, CRLF line ends, a UTF-8 byte order mark. Each states
// the zips it lists, and the push lands them.
func TestPushSHA256SUMSDialects(t *testing.T) {
	reg := ocitest.New(t)
	const addr = "registry.opentofu.org/acme/alpha"
	zip, zh := alphaZip(t, t.TempDir(), "")
	for name, doc := range map[string]string{
		"binary": zh + " *" + filepath.Base(zip) + "\n",
		"crlf":   zh + "  " + filepath.Base(zip) + "\r\n",
		"bom":    "\ufeff" + zh + "  " + filepath.Base(zip) + "\n",
	} {
		p := filepath.Join(t.TempDir(), "terraform-provider-alpha_1.0.0_SHA256SUMS")
		writeTestFile(t, p, doc)
		dst := "oci://" + reg.Host() + "/" + name + "/${namespace}/${type}"
		if r := run(t, reg, "push", "-p", addr, zip, p, dst); r.code != 0 {
			t.Errorf("%s: %s", name, r)
		}
	}
}

// A SHA256SUMS naming one file twice with two sums says nothing usable of
// it (OpenTofu takes the first line, a reader of the file may take the
// last): exit 2 naming the file and the zip, nothing pushed.
func TestPushSHA256SUMSNamingAZipTwice(t *testing.T) {
	reg := ocitest.New(t)
	const addr = "registry.opentofu.org/acme/alpha"
	dist := t.TempDir()
	zip, zh := alphaZip(t, dist, "")
	_, otherZH := alphaZip(t, t.TempDir(), "another")
	p := filepath.Join(dist, "terraform-provider-alpha_1.0.0_SHA256SUMS")
	writeTestFile(t, p, otherZH+"  "+filepath.Base(zip)+"\n"+zh+"  "+filepath.Base(zip)+"\n")
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	r := run(t, reg, "push", "-p", addr, zip, p, dst)
	if r.code != 2 || !strings.Contains(r.stderr, p) || !strings.Contains(r.stderr, filepath.Base(zip)) {
		t.Errorf("push with a SHA256SUMS naming the zip twice: %s", r)
	}
	if rows := lsQuiet(t, reg, dst, "-p", addr); len(rows) != 0 {
		t.Errorf("pushed: %+v", rows)
	}
}

// What is not a regular file in a dist (a named pipe, a link to a device)
// is a usage error naming it: push neither waits on it nor reads it; a
// --signing-key that is a device is refused as what it is, not read.
func TestPushDistWithAPipeOrDevice(t *testing.T) {
	const addr = "registry.opentofu.org/acme/alpha"
	for _, kind := range []string{"fifo", "device"} {
		t.Run(kind, func(t *testing.T) {
			dist := t.TempDir()
			zip := releaseZip(t, dist, "alpha", "1.0.0", "linux_amd64", "")
			writeSums(t, dist, "terraform-provider-alpha_1.0.0_SHA256SUMS", []string{zip}, nil)
			var odd string
			switch kind {
			case "fifo":
				odd = filepath.Join(dist, "notes")
				if err := syscall.Mkfifo(odd, 0o644); err != nil {
					t.Skip(err)
				}
			case "device":
				odd = filepath.Join(dist, "terraform-provider-alpha_1.0.0_SHA256SUMS")
				os.Remove(odd)
				if err := os.Symlink("/dev/zero", odd); err != nil {
					t.Skip(err)
				}
			}
			for _, src := range [][]string{{dist}, distGlob(t, dist)} {
				args := append(append([]string{"push", "-p", addr}, src...), "oci://localhost:1/p/${namespace}/${type}")
				if r := run(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, odd) {
					t.Errorf("push %v: %s", src, r)
				}
			}
			if kind == "device" {
				// A key that is a device is not read at all.
				os.Remove(odd)
				writeSums(t, dist, "terraform-provider-alpha_1.0.0_SHA256SUMS", []string{zip}, nil)
				writeTestFile(t, odd+".sig", "a signature")
				key := filepath.Join(t.TempDir(), "key.asc")
				if err := os.Symlink("/dev/zero", key); err != nil {
					t.Fatal(err)
				}
				args := []string{"push", "-p", addr, "--signing-key", key, dist, "oci://localhost:1/p/${namespace}/${type}"}
				if r := run(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, key) || !strings.Contains(r.stderr, "is a character device, not a regular file") {
					t.Errorf("push --signing-key %s: %s", key, r)
				}
			}
		})
	}
}

// One signed SHA256SUMS for the zips of two providers (a release of
// several, or a hand-made one): each zip is checked against its own line,
// and both land signed (each failed before, checked against both lines).
func TestPushOneSignedSHA256SUMSForTwoProviders(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	key := filepath.Join(t.TempDir(), "acme.asc")
	writeTestFile(t, key, signer.Armor)
	dir := t.TempDir()
	alpha := releaseZip(t, dir, "alpha", "1.0.0", "linux_amd64", "")
	beta := releaseZip(t, dir, "beta", "1.0.0", "linux_amd64", "")
	sums := writeSums(t, dir, "SHA256SUMS", []string{alpha, beta}, nil)
	doc, _ := os.ReadFile(sums)
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, signer.Entity, bytes.NewReader(doc), nil); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, sums+".sig", sig.String())
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	args := []string{"push", "-p", "registry.opentofu.org/acme/alpha", "-p", "registry.opentofu.org/acme/beta", "--signing-key", key, alpha, beta, sums, sums + ".sig", dst}
	if r := run(t, reg, args...); r.code != 0 {
		t.Fatalf("push: %s", r)
	}
	for _, p := range []string{"registry.opentofu.org/acme/alpha", "registry.opentofu.org/acme/beta"} {
		for _, row := range verifyJSON(t, reg, dst, "-p", p) {
			if row.Status != "ok" || row.Signer == nil || row.Signer.Fingerprint != signer.Fingerprint() {
				t.Errorf("verify %s: %+v, want ok and signed by %s", p, row, signer.Fingerprint())
			}
		}
	}
}

// A signed SHA256SUMS of another version than the zips given beside it
// (the release before, picked by a glob): exit 2 naming it; it pushed
// them unsigned with no word said, exit 0, though --signing-key was given.
func TestPushSHA256SUMSOfAnotherVersion(t *testing.T) {
	reg := ocitest.New(t)
	signer := backendtest.NewSigner(t, "acme releases")
	key := filepath.Join(t.TempDir(), "acme.asc")
	writeTestFile(t, key, signer.Armor)
	_, sums := goreleaserDist(t, signer, "alpha", "1.2.3", "linux_amd64")
	zip := releaseZip(t, t.TempDir(), "alpha", "1.2.4", "linux_amd64", "")
	const addr = "registry.opentofu.org/acme/alpha"
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	if r := run(t, reg, "push", "-p", addr, "--signing-key", key, zip, sums, sums+".sig", dst); r.code != 2 || !strings.Contains(r.stderr, sums) {
		t.Errorf("push of 1.2.4 beside the SHA256SUMS of 1.2.3: %s", r)
	}
	if rows := lsQuiet(t, reg, dst, "-p", addr); len(rows) != 0 {
		t.Errorf("pushed: %+v", rows)
	}
}

// A signature made with a key that has expired since is accepted, as
// OpenTofu accepts it, with a note saying so (none was given).
func TestPushSignedWithAnExpiredKey(t *testing.T) {
	reg := ocitest.New(t)
	made := time.Now().Add(-2 * time.Hour)
	e, err := openpgp.NewEntity("acme releases", "", "", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Curve: packet.Curve25519,
		Time: func() time.Time { return made }, KeyLifetimeSecs: 3600})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := registrytest.ArmoredPublicKey(e)
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "acme.asc")
	writeTestFile(t, key, pub)
	dir := t.TempDir()
	zip := releaseZip(t, dir, "alpha", "3.0.0", "linux_amd64", "")
	sums := writeSums(t, dir, "terraform-provider-alpha_3.0.0_SHA256SUMS", []string{zip}, nil)
	doc, _ := os.ReadFile(sums)
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, e, bytes.NewReader(doc), &packet.Config{Time: func() time.Time { return made.Add(time.Minute) }}); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, sums+".sig", sig.String())
	r := run(t, reg, "push", "-p", "registry.opentofu.org/acme/alpha", "--signing-key", key, dir, "oci://"+reg.Host()+"/p/${namespace}/${type}")
	if r.code != 0 || !strings.Contains(r.stderr, "note: "+sums+": signature by") || !strings.Contains(r.stderr, "expired") {
		t.Errorf("push signed with an expired key: %s", r)
	}
}

// A SHA256SUMS made with `sha256sum dist/*.zip` names each zip with its
// directory: push says so and how to make one naming the zips alone,
// rather than that the zip is not listed; nothing is pushed.
func TestPushSHA256SUMSNamingZipsWithAPath(t *testing.T) {
	reg := ocitest.New(t)
	const addr = "registry.opentofu.org/acme/alpha"
	zip, zh := alphaZip(t, t.TempDir(), "")
	p := filepath.Join(t.TempDir(), "terraform-provider-alpha_1.0.0_SHA256SUMS")
	writeTestFile(t, p, zh+"  dist/"+filepath.Base(zip)+"\n")
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	r := run(t, reg, "push", "-p", addr, zip, p, dst)
	if r.code == 0 || !strings.Contains(r.stderr, "dist/"+filepath.Base(zip)) || !strings.Contains(r.stderr, "sha256sum *.zip") {
		t.Errorf("push with a SHA256SUMS naming the zip with a path: %s", r)
	}
	if rows := lsQuiet(t, reg, dst, "-p", addr); len(rows) != 0 {
		t.Errorf("pushed: %+v", rows)
	}
}

// alphaZip writes alpha 1.0.0's linux_amd64 release zip into dir and
// returns its path and the hex SHA-256 a SHA256SUMS states for it.
func alphaZip(t *testing.T, dir, salt string) (path, zh string) {
	t.Helper()
	path = releaseZip(t, dir, "alpha", "1.0.0", "linux_amd64", salt)
	sums, err := hashing.HashPath(path, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return path, sums.ZH.Value()
}
