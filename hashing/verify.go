package hashing

import (
	"errors"
	"fmt"
	"strings"
)

// SourceKind is a kind of source of truth for hashes.
type SourceKind string

const (
	// SourceMirrorIndex: a mirror's <version>.json (filesystem or network).
	SourceMirrorIndex SourceKind = "mirror index"
	// SourceRegistrySigned: an origin registry's SHA256SUMS whose detached
	// GPG signature checked.
	SourceRegistrySigned SourceKind = "signed SHA256SUMS"
	// SourceRegistry: hashes an origin registry reports in its download
	// metadata (shasum, packages), not covered by a signature.
	SourceRegistry SourceKind = "registry"
	// SourceOCIDigest: the sha256 digest of an OCI layer.
	SourceOCIDigest SourceKind = "OCI digest"
	// SourceLockFile: a .terraform.lock.hcl.
	SourceLockFile SourceKind = "lock file"
	// SourceBundleManifest: the manifest of an air-gap bundle, which lists
	// every file's SHA-256 and every archive's h1: and zh:.
	SourceBundleManifest SourceKind = "bundle manifest"
	// SourceArchive: hashes taken from the source's own archive before the
	// transfer, where the source states none; they prove only that the bytes
	// did not change on the way.
	SourceArchive SourceKind = "source archive"
	// SourceRelease: the release zip itself, handed in by its publisher
	// (zips given to push). It states no hash: it is the origin, with
	// nothing upstream to check it against; the hashes computed on the way
	// are what its destination will state.
	SourceRelease SourceKind = "release file"
	// SourceReleaseSums: a release's SHA256SUMS file given beside its zips
	// (goreleaser's terraform-provider-NAME_VERSION_SHA256SUMS), whose
	// signature was not checked.
	SourceReleaseSums SourceKind = "release SHA256SUMS"
)

// Vouches reports whether what a source of this kind states about a
// package is a statement about it made apart from its bytes (a signature,
// an index, a lock file), rather than the bytes' own address (an OCI
// digest, a hash taken from the same archive), which proves only that
// they did not change on the way.
func (k SourceKind) Vouches() bool { return k != SourceOCIDigest && k != SourceArchive }

// Source names one source of truth: its kind and a detail (the file, URL or
// signing key).
type Source struct {
	Kind   SourceKind `json:"kind"`
	Detail string     `json:"detail,omitempty"`
}

func (s Source) String() string {
	if s.Detail == "" {
		return string(s.Kind)
	}
	return string(s.Kind) + " (" + s.Detail + ")"
}

// Evidence is what one source of truth states about one package.
type Evidence struct {
	Source Source
	Hashes []Hash
	// AnyOf marks a source that lists hashes of several packages at once (a
	// lock file lists every platform's): one match is enough. Otherwise
	// every checkable hash must match.
	AnyOf bool
}

// Status is the outcome of one check.
type Status string

const (
	// Match: the computed hash equals what the source states.
	Match Status = "ok"
	// Mismatch: the source states a different hash.
	Mismatch Status = "mismatch"
	// Unchecked: the source states nothing checkable for this package (only
	// unknown schemes, or zh: against an unpacked directory).
	Unchecked Status = "unchecked"
)

// Check is the result of checking one source's hashes.
type Check struct {
	Source Source `json:"source"`
	Scheme Scheme `json:"scheme,omitempty"`
	Status Status `json:"status"`
	Want   []Hash `json:"want,omitempty"`
	Got    Hash   `json:"got,omitempty"`
}

func (c Check) String() string {
	switch c.Status {
	case Match:
		return fmt.Sprintf("%s%s ✓ %s", strings.TrimSuffix(string(c.Scheme), ":"), "", c.Source)
	case Mismatch:
		scheme := strings.TrimSuffix(string(c.Scheme), ":")
		if len(c.Want) == 1 {
			return fmt.Sprintf("%s mismatch against %s: want %s, got %s", scheme, c.Source, c.Want[0], c.Got)
		}
		return fmt.Sprintf("%s mismatch against %s: got %s, none of the %d stated hashes", scheme, c.Source, c.Got, len(c.Want))
	}
	return fmt.Sprintf("%s: nothing checkable", c.Source)
}

// Result is the verification of one package against every source at hand.
type Result struct {
	Sums   Sums    `json:"sums"`
	Checks []Check `json:"checks"`
}

// ErrHashMismatch is wrapped by Result.Err when any source disagrees.
var ErrHashMismatch = errors.New("hash mismatch")

// OK reports whether no source disagreed.
func (r Result) OK() bool { return r.Err() == nil }

// Verified reports whether at least one source vouched for the package and
// none disagreed.
func (r Result) Verified() bool {
	if !r.OK() {
		return false
	}
	for _, c := range r.Checks {
		if c.Status == Match {
			return true
		}
	}
	return false
}

// Err returns nil when no check failed, or an error wrapping ErrHashMismatch
// naming every failed check.
func (r Result) Err() error {
	var msgs []string
	for _, c := range r.Checks {
		if c.Status == Mismatch {
			msgs = append(msgs, c.String())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return mismatchError(strings.Join(msgs, "; "))
}

// mismatchError reads "h1 mismatch against ...: want ..., got ..." and
// matches ErrHashMismatch.
type mismatchError string

func (e mismatchError) Error() string { return string(e) }
func (e mismatchError) Unwrap() error { return ErrHashMismatch }

// Verify checks sums against every piece of evidence. For a zip, h1: is
// compared with ZipH1's value and zh: with the file's SHA-256, as the
// clients compare them. For an unpacked directory (sums.ZH empty) zh: hashes
// cannot be checked and are reported as such, never as a match.
func Verify(sums Sums, evidence ...Evidence) Result {
	res := Result{Sums: sums}
	for _, ev := range evidence {
		res.Checks = append(res.Checks, checkEvidence(sums, ev)...)
	}
	// A sum that matches is kept as the stated string, which the evidence
	// holds anyway: a verify of 100,000 archives keeps each hash once.
	for _, c := range res.Checks {
		switch {
		case c.Status != Match:
		case c.Got == res.Sums.H1:
			res.Sums.H1 = c.Got
		case c.Got == res.Sums.ZH:
			res.Sums.ZH = c.Got
		}
	}
	return res
}

func checkEvidence(sums Sums, ev Evidence) []Check {
	var checkable []Hash
	for _, h := range ev.Hashes {
		if computed(sums, h.Scheme()) != "" {
			checkable = append(checkable, h)
		}
	}
	if len(checkable) == 0 {
		return []Check{{Source: ev.Source, Status: Unchecked, Want: ev.Hashes}}
	}
	if ev.AnyOf {
		for _, h := range checkable {
			if sums.Matches(h) {
				return []Check{{Source: ev.Source, Scheme: h.Scheme(), Status: Match, Want: []Hash{h}, Got: h}}
			}
		}
		scheme := checkable[0].Scheme()
		return []Check{{Source: ev.Source, Scheme: scheme, Status: Mismatch, Want: checkable, Got: computed(sums, scheme)}}
	}
	var out []Check
	for _, h := range SortUnique(checkable) {
		got := computed(sums, h.Scheme())
		st := Match
		if got != h {
			st = Mismatch
		} else {
			got = h // the same hash; the stated string is kept anyway
		}
		out = append(out, Check{Source: ev.Source, Scheme: h.Scheme(), Status: st, Want: []Hash{h}, Got: got})
	}
	return out
}

func computed(s Sums, scheme Scheme) Hash {
	switch scheme {
	case SchemeH1:
		return s.H1
	case SchemeZip:
		return s.ZH
	}
	return ""
}

// NeedsH1 reports whether checking an archive against evidence needs its
// h1:, given its zh: (empty while it is not known yet). A source that
// states zh: is checked with it: the zip's bytes pin its contents, so its
// h1: would verify nothing more (and is not listed unless computed). h1:
// is needed where some evidence states h1: and no zh: that is the
// archive's: a network mirror or a lock file listing only h1: (or, once
// zh: is known, a lock file none of whose zh: is the archive's: it lists
// every platform's hashes, and may list this one's h1: only). Where no
// source vouches for the archive with a hash that can be checked (none
// states one, or only the bytes' own address does: an OCI digest, a
// directory without index documents), inflating it, which checks every
// entry's CRC-32, is the only check there is: h1: is computed. A release
// file given by its publisher is the origin itself, with nothing to check.
func NeedsH1(zh Hash, evidence ...Evidence) bool {
	vouched := false
	for _, ev := range evidence {
		vouched = vouched || ev.Source.Kind == SourceRelease
		for _, h := range ev.Hashes {
			vouched = vouched || h.Known() && ev.Source.Kind.Vouches()
		}
	}
	if !vouched {
		return true
	}
	for _, ev := range evidence {
		var h1, zhs, zhMatch bool
		for _, h := range ev.Hashes {
			switch h.Scheme() {
			case SchemeH1:
				h1 = true
			case SchemeZip:
				zhs = true
				zhMatch = zhMatch || h == zh
			}
		}
		if h1 && (zh == "" && !zhs || zh != "" && !zhMatch) {
			return true
		}
	}
	return false
}

// WantH1 is NeedsH1, or true when the options ask for h1: everywhere.
func (o Options) WantH1(zh Hash, evidence ...Evidence) bool {
	return o.AllHashes || NeedsH1(zh, evidence...)
}
