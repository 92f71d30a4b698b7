package arch

import (
	"strings"
	"testing"
)

// places are the packages of the kinds of place, each with its
// sub-packages (its test servers among them). The vocabulary they share
// lives in packages that are no place: backends (the model), zipname,
// atomicfile, lockedtemp, ocitemplate, ociclient, tlscert, httpclient,
// mirrordoc, provenance. backends/place and backends/modules/modplace open every
// kind, and so import them all.
var places = []string{"backends/fs", "backends/netmirror", "backends/registry", "backends/oci", "backends/s3",
	"backends/bundle", "backends/modules/modfs", "backends/modules/modoci", "backends/modules/fetch"}

// placeImportsAllowed are the imports of one place by another that stand,
// each with its reason.
var placeImportsAllowed = map[string]string{}

// placeOf returns the place rel (a package path below the module) belongs
// to, or "".
func placeOf(rel string) string {
	for _, p := range places {
		if matchesAny(rel, []string{p}) {
			return p
		}
	}
	return ""
}

// TestPlacesStandAlone: no place imports another place; what they share
// is in packages of its own.
func TestPlacesStandAlone(t *testing.T) {
	for pkg, imps := range imports(t, "./backends/...") {
		from := placeOf(strings.TrimPrefix(pkg, module+"/"))
		if from == "" {
			continue
		}
		for _, imp := range imps {
			rel, ok := strings.CutPrefix(imp, module+"/")
			to := placeOf(rel)
			if !ok || to == "" || to == from {
				continue
			}
			if _, ok := placeImportsAllowed[from+" -> "+to]; !ok {
				t.Errorf("%s imports %s: a place imports no other place; move what they share to a package of its own under backends/", pkg, imp)
			}
		}
	}
}

// testImports lists each package of pattern with the imports of its test
// files (internal and external).
func testImports(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	return listImports(t, pattern, `{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`)
}

// TestTestImportDirection: tests hold to the direction too, with the
// real parts they need: hashing's tests use only hashing and the test
// zips of backendtest; no test of backends or sync imports a front end.
// (Tests of places and of sync do open real places of other kinds: the
// real parts, not mocks.)
func TestTestImportDirection(t *testing.T) {
	rules := []struct {
		pattern   string
		forbidden []string
		allowed   []string
	}{
		{"./hashing/...", []string{""}, []string{"hashing", "backends/backendtest"}},
		{"./backends/...", []string{"ui"}, nil},
		{"./sync/...", []string{"ui"}, nil},
	}
	for _, r := range rules {
		for pkg, imps := range testImports(t, r.pattern) {
			for _, imp := range imps {
				rel, ok := strings.CutPrefix(imp, module+"/")
				if !ok && imp != module {
					continue
				}
				if matchesAny(rel, r.forbidden) && !matchesAny(rel, r.allowed) && strings.TrimPrefix(pkg, module+"/") != rel {
					t.Errorf("a test of %s imports %s", pkg, imp)
				}
			}
		}
	}
}
