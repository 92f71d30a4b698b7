package lockcheck_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// TestCheckLockDeadServer: a network mirror that cannot be reached is an
// error naming why, never "holds no version ... copy it in": `check
// https://127.0.0.1:1/ --lock ...` told the user to sync into a read-only
// mirror that was only down, unless --platform was given.
func TestCheckLockDeadServer(t *testing.T) {
	ctx := chkCtx(t)
	_, m := chkMirror(t)
	locked := lockcheck.LockedFromFile(lockAll(t, ctx, m, "linux_amd64"), "team.lock.hcl")
	srv := httptest.NewTLSServer(netmirror.NewHandler(m, nil, hashing.Options{}))
	net, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // the mirror is down
	findings, err := lockcheck.CheckLock(ctx, net, locked, lockcheck.CheckOptions{Kind: place.NetMirror})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != len(chkProviders) {
		t.Errorf("%d findings, want one per locked provider: %+v", len(findings), findings)
	}
	for _, f := range findings {
		if f.Status != sync.StatusError || !strings.Contains(f.Detail, "cannot tell whether init would work") || strings.Contains(f.Detail, "copy it in") {
			t.Errorf("%s: %s: %s; want an error saying the mirror could not be read", f.Package, f.Status, f.Detail)
		}
	}
}
