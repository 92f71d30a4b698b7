package cliconfig

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	orasregistry "oras.land/oras-go/v2/registry"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/hclinput"
	"github.com/tfmirror/tfmirror/backends/ocitemplate"
)

// Parse reads one configuration file's bytes into a Config of its own, with
// the same rules as Load; filename chooses the syntax (JSON for *.json) and
// names the file in messages.
func Parse(src []byte, filename string) (*Config, error) {
	c := &Config{Tokens: backends.TokenMap{}, TokenFiles: map[string]string{}, Files: []File{{Path: filename}}}
	diags := c.parse(src, filename)
	c.Mirrors = uniqueMirrors(c.Installations)
	if len(diags) > 0 {
		return c, &Error{Diags: diags}
	}
	return c, nil
}

// fileParser decodes one file into the Config, collecting problems.
type fileParser struct {
	c     *Config
	file  string
	src   []byte // native syntax only, for literal strings
	diags []Diag
	// devOverrides found by maskDevOverrides, by the line of their block
	devOverrides map[int]map[string]string
}

func (c *Config) parse(src []byte, filename string) []Diag {
	p := &fileParser{c: c, file: filename}
	syntax := hclinput.Native
	if strings.HasSuffix(filename, ".json") {
		syntax = hclinput.JSON
	}
	if diags := hclinput.Check(src, filename, syntax); diags.HasErrors() {
		p.hcl(diags)
		return p.diags
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	if syntax == hclinput.JSON {
		f, diags = hcljson.Parse(src, filename)
	} else {
		var masked []byte
		masked, p.devOverrides, diags = maskDevOverrides(src, filename)
		p.hcl(diags)
		if diags.HasErrors() {
			return p.diags
		}
		p.src = masked
		f, diags = hclsyntax.ParseConfig(masked, filename, hcl.InitialPos)
	}
	p.hcl(diags)
	if f == nil || diags.HasErrors() {
		return p.diags
	}
	if body, ok := f.Body.(*hclsyntax.Body); ok {
		for _, name := range []string{"provider_installation", "credentials", "oci_credentials", "oci_default_credentials", "credentials_helper"} {
			if a, ok := body.Attributes[name]; ok {
				p.errorf(a.NameRange, "%s must be a block (%s { ... }), not an argument: no equals sign", name, name)
			}
		}
	}
	// Other settings (plugin_cache_dir, disable_checkpoint, ...) are the
	// clients' business; like them, tfmirror ignores what it does not use.
	p.hosts(f.Body)
	content, _, diags := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "provider_installation"},
		{Type: "credentials", LabelNames: []string{"hostname"}},
		{Type: "credentials_helper", LabelNames: []string{"name"}},
		{Type: "oci_credentials", LabelNames: []string{"repository_prefix"}},
		{Type: "oci_default_credentials"},
	}})
	p.hcl(diags)
	for _, b := range content.Blocks {
		switch b.Type {
		case "provider_installation":
			p.installation(b)
		case "credentials":
			p.credentials(b)
		case "credentials_helper":
			c.CredentialsHelper = b.Labels[0]
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: credentials_helper %q is not run by tfmirror; give tokens with credentials blocks or TF_TOKEN_* variables", p.pos(b.DefRange), b.Labels[0]))
		case "oci_credentials":
			p.ociCredentials(b)
		case "oci_default_credentials":
			p.ociDefault(b)
		}
	}
	return p.diags
}

// hosts checks the hostname of each host block (service discovery
// overrides, not used by tfmirror) as OpenTofu's validation does; what else
// a host block holds, or a block without one label, stays the clients'
// business.
func (p *fileParser) hosts(body hcl.Body) {
	content, _, _ := body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "host", LabelNames: []string{"hostname"}}}})
	for _, b := range content.Blocks {
		if _, err := backends.NormalizeHostname(b.Labels[0]); err != nil {
			p.errorf(b.LabelRanges[0], "host %q: invalid hostname: %v", b.Labels[0], err)
		}
	}
}

func (p *fileParser) pos(r hcl.Range) string { return fmt.Sprintf("%s:%d", p.file, r.Start.Line) }

func (p *fileParser) errorf(r hcl.Range, format string, args ...any) {
	p.diags = append(p.diags, Diag{File: p.file, Line: r.Start.Line, Column: r.Start.Column, Message: fmt.Sprintf(format, args...)})
}

func (p *fileParser) hcl(diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		dg := Diag{File: p.file, Message: d.Summary}
		if d.Detail != "" {
			dg.Message += ": " + d.Detail
		}
		if d.Subject != nil {
			dg.Line, dg.Column = d.Subject.Start.Line, d.Subject.Start.Column
		}
		p.diags = append(p.diags, dg)
	}
}

// attrs decodes a block body's arguments: known ones by name; unknown ones
// are ignored with a warning, as the clients' decoder ignores them.
func (p *fileParser) attrs(b *hcl.Block, known ...string) map[string]*hcl.Attribute {
	schema := &hcl.BodySchema{}
	for _, k := range known {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: k})
	}
	content, rest, diags := b.Body.PartialContent(schema)
	p.hcl(diags)
	if extra, d := rest.JustAttributes(); !d.HasErrors() {
		for name, a := range extra {
			p.c.Warnings = append(p.c.Warnings, fmt.Sprintf("%s: %s: argument %q ignored (unknown to tfmirror)", p.pos(a.Range), b.Type, name))
		}
	} else {
		// A nested block where only arguments belong.
		p.hcl(d)
	}
	return content.Attributes
}

func (p *fileParser) str(a *hcl.Attribute) (string, bool) {
	if a == nil {
		return "", false
	}
	if s, ok := p.literal(a.Expr); ok {
		return s, true
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		p.hcl(diags)
		return "", false
	}
	if v.IsNull() || !v.IsKnown() {
		p.errorf(a.Expr.Range(), "%q must be a string", a.Name)
		return "", false
	}
	if v.Type() != cty.String {
		p.errorf(a.Expr.Range(), "%q must be a string, not %s", a.Name, v.Type().FriendlyName())
		return "", false
	}
	return v.AsString(), true
}

func (p *fileParser) boolean(a *hcl.Attribute) (bool, bool) {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		p.hcl(diags)
		return false, false
	}
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Bool {
		p.errorf(a.Expr.Range(), "%q must be true or false", a.Name)
		return false, false
	}
	return v.True(), true
}

func (p *fileParser) strings(a *hcl.Attribute) ([]string, bool) {
	if a == nil {
		return nil, true
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		p.hcl(diags)
		return nil, false
	}
	if v.IsNull() || !v.IsKnown() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
		p.errorf(a.Expr.Range(), "%q must be a list of strings", a.Name)
		return nil, false
	}
	out := []string{}
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() || !ev.IsKnown() || ev.Type() != cty.String {
			p.errorf(a.Expr.Range(), "%q must be a list of strings", a.Name)
			return nil, false
		}
		out = append(out, ev.AsString())
	}
	return out, true
}

func (p *fileParser) patterns(a *hcl.Attribute) ([]Pattern, bool) {
	ss, ok := p.strings(a)
	if !ok {
		return nil, false
	}
	var out []Pattern
	for _, s := range ss {
		pt, err := ParsePattern(s)
		if err != nil {
			p.errorf(a.Expr.Range(), "%s: %v", a.Name, err)
			return nil, false
		}
		out = append(out, pt)
	}
	return out, true
}

func (p *fileParser) installation(b *hcl.Block) {
	in := Installation{File: p.file, Line: b.DefRange.Start.Line}
	methods := []string{FilesystemMirror, NetworkMirror, OCIMirror, Direct, "dev_overrides"}
	schema := &hcl.BodySchema{}
	for _, m := range methods {
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: m})
	}
	content, diags := b.Body.Content(schema)
	p.hcl(diags)
	for i, mb := range content.Blocks {
		if mb.Type == "dev_overrides" {
			if i > 0 {
				p.errorf(mb.DefRange, "dev_overrides must come before every other installation method (the clients refuse it here)")
				continue
			}
			in.DevOverrides = p.devOverrides[mb.DefRange.Start.Line]
			if in.DevOverrides == nil {
				in.DevOverrides = p.jsonDevOverrides(mb)
			}
			continue
		}
		if m, ok := p.method(mb); ok {
			in.Methods = append(in.Methods, m)
		}
	}
	p.c.Installations = append(p.c.Installations, in)
}

// jsonDevOverrides reads a dev_overrides block of the JSON syntax (the
// native one was read by maskDevOverrides).
func (p *fileParser) jsonDevOverrides(b *hcl.Block) map[string]string {
	attrs, diags := b.Body.JustAttributes()
	p.hcl(diags)
	out := map[string]string{}
	for name, a := range attrs {
		if s, ok := p.str(a); ok {
			out[name] = s
		}
	}
	return out
}

func (p *fileParser) method(b *hcl.Block) (Method, bool) {
	m := Method{Kind: b.Type, File: p.file, Line: b.DefRange.Start.Line}
	known := []string{"include", "exclude"}
	switch b.Type {
	case FilesystemMirror:
		known = append(known, "path")
	case NetworkMirror:
		known = append(known, "url", "download_retry_count", "trust_all_hashes")
	case OCIMirror:
		known = append(known, "repository_template")
	case Direct:
		known = append(known, "download_retry_count")
	}
	attrs := p.attrs(b, known...)
	before := len(p.diags)
	var ok bool
	if m.Include, ok = p.patterns(attrs["include"]); !ok {
		return m, false
	}
	if m.Exclude, ok = p.patterns(attrs["exclude"]); !ok {
		return m, false
	}
	required := func(name string) (string, bool) {
		a := attrs[name]
		if a == nil {
			p.errorf(b.DefRange, "%s: %q is required", b.Type, name)
			return "", false
		}
		s, ok := p.str(a)
		if ok && strings.TrimSpace(s) == "" {
			p.errorf(a.Expr.Range(), "%s: %q must not be empty", b.Type, name)
			return "", false
		}
		return s, ok
	}
	switch b.Type {
	case FilesystemMirror:
		path, ok := required("path")
		if !ok {
			return m, false
		}
		m.Location, m.Place = path, path
		if strings.Contains(path, "://") {
			m.Place = "file://" + path
		}
	case NetworkMirror:
		raw, ok := required("url")
		if !ok {
			return m, false
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			p.errorf(attrs["url"].Expr.Range(), "network_mirror: url %q: the mirror must be at an https: URL (the clients refuse anything else)", raw)
			return m, false
		}
		m.Location, m.Place = raw, raw
	case OCIMirror:
		raw, ok := required("repository_template")
		if !ok {
			return m, false
		}
		if err := checkTemplate(raw, m.Include); err != nil {
			p.errorf(attrs["repository_template"].Expr.Range(), "oci_mirror: %v", err)
			return m, false
		}
		m.Location, m.Place = raw, "oci://"+raw
	}
	return m, len(p.diags) == before
}

// checkTemplate applies OpenTofu's load-time checks: a valid template over
// hostname, namespace and type that names every part the include patterns
// do not pin to a single value.
func checkTemplate(raw string, include []Pattern) error {
	t, err := ocitemplate.Parse(raw)
	if err != nil {
		return err
	}
	hosts, nss, types := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, pt := range include {
		if pt.Hostname != Wildcard {
			hosts[pt.Hostname] = true
		}
		if pt.Namespace != Wildcard {
			nss[pt.Namespace] = true
		}
		if pt.Type != Wildcard {
			types[pt.Type] = true
		}
	}
	for _, c := range []struct {
		symbol string
		pinned map[string]bool
		what   string
	}{{"hostname", hosts, "one registry hostname"}, {"namespace", nss, "one provider namespace"}, {"type", types, "one provider"}} {
		if len(c.pinned) != 1 && !t.Uses(c.symbol) {
			return fmt.Errorf("repository template %q must refer to ${%s} unless \"include\" selects exactly %s", raw, c.symbol, c.what)
		}
	}
	return nil
}

func (p *fileParser) credentials(b *hcl.Block) {
	host, err := backends.NormalizeHostname(b.Labels[0])
	if err != nil {
		p.errorf(b.LabelRanges[0], "credentials %q: invalid hostname: %v", b.Labels[0], err)
		return
	}
	attrs := p.attrs(b, "token")
	tok, ok := p.str(attrs["token"])
	if !ok {
		if attrs["token"] == nil {
			p.c.Warnings = append(p.c.Warnings, fmt.Sprintf("%s: credentials %q has no token; ignored", p.pos(b.DefRange), b.Labels[0]))
		}
		return
	}
	// A later file overrides an earlier one, as in the clients' merge.
	p.c.Tokens[host] = tok
	p.c.TokenFiles[host] = p.file
}

func (p *fileParser) ociCredentials(b *hcl.Block) {
	label := b.Labels[0]
	registry, repo, err := parseRepositoryPrefix(label)
	if err != nil {
		p.errorf(b.LabelRanges[0], "oci_credentials %q: %v", label, err)
		return
	}
	attrs := p.attrs(b, "username", "password", "access_token", "refresh_token", "docker_credentials_helper")
	oc := OCICredentials{RepositoryPrefix: label, Registry: registry, RepositoryPath: repo, File: p.file, Line: b.DefRange.Start.Line}
	get := func(name string, dst *string) bool {
		if attrs[name] == nil {
			return false
		}
		s, _ := p.str(attrs[name])
		*dst = s
		return true
	}
	hasUser, hasPass := get("username", &oc.Username), get("password", &oc.Password)
	hasAccess, hasRefresh := get("access_token", &oc.AccessToken), get("refresh_token", &oc.RefreshToken)
	hasHelper := get("docker_credentials_helper", &oc.DockerCredentialHelper)
	styles := 0
	for _, s := range []bool{hasUser || hasPass, hasAccess || hasRefresh, hasHelper} {
		if s {
			styles++
		}
	}
	switch {
	case styles == 0:
		p.errorf(b.DefRange, "oci_credentials %q must set username and password, access_token and refresh_token, or docker_credentials_helper", label)
	case styles > 1:
		p.errorf(b.DefRange, "oci_credentials %q must set only one of: username and password, access_token and refresh_token, docker_credentials_helper", label)
	case hasUser != hasPass:
		p.errorf(b.DefRange, "oci_credentials %q must set username and password together", label)
	case hasAccess != hasRefresh:
		p.errorf(b.DefRange, "oci_credentials %q must set access_token and refresh_token together", label)
	case hasHelper && repo != "":
		p.errorf(b.DefRange, "oci_credentials %q: docker_credentials_helper works for whole registries only; drop the repository path from the label", label)
	case hasHelper && !validHelperName(oc.DockerCredentialHelper):
		p.errorf(attrs["docker_credentials_helper"].Expr.Range(), "oci_credentials %q: invalid docker_credentials_helper %q: want a non-empty name without slashes (docker-credential-NAME is run)", label, oc.DockerCredentialHelper)
	default:
		for _, prev := range p.c.OCICredentials {
			if prev.RepositoryPrefix == label {
				p.errorf(b.DefRange, "duplicate oci_credentials block for %q (first at %s:%d)", label, prev.File, prev.Line)
				return
			}
		}
		p.c.OCICredentials = append(p.c.OCICredentials, oc)
	}
}

func validHelperName(n string) bool { return n != "" && !strings.Contains(filepath.ToSlash(n), "/") }

func (p *fileParser) ociDefault(b *hcl.Block) {
	if p.c.OCIDefault != nil {
		p.errorf(b.DefRange, "only one oci_default_credentials block is allowed (first at %s:%d)", p.c.OCIDefault.File, p.c.OCIDefault.Line)
		return
	}
	attrs := p.attrs(b, "discover_ambient_credentials", "docker_style_config_files", "docker_credentials_helper")
	d := &OCIDefaultCredentials{DiscoverAmbientCredentials: true, File: p.file, Line: b.DefRange.Start.Line}
	if a := attrs["discover_ambient_credentials"]; a != nil {
		if v, ok := p.boolean(a); ok {
			d.DiscoverAmbientCredentials = v
		}
	}
	if a := attrs["docker_style_config_files"]; a != nil {
		files, ok := p.strings(a)
		if ok {
			d.DockerStyleConfigFiles = []string{}
			for _, f := range files {
				if !filepath.IsAbs(f) {
					f = filepath.Join(filepath.Dir(p.file), f)
				}
				d.DockerStyleConfigFiles = append(d.DockerStyleConfigFiles, f)
			}
			if !d.DiscoverAmbientCredentials {
				p.errorf(a.Expr.Range(), "oci_default_credentials: docker_style_config_files is meaningless when discover_ambient_credentials is false")
			}
		}
	}
	if a := attrs["docker_credentials_helper"]; a != nil {
		if s, ok := p.str(a); ok {
			if !validHelperName(s) {
				p.errorf(a.Expr.Range(), "oci_default_credentials: invalid docker_credentials_helper %q", s)
			}
			d.DockerCredentialHelper = s
		}
	}
	p.c.OCIDefault = d
}

// parseRepositoryPrefix splits REGISTRY[:PORT][/PATH] as OpenTofu does for
// oci_credentials labels (and Docker's "auths" keys): ORAS's reference
// grammar, with no tag or digest.
func parseRepositoryPrefix(s string) (registry, repository string, err error) {
	if !strings.Contains(s, "/") {
		ref := orasregistry.Reference{Registry: s}
		if err := ref.ValidateRegistry(); err != nil {
			return "", "", err
		}
		return s, "", nil
	}
	ref, err := orasregistry.ParseReference(s)
	if err != nil {
		return "", "", err
	}
	if ref.Reference != "" {
		return "", "", errors.New("a tag or digest is not allowed here; want REGISTRY[:PORT][/REPOSITORY-PREFIX]")
	}
	return ref.Registry, ref.Repository, nil
}
