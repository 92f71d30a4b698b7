package fs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// writeJSON writes v as `providers mirror` does (json.MarshalIndent with two
// spaces, sorted keys, no trailing newline, mode 0644), atomically, and only
// when the content changes.
func writeJSON(path string, v any) error {
	was, readErr := regular.ReadFile(path, 0) // a pipe there is replaced, not waited on
	b, changed, err := encodeOver(v, was, readErr)
	if err != nil || !changed {
		return err
	}
	return WriteFileAtomic(path, b, 0o644)
}

// encodeOver encodes v as writeJSON writes it, and reports whether that
// differs from what a document holds: was, unless reading it failed with
// readErr (then the document is to be written).
func encodeOver(v any, was []byte, readErr error) ([]byte, bool, error) {
	b, err := mirrordoc.Encode(v)
	if err != nil {
		return nil, false, err
	}
	return b, readErr != nil || !bytes.Equal(was, b), nil
}

// WriteFileAtomic writes data to a hidden temp file beside path and renames
// it into place, so readers see the old content or the new, never a part.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, tmp, err := createLocked(filepath.Dir(path), "."+filepath.Base(path))
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = placeLocked(f, tmp, path)
	}
	f.Close()
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// placeLocked renames the staging file tmp, open as f (so locked against
// sweepers until it bears its final name), to path.
func placeLocked(f *os.File, tmp, path string) error {
	if closeBeforeRename {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return os.Rename(tmp, path)
}

// docBatch writes a provider directory's index documents as writeJSON
// does, but makes those added between two commits durable together (one
// group sync where the filesystem allows), then their directory entries.
type docBatch struct {
	m     *Mirror
	dir   string
	files []*os.File
	tmps  []string // each file's staging name; "" for an unnamed one
	paths []string
	// placed counts the files, in order, that commit put in place.
	placed int
}

func newDocBatch(m *Mirror, dir string) *docBatch { return &docBatch{m: m, dir: dir} }

// add stages document name of the directory with v's encoding, unless the
// document already holds it.
func (b *docBatch) add(name string, v any) error {
	was, err := regular.ReadFile(filepath.Join(b.dir, name), 0)
	return b.addOver(name, v, was, err)
}

// addOver is add where the caller has read the document: it holds was,
// unless reading it failed with readErr.
func (b *docBatch) addOver(name string, v any, was []byte, readErr error) error {
	path := filepath.Join(b.dir, name)
	data, changed, err := encodeOver(v, was, readErr)
	if err != nil || !changed {
		return err
	}
	f, tmp, err := b.m.createStaging(b.dir, name)
	if err != nil {
		return err
	}
	b.files, b.tmps, b.paths = append(b.files, f), append(b.tmps, tmp), append(b.paths, path)
	if _, err := f.Write(data); err != nil {
		return err
	}
	if tmp != "" { // an unnamed one was made 0644 (createUnnamed)
		if err := f.Chmod(0o644); err != nil {
			return err
		}
	}
	if len(b.files) >= docBatchMax {
		return b.commit()
	}
	return nil
}

// docBatchMax bounds the staging files a batch holds open.
const docBatchMax = 256

// commit makes the staged documents durable and renames them into place.
func (b *docBatch) commit() error {
	if len(b.files) == 0 {
		return nil
	}
	defer b.abort()
	if err := b.m.syncFiles(b.dir, b.files); err != nil {
		return err
	}
	for i, f := range b.files {
		var err error
		if b.tmps[i] == "" {
			err = placeUnnamed(f, b.paths[i])
		} else {
			err = placeLocked(f, b.tmps[i], b.paths[i])
		}
		if err != nil {
			return err
		}
		b.placed++
	}
	syncDir(b.dir)
	return nil
}

// abort closes the staged files and removes those not in place.
func (b *docBatch) abort() {
	for i, f := range b.files {
		f.Close()
		if i >= b.placed && b.tmps[i] != "" {
			os.Remove(b.tmps[i])
		}
	}
	b.files, b.tmps, b.paths, b.placed = nil, nil, nil, 0
}

// ReplaceFile writes data to path atomically, as WriteFileAtomic does, for a
// file a user keeps: through a symbolic link to the file it names (written
// in that file's directory, so the link stays a link), keeping the mode of
// the file it replaces; mode is for a new file.
func ReplaceFile(path string, data []byte, mode os.FileMode) error {
	target, err := linkTarget(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", target)
		}
		mode = fi.Mode().Perm()
	}
	return WriteFileAtomic(target, data, mode)
}

// linkTarget returns the file path names after following symbolic links,
// also when the last link dangles (the file it names is then created).
func linkTarget(path string) (string, error) {
	for hops := 0; hops < 40; hops++ {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real, nil
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil // a new file; a missing directory fails later
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", err
			}
			dest = filepath.Join(dir, dest)
		}
		path = dest
	}
	return "", &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}
