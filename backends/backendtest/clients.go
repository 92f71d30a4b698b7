package backendtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TofuVersion is the OpenTofu release .ci/run builds and caches.
const TofuVersion = "1.12.6"

// Tofu returns the path of the real OpenTofu client, or skips the test with
// a message saying how to get it: $TFMIRROR_TOFU (.ci/run sets it), the
// build .ci/run caches under ~/.cache/tfmirror-tools, or tofu on PATH.
func Tofu(t testing.TB, why string) string {
	t.Helper()
	if p := os.Getenv("TFMIRROR_TOFU"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache")
		}
	}
	if p := filepath.Join(cache, "tfmirror-tools", "tofu-"+TofuVersion); cache != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("tofu"); err == nil {
		return p
	}
	t.Skipf("tofu is not installed (bash .ci/run builds OpenTofu %s into ~/.cache/tfmirror-tools): skipping %s", TofuVersion, why)
	return ""
}

// Terraform returns the path of the real Terraform client, or skips the
// test with a message.
func Terraform(t testing.TB, why string) string {
	t.Helper()
	p, err := exec.LookPath("terraform")
	if err != nil {
		t.Skipf("terraform is not installed: skipping %s", why)
	}
	return p
}
