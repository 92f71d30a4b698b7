package place

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

// A place argument a shell or a slip of the hand mangled is a usage error
// saying what was probably meant; what it was meant to be still parses.
func TestParseMangledInput(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want string // "" parses
	}{
		{"oci://reg.example/tf//", "the shell probably expanded ${...}: quote the template, e.g. 'oci://reg.example/tf/${namespace}/${type}'"},
		{"oci://reg.example/tf//x", "e.g. 'oci://reg.example/tf/${namespace}/${type}'"},
		{"oci://reg.example/tf/", "the shell probably expanded ${...}"},
		{"oci://reg.example/", "e.g. 'oci://reg.example/${namespace}/${type}'"},
		{"oci://reg.example/tf/{namespace}/{type}", "{namespace} is not a template symbol, ${namespace} is: the shell probably expanded ${...}: quote the template, e.g. 'oci://reg.example/tf/${namespace}/${type}'"},
		{"oci://reg.example/tf/${hostname}/{namespace}/${type}", "e.g. 'oci://reg.example/tf/${hostname}/${namespace}/${type}'"},
		{"https//mirror.example/tf/", "did you mean https://mirror.example/tf/?"},
		{"REGISTRY//registry.example", "did you mean REGISTRY://registry.example?"},
		{"oci://reg.example/tf/${namespace}/${type}", ""},
		{"oci://reg.example/tf/${hostname}/${namespace}/${type}", ""},
		{"https://mirror.example/tf/", ""},
		{"./https//mirror", ""},
	} {
		_, err := Parse(c.arg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.arg, err)
		case c.want != "" && (!errors.Is(err, backends.ErrUsage) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want a usage error saying %q", c.arg, err, c.want)
		}
	}
	// A directory that is named so is a directory.
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Join("https", "mirror"), 0o755); err != nil {
		t.Fatal(err)
	}
	if s, err := Parse("https//mirror"); err != nil || s.Kind != FS {
		t.Errorf("https//mirror, a directory: %v %v", s, err)
	}
}
