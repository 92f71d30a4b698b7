package oci_test

import (
	"context"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// TestReaderSuite runs the shared Reader contract against a real registry,
// seeded through the Writer (each seed staged, committed, then flushed per
// provider, as the sync engine writes).
func TestReaderSuite(t *testing.T) {
	t.Parallel()
	backendtest.ReaderSuite(t, func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		ctx := context.Background()
		reg := ocitest.New(t)
		w := openTest(t, reg, testTemplate)
		providers := map[backends.Provider]bool{}
		for _, s := range seeds {
			mustPut(ctx, t, w, s.Package, s.Zip)
			providers[s.Package.Provider] = true
		}
		for p := range providers {
			if err := w.Flush(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		return openTest(t, reg, testTemplate)
	})
}

// TestWriterSuite runs the shared Writer contract against a real registry.
func TestWriterSuite(t *testing.T) {
	t.Parallel()
	backendtest.WriterSuite(t, func(t *testing.T) backends.Writer {
		return openTest(t, ocitest.New(t), testTemplate)
	})
}
