package oci

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// AnnotationProvider names, on every index tfmirror writes, the provider
// whose version the index is ("registry.opentofu.org/hashicorp/aws").
// OpenTofu does not read annotations; tfmirror reads it to refuse adding
// one provider's platforms to another's index, and to skip, when listing,
// a tag that holds another provider's version.
const AnnotationProvider = "dev.tfmirror.provider"

// ErrOtherProvider: a version's tag holds another provider's index, so the
// repository template maps two providers to one repository.
var ErrOtherProvider = errors.New("the tag holds another provider's index")

// annotatedProvider returns the provider an index's AnnotationProvider
// names; ok is false when the index has none.
func annotatedProvider(idx *ocispec.Index) (p backends.Provider, ok bool, err error) {
	a, ok := idx.Annotations[AnnotationProvider]
	if !ok {
		return backends.Provider{}, false, nil
	}
	p, err = backends.ParseProvider(a)
	if err != nil {
		return backends.Provider{}, true, fmt.Errorf("annotation %s %q: %w", AnnotationProvider, a, err)
	}
	return p, true, nil
}

// checkOwner refuses an index (the one the tag names, with digest d) that
// belongs to another provider than pv's: one whose AnnotationProvider names
// another provider, or, without the annotation (an index another tool
// wrote, or tfmirror before it wrote the annotation), whose zip holds the
// executable of another provider type. An index without the annotation
// whose zips cannot be read, or hold no executable, is not refused: nothing
// says whose it is. Namespaces and hostnames cannot be told from a zip.
func (pv *pendingVersion) checkOwner(ctx context.Context, m *Mirror, r *remote.Repository, d digest.Digest, idx *ocispec.Index, label string) error {
	if pv.owned[d] {
		return nil
	}
	refuse := func(whose string) error {
		return fmt.Errorf("oci mirror %s: repository %s: %s: %w: tag %q holds %s; the template %q maps both providers to this repository: use one that refers to ${hostname}, ${namespace} and ${type}, or delete the tag",
			m.name, pv.addr, label, ErrOtherProvider, pv.tag, whose, m.tmpl)
	}
	owner, annotated, err := annotatedProvider(idx)
	switch {
	case err != nil:
		return refuse(fmt.Sprintf("an index whose %v", err))
	case annotated && owner != pv.provider:
		return refuse(fmt.Sprintf("the index of %s (its %s annotation)", owner, AnnotationProvider))
	case !annotated:
		typ, evidence, err := indexProviderType(ctx, r, idx)
		if err != nil && !isContentError(err) {
			return classify(err, "read a zip of index "+d.String(), m.name, pv.addr, label)
		}
		if err == nil && typ != pv.provider.Type {
			return refuse(fmt.Sprintf("an index of provider type %q (%s)", typ, evidence))
		}
	}
	pv.owned[d] = true
	return nil
}

// indexProviderType tells the provider type of an index from the name of
// the executable in its zips (terraform-provider-TYPE or
// terraform-provider-TYPE_vVERSION, as OpenTofu looks for it), reading the
// first zip that has one. Only the end of the zip (its central directory)
// is read where the registry serves ranges. A content error says there is
// nothing to tell it from.
func indexProviderType(ctx context.Context, r *remote.Repository, idx *ocispec.Index) (typ, evidence string, err error) {
	targets, _, err := providerTargets(idx)
	if err != nil {
		return "", "", err
	}
	for _, t := range targets {
		b, err := fetchManifest(ctx, r, t.Desc)
		if err != nil {
			if isContentError(err) {
				continue
			}
			return "", "", err
		}
		_, layer, err := parseImageManifest(b, t.Platform)
		if err != nil {
			continue
		}
		names, err := zipNames(ctx, r, layer)
		if err != nil {
			if isContentError(err) {
				continue
			}
			return "", "", err
		}
		for _, n := range names {
			if typ, ok := executableType(n); ok {
				return typ, fmt.Sprintf("its zip for %s holds %s", t.Platform, n), nil
			}
		}
	}
	return "", "", notProvider("no zip of the index holds a terraform-provider-TYPE executable")
}

// executableType returns TYPE for a zip entry named as a provider's
// executable at the zip's root.
func executableType(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "terraform-provider-")
	if !ok || strings.Contains(rest, "/") {
		return "", false
	}
	rest = strings.TrimSuffix(rest, ".exe")
	typ, _, _ := strings.Cut(rest, "_")
	typ, err := backends.ParseProviderPart(typ)
	if err != nil {
		return "", false
	}
	return typ, true
}

// zipNames lists the names in a zip layer. Where the registry serves
// ranges (distribution does) only the central directory is read; otherwise
// the zip is read whole into a temp file, up to the size of a zip that
// unpacks within the hashing cap.
func zipNames(ctx context.Context, r *remote.Repository, layer ocispec.Descriptor) ([]string, error) {
	rc, err := r.Blobs().Fetch(ctx, layer)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }() // read only
	var zr *zip.Reader
	if rs, ok := rc.(io.ReadSeeker); ok {
		zr, err = zip.NewReader(&seekerAt{rs: rs}, layer.Size)
	} else {
		if layer.Size > hashing.DefaultMaxUnpacked {
			return nil, notProvider("the zip layer is %d bytes and the registry does not serve ranges of it", layer.Size)
		}
		f, ferr := os.CreateTemp("", "tfmirror-oci-owner-*.zip")
		if ferr != nil {
			return nil, ferr
		}
		defer os.Remove(f.Name())
		defer func() { _ = f.Close() }() // a spool, removed after
		if _, err := io.Copy(f, io.LimitReader(rc, layer.Size)); err != nil {
			return nil, err
		}
		zr, err = zip.NewReader(f, layer.Size)
	}
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, notProvider("the zip layer %s is not a readable zip: %v", layer.Digest, err)
	}
	names := make([]string, len(zr.File))
	for i, f := range zr.File {
		names[i] = f.Name
	}
	return names, nil
}

// seekerAt reads at offsets of a seekable stream (oras's ranged blob
// reader, which issues a range request per seek).
type seekerAt struct {
	mu sync.Mutex
	rs io.ReadSeeker
}

func (s *seekerAt) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.rs.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(s.rs, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}
