package spec

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/hclinput"
	"github.com/tfmirror/tfmirror/backends/modules"
)

// DefaultRegistry is the host of provider addresses written NAMESPACE/TYPE,
// in a spec and in configurations, unless the spec's default_registry says
// otherwise: Terraform's, as `terraform providers mirror` reads them.
const DefaultRegistry = "registry.terraform.io"

// Spec is a mirror spec file, checked. Relative paths in it (places and
// from directories) are relative to the file's directory, and are stored
// joined with it.
type Spec struct {
	// Path is the file read, for messages.
	Path string
	// Destinations are the places (as the command line writes them) that
	// must hold every wanted provider package.
	Destinations []string
	// Source is the place providers are copied from unless their block names
	// another; "" means each provider's origin registry, registry://HOST.
	Source string
	// Platforms are the platforms wanted unless a provider block names
	// others; none means every platform the source offers.
	Platforms []backends.Platform
	// From are directories of configurations and lock files whose
	// requirements are wanted too (see Derive).
	From []string
	// DefaultRegistry is the host of NAMESPACE/TYPE addresses.
	DefaultRegistry string
	// Allow, when not empty, limits the wanted providers to those matching
	// one of its patterns; Deny removes those matching one of its own. A
	// pattern without a hostname means DefaultRegistry.
	Allow, Deny []cliconfig.Pattern
	// AllowModules and DenyModules are the allow and deny patterns of four
	// parts, HOST/NAMESPACE/NAME/SYSTEM: they do for module blocks what
	// Allow and Deny do for providers (see WantedModules).
	AllowModules, DenyModules []modules.Pattern
	Providers                 []Provider
	Modules                   []Module
	// MinAge is the pull-through mirror's cooldown (min_age): a version
	// is offered only once it was first seen upstream at least this long
	// ago. Zero: at once. A sync ignores it.
	MinAge time.Duration
}

// Provider is one provider block.
type Provider struct {
	Addr backends.Provider
	// Versions the block wants; IsZero when the block only sets platforms or
	// a source for a provider the configurations under from require.
	Versions  backends.VersionConstraint
	Platforms []backends.Platform // none: the spec's
	Source    string              // "": the spec's
	// At is FILE:LINE of the block.
	At string
}

// Module is one module block: a module's versions, mirrored from its
// registry into one destination.
type Module struct {
	Addr        modules.Module
	Versions    backends.VersionConstraint
	Destination string
	// Source is the module registry, registry://HOST; by default the
	// module address's host.
	Source string
	At     string
}

// Load reads and checks a spec file. Its errors wrap backends.ErrUsage and
// name the file and line.
func Load(path string) (*Spec, error) {
	src, err := hclinput.ReadFile(path)
	if err != nil {
		return nil, backends.Usagef("spec: %v", err)
	}
	return Parse(src, path)
}

// Parse checks a spec file's bytes; filename names it in messages and
// anchors its relative paths.
func Parse(src []byte, filename string) (*Spec, error) {
	p := &parser{file: filename, dir: filepath.Dir(filename)}
	s := p.parse(src)
	if err := p.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// templateSymbols are the names OCI repository templates use. In a spec
// they evaluate to themselves, so that "oci://r/${namespace}/${type}" is
// written as in a CLI configuration and reaches the OCI place unchanged.
var templateSymbols = []string{"hostname", "namespace", "type", "name", "system"}

func evalContext() *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for _, s := range templateSymbols {
		vars[s] = cty.StringVal("${" + s + "}")
	}
	return &hcl.EvalContext{Variables: vars}
}

// fileSchema is what a spec file may hold.
var fileSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "destinations"}, {Name: "source"}, {Name: "platforms"}, {Name: "from"},
		{Name: "default_registry"}, {Name: "allow"}, {Name: "deny"}, {Name: "min_age"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "provider", LabelNames: []string{"address"}},
		{Type: "module", LabelNames: []string{"address"}},
	},
}

type providerBody struct {
	Versions  *string  `hcl:"versions,optional"`
	Platforms []string `hcl:"platforms,optional"`
	Source    *string  `hcl:"source,optional"`
}

type moduleBody struct {
	Versions    string  `hcl:"versions"`
	Destination *string `hcl:"destination,optional"`
	Source      *string `hcl:"source,optional"`
}

// parser collects every problem of one file before giving up.
type parser struct {
	file, dir string
	diags     hcl.Diagnostics
	// policy: the file is a pull-through mirror's policy (LoadPolicy),
	// which needs no destinations and may want nothing but patterns.
	policy bool
}

func (p *parser) errorf(r hcl.Range, format string, args ...any) {
	p.diags = append(p.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf(format, args...), Subject: r.Ptr()})
}

// err is every error diagnostic, each with FILE:LINE:COLUMN, as a usage
// error.
func (p *parser) err() error {
	var lines []string
	for _, d := range p.diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		pos := p.file
		if d.Subject != nil {
			pos = fmt.Sprintf("%s:%d:%d", p.file, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		lines = append(lines, pos+": "+msg)
	}
	if len(lines) == 0 {
		return nil
	}
	return backends.Usagef("%s", strings.Join(lines, "\n"))
}

func (p *parser) at(r hcl.Range) string { return fmt.Sprintf("%s:%d", p.file, r.Start.Line) }

func (p *parser) parse(src []byte) *Spec {
	if diags := hclinput.Check(src, p.file, hclinput.Native); diags.HasErrors() {
		p.diags = append(p.diags, diags...)
		return nil
	}
	f, diags := hclsyntax.ParseConfig(src, p.file, hcl.InitialPos)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	content, diags := f.Body.Content(fileSchema)
	p.diags = append(p.diags, diags...)
	s := &Spec{Path: p.file, DefaultRegistry: DefaultRegistry}
	p.top(s, content.Attributes)
	seen := map[string]string{}
	for _, b := range content.Blocks {
		switch b.Type {
		case "provider":
			if pr, ok := p.provider(b, s.DefaultRegistry); ok {
				p.once(seen, "provider "+pr.Addr.String(), pr.At, b.LabelRanges[0])
				s.Providers = append(s.Providers, pr)
			}
		case "module":
			if m, ok := p.module(b); ok {
				p.once(seen, "module "+m.Addr.String(), m.At, b.LabelRanges[0])
				s.Modules = append(s.Modules, m)
			}
		}
	}
	if p.policy {
		p.checkPolicy(s, f.Body.(*hclsyntax.Body).SrcRange)
		return s
	}
	if len(s.Destinations) == 0 && len(s.Providers)+len(s.From) > 0 {
		p.errorf(f.Body.(*hclsyntax.Body).SrcRange, `no destinations: say where the providers go, e.g. destinations = ["./mirror"]`)
	}
	if len(s.Providers)+len(s.From)+len(s.Modules) == 0 {
		p.errorf(f.Body.(*hclsyntax.Body).SrcRange, `the spec wants nothing: add provider or module blocks, or from = ["DIR"] to take the providers configurations require`)
	}
	return s
}

// once reports a second block for the same address.
func (p *parser) once(seen map[string]string, key, at string, r hcl.Range) {
	if first, dup := seen[key]; dup {
		p.errorf(r, "%s is already described at %s: one block per address", key, first)
		return
	}
	seen[key] = at
}

// top decodes the file's own arguments.
func (p *parser) top(s *Spec, attrs hcl.Attributes) {
	ctx := evalContext()
	str := func(name string) (string, *hcl.Attribute) {
		a, ok := attrs[name]
		if !ok {
			return "", nil
		}
		var v string
		p.diags = append(p.diags, gohcl.DecodeExpression(a.Expr, ctx, &v)...)
		return v, a
	}
	list := func(name string) ([]string, *hcl.Attribute) {
		a, ok := attrs[name]
		if !ok {
			return nil, nil
		}
		var v []string
		p.diags = append(p.diags, gohcl.DecodeExpression(a.Expr, ctx, &v)...)
		return v, a
	}
	if h, a := str("default_registry"); a != nil {
		norm, err := backends.NormalizeHostname(h)
		if err != nil {
			p.errorf(a.Expr.Range(), "default_registry %q: %v", h, err)
		} else {
			s.DefaultRegistry = norm
		}
	}
	if d, a := list("destinations"); a != nil {
		for _, arg := range d {
			s.Destinations = append(s.Destinations, p.place(arg, a.Expr.Range()))
		}
	}
	if src, a := str("source"); a != nil {
		s.Source = p.place(src, a.Expr.Range())
	}
	if plats, a := list("platforms"); a != nil {
		s.Platforms = p.platforms(plats, a.Expr.Range())
	}
	if dirs, a := list("from"); a != nil {
		for _, d := range dirs {
			s.From = append(s.From, p.path(d))
		}
		if len(dirs) == 0 {
			p.errorf(a.Expr.Range(), "from is empty: name directories of configurations, or leave it out")
		}
	}
	if age, a := str("min_age"); a != nil {
		s.MinAge = p.minAge(age, a.Expr.Range())
	}
	s.Allow, s.AllowModules = p.patterns(list("allow"))
	s.Deny, s.DenyModules = p.patterns(list("deny"))
}

func (p *parser) provider(b *hcl.Block, defaultHost string) (Provider, bool) {
	var body providerBody
	diags := gohcl.DecodeBody(b.Body, evalContext(), &body)
	p.diags = append(p.diags, diags...)
	addr, err := parseProviderAddr(b.Labels[0], defaultHost)
	if err != nil {
		p.errorf(b.LabelRanges[0], "%v", err)
		return Provider{}, false
	}
	if diags.HasErrors() {
		return Provider{}, false
	}
	pr := Provider{Addr: addr, At: p.at(b.DefRange)}
	attrs, _ := b.Body.JustAttributes()
	if body.Versions != nil {
		c, err := backends.ParseVersionConstraint(*body.Versions)
		switch {
		case err != nil:
			p.errorf(attrs["versions"].Expr.Range(), "provider %s: %v", addr, err)
		case c.IsZero():
			p.errorf(attrs["versions"].Expr.Range(), `provider %s: versions is empty; give a constraint ("~> 5.0"), "latest" or "latest N"`, addr)
		}
		pr.Versions = c
	}
	if body.Platforms != nil {
		pr.Platforms = p.platforms(body.Platforms, attrs["platforms"].Expr.Range())
	}
	if body.Source != nil {
		pr.Source = p.place(*body.Source, attrs["source"].Expr.Range())
	}
	return pr, true
}

func (p *parser) module(b *hcl.Block) (Module, bool) {
	var body moduleBody
	diags := gohcl.DecodeBody(b.Body, evalContext(), &body)
	p.diags = append(p.diags, diags...)
	addr, err := modules.ParseModule(b.Labels[0], modules.DefaultHost)
	if err != nil {
		p.errorf(b.LabelRanges[0], "%v", err)
		return Module{}, false
	}
	if diags.HasErrors() {
		return Module{}, false
	}
	attrs, _ := b.Body.JustAttributes()
	m := Module{Addr: addr, At: p.at(b.DefRange), Source: "registry://" + addr.Host}
	switch {
	case body.Destination != nil && p.policy:
		p.errorf(attrs["destination"].Expr.Range(), "module %s: a pull-through policy has no destinations: every package lands in the CACHE given to serve; leave destination out", addr)
	case body.Destination != nil:
		m.Destination = p.place(*body.Destination, attrs["destination"].Expr.Range())
	case !p.policy:
		p.errorf(b.Body.MissingItemRange(), "module %s: destination: say where its packages go (oci://REGISTRY/TEMPLATE or a directory)", addr)
	}
	c, err := backends.ParseVersionConstraint(body.Versions)
	if err != nil || c.IsZero() {
		p.errorf(attrs["versions"].Expr.Range(), `module %s: versions: a constraint ("~> 5.0"), "latest" or "latest N" is needed: a registry keeps every release ever made`, addr)
	}
	m.Versions = c
	if body.Source != nil {
		m.Source = *body.Source
		if !strings.HasPrefix(m.Source, "registry://") {
			p.errorf(attrs["source"].Expr.Range(), "module %s: source %q: modules are mirrored from a module registry, registry://HOST", addr, m.Source)
		}
	}
	return m, true
}

// parseProviderAddr parses HOST/NAMESPACE/TYPE, or NAMESPACE/TYPE on
// defaultHost.
func parseProviderAddr(s, defaultHost string) (backends.Provider, error) {
	if strings.Count(s, "/") == 1 {
		s = defaultHost + "/" + s
	}
	return backends.ParseProvider(s)
}

func (p *parser) platforms(names []string, r hcl.Range) []backends.Platform {
	var out []backends.Platform
	for _, n := range names {
		plat, err := backends.ParsePlatform(n)
		if err != nil {
			p.errorf(r, "%v", err)
			continue
		}
		out = append(out, plat)
	}
	if len(names) == 0 {
		p.errorf(r, "platforms is empty: name some (e.g. linux_amd64), or leave it out for every platform the source offers")
	}
	return out
}

// patterns parses allow or deny: [HOST/]NAMESPACE/TYPE patterns for
// providers, HOST/NAMESPACE/NAME/SYSTEM for modules.
func (p *parser) patterns(list []string, a *hcl.Attribute) ([]cliconfig.Pattern, []modules.Pattern) {
	var out []cliconfig.Pattern
	var mods []modules.Pattern
	for _, s := range list {
		if strings.Count(s, "/") == 3 {
			mp, err := modules.ParsePattern(s)
			if err != nil {
				p.errorf(a.Expr.Range(), "%s: %v", a.Name, err)
				continue
			}
			mods = append(mods, mp)
			continue
		}
		pt, err := cliconfig.ParsePattern(s)
		if err != nil {
			p.errorf(a.Expr.Range(), "%s: %v (or HOST/NAMESPACE/NAME/SYSTEM for modules)", a.Name, err)
			continue
		}
		out = append(out, pt)
	}
	return out, mods
}

// place anchors a directory place at the spec's directory; places with a
// scheme are kept as written.
func (p *parser) place(arg string, r hcl.Range) string {
	if strings.TrimSpace(arg) == "" {
		p.errorf(r, "empty place: give a directory, https://HOST/PATH/, registry://HOST or oci://REGISTRY/TEMPLATE")
		return arg
	}
	if rest, ok := strings.CutPrefix(arg, "file://"); ok {
		return "file://" + p.path(rest)
	}
	if strings.Contains(arg, "://") {
		return arg
	}
	return p.path(arg)
}

func (p *parser) path(s string) string {
	if filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(p.dir, s)
}
