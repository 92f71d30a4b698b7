package sync_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// recorder is a Sink that keeps every event.
type recorder struct {
	mu  gosync.Mutex
	evs []engine.Event
}

func (r *recorder) Show(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

// run plans src into dst and syncs the plan with sync.Sync.
func run(t *testing.T, src backends.Reader, dst backends.Writer, sel sync.Selection, pol *trust.Policy) (*sync.Plan, sync.Summary) {
	t.Helper()
	ctx := context.Background()
	plan, err := sync.MakePlan(ctx, src, dst, sel, sync.PlanOptions{Trust: pol})
	if err != nil {
		t.Fatal(err)
	}
	sum := sync.Sync(ctx, engine.NewEngine(ctx, engine.Options{Backoff: 1}), dst, false, &recorder{}, plan)
	return plan, sum
}

// signedSource is signedRegistry opened as a place to sync from.
func signedSource(t *testing.T) (*registrytest.Server, backends.Reader) {
	t.Helper()
	reg := signedRegistry(t)
	src, err := place.Open(context.Background(), "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return reg, src
}

// signedRegistry serves acme/alpha 1.0.0 for two platforms, signed.
func signedRegistry(t *testing.T) *registrytest.Server {
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	return registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
}

// verifySigned verifies r and wants every archive ok and signed by the
// registry's key.
func verifySigned(t *testing.T, r backends.Reader, sel sync.Selection, reg *registrytest.Server, want int) {
	t.Helper()
	fs, err := sync.VerifyPlaceWith(context.Background(), r, sel, sync.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != want {
		t.Fatalf("%s: verify found %d packages, want %d", r, len(fs), want)
	}
	for _, f := range fs {
		if f.Status != sync.StatusOK || f.Signer == nil || f.Signer.Fingerprint != reg.Fingerprint() || !strings.Contains(f.Detail, "signed SHA256SUMS (key "+reg.KeyID()) {
			t.Errorf("%s: %s %s: %s, signer %+v; want ok, signed by %s", r, f.Package, f.Status, f.Detail, f.Signer, reg.Fingerprint())
		}
	}
}

// TestProvenanceTwoHops: registry -> filesystem -> OCI -> S3 -> filesystem.
// The signed SHA256SUMS, its signature and the key travel with the
// archives, and verify re-checks the signature at every hop; a SHA256SUMS tampered
// with in the middle hop is caught by verify, and nothing is mirrored
// from it.
func TestProvenanceTwoHops(t *testing.T) {
	ctx := context.Background()
	reg, src := signedSource(t)
	addr := reg.Host() + "/acme/alpha"
	sel := mustSelection(t, []string{addr}, "1.0.0")

	hop1 := openFS(t, filepath.Join(t.TempDir(), "hop1"))
	if _, sum := run(t, src, hop1, sel, nil); sum.Done != 2 || !sum.OK() {
		t.Fatalf("registry -> fs: %+v", sum)
	}
	verifySigned(t, hop1, sel, reg, 2)

	oreg := ocitest.New(t)
	r, err := place.Open(ctx, "oci://"+oreg.Host()+"/mirror/${namespace}/${type}", place.Options{CACertFile: oreg.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	hop2 := r.(backends.Writer)
	if _, sum := run(t, hop1, hop2, sel, nil); sum.Done != 2 || !sum.OK() {
		t.Fatalf("fs -> oci: %+v", sum)
	}
	verifySigned(t, hop2, sel, reg, 2)

	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	hopS3, err := s3.Open(ctx, "s3://"+bucket, bucket, srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	if _, sum := run(t, hop2, hopS3, sel, nil); sum.Done != 2 || !sum.OK() {
		t.Fatalf("oci -> s3: %+v", sum)
	}
	verifySigned(t, hopS3, sel, reg, 2)
	if w := hopS3.Warnings(); len(w) > 0 {
		t.Errorf("the bucket's provenance folder drew warnings: %v", w)
	}

	hop3 := openFS(t, filepath.Join(t.TempDir(), "hop3"))
	if _, sum := run(t, hopS3, hop3, sel, nil); sum.Done != 2 || !sum.OK() {
		t.Fatalf("s3 -> fs: %+v", sum)
	}
	verifySigned(t, hop3, sel, reg, 2)

	// Tamper with the signed SHA256SUMS the middle hop keeps, as someone
	// slipping in another zip would: verify names the key it no longer
	// checks with, and a sync from it mirrors nothing.
	side := filepath.Join(hop1.Dir(), filepath.FromSlash(addr), ".tfmirror-provenance", "1.0.0.json")
	tamperSums(t, side)
	fs, err := sync.VerifyPlaceWith(ctx, openFS(t, hop1.Dir()), sel, sync.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Status != sync.StatusMismatch || !strings.Contains(f.Detail, "does not check with key "+reg.KeyID()) {
			t.Errorf("verify after tampering: %s %s: %s", f.Package, f.Status, f.Detail)
		}
	}
	fresh := openFS(t, filepath.Join(t.TempDir(), "fresh"))
	plan, sum := run(t, openFS(t, hop1.Dir()), fresh, sel, nil)
	if sum.Done != 0 || sum.OK() || plan.Count(sync.StatusError) != 2 {
		t.Fatalf("sync from the tampered hop: %d done, plan %v", sum.Done, plan.Findings())
	}
	if !strings.Contains(plan.Items[0].Detail, "not mirrored") || !strings.Contains(plan.Items[0].Detail, reg.KeyID()) {
		t.Fatalf("refusal: %s", plan.Items[0].Detail)
	}
}

// TestPolicyRefusesUnpinnedKey: a version signed by a key the policy does
// not pin for its provider is not mirrored, and the message names both
// keys; the pinned key lets it through.
func TestPolicyRefusesUnpinnedKey(t *testing.T) {
	ctx := context.Background()
	reg, src := signedSource(t)
	sel := mustSelection(t, []string{"acme/alpha"}, "1.0.0")
	policy := func(fp string) *trust.Policy {
		pol, err := trust.Parse([]byte(`provider "acme/*" { fingerprints = ["`+fp+`"] }`), "trust.hcl", nil)
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	dst := openFS(t, filepath.Join(t.TempDir(), "m"))
	plan, sum := run(t, src, dst, sel, policy(reg.OtherFingerprint()))
	if sum.Done != 0 || plan.Count(sync.StatusError) != 2 {
		t.Fatalf("unpinned key: %d done, plan %v", sum.Done, plan.Findings())
	}
	want := "signed by key " + reg.KeyID() + ", fingerprint " + reg.Fingerprint() + ", but trust.hcl:1 pins fingerprint " + reg.OtherFingerprint() + " for acme/*"
	if d := plan.Items[0].Detail; !strings.Contains(d, want) {
		t.Fatalf("refusal %q, want it to say %q", d, want)
	}
	if ps, _ := dst.Providers(ctx); len(ps) != 0 {
		t.Fatalf("something landed: %v", ps)
	}
	if _, sum := run(t, src, dst, sel, policy(reg.Fingerprint())); sum.Done != 2 || !sum.OK() {
		t.Fatalf("pinned key: %+v", sum)
	}
}

// TestRequireSignature: a source without provenance (a hand-made
// filesystem mirror) is refused with require_signature, and mirrored
// without it.
func TestRequireSignature(t *testing.T) {
	w := newWorld(t)
	sel := mustSelection(t, []string{"acme/alpha"}, "1.0.0")
	plan, sum := run(t, w.src, w.dst, sel, &trust.Policy{RequireSignature: true})
	if sum.Done != 0 || plan.Count(sync.StatusError) != 3 || !strings.Contains(plan.Items[0].Detail, "no valid signature, and a signature is required") {
		t.Fatalf("unsigned source with a signature required: %d done, plan %v", sum.Done, plan.Findings())
	}
	if _, sum := run(t, w.src, w.dst, sel, nil); sum.Done != 3 {
		t.Fatalf("unsigned source, nothing required: %+v", sum)
	}
}

func openFS(t *testing.T, dir string) *fs.Mirror {
	t.Helper()
	m, err := fs.Open(dir, dir, fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tamperSums changes the first hex digit of the SHA256SUMS a sidecar holds.
func tamperSums(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var sums []byte
	raw, _ := json.Marshal(doc["shasums"])
	if err := json.Unmarshal(raw, &sums); err != nil {
		t.Fatalf("decoding raw: %v", err)
	}
	if sums[0] == '0' {
		sums[0] = '1'
	} else {
		sums[0] = '0'
	}
	doc["shasums"] = sums
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProvenanceBackfill: a mirror that holds a version whole but not its
// provenance (filled before mirrors kept it) gets it from the next sync,
// which has nothing else to do.
func TestProvenanceBackfill(t *testing.T) {
	reg, src := signedSource(t)
	sel := mustSelection(t, []string{"acme/alpha"}, "1.0.0")
	dst := openFS(t, filepath.Join(t.TempDir(), "m"))
	if _, sum := run(t, src, dst, sel, nil); sum.Done != 2 {
		t.Fatalf("first sync: %+v", sum)
	}
	side := filepath.Join(dst.Dir(), reg.Host(), "acme", "alpha", ".tfmirror-provenance")
	if err := os.RemoveAll(side); err != nil {
		t.Fatal(err)
	}
	plan, sum := run(t, src, dst, sel, nil)
	if sum.Done != 0 || plan.Count(sync.StatusPresent) != 2 || !sum.OK() {
		t.Fatalf("second sync: %+v, plan %v", sum, plan.Findings())
	}
	if _, err := os.Stat(filepath.Join(side, "1.0.0.json")); err != nil {
		t.Fatalf("the no-op sync did not write the provenance the mirror lacked: %v", err)
	}
	verifySigned(t, openFS(t, dst.Dir()), sel, reg, 2)
}

// TestAuthenticateTransfers: transfers a front end chose itself (as the
// terminal UI queues them, each platform in an Enqueue call of its own)
// are checked against the registry's signed SHA256SUMS and land with its
// provenance, written once the batch's index documents list them; from a
// mirror of it whose SHA256SUMS was altered after signing, they fail
// before staging anything, naming the signature, and nothing lands.
func TestAuthenticateTransfers(t *testing.T) {
	ctx := context.Background()
	for _, tampered := range []bool{false, true} {
		reg, opened := signedSource(t)
		var src backends.Reader = opened
		p, _ := backends.ParseProvider(reg.Address("acme", "alpha"))
		v, _ := backends.ParseVersion("1.0.0")
		if tampered {
			// A mirror of the registry whose SHA256SUMS was altered after
			// signing: its listing reads well, its provenance does not check.
			dir := filepath.Join(t.TempDir(), "hop")
			if _, sum := run(t, src, openFS(t, dir), mustSelection(t, []string{p.String()}, "1.0.0"), nil); sum.Done != 2 {
				t.Fatalf("registry -> fs: %+v", sum)
			}
			tamperSums(t, filepath.Join(dir, filepath.FromSlash(p.String()), ".tfmirror-provenance", "1.0.0.json"))
			src = openFS(t, dir)
		}
		as, err := backends.ListArchives(ctx, src, p, []backends.Version{v})
		if err != nil || len(as) != 2 {
			t.Fatalf("listing the registry: %d archives, %v", len(as), err)
		}
		dst := openFS(t, filepath.Join(t.TempDir(), "mirror"))
		eng := engine.NewEngine(ctx, engine.Options{Backoff: 1})
		tr := engine.NewTracker()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ev := range eng.Events() {
				tr.Apply(ev)
			}
		}()
		for _, a := range as {
			eng.Enqueue(sync.AuthenticateTransfers(ctx, []engine.Task{sync.Transfer{Src: src, Dst: dst, Archive: a}}, nil)...)
		}
		eng.Close()
		<-done
		kept, _ := sync.ReadProvenance(ctx, dst, p, v, provenance.Options{})
		if !tampered {
			if c := tr.Counts(); c[engine.Done] != 2 || kept == nil {
				t.Fatalf("jobs %v, provenance kept %v; want 2 done and the registry's provenance", c, kept != nil)
			}
			verifySigned(t, dst, mustSelection(t, []string{p.String()}, "1.0.0"), reg, 2)
			continue
		}
		fails := tr.Failures()
		if len(fails) != 2 || kept != nil {
			t.Fatalf("from a tampered SHA256SUMS: %d failed, provenance kept %v; want both failed, none kept", len(fails), kept != nil)
		}
		for _, j := range fails {
			if j.Err == nil || !strings.Contains(j.Err.Error(), "not mirrored") || !strings.Contains(j.Err.Error(), "signature") {
				t.Errorf("%s: %v; want a refusal naming the signature", j.Info.Package, j.Err)
			}
		}
		if as, _ := backends.ListArchives(ctx, dst, p, []backends.Version{v}); len(as) != 0 {
			t.Errorf("%d archives landed from a tampered SHA256SUMS", len(as))
		}
	}
}
