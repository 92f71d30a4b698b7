package cli

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// truncatedDeflateZip is a zip whose container is sound (its directory, its
// sizes) but whose one entry's deflate stream stops halfway: inflating it
// ends in io.ErrUnexpectedEOF, the same error a dropped connection gives.
func truncatedDeflateZip(t *testing.T, name string) []byte {
	t.Helper()
	content := make([]byte, 100_000)
	rand.Read(content)
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestCompression)
	fw.Write(content)
	fw.Close()
	cut := deflated.Bytes()[:deflated.Len()/2]
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(content),
		CompressedSize64: uint64(len(cut)), UncompressedSize64: uint64(len(content))})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(cut)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A corrupt zip in a source directory is a fault of that file, not a
// network glitch: the job fails on its first attempt, and the message names
// the file in the source, not the staging copy (deleted by then).
func TestCLICorruptSourceZipFailsOnceNamingIt(t *testing.T) {
	src := t.TempDir()
	zipPath := filepath.Join(src, "example.com", "acme", "alpha", "terraform-provider-alpha_1.0.0_linux_amd64.zip")
	os.MkdirAll(filepath.Dir(zipPath), 0o755)
	os.WriteFile(zipPath, truncatedDeflateZip(t, "terraform-provider-alpha"), 0o644)
	dst := filepath.Join(t.TempDir(), "dst")

	r := run(t, nil, "sync", src, dst, "--json")
	if r.code != 1 {
		t.Fatalf("sync: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	types := map[string]int{}
	var failure string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		typ, _ := ev["type"].(string)
		types[typ]++
		if typ == "failed" {
			failure, _ = ev["error"].(string)
		}
	}
	if types["started"] != 1 || types["retrying"] != 0 || types["failed"] != 1 {
		t.Errorf("events %v: want one attempt, no retry, one failure\n%s", types, r.stdout)
	}
	if !strings.Contains(failure, zipPath+" is not a usable zip") || strings.Contains(failure, ".tfmirror-tmp") {
		t.Errorf("failure %q: want it to name %s, and no staging file", failure, zipPath)
	}

	// The plain report says the same.
	r = run(t, nil, "sync", src, dst)
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, "retrying") || !strings.Contains(r.stdout+r.stderr, zipPath) {
		t.Errorf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
