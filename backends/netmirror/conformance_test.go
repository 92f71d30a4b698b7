package netmirror_test

import (
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// TestConformance runs the case of every capability a network mirror
// has (backendtest.Capabilities) against one served by Handler over TLS.
func TestConformance(t *testing.T) {
	backendtest.Conformance(t, backendtest.Place{Seeded: func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		dir := t.TempDir()
		backendtest.WritePacked(t, dir, seeds)
		srv, _, _ := serveDir(t, dir)
		return openMirror(t, srv, srv.URL+"/", nil)
	}})
}
