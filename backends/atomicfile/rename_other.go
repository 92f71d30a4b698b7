//go:build !unix

package atomicfile

// closeBeforeRename is true: an open file cannot be renamed everywhere (on
// Windows).
const closeBeforeRename = true
