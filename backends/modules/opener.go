package modules

import (
	"context"
	"io"
	"strings"
)

// PackageOpener is implemented by module places that can stream the zip
// of a package they hold (directories, OCI registries): a mirror serves it
// over HTTPS to clients that cannot read the place themselves.
type PackageOpener interface {
	// OpenPackage streams the zip of m at v and says its size (-1 when
	// unknown). A version the place does not hold is an error wrapping
	// backends.ErrNotFound.
	OpenPackage(ctx context.Context, m Module, v Version) (io.ReadCloser, int64, error)
}

// Served is a package a mirror holds, as the registry protocol names it
// to clients.
type Served struct {
	// Subdir is the module's directory inside the package.
	Subdir string
	// OCI, when set, is the package's oci:// address pinned by digest,
	// without the subdir (an OCI place): clients that read OCI sources
	// (OpenTofu 1.10 and later) may be sent there.
	OCI string
}

// ServedFrom describes the package a listing of a place names: its
// subdir, and its oci:// address where the place is an OCI registry.
func ServedFrom(it Listing) Served {
	pkg, sub := SplitSubdir(it.Location)
	s := Served{Subdir: sub}
	if strings.HasPrefix(pkg, "oci://") {
		s.OCI = pkg
	}
	return s
}
