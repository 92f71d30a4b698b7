// Package cli tests tfmirror as its users run it: the built binary, against
// real places (directories, TLS servers, an OCI registry) and, where it is
// installed, the real terraform client. It has no code of its own.
package cli
