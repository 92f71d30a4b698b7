package lockcheck_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// Without platforms, UpdateLock completes a lock for the platforms it is
// about (check's rule): a lock `init` wrote through a mirror on two
// platforms (one h1: each) gets both platforms' zh:, and no other
// platform of the four the mirror holds; a provider -p adds gets the
// platforms the rest of the file is about; a lock whose hashes tie to no
// platform is a NoPlatformsError naming the provider.
func TestUpdateLockWithoutPlatformsCompletesWhatTheLockIsAbout(t *testing.T) {
	ctx := chkCtx(t)
	dir, m := chkMirror(t)
	mine := []string{"darwin_arm64", "linux_amd64"}
	lock := func(hashes ...hashing.Hash) *lockfile.File {
		var q []string
		for _, h := range hashes {
			q = append(q, fmt.Sprintf("    %q,", h))
		}
		f, err := lockfile.Parse([]byte(fmt.Sprintf("provider \"example.com/acme/alpha\" {\n  version = \"1.2.0\"\n  hashes = [\n%s\n  ]\n}\n", strings.Join(q, "\n"))), "lock.hcl")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	var h1s []hashing.Hash
	for _, plat := range mine {
		h1s = append(h1s, independentSums(t, zipPath(dir, "example.com/acme/alpha", "1.2.0", plat)).H1)
	}
	f := lock(h1s...)
	ups, problems, err := lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, "acme/alpha", "acme/beta")}})
	if err != nil || len(problems) > 0 || len(ups) != 2 {
		t.Fatalf("err %v, problems %+v, updates %+v", err, problems, ups)
	}
	for _, prov := range chkProviders {
		l := lockedOf(t, f, prov)
		if len(l.Hashes) != 2*len(mine) {
			t.Errorf("%s: %d hashes, want h1: and zh: of %v: %v", prov, len(l.Hashes), mine, l.Hashes)
		}
		for _, plat := range mine {
			s := independentSums(t, zipPath(dir, prov, "1.2.0", plat))
			if !hasHash(l.Hashes, s.H1) || !hasHash(l.Hashes, s.ZH) {
				t.Errorf("%s %s: lock lacks %v", prov, plat, s.List())
			}
		}
	}
	for _, u := range ups {
		if got := fmt.Sprint(u.Platforms); got != "[darwin_arm64 linux_amd64]" || len(u.Assumed) != 0 || len(u.NoH1) != 0 {
			t.Errorf("%s: platforms %s, assumed %v, no h1 %v", u.Provider, got, u.Assumed, u.NoH1)
		}
		if wantFromFile := u.Provider.Type == "beta"; u.FromFile != wantFromFile || (len(u.Notes()) > 0) != wantFromFile {
			t.Errorf("%s: from the file %v, notes %q", u.Provider, u.FromFile, u.Notes())
		}
	}

	// Hashes of packages the mirror does not hold say no platform.
	f = lock("h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	before := string(f.Bytes())
	_, _, err = lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{})
	var none *lockcheck.NoPlatformsError
	if !errors.As(err, &none) || len(none.Providers) != 1 || !strings.Contains(err.Error(), "--platform") || string(f.Bytes()) != before {
		t.Errorf("untied lock: %v\n%s", err, f.Bytes())
	}
}

// AssumedNote is the one wording of assumed platforms: it names them
// and how to narrow.
func TestAssumedNote(t *testing.T) {
	if lockcheck.AssumedNote(nil) != "" {
		t.Error("a note without assumed platforms")
	}
	p, _ := backends.ParseProvider("example.com/acme/alpha")
	v, _ := backends.ParseVersion("1.0.0")
	n := lockcheck.AssumedLine(p, v, plats(t, "linux_arm64", "windows_amd64"))
	if !strings.HasPrefix(n, "example.com/acme/alpha 1.0.0: assumed linux_arm64, windows_amd64: ") || !strings.Contains(n, "--platform") {
		t.Errorf("%q", n)
	}
}
