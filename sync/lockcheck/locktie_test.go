package lockcheck_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// The rule that ties a lock's hashes to platforms: a signed SHA256SUMS
// line ties a zh: to its package's platform only where it names
// terraform-provider-TYPE_VERSION_OS_ARCH.zip (of this provider: another
// provider's zip of the same version and platform is not this one's); the
// manifest's line, and a zh: nothing names, are untied; an h1: no archive
// matches is a package of an unknown platform.
func TestTieIndexTiesOnlyPackages(t *testing.T) {
	p, _ := backends.ParseProvider("registry.terraform.io/hashicorp/google")
	v, _ := backends.ParseVersion("6.12.0")
	sum := func(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }
	doc := fmt.Sprintf("%s  terraform-provider-google_6.12.0_linux_amd64.zip\n%s  terraform-provider-google_6.12.0_darwin_arm64.zip\n%s  terraform-provider-google_6.12.0_manifest.json\n%s  terraform-provider-google-beta_6.12.0_windows_amd64.zip\n",
		sum("linux"), sum("darwin"), sum("manifest"), sum("beta"))
	h1 := func(s string) hashing.Hash {
		d := sha256.Sum256([]byte(s))
		return hashing.Hash("h1:" + base64.StdEncoding.EncodeToString(d[:]))
	}
	idx := lockcheck.NewTieIndex(p, v)
	if err := idx.AddSums([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	plat, _ := backends.ParsePlatform("freebsd_amd64")
	idx.AddArchive(backends.Archive{Package: backends.Package{Provider: p, Version: v, Platform: plat},
		Evidence: []hashing.Evidence{{Hashes: []hashing.Hash{h1("freebsd")}}}})
	// An archive stating linux_amd64's signed zh: ties it too; the
	// platform stays assumed (the lock holds nothing else of it).
	linux, _ := backends.ParsePlatform("linux_amd64")
	idx.AddArchive(backends.Archive{Package: backends.Package{Provider: p, Version: v, Platform: linux},
		Evidence: []hashing.Evidence{{Hashes: []hashing.Hash{hashing.Hash("zh:" + sum("linux"))}}}})

	zh := func(s string) hashing.Hash { return hashing.Hash("zh:" + sum(s)) }
	ties := idx.Tie(sync.Locked{Version: v, Hashes: []hashing.Hash{
		zh("linux"), zh("darwin"), zh("manifest"), zh("beta"), zh("nothing"), h1("freebsd"), h1("elsewhere"), "x1:unknown",
		"h1:!!!not-base64@@@", hashing.Hash("zh:" + sum("short")[:63])}})
	if got := fmt.Sprint(ties.Platforms); got != "[darwin_arm64 freebsd_amd64 linux_amd64]" {
		t.Errorf("platforms %s", got)
	}
	// The platforms tied only by the signed SHA256SUMS are assumed; a
	// malformed hash is neither a platform nor a gap.
	if got := fmt.Sprint(ties.Assumed); got != "[darwin_arm64 linux_amd64]" {
		t.Errorf("assumed %s", got)
	}
	if len(ties.Malformed) != 2 {
		t.Errorf("malformed %v", ties.Malformed)
	}
	if len(ties.Unplaced) != 1 || ties.Unplaced[0].Hash != h1("elsewhere") {
		t.Errorf("unplaced %+v", ties.Unplaced)
	}
	want := map[hashing.Hash]string{zh("manifest"): "terraform-provider-google_6.12.0_manifest.json",
		zh("beta"): "terraform-provider-google-beta_6.12.0_windows_amd64.zip", zh("nothing"): ""}
	if len(ties.Untied) != len(want) {
		t.Fatalf("untied %+v", ties.Untied)
	}
	for _, u := range ties.Untied {
		if f, ok := want[u.Hash]; !ok || f != u.File {
			t.Errorf("untied %+v", u)
		}
	}
}
