package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"html"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/readers"
)

// http fetches an HTTP(S) address the way go-getter does for modules: an
// archive when ?archive= or the path's extension names one, otherwise an
// indirection whose X-Terraform-Get header (or terraform-get meta tag)
// names the real address.
func (f *fetcher) http(src string, hops int, seen map[string]bool) (string, string, error) {
	u, err := url.Parse(src)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a URL: %v", src, err)
	}
	q := u.Query()
	var sum *checksum
	if c := q.Get("checksum"); c != "" {
		if sum, err = parseChecksum(c); err != nil {
			return "", "", err
		}
		q.Del("checksum")
	}
	format, isArchive := Format(""), false
	if a, ok := q["archive"]; ok {
		q.Del("archive")
		switch v := strings.ToLower(a[0]); v {
		case "false", "":
		default:
			if format, isArchive = formatByName[v]; !isArchive {
				return "", "", fmt.Errorf("%s: unknown archive format %q", httpclient.RedactURL(u), v)
			}
		}
	} else {
		format, isArchive = formatFromPath(u.Path)
	}
	u.RawQuery = q.Encode()
	if isArchive {
		file, enc, err := f.download(u, nil, format == "")
		if err != nil {
			return "", "", err
		}
		if err := sum.check(file); err != nil {
			return "", "", fmt.Errorf("%s: %w%s", httpclient.RedactURL(u), err, encodingNote(enc))
		}
		dir, err := f.unpack(file, format)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w%s", httpclient.RedactURL(u), err, encodingNote(enc))
		}
		return dir, "", nil
	}
	if sum != nil {
		return "", "", fmt.Errorf("%s: a checksum applies only to an archive URL", httpclient.RedactURL(u))
	}
	return f.indirect(u, hops, seen)
}

// indirect follows X-Terraform-Get.
func (f *fetcher) indirect(u *url.URL, hops int, seen map[string]bool) (string, string, error) {
	if seen == nil {
		seen = map[string]bool{}
	}
	if seen[u.String()] {
		return "", "", fmt.Errorf("X-Terraform-Get leads back to %s: %w", httpclient.RedactURL(u), modules.ErrRedirectLoop)
	}
	if hops >= maxIndirections {
		return "", "", fmt.Errorf("more than %d X-Terraform-Get indirections, stopped at %s", maxIndirections, httpclient.RedactURL(u))
	}
	seen[u.String()] = true
	ask := *u
	q := ask.Query()
	q.Set("terraform-get", "1")
	ask.RawQuery = q.Encode()
	resp, err := f.b.opts.HTTP.Get(f.ctx, &ask, nil, "")
	if err != nil {
		return "", "", err
	}
	next := resp.Header.Get("X-Terraform-Get")
	if next == "" {
		next = metaTerraformGet(string(resp.Body))
	}
	if next == "" {
		return "", "", fmt.Errorf("%s is neither an archive (no .zip/.tar.gz/... extension nor ?archive=) nor an indirection (no X-Terraform-Get header or terraform-get meta tag)", httpclient.RedactURL(u))
	}
	if strings.HasPrefix(next, "/") || strings.HasPrefix(next, "./") || strings.HasPrefix(next, "../") {
		rel, err := url.Parse(next)
		if err != nil {
			return "", "", fmt.Errorf("%s: X-Terraform-Get %q: %v", httpclient.RedactURL(u), next, err)
		}
		next = resp.URL.ResolveReference(rel).String()
	}
	pkg, subdir := modules.SplitSubdir(next)
	if isLocal(pkg) {
		return "", "", fmt.Errorf("%s: X-Terraform-Get %q names a path on this machine; a remote server's indirection may only lead to remote addresses: %w", httpclient.RedactURL(u), next, ErrUnsafePath)
	}
	tree, rev, err := f.source(pkg, hops+1, seen)
	if err != nil {
		return "", "", err
	}
	if subdir != "" {
		// The indirection names a directory inside what it points to; that
		// directory is the package, as the clients install it.
		if strings.HasPrefix(subdir, "../") || subdir == ".." {
			return "", "", fmt.Errorf("%s: X-Terraform-Get %q: subdirectory leads outside the package: %w", httpclient.RedactURL(u), next, ErrUnsafePath)
		}
		tree = filepath.Join(tree, filepath.FromSlash(subdir))
		if fi, err := os.Stat(tree); err != nil || !fi.IsDir() {
			return "", "", fmt.Errorf("%s: X-Terraform-Get %q: no directory %q in the package", httpclient.RedactURL(u), next, subdir)
		}
	}
	return tree, rev, nil
}

// isLocal reports whether a go-getter address names this machine's files:
// file://, the file:: getter, or git over the file transport.
func isLocal(src string) bool {
	getter := ""
	if m := forcedGetter.FindStringSubmatch(src); m != nil {
		getter, src = strings.ToLower(m[1]), m[2]
	}
	scheme, _, _ := strings.Cut(src, "://")
	return getter == "file" || strings.HasPrefix(src, "/") || strings.EqualFold(scheme, "file")
}

var metaTag = regexp.MustCompile(`(?is)<meta\s+name=["']terraform-get["']\s+content=["']([^"']+)["']`)

func metaTerraformGet(body string) string {
	if m := metaTag.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// direct fetches a package the registry hosts itself; the format is
// sniffed, since such servers often label archives badly. With
// use_registry_credentials the registry's token goes along, but only where
// the token's rule allows: the registry's own host and port over https
// (OpenTofu sends it to any location; a registry that hosts its packages
// elsewhere must sign their URLs instead).
func (f *fetcher) direct(src string, useCreds bool) (string, error) {
	u, err := url.Parse(src)
	if err != nil {
		return "", err
	}
	var auth *httpclient.Auth
	if useCreds {
		auth = httpclient.AuthFor(f.b.opts.Credentials, f.registryHost)
	}
	file, enc, err := f.download(u, auth, true)
	if err != nil {
		if auth != nil && !auth.Allows(u) && errors.Is(err, backends.ErrUnauthorized) {
			err = fmt.Errorf("%w (the registry asked for its credentials here, but the token for %s goes to https://%s only)", err, auth.Host, auth.Host)
		}
		return "", err
	}
	dir, err := f.unpack(file, "")
	if err != nil {
		return "", fmt.Errorf("%s: %w%s", httpclient.RedactURL(u), err, encodingNote(enc))
	}
	return dir, nil
}

// unpack extracts file into a new directory; format "" means sniff it.
func (f *fetcher) unpack(file string, format Format) (string, error) {
	if format == "" {
		var err error
		if format, err = sniff(file); err != nil {
			return "", err
		}
	}
	dir, err := f.tempDir()
	if err != nil {
		return "", err
	}
	return dir, Extract(f.ctx, file, format, dir, f.b.limits())
}

// download saves u to a file in the work directory, within MaxDownload,
// byte for byte as the server sent it (see httpclient.Client.Open), and
// returns the Content-Encoding the server used anyway ("" for none).
func (f *fetcher) download(u *url.URL, auth *httpclient.Auth, sniffing bool) (string, string, error) {
	accept := ""
	if sniffing {
		accept = "application/zip, application/x-tar; *;q=0.1"
	}
	d, err := f.b.opts.HTTP.Open(f.ctx, u, auth, accept)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = d.Close() }() // read only
	limit := f.b.opts.MaxDownload
	if d.Size > limit {
		return "", "", fmt.Errorf("GET %s: the archive is %d bytes, more than the %d allowed: %w", httpclient.RedactURL(d.URL), d.Size, limit, ErrTooLarge)
	}
	f.n++
	dst := filepath.Join(f.work, fmt.Sprintf("download%d", f.n))
	out, err := os.Create(dst)
	if err != nil {
		return "", "", err
	}
	n, err := io.Copy(out, readers.OnRead(io.LimitReader(d, limit+1), f.progress))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if f.ctx.Err() != nil {
			return "", "", f.ctx.Err()
		}
		return "", "", err
	}
	if n > limit {
		return "", "", fmt.Errorf("GET %s: the archive is more than the %d bytes allowed: %w", httpclient.RedactURL(d.URL), limit, ErrTooLarge)
	}
	return dst, d.Encoding, nil
}

// encodingNote explains a bad archive that came with a Content-Encoding:
// its bytes were kept as sent, not decoded.
func encodingNote(enc string) string {
	if enc == "" {
		return ""
	}
	return fmt.Sprintf(" (the server sent it with Content-Encoding %q although identity was asked for; the bytes were kept as sent, not decoded)", enc)
}

// check compares a downloaded file with a ?checksum= argument.
func (c *checksum) check(file string) error {
	if c == nil {
		return nil
	}
	var h hash.Hash = sha256.New()
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = fh.Close() }() // read only
	if _, err := io.Copy(h, fh); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != c.want {
		return fmt.Errorf("checksum mismatch: the address pins %s:%s, the archive is %s:%s", c.kind, c.want, c.kind, got)
	}
	return nil
}
