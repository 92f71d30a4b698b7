// Package regserve answers the registry protocols, providers.v1 and
// modules.v1, for the hostnames a served place mirrors, so that a CLI
// configuration's host block
//
//	host "registry.terraform.io" {
//	  services = {
//	    "providers.v1" = "https://mirror.corp:8443/v1/providers/registry.terraform.io/"
//	    "modules.v1"   = "https://mirror.corp:8443/v1/modules/registry.terraform.io/"
//	  }
//	}
//
// moves both kinds of install onto the mirror with no provider_installation
// block and no source rewritten.
//
// providers.v1 offers a provider version only where the place keeps its
// provenance (the origin's signed SHA256SUMS, its signature and the
// publisher's key): the download document hands the client those three byte
// for byte as kept, and the archive as the network mirror serves it, so the
// client checks the publisher's signature itself and records every
// platform's signed zh: in its lock file, as from the origin. A version
// without provenance is left out, with the reason logged: the network
// mirror still serves it.
//
// modules.v1 lists the versions a module place holds (or a pull-through
// mirror offers) and names, as X-Terraform-Get, the package served from
// the place itself.
package regserve
