package netmirror_test

import (
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// TestReaderSuite runs the shared Reader contract against a network mirror
// served by Handler over TLS.
func TestReaderSuite(t *testing.T) {
	backendtest.ReaderSuite(t, func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		dir := t.TempDir()
		backendtest.WritePacked(t, dir, seeds)
		srv, _, _ := serveDir(t, dir)
		return openMirror(t, srv, srv.URL+"/", nil)
	})
}
