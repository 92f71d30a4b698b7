package modfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

var _ modules.PackageOpener = (*Store)(nil)

// OpenPackage implements modules.PackageOpener: the zip of m at v.
func (s *Store) OpenPackage(ctx context.Context, m modules.Module, v modules.Version) (io.ReadCloser, int64, error) {
	p := s.Path(m, v)
	f, err := regular.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("module mirror %s: %s %s: %w (no %s)", s.name, m, v, backends.ErrNotFound, p)
	}
	if err != nil {
		return nil, 0, s.fail(m.String()+" "+v.String(), "open", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close() // read only
		return nil, 0, s.fail(m.String()+" "+v.String(), "open", err)
	}
	return f, fi.Size(), nil
}
