// Package modoci stores module packages in OCI registries in the layout
// OpenTofu installs oci:// module sources from: per version, one image
// manifest with artifactType application/vnd.opentofu.modulepkg, the empty
// config, and exactly one archive/zip layer; tagged with the version ("+"
// mapped to "_") in a lowercase repository named by a template.
//
// Manifests carry only content-derived annotations (no timestamps), so the
// same package gives the same manifest digest on every mirror.
package modoci
