package push_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
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
	w.Close()
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
