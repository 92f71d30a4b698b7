package backendtest

import (
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

// ProviderFilters parses each of ss as a provider filter, failing t on the
// first that does not parse.
func ProviderFilters(t testing.TB, ss ...string) []backends.ProviderFilter {
	t.Helper()
	var out []backends.ProviderFilter
	for _, s := range ss {
		f, err := backends.ParseProviderFilter(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// Platforms parses each of ss as a platform (OS_ARCH), failing t on the
// first that does not parse.
func Platforms(t testing.TB, ss ...string) []backends.Platform {
	t.Helper()
	var out []backends.Platform
	for _, s := range ss {
		p, err := backends.ParsePlatform(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}
