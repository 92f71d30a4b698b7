// Package arch checks the shape of the code: which package may import
// which, and how long a function may grow. A move that breaks the one
// direction data flows in (backends -> sync -> reporters) fails here.
package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/tfmirror/tfmirror"

// root is the module's directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// imports lists each package of pattern with its non-test imports.
func imports(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	return listImports(t, pattern, `{{range .Imports}} {{.}}{{end}}`)
}

// listImports lists each package of pattern with the imports that
// format (a go list template) names.
func listImports(t *testing.T, pattern, format string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}"+format, pattern)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	return m
}

// TestImportDirection: hashing (with hashing/regular, opening only regular
// files) is the leaf; backends know nothing of sync
// or the front ends; sync knows no concrete kind of place and no front end.
func TestImportDirection(t *testing.T) {
	rules := []struct {
		pattern   string
		forbidden []string // import path prefixes, below the module
		allowed   []string // exceptions to forbidden
	}{
		{"./hashing/...", []string{""}, []string{"hashing"}},
		{"./backends/...", []string{"sync", "ui"}, nil},
		{"./sync/...", []string{"ui", "backends/fs", "backends/netmirror", "backends/registry", "backends/oci", "backends/place",
			"backends/modules/modfs", "backends/modules/modoci", "backends/modules/modplace", "backends/modules/fetch"}, nil},
	}
	for _, r := range rules {
		for pkg, imps := range imports(t, r.pattern) {
			for _, imp := range imps {
				rel, ok := strings.CutPrefix(imp, module+"/")
				if !ok && imp != module {
					continue
				}
				if matchesAny(rel, r.forbidden) && !matchesAny(rel, r.allowed) {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
		}
	}
}

func matchesAny(rel string, prefixes []string) bool {
	for _, p := range prefixes {
		if p == "" || rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// TestMainIsWiring: main.go is a context and one call into the command line.
func TestMainIsWiring(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 40 {
		t.Errorf("main.go has %d lines; at most 40 (the command line lives in ui/cli)", n)
	}
}

// TestFunctionLength: no function outside tests is longer than 80 lines.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(root(t), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 80 {
				rel, _ := filepath.Rel(root(t), p)
				t.Errorf("%s: %s is %d lines long; split it (at most 80)", rel, fd.Name.Name, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTopLevelIsFixed: the top level of the repository is fixed (the
// brief's architecture); a new package goes under one of the layers.
func TestTopLevelIsFixed(t *testing.T) {
	allowed := map[string]bool{"main.go": true, "ui": true, "sync": true, "backends": true, "hashing": true,
		"go.mod": true, "go.sum": true, "README.md": true, ".ci": true, "test": true, "bench": true, "docs": true,
		".git": true, ".gitignore": true}
	out, err := exec.Command("git", "-C", root(t), "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		top, _, _ := strings.Cut(f, "/")
		if !allowed[top] && !seen[top] {
			seen[top] = true
			t.Errorf("%s at the top level: the top level is main.go, ui/, sync/, backends/, hashing/, go.mod, go.sum, README.md, .ci/ (and test/, bench/, docs/); move it under a layer", top)
		}
	}
}

// TestOneEngineBuilder: every command builds its engine through Env.engine
// (ui/cli/env.go), so that what an engine is given (jobs, hashing options)
// is decided once.
func TestOneEngineBuilder(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), "ui", "cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "env.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "engine.NewEngine(") {
			t.Errorf("%s builds an engine itself: use env.engine(ctx, jobs)", filepath.Base(f))
		}
	}
}
