package oci_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// The debug log sits under oras's retries: each try of a blob download has
// its line, numbered, and the registry's password never appears.
func TestDebugLogEachTry(t *testing.T) {
	t.Parallel()
	reg := ocitest.NewWithOptions(t, ocitest.Options{Users: map[string]string{"alice": "pw-secret"}})
	creds := credentials.NewMemoryStore()
	creds.Put(context.Background(), reg.Host(), auth.Credential{Username: "alice", Password: "pw-secret"})
	var out backendtest.Buffer
	r, a, z := pushed(t, reg, creds, oci.Options{Debug: &out, RetryBackoff: time.Millisecond})
	var gets atomic.Int32
	reg.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if isBlobGet(req) && gets.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	defer reg.Intercept(nil)
	rc, err := r.Open(testCtx(t), a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err != nil || !bytes.Equal(b, z) {
		t.Fatalf("read %d bytes: %v", len(b), err)
	}
	log := out.String()
	blob := regexp.QuoteMeta("https://"+reg.Host()+"/v2/providers/example.com/acme/alpha/blobs/") + `sha256:[0-9a-f]{64}`
	took := `(<1ms|\d+ms|\d+(\.\d+)?s)`
	size := `\d+(\.\d)? (B|kB)`
	for _, want := range []string{
		`debug: GET ` + blob + ` -> 503, .*` + took + ` \(attempt 1\)`,
		`debug: GET ` + blob + ` -> 200, headers after ` + took + `, ` + size + ` to come \(attempt 2\)`,
		`debug: GET ` + blob + ` -> 200, body done, ` + size + ` in ` + took + ` \(attempt 2\)`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(log) {
			t.Errorf("no line matching\n%s\nin\n%s", want, log)
		}
	}
	if strings.Contains(log, "pw-secret") || strings.Contains(log, "Basic") {
		t.Errorf("a credential in the log:\n%s", log)
	}
}
