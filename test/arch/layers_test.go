package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestEngineIsALayer: the job runner (sync/engine) imports no operation,
// in its code or its tests, and the UI's jobs and queue components see
// only the engine's API, not the operations of sync.
func TestEngineIsALayer(t *testing.T) {
	check := func(pkgs map[string][]string, pattern, what string, allowed ...string) {
		for pkg, imps := range pkgs {
			for _, imp := range imps {
				rel, ok := strings.CutPrefix(imp, module+"/")
				if (ok || imp == module) && matchesAny(rel, []string{"sync"}) && !matchesAny(rel, allowed) {
					t.Errorf("%s of %s imports %s: %s", what, pkg, imp, pattern)
				}
			}
		}
	}
	rule := "the engine is the layer below the operations and imports none of them"
	check(imports(t, "./sync/engine/..."), rule, "the code", "sync/engine")
	check(testImports(t, "./sync/engine/..."), rule, "a test", "sync/engine")
	rule = "a component of the UI that shows jobs needs only the engine's API"
	check(imports(t, "./ui/jobs/..."), rule, "the code", "sync/engine")
	check(imports(t, "./ui/queue/..."), rule, "the code", "sync/engine")
}

// exportLayers are the packages whose exported names TestExportsAreUsed
// holds to what other packages use.
var exportLayers = []string{"sync", "sync/engine", "sync/audit"}

// TestExportsAreUsed: a package under sync exports a name only where
// another package uses it, where its exported API refers to it (the type
// of a result or a field), or where it is an interface others implement by
// their methods. It logs every package's count of exported top-level
// names (go test -v -run TestExportsAreUsed ./test/arch/).
func TestExportsAreUsed(t *testing.T) {
	pkgs, used := exportsAndUses(t, root(t))
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		p := pkgs[d]
		t.Logf("%-28s %4d exported names", d, len(p.names))
		if !slices.Contains(exportLayers, d) {
			continue
		}
		for name, isInterface := range p.names {
			if !used[d][name] && !p.inAPI[name] && !isInterface {
				t.Errorf("%s exports %s, which no other package uses and its API does not name: unexport it", d, name)
			}
		}
	}
}

// exported is a package's exported top-level names (true for interfaces)
// and the names its exported declarations refer to.
type exported struct {
	names map[string]bool
	inAPI map[string]bool
}

// exportsAndUses reads every non-test file of the module for its package's
// exported names, and every file for the names it uses of other packages
// of the module (by directory).
func exportsAndUses(t *testing.T, dir string) (map[string]*exported, map[string]map[string]bool) {
	pkgs := map[string]*exported{}
	used := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return skipDir(err)
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(p, "_test.go") && f.Name.Name != "main" {
			if pkgs[rel] == nil {
				pkgs[rel] = &exported{names: map[string]bool{}, inAPI: map[string]bool{}}
			}
			pkgs[rel].add(f)
		}
		uses(f, rel, used)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, used
}

func skipDir(err error) error {
	if err != nil {
		return err
	}
	return filepath.SkipDir
}

// add records f's exported top-level names, and the identifiers its
// exported declarations mention (signatures, fields, methods of exported
// types).
func (e *exported) add(f *ast.File) {
	mention := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				e.inAPI[id.Name] = true
			}
			return true
		})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
				mention(d.Type)
				if d.Recv == nil {
					e.names[d.Name.Name] = false
				}
			}
		case *ast.GenDecl:
			var enum ast.Expr // the type of a const block's values, carried down
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						_, isInterface := s.Type.(*ast.InterfaceType)
						e.names[s.Name.Name] = isInterface
						mention(s.Type)
					}
				case *ast.ValueSpec:
					if s.Type != nil {
						enum = s.Type
					}
					for _, n := range s.Names {
						if n.IsExported() {
							e.names[n.Name] = false
							if s.Type != nil {
								mention(s.Type)
							}
							// a value of an exported type (Queued of
							// JobState) is that type's API
							if id, ok := enum.(*ast.Ident); ok && d.Tok == token.CONST && id.IsExported() {
								e.inAPI[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
}

// exportedRecv says whether a method's receiver is an exported type.
func exportedRecv(fl *ast.FieldList) bool {
	typ := fl.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// uses records, by package directory, the names f (in directory rel) uses
// of the module's other packages.
func uses(f *ast.File, rel string, used map[string]map[string]bool) {
	byName := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		r, ok := strings.CutPrefix(path, module+"/")
		if !ok || r == rel {
			continue
		}
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		byName[name] = r
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok && byName[id.Name] != "" {
				r := byName[id.Name]
				if used[r] == nil {
					used[r] = map[string]bool{}
				}
				used[r][se.Sel.Name] = true
			}
		}
		return true
	})
}
