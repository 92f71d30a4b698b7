package s3_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// countingTransport counts the requests for keys in a provenance folder,
// and for any listing.
type countingTransport struct {
	next        http.RoundTripper
	mu          gosync.Mutex
	provenance  int
	listings    int
	provenances []string
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	switch {
	case req.URL.Query().Has("list-type"):
		c.listings++
	case strings.Contains(req.URL.Path, "/"+provenance.DirName+"/"):
		c.provenance++
		c.provenances = append(c.provenances, req.URL.Path)
	}
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *countingTransport) counts() (prov, lists int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.provenance, c.listings
}

// A version's provenance is read back as written, and a version without
// one is ErrNotFound, found out from the provider's listing rather than
// by a request for each version: one request for the version that has a
// document, none for a provider whose listing shows no provenance folder.
func TestProvenanceOnlyWhereTheListingShowsIt(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the AWS configuration adds a bundle only to its own kind of transport
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	ctx := context.Background()
	w := openStore(t, srv, bucket, "")
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, []string{"1.0.0", "1.1.0", "1.2.0"}, []string{"linux_amd64"})
	for _, s := range seeds {
		if err := commit(t, w, s.Package, s.Zip, false); err != nil {
			t.Fatal(err)
		}
	}
	alpha, beta := seeds[0].Package.Provider, seeds[3].Package.Provider
	for _, p := range []backends.Provider{alpha, beta} {
		if err := w.Flush(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	key := backendtest.NewSigner(t, "acme")
	v100 := seeds[0].Package.Version
	if err := w.WriteProvenance(ctx, alpha, v100, key.Provenance(t, seeds[:1])); err != nil {
		t.Fatal(err)
	}

	rec := &countingTransport{next: srv.HTTPClient().Transport}
	o := srv.Options()
	o.HTTPClient = &http.Client{Transport: rec}
	r, err := s3.Open(ctx, "s3://"+bucket, bucket, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds[:3] {
		pr, err := r.Provenance(ctx, alpha, s.Package.Version)
		if s.Package.Version == v100 {
			if err != nil {
				t.Fatal(err)
			}
			if signer, err := pr.Check(provenance.Options{}); err != nil || signer.Fingerprint != key.Fingerprint() {
				t.Fatalf("read back: signer %+v, %v", signer, err)
			}
			continue
		}
		if !errors.Is(err, backends.ErrNotFound) {
			t.Fatalf("%s %s: %v, want ErrNotFound", alpha, s.Package.Version, err)
		}
	}
	if prov, lists := rec.counts(); prov != 1 || lists != 1 {
		t.Fatalf("alpha's provenance took %d requests for documents and %d listings, want 1 and 1: %v", prov, lists, rec.provenances)
	}
	// Which versions keep one (for providers.v1, ls and the UI): the same
	// listing, reused.
	if kept, err := r.ProvenanceVersions(ctx, alpha); err != nil || len(kept) != 1 || !kept[v100.String()] {
		t.Fatalf("ProvenanceVersions(alpha) = %v, %v; want %s alone", kept, err, v100)
	}
	if _, lists := rec.counts(); lists != 1 {
		t.Fatalf("ProvenanceVersions listed the folder again (%d listings)", lists)
	}

	// beta has none: its listing, made to list its versions, says so.
	vs, err := r.Versions(ctx, beta)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if _, err := r.Provenance(ctx, beta, v); !errors.Is(err, backends.ErrNotFound) {
			t.Fatalf("%s %s: %v, want ErrNotFound", beta, v, err)
		}
	}
	if prov, lists := rec.counts(); prov != 1 || lists != 2 {
		t.Fatalf("beta's provenance took %d requests for documents and %d listings in all, want 1 and 2 (its versions' listing): %v", prov, lists, rec.provenances)
	}

	// A provenance written by the store is read by it at once.
	if err := r.WriteProvenance(ctx, beta, vs[0], key.Provenance(t, seeds[3+len(vs)-1:3+len(vs)])); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Provenance(ctx, beta, vs[0]); err != nil {
		t.Fatalf("the provenance just written: %v", err)
	}
	if kept, err := r.ProvenanceVersions(ctx, beta); err != nil || len(kept) != 1 || !kept[vs[0].String()] {
		t.Fatalf("ProvenanceVersions(beta) = %v, %v; want %s alone", kept, err, vs[0])
	}
}
