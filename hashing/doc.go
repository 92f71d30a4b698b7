// Package hashing computes and checks the package hashes the Terraform and
// OpenTofu clients use: "h1:" (Go's dirhash Hash1 over a zip or an unpacked
// directory) and "zh:" (SHA-256 of the zip file), and records which source of
// truth vouched for each.
//
// A zip's h1: is computed as its bytes go by (Stream), each entry inflated
// by the package's own DEFLATE decoder (hashing/internal/inflate), about
// twice as fast as klauspost's and the standard library's on executables. It is only an
// accelerator: an entry it cannot decode, or whose sizes and CRC-32 the
// central directory does not confirm, makes Stream hash the file with
// ZipH1 (klauspost's inflater, the standard library's bytes and errors),
// so every value and every error is dirhash.HashZip's.
package hashing
