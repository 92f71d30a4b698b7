package backends

import "testing"

func TestEnvCredentials(t *testing.T) {
	env := []string{
		"TF_TOKEN_example_com=tok-example",
		"TF_TOKEN_my__registry_example_org=tok-dash",
		"TF_TOKEN_xn____caf__dma_fr=tok-cafe",
		"TF_TOKEN_Upper_Example_NET=tok-upper",
		"TF_TOKEN_localhost:8443=tok-port",
		"TF_TOKEN_=empty-host",
		"TF_TOKEN_bad..host=ignored",
		"NOT_A_TOKEN_example_com=nope",
		"TF_TOKEN_noequals",
	}
	creds := EnvCredentials(env)
	cases := []struct {
		host, want string
		ok         bool
	}{
		{"example.com", "tok-example", true},
		{"my-registry.example.org", "tok-dash", true},
		{"xn--caf-dma.fr", "tok-cafe", true},
		{"café.fr", "tok-cafe", true},
		{"upper.example.net", "tok-upper", true},
		{"localhost:8443", "tok-port", true},
		{"localhost", "", false},
		{"example.com:443", "tok-example", true},
		{"other.example.com", "", false},
		{"my.registry.example.org", "", false},
	}
	for _, tc := range cases {
		got, ok := creds.Token(tc.host)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Token(%q) = %q, %v; want %q, %v", tc.host, got, ok, tc.want, tc.ok)
		}
	}
	if len(creds) != 5 {
		t.Errorf("EnvCredentials kept %d entries, want 5: %v", len(creds), creds)
	}
}

// A variable is named as it was set: the clients read "--" in a name as it
// is (only "__" stands for "-"), so TF_TOKEN_xn--80ak6aa92e_com is not
// TF_TOKEN_xn____80ak6aa92e_com, though both give the same host.
func TestEnvTokensKeepTheNameSet(t *testing.T) {
	for _, name := range []string{"TF_TOKEN_xn--80ak6aa92e_com", "TF_TOKEN_xn____80ak6aa92e_com"} {
		got := EnvTokens([]string{"TF_TOKEN_other_example=o", name + "=x"})
		if tok := got["xn--80ak6aa92e.com"]; tok.Var != name || tok.Token != "x" {
			t.Errorf("%s: %+v", name, got)
		}
	}
	// Of two names for one host the later wins, as in the clients.
	got := EnvTokens([]string{"TF_TOKEN_example_com=a", "TF_TOKEN_EXAMPLE_COM=b"})
	if tok := got["example.com"]; tok.Var != "TF_TOKEN_EXAMPLE_COM" || tok.Token != "b" || len(got) != 1 {
		t.Errorf("two names for one host: %+v", got)
	}
}

func TestCredentialsChain(t *testing.T) {
	chain := CredentialsChain{nil, TokenMap{"a.example": "first"}, TokenMap{"a.example": "second", "b.example": "b"}}
	if tok, _ := chain.Token("a.example"); tok != "first" {
		t.Errorf("a.example: %q, want the first source's token", tok)
	}
	if tok, _ := chain.Token("b.example"); tok != "b" {
		t.Errorf("b.example: %q", tok)
	}
	if _, ok := chain.Token("c.example"); ok {
		t.Error("c.example: a token from nowhere")
	}
}

func TestTokenEnvName(t *testing.T) {
	for host, want := range map[string]string{
		"example.com":             "TF_TOKEN_example_com",
		"my-registry.example.org": "TF_TOKEN_my__registry_example_org",
	} {
		if got := TokenEnvName(host); got != want {
			t.Errorf("TokenEnvName(%q) = %q, want %q", host, got, want)
		}
		if tok, ok := EnvCredentials([]string{want + "=x"}).Token(host); !ok || tok != "x" {
			t.Errorf("%s does not round-trip", want)
		}
	}
}
