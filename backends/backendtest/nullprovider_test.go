package backendtest

import (
	"archive/zip"
	"bytes"
	"testing"
)

// The null provider builds for the host and another platform, and its zips
// hold what a HashiCorp release zip holds. .ci/run runs this test first, so
// the build is cached before the tests that install it.
func TestNullProviderBuilds(t *testing.T) {
	zips := NullProvider(t, "linux_amd64", "darwin_arm64")
	for plat, zb := range zips {
		zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
		if err != nil {
			t.Fatalf("%s: %v", plat, err)
		}
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
			if f.Name == NullProviderExecutable() && f.Mode().Perm() != 0o755 {
				t.Errorf("%s: %s has mode %v, want 0755", plat, f.Name, f.Mode())
			}
		}
		if len(names) != 2 || names[0] != "LICENSE.txt" || names[1] != NullProviderExecutable() {
			t.Errorf("%s: zip holds %v", plat, names)
		}
	}
	if bytes.Equal(zips["linux_amd64"], zips["darwin_arm64"]) {
		t.Error("the two platforms' zips are the same bytes")
	}
}
