package backends

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/url"
	"testing"
)

// An OpError names its place and package once, however many layers say them.
func TestOpErrorStatesContextOnce(t *testing.T) {
	p, _ := ParseProvider("registry.terraform.io/hashicorp/null")
	v, _ := ParseVersion("3.2.1")
	pkg := Package{Provider: p, Version: v, Platform: Platform{OS: "linux", Arch: "amd64"}}
	inner := fmt.Errorf("mirror ./mirror: %s: open: %w", pkg, errors.New("permission denied"))
	for _, tc := range []struct {
		err  *OpError
		want string
	}{
		{&OpError{Op: "open", Side: "source", Place: "./mirror", Pkg: &pkg, Err: inner},
			"source: open: mirror ./mirror: registry.terraform.io/hashicorp/null 3.2.1 linux_amd64: open: permission denied"},
		{&OpError{Op: "open", Side: "source", Place: "./mirror", Pkg: &pkg, Err: errors.New("permission denied")},
			"source ./mirror: registry.terraform.io/hashicorp/null 3.2.1 linux_amd64: open: permission denied"},
		{&OpError{Op: "write index", Side: "destination", Place: "./m", Err: errors.New("disk full")},
			"destination ./m: write index: disk full"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// TLS certificates not accepted and errors marked Permanent are never worth
// another try, whatever else they wrap or are wrapped in; the transient
// faults they resemble still are.
func TestIsTransientCertificatesAndPermanent(t *testing.T) {
	var unknown error = x509.UnknownAuthorityError{}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"unknown authority in a transient wrapper", Transient(&url.Error{Op: "Get", URL: "https://h/", Err: &tls.CertificateVerificationError{Err: unknown}}), false},
		{"unknown authority", fmt.Errorf("GET https://h/: %w", unknown), false},
		{"hostname", Transient(x509.HostnameError{Host: "h"}), false},
		{"expired", Transient(x509.CertificateInvalidError{Reason: x509.Expired}), false},
		{"deflate ends early", Permanent(fmt.Errorf("zip entry %q: %w", "x", io.ErrUnexpectedEOF)), false},
		{"permanent inside transient", Transient(Permanent(errors.New("x"))), false},
		{"body cut short", fmt.Errorf("GET https://h/: %w", io.ErrUnexpectedEOF), true},
		{"marked transient", Transient(errors.New("503")), true},
	} {
		if got := IsTransient(tc.err); got != tc.want {
			t.Errorf("%s: IsTransient = %v, want %v", tc.name, got, tc.want)
		}
	}
}
