package backendtest_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/bundle"
	fsmirror "github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/s3"
)

// places are every kind of place: a nil of its type, which type
// assertions answer for as for an instance, and its package, whose tests
// run backendtest.Conformance against real instances.
var places = []struct {
	Name string
	Dir  string // the package, from the repository's root
	R    backends.Reader
}{
	{"fs", "backends/fs", (*fsmirror.Mirror)(nil)},
	{"oci", "backends/oci", (*oci.Mirror)(nil)},
	{"s3", "backends/s3", (*s3.Store)(nil)},
	{"net", "backends/netmirror", (*netmirror.Mirror)(nil)},
	{"registry", "backends/registry", (*registry.Registry)(nil)},
	{"bundle", "backends/bundle", (*bundle.Bundle)(nil)},
	{"release", "backends/oci/push", (*push.Zips)(nil)},
}

// own is a capability whose contract is one place's own.
type own struct {
	Name  string
	Has   func(backends.Reader) bool
	Tests map[string]string // package dir -> test
}

// ownContract are capabilities whose contract is one place's own, so no
// shared case holds them: the test in that place's package that does.
var ownContract = []own{
	{"ProviderChecker", func(r backends.Reader) bool { _, ok := r.(backends.ProviderChecker); return ok }, map[string]string{"backends/oci": "TestCheckProviders"}},
	{"Refresher", func(r backends.Reader) bool { _, ok := r.(backends.Refresher); return ok }, map[string]string{"backends/registry": "TestRefreshListsAfresh"}},
}

// notOfAPlace are the interfaces in package backends that are not a
// place's capability, and whose they are.
var notOfAPlace = map[string]string{
	"Staged":        "a staged archive's (WriterSuite)",
	"DigestChecker": "a staged archive's",
	"SentCounter":   "a staged archive's",
	"HashingReader": "an archive stream's",
	"SizedReader":   "an archive stream's",
	"H1Reader":      "an archive stream's",
	"Credentials":   "a credential store's",
}

// TestCapabilityTable builds the table of which place has which
// capability (by type assertion) and which conformance case holds it,
// and fails where the table has a hole: an interface in package backends
// that is no place's capability case, a type that reads like a place
// (an Archives method) missing from places, a place whose package does
// not run backendtest.Conformance, or a capability with a place's own
// test that is not there. With -v it prints the table as Markdown.
func TestCapabilityTable(t *testing.T) {
	root := filepath.Join("..", "..")
	cases := map[string]bool{}
	for _, c := range backendtest.Capabilities {
		cases[strings.Split(c.Name, ".")[0]] = true
	}
	for _, name := range interfacesOf(t, filepath.Join(root, "backends")) {
		if !cases[name] && notOfAPlace[name] == "" && !slices.ContainsFunc(ownContract, func(o own) bool { return o.Name == name }) {
			t.Errorf("backends.%s is an interface no conformance case covers: add its case to backendtest.Capabilities (or say whose it is in notOfAPlace)", name)
		}
	}
	known := map[string]bool{}
	for _, pl := range places {
		known[pl.Dir+" "+strings.TrimPrefix(fmt.Sprintf("%T", pl.R), "*")] = true
	}
	for _, p := range placeTypes(t, root) {
		if !known[p] {
			t.Errorf("%s has an Archives method, so it reads like a place, but places does not list it: add it, and run backendtest.Conformance in its package", p)
		}
	}

	var b strings.Builder
	b.WriteString("| capability | case |")
	for _, pl := range places {
		b.WriteString(" " + pl.Name + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(places)) + "\n")
	runs := map[string]testFile{}
	for _, pl := range places {
		runs[pl.Dir] = readTests(t, filepath.Join(root, pl.Dir))
	}
	for _, c := range backendtest.Capabilities {
		fmt.Fprintf(&b, "| %s | Conformance/%s |", c.Name, c.Case)
		for _, pl := range places {
			tf := runs[pl.Dir]
			switch {
			case !c.Has(pl.R):
				b.WriteString(" |")
			case !tf.conformance:
				t.Errorf("%s has %s, but no test in %s runs backendtest.Conformance", pl.Name, c.Name, pl.Dir)
				b.WriteString(" MISSING |")
			default:
				cell := " yes"
				for _, g := range tf.gaps {
					if step, ok := strings.CutPrefix(g, c.Case+"/"); ok {
						cell += " (gap: " + step + ")"
					}
				}
				b.WriteString(cell + " |")
			}
		}
		b.WriteString("\n")
	}
	for _, o := range ownContract {
		fmt.Fprintf(&b, "| %s | its place's own |", o.Name)
		for _, pl := range places {
			test := o.Tests[pl.Dir]
			switch {
			case !o.Has(pl.R):
				b.WriteString(" |")
			case test == "" || !runs[pl.Dir].tests[test]:
				t.Errorf("%s has %s, whose contract is its own, but %s has no test %q holding it", pl.Name, o.Name, pl.Dir, test)
				b.WriteString(" MISSING |")
			default:
				b.WriteString(" " + test + " |")
			}
		}
		b.WriteString("\n")
	}
	if testing.Verbose() {
		fmt.Print("\n" + b.String() + "\n")
	}
}

// interfacesOf returns the interface types the package in dir declares
// (its non-test files).
func interfacesOf(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var out []string
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				for _, s := range g.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						if _, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.IsExported() {
							out = append(out, ts.Name.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// placeTypes returns "DIR PKG.TYPE" for every type under root/backends
// (non-test files) with an Archives method of three parameters, the
// Reader's.
func placeTypes(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "backends"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		af, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "Archives" || fd.Type.Params.NumFields() != 3 {
				continue
			}
			typ := fd.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				out = append(out, filepath.ToSlash(rel)+" "+af.Name.Name+"."+id.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testFile is what a package's tests hold that the table asks about.
type testFile struct {
	conformance bool            // a call of backendtest.Conformance
	gaps        []string        // the Gaps its Places name
	tests       map[string]bool // its Test functions
}

func readTests(t *testing.T, dir string) testFile {
	t.Helper()
	tf := testFile{tests: map[string]bool{}}
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	fset := token.NewFileSet()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if strings.HasPrefix(n.Name.Name, "Test") && n.Recv == nil {
					tf.tests[n.Name.Name] = true
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Conformance" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "backendtest" {
						tf.conformance = true
					}
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Gaps" {
					if cl, ok := n.Value.(*ast.CompositeLit); ok {
						for _, e := range cl.Elts {
							if kv, ok := e.(*ast.KeyValueExpr); ok {
								if lit, ok := kv.Key.(*ast.BasicLit); ok {
									s, _ := strconv.Unquote(lit.Value)
									tf.gaps = append(tf.gaps, s)
								}
							}
						}
					}
				}
			}
			return true
		})
	}
	return tf
}
