package hclinput_test

import (
	"runtime/debug"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"

	"github.com/tfmirror/tfmirror/backends/hclinput"
)

// FuzzCheckedInputParses parses and evaluates whatever Check lets through,
// as the lock file and CLI configuration readers do, with the stack limited
// to 1 MB: what passes Check recurses a few hundred frames at most, so a
// way around the check shows as a stack overflow (a crash the fuzzer
// reports) at a few thousand levels instead of the default limit's
// hundreds of thousands.
func FuzzCheckedInputParses(f *testing.F) {
	defer debug.SetMaxStack(debug.SetMaxStack(1 << 20))
	for _, s := range []string{
		"x = [[1]]\n",
		"x = !!true\n",
		"x = (\n!\n!\ntrue)\n",
		"x = {for k in y: k =>\n!true}\n",
		"x = \"${\"${1}\"}\"\n",
		"x = <<EOT\n%{ if true }a%{ endif }\nEOT\n",
		"a { b { c = a[b][c].d }}\n",
		"x = true ? 1 : true ? 2 : 3\n",
	} {
		f.Add([]byte(s), false)
	}
	for _, s := range []string{`{"x": [[1]]}`, `{"x": ["` + "\u0600" + `"", [[1]]]}`} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, asJSON bool) {
		syntax := hclinput.Native
		if asJSON {
			syntax = hclinput.JSON
		}
		if hclinput.Check(src, "f", syntax).HasErrors() {
			return
		}
		var file *hcl.File
		if asJSON {
			file, _ = hcljson.Parse(src, "f")
		} else {
			file, _ = hclsyntax.ParseConfig(src, "f", hcl.InitialPos)
		}
		if file == nil {
			return
		}
		var walk func(hcl.Body)
		walk = func(b hcl.Body) {
			if sb, ok := b.(*hclsyntax.Body); ok {
				for _, a := range sb.Attributes {
					a.Expr.Value(nil)
					hcl.ExprList(a.Expr)
				}
				for _, blk := range sb.Blocks {
					walk(blk.Body)
				}
				return
			}
			if attrs, d := b.JustAttributes(); !d.HasErrors() {
				for _, a := range attrs {
					a.Expr.Value(nil)
				}
			}
		}
		walk(file.Body)
	})
}
