package backendtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// NullProviderVersion is the version NullProvider builds the null provider as.
const NullProviderVersion = "3.2.4"

// nullLicense stands for the LICENSE.txt HashiCorp's release zips carry
// beside the executable.
const nullLicense = "Copyright (c) tfmirror authors. The provider built from backends/backendtest/nullprovider for tfmirror's tests.\n"

// NullProvider returns release zips, by platform (OS_ARCH), of a real
// provider: terraform-provider-null built with the Go toolchain from
// backends/backendtest/nullprovider (null_resource over the plugin protocol
// 5), packaged as HashiCorp packages its releases: a deflated zip holding
// terraform-provider-null_vVERSION_x5 (mode 0755) and LICENSE.txt. The zips
// are built once per source into ~/.cache/tfmirror-tools (.ci/run builds them
// before the tests) and reused; a test skips where Go cannot build them (no
// toolchain, the module proxy unreachable).
func NullProvider(t testing.TB, platforms ...string) map[string][]byte {
	t.Helper()
	src := nullProviderSource(t)
	key, err := sourceKey(src)
	if err != nil {
		t.Fatalf("backendtest: the null provider's source: %v", err)
	}
	dir := filepath.Join(toolCache(t), "terraform-provider-null-"+NullProviderVersion+"-"+key)
	out := map[string][]byte{}
	for _, plat := range platforms {
		zipPath := filepath.Join(dir, fmt.Sprintf("terraform-provider-null_%s_%s.zip", NullProviderVersion, plat))
		if _, err := os.Stat(zipPath); err != nil {
			buildNullZip(t, src, zipPath, plat)
		}
		b, err := os.ReadFile(zipPath)
		if err != nil {
			t.Fatal(err)
		}
		out[plat] = b
	}
	return out
}

// NullProviderExecutable is the name of the executable in NullProvider's
// zips, as HashiCorp names it (the suffix is the plugin protocol).
func NullProviderExecutable() string {
	return "terraform-provider-null_v" + NullProviderVersion + "_x5"
}

func buildNullZip(t testing.TB, src, zipPath, plat string) {
	t.Helper()
	goos, goarch, ok := strings.Cut(plat, "_")
	if !ok {
		t.Fatalf("backendtest: platform %q is not OS_ARCH", plat)
	}
	goBin, err := exec.LookPath("go") // go test puts its GOROOT/bin first on PATH
	if err != nil {
		goBin = "go"
	}
	if err := os.MkdirAll(filepath.Dir(zipPath), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.CreateTemp(filepath.Dir(zipPath), ".build-*")
	if err != nil {
		t.Fatal(err)
	}
	_ = bin.Close() // only its name is wanted: go build writes it
	defer os.Remove(bin.Name())
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", bin.Name(),
		"-ldflags", "-s -w -X main.version="+NullProviderVersion, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("backendtest: the null provider could not be built for %s (go build in %s): %v\n%s", plat, src, err, out)
	}
	exe, err := os.ReadFile(bin.Name())
	if err != nil {
		t.Fatal(err)
	}
	zb := Zip(t, Entry{Name: "LICENSE.txt", Body: []byte(nullLicense), Mode: 0o644},
		Entry{Name: NullProviderExecutable(), Body: exe})
	// Written aside and renamed: test processes building at once each land
	// a whole zip (the same bytes: the build is reproducible).
	tmp := zipPath + fmt.Sprintf(".%d.tmp", os.Getpid())
	if err := os.WriteFile(tmp, zb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, zipPath); err != nil {
		os.Remove(tmp)
		t.Fatal(err)
	}
}

// nullProviderSource is the directory of the provider's module, beside this
// file.
func nullProviderSource(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("backendtest: cannot find the null provider's source")
	}
	return filepath.Join(filepath.Dir(file), "nullprovider")
}

// sourceKey is a short digest of the module's files, so an edited source is
// built again rather than taken from the cache.
func sourceKey(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// toolCache is ~/.cache/tfmirror-tools (XDG_CACHE_HOME honoured), where
// .ci/run keeps the tools it builds.
func toolCache(t testing.TB) string {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("backendtest: no home directory for the tool cache: %v", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "tfmirror-tools")
}
