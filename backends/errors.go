package backends

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// OpError is an error from one operation on one place, for one package.
type OpError struct {
	Op    string // "list", "open", "stage", "commit", "flush", ...
	Place string
	Side  string // "source" or "destination", where it matters
	Pkg   *Package
	Err   error
}

// Error states the side, place, package and operation once: the parts the
// wrapped error already names (backends name their place and package) are
// not repeated.
func (e *OpError) Error() string {
	inner := e.Err.Error()
	var parts []string
	head := e.Side
	if e.Place != "" && !strings.Contains(inner, e.Place) {
		head = strings.TrimSpace(head + " " + e.Place)
	}
	if head != "" {
		parts = append(parts, head)
	}
	if e.Pkg != nil && !strings.Contains(inner, e.Pkg.String()) {
		parts = append(parts, e.Pkg.String())
	}
	if e.Op != "" {
		parts = append(parts, e.Op)
	}
	return strings.Join(append(parts, inner), ": ")
}

func (e *OpError) Unwrap() error { return e.Err }

// UnlistedError is a Flush error that names the packages whose archives
// landed in the place although its index documents do not list them (or
// may not): clients will not find them, so the jobs that moved them have not
// succeeded.
type UnlistedError struct {
	Packages []Package
	Err      error
}

func (e *UnlistedError) Error() string { return e.Err.Error() }
func (e *UnlistedError) Unwrap() error { return e.Err }

// Unlisted returns, for each package an UnlistedError in err's tree names
// (errors.Join and wrapping are followed), that error.
func Unlisted(err error) map[PackageKey]error {
	out := map[PackageKey]error{}
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *UnlistedError:
			for _, p := range e.Packages {
				out[p.Key()] = e.Err
			}
		case interface{ Unwrap() []error }:
			for _, c := range e.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// transientError marks an error as worth retrying.
type transientError struct{ err error }

func (e transientError) Error() string   { return e.err.Error() }
func (e transientError) Unwrap() error   { return e.err }
func (e transientError) Transient() bool { return true }

// Transient marks err as worth retrying.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return transientError{err}
}

// permanentError marks an error as not worth retrying, whatever it wraps.
type permanentError struct{ err error }

func (e permanentError) Error() string   { return e.err.Error() }
func (e permanentError) Unwrap() error   { return e.err }
func (e permanentError) Permanent() bool { return true }

// Permanent marks err as not worth retrying even where it wraps an error
// that usually is: a zip whose deflate stream ends early reports
// io.ErrUnexpectedEOF, like a dropped connection, but reading the same
// bytes again meets the same end.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsTransient classifies an error once for every caller: timeouts, resets,
// truncated bodies and 5xx responses are worth retrying; everything else
// (4xx, TLS certificates not accepted, hash mismatches, corrupt archives,
// conflicts, cancellation) is permanent.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || IsCertificateError(err) {
		return false
	}
	var p interface{ Permanent() bool }
	if errors.As(err, &p) && p.Permanent() {
		return false
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) && t.Transient() {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded)
}

// IsCertificateError reports whether err is a TLS certificate the client
// did not accept (unknown authority, another name, expired): the server
// presents the same certificate on every try.
func IsCertificateError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}

// usageError is an error in what the user asked for; errors.Is(err,
// ErrUsage) holds and the message is only its own.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

// Usagef formats an error in what the user asked for (a place, a template,
// a selection): errors.Is(err, ErrUsage) holds, so the command line exits 2.
func Usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}
