// Package registrytest runs a real origin registry (the Provider Registry
// Protocol, with service discovery) over HTTPS on 127.0.0.1 for tests, from
// zips the test gives it. Releases are signed like real ones: a GPG key made
// for the test, a SHA256SUMS document per version and a binary detached
// signature over it. Faults can be switched on to make it misbehave in the
// ways clients must catch.
//
// The registry API and the release files (SHA256SUMS, .sig, zips) are on two
// servers with different ports, as they are on different hosts in real
// registries, so tests can check where credentials go.
package registrytest
