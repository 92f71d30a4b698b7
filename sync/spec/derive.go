package spec

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/hclinput"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Configuration is one root module found under a from directory, with what
// it requires: the providers of every module it calls, their constraints
// merged as Terraform merges them (every module's must hold), and the
// versions its lock file pins.
type Configuration struct {
	Dir string
	// Lock is its .terraform.lock.hcl, or "".
	Lock string
	// LockOnly: the directory holds a lock file and no configuration
	// file, so the lock's providers are all it requires.
	LockOnly bool
	// LockErr is why Lock cannot be read or parsed; the configuration
	// then says nothing of what it locks, and what needs its lock (sync,
	// lock --from) must not go on with it.
	LockErr      error
	Requirements []Requirement
}

// Requirement is one provider a configuration needs.
type Requirement struct {
	Provider backends.Provider
	// Constraints are every constraint its modules state, all of which must
	// hold; none means any version.
	Constraints version.Constraints
	// Locked is the lock file's entry for it, when there is one: that
	// version is the one wanted, and its hashes check the archives.
	Locked *lockfile.Provider
	// From names what asks for it: FILE:LINE of each module's declaration
	// (or first use), and the lock file.
	From []string
}

// Versions is what the requirement's constraints select: the newest
// version they all allow, as `terraform init` and `terraform providers
// mirror` choose. When Locked is set, the locked version is wanted instead.
func (r Requirement) Versions() backends.VersionConstraint {
	return backends.NewestMatching(r.Constraints)
}

// builtinLocal is the local name of the provider built into Terraform
// (terraform_remote_state, terraform_data), which is never installed.
const builtinLocal = "terraform"

// Derive finds the configurations under dirs: every directory holding .tf
// or .tf.json files that no other module found calls with a local path
// (./, ../), and every directory holding a .terraform.lock.hcl. Directories
// named .terraform, and other hidden ones, are skipped. NAMESPACE/TYPE
// sources and implied providers (hashicorp/TYPE) are on defaultHost.
// Modules called with a remote source are read where `init` installed them
// (.terraform/modules/modules.json); one not installed adds nothing and is
// named in the notes. Errors are usage errors naming FILE:LINE; a lock file
// that cannot be read or parsed is its configuration's LockErr.
func Derive(ctx context.Context, dirs []string, defaultHost string) ([]Configuration, []string, error) {
	d := &deriver{host: defaultHost, mods: map[string]*module{}}
	var found, locks []string
	for _, dir := range dirs {
		if _, err := lockfile.CheckDir(dir); err != nil {
			return nil, nil, backends.Usagef("from %v", err)
		}
		f, l, err := walk(ctx, dir)
		if err != nil && ctx.Err() != nil {
			return nil, nil, err // an interrupt, not a mistake in the spec
		}
		if err != nil {
			return nil, nil, backends.Usagef("from %s: %v", dir, err)
		}
		found, locks = append(found, f...), append(locks, l...)
	}
	called := map[string]bool{}
	for _, dir := range found {
		m, err := d.load(dir)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range m.calls {
			if c.local != "" {
				called[c.local] = true
			}
		}
	}
	hasLock := map[string]bool{}
	for _, l := range locks {
		hasLock[filepath.Dir(l)] = true
	}
	var roots []string
	for _, dir := range found {
		if !called[dir] || hasLock[dir] {
			roots = append(roots, dir)
		}
	}
	for dir := range hasLock {
		if _, ok := d.mods[dir]; !ok {
			roots = append(roots, dir)
		}
	}
	sort.Strings(roots)
	var out []Configuration
	for _, root := range roots {
		c, err := d.configuration(root, hasLock[root])
		if err != nil {
			return nil, nil, err
		}
		out = append(out, c)
	}
	return out, d.notes, nil
}

// walk lists the directories under root holding configuration files, and
// the lock files, skipping hidden directories such as .terraform and .git
// and following links to directories (lockfile.Walk).
func walk(ctx context.Context, root string) (modules, locks []string, err error) {
	seen := map[string]bool{}
	hidden := func(name string) bool { return strings.HasPrefix(name, ".") }
	err = lockfile.Walk(ctx, root, hidden, func(p string, e fs.DirEntry) error {
		dir := filepath.Dir(p)
		switch {
		case e.Name() == lockfile.DefaultName:
			locks = append(locks, p)
		case isConfigFile(e.Name()) && !seen[dir]:
			seen[dir] = true
			modules = append(modules, dir)
		}
		return nil
	})
	return modules, locks, err
}

func isConfigFile(name string) bool {
	return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")
}

// module is what one module directory says about providers.
type module struct {
	dir string
	// required maps local names to their required_providers entries.
	required map[string]*declared
	// uses are local names used by resources, data sources and provider
	// blocks, in order, with where; provider blocks may add constraints.
	uses  []use
	calls []call
	files int // configuration files read
}

type declared struct {
	provider    backends.Provider
	constraints version.Constraints
	at          string
}

type use struct {
	local       string
	constraints version.Constraints
	at          string
}

// call is a module block: local is the called directory for a local
// source, else "" and source is kept for the modules.json lookup.
type call struct {
	name, source, local, at string
}

type deriver struct {
	host  string
	mods  map[string]*module
	notes []string
}

// load parses the configuration files of one directory, once.
func (d *deriver) load(dir string) (*module, error) {
	if m, ok := d.mods[dir]; ok {
		return m, nil
	}
	m := &module{dir: dir, required: map[string]*declared{}}
	d.mods[dir] = m
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, backends.Usagef("%v", err)
	}
	for _, e := range entries {
		if e.IsDir() || !isConfigFile(e.Name()) {
			continue
		}
		if err := d.loadFile(m, filepath.Join(dir, e.Name())); err != nil {
			return nil, err
		}
		m.files++
	}
	return m, nil
}

// fileSchema is the part of a configuration file derivation reads.
var configSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "terraform"},
	{Type: "provider", LabelNames: []string{"name"}},
	{Type: "resource", LabelNames: []string{"type", "name"}},
	{Type: "data", LabelNames: []string{"type", "name"}},
	{Type: "ephemeral", LabelNames: []string{"type", "name"}},
	{Type: "module", LabelNames: []string{"name"}},
}}

func (d *deriver) loadFile(m *module, path string) error {
	src, err := hclinput.ReadFile(path)
	if err != nil {
		return backends.Usagef("%v", err)
	}
	syntax := hclinput.Native
	if strings.HasSuffix(path, ".json") {
		syntax = hclinput.JSON
	}
	if diags := hclinput.Check(src, path, syntax); diags.HasErrors() {
		return diagErr(diags)
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	if syntax == hclinput.JSON {
		f, diags = hcljson.Parse(src, path)
	} else {
		f, diags = hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	}
	if diags.HasErrors() {
		return diagErr(diags)
	}
	content, _, diags := f.Body.PartialContent(configSchema)
	if diags.HasErrors() {
		return diagErr(diags)
	}
	for _, b := range content.Blocks {
		var err error
		switch b.Type {
		case "terraform":
			err = d.terraformBlock(m, b)
		case "provider":
			err = d.providerBlock(m, b)
		case "resource", "data", "ephemeral":
			err = d.resourceBlock(m, b)
		case "module":
			err = d.moduleBlock(m, b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func diagErr(diags hcl.Diagnostics) error {
	var lines []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			lines = append(lines, d.Error())
		}
	}
	return backends.Usagef("%s", strings.Join(lines, "\n"))
}

func at(r hcl.Range) string { return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line) }

// terraformBlock reads required_providers: NAME = "CONSTRAINT" (the old
// form) or NAME = { source = "...", version = "..." }.
func (d *deriver) terraformBlock(m *module, b *hcl.Block) error {
	content, _, diags := b.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "required_providers"}}})
	if diags.HasErrors() {
		return diagErr(diags)
	}
	for _, rp := range content.Blocks {
		attrs, diags := rp.Body.JustAttributes()
		if diags.HasErrors() {
			return diagErr(diags)
		}
		for name, a := range attrs {
			dec, err := d.requiredProvider(name, a)
			if err != nil {
				return err
			}
			if prev, ok := m.required[name]; ok {
				return backends.Usagef("%s: provider %q is already required at %s", at(a.NameRange), name, prev.at)
			}
			m.required[name] = dec
		}
	}
	return nil
}

func (d *deriver) requiredProvider(name string, a *hcl.Attribute) (*declared, error) {
	dec := &declared{at: at(a.NameRange)}
	var source, constraint string
	if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
		constraint = v.AsString()
	} else {
		pairs, diags := hcl.ExprMap(a.Expr)
		if diags.HasErrors() {
			return nil, backends.Usagef("%s: required_providers entries must be strings or objects", at(a.Expr.Range()))
		}
		for _, kv := range pairs {
			key := hcl.ExprAsKeyword(kv.Key)
			if key == "" {
				if k, diags := kv.Key.Value(nil); !diags.HasErrors() && k.Type() == cty.String {
					key = k.AsString()
				}
			}
			if key != "source" && key != "version" {
				continue // configuration_aliases
			}
			v, diags := kv.Value.Value(nil)
			if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
				return nil, backends.Usagef("%s: provider %q: %s must be a string", at(kv.Value.Range()), name, key)
			}
			if key == "source" {
				source = v.AsString()
			} else {
				constraint = v.AsString()
			}
		}
	}
	var err error
	if source == "" {
		dec.provider, err = d.implied(name)
	} else {
		dec.provider, err = parseSourceAddr(source, d.host)
	}
	if err != nil {
		return nil, backends.Usagef("%s: provider %q: %v", dec.at, name, err)
	}
	if dec.constraints, err = parseConstraints(constraint); err != nil {
		return nil, backends.Usagef("%s: provider %q: %v", dec.at, name, err)
	}
	return dec, nil
}

// parseSourceAddr parses a required_providers source: HOST/NAMESPACE/TYPE,
// or NAMESPACE/TYPE on defaultHost.
func parseSourceAddr(s, defaultHost string) (backends.Provider, error) {
	if strings.Count(s, "/") == 1 {
		s = defaultHost + "/" + s
	}
	return backends.ParseProvider(s)
}

// implied is the provider a local name means without a source: TYPE in the
// hashicorp namespace on the default registry.
func (d *deriver) implied(local string) (backends.Provider, error) {
	return backends.NewProvider(d.host, "hashicorp", local)
}

func parseConstraints(s string) (version.Constraints, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	c, err := version.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf("version constraint %q: %v", s, err)
	}
	return c, nil
}

// providerBlock: provider "NAME" { version = "..." } uses NAME and may add
// a constraint (the old way to state one).
func (d *deriver) providerBlock(m *module, b *hcl.Block) error {
	content, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "version"}}})
	u := use{local: b.Labels[0], at: at(b.DefRange)}
	if a, ok := content.Attributes["version"]; ok {
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
			return backends.Usagef("%s: provider %q: version must be a string", at(a.Expr.Range()), u.local)
		}
		c, err := parseConstraints(v.AsString())
		if err != nil {
			return backends.Usagef("%s: provider %q: %v", at(a.Expr.Range()), u.local, err)
		}
		u.constraints = c
	}
	m.uses = append(m.uses, u)
	return nil
}

// resourceBlock: a resource uses the provider its provider argument names,
// or else the one its type's prefix names (aws_instance: aws).
func (d *deriver) resourceBlock(m *module, b *hcl.Block) error {
	local, _, _ := strings.Cut(b.Labels[0], "_")
	content, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "provider"}}})
	if a, ok := content.Attributes["provider"]; ok {
		tr, diags := hcl.AbsTraversalForExpr(a.Expr)
		if diags.HasErrors() {
			return backends.Usagef("%s: provider must be a reference such as aws.west", at(a.Expr.Range()))
		}
		local = tr.RootName()
	}
	m.uses = append(m.uses, use{local: local, at: at(b.DefRange)})
	return nil
}

func (d *deriver) moduleBlock(m *module, b *hcl.Block) error {
	content, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source"}}})
	c := call{name: b.Labels[0], at: at(b.DefRange)}
	a, ok := content.Attributes["source"]
	if !ok {
		return nil
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
		return backends.Usagef("%s: module %q: source must be a literal string", at(a.Expr.Range()), c.name)
	}
	c.source = v.AsString()
	for _, prefix := range []string{"./", "../", `.\`, `..\`} {
		if strings.HasPrefix(c.source, prefix) || c.source == "." || c.source == ".." {
			c.local = filepath.Clean(filepath.Join(m.dir, filepath.FromSlash(c.source)))
			break
		}
	}
	m.calls = append(m.calls, c)
	return nil
}

// configuration collects the requirements of the module tree rooted at
// dir, and its lock file's versions.
func (d *deriver) configuration(dir string, locked bool) (Configuration, error) {
	c := Configuration{Dir: dir}
	reqs := map[backends.Provider]*Requirement{}
	var order []backends.Provider
	// add records a declaration (decl) or a use: a use of a provider
	// already recorded adds nothing unless it states a constraint.
	add := func(p backends.Provider, cs version.Constraints, from string, decl bool) {
		r, ok := reqs[p]
		if !ok {
			r = &Requirement{Provider: p}
			reqs[p] = r
			order = append(order, p)
		} else if !decl && len(cs) == 0 {
			return
		}
		r.Constraints = append(r.Constraints, cs...)
		r.From = append(r.From, from)
	}
	installed := readModulesJSON(dir)
	if err := d.collect(dir, "", installed, map[string]bool{}, add); err != nil {
		return c, err
	}
	if locked {
		c.Lock = filepath.Join(dir, lockfile.DefaultName)
		hasConfig := d.mods[dir] != nil && d.mods[dir].files > 0
		c.LockOnly = !hasConfig
		f, err := lockfile.Load(c.Lock)
		if err != nil {
			// One configuration's lock stops only what needs it.
			c.LockErr = err
			f = lockfile.New(lockfile.HeaderTerraform)
		}
		for _, l := range f.Providers() {
			r, ok := reqs[l.Addr]
			if !ok && hasConfig {
				// init drops what the configuration no longer requires.
				continue
			}
			if !ok {
				add(l.Addr, nil, c.Lock, true)
				r = reqs[l.Addr]
			} else {
				r.From = append(r.From, c.Lock)
			}
			r.Locked = l
		}
	}
	for _, p := range order {
		c.Requirements = append(c.Requirements, *reqs[p])
	}
	return c, nil
}

// collect adds the requirements of the module in dir (called as key, "" for
// the root) and of the modules it calls.
func (d *deriver) collect(dir, key string, installed map[string]string, busy map[string]bool, add func(backends.Provider, version.Constraints, string, bool)) error {
	if busy[dir] {
		return backends.Usagef("%s: module calls loop back to this directory", dir)
	}
	busy[dir] = true
	defer delete(busy, dir)
	m, err := d.load(dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(m.required))
	for name := range m.required {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		dec := m.required[name]
		add(dec.provider, dec.constraints, dec.at, true)
	}
	for _, u := range m.uses {
		if dec, ok := m.required[u.local]; ok {
			if len(u.constraints) > 0 {
				add(dec.provider, u.constraints, u.at, false)
			}
			continue
		}
		if u.local == builtinLocal {
			continue
		}
		p, err := d.implied(u.local)
		if err != nil {
			return backends.Usagef("%s: provider %q: %v", u.at, u.local, err)
		}
		add(p, u.constraints, u.at, false)
	}
	for _, c := range m.calls {
		childKey := joinKey(key, c.name)
		child := c.local
		if child == "" {
			child = installed[childKey]
		}
		if child == "" {
			d.notes = append(d.notes, fmt.Sprintf("%s: module %q (%s) is not installed, so the providers it requires are not included (run init in its configuration first)", c.at, c.name, c.source))
			continue
		}
		if err := d.collect(child, childKey, installed, busy, add); err != nil {
			return err
		}
	}
	return nil
}

func joinKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// readModulesJSON maps module keys (a, a.b) to the directories `init`
// installed them in, from .terraform/modules/modules.json; none when it is
// absent or unreadable.
func readModulesJSON(root string) map[string]string {
	b, err := regular.ReadFile(filepath.Join(root, ".terraform", "modules", "modules.json"), 0)
	if err != nil {
		return nil
	}
	var doc struct {
		Modules []struct{ Key, Dir string }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil
	}
	out := map[string]string{}
	for _, m := range doc.Modules {
		if m.Key != "" && m.Dir != "" {
			dir := filepath.FromSlash(m.Dir)
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(root, dir)
			}
			out[m.Key] = dir
		}
	}
	return out
}
