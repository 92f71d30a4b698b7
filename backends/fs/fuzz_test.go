package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
)

// FuzzIndexDocuments feeds arbitrary index.json and <version>.json contents
// to the reader and the index writer: junk is reported, never a panic, and
// a rewrite always produces valid documents.
func FuzzIndexDocuments(f *testing.F) {
	f.Add([]byte(`{"versions":{"1.0.0":{}}}`), []byte(`{"archives":{"linux_amd64":{"hashes":["h1:x"],"url":"terraform-provider-alpha_1.0.0_linux_amd64.zip"}}}`))
	f.Add([]byte(`{"versions":{"bad":1}}`), []byte(`{"archives":{"linux":{"url":"../../etc/passwd"}}}`))
	f.Add([]byte(`[]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, index, version []byte) {
		dir := t.TempDir()
		pdir := filepath.Join(dir, "example.com/acme/alpha")
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pdir, "terraform-provider-alpha_1.0.0_linux_amd64.zip"), []byte("PK not really"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pdir, "index.json"), index, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pdir, "1.0.0.json"), version, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := fs.Open(dir, dir, fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := backends.ParseProvider("example.com/acme/alpha")
		ctx := context.Background()
		m.AllArchives(ctx, p)
		m.Audit(ctx, p)
		// The archive is no zip, so Flush fails reading it cleanly.
		if err := m.Flush(ctx, p); err == nil {
			t.Fatal("Flush of a corrupt zip succeeded")
		}
	})
}
