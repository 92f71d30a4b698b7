package oci

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/ociclient"
)

// Sentinel errors of this package, wrapped (with the repository and the
// package) like those in backends.
var (
	// ErrRejected: the registry refused content tfmirror sent (an invalid
	// manifest, an unknown blob, an unsupported media type).
	ErrRejected = errors.New("the registry rejected the content")
	// ErrNotProvider: what a tag or manifest holds is not an OpenTofu
	// provider in the oci_mirror layout, so OpenTofu would refuse it too.
	ErrNotProvider = errors.New("not an OpenTofu provider artifact")
	// ErrDigestMismatch: the registry served bytes that do not match the
	// digest or size that names them.
	ErrDigestMismatch = errors.New("content does not match its digest")
	// ErrDeletesRefused: the registry does not allow deletes (the
	// distribution registry's default answers 405 UNSUPPORTED).
	ErrDeletesRefused = errors.New("the registry does not allow deletes")
)

// Error is a failed registry operation, classified once: what was being
// done, where, for which package, and what the registry said.
type Error struct {
	Op         string // "list tags", "resolve", "fetch", "push blob", "push manifest", ...
	Place      string // the oci:// place as the user wrote it
	Repository string // REGISTRY/REPOSITORY
	Package    string // the package, when the operation was for one
	Code       string // the registry's error code (NAME_UNKNOWN, MANIFEST_INVALID, ...)
	Status     int    // the HTTP status, when there was a response
	Hint       string // what the user can do
	kind       error  // the sentinel this error is an instance of, if any
	Err        error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("oci mirror " + e.Place)
	if e.Repository != "" {
		b.WriteString(": repository " + e.Repository)
	}
	if e.Package != "" {
		b.WriteString(": " + e.Package)
	}
	b.WriteString(": " + e.Op + ": ")
	if e.kind != nil {
		b.WriteString(e.kind.Error())
		if e.Code != "" || e.Status != 0 {
			b.WriteString(" (")
			if e.Code != "" {
				b.WriteString(e.Code)
				if e.Status != 0 {
					b.WriteString(", ")
				}
			}
			if e.Status != 0 {
				fmt.Fprintf(&b, "HTTP %d", e.Status)
			}
			b.WriteString(")")
		}
		if detail := e.detail(); detail != "" {
			b.WriteString(": " + detail)
		}
	} else {
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// detail is the registry's own message, when it adds something to the code.
func (e *Error) detail() string {
	var resp *errcode.ErrorResponse
	if errors.As(e.Err, &resp) {
		var msgs []string
		for _, re := range resp.Errors {
			if re.Message != "" {
				msgs = append(msgs, re.Message)
			}
		}
		return strings.Join(msgs, "; ")
	}
	if e.Err != nil && e.Err != e.kind {
		return e.Err.Error()
	}
	return ""
}

// Unwrap exposes both the sentinel and the underlying cause, so callers can
// test errors.Is(err, backends.ErrUnauthorized) and still reach the
// registry's errcode.ErrorResponse with errors.As.
func (e *Error) Unwrap() []error {
	if e.kind != nil {
		return []error{e.kind, e.Err}
	}
	return []error{e.Err}
}

// Transient reports failures worth retrying: the registry was busy or broke
// (5xx, 429) rather than refused.
func (e *Error) Transient() bool { return backends.TransientStatus(e.Status) }

// classify turns an error from oras-go into an *Error naming the sentinel it
// stands for and what to do about it.
func classify(err error, op, place string, repo Repository, pkg string) error {
	if err == nil {
		return nil
	}
	err = ociclient.PlainDetails(err)
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	e := &Error{Op: op, Place: place, Repository: repo.String(), Package: pkg, Err: err}
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		e.Status = resp.StatusCode
		if len(resp.Errors) > 0 {
			e.Code = resp.Errors[0].Code
		}
	}
	login := fmt.Sprintf("log in with `docker login %s` or `podman login %s` (tfmirror reads their credential files and helpers)", repo.Registry, repo.Registry)
	noCreds := errors.Is(err, auth.ErrBasicCredentialNotFound) || strings.Contains(err.Error(), "missing username or password")
	switch {
	case noCreds:
		e.kind = backends.ErrUnauthorized
		e.Status = http.StatusUnauthorized
		e.Err = errors.New("the registry wants credentials and none were found")
		e.Hint = login
	case e.Code == errcode.ErrorCodeUnauthorized || e.Status == http.StatusUnauthorized:
		e.kind = backends.ErrUnauthorized
		e.Hint = "the registry wants credentials, or refused the ones given: " + login
	case e.Code == errcode.ErrorCodeDenied || e.Status == http.StatusForbidden:
		e.kind = backends.ErrUnauthorized
		e.Hint = "access denied: the credentials lack permission for this repository (pushing needs write access)"
	case e.Code == errcode.ErrorCodeNameUnknown:
		e.kind = backends.ErrNotFound
		e.Hint = "the repository does not exist (check the template, or push to it first)"
	case e.Code == errcode.ErrorCodeNameInvalid:
		e.kind = ErrRejected
		e.Hint = "the registry does not accept this repository name"
	case e.Code == errcode.ErrorCodeManifestUnknown || errors.Is(err, errdef.ErrNotFound) || e.Status == http.StatusNotFound:
		e.kind = backends.ErrNotFound
	case isPushRace(err):
		// Answered to a push that named a blob or manifest this process
		// had just pushed: not a format the registry refuses, but another
		// push of the same content at the same moment.
		e.kind = ErrRejected
		if strings.HasPrefix(op, "push") {
			e.Hint = "the registry did not find, or found half-written, content this process had just pushed: another push into the same repository was writing it at the same moment (distribution 2.8 rewrites a blob's link in place); tfmirror retried it a few times: run again, and if it persists, check for a proxy that alters uploads"
		}
	case strings.HasPrefix(op, "delete") && (e.Code == errcode.ErrorCodeUnsupported || e.Status == http.StatusMethodNotAllowed):
		e.kind = ErrDeletesRefused
		e.Hint = "enable deletes on the registry (distribution: storage.delete.enabled: true) to have tfmirror delete what it removes"
	case e.Code == errcode.ErrorCodeManifestInvalid, e.Code == errcode.ErrorCodeUnsupported,
		e.Status == http.StatusUnsupportedMediaType:
		e.kind = ErrRejected
		if strings.Contains(op, "manifest") || strings.Contains(op, "index") {
			e.Hint = "the registry may not support OCI 1.1 artifacts (artifactType) or the archive/zip layer media type"
		}
	case e.Code == errcode.ErrorCodeSizeInvalid, e.Code == errcode.ErrorCodeBlobUploadInvalid:
		e.kind = ErrRejected
	case e.Status == http.StatusBadRequest:
		e.kind = ErrRejected
	}
	if e.kind == nil {
		e.Hint = transportHint(err)
	}
	return e
}

// isPushRace reports the answers a registry gives to a push that names
// content whose link another push is rewriting at that moment
// (distribution 2.8 writes links in place, so a reader can find one empty):
// BLOB_UNKNOWN or MANIFEST_BLOB_UNKNOWN for a blob or manifest just pushed,
// DIGEST_INVALID for a link read empty. Pushes answered so are retried.
func isPushRace(err error) bool {
	var resp *errcode.ErrorResponse
	if !errors.As(err, &resp) || resp.StatusCode == http.StatusNotFound {
		return false
	}
	for _, re := range resp.Errors {
		switch re.Code {
		case errcode.ErrorCodeBlobUnknown, errcode.ErrorCodeManifestBlobUnknown, errcode.ErrorCodeDigestInvalid:
			return true
		}
	}
	return false
}

// isDigestInvalid reports a registry's DIGEST_INVALID answer: the bytes it
// received are not the digest's, or (distribution 2.8) another push was
// rewriting the blob's link.
func isDigestInvalid(err error) bool {
	var resp *errcode.ErrorResponse
	if !errors.As(err, &resp) {
		return false
	}
	for _, re := range resp.Errors {
		if re.Code == errcode.ErrorCodeDigestInvalid {
			return true
		}
	}
	return false
}

// transportHint says what to do about the connection-level failures users
// meet first with private registries.
func transportHint(err error) string {
	// A certificate not trusted says what to do itself
	// (httpclient.CertError), as it does for every kind of place.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return "the registry speaks plain HTTP: pass --plain-http"
	case strings.Contains(msg, "malformed HTTP response") || strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the registry may speak HTTPS, or a different protocol: check --plain-http"
	case strings.Contains(msg, "failed to decode response"):
		// oras reads at most 4 MiB of a listing, so a larger one fails
		// to decode rather than being read without end.
		return "the registry's answer is not valid JSON, or is larger than the 4 MiB tfmirror reads of it"
	}
	return ""
}
