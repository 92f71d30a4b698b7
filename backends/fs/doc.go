// Package fs reads and writes filesystem mirrors in the layouts Terraform and
// OpenTofu accept: packed (HOST/NS/TYPE/terraform-provider-TYPE_V_OS_ARCH.zip)
// and unpacked (HOST/NS/TYPE/V/OS_ARCH/), mixed in one tree, with the
// index.json and <version>.json documents `providers mirror` writes so the
// same directory can also be served as a network mirror.
package fs
