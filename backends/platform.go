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

// PlatformStrings is ps in their string form, in order; never nil, so
// that JSON shows no platforms as [].
func PlatformStrings(ps []Platform) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// JoinPlatforms is ps in their string form, in order, joined by ", ".
func JoinPlatforms(ps []Platform) string { return strings.Join(PlatformStrings(ps), ", ") }

// SortPlatforms sorts ps by their string form.
func SortPlatforms(ps []Platform) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
}

// platformOS and platformArch are other names people write for the
// clients' (Go's) operating systems and architectures.
var (
	platformOS   = map[string]string{"macos": "darwin", "osx": "darwin", "mac": "darwin", "win": "windows", "win32": "windows", "win64": "windows"}
	platformArch = map[string]string{"x86_64": "amd64", "x64": "amd64", "aarch64": "arm64", "i386": "386", "i686": "386", "x86": "386", "armv7": "arm", "armv7l": "arm", "armhf": "arm"}
)

// SuggestPlatform returns the platform as the clients name it for s
// written another way (Linux_AMD64, linux_x86_64, darwin-aarch64,
// macos_arm64), and whether s was such a spelling; a platform already in
// the clients' form, or nothing like one, gives false.
func SuggestPlatform(s string) (Platform, bool) {
	t := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	for alias, arch := range platformArch {
		if strings.HasSuffix(t, "_"+alias) {
			t = strings.TrimSuffix(t, alias) + arch
			break
		}
	}
	os, arch, ok := strings.Cut(t, "_")
	if !ok || strings.Contains(arch, "_") {
		return Platform{}, false
	}
	if o, ok := platformOS[os]; ok {
		os = o
	}
	if a, ok := platformArch[arch]; ok {
		arch = a
	}
	p, err := ParsePlatform(os + "_" + arch)
	if err != nil || p.String() == s {
		return Platform{}, false
	}
	return p, true
}
