// Package bundle reads and writes air-gap bundles: one tar file holding a
// filesystem mirror in the packed layout (the release zips, the index.json
// and VERSION.json documents `providers mirror` writes, and the provenance
// sidecars of versions whose source kept provenance) with a manifest that
// states every file's size and SHA-256 and every archive's h1: and zh:.
//
// The tar holds, in this order:
//
//	.tfmirror-bundle.json      the manifest (Manifest), first
//	HOST/NAMESPACE/TYPE/...    the mirror's files, sorted by path
//	.tfmirror-bundle.sha256    the manifest's SHA-256, as sha256sum writes it, last
//
// A tar of the filesystem layout rather than an OCI image layout in a tar:
// `tar -xf` alone makes it a filesystem mirror that both clients install
// from (and `tfmirror serve` serves as a network mirror), so the far side of
// the gap needs no tool to use it, and `sha256sum -c` checks the manifest by
// hand; an OCI layout is readable only by OCI tools and holds the same
// bytes. The two manifest files are hidden, so neither the clients nor
// tfmirror take them for part of the mirror once extracted.
//
// Write is byte-reproducible: the same mirror gives the same bytes (entries
// in a fixed order; fixed modes, owners and times; canonical JSON).
//
// A Bundle (Open) is a read-only place. Open checks the bundle's structure,
// which reads only the tar's headers and the small documents: a truncated
// or rearranged bundle, or one whose manifest does not match its recorded
// digest, is refused whole (ErrDamaged). The contents are checked by
// reading them: each archive's stream fails at its end unless its bytes are
// those the manifest states, and Audit checks the other files, so that
// verify (sync.VerifyPlace) checks everything before an import lands
// anything.
package bundle
