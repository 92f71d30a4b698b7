package rewrite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Options configure Rewrite.
type Options struct {
	// Resolver finds the mirrored packages (an OCI mirror).
	Resolver modules.Resolver
	// DefaultHost is the registry NAMESPACE/NAME/SYSTEM sources mean;
	// "" means modules.DefaultHost.
	DefaultHost string
	// ByTag writes ?tag= addresses instead of ?digest= ones.
	ByTag bool
}

// Change is one module block rewritten.
type Change struct {
	Block      string // the module block's label
	Line       int
	OldSource  string
	OldVersion string // "" when there was none
	NewSource  string
	Version    string // the version chosen
}

// Problem is a module block that could not be rewritten, or a file that
// could not be read.
type Problem struct {
	File  string
	Line  int
	Block string
	Err   error
}

func (p Problem) String() string {
	s := p.File
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
	}
	if p.Block != "" {
		s += fmt.Sprintf(": module %q", p.Block)
	}
	return s + ": " + p.Err.Error()
}

// File is one configuration file and what rewriting it gives.
type File struct {
	Path string
	// Rel is Path relative to the configuration directory, for diffs.
	Rel      string
	Old, New []byte
	Changes  []Change
}

// Diff is the unified diff from Old to New ("" when they are equal).
func (f File) Diff() string {
	if bytes.Equal(f.Old, f.New) {
		return ""
	}
	name := f.Rel
	if name == "" {
		name = filepath.Base(f.Path)
	}
	return udiff.Unified("a/"+filepath.ToSlash(name), "b/"+filepath.ToSlash(name), string(f.Old), string(f.New))
}

// Write replaces the file with New atomically (synced before it takes the
// name), keeping its permissions; through a symbolic link, the file it names
// is replaced and the link kept.
func (f File) Write() error { return atomicfile.Replace(f.Path, f.New, 0o644) }

// Rewrite reads the .tf and .tofu files of the configuration in dir (not
// its subdirectories) and returns each with its module blocks rewritten;
// nothing is written. Files without registry module sources come back
// unchanged. Problems name the blocks left alone and why.
func Rewrite(ctx context.Context, dir string, o Options) ([]File, []Problem, error) {
	if o.DefaultHost == "" {
		o.DefaultHost = modules.DefaultHost
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var files []File
	var problems []Problem
	for _, de := range des {
		name := de.Name()
		if de.IsDir() || strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tofu")) {
			continue
		}
		path := filepath.Join(dir, name)
		src, err := regular.ReadFile(path, 0)
		if err != nil {
			problems = append(problems, Problem{File: path, Err: err})
			continue
		}
		f, ps := rewriteFile(ctx, path, src, o)
		problems = append(problems, ps...)
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if f != nil {
			f.Rel = name
			files = append(files, *f)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, problems, nil
}

func rewriteFile(ctx context.Context, path string, src []byte, o Options) (*File, []Problem) {
	wf, diags := hclwrite.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, []Problem{{File: path, Err: fmt.Errorf("not valid HCL: %s", diags.Error())}}
	}
	lines := moduleLines(path, src)
	out := &File{Path: path, Old: src}
	var problems []Problem
	i := -1
	for _, b := range wf.Body().Blocks() {
		if b.Type() != "module" {
			continue
		}
		i++
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		label := strings.Join(b.Labels(), ".")
		fail := func(err error) { problems = append(problems, Problem{File: path, Line: line, Block: label, Err: err}) }
		srcAttr := b.Body().GetAttribute("source")
		if srcAttr == nil {
			continue
		}
		source, ok := literal(srcAttr)
		if !ok {
			fail(fmt.Errorf("source is not a literal string; left alone"))
			continue
		}
		m, subdir, isRegistry, err := parseSource(source, o.DefaultHost)
		if err != nil {
			fail(err)
			continue
		}
		if !isRegistry {
			continue
		}
		var constraint backends.VersionConstraint
		oldVersion := ""
		if va := b.Body().GetAttribute("version"); va != nil {
			v, ok := literal(va)
			if !ok {
				fail(fmt.Errorf("version is not a literal string; left alone"))
				continue
			}
			if constraint, err = backends.ParseVersionConstraint(v); err != nil || constraint.Latest {
				if err == nil {
					err = fmt.Errorf("version %q: not a version constraint", v)
				}
				fail(err)
				continue
			}
			oldVersion = v
		}
		res, err := o.Resolver.Resolve(ctx, m, constraint)
		if err != nil {
			fail(err)
			continue
		}
		newSource := res.Address(subdir, o.ByTag)
		b.Body().SetAttributeValue("source", cty.StringVal(newSource))
		b.Body().RemoveAttribute("version")
		out.Changes = append(out.Changes, Change{Block: label, Line: line, OldSource: source, OldVersion: oldVersion, NewSource: newSource, Version: res.Version.String()})
	}
	out.New = wf.Bytes()
	if len(out.Changes) == 0 {
		// hclwrite realigns a block it has read; a file with nothing
		// rewritten stays exactly as it was.
		out.New = src
	}
	return out, problems
}

// moduleLines gives the line of each module block of src, in order. It is a
// step of its own because hclwrite, which rewrites the file, keeps no
// positions: the native parser reads the same blocks, in the same order, for
// messages. A file it cannot parse gives no lines.
func moduleLines(path string, src []byte) []int {
	var lines []int
	if nf, d := hclsyntax.ParseConfig(src, path, hcl.InitialPos); !d.HasErrors() {
		for _, b := range nf.Body.(*hclsyntax.Body).Blocks {
			if b.Type == "module" {
				lines = append(lines, b.TypeRange.Start.Line)
			}
		}
	}
	return lines
}

// parseSource recognises registry sources; hosts written as Unicode or
// with a port are compared in normal form.
func parseSource(source, defaultHost string) (modules.Module, string, bool, error) {
	m, subdir, ok, err := modules.ParseRegistrySource(source)
	if err != nil || !ok {
		return m, subdir, ok, err
	}
	if strings.Count(strings.SplitN(source, "//", 2)[0], "/") == 2 {
		// No host written: the default registry.
		m, err = modules.NewModule(defaultHost, m.Namespace, m.Name, m.System)
		if err != nil {
			return m, "", false, err
		}
	}
	return m, subdir, true, nil
}

// literal returns an attribute's value when it is a plain quoted string
// (no interpolation, no escapes that would need decoding).
func literal(a *hclwrite.Attribute) (string, bool) {
	toks := a.Expr().BuildTokens(nil)
	if len(toks) == 2 && toks[0].Type == hclsyntax.TokenOQuote && toks[1].Type == hclsyntax.TokenCQuote {
		return "", true
	}
	if len(toks) != 3 || toks[0].Type != hclsyntax.TokenOQuote || toks[1].Type != hclsyntax.TokenQuotedLit || toks[2].Type != hclsyntax.TokenCQuote {
		return "", false
	}
	s := string(toks[1].Bytes)
	if strings.ContainsAny(s, `\`) || strings.Contains(s, "${") || strings.Contains(s, "%{") {
		return "", false
	}
	return s, true
}
