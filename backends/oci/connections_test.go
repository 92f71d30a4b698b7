package oci_test

import (
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
)

// Concurrent commits keep their connections to the registry between
// requests: every request of a push made by a few workers at once reuses
// one of a few connections, rather than paying for a new TLS handshake
// each time more than two are idle (net/http's default per host).
func TestConcurrentCommitsReuseConnections(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	m := openTest(t, reg, testTemplate)
	const workers = 6
	var pkgs []backends.Package
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64", "freebsd_amd64"} {
			pkgs = append(pkgs, mustPkg(t, "example.com/acme/alpha", v, p))
		}
	}
	zips := make([][]byte, len(pkgs))
	sums := make([]hashing.Sums, len(pkgs))
	for i, pkg := range pkgs {
		zips[i] = providerZip(t, pkg, "")
		sums[i] = sumsOf(t, zips[i])
	}
	// The workers commit in rounds, all at once, as jobs of like sizes
	// end together: after each round they all go idle at the same moment.
	for round := 0; round < len(pkgs); round += workers {
		var g errgroup.Group
		for i := round; i < round+workers; i++ {
			g.Go(func() error {
				st, err := m.Stage(ctx, pkgs[i])
				if err != nil {
					return err
				}
				if _, err := st.Write(zips[i]); err != nil {
					return err
				}
				if err := st.Commit(ctx, sums[i], false); err != nil {
					return fmt.Errorf("%s: %w", pkgs[i], err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Flush(ctx, pkgs[0].Provider); err != nil {
		t.Fatal(err)
	}
	// A connection per worker, another while the config blob goes up
	// beside the first zips, and some dialled for a request that then
	// took one another request had just left idle: 10 to 14 here; with
	// two idle connections kept per host, 35 or more.
	reqs := len(reg.Requests())
	if n := reg.Handshakes(); n > 3*workers {
		t.Errorf("%d TLS handshakes for %d requests by %d workers, want at most %d", n, reqs, workers, 3*workers)
	}
}
