package hashing_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
)

// The placeholder provider of OpenTofu's filesystem-mirror test data (spec
// §1.6 vector 1): 85 bytes whose h1: OpenTofu's own tests assert.
const nullPlaceholder = "# This is just a placeholder file for discovery testing, not a real provider plugin.\n"

func TestSpecVectorDirectory(t *testing.T) {
	if len(nullPlaceholder) != 85 {
		t.Fatalf("vector text is %d bytes, want 85", len(nullPlaceholder))
	}
	if got := fmt.Sprintf("%x", sha256.Sum256([]byte(nullPlaceholder))); got != "1c705b4eb296bde8abd99a75e9df466cbafcbc6e201ff77658787245f76f5343" {
		t.Fatalf("vector file sha256 = %s", got)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "terraform-provider-null"), []byte(nullPlaceholder), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := hashing.DirH1(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h != "h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=" {
		t.Fatalf("DirH1 = %s", h)
	}
	// A zip holding the same single entry has the same h1: whatever its
	// compression (spec: provider-null_2.1.0_linux_amd64.zip).
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "terraform-provider-null", Method: method})
		if _, err := w.Write([]byte(nullPlaceholder)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "p.zip")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sums, err := hashing.HashPath(p, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sums.H1 != h {
			t.Errorf("method %d: zip h1 = %s, want %s", method, sums.H1, h)
		}
		if want := hashing.ZipHashFromSHA256(sha256Of(buf.Bytes())); sums.ZH != want {
			t.Errorf("zh = %s, want %s", sums.ZH, want)
		}
	}
}

func sha256Of(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

func TestEmptyPackageHash(t *testing.T) {
	h, err := hashing.DirH1(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if h != "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" {
		t.Fatalf("empty package h1 = %s", h)
	}
}

// A zip with an explicit directory entry hashes that entry (as dirhash.HashZip
// does), so its h1 differs from its extracted directory's.
func TestZipDirectoryEntriesCount(t *testing.T) {
	body := []byte("x")
	plain := backendtest.Zip(t, backendtest.Entry{Name: "sub/f", Body: body})
	withDir := backendtest.Zip(t, backendtest.Entry{Name: "sub/", Mode: os.ModeDir | 0o755}, backendtest.Entry{Name: "sub/f", Body: body})
	a := hashZipBytes(t, plain)
	b := hashZipBytes(t, withDir)
	if a == b {
		t.Fatal("directory entry did not change h1")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "f"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := hashing.DirH1(dir)
	if d != a {
		t.Fatalf("dir h1 %s != plain zip h1 %s", d, a)
	}
}

func hashZipBytes(t *testing.T, b []byte) hashing.Hash {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.zip")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := hashing.ZipH1(p, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestParseHash(t *testing.T) {
	good := []string{
		"h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=",
		"zh:4fb39849f2e138eb16a18ba0c682635d781cb8c3b25901dd5a792ade9711f501",
		"foo:bar", // unknown schemes are kept
	}
	for _, s := range good {
		h, err := hashing.ParseHash(s)
		if err != nil || h.String() != s {
			t.Errorf("ParseHash(%q) = %q, %v", s, h, err)
		}
	}
	bad := []string{
		"", ":abc", "4fb39849f2e138eb16a18ba0c682635d781cb8c3b25901dd5a792ade9711f501",
		"zh:XYZ", "zh:4FB39849F2E138EB16A18BA0C682635D781CB8C3B25901DD5A792ADE9711F501", "h1:short",
		// Hashes come from documents anyone can write, and are printed:
		// no terminal control sequences, no other characters than the
		// schemes' own.
		"h1:\x1b[2JREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS0=", "h1:qjsREM4DqEWECD43FcPqddZ9oxCG\"IaMTxvWPciS05g=",
		"\x1b]0;title\x07evil:x", "foo:b\x9bar", "foo:bar baz", "foo:bar\nbaz", "f\u00f6o:bar",
	}
	for _, s := range bad {
		if _, err := hashing.ParseHash(s); err == nil {
			t.Errorf("ParseHash(%q) accepted", s)
		}
	}
	if hashing.Hash("foo:bar").Known() {
		t.Error("unknown scheme reported as known")
	}
}

func TestBadZips(t *testing.T) {
	dir := t.TempDir()
	good := backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-x", Body: bytes.Repeat([]byte("abc"), 10000)})
	cases := map[string][]byte{
		"truncated.zip": good[:len(good)/2],
		"empty.zip":     {},
		"text.zip":      []byte("This is just a placeholder file for discovery testing, not a real provider package.\n"),
	}
	for name, b := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := hashing.ZipH1(p, hashing.Options{})
		if err == nil {
			t.Errorf("%s: ZipH1 succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
		// zh: of any file is still its sha256.
		zh, err := hashing.ZipZH(p)
		if err != nil || zh != hashing.ZipHashFromSHA256(sha256Of(b)) {
			t.Errorf("%s: zh = %s, %v", name, zh, err)
		}
	}
	if _, err := hashing.HashPath(filepath.Join(dir, "nonexistent.zip"), hashing.Options{}); err == nil {
		t.Error("hashing a missing file succeeded")
	}
}

func TestZipBombCapped(t *testing.T) {
	// 64 MiB of zeros deflates to ~64 KiB.
	bomb := backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-bomb", Body: make([]byte, 64<<20)})
	p := filepath.Join(t.TempDir(), "bomb.zip")
	if err := os.WriteFile(p, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := hashing.ZipH1(p, hashing.Options{MaxUnpacked: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "unpacks to more than the allowed size") {
		t.Fatalf("err = %v, want a size cap error", err)
	}
	if _, err := hashing.ZipH1(p, hashing.Options{MaxUnpacked: -1}); err != nil {
		t.Fatalf("uncapped: %v", err)
	}
}

func TestSymlinkedDirectory(t *testing.T) {
	real := t.TempDir()
	if err := os.WriteFile(filepath.Join(real, "terraform-provider-null"), []byte(nullPlaceholder), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	h, err := hashing.DirH1(link)
	if err != nil || h != "h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=" {
		t.Fatalf("DirH1 through a symlink = %s, %v", h, err)
	}
}

func TestVerify(t *testing.T) {
	sums := hashing.Sums{H1: "h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=", ZH: hashing.Hash("zh:" + strings.Repeat("a", 64))}
	other := hashing.Hash("zh:" + strings.Repeat("b", 64))
	idx := hashing.Source{Kind: hashing.SourceMirrorIndex, Detail: "m/1.0.0.json"}
	lock := hashing.Source{Kind: hashing.SourceLockFile, Detail: ".terraform.lock.hcl"}

	res := hashing.Verify(sums, hashing.Evidence{Source: idx, Hashes: []hashing.Hash{sums.H1, sums.ZH}})
	if !res.Verified() || len(res.Checks) != 2 {
		t.Fatalf("matching index: %+v", res)
	}
	res = hashing.Verify(sums, hashing.Evidence{Source: idx, Hashes: []hashing.Hash{sums.H1, other}})
	if res.OK() {
		t.Fatal("a wrong zh: in the index passed")
	}
	if msg := res.Err().Error(); !strings.Contains(msg, "zh mismatch against mirror index (m/1.0.0.json): want "+string(other)+", got "+string(sums.ZH)) {
		t.Fatalf("message: %s", msg)
	}
	// A lock lists every platform's hashes: one match is enough.
	res = hashing.Verify(sums, hashing.Evidence{Source: lock, Hashes: []hashing.Hash{other, sums.H1}, AnyOf: true})
	if !res.Verified() {
		t.Fatalf("lock with a matching hash: %v", res.Err())
	}
	res = hashing.Verify(sums, hashing.Evidence{Source: lock, Hashes: []hashing.Hash{other}, AnyOf: true})
	if res.OK() {
		t.Fatal("lock with no matching hash passed")
	}
	// zh: cannot vouch for an unpacked directory.
	dirSums := hashing.Sums{H1: sums.H1}
	res = hashing.Verify(dirSums, hashing.Evidence{Source: lock, Hashes: []hashing.Hash{sums.ZH}, AnyOf: true})
	if !res.OK() || res.Verified() || res.Checks[0].Status != hashing.Unchecked {
		t.Fatalf("zh against a directory: %+v", res)
	}
	// Unknown schemes never match and never fail.
	res = hashing.Verify(sums, hashing.Evidence{Source: idx, Hashes: []hashing.Hash{"foo:bar"}})
	if !res.OK() || res.Verified() {
		t.Fatalf("unknown scheme: %+v", res)
	}
}

func TestSortUnique(t *testing.T) {
	got := hashing.SortUnique([]hashing.Hash{"zh:b", "h1:z", "zh:b", "h1:a", "foo:x"})
	want := []hashing.Hash{"foo:x", "h1:a", "h1:z", "zh:b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("SortUnique = %v", got)
	}
}

func TestZipHasherStreams(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100000)
	z := hashing.NewZipHasher()
	for i := 0; i < len(data); i += 4096 {
		z.Write(data[i:min(i+4096, len(data))])
	}
	if z.Sum() != hashing.ZipHashFromSHA256(sha256Of(data)) || z.Size() != int64(len(data)) {
		t.Fatal("streaming zh differs")
	}
}

// h1: is needed where a source states h1: and no zh: that is the
// archive's (a lock file lists every platform's), or where nothing vouches.
func TestNeedsH1(t *testing.T) {
	h1 := hashing.Hash("h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=")
	zh := hashing.Hash("zh:" + strings.Repeat("a", 64))
	other := hashing.Hash("zh:" + strings.Repeat("b", 64))
	signed := hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceRegistrySigned}, Hashes: []hashing.Hash{zh}}
	index := func(hs ...hashing.Hash) hashing.Evidence {
		return hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceMirrorIndex}, Hashes: hs}
	}
	lock := func(hs ...hashing.Hash) hashing.Evidence {
		return hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceLockFile}, Hashes: hs, AnyOf: true}
	}
	cases := []struct {
		name string
		zh   hashing.Hash
		ev   []hashing.Evidence
		want bool
	}{
		{"signed SHA256SUMS", "", []hashing.Evidence{signed}, false},
		{"signed, once zh: is known", zh, []hashing.Evidence{signed}, false},
		{"mirror index with h1: only", "", []hashing.Evidence{index(h1)}, true},
		{"mirror index with h1: and zh:", "", []hashing.Evidence{index(h1, zh)}, false},
		{"mirror index with h1: and another zh:", zh, []hashing.Evidence{index(h1, other)}, true},
		{"mirror index with zh: only", "", []hashing.Evidence{index(zh)}, false},
		{"lock with h1: only", "", []hashing.Evidence{signed, lock(h1)}, true},
		{"lock with h1: and zh:, before zh: is known", "", []hashing.Evidence{signed, lock(h1, zh)}, false},
		{"lock whose zh: matches", zh, []hashing.Evidence{signed, lock(h1, zh)}, false},
		{"lock whose zh: does not match", zh, []hashing.Evidence{signed, lock(h1, other)}, true},
		{"nothing stated", "", nil, true},
		{"only unknown schemes", "", []hashing.Evidence{index("foo:bar")}, true},
		{"only an OCI digest", "", []hashing.Evidence{{Source: hashing.Source{Kind: hashing.SourceOCIDigest}, Hashes: []hashing.Hash{zh}}}, true},
		{"a release file given to push", "", []hashing.Evidence{{Source: hashing.Source{Kind: hashing.SourceRelease}}}, false},
	}
	for _, c := range cases {
		if got := hashing.NeedsH1(c.zh, c.ev...); got != c.want {
			t.Errorf("%s: NeedsH1 = %v, want %v", c.name, got, c.want)
		}
		if !(hashing.Options{AllHashes: true}).WantH1(c.zh, c.ev...) {
			t.Errorf("%s: --hashes all does not want h1:", c.name)
		}
	}
}

// A file open without a name (deleted, or created with O_TMPFILE, as a
// filesystem mirror stages archives on Linux) is hashed through the link
// /proc/self/fd gives it; a link to nothing is still an error.
func TestHashZipOfAnOpenFileWithoutAName(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here:", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a.zip")
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	if err := os.WriteFile(path, backendtest.ProviderZip(t, pkg, ""), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := hashing.ZipH1(path, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.Remove(path)
	got, err := hashing.ZipH1(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), hashing.Options{})
	if err != nil || got != want {
		t.Fatalf("ZipH1 of the deleted file = %s, %v; want %s", got, err, want)
	}
	dangling := filepath.Join(dir, "dangling.zip")
	if err := os.Symlink(path, dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := hashing.ZipH1(dangling, hashing.Options{}); err == nil {
		t.Fatal("ZipH1 of a link to nothing succeeded")
	}
}
