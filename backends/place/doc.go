// Package place turns the MIRROR / SRC / DST arguments of the command line
// into backends: PATH or file://PATH (filesystem mirror), https://HOST/PATH/
// (network mirror), registry://HOST (origin registry),
// oci://REGISTRY/TEMPLATE (OCI mirror), s3://BUCKET[/PREFIX] (object
// storage holding the network-mirror layout) and FILE.tar (an air-gap
// bundle tfmirror export wrote, read-only).
package place
