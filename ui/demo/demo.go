package demo

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
)

// Host is the hostname of the demo's providers. The clients' default
// registry, so `source = "acme/cloud"` finds them through a mirror.
const Host = "registry.terraform.io"

// World is a built sample world.
type World struct {
	// Dir holds everything below.
	Dir string
	// Primary is a complete filesystem mirror; Secondary lacks some
	// platforms and versions and holds one different archive.
	Primary, Secondary string
	// Modules is a directory of module packages, filled by ServeModules
	// (DIR/HOST/NAMESPACE/NAME/SYSTEM/VERSION.zip).
	Modules string
	// Infra is a configuration with its .terraform.lock.hcl, locking
	// versions the secondary mirror lacks packages of.
	Infra string
	// Release is a signed provider release as goreleaser leaves it
	// (ReleaseProvider; its key is Release/acme.asc).
	Release string

	certOnce sync.Once
	certVal  *worldCert
	certErr  error
}

// Release is one provider version and the platforms it is built for.
type Release struct {
	Provider  string // NAMESPACE/TYPE on Host
	Version   string
	Platforms []string
	// Size pads the zip with incompressible data to about this many bytes,
	// so transfers take long enough to watch.
	Size int
}

// Releases is everything the primary mirror holds.
func Releases() []Release {
	allPlatforms := []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}
	dnsPlatforms := []string{"darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}
	qPlatforms := []string{"darwin_arm64", "linux_amd64", "linux_arm64"}
	oldPlatforms := []string{"linux_amd64", "windows_amd64"}
	var rs []Release
	for _, v := range []string{"2.1.0", "2.0.0", "1.2.0", "1.1.0", "1.0.0"} {
		size := 0
		if strings.HasPrefix(v, "2.") {
			size = 768 << 10
		}
		rs = append(rs, Release{"acme/cloud", v, allPlatforms, size})
	}
	for _, v := range []string{"3.2.0", "3.1.0", "3.0.1"} {
		rs = append(rs, Release{"acme/dns", v, dnsPlatforms, 0})
	}
	for _, v := range []string{"0.9.0", "0.8.0", "0.7.0", "0.6.0"} {
		rs = append(rs, Release{"acme/queue", v, qPlatforms, 0})
	}
	for i := 30; i >= 1; i-- {
		rs = append(rs, Release{"acme/legacy", fmt.Sprintf("0.%d.0", i), oldPlatforms, 0})
	}
	return rs
}

// inSecondary says which packages the secondary mirror holds, and with what
// salt: a different salt is a different archive.
func inSecondary(r Release, platform string) (salt string, ok bool) {
	switch r.Provider {
	case "acme/cloud":
		switch {
		case r.Version == "2.1.0", platform == "windows_amd64":
			return "", false
		case r.Version == "2.0.0" && platform == "linux_amd64":
			return "rebuilt", true // the conflict
		case r.Version == "2.0.0" && (platform == "darwin_amd64" || platform == "darwin_arm64"):
			return "", false
		}
		return "", true
	case "acme/dns":
		return "", r.Version != "3.2.0"
	case "acme/legacy":
		var minor int
		_, _ = fmt.Sscanf(r.Version, "0.%d.0", &minor) // the demo's own versions, all 0.N.0
		return "", minor <= 20 && platform == "linux_amd64"
	}
	return "", false
}

// Open is a world Build wrote into dir before (tfmirror demo --keep).
func Open(dir string) (*World, error) {
	w := paths(dir)
	if fi, err := os.Stat(w.Primary); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a demo world (tfmirror demo --keep %[1]s builds one)", dir)
	}
	return w, nil
}

func paths(dir string) *World {
	return &World{Dir: dir, Primary: filepath.Join(dir, "primary"), Secondary: filepath.Join(dir, "secondary"), Modules: filepath.Join(dir, "modules"),
		Infra: filepath.Join(dir, "infra"), Release: filepath.Join(dir, "release")}
}

// Build writes the world into dir (which must exist and be empty or not
// exist yet).
func Build(ctx context.Context, dir string) (*World, error) {
	w := paths(dir)
	// Both mirrors list h1: and zh: of every archive (as --hashes all
	// writes them), so every kind of check shows in the world.
	all := fs.Options{Create: true, Hashing: hashing.Options{AllHashes: true}}
	primary, err := fs.Open(w.Primary, w.Primary, all)
	if err != nil {
		return nil, err
	}
	secondary, err := fs.Open(w.Secondary, w.Secondary, all)
	if err != nil {
		return nil, err
	}
	flush := map[*fs.Mirror]map[backends.Provider]bool{primary: {}, secondary: {}}
	for _, r := range Releases() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, plat := range r.Platforms {
			pkg, err := pkgOf(r.Provider, r.Version, plat)
			if err != nil {
				return nil, err
			}
			if err := put(w.Primary, pkg, Zip(pkg, "", r.Size)); err != nil {
				return nil, err
			}
			flush[primary][pkg.Provider] = true
			if salt, ok := inSecondary(r, plat); ok {
				if err := put(w.Secondary, pkg, Zip(pkg, salt, r.Size)); err != nil {
					return nil, err
				}
				flush[secondary][pkg.Provider] = true
			}
		}
	}
	// Index documents as `terraform providers mirror` writes them, so each
	// mirror states the hashes of what it holds.
	for m, ps := range flush {
		for p := range ps {
			if err := m.Flush(ctx, p); err != nil {
				return nil, err
			}
		}
	}
	if err := writeInfra(w, w.Infra); err != nil {
		return nil, err
	}
	if err := writeRelease(w.Release); err != nil {
		return nil, err
	}
	return w, nil
}

func pkgOf(provider, version, platform string) (backends.Package, error) {
	p, err := backends.ParseProvider(Host + "/" + provider)
	if err != nil {
		return backends.Package{}, err
	}
	v, err := backends.ParseVersion(version)
	if err != nil {
		return backends.Package{}, err
	}
	plat, err := backends.ParsePlatform(platform)
	if err != nil {
		return backends.Package{}, err
	}
	return backends.Package{Provider: p, Version: v, Platform: plat}, nil
}

// put writes a zip where a filesystem mirror keeps it. Plain writes, not
// the staged and synced commits of a sync: the world is scratch data, and
// building it must take a moment, not seconds of fsync.
func put(dir string, pkg backends.Package, zipBytes []byte) error {
	p := filepath.Join(dir, pkg.Provider.HostnameForDisplay(), pkg.Provider.Namespace, pkg.Provider.Type, pkg.Filename())
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, zipBytes, 0o644)
}

// Zip is a release zip for pkg: an executable script named as the clients
// expect (terraform-provider-TYPE_vVERSION) and, to reach size bytes, a data
// file of pseudo-random bytes seeded from the package, so the same package
// always gives the same zip. salt makes a different archive of the same
// package.
func Zip(pkg backends.Package, salt string, size int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, mode os.FileMode, body []byte, method uint16) {
		h := &zip.FileHeader{Name: name, Method: method}
		h.SetMode(mode)
		f, err := zw.CreateHeader(h)
		if err == nil {
			_, _ = f.Write(body)
		}
	}
	script := fmt.Sprintf("#!/bin/sh\n# tfmirror demo: %s %s\necho 'terraform-provider-%s is a tfmirror demo, not a real provider'\nexit 1\n",
		pkg, salt, pkg.Provider.Type)
	add(fmt.Sprintf("terraform-provider-%s_v%s", pkg.Provider.Type, pkg.Version), 0o755, []byte(script), zip.Deflate)
	if size > 0 {
		seed := sha256.Sum256([]byte(pkg.String() + salt))
		rng := rand.NewChaCha8(seed)
		data := make([]byte, size)
		_, _ = rng.Read(data)
		add("data.bin", 0o644, data, zip.Store)
	}
	_ = zw.Close() // writing to a bytes.Buffer cannot fail
	return buf.Bytes()
}
