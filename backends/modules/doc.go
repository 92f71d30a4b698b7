// Package modules is tfmirror's model of Terraform/OpenTofu module packages
// and a client for the Module Registry Protocol (modules.v1). A module is a
// different unit from a provider: an address NAMESPACE/NAME/SYSTEM on a
// registry host, versions, and one package per version, with no platforms.
//
// Sub-packages fetch packages from the locations registries return
// (modules/fetch), store them in OCI registries in OpenTofu's modulepkg
// layout (modules/modoci) or in a directory (modules/modfs), open places from
// command-line arguments (modules/modplace) and rewrite configurations to use
// the mirrored addresses (modules/rewrite).
package modules
