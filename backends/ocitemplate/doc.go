// Package ocitemplate is the oci_mirror repository_template of the CLI
// configuration: an HCL string template over hostname, namespace and type
// that maps a provider to REGISTRY/REPOSITORY, evaluated exactly as
// OpenTofu does. The OCI place resolves and reverses it, the CLI
// configuration checks it, push prints the block that uses it.
package ocitemplate
