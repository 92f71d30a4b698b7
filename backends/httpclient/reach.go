package httpclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// Reach says which hosts a client may connect to: those Named says it may
// reach at whatever address, and any other only at a public address (not
// loopback, link-local, private, unspecified, multicast or otherwise
// special). The address is checked as the connection is made (a
// net.Dialer's Control hook), after the name was resolved, so a DNS answer
// that changes between a check and the connection cannot swap in an
// internal address. A server exposed to clients that name the hosts it
// fetches from (a pull-through mirror of each provider's origin) reaches
// through it.
type Reach struct {
	// Named reports whether host (lowercase, without port) may be reached
	// at any address; nil names none.
	Named func(host string) bool
	// proxy is the host of the HTTPS proxy the environment names, reached
	// whatever its address (the proxy resolves the names).
	proxy string
}

// NewReach returns a Reach naming what named names, and the HTTPS proxy
// the environment sets, if any.
func NewReach(named func(host string) bool) *Reach {
	r := &Reach{Named: named}
	if p := httpproxy.FromEnvironment().HTTPSProxy; p != "" {
		if u, err := url.Parse(p); err == nil && u.Host != "" {
			r.proxy = strings.ToLower(u.Hostname())
		} else {
			r.proxy = strings.ToLower(strings.Split(p, ":")[0])
		}
	}
	return r
}

// RefusedAddressError is a connection Reach refused: Host resolved to (or
// is) an address that is not public, and nothing names it.
type RefusedAddressError struct {
	Host string
	Addr netip.Addr
}

func (e *RefusedAddressError) Error() string {
	return fmt.Sprintf("not connecting to %s: %s is not a public address, and %s is not a host this server is allowed to reach (--allow-host)", e.Host, e.Addr, e.Host)
}

// Permanent: the same name leads to the same refusal on every try.
func (e *RefusedAddressError) Permanent() bool { return true }

// PublicAddr reports whether a is an address on the public internet.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// nonPublic are special-purpose ranges the netip predicates leave out:
// shared address space (carrier-grade NAT), the benchmarking, documentation
// and reserved ranges, IPv4-compatible, NAT64 and 6to4 forms of any IPv4
// address (which may embed an internal one), and the old site-local range.
var nonPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "::/96", "64:ff9b::/96", "64:ff9b:1::/48",
		"2002::/16", "2001:db8::/32", "fec0::/10", "100::/64"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// named reports whether host may be reached at any address.
func (r *Reach) named(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if r.proxy != "" && host == r.proxy {
		return true
	}
	return r.Named != nil && r.Named(host)
}

// Allows reports whether a request to host may be made at all: a literal
// address that is not public is refused before any request unless named
// (a name is checked when it is connected to).
func (r *Reach) Allows(host string) error {
	if r.named(host) {
		return nil
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && !PublicAddr(a) {
		return &RefusedAddressError{Host: host, Addr: a}
	}
	return nil
}

// DialContext connects as net.Dialer does, refusing, for a host not named,
// every address that is not public.
func (r *Reach) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !r.named(host) {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &RefusedAddressError{Host: host}
			}
			if !PublicAddr(ap.Addr()) {
				return &RefusedAddressError{Host: host, Addr: ap.Addr().Unmap()}
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}

// Transport returns t with its connections made through r.
func (r *Reach) Transport(t *http.Transport) *http.Transport {
	t = t.Clone()
	t.DialContext = r.DialContext
	return t
}
