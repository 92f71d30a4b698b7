package modules

import (
	"fmt"
	"net/url"
	"strings"
)

// Location is where a registry says a module package lives.
type Location struct {
	// Raw is the location exactly as the registry gave it.
	Raw string
	// Via says where the registry gave it: "body" (the JSON location) or
	// "X-Terraform-Get".
	Via string
	// Source is the package address with any relative URL resolved against
	// the download URL and the //subdir removed: a go-getter style address
	// (git::https://..., https://.../x.zip, oci://...) or, for a direct
	// location, an http(s) URL.
	Source string
	// Subdir is the directory inside the package that holds the module.
	// Mirrors keep the whole package and carry Subdir into the addresses
	// they print, so relative calls between a package's modules still work.
	Subdir string
	// Direct marks a location the registry hosts itself
	// ("use_registry_credentials" present): an archive fetched with plain
	// HTTP, whose format is sniffed.
	Direct bool
	// UseRegistryCredentials: a direct location to be fetched with the
	// registry's own credentials.
	UseRegistryCredentials bool
}

// String returns the source address with its subdir, as it would be written
// in a configuration.
func (l Location) String() string { return JoinSubdir(l.Source, l.Subdir) }

// resolveIndirect turns a go-getter style location into a Location the way
// OpenTofu does: only strings starting with "/", "./" or "../" are relative
// URLs, resolved against the download URL (so "./pkg.zip" from
// ".../1.0.0/download" is ".../1.0.0/pkg.zip"); another registry address is
// refused, since a registry must name a real package.
func resolveIndirect(raw, via string, downloadURL *url.URL) (Location, error) {
	if raw == "" {
		return Location{}, fmt.Errorf("the registry returned no location for the package (neither a JSON \"location\" nor an X-Terraform-Get header)")
	}
	src := raw
	if strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "./") || strings.HasPrefix(raw, "../") {
		u, err := url.Parse(raw)
		if err != nil {
			return Location{}, fmt.Errorf("the registry returned an invalid relative location %q: %v", raw, err)
		}
		src = downloadURL.ResolveReference(u).String()
	}
	pkg, subdir := SplitSubdir(src)
	if subdir == ".." || strings.HasPrefix(subdir, "../") {
		return Location{}, fmt.Errorf("the registry returned location %q whose subdirectory %q leads outside of the package", raw, subdir)
	}
	if _, _, ok, _ := ParseRegistrySource(src); ok {
		return Location{}, fmt.Errorf("the registry returned location %q, which is another registry address: it must be a direct remote package address", raw)
	}
	return Location{Raw: raw, Via: via, Source: pkg, Subdir: subdir}, nil
}

// resolveDirect checks a location the registry hosts itself: an http(s)
// URL, relative ones resolved against the download URL, without a fragment.
func resolveDirect(raw string, useCreds bool, downloadURL *url.URL) (Location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Location{}, fmt.Errorf("the registry returned an invalid package URL %q: %v", raw, err)
	}
	if !u.IsAbs() {
		u = downloadURL.ResolveReference(u)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return Location{}, fmt.Errorf("the registry returned package URL %q: must be an http or https URL", raw)
	}
	if u.Fragment != "" {
		return Location{}, fmt.Errorf("the registry returned package URL %q: must not have a fragment", raw)
	}
	return Location{Raw: raw, Via: "body", Source: u.String(), Direct: true, UseRegistryCredentials: useCreds}, nil
}
