package lockfile

import (
	iofs "io/fs"
)

// Find returns the lock files (DefaultName) under dir, in walk order. The
// clients' working directories (.terraform) are skipped: what they hold
// is not a configuration's lock. Links to directories are followed (Walk).
func Find(dir string) ([]string, error) {
	var out []string
	err := Walk(dir, func(name string) bool { return name == ".terraform" }, func(path string, d iofs.DirEntry) error {
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
