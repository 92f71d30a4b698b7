package oci_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// While another push rewrites a blob's link, distribution 2.8 answers a
// manifest that names the blob with MANIFEST_BLOB_UNKNOWN. The push is
// tried again, and succeeds once the registry finds the blob.
func TestPushRetriesAConcurrentPushsAnswer(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	var refused atomic.Int32
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/sha256:") && refused.Add(1) <= 2 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not match uploaded content"},{"code":"MANIFEST_BLOB_UNKNOWN","message":"blob unknown to registry"}]}`)
			return true
		}
		return false
	})
	m := openTest(t, reg, testTemplate)
	mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	if n := refused.Load(); n != 3 {
		t.Errorf("the manifest was pushed %d times, want 3 (two refused)", n)
	}
	as, err := m.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("archives: %v %v", as, err)
	}
}
