// Package oci reads and writes provider mirrors in OCI registries, in the
// layout OpenTofu's oci_mirror installation method reads (formats.md §5): a
// repository per provider, chosen by a repository_template; a tag per
// version naming an image index (artifactType
// application/vnd.opentofu.provider) with one image manifest per platform
// (artifactType application/vnd.opentofu.provider-target), each holding the
// release zip as its single archive/zip layer. The layer's sha256 digest is
// the zip's zh: hash.
//
// Reading applies every check OpenTofu makes when it installs, so what
// tfmirror lists is what OpenTofu can install, and reports the rest.
package oci
