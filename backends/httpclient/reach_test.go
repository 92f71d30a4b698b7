package httpclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
)

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"1.1.1.1": true, "2606:4700::1111": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fc00::1": false, "0.0.0.0": false, "::": false,
		"100.64.0.1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "64:ff9b::a00:1": false,
		"2002:7f00:1::": false, "224.0.0.1": false, "255.255.255.255": false,
	} {
		if got := httpclient.PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// A name that resolves to loopback is refused as the connection is made,
// before any request, unless named; a literal internal address is refused
// by Allows before any connection.
func TestReachRefusesInternalAddressesUnlessNamed(t *testing.T) {
	var asked int
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked++ }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	viaName := "https://localhost:" + u.Port() + "/"
	base := srv.Client().Transport.(*http.Transport).Clone()
	base.TLSClientConfig.ServerName = "example.com" // the test certificate's name

	for _, named := range []bool{false, true} {
		r := httpclient.NewReach(func(host string) bool { return named && host == "localhost" })
		c := httpclient.Client{HTTP: &http.Client{Transport: r.Transport(base)}, Retries: -1}
		target, _ := url.Parse(viaName)
		_, err := c.Get(context.Background(), target, nil, "")
		var refused *httpclient.RefusedAddressError
		switch {
		case !named && !errors.As(err, &refused):
			t.Errorf("localhost, not named: %v, want a refusal", err)
		case !named && backends.IsTransient(err):
			t.Errorf("the refusal is taken for transient: %v", err)
		case !named && !strings.Contains(err.Error(), "--allow-host"):
			t.Errorf("the refusal does not say what to do: %v", err)
		case named && err != nil:
			t.Errorf("localhost, named: %v", err)
		}
		if err := r.Allows("127.0.0.1"); err == nil {
			t.Error("Allows(127.0.0.1) without naming it")
		}
		if err := r.Allows("example.com"); err != nil {
			t.Errorf("Allows(example.com): %v (a name is checked as it is connected to)", err)
		}
	}
	if asked != 1 {
		t.Errorf("the server was asked %d times, want once (named)", asked)
	}
}
