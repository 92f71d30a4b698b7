package mirrordoc

import (
	"encoding/json"
	"path"
	"strings"
	"sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// IndexName is the name of a provider's index document.
const IndexName = "index.json"

// VersionName is the name of v's version document.
func VersionName(v backends.Version) string { return v.String() + ".json" }

// Index is index.json: the versions the mirror offers.
type Index struct {
	Versions map[string]struct{} `json:"versions"`
}

// Version is VERSION.json: each platform's archive, by URL relative to the
// document, with its hashes.
type Version struct {
	Archives map[string]Archive `json:"archives"`
}

// Archive is one platform's entry in a version document.
type Archive struct {
	Hashes []string `json:"hashes,omitempty"`
	URL    string   `json:"url"`
}

// ParseIndex returns the versions an index document lists, in canonical
// form; entries that are not versions are left out, as the clients skip
// them.
func ParseIndex(b []byte) (map[string]bool, error) {
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(idx.Versions))
	for vs := range idx.Versions {
		if plainVersion(vs) {
			out[vs] = true // its own canonical form
		} else if v, err := backends.ParseVersion(vs); err == nil {
			out[v.String()] = true
		}
	}
	return out, nil
}

// plainVersion reports whether s is MAJOR.MINOR.PATCH, each part a number
// without a leading zero (and short enough not to overflow): a version
// backends.ParseVersion takes and writes back as s, which an index of
// thousands of versions need not parse.
func plainVersion(s string) bool {
	parts, digits := 1, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && digits > 0:
			parts, digits = parts+1, 0
		case c >= '0' && c <= '9' && digits < 18 && !(digits == 1 && s[i-1] == '0'):
			digits++
		default:
			return false
		}
	}
	return parts == 3 && digits > 0
}

// ParseVersion decodes a version document.
func ParseVersion(b []byte) (*Version, error) {
	if doc, ok := parseVersionFast(b); ok {
		return doc, nil
	}
	var doc Version
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// Entry returns d's entry for plat, when there is one. describes reports
// whether its url names the archive file (compared by last segment,
// ignoring case, as the clients compare archive names).
func (d *Version) Entry(plat backends.Platform, file string) (a Archive, ok, describes bool) {
	if d == nil {
		return Archive{}, false, false
	}
	a, ok = d.Archives[plat.String()]
	return a, ok, ok && strings.EqualFold(path.Base(a.URL), file)
}

// Evidence returns what the entry states, labelled as the mirror index at
// detail (the document's name), malformed h1: and zh: hashes included (as
// the clients keep them: they never match), and what is wrong with the
// hashes it lists that are malformed or do not parse.
func (a Archive) Evidence(detail string) (hashing.Evidence, []error) {
	ev := hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceMirrorIndex, Detail: detail}}
	var bad []error
	for _, s := range a.Hashes {
		h, err := hashing.StatedHash(s)
		if err != nil {
			bad = append(bad, err)
		}
		if h != "" {
			ev.Hashes = append(ev.Hashes, h)
		}
	}
	return ev, bad
}

// Hashes decides what a rewritten version document lists for one archive,
// given the hashes the old document lists for the same file (nil when it
// lists none), the sums this process verified when it landed the archive
// (nil when another process did), whether every archive is to list h1:
// (--hashes all), and a way to find the archive's sums otherwise (hashing
// it, or what its writer recorded beside it): find computes h1: only when
// asked to. A document lists the hashes verified or computed, never others.
//
// A listing stating zh: of an archive this process did not land is kept
// without finding its sums (unless it lacks h1: and all asks for it):
// every tfmirror writer unlists an archive before replacing it, so such a
// listing describes the archive as it was verified when it landed. Finding
// them again would cost every archive's bytes on every rewrite and would
// vouch for an archive changed behind the mirror's back; as it is, verify
// reports one. Otherwise the archive's sums are listed with the listed
// hashes they agree with (a scheme not computed says nothing either way).
// Listed hashes they contradict are dropped when this process landed the
// archive, and are kept alone (contradicted is true: for verify to report)
// when the archive only changed in place.
func Hashes(listed []string, landed *hashing.Sums, all bool, find func(h1 bool) (hashing.Sums, error)) (out []string, contradicted bool, err error) {
	var hs []hashing.Hash
	var hasH1, hasZH bool
	for _, s := range listed {
		if h, err := hashing.ParseHash(s); err == nil {
			hs = append(hs, h)
			hasH1 = hasH1 || h.Scheme() == hashing.SchemeH1
			hasZH = hasZH || h.Scheme() == hashing.SchemeZip
		}
	}
	var chosen []hashing.Hash
	switch {
	case landed == nil && hasZH && (hasH1 || !all):
		chosen = hs
	default:
		var sums hashing.Sums
		if landed != nil {
			sums = *landed
		} else if sums, err = find(hasH1 || all); err != nil {
			return nil, false, err
		}
		agree := true
		for _, h := range hs {
			if (h.Scheme() == hashing.SchemeZip || h.Scheme() == hashing.SchemeH1 && sums.H1 != "") && !sums.Matches(h) {
				agree = false
			}
		}
		switch {
		case agree:
			chosen = append(sums.List(), hs...)
		case landed != nil:
			chosen = sums.List()
		default:
			chosen, contradicted = hs, true
		}
	}
	return hashing.Strings(hashing.SortUnique(chosen)), contradicted, nil
}

// Landed records the archives this process landed, by where they are (a
// path, a key), with the sums it verified them against: what Hashes takes
// as landed. The zero value is ready; it is safe for concurrent use.
type Landed struct {
	mu   sync.Mutex
	sums map[string]hashing.Sums
}

// Record notes that the archive at where landed with sums.
func (l *Landed) Record(where string, sums hashing.Sums) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sums == nil {
		l.sums = map[string]hashing.Sums{}
	}
	l.sums[where] = sums
}

// Forget drops what was recorded at where (the archive was removed).
func (l *Landed) Forget(where string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sums, where)
}

// Sums returns the sums of the archive at where, or nil when this process
// did not land it.
func (l *Landed) Sums(where string) *hashing.Sums {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.sums[where]; ok {
		return &s
	}
	return nil
}

// Under returns where this process landed archives, of those beginning
// with prefix.
func (l *Landed) Under(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for w := range l.sums {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
