// Command ui-genmirror writes a large filesystem mirror for the UI
// benchmarks: PROVIDERS x VERSIONS x PLATFORMS packed archives (tiny zips:
// listing reads names and sizes, not contents), with <version>.json and
// index.json documents stating their hashes, as `terraform providers mirror`
// writes them.
//
//	go run ./bench/ui-genmirror -dir bench/out/mirror100k -providers 20 -versions 1000 -platforms 5
package main
