package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// openers are the calls that open a file by name to read it, and wait on a
// named pipe found there: readers use the regular package (regular.Open,
// regular.ReadFile, hashing.OpenZip) instead.
var openers = map[string]map[string]bool{
	"os":          {"Open": true, "ReadFile": true},
	"archive/zip": {"OpenReader": true},
}

// openersAllowed are the files that open by name what tfmirror made itself
// or what cannot be a pipe: directories (to list or fsync them), its own
// staging files, /proc, and the test helpers.
var openersAllowed = map[string]string{
	"backends/fs/write.go":              "staging files and directories it made",
	"backends/lockedtemp/lockedtemp.go": "staging directories it made, to lock them",
	"backends/atomicfile/atomicfile.go": "SyncDir opens a directory, to fsync it",
	"backends/fs/dir_unix.go":           "listDir opens a directory",
	"backends/fs/unnamed_linux.go":      "/proc/self/status",
	"hashing/regular":                   "the one opener of files by name",
	"backends/oci/stage.go":             "its own staging file",
	"backends/modules/fetch":            "archives it downloaded into its own temp directory",
	"backends/backendtest":              "test helper",
	"backends/oci/ocitest":              "test helper",
	"backends/s3/s3test":                "test helper",
	"backends/registry/registrytest":    "test helper",
}

// TestReadersOpenOnlyRegularFiles: a file is opened by name to be read only
// through the regular package, which refuses a named pipe, a device or a
// socket at once (issue 31: a pipe in a mirror, under --from or given as
// --lock hung the command, deaf to SIGTERM).
func TestReadersOpenOnlyRegularFiles(t *testing.T) {
	base := root(t)
	fset := token.NewFileSet()
	for _, top := range []string{"backends", "sync", "ui", "hashing"} {
		err := filepath.WalkDir(filepath.Join(base, top), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(base, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if _, ok := openersAllowed[rel]; ok || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if _, ok := openersAllowed[rel]; ok || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			names := map[string]string{} // local name -> import path
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				name := path[strings.LastIndex(path, "/")+1:]
				if imp.Name != nil {
					name = imp.Name.Name
				}
				names[name] = path
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && openers[names[id.Name]][sel.Sel.Name] {
					t.Errorf("%s: %s.%s opens a file by name: use regular.Open or regular.ReadFile (hashing.OpenZip for a zip), which refuse a named pipe instead of waiting on it", fset.Position(sel.Pos()), id.Name, sel.Sel.Name)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
