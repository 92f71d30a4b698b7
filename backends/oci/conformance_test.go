package oci_test

import (
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// TestConformance runs the case of every capability an OCI mirror has
// (backendtest.Capabilities) against a real registry, seeded through the
// Writer (each seed staged, committed, then flushed per provider, as the
// sync engine writes). Each instance opened is another client of the one
// registry, as another process would be.
func TestConformance(t *testing.T) {
	t.Parallel()
	backendtest.Conformance(t, backendtest.Place{
		Empty: func(t *testing.T) func(*testing.T) backends.Writer {
			reg := ocitest.New(t)
			return func(t *testing.T) backends.Writer { return openTest(t, reg, testTemplate) }
		},
	})
}
