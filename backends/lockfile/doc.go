// Package lockfile reads and writes the clients' dependency lock file,
// .terraform.lock.hcl, byte for byte as Terraform and OpenTofu do: the reader
// refuses what they refuse (with file:line), and the writer produces the
// normalised form they produce, so that a file tfmirror updates shows no
// cosmetic diff when `init` next rewrites it.
package lockfile
