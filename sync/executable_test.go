package sync_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync"
)

// A signed release whose zip holds another provider's executable (google
// signed and served under google-beta's name: one publisher's key signs
// both) is not mirrored, and verify of a mirror keeping such a zip with
// its provenance reports it: every signed archive must hold its own
// provider's executable, as push requires of the zips it is given
// (issue 31 item 5).
func TestSignedArchiveHoldsItsOwnExecutable(t *testing.T) {
	ctx := context.Background()
	host := "example.com"
	beta := backendtest.Pkg(t, host+"/hashicorp/google-beta", "5.0.0", "linux_amd64")
	google := backendtest.Pkg(t, host+"/hashicorp/google", "5.0.0", "linux_amd64")
	wrong := backendtest.ProviderZip(t, google, "") // google's executable

	reg := registrytest.New(t, registrytest.Provider{Namespace: "hashicorp", Type: "google-beta",
		Versions: []registrytest.Version{{Version: "5.0.0", Archives: map[string][]byte{"linux_amd64": wrong}}}})
	src, err := place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	addr := reg.Address("hashicorp", "google-beta")
	sel := mustSelection(t, []string{addr}, "5.0.0")
	dst := openFS(t, filepath.Join(t.TempDir(), "dst"))
	_, sum := run(t, src, dst, sel, nil)
	if sum.Done != 0 || len(sum.Failed) != 1 || !strings.Contains(sum.Failed[0].Err.Error(), "terraform-provider-google-beta") {
		t.Fatalf("sync of google's zip signed as google-beta's: %+v", sum)
	}
	p, _ := backends.ParseProvider(addr)
	if as, _ := backends.ListArchives(ctx, openFS(t, dst.Dir()), p, []backends.Version{beta.Version}); len(as) != 0 {
		t.Errorf("landed: %v", as)
	}

	// A mirror that holds it with a signed SHA256SUMS naming it (written
	// before this check, or by hand): verify reports it.
	dir := filepath.Join(t.TempDir(), "mirror")
	seed := backendtest.Seed{Package: beta, Zip: wrong}
	zipPath := filepath.Join(dir, filepath.FromSlash(beta.Provider.String()), beta.Filename())
	if err := os.MkdirAll(filepath.Dir(zipPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zipPath, wrong, 0o644); err != nil {
		t.Fatal(err)
	}
	m := openFS(t, dir)
	if err := m.WriteProvenance(ctx, beta.Provider, beta.Version, backendtest.NewSigner(t, "hashicorp").Provenance(t, []backendtest.Seed{seed})); err != nil {
		t.Fatal(err)
	}
	found, err := sync.VerifyPlaceWith(ctx, openFS(t, dir), mustSelection(t, []string{beta.Provider.String()}, "5.0.0"), sync.VerifyOptions{})
	if err != nil || len(found) != 1 {
		t.Fatalf("verify: %v, %v", found, err)
	}
	if f := found[0]; f.Status != sync.StatusMismatch || !strings.Contains(f.Detail, "terraform-provider-google-beta") {
		t.Errorf("verify of google's zip kept signed as google-beta's: %s %s", f.Status, f.Detail)
	}
}

// Another provider's signed release is not accepted for this one (issue 31
// item 5): a mirror holds google's signed zip under google-beta's name,
// with google's signed SHA256SUMS kept as google-beta's provenance (the
// sidecar's provider field, which no signature covers, rewritten). verify
// reports every package a mismatch and a sync from it lands nothing.
func TestAnotherProvidersSignedReleaseIsRefused(t *testing.T) {
	ctx := context.Background()
	const host = "registry.terraform.io"
	google := backendtest.Pkg(t, host+"/hashicorp/google", "5.0.0", "linux_amd64")
	beta := backendtest.Pkg(t, host+"/hashicorp/google-beta", "5.0.0", "linux_amd64")
	z := backendtest.ProviderZip(t, google, "")
	doc := backendtest.NewSigner(t, "hashicorp").Provenance(t, []backendtest.Seed{{Package: google, Zip: z}})
	doc.Provider = beta.Provider.String()

	dir := filepath.Join(t.TempDir(), "mirror")
	zipPath := filepath.Join(dir, filepath.FromSlash(beta.Provider.String()), beta.Filename())
	if err := os.MkdirAll(filepath.Dir(zipPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zipPath, z, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := openFS(t, dir).WriteProvenance(ctx, beta.Provider, beta.Version, doc); err != nil {
		t.Fatal(err)
	}
	sel := mustSelection(t, []string{beta.Provider.String()}, "5.0.0")
	found, err := sync.VerifyPlaceWith(ctx, openFS(t, dir), sel, sync.VerifyOptions{})
	if err != nil || len(found) != 1 {
		t.Fatalf("verify: %v, %v", found, err)
	}
	if f := found[0]; f.Status != sync.StatusMismatch || !strings.Contains(f.Detail, "terraform-provider-google-beta_5.0.0_linux_amd64.zip") {
		t.Errorf("verify of google's release kept as google-beta's: %s %s", f.Status, f.Detail)
	}
	dst := openFS(t, filepath.Join(t.TempDir(), "dst"))
	plan, sum := run(t, openFS(t, dir), dst, sel, nil)
	if sum.Done != 0 || plan.Count(sync.StatusError) != 1 {
		t.Errorf("sync of google's release kept as google-beta's: %d done, %v", sum.Done, plan.Findings())
	}
}
