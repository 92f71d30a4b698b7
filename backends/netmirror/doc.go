// Package netmirror reads network mirrors (the Provider Network Mirror
// Protocol: HOST/NS/TYPE/index.json and <version>.json under a base URL) and
// serves a filesystem mirror as one (NewHandler, behind `tfmirror serve`).
//
// A network mirror is read-only: Mirror does not implement backends.Writer.
// The protocol has no catalogue of providers, so Providers returns
// backends.ErrNoCatalogue and callers name the providers.
package netmirror
