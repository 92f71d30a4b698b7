package regserve

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/tfmirror/tfmirror/backends/modules"
)

// ModuleSource is what modules.v1 serves: a module place, or a
// pull-through mirror of modules that fetches what it lacks.
type ModuleSource interface {
	// String names the place in messages.
	String() string
	// ModuleVersions lists the versions of m offered, newest first; a
	// module the place neither holds nor may fetch is an error wrapping
	// backends.ErrNotFound that says why.
	ModuleVersions(ctx context.Context, m modules.Module) ([]modules.Version, error)
	// ModulePackage makes sure the place holds m at v, fetching it where
	// a pull-through mirror lacks it, and describes the package; a version
	// refused is an error wrapping backends.ErrNotFound that says why.
	ModulePackage(ctx context.Context, m modules.Module, v modules.Version) (modules.Served, error)
	// OpenModule streams the package zip of m at v the place holds.
	OpenModule(ctx context.Context, m modules.Module, v modules.Version) (io.ReadCloser, int64, error)
}

// packageFile is the name, below a version's path, of its zip.
const packageFile = "package.zip"

// serveModules answers, below ModulesPrefix,
//
//	HOST/NS/NAME/SYSTEM/versions
//	HOST/NS/NAME/SYSTEM/VERSION/download
//	HOST/NS/NAME/SYSTEM/VERSION/package.zip
func (h *Handler) serveModules(w http.ResponseWriter, r *http.Request, parts []string) {
	if h.opts.Modules == nil || len(parts) < 5 {
		http.NotFound(w, r)
		return
	}
	host := parts[0]
	if u, err := idna.Lookup.ToUnicode(host); err == nil {
		host = u
	}
	m, err := modules.NewModule(host, parts[1], parts[2], parts[3])
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ctx := r.Context()
	if len(parts) == 5 && parts[4] == "versions" {
		h.moduleVersions(ctx, w, m)
		return
	}
	v, err := modules.ParseVersion(parts[4])
	if err != nil || len(parts) != 6 {
		http.NotFound(w, r)
		return
	}
	switch parts[5] {
	case "download":
		h.moduleDownload(w, r, m, v)
	case packageFile:
		h.modulePackage(ctx, w, r, m, v)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) moduleVersions(ctx context.Context, w http.ResponseWriter, m modules.Module) {
	vs, err := h.opts.Modules.ModuleVersions(ctx, m)
	if err != nil {
		h.fail(w, m.String(), err)
		return
	}
	type version struct {
		Version string `json:"version"`
	}
	list := []version{}
	for _, v := range vs {
		list = append(list, version{v.String()})
	}
	writeJSON(w, map[string]any{"modules": []any{map[string]any{"versions": list}}})
}

// moduleDownload makes sure the package is held, then names it: 204 with
// X-Terraform-Get, which both clients read. OpenTofu (1.10 and later) is
// sent to an OCI place's artifact itself; every other client to the zip
// served here.
func (h *Handler) moduleDownload(w http.ResponseWriter, r *http.Request, m modules.Module, v modules.Version) {
	pkg, err := h.opts.Modules.ModulePackage(r.Context(), m, v)
	if err != nil {
		h.fail(w, m.String()+" "+v.String(), err)
		return
	}
	loc := pkg.OCI
	if loc == "" || !readsOCI(r) {
		scheme := "https"
		if r.TLS == nil {
			scheme = "http"
		}
		loc = scheme + "://" + r.Host + ModulesPrefix + m.Host + "/" + m.Short() + "/" + v.String() + "/" + packageFile
	}
	w.Header().Set("X-Terraform-Get", modules.JoinSubdir(loc, pkg.Subdir))
	w.WriteHeader(http.StatusNoContent)
}

// readsOCI reports whether the client reads oci:// module sources:
// OpenTofu from 1.10 on (its User-Agent names it and its version).
func readsOCI(r *http.Request) bool {
	ua := r.Header.Get("User-Agent")
	i := strings.Index(ua, "OpenTofu/")
	if i < 0 {
		return false
	}
	ver := ua[i+len("OpenTofu/"):]
	if j := strings.IndexAny(ver, " ;("); j >= 0 {
		ver = ver[:j]
	}
	v, err := modules.ParseVersion(ver)
	if err != nil {
		return false
	}
	min, _ := modules.ParseVersion("1.10.0")
	return v.Core().GreaterThanOrEqual(min)
}

func (h *Handler) modulePackage(ctx context.Context, w http.ResponseWriter, r *http.Request, m modules.Module, v modules.Version) {
	rc, size, err := h.opts.Modules.OpenModule(ctx, m, v)
	if err != nil {
		h.fail(w, m.String()+" "+v.String(), err)
		return
	}
	defer func() { _ = rc.Close() }() // read only
	w.Header().Set("Content-Type", "application/zip")
	if size >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, rc); err != nil {
		h.logf("%s %s: streaming the package: %v", m, v, err)
		panic(http.ErrAbortHandler)
	}
}
