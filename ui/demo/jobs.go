package demo

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing"
)

// LockedPlatforms are the platforms the demo's lock file covers, as
// `terraform providers lock -platform=darwin_arm64 -platform=linux_amd64`
// would write it from the primary mirror.
var LockedPlatforms = []string{"darwin_arm64", "linux_amd64"}

// lockedVersions are the provider versions the demo's configuration locks:
// the secondary mirror lacks some of their packages (the gaps to find).
var lockedVersions = []struct{ provider, version, constraints string }{
	{"acme/cloud", "2.0.0", "~> 2.0.0"},
	{"acme/dns", "3.2.0", ">= 3.0.0"},
	{"acme/queue", "0.9.0", "~> 0.9"},
}

// ReleaseProvider is the provider of the demo's release directory.
const ReleaseProvider = Host + "/acme/widget"

// releasePlatforms are the platforms of the demo's release.
var releasePlatforms = []string{"darwin_arm64", "linux_amd64", "windows_amd64"}

// writeInfra writes a configuration using the locked providers, with its
// lock file, into dir: the lock names hashes of the primary mirror's
// packages, for LockedPlatforms.
func writeInfra(w *World, dir string) error {
	f := lockfile.New(lockfile.HeaderTerraform)
	var required strings.Builder
	for _, l := range lockedVersions {
		var hs []hashing.Hash
		for _, plat := range LockedPlatforms {
			pkg, err := pkgOf(l.provider, l.version, plat)
			if err != nil {
				return err
			}
			zip := filepath.Join(w.Primary, pkg.Provider.HostnameForDisplay(), pkg.Provider.Namespace, pkg.Provider.Type, pkg.Filename())
			h1, err := hashing.ZipH1(zip, hashing.Options{})
			if err != nil {
				return err
			}
			zh, err := hashing.ZipZH(zip)
			if err != nil {
				return err
			}
			hs = append(hs, h1, zh)
		}
		pkg, err := pkgOf(l.provider, l.version, LockedPlatforms[0])
		if err != nil {
			return err
		}
		if err := f.Set(lockfile.Provider{Addr: pkg.Provider, Version: pkg.Version, Constraints: l.constraints, Hashes: hs}); err != nil {
			return err
		}
		name := strings.TrimPrefix(l.provider, "acme/")
		fmt.Fprintf(&required, "    %s = {\n      source  = %q\n      version = %q\n    }\n", name, l.provider, l.constraints)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tf := "terraform {\n  required_providers {\n" + required.String() + "  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, lockfile.DefaultName), f.Bytes(), 0o644)
}

// writeRelease writes a provider release as goreleaser leaves it in dist/:
// the zips, their SHA256SUMS, its detached signature and the publisher's
// public key (acme.asc), made for the demo with a new key.
func writeRelease(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var sums strings.Builder
	for _, plat := range releasePlatforms {
		pkg, err := pkgOf("acme/widget", "1.0.0", plat)
		if err != nil {
			return err
		}
		zip := Zip(pkg, "", 0)
		if err := os.WriteFile(filepath.Join(dir, pkg.Filename()), zip, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(zip), pkg.Filename())
	}
	key, err := openpgp.NewEntity("acme releases", "tfmirror demo", "releases@acme.example", &packet.Config{
		Algorithm: packet.PubKeyAlgoEdDSA, Curve: packet.Curve25519, Time: func() time.Time { return time.Now().Add(-time.Minute) }})
	if err != nil {
		return err
	}
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, key, strings.NewReader(sums.String()), nil); err != nil {
		return err
	}
	var pub bytes.Buffer
	aw, err := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err == nil {
		err = key.Serialize(aw)
	}
	if err == nil {
		err = aw.Close()
	}
	if err != nil {
		return err
	}
	base := filepath.Join(dir, "terraform-provider-widget_1.0.0_SHA256SUMS")
	for name, b := range map[string][]byte{base: []byte(sums.String()), base + ".sig": sig.Bytes(), filepath.Join(dir, "acme.asc"): pub.Bytes()} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
