// Package demo builds a small sample world of provider mirrors, so every
// feature of the UI can be tried with no setup: a complete filesystem
// mirror, a second one that lacks some platforms and holds one archive with
// different content, and (Serve) the first one served as a network mirror on
// loopback; and (ServeModules) a module registry on loopback with a
// directory of module packages that lacks most of its releases. Tests and
// benchmarks build the same world.
package demo
