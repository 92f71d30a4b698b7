package lockfile

import (
	"context"
	iofs "io/fs"
	"path/filepath"
)

// Find returns the lock files (DefaultName) under dir, in walk order. The
// clients' working directories (.terraform) are skipped: what they hold
// is not a configuration's lock. Links to directories are followed (Walk);
// an interrupt (ctx) ends it with ctx's error.
func Find(ctx context.Context, dir string) ([]string, error) {
	var out []string
	err := Walk(ctx, dir, func(name string) bool { return name == ".terraform" }, func(path string, d iofs.DirEntry) error {
		if d.Name() == DefaultName {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// realPath is path with every link resolved, or path where that fails.
func realPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}
