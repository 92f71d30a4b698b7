package hashing

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Scheme is the part of a hash before and including the colon.
type Scheme string

const (
	// SchemeH1 is dirhash Hash1 of the package contents.
	SchemeH1 Scheme = "h1:"
	// SchemeZip is the lowercase hex SHA-256 of the zip file.
	SchemeZip Scheme = "zh:"
)

// Hash is a package hash in "scheme:value" form. Unknown schemes are kept
// (the clients keep them in lock files) but never match a package.
type Hash string

// ErrNoScheme is returned for a hash without a "scheme:" prefix.
var ErrNoScheme = errors.New("hash string must start with a scheme keyword followed by a colon")

// ParseHash parses "scheme:value" as the clients do: any non-empty scheme
// before the first colon. Hashes come from documents anyone can write and
// end up on terminals and in lock files, so a hash of any scheme must be
// printable ASCII without spaces (every hash the clients make is); h1:
// must be base64 and zh: lowercase hex, as the clients make them.
func ParseHash(s string) (Hash, error) {
	i := strings.IndexByte(s, ':')
	if i < 1 {
		return "", fmt.Errorf("hash %q: %w", s, ErrNoScheme)
	}
	for j := 0; j < len(s); j++ {
		if s[j] <= ' ' || s[j] > '~' {
			return "", fmt.Errorf("hash %q: only printable ASCII characters, without spaces, make a hash", s)
		}
	}
	h := Hash(s)
	switch h.Scheme() {
	case SchemeZip:
		if !isLowerHex(h.Value(), 64) {
			return "", &MalformedError{Hash: h, Want: "64 lowercase hex digits"}
		}
	case SchemeH1:
		if v := h.Value(); len(v) != 44 || !strings.HasSuffix(v, "=") || strings.Trim(v[:43], base64Chars) != "" {
			return "", &MalformedError{Hash: h, Want: "44 characters of base64"}
		}
	}
	return h, nil
}

// MalformedError is ParseHash's error for an h1: or zh: hash whose value is
// not of its scheme's form. The clients keep such a hash where a document
// or lock file states it (they require only a scheme, and printable
// text is all such a hash holds); no package ever matches it. Readers of
// what others wrote do the same (StatedHash).
type MalformedError struct {
	Hash Hash
	Want string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("hash %q: %s wants %s, so no package can ever match it", string(e.Hash), e.Hash.Scheme(), e.Want)
}

// StatedHash parses a hash a place states as the clients read it: any
// scheme, and a malformed h1: or zh: kept (with its MalformedError, to be
// warned about), since it is what the place states and it never matches. A
// hash without a scheme, or with other than printable ASCII, is refused.
func StatedHash(s string) (Hash, error) {
	h, err := ParseHash(s)
	if err == nil {
		return h, nil // without the error's target escaping: once a stated hash
	}
	var me *MalformedError
	if errors.As(err, &me) {
		return me.Hash, err
	}
	return h, err
}

const base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// Scheme returns the scheme with its colon, e.g. "h1:".
func (h Hash) Scheme() Scheme {
	if i := strings.IndexByte(string(h), ':'); i >= 0 {
		return Scheme(h[:i+1])
	}
	return ""
}

// Value returns the part after the scheme.
func (h Hash) Value() string {
	if i := strings.IndexByte(string(h), ':'); i >= 0 {
		return string(h[i+1:])
	}
	return string(h)
}

func (h Hash) String() string { return string(h) }

// Short returns the scheme and the first 8 characters of the value, for
// tables.
func (h Hash) Short() string {
	v := h.Value()
	if len(v) > 8 {
		v = v[:8] + "…"
	}
	return string(h.Scheme()) + v
}

// Known reports whether the scheme is one tfmirror (and the clients) can
// check.
func (h Hash) Known() bool { return h.Scheme() == SchemeH1 || h.Scheme() == SchemeZip }

// ZipHashFromSHA256 formats a known SHA-256 digest of a zip as a zh: hash.
func ZipHashFromSHA256(sum []byte) Hash { return Hash(fmt.Sprintf("zh:%x", sum)) }

// ZipHashFromHex formats a hex SHA-256 digest as a zh: hash, lowercased.
func ZipHashFromHex(hex string) (Hash, error) {
	hex = strings.ToLower(hex)
	if !isLowerHex(hex, 64) {
		return "", fmt.Errorf("sha256 %q: want 64 hex digits", hex)
	}
	return Hash("zh:" + hex), nil
}

// Strings is hs in their string form, in order; never nil.
func Strings(hs []Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
	}
	return out
}

// SortUnique sorts hashes by their full string (byte order, as the clients
// sort lock file hashes) and drops duplicates.
func SortUnique(hs []Hash) []Hash {
	out := append([]Hash(nil), hs...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	j := 0
	for i, h := range out {
		if i > 0 && h == out[j-1] {
			continue
		}
		out[j] = h
		j++
	}
	return out[:j]
}

// Sums are the hashes computed locally for one package.
type Sums struct {
	H1 Hash // dirhash Hash1 of the zip (ZipH1) or directory (DirH1)
	ZH Hash // SHA-256 of the zip; empty for an unpacked directory
}

// List returns the non-empty sums, sorted.
func (s Sums) List() []Hash {
	var hs []Hash
	if s.H1 != "" {
		hs = append(hs, s.H1)
	}
	if s.ZH != "" {
		hs = append(hs, s.ZH)
	}
	return SortUnique(hs)
}

// Matches reports whether h is one of the sums.
func (s Sums) Matches(h Hash) bool { return h != "" && (h == s.H1 || h == s.ZH) }

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
