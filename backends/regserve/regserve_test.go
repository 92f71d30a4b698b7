package regserve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/regserve"
	"github.com/tfmirror/tfmirror/hashing"
)

// A directory holding 1.0.0 (with provenance) and 2.0.0 (without), served
// as the serve command serves it: providers.v1 offers 1.0.0 alone and logs
// why 2.0.0 is left out; 1.0.0's download document hands over the kept
// SHA256SUMS, signature and key byte for byte and points at the zip the
// network mirror serves, whose SHA-256 is the signed one.
func TestProvidersV1FromADirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	backendtest.WritePacked(t, dir, seeds)
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	signed := backendtest.Versions(seeds)[0]
	pr := backendtest.NewSigner(t, "regserve").Provenance(t, signed)
	p, v := signed[0].Package.Provider, signed[0].Package.Version
	if err := m.WriteProvenance(ctx, p, v, pr); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	h := regserve.New(netmirror.NewHandler(m, nil, hashing.Options{}), regserve.Options{Providers: m, Logger: log.New(&logs, "", 0)})
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	code, body := get("/v1/providers/example.com/acme/alpha/versions")
	var vs struct{ Versions []struct{ Version string } }
	if json.Unmarshal(body, &vs); code != 200 || len(vs.Versions) != 1 || vs.Versions[0].Version != "1.0.0" {
		t.Errorf("versions: %d %s, want 1.0.0 alone", code, body)
	}
	if !strings.Contains(logs.String(), "example.com/acme/alpha 2.0.0 is not offered") {
		t.Errorf("the log does not say why 2.0.0 is left out:\n%s", logs.String())
	}

	code, body = get("/v1/providers/example.com/acme/alpha/1.0.0/download/linux/amd64")
	var doc struct {
		Filename, Shasum string
		DownloadURL      string `json:"download_url"`
		SumsURL          string `json:"shasums_url"`
		SigURL           string `json:"shasums_signature_url"`
		SigningKeys      struct {
			GPGPublicKeys []struct {
				ASCIIArmor string `json:"ascii_armor"`
			} `json:"gpg_public_keys"`
		} `json:"signing_keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || code != 200 {
		t.Fatalf("download: %d %s", code, body)
	}
	if doc.Filename != provenance.PackageFileName("alpha", "1.0.0", "linux_amd64") || len(doc.SigningKeys.GPGPublicKeys) != 1 || doc.SigningKeys.GPGPublicKeys[0].ASCIIArmor != pr.Key.ASCIIArmor {
		t.Errorf("download document: %s", body)
	}
	if _, sums := get(doc.SumsURL); !bytes.Equal(sums, pr.SHA256SUMS) {
		t.Errorf("SHA256SUMS served is not the one kept:\n%s", sums)
	}
	if _, sig := get(doc.SigURL); !bytes.Equal(sig, pr.Signature) {
		t.Error("the signature served is not the one kept")
	}
	code, zip := get(doc.DownloadURL)
	if want, _ := pr.ZipHashes("linux_amd64"); code != 200 || zipHash(zip) != want[0] || doc.Shasum != want[0].Value() {
		t.Errorf("the zip at %s: %d, %d bytes, shasum %s, want the signed %s", doc.DownloadURL, code, len(zip), doc.Shasum, want[0])
	}

	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/v1/providers/example.com/acme/alpha/2.0.0/download/linux/amd64", 404, "keeps no signed SHA256SUMS"},
		{"/v1/providers/example.com/acme/alpha/1.0.0/download/windows/amd64", 404, "windows_amd64"},
		{"/v1/providers/example.com/acme/beta/versions", 404, ""},
		{"/v1/providers/example.com/acme/../alpha/versions", 404, ""},
		{"/v1/modules/example.com/acme/net/aws/versions", 404, ""},
	} {
		code, body := get(c.path)
		if code != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s: %d %q, want %d saying %q", c.path, code, body, c.code, c.want)
		}
	}
	resp, err := srv.Client().Post(srv.URL+"/v1/providers/example.com/acme/alpha/versions", "text/plain", nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d, want 405", resp.StatusCode)
		}
	}
}

func zipHash(b []byte) hashing.Hash {
	sum := sha256.Sum256(b)
	return hashing.ZipHashFromSHA256(sum[:])
}
