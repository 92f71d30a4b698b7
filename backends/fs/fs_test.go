package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
)

func TestReaderSuite(t *testing.T) {
	backendtest.ReaderSuite(t, func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		dir := t.TempDir()
		backendtest.WritePacked(t, dir, seeds)
		m, err := fs.Open(dir, dir, fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

// TestConformance runs the case of every capability a filesystem mirror
// has (backendtest.Capabilities) against mirrors in temp dirs, seeded
// through its Writer.
func TestConformance(t *testing.T) {
	backendtest.Conformance(t, backendtest.Place{
		Empty: func(t *testing.T) func(*testing.T) backends.Writer {
			dir := filepath.Join(t.TempDir(), "new")
			return func(t *testing.T) backends.Writer {
				m, err := fs.Open(dir, dir, fs.Options{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
		},
		Lose: func(t *testing.T, _ backends.Reader, a backends.Archive) {
			if err := os.Remove(a.Location); err != nil {
				t.Fatal(err)
			}
		},
	})
}

func TestWriterSuiteUnpacked(t *testing.T) {
	// The unpacked layout cannot hand back the original zip, so only the
	// staging guarantees apply; check them directly.
	dir := t.TempDir()
	m, err := fs.Open(dir, dir, fs.Options{Unpacked: true})
	if err != nil {
		t.Fatal(err)
	}
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	put(t, m, pkg, backendtest.ProviderZip(t, pkg, ""))
	as, err := m.Archives(context.Background(), pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 || as[0].Layout != backends.Unpacked {
		t.Fatalf("Archives = %+v, %v", as, err)
	}
	exe := filepath.Join(dir, "example.com/acme/alpha/1.0.0/linux_amd64/terraform-provider-alpha_v1.0.0")
	info, err := os.Stat(exe)
	if err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Fatalf("extracted executable: %v %v", info, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "example.com/acme/alpha/.*tfmirror-*"))
	leftovers2, _ := filepath.Glob(filepath.Join(dir, "example.com/acme/alpha/1.0.0/.*"))
	if len(leftovers)+len(leftovers2) != 1 || leftovers[0] != filepath.Join(dir, "example.com/acme/alpha/.tfmirror-lock") {
		t.Fatalf("temp files left behind: %v %v", leftovers, leftovers2)
	}
}

func put(t *testing.T, m *fs.Mirror, pkg backends.Package, zip []byte) {
	t.Helper()
	ctx := context.Background()
	st, err := m.Stage(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(zip); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(st.Path(), hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, sums, false); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
}

// The index documents are byte-identical in format to what `providers
// mirror` writes: MarshalIndent with two spaces, sorted keys, no trailing
// newline; both hashes listed; existing extra hashes kept.
func TestIndexDocumentsFormat(t *testing.T) {
	dir := t.TempDir()
	m, _ := fs.Open(dir, dir, fs.Options{})
	a := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	za, zb := backendtest.ProviderZip(t, a, ""), backendtest.ProviderZip(t, b, "")
	put(t, m, a, za)
	put(t, m, b, zb)
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	idx, _ := os.ReadFile(filepath.Join(pdir, "index.json"))
	if string(idx) != "{\n  \"versions\": {\n    \"1.0.0\": {}\n  }\n}" {
		t.Fatalf("index.json = %q", idx)
	}
	sa, _ := hashing.HashPath(filepath.Join(pdir, a.Filename()), hashing.Options{})
	sb, _ := hashing.HashPath(filepath.Join(pdir, b.Filename()), hashing.Options{})
	want := "{\n  \"archives\": {\n" +
		"    \"darwin_arm64\": {\n      \"hashes\": [\n        \"" + string(sb.H1) + "\",\n        \"" + string(sb.ZH) + "\"\n      ],\n      \"url\": \"terraform-provider-alpha_1.0.0_darwin_arm64.zip\"\n    },\n" +
		"    \"linux_amd64\": {\n      \"hashes\": [\n        \"" + string(sa.H1) + "\",\n        \"" + string(sa.ZH) + "\"\n      ],\n      \"url\": \"terraform-provider-alpha_1.0.0_linux_amd64.zip\"\n    }\n" +
		"  }\n}"
	got, _ := os.ReadFile(filepath.Join(pdir, "1.0.0.json"))
	if string(got) != want {
		t.Fatalf("1.0.0.json =\n%s\nwant\n%s", got, want)
	}
	info, _ := os.Stat(filepath.Join(pdir, "1.0.0.json"))
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", info.Mode())
	}

	// A hash of another scheme listed for the same file survives a rewrite; a
	// replaced file's old hashes do not.
	extra := strings.Replace(string(got), "\"url\": \"terraform-provider-alpha_1.0.0_linux_amd64.zip\"", "\"url\": \"terraform-provider-alpha_1.0.0_linux_amd64.zip\"", 1)
	extra = strings.Replace(extra, "\""+string(sa.H1)+"\",", "\"foo:bar\",\n        \""+string(sa.H1)+"\",", 1)
	if err := os.WriteFile(filepath.Join(pdir, "1.0.0.json"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	m2, _ := fs.Open(dir, dir, fs.Options{})
	if err := m2.Flush(context.Background(), a.Provider); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(pdir, "1.0.0.json"))
	if !strings.Contains(string(got), "\"foo:bar\"") {
		t.Fatalf("extra hash dropped:\n%s", got)
	}
}

// Flush lists what was verified when an archive landed: a listing stating
// h1: and zh: is kept without reading the archive, so an archive changed on
// disk behind the mirror's back keeps the hashes it landed with (verify
// reports it; the rewrite does not vouch for the new bytes). An archive
// that lands where a listing outlived a deleted file is listed with its own
// hashes, even when its writer died before rewriting the index.
func TestFlushKeepsWhatWasVerified(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, _ := fs.Open(dir, dir, fs.Options{})
	a := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	put(t, m, a, backendtest.ProviderZip(t, a, ""))
	put(t, m, b, backendtest.ProviderZip(t, b, ""))
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	docPath := filepath.Join(pdir, "1.0.0.json")
	before, _ := os.ReadFile(docPath)

	if err := os.WriteFile(filepath.Join(pdir, a.Filename()), backendtest.ProviderZip(t, a, "changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := mustOpen(t, dir).Flush(ctx, a.Provider); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(docPath); string(after) != string(before) {
		t.Fatalf("a rewrite listed a changed archive's new hashes:\n%s\nwas\n%s", after, before)
	}

	old, _ := hashing.HashPath(filepath.Join(pdir, b.Filename()), hashing.Options{})
	os.Remove(filepath.Join(pdir, b.Filename()))
	w := mustOpen(t, dir)
	st, err := w.Stage(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(backendtest.ProviderZip(t, b, "new")); err != nil {
		t.Fatal(err)
	}
	sums, _ := hashing.HashPath(st.Path(), hashing.Options{})
	if err := st.Commit(ctx, sums, false); err != nil {
		t.Fatal(err)
	}
	// Its writer dies here; the next one rewrites the index.
	if err := mustOpen(t, dir).Flush(ctx, b.Provider); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(docPath)
	// The rewrite lists the zh: it computed (h1: is computed only where a
	// listing states one, or with --hashes all).
	if !strings.Contains(string(got), string(sums.ZH)) || strings.Contains(string(got), string(old.H1)) || strings.Contains(string(got), string(old.ZH)) {
		t.Fatalf("after a landing over a stale listing: %s\nwant %s, not %s %s", got, sums.ZH, old.H1, old.ZH)
	}
}

func mustOpen(t *testing.T, dir string) *fs.Mirror {
	t.Helper()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A mirror full of junk is listed, not refused: each piece of junk is a
// warning that names it.
func TestJunkTolerated(t *testing.T) {
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	backendtest.WritePacked(t, dir, seeds)
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	junk := map[string]string{
		"README.md":             "stray at the top",
		"example.com/notes.txt": "stray at host level",
		"example.com/acme/alpha/terraform-provider-alpha_v1_linux_amd64.zip":          "bad version",
		"example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux.zip":             "missing arch",
		"example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64_extra.zip": "",
		"example.com/acme/alpha/terraform-provider-other_1.0.0_linux_amd64.zip":       "wrong type",
		"example.com/acme/alpha/random.bin":                                           "stray",
		"example.com/acme/alpha/.terraform-provider-alpha_1.0.0_linux_amd64.zip":      "staging file: silently ignored",
		"example.com/Acme.Corp/x/terraform-provider-x_1.0.0_linux_amd64.zip":          "bad namespace",
		"bad..host/acme/x/terraform-provider-x_1.0.0_linux_amd64.zip":                 "bad host",
		"example.com/acme/alpha/nope/linux_amd64/terraform-provider-alpha":            "bad version dir",
		"example.com/acme/alpha/2.0.0/linux_amd64_x/terraform-provider-alpha":         "platform with three parts",
		"example.com/acme/alpha/2.0.0/linux_arm64.lock":                               "client lock file: silently ignored",
	}
	for p, body := range junk {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pdir, "index.json"), []byte(`{"versions":{"1.0.0":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "1.0.0.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pdir, filepath.Join(dir, "example.com", "link-ns")); err != nil {
		t.Fatal(err)
	}

	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ps, err := m.Providers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].String() != "example.com/acme/alpha" {
		t.Fatalf("Providers = %v", ps)
	}
	all, err := m.AllArchives(ctx, ps[0])
	if err != nil {
		t.Fatal(err)
	}
	// 1.0.0 linux_amd64 from the seed; the "_extra" name is the same package
	// (extra parts ignored, as the clients do), so it does not add a row.
	if len(all) != 1 {
		t.Fatalf("archives = %v", all)
	}
	warnings := strings.Join(m.Warnings(), "\n")
	for _, want := range []string{
		"README.md: ignored stray file",
		"example.com/notes.txt: ignored stray file",
		`terraform-provider-alpha_v1_linux_amd64.zip: ignored: version "v1": must not start with "v"`,
		"terraform-provider-alpha_1.0.0_linux.zip: ignored: file name does not include version, OS and architecture",
		"terraform-provider-other_1.0.0_linux_amd64.zip: ignored",
		"random.bin: ignored stray file",
		"Acme.Corp/x: ignored",
		"bad..host/acme/x: ignored",
		"alpha/nope: ignored directory",
		`linux_amd64_x: ignored directory: platform "linux_amd64_x"`,
		"1.0.0.json: ignored: not a valid version document",
		"link-ns: ignored symlink",
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("no warning containing %q in:\n%s", want, warnings)
		}
	}
	for _, silent := range []string{".terraform-provider-alpha", "linux_arm64.lock"} {
		if strings.Contains(warnings, silent) {
			t.Errorf("warned about %s", silent)
		}
	}
}

func TestMixedLayouts(t *testing.T) {
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	backendtest.WritePacked(t, dir, seeds)
	// An unpacked package of another version and one of the same package.
	for _, p := range []string{"2.0.0/darwin_arm64", "1.0.0/linux_amd64"} {
		d := filepath.Join(dir, "example.com/acme/alpha", p)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "terraform-provider-alpha"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := fs.Open(dir, dir, fs.Options{})
	p, _ := backends.ParseProvider("example.com/acme/alpha")
	all, err := m.AllArchives(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Version.String() != "2.0.0" || all[0].Layout != backends.Unpacked || all[1].Layout != backends.Packed {
		t.Fatalf("archives = %+v", all)
	}
	if _, err := m.Open(context.Background(), all[0]); err == nil || !strings.Contains(err.Error(), "only an unpacked directory") {
		t.Fatalf("Open unpacked: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(t.TempDir(), "nope"), "no such directory"},
		{file, "not a directory"},
	} {
		_, err := fs.Open("./m", c.path, fs.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mirror ./m") {
			t.Errorf("Open(%s): %v", c.path, err)
		}
	}
}

func TestAudit(t *testing.T) {
	dir := t.TempDir()
	m, _ := fs.Open(dir, dir, fs.Options{})
	a := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	put(t, m, a, backendtest.ProviderZip(t, a, ""))
	p := a.Provider
	if probs := m.Audit(context.Background(), p); len(probs) != 0 {
		t.Fatalf("clean mirror: %+v", probs)
	}
	// An archive listed but deleted, one present whose version index.json
	// does not list, and one present that its <version>.json does not list:
	// a network mirror serving the directory offers the first and hides the
	// others, so each is a problem.
	os.Remove(filepath.Join(dir, "example.com/acme/alpha", a.Filename()))
	b := backendtest.Pkg(t, "example.com/acme/alpha", "2.0.0", "linux_amd64")
	c := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	backendtest.WritePacked(t, dir, []backendtest.Seed{{Package: b, Zip: backendtest.ProviderZip(t, b, "")}, {Package: c, Zip: backendtest.ProviderZip(t, c, "")}})
	probs := m.Audit(context.Background(), p)
	var text []string
	for _, pr := range probs {
		text = append(text, pr.Detail)
	}
	all := strings.Join(text, "\n")
	if len(probs) != 3 || !strings.Contains(all, "1.0.0.json lists terraform-provider-alpha_1.0.0_linux_amd64.zip, which is missing") ||
		!strings.Contains(all, "example.com/acme/alpha 2.0.0 linux_amd64: terraform-provider-alpha_2.0.0_linux_amd64.zip is on disk but not listed in example.com/acme/alpha/index.json") ||
		!strings.Contains(all, "example.com/acme/alpha 1.0.0 darwin_arm64: terraform-provider-alpha_1.0.0_darwin_arm64.zip is on disk but not listed in example.com/acme/alpha/1.0.0.json") {
		t.Fatalf("audit:\n%s", all)
	}
	for _, pr := range probs {
		if pr.Package.Version == nil || pr.Missing != (pr.Package.String() == a.String()) {
			t.Errorf("problem %+v", pr)
		}
	}
	// Flush lists what is on disk again.
	if err := m.Flush(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if probs := m.Audit(context.Background(), p); len(probs) != 0 {
		t.Fatalf("after Flush: %+v", probs)
	}
}

// A staging file whose writer died (no lock held) is removed by the next
// writer; a live one (locked) is left alone.
func TestStaleStagingSwept(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(pdir, ".terraform-provider-alpha_1.0.0_linux_amd64.zip.tfmirror-tmp-123")
	if err := os.WriteFile(stale, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, _ := fs.Open(dir, dir, fs.Options{})
	fs.NameStagingFiles(live) // an unnamed one (Linux) cannot be swept
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	st, err := live.Stage(context.Background(), pkg) // holds its lock
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale staging file not swept: %v", err)
	}
	other, _ := fs.Open(dir, dir, fs.Options{})
	put(t, other, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64"), backendtest.ProviderZip(t, pkg, ""))
	if _, err := os.Stat(st.Path()); err != nil {
		t.Fatalf("a live staging file was swept: %v", err)
	}
}

// A package built by hand with traversal in its names cannot make Stage
// write outside the mirror.
func TestStageRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	m, _ := fs.Open(dir, dir, fs.Options{})
	good := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	for _, bad := range []backends.Package{
		{Provider: backends.Provider{Hostname: "example.com", Namespace: "..", Type: "alpha"}, Version: good.Version, Platform: good.Platform},
		{Provider: backends.Provider{Hostname: "example.com", Namespace: "acme", Type: "../../x"}, Version: good.Version, Platform: good.Platform},
		{Provider: good.Provider, Version: good.Version, Platform: backends.Platform{OS: "linux/../../../x", Arch: "amd64"}},
	} {
		if st, err := m.Stage(context.Background(), bad); err == nil {
			st.Abort()
			t.Errorf("Stage(%+v) accepted", bad.Provider)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("something was created beside the mirror: %v", entries)
	}
}

// A mirror holding 0.0.0, in the shape of OpenTofu's own fixture
// (testdata/filesystem-mirror-unspecified), lists it, as OpenTofu's
// AvailableVersions does, with OpenTofu's warning that it will not be used.
func TestUnspecifiedVersionWarned(t *testing.T) {
	dir := t.TempDir()
	pkgDir := filepath.Join(dir, "registry.opentofu.org", "testnamespace", "unspecified", "0.0.0", "linux_amd64")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkgDir, "unspecified-provider"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	backendtest.WritePacked(t, dir, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alpha, _ := backends.ParseProvider("example.com/acme/alpha")
	if _, err := m.Versions(ctx, alpha); err != nil || len(m.Warnings()) != 0 {
		t.Fatalf("a mirror without 0.0.0: %v %q", err, m.Warnings())
	}
	p, _ := backends.ParseProvider("registry.opentofu.org/testnamespace/unspecified")
	vs, err := m.Versions(ctx, p)
	if err != nil || len(vs) != 1 || !backends.Unspecified(vs[0]) {
		t.Fatalf("Versions = %v, %v", vs, err)
	}
	want := "Provider registry.opentofu.org/testnamespace/unspecified has an unspecified (0.0.0) version available in the filesystem mirror, source at " + dir +
		". It will not be used. If the version 0.0.0 is intended to represent a non-published provider, consider using dev_overrides - https://opentofu.org/docs/cli/config/config-file/#development-overrides-for-provider-developers"
	if w := m.Warnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want OpenTofu's:\n%s", w, want)
	}
}

// A listing without sizes (what a plan lists of its destination) is the
// listing, each zip's size -1; ListUnsized lists so where a place can, and
// the versions asked for.
func TestAllArchivesUnsized(t *testing.T) {
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	backendtest.WritePacked(t, dir, seeds)
	m, _ := fs.Open(dir, dir, fs.Options{})
	p, _ := backends.ParseProvider("example.com/acme/alpha")
	ctx := context.Background()
	sized, err := m.AllArchives(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	unsized, err := m.AllArchivesUnsized(ctx, p)
	if err != nil || len(unsized) != len(sized) || len(sized) != 4 {
		t.Fatalf("%d archives unsized, %d sized: %v", len(unsized), len(sized), err)
	}
	for i, a := range unsized {
		want := sized[i]
		if want.Size <= 0 || a.Size != -1 {
			t.Errorf("%s: size %d listed, %d unsized; want a size, and -1", a.Package, want.Size, a.Size)
		}
		want.Size = -1
		if a.Package.String() != want.Package.String() || a.Location != want.Location || a.Layout != want.Layout {
			t.Errorf("unsized %+v, sized %+v", a, want)
		}
	}
	v1, _ := backends.ParseVersion("1.0.0")
	got, err := backends.ListUnsized(ctx, m, p, []backends.Version{v1})
	if err != nil || len(got) != 2 || got[0].Version.String() != "1.0.0" || got[0].Size != -1 {
		t.Errorf("ListUnsized at 1.0.0: %+v, %v", got, err)
	}
}

// The commits of a version's platforms look for its version document (for
// a listing that outlived its archive) until one finds it missing, then not
// again before the provider's next Flush, as the S3 store does: a listing
// made meanwhile lasts until that Flush, which lists the landed archive's
// own hashes. (A tfmirror writer lists only archives that have landed,
// whose names a commit finds taken; such a listing is made by hand.) After
// the Flush, a platform deleted by hand that lands again with other bytes
// is unlisted before it lands.
func TestCommitsLookForAMissingVersionDocumentOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := mustOpen(t, dir)
	a := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	docPath := filepath.Join(pdir, "1.0.0.json")
	commit := func(pkg backends.Package, salt string) hashing.Sums {
		t.Helper()
		st, sums := stage(t, m, pkg, backendtest.ProviderZip(t, pkg, salt))
		if err := st.Commit(ctx, sums, false); err != nil {
			t.Fatal(err)
		}
		return sums
	}
	commit(a, "")
	made := `{"archives":{"darwin_arm64":{"hashes":["zh:` + strings.Repeat("0", 64) + `"],"url":"` + b.Filename() + `"}}}`
	if err := os.WriteFile(docPath, []byte(made), 0o644); err != nil {
		t.Fatal(err)
	}
	bSums := commit(b, "")
	if got, _ := os.ReadFile(docPath); string(got) != made {
		t.Fatalf("a commit looked for the document a commit of its version found missing: it now holds %s", got)
	}
	if err := m.Flush(ctx, a.Provider); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(docPath); !strings.Contains(string(got), string(bSums.ZH)) || strings.Contains(string(got), strings.Repeat("0", 64)) {
		t.Fatalf("the Flush kept the listing made by hand: %s", got)
	}

	if err := os.Remove(filepath.Join(pdir, b.Filename())); err != nil {
		t.Fatal(err)
	}
	commit(b, "new")
	if got, _ := os.ReadFile(docPath); strings.Contains(string(got), string(bSums.ZH)) {
		t.Fatalf("an archive landed under the listing of the one deleted before it: %s", got)
	}
}

// A Flush rewrites only the documents whose content changes: one that
// would be written as it is stays the same file.
func TestFlushLeavesUnchangedDocumentsAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := mustOpen(t, dir)
	a := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	put(t, m, a, backendtest.ProviderZip(t, a, "")) // and Flush
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	stat := func(name string) os.FileInfo {
		t.Helper()
		fi, err := os.Stat(filepath.Join(pdir, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	doc, index := stat("1.0.0.json"), stat("index.json")
	if err := m.Flush(ctx, a.Provider); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(doc, stat("1.0.0.json")) || !os.SameFile(index, stat("index.json")) {
		t.Fatal("a Flush with nothing new rewrote the documents")
	}
	put(t, m, b, backendtest.ProviderZip(t, b, ""))
	if os.SameFile(doc, stat("1.0.0.json")) {
		t.Fatal("a Flush after a landing left the version document as it was")
	}
	if !os.SameFile(index, stat("index.json")) {
		t.Fatal("a Flush rewrote index.json, whose versions did not change")
	}
}
