package backends

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Platform is an os_arch pair, as the clients name them (Go's GOOS/GOARCH).
type Platform struct {
	OS   string
	Arch string
}

func (p Platform) String() string { return p.OS + "_" + p.Arch }

// ParsePlatform parses OS_ARCH exactly as the clients do: two parts
// separated by one underscore, neither empty nor containing whitespace. It
// also refuses path separators and dot-only parts, which no real platform has
// and which would let a name escape a mirror directory.
func ParsePlatform(s string) (Platform, error) {
	parts := strings.Split(s, "_")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return Platform{}, fmt.Errorf("platform %q: must be two words separated by an underscore (os_arch, e.g. linux_amd64)", s)
	}
	for i, part := range parts {
		what := [2]string{"OS", "architecture"}[i]
		if strings.ContainsAny(part, " \t\r\n") {
			return Platform{}, fmt.Errorf("platform %q: %s portion must not contain whitespace", s, what)
		}
		if strings.IndexFunc(part, unicode.IsControl) >= 0 {
			// Platforms name files and are printed: no NUL, no terminal
			// escape sequence.
			return Platform{}, fmt.Errorf("platform %q: %s portion must not contain control characters", s, what)
		}
		if strings.ContainsAny(part, `/\`) || strings.Trim(part, ".") == "" {
			return Platform{}, fmt.Errorf("platform %q: %s portion is not a valid name", s, what)
		}
	}
	return Platform{OS: parts[0], Arch: parts[1]}, nil
}

// SortPlatforms sorts ps by their string form.
func SortPlatforms(ps []Platform) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
}
