//go:build unix

package atomicfile

// closeBeforeRename is false: an open file can be renamed here, so a
// staging file stays open, and locked, until it is in place.
const closeBeforeRename = false
