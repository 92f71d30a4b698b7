// Package modfs keeps module packages in a directory:
// DIR/HOST/NAMESPACE/NAME/SYSTEM/VERSION.zip, each with a VERSION.json
// beside it recording its hashes and where it came from. Zips land
// atomically (a temp file in the same directory, checked, then renamed),
// so readers never see half a package.
package modfs
