// Package mirrordoc is the Provider Network Mirror Protocol's two documents,
// HOST/NAMESPACE/TYPE/index.json and HOST/NAMESPACE/TYPE/VERSION.json, as
// tfmirror writes them into every place that holds that layout (a directory,
// an object storage bucket): byte for byte what `providers mirror` writes,
// and one rule for which hashes a rewritten document lists.
package mirrordoc
