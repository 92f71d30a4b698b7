// Package provenance is the proof that a provider version's release zips
// are the ones their publisher signed, kept with the archives wherever a
// mirror holds them: the origin registry's signed SHA256SUMS document, byte
// for byte, its detached OpenPGP signature, and the public key that made
// it, with where that key came from. Anyone holding the three can check,
// any number of hops from the registry and without reaching it, that an
// archive's zh: hash is the one the key signed.
//
// A Provenance is written in one form everywhere (Marshal, Parse): a JSON
// document, kept
//
//   - in a filesystem mirror (and object storage holding the same layout)
//     as HOST/NAMESPACE/TYPE/.tfmirror-provenance/VERSION.json (DirName,
//     FileName): a dot-directory the clients' scanners descend into but
//     find no package in, and a file at a depth where they look only for
//     directories, so they neither use nor warn about it;
//   - in an OCI mirror as the single layer (MediaType) of an OCI 1.1
//     referrer manifest (ArtifactType) whose subject is the version's image
//     index, found through the referrers API or its tag-schema fallback.
//
// The package depends on nothing of tfmirror but hashing: places, bundles
// and the sync engine use it alike.
package provenance
