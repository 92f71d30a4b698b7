// Package modplace turns command-line place arguments into module places:
// registry://HOST (a module registry), oci://REGISTRY/TEMPLATE (an OCI
// mirror, see modules.Template) and a directory (a filesystem mirror). The
// argument syntax is the providers' (backends/place); the kinds differ.
package modplace
