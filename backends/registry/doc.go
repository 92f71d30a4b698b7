// Package registry reads providers from an origin registry (the Provider
// Registry Protocol, found through service discovery at
// https://HOST/.well-known/terraform.json) and authenticates each release
// the way OpenTofu does: the SHA256SUMS document's detached GPG signature
// must check with one of the registry's keys, its line for the archive must
// match the download metadata's shasum, and the downloaded bytes must hash to
// that shasum.
//
// A registry is read-only (Registry does not implement backends.Writer) and
// has no catalogue: Providers returns backends.ErrNoCatalogue.
package registry
