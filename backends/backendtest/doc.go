// Package backendtest has what backend tests share: real provider zips made
// on the fly, and the conformance suite every kind of place runs against a
// real instance of itself.
package backendtest
