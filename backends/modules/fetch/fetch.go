package fetch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/hashing"
)

// Defaults for Options.
const (
	DefaultMaxDownload int64 = 1 << 30
	DefaultMaxUnpacked int64 = 2 << 30
	DefaultMaxFiles          = 100_000
	// maxIndirections bounds X-Terraform-Get hops, as go-getter does.
	maxIndirections = 10
)

// Options configure a Builder.
type Options struct {
	// HTTP is the HTTP layer for archive downloads and X-Terraform-Get
	// pages; the zero value trusts the system's roots.
	HTTP httpclient.Client
	// Credentials supplies the registry's token for direct locations that
	// ask for it (use_registry_credentials: true), and for no others. Even
	// then it rides only where the token's rule allows: to the registry's
	// own host and port over https.
	Credentials backends.Credentials
	// Git is the git binary; "" looks it up on PATH.
	Git string
	// MaxDownload caps one archive download (bytes); 0 means the default.
	MaxDownload int64
	// MaxUnpacked and MaxFiles cap a package's unpacked size and file
	// count; 0 means the defaults.
	MaxUnpacked int64
	MaxFiles    int
	// TempDir is where packages are built; "" means os.TempDir().
	TempDir string
	// Hashing caps hashing the built zip.
	Hashing hashing.Options
}

// Builder fetches and packs module packages. It implements
// modules.Builder and is safe for concurrent use. Close removes the git
// mirrors it keeps.
type Builder struct {
	opts    Options
	mirrors gitMirrors
}

var _ modules.Builder = (*Builder)(nil)

// New returns a Builder.
func New(o Options) *Builder {
	if o.MaxDownload == 0 {
		o.MaxDownload = DefaultMaxDownload
	}
	if o.MaxUnpacked == 0 {
		o.MaxUnpacked = DefaultMaxUnpacked
	}
	if o.MaxFiles == 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	return &Builder{opts: o}
}

func (b *Builder) limits() Limits {
	return Limits{MaxBytes: b.opts.MaxUnpacked, MaxFiles: b.opts.MaxFiles}
}

// Build fetches the package at loc into a temporary tree, checks that the
// module's subdir is there, and packs it as a zip in TempDir. The caller
// removes the zip (Package.Remove).
func (b *Builder) Build(ctx context.Context, m modules.Module, v modules.Version, loc modules.Location, progress func(int64)) (*modules.Package, error) {
	label := m.String() + " " + v.String()
	fail := func(err error) error { return fmt.Errorf("module %s: package at %s: %w", label, loc, err) }
	work, err := os.MkdirTemp(b.opts.TempDir, "tfmirror-module-")
	if err != nil {
		return nil, fail(err)
	}
	defer os.RemoveAll(work)
	if progress == nil {
		progress = func(int64) {}
	}
	f := &fetcher{b: b, ctx: ctx, work: work, progress: progress, registryHost: m.Host}
	var tree, revision string
	if loc.Direct {
		tree, err = f.direct(loc.Source, loc.UseRegistryCredentials)
	} else {
		tree, revision, err = f.source(loc.Source, 0, nil)
	}
	if err != nil {
		return nil, fail(err)
	}
	if loc.Subdir != "" {
		fi, err := os.Stat(filepath.Join(tree, filepath.FromSlash(loc.Subdir)))
		if err != nil || !fi.IsDir() {
			return nil, fail(fmt.Errorf("the package has no directory %q, which the location names", loc.Subdir))
		}
	}
	pkg, err := b.pack(ctx, tree)
	if err != nil {
		return nil, fail(err)
	}
	pkg.Module, pkg.Version = m, v
	pkg.Source, pkg.Subdir, pkg.Revision = loc.Source, loc.Subdir, revision
	return pkg, nil
}

// pack zips tree into a new file in TempDir and hashes it.
func (b *Builder) pack(ctx context.Context, tree string) (*modules.Package, error) {
	out, err := os.CreateTemp(b.opts.TempDir, "tfmirror-module-*.zip")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = out.Close() // discarded: removed below
			os.Remove(out.Name())
		}
	}()
	zh := hashing.NewZipHasher()
	files, err := Pack(ctx, tree, io.MultiWriter(out, zh), b.limits())
	if err != nil {
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	h1, err := hashing.ZipH1(out.Name(), b.opts.Hashing)
	if err != nil {
		return nil, fmt.Errorf("hashing the packed zip: %w", err)
	}
	ok = true
	return &modules.Package{Path: out.Name(), Size: zh.Size(), Files: files, Sums: hashing.Sums{H1: h1, ZH: zh.Sum()}}, nil
}

// fetcher is one Build's state.
type fetcher struct {
	b            *Builder
	ctx          context.Context
	work         string
	progress     func(int64)
	registryHost string
	n            int
}

func (f *fetcher) tempDir() (string, error) {
	f.n++
	d := filepath.Join(f.work, fmt.Sprintf("t%d", f.n))
	return d, os.Mkdir(d, 0o755)
}

var (
	forcedGetter = regexp.MustCompile(`^([A-Za-z0-9]+)::(.+)$`)
	scpLike      = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+:[^/]`)
)

// source fetches a go-getter style address (without //subdir) into a
// directory and returns it, with the git commit when it was a git source.
// seen holds the addresses an X-Terraform-Get chain visited.
func (f *fetcher) source(src string, hops int, seen map[string]bool) (tree, revision string, err error) {
	if err := f.ctx.Err(); err != nil {
		return "", "", err
	}
	getter := ""
	if m := forcedGetter.FindStringSubmatch(src); m != nil {
		getter, src = strings.ToLower(m[1]), m[2]
	}
	switch {
	case getter == "git":
		return f.git(src)
	case getter != "" && getter != "http" && getter != "https" && getter != "file":
		return "", "", unsupported(getter)
	case strings.HasPrefix(src, "github.com/"):
		return f.git(githubShorthand(src))
	case strings.HasPrefix(src, "bitbucket.org/"):
		return "", "", errors.New("bitbucket.org shorthand sources are not supported (they need Bitbucket's API to tell git from mercurial); have the registry return a git::https:// address")
	case scpLike.MatchString(src):
		return f.git(src)
	case strings.HasPrefix(src, "/"):
		return f.local(src)
	}
	scheme, _, ok := strings.Cut(src, "://")
	if !ok {
		return "", "", fmt.Errorf("%q is not an address tfmirror can fetch (want git::URL, an https:// archive, or an absolute path)", src)
	}
	switch strings.ToLower(scheme) {
	case "https", "http":
		return f.http(src, hops, seen)
	case "file":
		return f.local(strings.TrimPrefix(src, src[:len(scheme)+3]))
	case "git", "ssh":
		return f.git(src)
	}
	return "", "", unsupported(strings.ToLower(scheme))
}

func unsupported(kind string) error {
	switch kind {
	case "oci":
		return errors.New("the package is already in an OCI registry (oci:// location): use it directly, or copy it with an OCI tool")
	case "s3", "gcs":
		return fmt.Errorf("%s sources are not supported: they need cloud credentials tfmirror does not handle; download the archive and serve it over https", kind)
	case "hg":
		return errors.New("mercurial (hg::) sources are not supported")
	}
	return fmt.Errorf("%q sources are not supported (tfmirror fetches git::, https:// archives and local paths)", kind)
}

// githubShorthand turns github.com/ORG/REPO[.git][?query] into the git
// address go-getter's GitHub detector makes of it.
func githubShorthand(src string) string {
	base, q, hasQ := strings.Cut(src, "?")
	if !strings.HasSuffix(base, ".git") {
		base += ".git"
	}
	s := "https://" + base
	if hasQ {
		s += "?" + q
	}
	return s
}

// local uses a directory as it is, or unpacks a local archive.
func (f *fetcher) local(p string) (string, string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", "", err
	}
	if fi.IsDir() {
		return p, "", nil
	}
	format, ok := formatFromPath(p)
	if !ok {
		if format, err = sniff(p); err != nil {
			return "", "", fmt.Errorf("%s: %v", p, err)
		}
	}
	if fi.Size() > f.b.opts.MaxDownload {
		return "", "", fmt.Errorf("%s is %d bytes, more than the %d allowed: %w", p, fi.Size(), f.b.opts.MaxDownload, ErrTooLarge)
	}
	dir, err := f.tempDir()
	if err != nil {
		return "", "", err
	}
	if err := Extract(f.ctx, p, format, dir, f.b.limits()); err != nil {
		return "", "", fmt.Errorf("%s: %w", p, err)
	}
	return dir, "", nil
}

// checksum is a go-getter ?checksum=TYPE:HEX argument.
type checksum struct {
	kind string
	want string
}

func parseChecksum(s string) (*checksum, error) {
	kind, value, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("checksum %q: want TYPE:HEX", s)
	}
	switch kind {
	case "sha256":
	default:
		return nil, fmt.Errorf("checksum %q: only sha256 checksums are supported", s)
	}
	if len(value) != 2*sha256.Size {
		return nil, fmt.Errorf("checksum %q: a sha256 checksum has %d hex digits", s, 2*sha256.Size)
	}
	return &checksum{kind: kind, want: strings.ToLower(value)}, nil
}
