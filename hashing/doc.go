// Package hashing computes and checks the package hashes the Terraform and
// OpenTofu clients use: "h1:" (Go's dirhash Hash1 over a zip or an unpacked
// directory) and "zh:" (SHA-256 of the zip file), and records which source of
// truth vouched for each.
package hashing
