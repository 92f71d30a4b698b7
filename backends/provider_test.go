package backends

import (
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// A hostname is shown in Unicode (its punycode labels decoded); the
// shortcut for plain ASCII names shows each as IDNA does.
func TestHostnameForDisplayAsIDNAShowsIt(t *testing.T) {
	for _, h := range []string{
		"registry.terraform.io", "example.com:8443", "xn--bcher-kva.example", "xn--bcher-kva.example:443",
		"a-b.c0", "-a.example", "a-.example", "a..b", ".a", "a.", "", "127.0.0.1", "under_score.example",
		"UPPER.example", "ex--ample.com", "xn--.example", "b\u00fccher.example", "a b",
	} {
		showsAsIDNA(t, h)
	}
}

func FuzzHostnameForDisplay(f *testing.F) {
	f.Add("registry.terraform.io")
	f.Add("xn--bcher-kva.example:1")
	f.Fuzz(showsAsIDNA)
}

// showsAsIDNA fails t where hostnameForDisplay shows h other than IDNA's
// ToUnicode of its host does (h itself where IDNA refuses it).
func showsAsIDNA(t *testing.T, h string) {
	t.Helper()
	host, port := h, ""
	if i := strings.IndexByte(h, ':'); i != -1 {
		host, port = h[:i], h[i:]
	}
	want := h
	if u, err := idna.Lookup.ToUnicode(host); err == nil {
		want = u + port
	}
	if got := hostnameForDisplay(h); got != want {
		t.Errorf("hostnameForDisplay(%q) = %q, IDNA shows %q", h, got, want)
	}
}
