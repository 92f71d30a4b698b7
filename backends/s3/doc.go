// Package s3 reads and writes provider mirrors in object storage (AWS S3 and
// S3-compatible stores) in the Provider Network Mirror Protocol's layout:
// PREFIX/HOST/NAMESPACE/TYPE/index.json, VERSION.json and the release zips
// beside them. Served over HTTPS (a bucket with anonymous read, a static
// website, a CDN in front), the bucket is a network mirror Terraform and
// OpenTofu install from.
//
// Writes keep readers safe without a lock: an archive lands by a conditional
// create (If-None-Match: *), so nothing is replaced without force; the
// version documents are rebuilt from the bucket's listing after the
// archives, and index.json last; every document is replaced only if it is
// still the one read before the listing (If-Match), so concurrent writers
// converge on documents that list every archive any of them landed.
package s3
