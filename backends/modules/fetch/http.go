package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
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
				return "", "", fmt.Errorf("%s: unknown archive format %q", u.Redacted(), v)
			}
		}
	} else {
		format, isArchive = formatFromPath(u.Path)
	}
	u.RawQuery = q.Encode()
	if isArchive {
		file, err := f.download(u, "", format == "")
		if err != nil {
			return "", "", err
		}
		if err := sum.check(file); err != nil {
			return "", "", fmt.Errorf("%s: %w", u.Redacted(), err)
		}
		dir, err := f.unpack(file, format)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", u.Redacted(), err)
		}
		return dir, "", nil
	}
	if sum != nil {
		return "", "", fmt.Errorf("%s: a checksum applies only to an archive URL", u.Redacted())
	}
	return f.indirect(u, hops, seen)
}

// indirect follows X-Terraform-Get.
func (f *fetcher) indirect(u *url.URL, hops int, seen map[string]bool) (string, string, error) {
	if seen == nil {
		seen = map[string]bool{}
	}
	if seen[u.String()] {
		return "", "", fmt.Errorf("X-Terraform-Get leads back to %s: %w", u.Redacted(), modules.ErrRedirectLoop)
	}
	if hops >= maxIndirections {
		return "", "", fmt.Errorf("more than %d X-Terraform-Get indirections, stopped at %s", maxIndirections, u.Redacted())
	}
	seen[u.String()] = true
	ask := *u
	q := ask.Query()
	q.Set("terraform-get", "1")
	ask.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, ask.String(), nil)
	if err != nil {
		return "", "", err
	}
	resp, err := f.b.client.Do(req)
	if err != nil {
		return "", "", modules.NetErr(f.ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", "", modules.StatusErr(resp, "")
	}
	next := resp.Header.Get("X-Terraform-Get")
	if next == "" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		next = metaTerraformGet(string(body))
	}
	if next == "" {
		return "", "", fmt.Errorf("%s is neither an archive (no .zip/.tar.gz/... extension nor ?archive=) nor an indirection (no X-Terraform-Get header or terraform-get meta tag)", u.Redacted())
	}
	if strings.HasPrefix(next, "/") || strings.HasPrefix(next, "./") || strings.HasPrefix(next, "../") {
		rel, err := url.Parse(next)
		if err != nil {
			return "", "", fmt.Errorf("%s: X-Terraform-Get %q: %v", u.Redacted(), next, err)
		}
		next = resp.Request.URL.ResolveReference(rel).String()
	}
	pkg, subdir := modules.SplitSubdir(next)
	tree, rev, err := f.source(pkg, hops+1, seen)
	if err != nil {
		return "", "", err
	}
	if subdir != "" {
		// The indirection names a directory inside what it points to; that
		// directory is the package, as the clients install it.
		if strings.HasPrefix(subdir, "../") || subdir == ".." {
			return "", "", fmt.Errorf("%s: X-Terraform-Get %q: subdirectory leads outside the package: %w", u.Redacted(), next, ErrUnsafePath)
		}
		tree = filepath.Join(tree, filepath.FromSlash(subdir))
		if fi, err := os.Stat(tree); err != nil || !fi.IsDir() {
			return "", "", fmt.Errorf("%s: X-Terraform-Get %q: no directory %q in the package", u.Redacted(), next, subdir)
		}
	}
	return tree, rev, nil
}

var metaTag = regexp.MustCompile(`(?is)<meta\s+name=["']terraform-get["']\s+content=["']([^"']+)["']`)

func metaTerraformGet(body string) string {
	if m := metaTag.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// direct fetches a package the registry hosts itself; the format is
// sniffed, since such servers often label archives badly.
func (f *fetcher) direct(src string, useCreds bool) (string, error) {
	u, err := url.Parse(src)
	if err != nil {
		return "", err
	}
	token := ""
	if useCreds && f.b.opts.Credentials != nil {
		if t, ok := f.b.opts.Credentials.Token(f.registryHost); ok {
			token = t
		}
	}
	file, err := f.download(u, token, true)
	if err != nil {
		return "", err
	}
	dir, err := f.unpack(file, "")
	if err != nil {
		return "", fmt.Errorf("%s: %w", u.Redacted(), err)
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

// download saves u to a file in the work directory, within MaxDownload.
func (f *fetcher) download(u *url.URL, token string, sniffing bool) (string, error) {
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", "tfmirror")
	if sniffing {
		req.Header.Set("Accept", "application/zip, application/x-tar; *;q=0.1")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.b.client.Do(req)
	if err != nil {
		return "", modules.NetErr(f.ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", modules.StatusErr(resp, "")
	}
	limit := f.b.opts.MaxDownload
	if resp.ContentLength > limit {
		return "", fmt.Errorf("GET %s: the archive is %d bytes, more than the %d allowed: %w", u.Redacted(), resp.ContentLength, limit, ErrTooLarge)
	}
	dst := filepath.Join(f.work, fmt.Sprintf("download%d", f.n+1))
	f.n++
	out, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	n, err := io.Copy(out, &progressReader{r: io.LimitReader(resp.Body, limit+1), fn: f.progress})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if f.ctx.Err() != nil {
			return "", f.ctx.Err()
		}
		return "", fmt.Errorf("GET %s: %w", u.Redacted(), backends.Transient(err))
	}
	if n > limit {
		return "", fmt.Errorf("GET %s: the archive is more than the %d bytes allowed: %w", u.Redacted(), limit, ErrTooLarge)
	}
	if cl := resp.Header.Get("Content-Length"); cl != "" {
		if want, err := strconv.ParseInt(cl, 10, 64); err == nil && want != n && resp.Header.Get("Content-Encoding") == "" {
			return "", fmt.Errorf("GET %s: the server promised %d bytes but sent %d: %w", u.Redacted(), want, n, backends.Transient(io.ErrUnexpectedEOF))
		}
	}
	return dst, nil
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
	defer fh.Close()
	if _, err := io.Copy(h, fh); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != c.want {
		return fmt.Errorf("checksum mismatch: the address pins %s:%s, the archive is %s:%s", c.kind, c.want, c.kind, got)
	}
	return nil
}

type progressReader struct {
	r  io.Reader
	fn func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.fn(int64(n))
	}
	return n, err
}
