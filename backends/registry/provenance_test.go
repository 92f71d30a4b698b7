package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// TestProvenance: the registry hands over what authenticated a version
// (SHA256SUMS, signature, the key that made it and where it was listed),
// fetched once with the archives, and it checks on its own.
func TestProvenance(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New(t, alpha())
	r := open(t, srv, nil)
	p := provider(t, srv.Host(), "acme", "alpha")
	pr, err := r.Provenance(ctx, p, version(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if pr.Provider != p.String() || pr.Version != "1.0.0" || pr.Key.ID != srv.KeyID() || pr.Key.Fingerprint != srv.Fingerprint() ||
		pr.Key.ASCIIArmor != srv.PublicKey() || !strings.Contains(pr.Key.Source, "/acme/alpha/1.0.0/download/") {
		t.Fatalf("provenance %+v", pr)
	}
	s, err := pr.Check(provenance.Options{})
	if err != nil || s.Fingerprint != srv.Fingerprint() {
		t.Fatalf("signer %+v, %v", s, err)
	}
	for _, plat := range []string{"darwin_arm64", "linux_amd64"} {
		if err := pr.Authenticate(plat, hashing.Hash("zh:"+srv.SHA256("acme", "alpha", "1.0.0", plat))); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Count(registrytest.KindSums); n != 1 {
		t.Fatalf("SHA256SUMS fetched %d times, want once", n)
	}
	if _, err := r.Archives(ctx, p, version(t, "1.0.0")); err != nil || srv.Count(registrytest.KindSums) != 1 {
		t.Fatalf("Archives after Provenance fetched SHA256SUMS again (%d), %v", srv.Count(registrytest.KindSums), err)
	}
}
