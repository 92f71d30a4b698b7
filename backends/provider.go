package backends

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Provider is a provider address, normalised the way OpenTofu compares them:
// Hostname is the ASCII (punycode) comparison form, with ":443" dropped;
// Namespace and Type are lowercase.
type Provider struct {
	Hostname  string
	Namespace string
	Type      string
}

// String returns HOSTNAME/NAMESPACE/TYPE with the hostname in display form.
func (p Provider) String() string {
	return p.HostnameForDisplay() + "/" + p.Namespace + "/" + p.Type
}

// ShortString returns NAMESPACE/TYPE.
func (p Provider) ShortString() string { return p.Namespace + "/" + p.Type }

// HostnameForDisplay returns the Unicode form of the hostname, as the clients
// use it for directory names and lock file labels.
func (p Provider) HostnameForDisplay() string { return hostnameForDisplay(p.Hostname) }

// Less orders providers by hostname (ASCII form), namespace, type: the order
// the clients sort lock file blocks in.
func (p Provider) Less(o Provider) bool {
	if p.Hostname != o.Hostname {
		return p.Hostname < o.Hostname
	}
	if p.Namespace != o.Namespace {
		return p.Namespace < o.Namespace
	}
	return p.Type < o.Type
}

// SortProviders sorts ps in place with Provider.Less.
func SortProviders(ps []Provider) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Less(ps[j]) })
}

// ParseProvider parses HOSTNAME/NAMESPACE/TYPE.
func ParseProvider(s string) (Provider, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Provider{}, fmt.Errorf("provider address %q: want HOSTNAME/NAMESPACE/TYPE", s)
	}
	return NewProvider(parts[0], parts[1], parts[2])
}

// NewProvider validates and normalises the three parts of a provider address.
func NewProvider(hostname, namespace, typ string) (Provider, error) {
	h, err := NormalizeHostname(hostname)
	if err != nil {
		return Provider{}, fmt.Errorf("provider address %s/%s/%s: hostname: %w", hostname, namespace, typ, err)
	}
	ns, err := ParseProviderNamespace(namespace)
	if err != nil {
		return Provider{}, fmt.Errorf("provider address %s/%s/%s: namespace %q: %w", hostname, namespace, typ, namespace, err)
	}
	ty, err := ParseProviderPart(typ)
	if err != nil {
		return Provider{}, fmt.Errorf("provider address %s/%s/%s: type %q: %w", hostname, namespace, typ, typ, err)
	}
	return Provider{Hostname: h, Namespace: ns, Type: ty}, nil
}

// ParseProviderPart validates and normalises a namespace or type the way
// OpenTofu's ParseProviderPart does: letters, digits and dashes, case-folded,
// no dots, no "--", no leading or trailing dash.
func ParseProviderPart(given string) (string, error) {
	if err := checkPart(given); err != nil {
		return "", err
	}
	result, err := idna.Lookup.ToUnicode(given)
	if err != nil {
		return "", errors.New("must contain only letters, digits, and dashes, and may not use leading or trailing dashes")
	}
	return result, nil
}

// checkPart is what every part of a provider address must be before the
// IDNA mapping: not empty, no dots, valid UTF-8, no "--".
func checkPart(given string) error {
	switch {
	case given == "":
		return errors.New("must have at least one character")
	case strings.ContainsRune(given, '.'):
		return errors.New("dots are not allowed")
	case !utf8.ValidString(given) || strings.ContainsRune(given, utf8.RuneError):
		return errors.New("must be valid UTF-8")
	case strings.Contains(given, "--"):
		return errors.New("cannot use multiple consecutive dashes")
	}
	return nil
}

// namespaceProfile is IDNA lookup without the STD3 rules, which are what
// refuse "_"; ParseProviderNamespace lets only "_" through of what they
// would refuse.
var namespaceProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.CheckHyphens(true), idna.CheckJoiners(true), idna.Transitional(false), idna.StrictDomainName(false))

// ParseProviderNamespace validates and normalises a provider namespace.
// Terraform 1.16 (terraform-registry-address, hashicorp/terraform #38894)
// allows "_" in namespaces, where HCP Terraform organisation names have
// them ("app.terraform.io/example_corp/kube"); the type keeps
// ParseProviderPart's rules, as it names resources and package files, whose
// parts are separated by "_". Everything else is ParseProviderPart's rule:
// no dots, no "--", no leading or trailing dash, case-folded.
func ParseProviderNamespace(given string) (string, error) {
	if !strings.ContainsRune(given, '_') {
		return ParseProviderPart(given)
	}
	if err := checkPart(given); err != nil {
		return "", err
	}
	result, err := namespaceProfile.ToUnicode(given)
	// Without STD3 the mapping also lets ASCII punctuation through, given
	// or mapped to (U+2474 "⑴" becomes "(1)"): only "_" is new.
	if err != nil || strings.IndexFunc(result, notNamespaceASCII) >= 0 {
		return "", errors.New("must contain only letters, digits, dashes and underscores, and may not use leading or trailing dashes")
	}
	return result, nil
}

func notNamespaceASCII(r rune) bool {
	return r < utf8.RuneSelf && !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_')
}

// NormalizeHostname returns the comparison form of a service hostname, with
// the rules of OpenTofu's svchost.ForComparison: IDNA lookup mapping
// (lowercase, ASCII), ":443" dropped, punycode labels refused.
func NormalizeHostname(given string) (string, error) {
	var port string
	if i := strings.IndexByte(given, ':'); i != -1 {
		given, port = given[:i], given[i:]
		n, err := strconv.Atoi(port[1:])
		switch {
		case err != nil || n < 0:
			if l := strings.ToLower(given); l == "https" || l == "http" {
				return "", errors.New("need just a hostname and optional port number, not a full URL")
			}
			return "", errors.New("port portion contains non-digit characters")
		case n > 65535:
			return "", errors.New("port number is greater than 65535")
		case n == 443:
			port = ""
		default:
			port = ":" + strconv.Itoa(n)
		}
	}
	if given == "" {
		return "", errors.New("empty string is not a valid hostname")
	}
	if !utf8.ValidString(given) || strings.ContainsRune(given, utf8.RuneError) {
		return "", errors.New("hostname is not valid UTF-8")
	}
	for _, label := range strings.Split(given, ".") {
		if label == "" {
			return "", errors.New("hostname contains empty label (two consecutive periods)")
		}
		if strings.HasPrefix(strings.ToLower(label), "xn--") {
			return "", fmt.Errorf("hostname label %q specified in punycode format; service hostnames must be given in unicode", label)
		}
	}
	ascii, err := idna.Lookup.ToASCII(given)
	if err != nil {
		return "", err
	}
	// The display form must convert back, or the directory name written
	// for it would not parse again.
	if _, err := idna.Lookup.ToUnicode(ascii); err != nil {
		return "", err
	}
	return ascii + port, nil
}

func hostnameForDisplay(h string) string {
	host, port := h, ""
	if i := strings.IndexByte(h, ':'); i != -1 {
		host, port = h[:i], h[i:]
	}
	if plainHostname(host) {
		return h // as ToUnicode gives it back (a line per archive asks)
	}
	u, err := idna.Lookup.ToUnicode(host)
	if err != nil {
		return h
	}
	return u + port
}

// ProviderFilter selects providers: either a full address, or NAMESPACE/TYPE
// on any host.
type ProviderFilter struct {
	Hostname  string // empty: any host
	Namespace string
	Type      string
}

// ParseProviderFilter parses HOSTNAME/NAMESPACE/TYPE or NAMESPACE/TYPE.
func ParseProviderFilter(s string) (ProviderFilter, error) {
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 2:
		p, err := NewProvider("example.com", parts[0], parts[1])
		if err != nil {
			return ProviderFilter{}, fmt.Errorf("provider %q: %w", s, errors.Unwrap(err))
		}
		return ProviderFilter{Namespace: p.Namespace, Type: p.Type}, nil
	case 3:
		p, err := ParseProvider(s)
		if err != nil {
			return ProviderFilter{}, err
		}
		return ProviderFilter(p), nil
	}
	return ProviderFilter{}, fmt.Errorf("provider %q: want HOSTNAME/NAMESPACE/TYPE or NAMESPACE/TYPE", s)
}

// Matches reports whether p is selected by f.
func (f ProviderFilter) Matches(p Provider) bool {
	return (f.Hostname == "" || f.Hostname == p.Hostname) && f.Namespace == p.Namespace && f.Type == p.Type
}

// On returns the provider f names on host, for places that cannot list their
// providers.
func (f ProviderFilter) On(host string) (Provider, error) {
	h := f.Hostname
	if h == "" {
		h = host
	}
	if h == "" {
		return Provider{}, Usagef("--provider %s/%s: the hostname cannot be known here: write the full address, HOSTNAME/%s/%s (e.g. registry.terraform.io/%s/%s)", f.Namespace, f.Type, f.Namespace, f.Type, f.Namespace, f.Type)
	}
	return NewProvider(h, f.Namespace, f.Type)
}

func (f ProviderFilter) String() string {
	if f.Hostname == "" {
		return f.Namespace + "/" + f.Type
	}
	return hostnameForDisplay(f.Hostname) + "/" + f.Namespace + "/" + f.Type
}

// plainHostname reports whether host is lowercase letters, digits, '-'
// and '.' without a punycode label ("xn--"), which IDNA's ToUnicode
// returns unchanged or refuses (hostnameForDisplay then shows it as is).
func plainHostname(host string) bool {
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return !strings.Contains(host, "xn--")
}
