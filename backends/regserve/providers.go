package regserve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/idna"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

// serveProviders answers, below ProvidersPrefix,
//
//	HOST/NS/TYPE/versions
//	HOST/NS/TYPE/VERSION/download/OS/ARCH
//	HOST/NS/TYPE/VERSION/SHA256SUMS and SHA256SUMS.sig
func (h *Handler) serveProviders(w http.ResponseWriter, r *http.Request, parts []string) {
	if h.opts.Providers == nil || len(parts) < 4 {
		http.NotFound(w, r)
		return
	}
	host := parts[0]
	if u, err := idna.Lookup.ToUnicode(host); err == nil {
		host = u
	}
	p, err := backends.NewProvider(host, parts[1], parts[2])
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ctx := r.Context()
	if len(parts) == 4 && parts[3] == "versions" {
		h.providerVersions(ctx, w, p)
		return
	}
	v, err := backends.ParseVersion(parts[3])
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case len(parts) == 7 && parts[4] == "download":
		plat, err := backends.ParsePlatform(parts[5] + "_" + parts[6])
		if err != nil {
			http.NotFound(w, r)
			return
		}
		h.providerDownload(ctx, w, p, v, plat)
	case len(parts) == 5 && (parts[4] == "SHA256SUMS" || parts[4] == "SHA256SUMS.sig"):
		doc, why, err := h.provenance(ctx, p, v)
		switch {
		case err != nil:
			h.fail(w, p.String()+" "+v.String(), err)
		case doc == nil:
			refuse(w, why)
		case parts[4] == "SHA256SUMS":
			writeBytes(w, "text/plain; charset=utf-8", doc.SHA256SUMS)
		default:
			writeBytes(w, "application/octet-stream", doc.Signature)
		}
	default:
		http.NotFound(w, r)
	}
}

// providerVersions lists the versions of p whose provenance the place
// keeps, with the platforms it holds where it can list them cheaply (the
// clients read only the versions).
func (h *Handler) providerVersions(ctx context.Context, w http.ResponseWriter, p backends.Provider) {
	src := h.opts.Providers
	vs, err := src.Versions(ctx, p)
	if err != nil {
		h.fail(w, p.String(), err)
		return
	}
	signed, err := h.signedVersions(ctx, p, vs)
	if err != nil {
		h.fail(w, p.String(), err)
		return
	}
	type platform struct {
		OS   string `json:"os"`
		Arch string `json:"arch"`
	}
	type version struct {
		Version   string     `json:"version"`
		Protocols []string   `json:"protocols"`
		Platforms []platform `json:"platforms"`
	}
	doc := struct {
		Versions []version `json:"versions"`
	}{Versions: []version{}}
	var offered []backends.Version
	for _, v := range vs {
		if signed[v.String()] {
			offered = append(offered, v)
			continue
		}
		h.logOnce(withheld(src, p, v))
	}
	plats := h.platforms(ctx, p, offered)
	for _, v := range offered {
		ver := version{Version: v.String(), Protocols: []string{}, Platforms: []platform{}}
		for _, pl := range plats[v.String()] {
			ver.Platforms = append(ver.Platforms, platform{pl.OS, pl.Arch})
		}
		doc.Versions = append(doc.Versions, ver)
	}
	if len(doc.Versions) == 0 {
		if len(vs) == 0 {
			refuse(w, fmt.Sprintf("%s holds no version of %s", src, p))
			return
		}
		refuse(w, fmt.Sprintf("%s keeps the origin's signed SHA256SUMS of no version of %s: providers.v1 offers none (its network mirror serves them)", src, p))
		return
	}
	writeJSON(w, doc)
}

// Withheld is why providers.v1 leaves out a version of a place, as ls
// and the UI say it: the place keeps no provenance of it.
const Withheld = "not offered through providers.v1: no signed SHA256SUMS kept (provenance); serve's network mirror still serves it"

// withheld is the line logged for a version providers.v1 leaves out.
func withheld(src backends.Reader, p backends.Provider, v backends.Version) string {
	return fmt.Sprintf("providers.v1: %s %s is not offered: %s keeps no signed SHA256SUMS of it (its provenance); the network mirror still serves it", p, v, src)
}

// signedVersions says which of vs the place keeps provenance for: at once
// where it can list them, else version by version.
func (h *Handler) signedVersions(ctx context.Context, p backends.Provider, vs []backends.Version) (map[string]bool, error) {
	src := h.opts.Providers
	if pl, ok := src.(backends.ProvenanceLister); ok {
		return pl.ProvenanceVersions(ctx, p)
	}
	out := map[string]bool{}
	pr, ok := src.(backends.ProvenanceReader)
	if !ok {
		return out, nil
	}
	for _, v := range vs {
		_, err := pr.Provenance(ctx, p, v)
		switch {
		case err == nil:
			out[v.String()] = true
		case errors.Is(err, backends.ErrNotFound):
		case errors.Is(err, context.Canceled):
			return nil, err
		default:
			h.logOnce(fmt.Sprintf("providers.v1: %s %s is not offered: its provenance cannot be read: %v", p, v, err))
		}
	}
	return out, nil
}

// platforms lists the platforms the place holds of each of vs, where it
// lists every archive of a provider in one go (a directory, a bucket);
// for other places the versions are listed without (the clients ask for
// a platform's download and get a 404 where there is none).
func (h *Handler) platforms(ctx context.Context, p backends.Provider, vs []backends.Version) map[string][]backends.Platform {
	src := h.opts.Providers
	_, l := src.(backends.Lister)
	_, ul := src.(backends.UnsizedLister)
	out := map[string][]backends.Platform{}
	if len(vs) == 0 || (!l && !ul) {
		return out
	}
	as, err := backends.ListUnsized(ctx, src, p, vs)
	if err != nil {
		return out
	}
	for _, a := range as {
		if a.Layout == backends.Packed {
			out[a.Version.String()] = append(out[a.Version.String()], a.Platform)
		}
	}
	return out
}

// provenance is the place's provenance of p at v, or nil and why there is
// none to serve.
func (h *Handler) provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, string, error) {
	src := h.opts.Providers
	pr, ok := src.(backends.ProvenanceReader)
	if !ok {
		return nil, fmt.Sprintf("%s keeps no provenance (no signed SHA256SUMS): providers.v1 offers nothing of it (its network mirror serves %s %s)", src, p, v), nil
	}
	doc, err := pr.Provenance(ctx, p, v)
	if errors.Is(err, backends.ErrNotFound) {
		why := withheld(src, p, v)
		h.logOnce(why)
		return nil, strings.TrimPrefix(why, "providers.v1: "), nil
	}
	if err != nil {
		return nil, "", err
	}
	return doc, "", nil
}

// providerDownload answers a platform's download document: the archive
// as the network mirror serves it, and the provenance kept of its
// version, byte for byte, for the client to check.
func (h *Handler) providerDownload(ctx context.Context, w http.ResponseWriter, p backends.Provider, v backends.Version, plat backends.Platform) {
	src := h.opts.Providers
	doc, why, err := h.provenance(ctx, p, v)
	if err != nil || doc == nil {
		if err != nil {
			h.fail(w, p.String()+" "+v.String(), err)
		} else {
			refuse(w, why)
		}
		return
	}
	sums, err := doc.ZipHashes(plat.String())
	if err != nil {
		refuse(w, err.Error())
		return
	}
	a, err := h.archive(ctx, p, v, plat)
	if err != nil {
		h.fail(w, p.String()+" "+v.String()+" "+plat.String(), err)
		return
	}
	base := ProvidersPrefix + p.Hostname + "/" + p.Namespace + "/" + p.Type + "/" + v.String() + "/"
	type key struct {
		KeyID          string `json:"key_id"`
		ASCIIArmor     string `json:"ascii_armor"`
		TrustSignature string `json:"trust_signature"`
		Source         string `json:"source"`
		SourceURL      string `json:"source_url"`
	}
	writeJSON(w, map[string]any{
		"protocols":             []string{},
		"os":                    plat.OS,
		"arch":                  plat.Arch,
		"filename":              provenance.PackageFileName(p.Type, v.String(), plat.String()),
		"download_url":          netmirror.ArchivePath(a),
		"shasums_url":           base + "SHA256SUMS",
		"shasums_signature_url": base + "SHA256SUMS.sig",
		"shasum":                sums[0].Value(),
		"signing_keys": map[string][]key{"gpg_public_keys": {{
			KeyID: doc.Key.ID, ASCIIArmor: doc.Key.ASCIIArmor, Source: src.String(),
		}}},
	})
}

// archive finds the zip of p at v for plat that the place serves; a
// platform it lacks is ErrNotFound, saying why where the place explains
// its refusals.
func (h *Handler) archive(ctx context.Context, p backends.Provider, v backends.Version, plat backends.Platform) (backends.Archive, error) {
	src := h.opts.Providers
	as, err := src.Archives(ctx, p, v)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return backends.Archive{}, err
	}
	for _, a := range as {
		if a.Platform == plat && a.Layout == backends.Packed {
			return a, nil
		}
	}
	why := fmt.Sprintf("%s holds no %s zip of %s %s", src, plat, p, v)
	if ex, ok := src.(Explainer); ok {
		if s := ex.Explain(ctx, p, v, &plat); s != "" {
			why = s
		}
	}
	return backends.Archive{}, fmt.Errorf("%s: %w", why, backends.ErrNotFound)
}

func writeBytes(w http.ResponseWriter, contentType string, b []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	_, _ = w.Write(b) // a client gone: no one left to tell
}
