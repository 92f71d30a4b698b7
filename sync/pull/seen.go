package pull

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// SeenDir keeps first sightings in a directory CACHE, one JSON document
// per provider under .tfmirror-pull/first-seen/HOST/NAMESPACE/TYPE.json
// (a hidden directory: the clients and tfmirror's scans skip it). A
// document is replaced whole (written beside it, then renamed), and only
// ever gains versions, each with the earliest time recorded.
type SeenDir struct {
	Dir string

	mu    gosync.Mutex
	known map[backends.Provider]map[string]time.Time
}

var _ FirstSeen = (*SeenDir)(nil)

func (s *SeenDir) path(p backends.Provider) string {
	return filepath.Join(s.Dir, ".tfmirror-pull", "first-seen", p.Hostname, p.Namespace, p.Type+".json")
}

// Saw implements FirstSeen.
func (s *SeenDir) Saw(ctx context.Context, p backends.Provider, vs []backends.Version, now time.Time) (map[string]time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		s.known = map[backends.Provider]map[string]time.Time{}
	}
	seen := s.known[p]
	var err error
	if seen == nil {
		if seen, err = s.read(p); err != nil {
			return nil, err
		}
		s.known[p] = seen
	}
	added := false
	for _, v := range vs {
		if _, ok := seen[v.String()]; !ok {
			seen[v.String()] = now.UTC()
			added = true
		}
	}
	if !added {
		return seen, nil
	}
	// Another process may have recorded some since: keep the earliest.
	if disk, err := s.read(p); err == nil {
		for v, t := range disk {
			if have, ok := seen[v]; !ok || t.Before(have) {
				seen[v] = t
			}
		}
	}
	return seen, s.write(p, seen)
}

func (s *SeenDir) read(p backends.Provider) (map[string]time.Time, error) {
	seen := map[string]time.Time{}
	b, err := regular.ReadFile(s.path(p), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return seen, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &seen); err != nil {
		return nil, fmt.Errorf("%s: %w (remove it to start the cooldown of every version again)", s.path(p), err)
	}
	return seen, nil
}

func (s *SeenDir) write(p backends.Provider, seen map[string]time.Time) error {
	file := s.path(p)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(seen, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(file, append(b, '\n'), 0o600)
}

// NoteSeen keeps first sightings in a place's notes (backends.NoteKeeper:
// a bucket), one JSON document per provider, first-seen/HOST/NAMESPACE/
// TYPE.json, updated conditionally so that several mirrors on one bucket
// keep the earliest sighting any of them made.
type NoteSeen struct {
	Keeper backends.NoteKeeper

	mu    gosync.Mutex
	known map[backends.Provider]map[string]time.Time
}

var _ FirstSeen = (*NoteSeen)(nil)

// Saw implements FirstSeen.
func (s *NoteSeen) Saw(ctx context.Context, p backends.Provider, vs []backends.Version, now time.Time) (map[string]time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		s.known = map[backends.Provider]map[string]time.Time{}
	}
	if have := s.known[p]; have != nil && allSeen(have, vs) {
		return have, nil
	}
	var seen map[string]time.Time
	name := "first-seen/" + p.Hostname + "/" + p.Namespace + "/" + p.Type + ".json"
	err := s.Keeper.UpdateNote(ctx, name, func(old []byte) ([]byte, error) {
		seen = map[string]time.Time{}
		if old != nil {
			if err := json.Unmarshal(old, &seen); err != nil {
				return nil, fmt.Errorf("note %s: %w (remove it to start the cooldown of every version again)", name, err)
			}
		}
		for _, v := range vs {
			if _, ok := seen[v.String()]; !ok {
				seen[v.String()] = now.UTC()
			}
		}
		b, err := json.MarshalIndent(seen, "", "  ")
		return append(b, '\n'), err
	})
	if err != nil {
		return nil, err
	}
	s.known[p] = seen
	return seen, nil
}

func allSeen(have map[string]time.Time, vs []backends.Version) bool {
	for _, v := range vs {
		if _, ok := have[v.String()]; !ok {
			return false
		}
	}
	return true
}
