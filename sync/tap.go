package sync

import (
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// A Tap follows a Transfer's bytes into the destination's staging file, so
// that someone can read them there as they arrive (a pull-through mirror
// streams them to its clients from that file: each byte is written once),
// and learns when they are verified. Each attempt calls Staged, then
// Wrote for each write in order, then, once the staged zip has passed
// every check, Verified just before its commit. A transfer that uploads
// the source's own file (backends.FileStager) writes nothing and calls
// none of them.
type Tap interface {
	// Staged is given the attempt's staging area before anything is
	// written to it: its Path is the file the bytes go to. An error fails
	// the attempt.
	Staged(st backends.Staged) error
	// Wrote is given each run of bytes once it is in the staging file,
	// from its start on. An error fails the attempt.
	Wrote(p []byte) error
	// Verified is given the sums of the staged zip once they match every
	// source of truth; the commit follows.
	Verified(sums hashing.Sums)
}

// tapWriter writes into a staging area, then tells the tap.
type tapWriter struct {
	st  backends.Staged
	tap Tap
}

func (w tapWriter) Write(p []byte) (int, error) {
	n, err := w.st.Write(p)
	if n > 0 {
		if terr := w.tap.Wrote(p[:n]); terr != nil && err == nil {
			err = terr
		}
	}
	return n, err
}
