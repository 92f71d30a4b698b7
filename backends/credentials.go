package backends

import (
	"strings"
)

// Credentials supplies bearer tokens for the hosts of HTTP places (network
// mirrors, origin registries). host is the comparison form of the hostname
// (see NormalizeHostname): ASCII, lowercase, with a port unless it is 443.
// Places send a token only to the host it was given for.
type Credentials interface {
	Token(host string) (token string, ok bool)
}

// TokenMap is a fixed set of tokens keyed by comparison-form hostname.
type TokenMap map[string]string

// Token returns the token for host.
func (m TokenMap) Token(host string) (string, bool) {
	h, err := NormalizeHostname(hostnameForDisplay(host))
	if err != nil {
		return "", false
	}
	t, ok := m[h]
	return t, ok && t != ""
}

// CredentialsChain asks each source in turn; the first that has a token for
// the host wins. Environment variables conventionally come first (the clients
// let TF_TOKEN_* override the CLI configuration).
type CredentialsChain []Credentials

// Token returns the first token any source has for host.
func (c CredentialsChain) Token(host string) (string, bool) {
	for _, src := range c {
		if src == nil {
			continue
		}
		if t, ok := src.Token(host); ok {
			return t, true
		}
	}
	return "", false
}

// EnvToken is a token from a TF_TOKEN_ variable and the variable's name, as
// it was set (a name holding "--" is read as it is: the clients turn only
// "__" into "-").
type EnvToken struct {
	Var   string
	Token string
}

// EnvTokens reads the clients' TF_TOKEN_<host> variables from environ
// (os.Environ's form, "NAME=value"), with their rules: "__" in the name stands
// for "-" and "_" for ".", and the host may be written as Unicode or punycode
// (TF_TOKEN_xn____caf__dma_fr and TF_TOKEN_café_fr both name café.fr).
// Names that do not make a valid hostname are ignored, as the clients ignore
// them; of two names for one host, the later in environ wins, as in the
// clients. The result is keyed by comparison-form hostname.
func EnvTokens(environ []string) map[string]EnvToken {
	const prefix = "TF_TOKEN_"
	out := map[string]EnvToken{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, prefix) {
			continue
		}
		raw := strings.ReplaceAll(name[len(prefix):], "__", "-")
		raw = strings.ReplaceAll(raw, "_", ".")
		// NormalizeHostname refuses punycode labels (the clients refuse them in
		// provider addresses), but a variable name can hold only ASCII, so
		// punycode is the usual way to write an IDN host here.
		h, err := NormalizeHostname(hostnameForDisplay(raw))
		if err != nil {
			continue
		}
		out[h] = EnvToken{Var: name, Token: value}
	}
	return out
}

// EnvCredentials is EnvTokens' tokens, by host.
func EnvCredentials(environ []string) TokenMap {
	out := TokenMap{}
	for h, t := range EnvTokens(environ) {
		out[h] = t.Token
	}
	return out
}

// TokenEnvName returns the TF_TOKEN_ variable that supplies a token for host,
// for messages that tell the user what to set.
func TokenEnvName(host string) string {
	h := strings.ReplaceAll(host, "-", "__")
	return "TF_TOKEN_" + strings.ReplaceAll(h, ".", "_")
}
