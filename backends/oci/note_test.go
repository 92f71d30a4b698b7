package oci_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// A note named after a provider's file (a pull-through's first sightings,
// first-seen/HOST/NAMESPACE/TYPE.json) lives in that provider's repository
// beside its versions, which still list as they were: the note's tags
// (its own and its lock's) are no versions. A name naming no provider is
// refused, saying what a name must be.
func TestNotesLiveBesideTheVersions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	mustPut(ctx, t, m, pkg, providerZip(t, pkg, "a"))
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	const name = "first-seen/example.com/acme/alpha.json"
	for _, note := range []string{`{"1.0.0":"2026-01-01T00:00:00Z"}`, `{"1.0.0":"2026-01-01T00:00:00Z","1.1.0":"2026-02-01T00:00:00Z"}`} {
		if err := m.UpdateNote(ctx, name, func([]byte) ([]byte, error) { return []byte(note), nil }); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	read := errors.New("read only")
	if err := openTest(t, reg, testTemplate).UpdateNote(ctx, name, func(old []byte) ([]byte, error) { got = old; return nil, read }); !errors.Is(err, read) {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "1.1.0") {
		t.Fatalf("another instance reads the note as %q, want the second update", got)
	}
	vs, err := openTest(t, reg, testTemplate).Versions(ctx, pkg.Provider)
	if err != nil || len(vs) != 1 || vs[0].String() != "1.0.0" {
		t.Fatalf("versions beside the note: %v (%v), want 1.0.0 alone", vs, err)
	}
	err = m.UpdateNote(ctx, "first-seen", func(old []byte) ([]byte, error) { return []byte("x"), nil })
	if err == nil || !strings.Contains(err.Error(), "KIND/HOST/NAMESPACE/TYPE") {
		t.Fatalf("a note naming no provider: %v, want the form a name must have", err)
	}
}
