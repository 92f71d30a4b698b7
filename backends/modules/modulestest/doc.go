// Package modulestest runs a real module registry for tests: an HTTPS
// server on 127.0.0.1 that speaks the Module Registry Protocol (service
// discovery, versions, download locations in each style registries use)
// and serves package archives, with a log of the requests it answered.
package modulestest
