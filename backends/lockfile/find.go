package lockfile

import (
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
)

// Find returns the lock files (DefaultName) under dir, in walk order. The
// clients' working directories (.terraform) are skipped: what they hold
// is not a configuration's lock. Symbolic links are not followed.
func Find(dir string) ([]string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	var out []string
	err = filepath.WalkDir(dir, func(path string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == DefaultName {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
