package hclinput_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"

	"github.com/tfmirror/tfmirror/backends/hclinput"
)

// Real files of both kinds pass, with room to spare: they still pass with
// every level doubled (wrapped in as many brackets again).
func TestRealFilesPass(t *testing.T) {
	lock, err := filepath.Glob("../lockfile/testdata/golden/*.hcl")
	if err != nil || len(lock) == 0 {
		t.Fatalf("no lock files: %v", err)
	}
	for _, p := range lock {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if d := hclinput.Check(src, p, hclinput.Native); d.HasErrors() {
			t.Errorf("%s: %v", p, d)
		}
	}
	for name, src := range map[string]string{
		"cli.tfrc": `# comments, heredocs and templates
provider_installation {
  dev_overrides {
    "example.com/acme/x" = "/home/dev/x"
  }
  oci_mirror {
    repository_template = "registry.example/${namespace}/${type}"
    include             = ["example.com/*/*", "registry.terraform.io/hashicorp/*"]
  }
  network_mirror {
    url     = "https://mirror.example/tf/"
    include = ["registry.opentofu.org/*/*"]
  }
  filesystem_mirror {
    path    = "/usr/share/terraform/providers"
    include = ["*/*"]
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}
credentials "app.terraform.io" {
  token = "x.atlasv1.y" // a token
}
oci_default_credentials {
  discover_ambient_credentials = false
  docker_style_config_files    = ["/etc/docker/config.json"]
}
plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"
note = <<EOT
  ${a} %{ if b }c%{ endif }
EOT
`,
		"cli.tfrc.json": `{"provider_installation": [{"network_mirror": [{"url": "https://m.example/", "include": ["a/b", "c/d"]}]}], "credentials": {"x.example": {"token": "t"}}}`,
	} {
		syntax := hclinput.Native
		if strings.HasSuffix(name, ".json") {
			syntax = hclinput.JSON
		}
		if d := hclinput.Check([]byte(src), name, syntax); d.HasErrors() {
			t.Errorf("%s: %v", name, d)
		}
	}
}

// Every shape in which hcl's parser or evaluator recurses is refused, at the
// line where it passes the limit, well before the depth that overflows the
// stack.
func TestDeepInputRefused(t *testing.T) {
	const n = 5_000 // the limit is 100; hcl overflows the stack near 400_000
	rep := strings.Repeat
	for _, tc := range []struct {
		name   string
		src    string
		syntax hclinput.Syntax
		line   int
	}{
		{"brackets", "x = " + rep("[", n) + rep("]", n) + "\n", hclinput.Native, 1},
		{"brackets on lines", "x = 1\n" + rep("[\n", n) + rep("]\n", n), hclinput.Native, 51},
		{"blocks", rep("a {\n", n) + rep("}\n", n), hclinput.Native, 34}, // 3 levels a block: name, brace, body
		{"parentheses", "x = " + rep("(", n) + "1" + rep(")", n) + "\n", hclinput.Native, 1},
		{"objects", "x = " + rep("{a = ", n) + "1" + rep("}", n) + "\n", hclinput.Native, 1},
		{"not", "x = " + rep("!", n) + "true\n", hclinput.Native, 1},
		{"minus", "x = " + rep("-", n) + "1\n", hclinput.Native, 1},
		{"sum", "x = " + rep("1 + ", n) + "1\n", hclinput.Native, 1},
		{"ternary", "x = " + rep("true ? 1 : ", n) + "1\n", hclinput.Native, 1},
		{"index", "x = a" + rep("[b]", n) + "\n", hclinput.Native, 1},
		{"operators across lines in parentheses", "x = (\n" + rep("!\n", n) + "true)\n", hclinput.Native, 99},
		{"for expression across lines", "x = {for k in y: k =>\n" + rep("!\n", n) + "true}\n", hclinput.Native, 92},
		{"interpolations", "x = \"" + rep("${\"", n) + "\"\n", hclinput.Native, 1},
		{"template directives", "x = \"" + rep("%{ if true }", n/10) + rep("%{ endif }", n/10) + "\"\n", hclinput.Native, 1},
		{"heredoc directives", "x = <<EOT\n" + rep("%{ if true }\n", n/10) + rep("%{ endif }\n", n/10) + "EOT\n", hclinput.Native, 96},
		{"json arrays", `{"x": ` + rep("[", n) + rep("]", n) + "}", hclinput.JSON, 1},
		{"json objects on lines", "{\n" + rep("\"a\": {\n", n) + rep("}\n", n) + "}", hclinput.JSON, hclinput.MaxDepth + 1},
		// A prepend character (U+0600) takes the quote after it into its
		// grapheme cluster, so hcl's JSON scanner reads `"؀""` as one string
		// and parses the brackets after it.
		{"json string hiding brackets", `{"x": ["` + "\u0600" + `"", ` + rep("[", n) + rep("]", n) + "]}", hclinput.JSON, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := hclinput.Check([]byte(tc.src), "f.hcl", tc.syntax)
			if !d.HasErrors() {
				t.Fatal("accepted")
			}
			if d[0].Subject == nil || d[0].Subject.Filename != "f.hcl" || d[0].Subject.Start.Line != tc.line {
				t.Fatalf("diagnostic %v: want line %d", d, tc.line)
			}
			if !strings.Contains(d[0].Error(), "Nesting too deep") {
				t.Errorf("message %q", d[0].Error())
			}
		})
	}
}

// Just under the limit, hcl parses the file (the check does not refuse
// what hcl handles), and for the JSON case parses the brackets the check
// counted, not a string.
func TestShallowInputParses(t *testing.T) {
	rep := strings.Repeat
	k := hclinput.MaxDepth/2 - 2
	native := []string{
		"x = " + rep("[", k) + rep("]", k) + "\n",
		"x = " + rep("!", k) + "true\n",
		rep("a {\n", k/2) + rep("}\n", k/2),
	}
	for _, src := range native {
		if d := hclinput.Check([]byte(src), "f.hcl", hclinput.Native); d.HasErrors() {
			t.Errorf("%q refused: %v", src[:20], d)
		}
		if _, d := hclsyntax.ParseConfig([]byte(src), "f.hcl", hcl.InitialPos); d.HasErrors() {
			t.Errorf("hcl: %v", d)
		}
	}
	src := `{"x": ["` + "\u0600" + `"", [[1]]]}`
	if d := hclinput.Check([]byte(src), "f.json", hclinput.JSON); d.HasErrors() {
		t.Errorf("refused: %v", d)
	}
	f, _ := hcljson.Parse([]byte(src), "f.json")
	attrs, _ := f.Body.JustAttributes()
	v, _ := attrs["x"].Expr.Value(nil)
	if v.LengthInt() != 2 || v.Index(cty.NumberIntVal(1)).LengthInt() != 1 {
		t.Errorf("hcl did not read the brackets after the string: %#v", v)
	}
}

func TestSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.hcl")
	if err := os.WriteFile(big, make([]byte, hclinput.MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := hclinput.ReadFile(big)
	var tl *hclinput.TooLargeError
	if !errors.As(err, &tl) || tl.Size != hclinput.MaxSize+1 || err.Error() != big+": 1048577 bytes, larger than 1 MiB, the most tfmirror reads of a lock file or CLI configuration" {
		t.Errorf("ReadFile: %v", err)
	}
	if _, err := hclinput.ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	ok := filepath.Join(dir, "ok.hcl")
	if err := os.WriteFile(ok, make([]byte, hclinput.MaxSize), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := hclinput.ReadFile(ok); err != nil || len(b) != hclinput.MaxSize {
		t.Errorf("a file of MaxSize bytes: %d, %v", len(b), err)
	}
	d := hclinput.Check(make([]byte, hclinput.MaxSize+1), "f.hcl", hclinput.Native)
	if !d.HasErrors() || !strings.Contains(d.Error(), "File too large") {
		t.Errorf("Check: %v", d)
	}
}
