// Package rewrite points a configuration's module blocks at mirrored
// packages: each module whose source is a registry address
// ([HOST/]NAMESPACE/NAME/SYSTEM[//SUBDIR]) gets the oci:// address of the
// newest mirrored version its version argument allows, and loses that
// argument, since OpenTofu refuses version constraints on oci:// sources.
// Files are edited with hclwrite, so everything else (comments, layout,
// other arguments) stays as written.
package rewrite
