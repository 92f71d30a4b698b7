// Package trust is the policy sync applies to signatures before anything
// is mirrored: which signing keys (by fingerprint) may sign which
// providers, whether an archive with no valid signature may be mirrored at
// all, and whether an expired key counts. A policy is an HCL file:
//
//	require_signature  = true   # as OPENTOFU_ENFORCE_GPG_VALIDATION=true
//	enforce_expiration = true   # as OPENTOFU_ENFORCE_GPG_EXPIRATION=true
//
//	provider "registry.terraform.io/hashicorp/*" {
//	  fingerprints = ["C874011F0AB405110D02105534365D9472D7468F"]
//	}
//	provider "registry.example.com/acme/widget" {
//	  fingerprints = ["...", "..."]   # either key may sign it
//	}
//
// A provider block's label is a pattern, [HOSTNAME/]NAMESPACE/TYPE where a
// whole part may be *, as in the clients' include and exclude lists; one
// written without a hostname applies on every host. The most specific
// block matching a provider applies to it (an exact type before *, an
// exact namespace before *, a hostname before none); a provider no block
// matches may be signed by any key.
package trust
