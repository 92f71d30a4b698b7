package lockfile

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/hclinput"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// DefaultName is the lock file's name in a configuration directory.
const DefaultName = ".terraform.lock.hcl"

// Header says which client's comment heads the file. The two clients write
// the same format but name themselves in the first line.
type Header int

const (
	// HeaderTerraform: `# This file is maintained automatically by "terraform init".`
	HeaderTerraform Header = iota
	// HeaderOpenTofu: `# This file is maintained automatically by "tofu init".`
	HeaderOpenTofu
)

const (
	terraformFirstLine = "# This file is maintained automatically by \"terraform init\".\n"
	tofuFirstLine      = "# This file is maintained automatically by \"tofu init\".\n"
	secondLine         = "# Manual edits may be lost in future updates.\n"
)

func (h Header) String() string {
	if h == HeaderOpenTofu {
		return "tofu"
	}
	return "terraform"
}

// ParseHeader parses "terraform" or "tofu" (also "opentofu").
func ParseHeader(s string) (Header, error) {
	switch strings.ToLower(s) {
	case "terraform":
		return HeaderTerraform, nil
	case "tofu", "opentofu":
		return HeaderOpenTofu, nil
	}
	return 0, fmt.Errorf("lock file header %q: want terraform or tofu", s)
}

// Provider is one provider block: the version selected, the configuration's
// constraints at the time (canonical form, may be empty) and the hashes of
// the packages that are acceptable for that version on any platform.
type Provider struct {
	Addr        backends.Provider
	Version     backends.Version
	Constraints string
	Hashes      []hashing.Hash // sorted, without duplicates
	// Malformed are the h1: and zh: hashes of Hashes that are not of
	// their scheme's form (bad base64, 63 hex digits): the clients keep
	// them, and no package ever matches one. Set by Parse.
	Malformed []Malformed
}

// Malformed is a locked h1: or zh: hash that is not of its scheme's form,
// with where the file states it.
type Malformed struct {
	Provider backends.Provider
	Hash     hashing.Hash
	// Pos is FILE:LINE:COLUMN.
	Pos string
	Err error // a *hashing.MalformedError
}

func (m Malformed) String() string {
	return fmt.Sprintf("%s: %s: malformed %v; the clients pass over it (a package that matches another locked hash is accepted), so it is no gap: fix or remove it", m.Pos, m.Provider, m.Err)
}

// File is a lock file's content.
type File struct {
	// Header is kept from the file read, so that updating a file OpenTofu
	// wrote keeps OpenTofu's comment. New files get Terraform's, the
	// original's.
	Header    Header
	providers map[backends.Provider]*Provider
	// Warnings are things the clients accept but warn about (module blocks)
	// or that can never match a package (malformed h1:/zh: values).
	Warnings []string
}

// New returns an empty lock file.
func New(h Header) *File {
	return &File{Header: h, providers: map[backends.Provider]*Provider{}}
}

// ErrUnspecified is Set's error for version 0.0.0 (backends.Unspecified),
// which OpenTofu refuses to install.
var ErrUnspecified = errors.New("version 0.0.0 is OpenTofu's unspecified version, which it refuses to install")

// ErrInvalid is wrapped by every error about a file's content.
var ErrInvalid = errors.New("invalid dependency lock file")

// Diag is one problem in a lock file, at a position.
type Diag struct {
	Filename     string
	Line, Column int
	Summary      string
	Detail       string
}

func (d Diag) String() string {
	pos := d.Filename
	if d.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d", d.Filename, d.Line, d.Column)
	}
	if d.Detail == "" {
		return pos + ": " + d.Summary
	}
	return pos + ": " + d.Summary + ": " + d.Detail
}

// Error lists every problem found in a file the clients would refuse.
type Error struct {
	Diags []Diag
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Diags))
	for i, d := range e.Diags {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

// Load reads and parses a lock file. A missing file gives an error for which
// errors.Is(err, fs.ErrNotExist) holds.
func Load(path string) (*File, error) {
	src, err := hclinput.ReadFile(path)
	if big := (*hclinput.TooLargeError)(nil); errors.As(err, &big) {
		return nil, &Error{Diags: []Diag{{Filename: path, Summary: "File too large", Detail: big.Detail()}}}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read this lock file: %w", path, reason(err))
	}
	return Parse(src, path)
}

// Parse parses a lock file's bytes with the clients' rules; filename is used
// in messages. On error the returned *Error lists every problem.
func Parse(src []byte, filename string) (*File, error) {
	p := parser{filename: filename, f: New(detectHeader(src))}
	if diags := hclinput.Check(src, filename, hclinput.Native); diags.HasErrors() {
		p.addHCL(diags)
		return nil, &Error{Diags: p.errs}
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	p.addHCL(diags)
	if file != nil && !diags.HasErrors() {
		p.decodeBody(file.Body)
	}
	if len(p.errs) > 0 {
		return nil, &Error{Diags: p.errs}
	}
	return p.f, nil
}

func detectHeader(src []byte) Header {
	if bytes.HasPrefix(src, []byte(tofuFirstLine)) || bytes.HasPrefix(src, []byte(strings.TrimSuffix(tofuFirstLine, "\n")+"\r\n")) {
		return HeaderOpenTofu
	}
	return HeaderTerraform
}

type parser struct {
	filename string
	f        *File
	errs     []Diag
}

func (p *parser) errorAt(r hcl.Range, summary, detail string) {
	p.errs = append(p.errs, Diag{Filename: p.filename, Line: r.Start.Line, Column: r.Start.Column, Summary: summary, Detail: detail})
}

func (p *parser) addHCL(diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			p.f.Warnings = append(p.f.Warnings, d.Error())
			continue
		}
		dg := Diag{Filename: p.filename, Summary: d.Summary, Detail: d.Detail}
		if d.Subject != nil {
			dg.Line, dg.Column = d.Subject.Start.Line, d.Subject.Start.Column
		}
		p.errs = append(p.errs, dg)
	}
}

func (p *parser) decodeBody(body hcl.Body) {
	content, diags := body.Content(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "provider", LabelNames: []string{"source_addr"}},
			// The clients reserve "module" for a future version and only warn.
			{Type: "module", LabelNames: []string{"path"}},
		},
	})
	p.addHCL(diags)
	seen := map[backends.Provider]hcl.Range{}
	warnedModule := false
	for _, block := range content.Blocks {
		if block.Type == "module" {
			if !warnedModule {
				r := block.TypeRange
				p.f.Warnings = append(p.f.Warnings, fmt.Sprintf("%s:%d:%d: dependency locks for modules are not supported by Terraform or OpenTofu; module blocks are ignored", p.filename, r.Start.Line, r.Start.Column))
				warnedModule = true
			}
			continue
		}
		addr, ok := p.decodeAddr(block)
		if !ok {
			continue
		}
		// As in the clients, a second block for a provider is a duplicate
		// even when its body has problems of its own.
		lock := p.decodeProvider(block, addr)
		if prev, dup := seen[addr]; dup {
			p.errorAt(block.TypeRange, "Duplicate provider lock", fmt.Sprintf("this file already locks %s at line %d", addr, prev.Start.Line))
			continue
		}
		seen[addr] = block.DefRange
		if lock != nil {
			p.f.providers[addr] = lock
		}
	}
}

// decodeAddr checks a provider block's label: a lockable provider's
// fully-qualified, normalized address.
func (p *parser) decodeAddr(block *hcl.Block) (backends.Provider, bool) {
	raw := block.Labels[0]
	labelRange := block.LabelRanges[0]
	addr, err := backends.ParseProvider(raw)
	if err != nil {
		p.errorAt(labelRange, "Invalid provider source address", fmt.Sprintf("%q: %v; a lock file needs the fully-qualified form HOSTNAME/NAMESPACE/TYPE", raw, err))
		return addr, false
	}
	if addr.Hostname == "terraform.io" && addr.Namespace == "builtin" {
		p.errorAt(labelRange, "Invalid provider source address", fmt.Sprintf("%s is built into the client; its version cannot be locked", raw))
		return addr, false
	}
	if canon := addr.String(); canon != raw {
		p.errorAt(labelRange, "Non-normalized provider source address", fmt.Sprintf("%q must be written as %q, the fully-qualified and normalized form", raw, canon))
		return addr, false
	}
	return addr, true
}

func (p *parser) decodeProvider(block *hcl.Block, addr backends.Provider) *Provider {
	lock := &Provider{Addr: addr}
	content, diags := block.Body.Content(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "version", Required: true},
			{Name: "constraints"},
			{Name: "hashes"},
		},
	})
	p.addHCL(diags)
	before := len(p.errs)
	if attr := content.Attributes["version"]; attr != nil {
		if s, ok := p.stringValue(attr.Expr, "version", addr); ok {
			v, err := backends.ParseVersion(s)
			switch {
			case err != nil:
				p.errorAt(attr.Expr.Range(), "Invalid provider version number", fmt.Sprintf("the version selected for %s is invalid: %v", addr, err))
			case v.String() != s:
				p.errorAt(attr.Expr.Range(), "Invalid provider version number", fmt.Sprintf("the version selected for %s must be written in normalized form: %q", addr, v.String()))
			default:
				lock.Version = v
				if backends.Unspecified(v) {
					r := attr.Expr.Range()
					p.f.Warnings = append(p.f.Warnings, fmt.Sprintf("%s:%d:%d: %s: %v; lock a released version", p.filename, r.Start.Line, r.Start.Column, addr, ErrUnspecified))
				}
			}
		}
	}
	if attr := content.Attributes["constraints"]; attr != nil {
		if s, ok := p.stringValue(attr.Expr, "constraints", addr); ok {
			canon, err := CanonicalConstraints(s)
			switch {
			case err != nil:
				p.errorAt(attr.Expr.Range(), "Invalid provider version constraints", fmt.Sprintf("the recorded constraints for %s are invalid: %v", addr, err))
			case canon != s:
				p.errorAt(attr.Expr.Range(), "Invalid provider version constraints", fmt.Sprintf("the recorded constraints for %s must be written in normalized form: %q", addr, canon))
			default:
				lock.Constraints = s
			}
		}
	}
	if attr := content.Attributes["hashes"]; attr != nil {
		lock.Hashes = p.decodeHashes(attr.Expr, addr, &lock.Malformed)
	}
	if len(p.errs) > before || lock.Version == nil {
		return nil
	}
	return lock
}

func (p *parser) stringValue(expr hcl.Expression, name string, addr backends.Provider) (string, bool) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		p.addHCL(diags)
		return "", false
	}
	if v.IsNull() && name == "version" {
		// The clients read a null version as none at all.
		p.errorAt(expr.Range(), "Missing required argument", fmt.Sprintf("the lock of %s must have a \"version\"", addr))
		return "", false
	}
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		p.errorAt(expr.Range(), "Incorrect attribute value type", fmt.Sprintf("%q for %s must be a string", name, addr))
		return "", false
	}
	return v.AsString(), true
}

func (p *parser) decodeHashes(expr hcl.Expression, addr backends.Provider, malformed *[]Malformed) []hashing.Hash {
	items, diags := hcl.ExprList(expr)
	if diags.HasErrors() {
		p.addHCL(diags)
		return nil
	}
	if len(items) == 0 {
		p.errorAt(expr.Range(), "Invalid provider hash set", fmt.Sprintf("\"hashes\" for %s must either be omitted or contain at least one hash", addr))
		return nil
	}
	var out []hashing.Hash
	for _, item := range items {
		s, ok := p.stringValue(item, "hashes", addr)
		if !ok {
			continue
		}
		// The clients accept any "scheme:" here (unknown schemes are kept
		// and never match); only the prefix is required.
		if i := strings.IndexByte(s, ':'); i < 1 {
			p.errorAt(item.Range(), "Invalid provider hash string", fmt.Sprintf("cannot interpret %q as a hash for %s: %v", s, addr, hashing.ErrNoScheme))
			continue
		}
		h := hashing.Hash(s)
		if h.Known() {
			if _, err := hashing.ParseHash(s); err != nil {
				r := item.Range()
				m := Malformed{Provider: addr, Hash: h, Pos: fmt.Sprintf("%s:%d:%d", p.filename, r.Start.Line, r.Start.Column), Err: err}
				*malformed = append(*malformed, m)
				p.f.Warnings = append(p.f.Warnings, m.String())
			}
		}
		out = append(out, h)
	}
	return hashing.SortUnique(out)
}

// Providers returns the locked providers in the order the file lists them.
func (f *File) Providers() []*Provider {
	out := make([]*Provider, 0, len(f.providers))
	for _, l := range f.providers {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr.Less(out[j].Addr) })
	return out
}

// Provider returns the lock for p.
func (f *File) Provider(p backends.Provider) (*Provider, bool) {
	l, ok := f.providers[p]
	return l, ok
}

// Set adds or replaces the lock of l.Addr, normalising its constraints and
// hashes as the clients do.
func (f *File) Set(l Provider) error {
	if l.Version == nil {
		return fmt.Errorf("lock for %s: no version", l.Addr)
	}
	if backends.Unspecified(l.Version) {
		return fmt.Errorf("lock for %s: %w", l.Addr, ErrUnspecified)
	}
	canon, err := CanonicalConstraints(l.Constraints)
	if err != nil {
		return fmt.Errorf("lock for %s: %w", l.Addr, err)
	}
	l.Constraints = canon
	l.Hashes = hashing.SortUnique(l.Hashes)
	if f.providers == nil {
		f.providers = map[backends.Provider]*Provider{}
	}
	f.providers[l.Addr] = &l
	return nil
}

// Remove drops p's lock.
func (f *File) Remove(p backends.Provider) { delete(f.providers, p) }

// AddHashes merges hs into p's lock, which must exist, and returns the hashes
// that were new. Existing hashes are never dropped.
func (f *File) AddHashes(p backends.Provider, hs []hashing.Hash) []hashing.Hash {
	l, ok := f.providers[p]
	if !ok {
		return nil
	}
	have := map[hashing.Hash]bool{}
	for _, h := range l.Hashes {
		have[h] = true
	}
	var added []hashing.Hash
	for _, h := range hashing.SortUnique(hs) {
		if !have[h] {
			added = append(added, h)
		}
	}
	l.Hashes = hashing.SortUnique(append(l.Hashes, added...))
	return added
}

// Bytes renders the file exactly as the clients' writer does.
func (f *File) Bytes() []byte {
	out := hclwrite.NewEmptyFile()
	root := out.Body()
	first := terraformFirstLine
	if f.Header == HeaderOpenTofu {
		first = tofuFirstLine
	}
	root.AppendUnstructuredTokens(hclwrite.Tokens{
		{Type: hclsyntax.TokenComment, Bytes: []byte(first)},
		{Type: hclsyntax.TokenComment, Bytes: []byte(secondLine)},
	})
	for _, l := range f.Providers() {
		root.AppendNewline()
		body := root.AppendNewBlock("provider", []string{l.Addr.String()}).Body()
		body.SetAttributeValue("version", cty.StringVal(l.Version.String()))
		if l.Constraints != "" {
			body.SetAttributeValue("constraints", cty.StringVal(l.Constraints))
		}
		if len(l.Hashes) > 0 {
			body.SetAttributeRaw("hashes", hashTokens(l.Hashes))
		}
	}
	return out.Bytes()
}

// hashTokens lays the list out one hash per line with trailing commas, as
// raw tokens: that layout is the clients' and no formatter may change it.
func hashTokens(hs []hashing.Hash) hclwrite.Tokens {
	toks := hclwrite.Tokens{
		{Type: hclsyntax.TokenOBrack, Bytes: []byte("[")},
		{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")},
	}
	for _, h := range hs {
		toks = append(toks, hclwrite.TokensForValue(cty.StringVal(string(h)))...)
		toks = append(toks,
			&hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")},
			&hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")},
		)
	}
	return append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrack, Bytes: []byte("]")})
}

// Save writes the file to path, replacing it atomically as the clients do
// (editors and watchers never see half a file). A file that exists keeps
// its mode, and a symbolic link stays one: the file it names is replaced. A
// new file gets mode 0644, as the clients give it.
func (f *File) Save(path string) error {
	if err := atomicfile.Replace(path, f.Bytes(), 0o644); err != nil {
		return fmt.Errorf("%s: cannot write this lock file: %w", path, reason(err))
	}
	return nil
}

// SaveAt writes the file at path itself, as "terraform providers lock"
// does: a symbolic link there is replaced by a regular file (with the mode
// of the file it named) and the file it named is left alone. A tree walk
// (lock --from) saves with it, so that a link in a checkout cannot make it
// write outside the tree.
func (f *File) SaveAt(path string) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	if err := atomicfile.Write(path, f.Bytes(), mode); err != nil {
		return fmt.Errorf("%s: cannot write this lock file: %w", path, reason(err))
	}
	return nil
}

// reason is what an error of the file system says, without Go's "open
// PATH:" before it: the messages that carry it name the file themselves.
func reason(err error) error {
	if re := (*regular.Error)(nil); errors.As(err, &re) {
		return re.Unnamed()
	}
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
