package s3

import (
	"context"
	"path"
	"time"

	"github.com/tfmirror/tfmirror/backends/mirrordoc"
)

// docView is which platforms a version document listed when it was read
// (nil: there was no document, or none a client could read).
type docView struct {
	at     time.Time
	listed map[string]bool
	wrote  bool // a mark: this process wrote the document at at
}

// listedPlatforms returns the platforms the version document at key lists,
// for a commit's check for a stale listing (unlistStale). What was seen
// within listingTTL is reused, as listings are: the document read by the
// commits of a version landing together (one request for them all), or a
// listing of the provider's folder in which there was no such document (a
// sync's plan lists it). This process's own writes of a document drop
// what was seen of it.
func (s *Store) listedPlatforms(ctx context.Context, key string) (map[string]bool, error) {
	s.mu.Lock()
	v, ok := s.views[key]
	s.mu.Unlock()
	switch {
	case ok && !v.wrote && time.Since(v.at) < listingTTL:
		return v.listed, nil
	case s.listedAbsent(key):
		return nil, nil
	}
	got, err, _ := s.flight.Do(key, func() (any, error) {
		at := time.Now()
		d, err := s.getDoc(ctx, key)
		if err != nil {
			return nil, err
		}
		view := docView{at: at}
		if d.exists {
			if vd, err := mirrordoc.ParseVersion(d.body); err == nil {
				view.listed = map[string]bool{}
				for plat := range vd.Archives {
					view.listed[plat] = true
				}
			}
		}
		s.mu.Lock()
		if cur := s.views[key]; !cur.wrote || !at.Before(cur.at) {
			s.views[key] = view
		}
		s.mu.Unlock()
		return view.listed, nil
	})
	if err != nil {
		return nil, err
	}
	return got.(map[string]bool), nil
}

// listedAbsent reports whether a listing of the folder of the document at
// key, made within listingTTL and since which this process has written
// nothing there, found no such document.
func (s *Store) listedAbsent(key string) bool {
	s.mu.Lock()
	seen, listed := s.docsSeen[path.Dir(key)+"/"]
	s.mu.Unlock()
	return listed && !seen.wrote && time.Since(seen.at) < listingTTL && !seen.keys[key]
}

// getListedDoc reads a document, unless listedAbsent: it is then missing
// without a request. The write that follows is a conditional create
// (If-None-Match: *), which the store refuses if another writer has
// created the document since; the flush then reads it and goes again.
func (s *Store) getListedDoc(ctx context.Context, key string) (doc, error) {
	if s.listedAbsent(key) {
		return doc{key: key}, nil
	}
	return s.getDoc(ctx, key)
}

// seenDocs is which documents (index.json and version documents) a
// listing of a provider's folder found.
type seenDocs struct {
	at    time.Time
	keys  map[string]bool
	wrote bool // a mark: this process wrote a document there at at
}

// sawDocs records the version documents a listing of the folder pfx,
// started at at, found; unless this process wrote one there since.
func (s *Store) sawDocs(pfx string, at time.Time, keys map[string]bool) {
	s.mu.Lock()
	if cur := s.docsSeen[pfx]; !cur.wrote || !at.Before(cur.at) {
		s.docsSeen[pfx] = seenDocs{at: at, keys: keys}
	}
	s.mu.Unlock()
}

// wroteDoc forgets what was seen of the document at key, which this
// process is about to write; what a read or a listing begun before now
// finds is not recorded.
func (s *Store) wroteDoc(key string) {
	now := time.Now()
	s.mu.Lock()
	s.views[key] = docView{at: now, wrote: true}
	s.docsSeen[path.Dir(key)+"/"] = seenDocs{at: now, wrote: true}
	s.mu.Unlock()
}
