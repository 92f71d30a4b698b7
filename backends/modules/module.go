package modules

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/tfmirror/tfmirror/backends"
)

// DefaultHost is the registry OpenTofu asks for NAMESPACE/NAME/SYSTEM
// sources that name no host. Mirrored addresses are oci:// sources, which
// only OpenTofu reads, so its default is the one that matters here.
const DefaultHost = "registry.opentofu.org"

// The name rules of module registry addresses: names allow underscores and
// keep their case (registries may match case-sensitively); target systems
// are lowercase letters and digits.
var (
	namePattern   = regexp.MustCompile(`^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$`)
	systemPattern = regexp.MustCompile(`^[0-9a-z]{1,64}$`)
)

// Module is a module package address on a registry host. Host is the
// comparison form (see backends.NormalizeHostname); the other parts keep
// their case, as the clients keep it.
type Module struct {
	Host      string
	Namespace string
	Name      string
	System    string
}

// String returns HOST/NAMESPACE/NAME/SYSTEM.
func (m Module) String() string { return m.Host + "/" + m.Short() }

// Short returns NAMESPACE/NAME/SYSTEM.
func (m Module) Short() string { return m.Namespace + "/" + m.Name + "/" + m.System }

// Less orders modules by host, namespace, name, system.
func (m Module) Less(o Module) bool {
	return m.String() < o.String()
}

// NewModule validates the four parts of a module address.
func NewModule(host, namespace, name, system string) (Module, error) {
	addr := host + "/" + namespace + "/" + name + "/" + system
	h, err := backends.NormalizeHostname(host)
	if err != nil {
		return Module{}, fmt.Errorf("module address %s: hostname %q: %w", addr, host, err)
	}
	if !namePattern.MatchString(namespace) {
		return Module{}, fmt.Errorf("module address %s: namespace %q: must be 1 to 64 ASCII letters, digits, dashes and underscores, not starting or ending with a dash or underscore", addr, namespace)
	}
	if !namePattern.MatchString(name) {
		return Module{}, fmt.Errorf("module address %s: name %q: must be 1 to 64 ASCII letters, digits, dashes and underscores, not starting or ending with a dash or underscore", addr, name)
	}
	if !systemPattern.MatchString(system) {
		return Module{}, fmt.Errorf("module address %s: target system %q: must be 1 to 64 lowercase ASCII letters or digits", addr, system)
	}
	return Module{Host: h, Namespace: namespace, Name: name, System: system}, nil
}

// ParseModule parses HOST/NAMESPACE/NAME/SYSTEM, or NAMESPACE/NAME/SYSTEM
// meaning that module on defaultHost. It refuses a //subdir part: the
// command line names packages, not modules inside them.
func ParseModule(s, defaultHost string) (Module, error) {
	if strings.Contains(s, "//") || strings.ContainsAny(s, "?#") {
		return Module{}, fmt.Errorf("module address %q: want [HOST/]NAMESPACE/NAME/SYSTEM, without a //subdir or query", s)
	}
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 3:
		if defaultHost == "" {
			return Module{}, fmt.Errorf("module address %q: want HOST/NAMESPACE/NAME/SYSTEM", s)
		}
		return NewModule(defaultHost, parts[0], parts[1], parts[2])
	case 4:
		return NewModule(parts[0], parts[1], parts[2], parts[3])
	}
	return Module{}, fmt.Errorf("module address %q: want [HOST/]NAMESPACE/NAME/SYSTEM", s)
}

// ParseRegistrySource parses a module block's source argument the way
// OpenTofu decides whether it is a registry address: three or four parts
// after an optional //subdir is split off, a hostname with a dot, and not a
// version-control host. ok is false for any other kind of source (local
// paths, URLs, git:: and oci:// addresses), which callers leave alone.
func ParseRegistrySource(src string) (m Module, subdir string, ok bool, err error) {
	for _, p := range []string{"./", "../", `.\`, `..\`} {
		if strings.HasPrefix(src, p) {
			return Module{}, "", false, nil
		}
	}
	pkg, sub := SplitSubdir(src)
	if strings.HasPrefix(sub, "../") || sub == ".." {
		return Module{}, "", false, fmt.Errorf("module source %q: subdirectory %q leads outside of the package", src, sub)
	}
	parts := strings.Split(pkg, "/")
	host := DefaultHost
	switch len(parts) {
	case 3:
	case 4:
		host = parts[0]
		if !strings.Contains(host, ".") || strings.Contains(host, "::") {
			return Module{}, "", false, nil
		}
		switch strings.ToLower(host) {
		case "github.com", "bitbucket.org":
			return Module{}, "", false, nil
		}
		parts = parts[1:]
	default:
		return Module{}, "", false, nil
	}
	m, err = NewModule(host, parts[0], parts[1], parts[2])
	if err != nil {
		// Not a registry address by OpenTofu's rules either: it would be
		// handed to go-getter as some other kind of source.
		return Module{}, "", false, nil
	}
	return m, sub, true, nil
}

// SplitSubdir splits a go-getter style source into the package address and
// the //subdir inside it (cleaned, "" when absent), keeping any query on the
// package address: "git::https://h/r.git//mod/a?ref=v1" gives
// ("git::https://h/r.git?ref=v1", "mod/a").
func SplitSubdir(src string) (pkg, subdir string) {
	stop := len(src)
	if i := strings.Index(src, "?"); i >= 0 {
		stop = i
	}
	offset := 0
	if i := strings.Index(src[:stop], "://"); i >= 0 {
		offset = i + 3
	}
	i := strings.Index(src[offset:stop], "//")
	if i < 0 {
		return src, ""
	}
	i += offset
	pkg, subdir = src[:i], src[i+2:]
	if q := strings.Index(subdir, "?"); q >= 0 {
		pkg += subdir[q:]
		subdir = subdir[:q]
	}
	if subdir != "" {
		subdir = path.Clean(subdir)
		if subdir == "." {
			subdir = ""
		}
	}
	return pkg, subdir
}

// JoinSubdir puts a //subdir back into a source address, before its query
// as go-getter expects.
func JoinSubdir(pkg, subdir string) string {
	if subdir == "" {
		return pkg
	}
	if base, q, ok := strings.Cut(pkg, "?"); ok {
		return base + "//" + subdir + "?" + q
	}
	return pkg + "//" + subdir
}

// Version is a module version. String gives the canonical form (no "v",
// three numeric parts), the form OpenTofu puts in download URLs.
type Version = *version.Version

// ParseVersion parses a version as a registry lists it: go-version's
// rules, which accept a "v" prefix and short forms such as "1.0".
func ParseVersion(s string) (Version, error) {
	v, err := version.NewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("version %q: not a version number", s)
	}
	return v, nil
}

// Tag is the OCI tag for a version: the canonical version with "+" (not
// allowed in tags) mapped to "_", the convention of OpenTofu's provider
// mirrors.
func Tag(v Version) string { return strings.ReplaceAll(v.String(), "+", "_") }

// VersionFromTag reverses Tag; ok is false for tags that are not versions
// (such as "latest").
func VersionFromTag(tag string) (Version, bool) {
	s := strings.ReplaceAll(tag, "_", "+")
	v, err := version.NewSemver(s)
	if err != nil || v.String() != s {
		return nil, false
	}
	return v, true
}

// Select returns the versions among listed that c selects, newest first,
// as OpenTofu chooses among a registry's versions: strings that do not parse
// are skipped and returned in skipped; duplicates (such as "1.0" and
// "v1.0.0") count once; prereleases only match constraints that name them.
// The zero constraint selects every version.
func Select(listed []string, c backends.VersionConstraint) (selected []Version, skipped []string) {
	seen := map[string]bool{}
	var all []Version
	for _, s := range listed {
		v, err := ParseVersion(s)
		if err != nil {
			skipped = append(skipped, s)
			continue
		}
		if seen[v.String()] {
			continue
		}
		seen[v.String()] = true
		all = append(all, v)
	}
	return c.Filter(all), skipped
}
