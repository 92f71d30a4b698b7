package netmirror

import (
	"context"
	"errors"
	"net/http"

	"github.com/tfmirror/tfmirror/backends"
)

// redirect answers a request for zip a with a redirect (302 Found) to a URL
// of the place itself, valid for h.Redirect, when that is set and the
// place presigns it (backends.Presigner): the bytes then flow from the
// object store, never through this process. The documents still come from
// the Handler, which lists the hashes the clients check the download
// against. It reports false, having written nothing, when the zip is to be
// streamed instead (no redirects, a place that cannot presign, or one that
// no longer holds the zip as listed).
func (h *Handler) redirect(ctx context.Context, w http.ResponseWriter, a backends.Archive) bool {
	if h.Redirect <= 0 {
		return false
	}
	p, ok := h.r.(backends.Presigner)
	if !ok {
		return false
	}
	url, err := p.PresignArchive(ctx, a, h.Redirect)
	if err != nil {
		if !errors.Is(err, backends.ErrNotFound) && ctx.Err() == nil {
			h.logf("%s: served by the process, not redirected: %v", a.Package, err)
		}
		return false
	}
	w.Header().Set("Location", url)
	w.Header().Set("Cache-Control", "no-store") // the URL expires; ask again
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusFound)
	return true
}
