package bundle_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/bundle"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

var (
	testProviders = []string{"example.com/acme/alpha", "example.com/acme/beta"}
	testPlatforms = []string{"linux_amd64", "darwin_arm64"}
)

// staged is a filesystem mirror of seeds with the index documents a sync
// writes (h1: and zh: of every archive).
func staged(t *testing.T, dir string, seeds []backendtest.Seed) *fs.Mirror {
	t.Helper()
	backendtest.WritePacked(t, dir, seeds)
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	flushed := map[backends.Provider]bool{}
	for _, s := range seeds {
		if p := s.Package.Provider; !flushed[p] {
			flushed[p] = true
			if err := m.Flush(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

// written packs seeds into a bundle and returns its path.
func written(t *testing.T, seeds []backendtest.Seed) string {
	t.Helper()
	m := staged(t, t.TempDir(), seeds)
	out := filepath.Join(t.TempDir(), "b.tar")
	if _, err := bundle.Write(context.Background(), m, out, hashing.Options{}); err != nil {
		t.Fatal(err)
	}
	return out
}

func open(t *testing.T, path string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(path, path, bundle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConformance runs the case of every capability a bundle has
// (backendtest.Capabilities) against bundles written by Write.
func TestConformance(t *testing.T) {
	backendtest.Conformance(t, backendtest.Place{Seeded: func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		return open(t, written(t, seeds))
	}, Signed: func(t *testing.T, seeds []backendtest.Seed, signer *backendtest.Signer) backends.Reader {
		m := staged(t, t.TempDir(), seeds)
		for _, sv := range backendtest.Versions(seeds) {
			if err := m.WriteProvenance(context.Background(), sv[0].Package.Provider, sv[0].Package.Version, signer.Provenance(t, sv)); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(t.TempDir(), "b.tar")
		if _, err := bundle.Write(context.Background(), m, out, hashing.Options{}); err != nil {
			t.Fatal(err)
		}
		return open(t, out)
	}})
}

// The same mirror gives the same bytes, whatever the files' times, modes
// and the order they were written in; the tar's entries are the manifest,
// the files sorted by path, the manifest's digest; and extracted with tar
// the bundle is a filesystem mirror with every archive's h1: and zh:.
func TestWriteIsReproducible(t *testing.T) {
	seeds := backendtest.Seeds(t, testProviders, []string{"1.0.0", "1.2.0"}, testPlatforms)
	a := written(t, seeds)
	reversed := append([]backendtest.Seed(nil), seeds...)
	sort.Slice(reversed, func(i, j int) bool { return i > j })
	dir := t.TempDir()
	m := staged(t, dir, reversed)
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			os.Chtimes(p, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
			os.Chmod(p, 0o600)
		}
		return nil
	})
	b := filepath.Join(t.TempDir(), "other.tar")
	if _, err := bundle.Write(context.Background(), m, b, hashing.Options{}); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Fatalf("the same mirror made different bundles (%d and %d bytes)", len(ab), len(bb))
	}

	var names []string
	tr := tar.NewReader(bytes.NewReader(ab))
	extracted := t.TempDir()
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Mode != 0o644 || hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || !hdr.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: mode %o, owner %d:%d %q, time %s", hdr.Name, hdr.Mode, hdr.Uid, hdr.Gid, hdr.Uname, hdr.ModTime)
		}
		names = append(names, hdr.Name)
		p := filepath.Join(extracted, filepath.FromSlash(hdr.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if names[0] != bundle.ManifestName || names[len(names)-1] != bundle.TrailerName || !sort.StringsAreSorted(names[1:len(names)-1]) {
		t.Errorf("entries: %v", names)
	}
	em, err := fs.Open(extracted, extracted, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range testProviders {
		pr, _ := backends.ParseProvider(p)
		as, err := em.AllArchives(context.Background(), pr)
		if err != nil || len(as) != 4 {
			t.Fatalf("%s in the extracted bundle: %d archives, %v", p, len(as), err)
		}
		for _, a := range as {
			// zh: always (what the bundle's staging sync verified); h1:
			// only where some evidence needed it.
			if hs := a.Hashes(); len(hs) == 0 || !strings.HasPrefix(string(hs[len(hs)-1]), "zh:") {
				t.Errorf("%s: the extracted index states %v", a.Package, hs)
			}
		}
	}
	if w := em.Warnings(); len(w) != 0 {
		t.Errorf("the extracted bundle, as a mirror, warns: %v", w)
	}
}

// entries reads a tar's entries in order.
func entries(t *testing.T, path string) (names []string, data map[string][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data = map[string][]byte{}
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

// repack writes a tar of the entries in order, as an attacker (or a bad
// copy) would; with fixManifest, the manifest's file list and its digest
// are made to match the new contents, so only deeper checks can tell.
func repack(t *testing.T, out string, names []string, data map[string][]byte, fixManifest bool) {
	t.Helper()
	if fixManifest {
		var m bundle.Manifest
		if err := json.Unmarshal(data[bundle.ManifestName], &m); err != nil {
			t.Fatal(err)
		}
		for i, f := range m.Files {
			sum := sha256.Sum256(data[f.Path])
			m.Files[i].Size, m.Files[i].SHA256 = int64(len(data[f.Path])), hex.EncodeToString(sum[:])
		}
		raw, _ := json.MarshalIndent(m, "", "  ")
		data[bundle.ManifestName] = raw
		data[bundle.TrailerName] = []byte(fmt.Sprintf("%x  %s\n", sha256.Sum256(raw), bundle.ManifestName))
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Size: int64(len(data[n])), Mode: 0o644})
		if _, err := tw.Write(data[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func zipName(names []string) string {
	for _, n := range names {
		if strings.HasSuffix(n, ".zip") {
			return n
		}
	}
	return ""
}

// A bundle that is not whole, or whose manifest does not match its digest
// or its files, is refused at Open, saying what is wrong.
func TestOpenRefusesDamage(t *testing.T) {
	src := written(t, backendtest.Seeds(t, testProviders, []string{"1.0.0"}, testPlatforms))
	raw, _ := os.ReadFile(src)
	names, data := entries(t, src)
	dir := t.TempDir()
	cases := []struct {
		name string
		make func(path string)
		want string
	}{
		{"cut in half", func(p string) { os.WriteFile(p, raw[:len(raw)/2], 0o644) }, "truncated"},
		{"cut before the trailer", func(p string) { repack(t, p, names[:len(names)-1], data, false) }, "truncated"},
		{"a file missing", func(p string) {
			repack(t, p, append(append([]string(nil), names[:2]...), names[3:]...), data, false)
		}, "which the tar does not hold"},
		{"manifest altered", func(p string) {
			d := clone(data)
			d[bundle.ManifestName] = bytes.Replace(d[bundle.ManifestName], []byte(`"size": `), []byte(`"size":  `), 1)
			repack(t, p, names, d, false)
		}, "the manifest's SHA-256"},
		{"a file added", func(p string) {
			d := clone(data)
			d["example.com/acme/alpha/extra.zip"] = []byte("x")
			n := append(append([]string(nil), names[:len(names)-1]...), "example.com/acme/alpha/extra.zip", bundle.TrailerName)
			repack(t, p, n, d, false)
		}, "which the manifest does not list"},
		{"not a tar", func(p string) { os.WriteFile(p, bytes.Repeat([]byte("junk "), 300), 0o644) }, "not a tar"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".tar")
			c.make(p)
			_, err := bundle.Open(p, p, bundle.Options{})
			if !errors.Is(err, bundle.ErrDamaged) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want ErrDamaged saying %q and naming the bundle", err, c.want)
			}
		})
	}
}

func clone(m map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

// An archive whose bytes were changed in place (same size) opens, but its
// stream fails at its end; an index document changed in place is reported
// by Audit.
func TestContentTamperCaughtOnRead(t *testing.T) {
	src := written(t, backendtest.Seeds(t, testProviders, []string{"1.0.0"}, testPlatforms))
	names, data := entries(t, src)
	zip := zipName(names)
	d := clone(data)
	d[zip][len(d[zip])/2] ^= 1 // the same size, other bytes
	doc := "example.com/acme/alpha/1.0.0.json"
	d[doc] = bytes.Replace(d[doc], []byte("zh:"), []byte("zh:0"), 1)
	d[doc] = d[doc][:len(d[doc])-1] // the same size: one character fewer at the end
	p := filepath.Join(t.TempDir(), "t.tar")
	repack(t, p, names, d, false)
	b := open(t, p)
	ctx := context.Background()
	alpha, _ := backends.ParseProvider("example.com/acme/alpha")
	v, _ := backends.ParseVersion("1.0.0")
	as, _ := b.Archives(ctx, alpha, v)
	tampered := 0
	for _, a := range as {
		rc, err := b.Open(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(rc)
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		if bundle.ArchivePath(a.Package) == zip {
			tampered++
			if !errors.Is(err, hashing.ErrHashMismatch) || !strings.Contains(err.Error(), "the manifest says") {
				t.Errorf("%s: read: %v, want a hash mismatch", a.Package, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", a.Package, err)
		}
	}
	if tampered != 1 {
		t.Fatalf("the tampered zip %s was not listed", zip)
	}
	probs := b.Audit(ctx, alpha)
	if len(probs) != 1 || !strings.Contains(probs[0].Detail, doc) || !strings.Contains(probs[0].Detail, "the manifest says") {
		t.Errorf("Audit: %+v", probs)
	}
}

// signedStaging is a staged mirror of alpha 1.0.0 whose version has
// provenance: SHA256SUMS signed by a test key, kept as the sidecar.
func signedStaging(t *testing.T, signWith func(doc []byte) []byte) (*fs.Mirror, string) {
	t.Helper()
	seeds := backendtest.Seeds(t, testProviders[:1], []string{"1.0.0"}, testPlatforms)
	dir := t.TempDir()
	m := staged(t, dir, seeds)
	key, err := registrytest.NewKey("bundle test")
	if err != nil {
		t.Fatal(err)
	}
	armor, _ := registrytest.ArmoredPublicKey(key)
	var sums bytes.Buffer
	for _, s := range seeds {
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(s.Zip), s.Package.Filename())
	}
	sig, _ := registrytest.Sign(key, sums.Bytes())
	if signWith != nil {
		sig = signWith(sums.Bytes())
	}
	prov := &provenance.Provenance{Provider: "example.com/acme/alpha", Version: "1.0.0", SHA256SUMS: sums.Bytes(), Signature: sig,
		Key: provenance.Key{ID: key.PrimaryKey.KeyIdString(), Source: "https://example.com/test", ASCIIArmor: armor}}
	raw, err := provenance.Marshal(prov)
	if err != nil {
		t.Fatal(err)
	}
	side := filepath.Join(dir, "example.com/acme/alpha", provenance.DirName, provenance.FileName("1.0.0"))
	if err := os.MkdirAll(filepath.Dir(side), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(side, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return m, key.PrimaryKey.KeyIdString()
}

// A version's provenance travels in the bundle: the manifest names the
// signer, Open checks the signature, the archives carry the signed zh: as
// evidence and Provenance hands the document on. One whose signature does
// not check is not bundled.
func TestProvenanceInBundle(t *testing.T) {
	ctx := context.Background()
	m, keyID := signedStaging(t, nil)
	out := filepath.Join(t.TempDir(), "p.tar")
	man, err := bundle.Write(ctx, m, out, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range man.Packages {
		if p.Signer == nil || p.Signer.KeyID != keyID {
			t.Errorf("%s: signer %+v, want key %s", p.Path, p.Signer, keyID)
		}
	}
	b := open(t, out)
	alpha, _ := backends.ParseProvider("example.com/acme/alpha")
	v, _ := backends.ParseVersion("1.0.0")
	as, _ := b.Archives(ctx, alpha, v)
	for _, a := range as {
		signed := false
		for _, ev := range a.Evidence {
			signed = signed || ev.Source.Kind == hashing.SourceRegistrySigned && strings.Contains(ev.Source.Detail, keyID)
		}
		if !signed {
			t.Errorf("%s: evidence %+v lacks the signed SHA256SUMS", a.Package, a.Evidence)
		}
	}
	if pr, err := b.Provenance(ctx, alpha, v); err != nil || pr.Version != "1.0.0" {
		t.Errorf("Provenance: %v %v", pr, err)
	}
	if probs := b.Audit(ctx, alpha); len(probs) != 0 {
		t.Errorf("Audit: %+v", probs)
	}

	other, _ := registrytest.NewKey("someone else")
	bad, _ := signedStaging(t, func(doc []byte) []byte { s, _ := registrytest.Sign(other, doc); return s })
	if _, err := bundle.Write(ctx, bad, filepath.Join(t.TempDir(), "bad.tar"), hashing.Options{}); !errors.Is(err, provenance.ErrSignature) {
		t.Errorf("bundling provenance whose signature does not check: %v", err)
	}

	// A provenance document altered in the bundle, with a manifest made to
	// match, is reported by Audit and gives no signed evidence.
	names, data := entries(t, out)
	side := "example.com/acme/alpha/" + provenance.DirName + "/" + provenance.FileName("1.0.0")
	d := clone(data)
	var doc map[string]any
	if err := json.Unmarshal(d[side], &doc); err != nil {
		t.Fatalf("decoding d[side]: %v", err)
	}
	sums, _ := doc["shasums"].(string)
	doc["shasums"] = strings.Replace(sums, "A", "B", 1)
	d[side], _ = json.MarshalIndent(doc, "", "  ")
	tampered := filepath.Join(t.TempDir(), "t.tar")
	repack(t, tampered, names, d, true)
	tb := open(t, tampered)
	probs := tb.Audit(ctx, alpha)
	if len(probs) != 1 || !strings.Contains(probs[0].Detail, "provenance") || !strings.Contains(probs[0].Detail, "signature") {
		t.Errorf("Audit of altered provenance: %+v", probs)
	}
	as, _ = tb.Archives(ctx, alpha, v)
	for _, a := range as {
		for _, ev := range a.Evidence {
			if ev.Source.Kind == hashing.SourceRegistrySigned {
				t.Errorf("%s: signed evidence from provenance that does not check", a.Package)
			}
		}
	}
}
