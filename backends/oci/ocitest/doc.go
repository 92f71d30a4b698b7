// Package ocitest runs a real OCI registry (the CNCF distribution registry,
// in process) on 127.0.0.1 for tests: the same server code as the
// `registry:2` image, with its storage in a temp directory and a log of the
// requests it served, so tests can assert what a client did ("no blob was
// uploaded") and damage stored content on purpose.
package ocitest
