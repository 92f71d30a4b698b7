package s3

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/tfmirror/tfmirror/backends"
)

// apiError is an S3 response, classified once: what it means for tfmirror
// (a sentinel of backends, or none), whether it is worth retrying, and a
// message of one line instead of the SDK's request ids.
type apiError struct {
	op        string // the S3 operation, GetObject, PutObject, ...
	code      string // the S3 error code, NoSuchKey, AccessDenied, ...
	status    int
	msg       string
	sentinel  error
	transient bool
	err       error
}

func (e *apiError) Error() string {
	var b strings.Builder
	b.WriteString(cmp.Or(e.op, "S3"))
	if e.status != 0 {
		fmt.Fprintf(&b, ": %d %s", e.status, http.StatusText(e.status))
	}
	if e.code != "" && e.code != strings.ReplaceAll(http.StatusText(e.status), " ", "") {
		fmt.Fprintf(&b, " (%s)", e.code)
	}
	if e.msg != "" {
		b.WriteString(": " + e.msg)
	}
	return b.String()
}

func (e *apiError) Unwrap() error        { return e.err }
func (e *apiError) Transient() bool      { return e.transient }
func (e *apiError) Is(target error) bool { return e.sentinel != nil && target == e.sentinel }

// status returns the HTTP status of an S3 response error, or 0.
func status(err error) int {
	var sc interface{ HTTPStatusCode() int }
	if errors.As(err, &sc) {
		return sc.HTTPStatusCode()
	}
	return 0
}

// isPrecondition reports whether a conditional request was refused because
// its condition did not hold (the object exists, or changed).
func isPrecondition(err error) bool {
	var e *apiError
	return errors.As(err, &e) && (e.status == http.StatusPreconditionFailed || e.code == "PreconditionFailed")
}

// classify turns an SDK error into an apiError; other errors (the context's
// end, a network failure) are returned as they are.
func classify(err error) error {
	var ae *apiError
	if err == nil || isCanceled(err) || errors.As(err, &ae) {
		return err
	}
	e := &apiError{status: status(err), err: err}
	var op *smithy.OperationError
	if errors.As(err, &op) {
		e.op = op.OperationName
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		e.code, e.msg = api.ErrorCode(), api.ErrorMessage()
	}
	if e.status == 0 && e.code == "" {
		return sendError(e.op, err)
	}
	switch {
	case e.code == "NoSuchBucket":
		e.sentinel, e.msg = backends.ErrUsage, "the bucket does not exist (create it, or check the name and --s3-endpoint)"
	case e.code == "NoSuchKey" || e.status == http.StatusNotFound:
		e.sentinel = backends.ErrNotFound
	case e.status == http.StatusUnauthorized || e.status == http.StatusForbidden:
		e.sentinel = backends.ErrUnauthorized
		e.msg = strings.TrimSpace(e.msg + " (check the AWS credentials and the bucket's policy)")
	case e.code == "PermanentRedirect" || e.code == "AuthorizationHeaderMalformed":
		e.sentinel = backends.ErrUsage
		e.msg = strings.TrimSpace(e.msg + " (the bucket is in another region: set AWS_REGION to it)")
	case backends.TransientStatus(e.status), e.code == "SlowDown", e.code == "RequestTimeout",
		e.status == http.StatusConflict && e.code == "ConditionalRequestConflict":
		e.transient = true
	}
	return e
}

// sendError is a request that got no response: no credentials to sign it
// with (a usage error), or a network or TLS failure, named by its own
// message rather than the SDK's chain. backends.IsTransient still sees the
// cause through Unwrap.
func sendError(op string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "get identity") || strings.Contains(msg, "retrieve credentials") {
		return backends.Usagef("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (the AWS configuration files), or run where a role provides them (%v)", err)
	}
	var cause error
	var opErr *net.OpError
	var urlErr *url.Error
	switch {
	case errors.As(err, &opErr):
		cause = opErr
	case errors.As(err, &urlErr):
		cause = urlErr.Err
	default:
		return err
	}
	e := &apiError{op: cmp.Or(op, "S3"), msg: cause.Error(), err: err, transient: backends.IsTransient(err)}
	var unknownCA x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &verify) {
		e.msg += " (trust the store's certificate authority with --ca-cert or AWS_CA_BUNDLE)"
	}
	return e
}
