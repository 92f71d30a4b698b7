package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// maxJobs bounds --jobs. Each worker is a goroutine with its buffers, all
// started at once: --jobs 1000000 took 2.7 GB and twelve seconds before the
// first byte moved, and a larger number was killed for its memory.
const maxJobs = 1024

// jobsValue is --jobs: a whole number from 1 to maxJobs, refused (exit 2)
// otherwise.
type jobsValue struct{ n *int }

func (j jobsValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxJobs {
		return fmt.Errorf("want a whole number from 1 to %d", maxJobs)
	}
	*j.n = n
	return nil
}

func (j jobsValue) String() string { return strconv.Itoa(*j.n) }
func (j jobsValue) Type() string   { return "int" }

// jobsVar defines --jobs on fl into p, def by default.
func jobsVar(fl *pflag.FlagSet, p *int, def int, usage string) {
	*p = def
	fl.Var(jobsValue{p}, "jobs", usage)
}
