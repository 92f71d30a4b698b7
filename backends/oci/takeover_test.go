package oci_test

import (
	"strings"
	gosync "sync"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// A claim stating a huge lease holds the next writer no longer than the
// lease a writer claims itself. While it waits, the writer says what for
// (the holder, escaped); when it takes the lock over, it says so at once
// through Notify (holder and how long the claim stood), not among the
// warnings printed at the end.
func TestLockTakeoverIsToldAtOnceAndItsLeaseBounded(t *testing.T) {
	defer oci.SetLockLease(1500 * time.Millisecond)()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	claimLock(ctx, t, reg, lockTestRepo, "evil\x1b[31m pid 1", time.Hour)
	var mu gosync.Mutex
	var notices []backends.Notice
	m, err := oci.Open("oci://"+reg.Host()+testTemplate, reg.Host()+testTemplate, oci.Options{
		PlainHTTP: reg.PlainHTTP, RootCAs: reg.RootCAs(), Credentials: credentials.NewMemoryStore(),
		Notify: func(n backends.Notice) { mu.Lock(); notices = append(notices, n); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
	if err := m.Flush(ctx, pkg.Provider); err != nil { // testCtx bounds it: an hour's lease would fail it
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notices) != 2 || notices[0].Kind != backends.NoticeWaiting || notices[1].Kind != backends.NoticeWarning {
		t.Fatalf("notices %+v, want one waiting and one warning", notices)
	}
	for _, n := range notices {
		if strings.Contains(n.Message, "\x1b") || !strings.Contains(n.Message, `evil\x1b[31m pid 1`) {
			t.Errorf("%s notice does not name the holder escaped: %q", n.Kind, n.Message)
		}
	}
	if !strings.Contains(notices[0].Message, "taken over if it stays unreleased for 1.5s") {
		t.Errorf("the waiting notice does not say for how long at most (the writer's own lease): %q", notices[0].Message)
	}
	if !strings.Contains(notices[1].Message, "took over the lock") {
		t.Errorf("the takeover notice: %q", notices[1].Message)
	}
	if ws := m.Warnings(); len(ws) != 0 {
		t.Errorf("the takeover is also among the warnings: %q", ws)
	}
	assertLockFree(ctx, t, reg, lockTestRepo)
}
