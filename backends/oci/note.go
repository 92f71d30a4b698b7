package oci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
)

// Notes (backends.NoteKeeper: a pull-through's fetch leases and first
// sightings). A note named KIND/HOST/NAMESPACE/TYPE/... is kept in that
// provider's repository as a small manifest (artifactType
// ArtifactTypeNote, its bytes in an annotation) behind a tag of its own,
// tfmirror-note-HASH (HASH: 32 hex digits of the SHA-256 of the name),
// which parses as no version: OpenTofu and every listing ignore it.
// Registries have no compare-and-swap on tags, so an update is made under
// a lock of the note's own: the repository's writer lock's algorithm
// (lock.go) over three tags of its own (NoteTag(name)-lock, -gate and
// -released), so that writers of different notes, and the index flushes,
// do not take turns, and a writer alone takes it without waiting: of two
// processes updating one note at once, the second reads what the first
// wrote. An update that writes nothing (it fails, or leaves the note as it
// is: a fetch lease's waiters read it every 150 ms) takes no lock.

// ArtifactTypeNote is the artifactType of a note's manifest.
const ArtifactTypeNote = "application/vnd.tfmirror.note.v1"

// annotationNote holds a note's bytes, base64.
const annotationNote = "dev.tfmirror.note"

var _ backends.NoteKeeper = (*Mirror)(nil)

// noteLockTags are the tags of the note's own lock: NoteTag(name) followed
// by -lock, -gate and -released.
func noteLockTags(name string) lockTags {
	t := NoteTag(name)
	return lockTags{y: t + "-lock", x: t + "-gate", r: t + "-released"}
}

// NoteTag is the tag of the note called name.
func NoteTag(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "tfmirror-note-" + hex.EncodeToString(sum[:16])
}

// noteRepo is the repository of the provider a note's name starts with,
// after its kind: KIND/HOST/NAMESPACE/TYPE/..., or KIND/HOST/NAMESPACE/
// TYPE.json (a provider type has no dot).
func (m *Mirror) noteRepo(name string) (*remote.Repository, Repository, error) {
	parts := strings.Split(name, "/")
	if len(parts) == 4 {
		parts[3] = strings.TrimSuffix(parts[3], ".json")
	}
	if len(parts) < 4 || parts[1] == "" || parts[2] == "" || parts[3] == "" || strings.Contains(parts[3], ".") {
		return nil, Repository{}, fmt.Errorf("oci mirror %s: note %q: not KIND/HOST/NAMESPACE/TYPE/NAME: an OCI mirror keeps a note in its provider's repository", m.name, name)
	}
	return m.repo(backends.Provider{Hostname: parts[1], Namespace: parts[2], Type: parts[3]})
}

// readNote reads the note called name, nil when there is none.
func (m *Mirror) readNote(ctx context.Context, r *remote.Repository, addr Repository, name string) ([]byte, error) {
	label := "note " + name
	desc, err := m.tagState(ctx, r, addr, label, NoteTag(name))
	if err != nil || desc.Digest == "" {
		return nil, err
	}
	b, err := fetchManifest(ctx, r, desc)
	if err != nil {
		return nil, classify(err, fmt.Sprintf("read the note (tag %q)", NoteTag(name)), m.name, addr, label)
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(b, &man); err != nil || man.ArtifactType != ArtifactTypeNote {
		return nil, fmt.Errorf("oci mirror %s: repository %s: tag %q names no tfmirror note", m.name, addr, NoteTag(name))
	}
	note, err := base64.StdEncoding.DecodeString(man.Annotations[annotationNote])
	if err != nil {
		return nil, fmt.Errorf("oci mirror %s: repository %s: note %q: %w", m.name, addr, NoteTag(name), err)
	}
	return note, nil
}

// UpdateNote implements backends.NoteKeeper: it reads the note and gives
// it to update; when update would change it, it takes the note's lock,
// reads the note again (and gives it to update again, if
// another writer changed it meanwhile), and pushes what update returns.
func (m *Mirror) UpdateNote(ctx context.Context, name string, update func(old []byte) ([]byte, error)) error {
	r, addr, err := m.noteRepo(name)
	if err != nil {
		return err
	}
	old, err := m.readNote(ctx, r, addr, name)
	if err != nil {
		return err
	}
	b, err := update(old)
	if err != nil || old != nil && bytes.Equal(b, old) {
		return err
	}
	for turn := 1; ; turn++ {
		err := m.updateNoteLocked(ctx, r, addr, name, old, b, update)
		if !errors.Is(err, errLockLost) || ctx.Err() != nil || turn == lockAttempts {
			return err
		}
		// Another writer took the note's lock meanwhile (the holder is
		// stopped before it pushes): a new turn reads the note again.
	}
}

// updateNoteLocked takes the note's lock, reads the note again, and pushes
// b, what update made of old, or, where another writer changed the note
// since, what update makes of the note now.
func (m *Mirror) updateNoteLocked(ctx context.Context, r *remote.Repository, addr Repository, name string, old, b []byte, update func([]byte) ([]byte, error)) error {
	label := "note " + name
	lk, err := m.lockWith(ctx, r, addr, label, noteLockTags(name))
	if err != nil {
		return err
	}
	defer lk.release()
	now, err := m.readNote(ctx, r, addr, name)
	if err != nil {
		return err
	}
	if !bytes.Equal(now, old) || (now == nil) != (old == nil) {
		if b, err = update(now); err != nil || now != nil && bytes.Equal(b, now) {
			return err
		}
	}
	desc, body := noteManifest(b)
	tag := NoteTag(name)
	return lk.push(ctx, label, func() error {
		err := retryRace(ctx, func() error { return r.PushReference(ctx, desc, bytes.NewReader(body), tag) })
		return classify(err, fmt.Sprintf("push the note (tag %q)", tag), m.name, addr, label)
	})
}

// noteManifest is the manifest holding a note's bytes.
func noteManifest(note []byte) (ocispec.Descriptor, []byte) {
	return emptyManifest(ArtifactTypeNote, map[string]string{annotationNote: base64.StdEncoding.EncodeToString(note)})
}
