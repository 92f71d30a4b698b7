package spec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// A pull-through policy takes patterns alone, min_age in Go's durations or
// days, and refuses what a pull-through mirror cannot honour, naming the
// file and line; a sync spec ignores nothing it used to require.
func TestLoadPolicy(t *testing.T) {
	for _, c := range []struct {
		src, want string
		age       time.Duration
	}{
		{src: `allow = ["hashicorp/*"]`},
		{src: `min_age = "7d"`, age: 7 * 24 * time.Hour},
		{src: "min_age = \"90m\"\nprovider \"hashicorp/aws\" {\n  versions = \"~> 5.0\"\n}\n", age: 90 * time.Minute},
		{src: "\nmin_age = \"soon\"", want: "p.hcl:2"},
		{src: `min_age = "-1h"`, want: `min_age "-1h"`},
		{src: `destinations = ["./m"]`, want: "no destinations"},
		{src: `from = ["../infra"]`, want: "does not read configurations"},
		{src: "provider \"hashicorp/aws\" {\n  source = \"https://m.example/\"\n}\n", want: "leave source out"},
	} {
		file := filepath.Join(t.TempDir(), "p.hcl")
		if err := os.WriteFile(file, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := spec.LoadPolicy(file)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, backends.ErrUsage) {
				t.Errorf("%q: %v, want a usage error saying %q", c.src, err, c.want)
			}
			continue
		}
		if err != nil || s.MinAge != c.age {
			t.Errorf("%q: %v, min_age %s, want %s", c.src, err, s.MinAge, c.age)
		}
	}
	// A sync spec with min_age still needs its destinations.
	file := filepath.Join(t.TempDir(), "s.hcl")
	if err := os.WriteFile(file, []byte("min_age = \"1h\"\nprovider \"hashicorp/aws\" {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Load(file); err == nil || !strings.Contains(err.Error(), "no destinations") {
		t.Errorf("a sync spec without destinations: %v", err)
	}
}
