package cli

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
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

// --debug writes each HTTP request to stderr (method, URL, status, bytes,
// time, attempt), redirects and archive downloads included, and never a
// credential: not the mirror's token (which the server checks it got), not
// a presigned URL's signature.
func TestCLIDebugLogsRequestsWithoutCredentials(t *testing.T) {
	const token = "tok-secret-123"
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "example.com", "acme", "alpha", "terraform-provider-alpha_1.0.0_linux_amd64.zip")
	os.MkdirAll(filepath.Dir(zipPath), 0o755)
	os.WriteFile(zipPath, registrytest.ProviderZip("alpha", "1.0.0", "linux_amd64"), 0o644)
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := netmirror.NewHandler(m, nil, hashing.Options{})
	var tokens, zips atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, ".zip") && r.URL.RawQuery != "" && zips.Add(1) == 1:
			// The first download fails: the sync job's second attempt
			// says it is one.
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		case strings.HasSuffix(r.URL.Path, ".json"):
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "token required", http.StatusUnauthorized)
				return
			}
			tokens.Add(1)
		case strings.HasSuffix(r.URL.Path, ".zip") && r.URL.RawQuery == "":
			// Where object storage would send the client: a presigned URL.
			http.Redirect(w, r, r.URL.Path+"?X-Amz-Credential=cred-secret&X-Amz-Signature=sig-secret&token=query-secret", http.StatusFound)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	home := t.TempDir()
	ca := filepath.Join(home, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	host := strings.TrimPrefix(srv.URL, "https://")
	cfg := filepath.Join(home, "tfmirror.tfrc")
	os.WriteFile(cfg, []byte(fmt.Sprintf("credentials %q {\n  token = %q\n}\n", host, token)), 0o644)
	env := []string{"TF_CLI_CONFIG_FILE=" + cfg, "HOME=" + home}
	u := srv.URL
	took := `(<1ms|\d+ms|\d+(\.\d+)?s)`
	size := `\d+(\.\d)? (B|kB|MB)`

	r := run(t, env, "ls", u+"/", "-p", "example.com/acme/alpha", "--ca-cert", ca, "--debug")
	if r.code != 0 || tokens.Load() != 2 {
		t.Fatalf("ls: exit %d, %d requests with the token (want 2)\n%s%s", r.code, tokens.Load(), r.stdout, r.stderr)
	}
	for _, want := range []string{
		`debug: GET ` + u + `/example.com/acme/alpha/index.json -> 200, ` + size + `, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + u + `/example.com/acme/alpha/1.0.0.json -> 200, ` + size + `, ` + took + ` \(attempt 1\)`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(r.stderr) {
			t.Errorf("ls --debug: no line matching\n%s\nin\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "secret") {
		t.Errorf("ls --debug printed a credential:\n%s", r.stderr)
	}
	if r := run(t, env, "ls", u+"/", "-p", "example.com/acme/alpha", "--ca-cert", ca); strings.Contains(r.stderr, "debug:") {
		t.Errorf("without --debug:\n%s", r.stderr)
	}

	zip := `/example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip`
	signed := regexp.QuoteMeta(zip + `?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&token=REDACTED`)
	r = run(t, env, "sync", u+"/", filepath.Join(t.TempDir(), "dst"), "-p", "example.com/acme/alpha", "--ca-cert", ca, "--debug")
	if r.code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`debug: GET ` + u + zip + ` -> 302 to ` + u + signed + `, ` + size + `, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + u + signed + ` -> 503, ` + size + `, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + u + zip + ` -> 302 to ` + u + signed + `, ` + size + `, ` + took + ` \(attempt 2\)`,
		`debug: GET ` + u + signed + ` -> 200, headers after ` + took + `, ` + size + ` to come \(attempt 2\)`,
		`debug: GET ` + u + signed + ` -> 200, body done, ` + size + ` in ` + took + ` \(attempt 2\)`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(r.stderr) {
			t.Errorf("sync --debug: no line matching\n%s\nin\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "secret") {
		t.Errorf("sync --debug printed a credential:\n%s%s", r.stdout, r.stderr)
	}
}
