package fs

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/lockedtemp"
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
	return writeFileAtomic(path, b, 0o644)
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

// writeFileAtomic writes data to a hidden staging file beside path,
// locked against sweepers (lockedtemp.Create), and renames it into place, so
// readers see the old content or the new, never a part.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, tmp, err := lockedtemp.Create(filepath.Dir(path), "."+filepath.Base(path))
	if err != nil {
		return err
	}
	return atomicfile.Commit(f, tmp, path, data, mode)
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
			err = lockedtemp.Place(f, b.tmps[i], b.paths[i])
		}
		if err != nil {
			return err
		}
		b.placed++
	}
	atomicfile.SyncDir(b.dir)
	return nil
}

// abort closes the staged files and removes those not in place.
func (b *docBatch) abort() {
	for i, f := range b.files {
		_ = f.Close() // discarded, or synced before it was placed
		if i >= b.placed && b.tmps[i] != "" {
			os.Remove(b.tmps[i])
		}
	}
	b.files, b.tmps, b.paths, b.placed = nil, nil, nil, 0
}
