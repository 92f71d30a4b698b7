// Package backends is tfmirror's vocabulary: providers, versions,
// platforms, packages, archives and the evidence that vouches for them; the
// Reader interface every kind of place implements (filesystem mirror,
// network mirror, origin registry, OCI registry, object storage, bundle) and
// the optional capabilities some add (Writer, Remover, ProviderChecker,
// SignedHashLister, StatedHashLister, ProvenanceReader/Writer, ...); the
// sentinel errors and the one classification of retryable ones. Each kind
// lives in a sub-package.
package backends
