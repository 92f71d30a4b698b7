// Package spec reads mirror specs: HCL files that say which providers (and
// modules) a set of mirrors must hold, for which platforms, taken from which
// source, and which add the providers and versions the Terraform/OpenTofu
// configurations under some directories require (derive.go). Wanted resolves
// a spec against its sources into, per destination, one Resolved per wanted
// provider: its source and a sync.Selection pinned to the versions wanted
// there (the same for every destination today). Plan turns a destination's
// into sync.Plans for sync.Sync; outdated, prune and the terminal UI read
// the same result (the UI: wanted versions a destination lacks are the
// plan's missing items).
//
// The package opens no place itself: places are reached through an Opener
// the caller passes in, so that sync/spec, like sync, knows no concrete kind.
package spec
