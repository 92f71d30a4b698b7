package modoci

import (
	"context"
	"fmt"
	"io"

	"oras.land/oras-go/v2/content"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
)

var _ modules.PackageOpener = (*Store)(nil)

// OpenPackage implements modules.PackageOpener: the archive/zip layer of
// the manifest tagged with v, checked against its digest as it streams.
func (s *Store) OpenPackage(ctx context.Context, m modules.Module, v modules.Version) (io.ReadCloser, int64, error) {
	r, repoName, err := s.repo(m)
	if err != nil {
		return nil, 0, err
	}
	tag := modules.Tag(v)
	where := s.tmpl.Registry + "/" + repoName
	h, err := s.inspect(ctx, r, tag)
	if err != nil {
		return nil, 0, s.opError("read "+tag, where, m.String()+" "+v.String(), err)
	}
	if h == nil {
		return nil, 0, fmt.Errorf("module mirror %s: %s %s: %w (no tag %s in %s)", s.name, m, v, backends.ErrNotFound, tag, where)
	}
	rc, err := r.Blobs().Fetch(ctx, h.layer)
	if err != nil {
		return nil, 0, s.opError("fetch "+h.layer.Digest.String(), where, m.String()+" "+v.String(), err)
	}
	return &verified{vr: content.NewVerifyReader(rc, h.layer), rc: rc}, h.layer.Size, nil
}

// verified streams a blob and fails its last read when the bytes do not
// match the descriptor's digest: whoever reads it whole has the blob.
type verified struct {
	vr *content.VerifyReader
	rc io.Closer
}

func (v *verified) Read(p []byte) (int, error) {
	n, err := v.vr.Read(p)
	if err == io.EOF {
		if verr := v.vr.Verify(); verr != nil {
			return n, verr
		}
	}
	return n, err
}

func (v *verified) Close() error { return v.rc.Close() }
