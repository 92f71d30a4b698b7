package s3

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
)

var _ backends.NoteKeeper = (*Store)(nil)

// noteDir is where a bucket keeps tfmirror's own notes, beside the hosts:
// a name the clients never ask for (no provider hostname starts with a
// dot).
const noteDir = ".tfmirror-notes/"

// UpdateNote implements backends.NoteKeeper: the note is an object written
// If-Match the ETag it was read with (If-None-Match: * when new), so that
// writers on one bucket never lose each other's updates: one refused reads
// the note again and updates that.
func (s *Store) UpdateNote(ctx context.Context, name string, update func(old []byte) ([]byte, error)) error {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return fmt.Errorf("mirror %s: note %q: not a relative name", s.name, name)
	}
	key := s.prefix + noteDir + name
	return s.updateDoc(ctx, key, 8, func(d doc) ([]byte, bool, error) {
		var old []byte
		if d.exists {
			old = d.body
		}
		b, err := update(old)
		return b, err == nil && !(d.exists && bytes.Equal(b, d.body)), err
	})
}

// updateDoc reads the document at key, asks update for its new body (and
// whether to write it), and writes it conditionally on what was read: a
// write refused because another writer changed it meanwhile reads it again,
// up to attempts times, with raceRetry's waits.
func (s *Store) updateDoc(ctx context.Context, key string, attempts int, update func(d doc) ([]byte, bool, error)) error {
	for attempt := range attempts {
		d, err := s.getDoc(ctx, key)
		if err != nil {
			return err
		}
		b, write, err := update(d)
		if err != nil || !write {
			return err
		}
		if err := s.putDoc(ctx, d, b); !isPrecondition(err) {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
	return backends.Transient(fmt.Errorf("%s: other writers kept rewriting it", s.location(key)))
}
