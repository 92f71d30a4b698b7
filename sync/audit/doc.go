// Package audit keeps an audit log of what runs change in mirrors: a file
// of JSON lines, one per package that landed, was refused or was removed,
// saying where it came from, its hashes, who signed it, which tfmirror did
// it and when. A Log is a sync.Sink: the engine's events go in, lines come
// out, and the engine knows nothing of it.
//
// Lines are appended (O_APPEND), each with one write, so several
// processes can log to one file at once without mixing their lines. A
// reader answers "when did this archive enter our mirror and who signed
// it" with Read and Entered.
package audit
