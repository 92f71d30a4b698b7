package cliconfig_test

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/place"
)

// FuzzParseCLIConfig checks that no input makes the reader panic, that
// every error names a position, and that every mirror it accepts is a place
// argument tfmirror can parse.
func FuzzParseCLIConfig(f *testing.F) {
	for _, s := range []string{
		full,
		fsMirror("/m"),
		"provider_installation {\n  dev_overrides {\n    \"a/b\" = \"/x\"\n  }\n}\n",
		"provider_installation {\n  oci_mirror {\n    repository_template = \"r.example/${namespace}/${type}\"\n    include = [\"example.com/*/*\"]\n  }\n}\n",
		"credentials \"x.example\" {\n  token = \"t\"\n}\n",
		`{"provider_installation": {"network_mirror": {"url": "https://m.example/"}}}`,
		"oci_credentials \"r.example/a\" {\n  username = \"u\"\n  password = \"p\"\n}\n",
	} {
		f.Add([]byte(s), strings.HasPrefix(s, "{"))
	}
	f.Fuzz(func(t *testing.T, src []byte, asJSON bool) {
		name := "fuzz.tfrc"
		if asJSON {
			name += ".json"
		}
		c, err := cliconfig.Parse(src, name)
		if c == nil {
			t.Fatal("nil config")
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), name) {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, m := range c.Mirrors {
			if _, err := place.Parse(m.Place); err != nil {
				t.Fatalf("mirror %q accepted but not a place: %v", m.Place, err)
			}
		}
	})
}
