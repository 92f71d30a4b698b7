package backendtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
)

// presigner: a URL a place presigns for an archive it holds serves that
// archive's bytes to a plain HTTP client, with no credentials of the
// place's; an archive the place does not hold gets ErrNotFound, so the
// server streams (and checks) it itself.
func presigner(t *testing.T, pl Place) {
	if pl.HTTPClient == nil {
		t.Fatal("backendtest: a Presigner's Place needs HTTPClient, a client trusting the place's endpoint")
	}
	ctx := context.Background()
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	ps := r.(backends.Presigner)
	for _, s := range seeds {
		a := archiveOf(t, r, s)
		url, err := ps.PresignArchive(ctx, a, time.Minute)
		if err != nil {
			t.Fatalf("%s: PresignArchive: %v", a.Package, err)
		}
		resp, err := pl.HTTPClient.Get(url)
		if err != nil {
			t.Fatalf("%s: GET the presigned URL: %v", a.Package, err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close() // read only
		if err != nil || resp.StatusCode != http.StatusOK || string(b) != string(s.Zip) {
			t.Errorf("%s: the presigned URL answered %d with %d bytes (%v), not the zip's %d", a.Package, resp.StatusCode, len(b), err, len(s.Zip))
		}
	}
	absent := archiveOf(t, r, seeds[0])
	absent.Package.Platform = backends.Platform{OS: "plan9", Arch: "arm"}
	absent.Location = ""
	if _, err := ps.PresignArchive(ctx, absent, time.Minute); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("PresignArchive of an archive the place does not hold: %v, want ErrNotFound", err)
	}
}

// archiveOf returns the archive r lists for s's package.
func archiveOf(t *testing.T, r backends.Reader, s Seed) backends.Archive {
	t.Helper()
	as, err := r.Archives(context.Background(), s.Package.Provider, s.Package.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Key() == s.Package.Key() {
			return a
		}
	}
	t.Fatalf("%s: not listed", s.Package)
	return backends.Archive{}
}
