// Package push prepares `tfmirror push`: it turns locally built release zips
// (goreleaser's terraform-provider-NAME_VERSION_OS_ARCH.zip) into a place the
// sync engine can read, and writes the oci_mirror block to paste into the
// OpenTofu CLI configuration once they are in a registry.
package push
