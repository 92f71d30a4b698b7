// Package s3test runs a real S3 server for tests: versitygw (Apache-2.0,
// github.com/versity/versitygw), a gateway that stores each bucket as a
// directory, on 127.0.0.1 over TLS with a certificate made for the test.
// The binary is found on PATH, in the Go bin directory or in tfmirror's tool
// cache, or built there with the Go toolchain; a test that cannot have it
// is skipped with a message saying how to install it.
package s3test
