package backends

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"
)

// Version is a provider version. Prerelease and build metadata are kept
// exactly; String gives the canonical form the clients write (missing minor
// and patch parts as zeros).
type Version = *version.Version

// ParseVersion parses a version the way the clients do for mirror directory
// names, index keys and OCI tags: semver with optional prerelease and build
// metadata, one to three numeric parts, no "v" prefix.
func ParseVersion(s string) (Version, error) {
	if s == "" {
		return nil, errors.New("empty version")
	}
	if s[0] == 'v' || s[0] == 'V' {
		return nil, fmt.Errorf("version %q: must not start with %q", s, s[:1])
	}
	core := s
	if i := strings.IndexAny(core, "-+"); i >= 0 {
		core = core[:i]
	}
	if strings.Count(core, ".") > 2 {
		return nil, fmt.Errorf("version %q: at most three numeric parts (MAJOR.MINOR.PATCH)", s)
	}
	for _, part := range strings.Split(core, ".") {
		if len(part) > 1 && part[0] == '0' {
			return nil, fmt.Errorf("version %q: numeric part %q has a leading zero", s, part)
		}
	}
	v, err := version.NewSemver(s)
	if err != nil {
		return nil, fmt.Errorf("version %q: not a semantic version", s)
	}
	return v, nil
}

// VersionKey gives versions' canonical strings (String) for use as map
// keys, computing each once for a run of the same parsed Version: a
// listing's packages of one version share it, and go-version formats the
// string afresh on every call. The zero value is ready; it is not safe for
// concurrent use.
type VersionKey struct {
	last Version
	key  string
}

// Of returns v.String().
func (k *VersionKey) Of(v Version) string {
	if v != k.last || k.last == nil {
		k.last, k.key = v, v.String()
	}
	return k.key
}

// Unspecified reports whether v is 0.0.0, which OpenTofu reads as "no
// version": it warns that a filesystem mirror's 0.0.0 "will not be used"
// and refuses to install it. No selection of provider versions picks it
// (ProviderVersions) and no lock records it. Modules have no such rule.
func Unspecified(v Version) bool { return v != nil && v.String() == "0.0.0" }

// CompareVersions orders versions with go-version's precedence; versions equal
// but for build metadata are ordered by their text so the order is total.
func CompareVersions(a, b Version) int {
	if c := a.Compare(b); c != 0 {
		return c
	}
	return strings.Compare(a.String(), b.String())
}

// VersionList names vs newest first, for messages: at most n of them, then
// how many more there are.
func VersionList(vs []Version, n int) string {
	sorted := append([]Version(nil), vs...)
	SortVersionsNewestFirst(sorted)
	var out []string
	for _, v := range sorted[:min(len(sorted), n)] {
		out = append(out, v.String())
	}
	if len(sorted) > n {
		out = append(out, fmt.Sprintf("and %d more", len(sorted)-n))
	}
	return strings.Join(out, ", ")
}

// SortVersionsNewestFirst sorts vs in place, newest first, in the order
// CompareVersions gives.
func SortVersionsNewestFirst(vs []Version) {
	// go-version's Compare renders both versions as text before anything
	// else (two allocations a comparison: a provider of 1,000 versions
	// cost 20,000 of them). Its order is by the numeric segments first,
	// padded with zeros, and only between equal segments by prerelease and
	// text: so each version's segments are taken once, and Compare is left
	// what they do not decide.
	type keyed struct {
		v    Version
		segs []int64
	}
	ks := make([]keyed, len(vs))
	for i, v := range vs {
		ks[i] = keyed{v, v.Segments64()}
	}
	newestFirst := func(a, b keyed) int {
		if c := compareSegments(b.segs, a.segs); c != 0 {
			return c
		}
		return CompareVersions(b.v, a.v)
	}
	if slices.IsSortedFunc(ks, newestFirst) {
		return // a listing's order already, as often
	}
	slices.SortStableFunc(ks, newestFirst)
	for i := range ks {
		vs[i] = ks[i].v
	}
}

// compareSegments compares version segments as go-version does, the
// shorter padded with zeros.
func compareSegments(a, b []int64) int {
	for i := range max(len(a), len(b)) {
		var x, y int64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// VersionConstraint selects versions: Terraform constraint syntax, or
// "latest" meaning the newest version a place offers (prereleases excluded
// unless they are all there is), "latest N" the newest N, and either
// followed by a comma and a constraint, the newest among the versions it
// allows ("latest 2, ~> 5.0").
type VersionConstraint struct {
	Latest bool
	// Newest is how many of the newest versions Latest selects; 0 means 1.
	Newest int
	// Constraints limit the versions (with Latest, the versions the newest
	// are taken from); nil: every version.
	Constraints version.Constraints
	text        string
}

// ParseVersionConstraint parses "" (every version), "latest", "latest N",
// either of those followed by ", CONSTRAINTS", or a Terraform constraint
// string such as "~> 5.0" or ">= 1.2, < 2.0".
func ParseVersionConstraint(s string) (VersionConstraint, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return VersionConstraint{}, nil
	}
	head, rest, _ := strings.Cut(s, ",")
	if f := strings.Fields(head); len(f) > 0 && f[0] == "latest" {
		return parseLatest(s, f[1:], rest)
	}
	c, err := version.NewConstraint(s)
	if err != nil {
		return VersionConstraint{}, fmt.Errorf("version constraint %q: %v (examples: \"~> 5.0\", \">= 1.2, < 2.0\", \"= 1.4.2\", \"latest\", \"latest 3\", \"latest 2, ~> 5.0\")", s, err)
	}
	return VersionConstraint{Constraints: c, text: s}, nil
}

// parseLatest parses "latest [N][, CONSTRAINTS]": count holds what followed
// "latest" before the first comma, rest what followed the comma.
func parseLatest(s string, count []string, rest string) (VersionConstraint, error) {
	vc := VersionConstraint{Latest: true, Newest: 1, text: s}
	switch len(count) {
	case 0:
	case 1:
		n, err := strconv.Atoi(count[0])
		if err != nil || n < 1 {
			return VersionConstraint{}, fmt.Errorf("version constraint %q: \"latest N\" needs a whole number N of at least 1 (e.g. \"latest 3\": the newest three)", s)
		}
		vc.Newest = n
	default:
		return VersionConstraint{}, fmt.Errorf("version constraint %q: want \"latest\", \"latest N\" or \"latest N, CONSTRAINTS\" (e.g. \"latest 2, ~> 5.0\")", s)
	}
	if strings.TrimSpace(rest) != "" {
		c, err := version.NewConstraint(rest)
		if err != nil {
			return VersionConstraint{}, fmt.Errorf("version constraint %q: after \"latest\": %v (e.g. \"latest 2, ~> 5.0\")", s, err)
		}
		vc.Constraints = c
	}
	return vc, nil
}

// NewestMatching is the constraint that selects the newest version c
// allows, as `terraform init` and `providers mirror` choose one (c nil:
// the newest of all).
func NewestMatching(c version.Constraints) VersionConstraint {
	vc := VersionConstraint{Latest: true, Newest: 1, Constraints: c, text: "latest"}
	if len(c) > 0 {
		vc.text = "latest, " + c.String()
	}
	return vc
}

// IsZero reports whether the constraint selects every version.
func (c VersionConstraint) IsZero() bool { return !c.Latest && c.Constraints == nil }

func (c VersionConstraint) String() string { return c.text }

// ProviderVersions is Filter for the versions of a provider, where 0.0.0
// (Unspecified) is never selected.
func (c VersionConstraint) ProviderVersions(vs []Version) []Version {
	released := make([]Version, 0, len(vs))
	for _, v := range vs {
		if !Unspecified(v) {
			released = append(released, v)
		}
	}
	return c.Filter(released)
}

// Filter returns the versions in vs (newest first) that c selects.
func (c VersionConstraint) Filter(vs []Version) []Version {
	sorted := append([]Version(nil), vs...)
	SortVersionsNewestFirst(sorted)
	var out []Version
	for _, v := range sorted {
		if c.Constraints == nil || c.Constraints.Check(v) {
			out = append(out, v)
		}
	}
	if !c.Latest {
		return out
	}
	return newest(out, max(c.Newest, 1))
}

// newest returns the first n of sorted (newest first), leaving out
// prereleases unless they are all there is.
func newest(sorted []Version, n int) []Version {
	var released []Version
	for _, v := range sorted {
		if v.Prerelease() == "" {
			released = append(released, v)
		}
	}
	if len(released) == 0 {
		released = sorted
	}
	return released[:min(n, len(released))]
}
