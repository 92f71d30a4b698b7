// Package fetch builds module packages from the locations module registries
// return: HTTP(S) archives (zip, tar, tar.gz, tar.bz2, also behind
// X-Terraform-Get indirections), git repositories (git::URL?ref=..., the
// GitHub shorthand, scp-style addresses; with the system's git binary) and
// local directories or archives. Each package is unpacked with strict
// checks, then packed as a deterministic zip (see Pack) exactly as
// OpenTofu extracts module packages.
package fetch
