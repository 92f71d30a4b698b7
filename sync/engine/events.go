package engine

import (
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
)

// JobID identifies a job for the life of an Engine.
type JobID int

// JobInfo describes a job for front ends.
type JobInfo struct {
	ID      JobID
	Package backends.Package
	// Name, when set, names a job that moves something other than a
	// provider package (a module: "HOST/NAMESPACE/NAME/SYSTEM VERSION");
	// Package is then the zero value.
	Name string
	// Module is the module of a module job.
	Module modules.Module
	Src    string
	Dst    string
	Size   int64 // -1 when the source does not say
	// Signer, when set, is who signed the package, by the source's
	// provenance (checked before the job was queued).
	Signer *provenance.Signer
}

// Label names the job's package for front ends: Name, or the provider
// package.
func (i JobInfo) Label() string {
	if i.Name != "" {
		return i.Name
	}
	return i.Package.String()
}

// Event is something the engine reports. Front ends switch on the concrete
// type; the engine never waits on how they show it except through the
// channel's buffer.
type Event interface{ IsEvent() }

// JobQueued: a job entered the queue.
type JobQueued struct{ Job JobInfo }

// JobStarted: a worker took the job (Attempt counts from 1).
type JobStarted struct {
	ID      JobID
	Attempt int
}

// JobProgress is a snapshot of a running job's transfer, sent every
// ProgressInterval while bytes move or its phase changes, never once per
// chunk.
type JobProgress struct {
	ID    JobID
	Bytes int64
	// Total is the size the job expects: JobInfo.Size, or what the stream
	// stated once opened (an HTTP Content-Length); -1 when unknown.
	Total int64
	Rate  float64 // bytes per second over the attempt so far
	Phase Phase
}

// Phase is what a running job is doing.
type Phase int

const (
	// PhaseTransfer: bytes are moving (and hashed as they go).
	PhaseTransfer Phase = iota
	// PhaseHashing: every byte has arrived; the archive is still being
	// hashed (h1: of a zip the stream could not follow, or the last
	// entries the stream has not inflated yet) before it is checked.
	PhaseHashing
)

func (p Phase) String() string {
	if p == PhaseHashing {
		return "hashing"
	}
	return "transfer"
}

// HashChecked: one source of truth was checked against the transferred
// archive.
type HashChecked struct {
	ID    JobID
	Check hashing.Check
}

// JobRetrying: a transient error ended an attempt; another follows after
// Delay.
type JobRetrying struct {
	ID      JobID
	Attempt int
	Err     error
	Delay   time.Duration
}

// JobDone: the archive is in the destination, verified.
type JobDone struct {
	ID       JobID
	Sums     hashing.Sums
	Result   hashing.Result
	Bytes    int64
	Elapsed  time.Duration
	Verified bool // at least one source of truth vouched for it
}

// JobFailed: the job ended without changing the destination, or, after
// JobDone, its archive landed but the destination's index documents do not
// list it (IndexWritten reports why), so clients will not find it.
type JobFailed struct {
	ID       JobID
	Err      error
	Canceled bool
}

// IndexWritten: the destination's index documents for a provider were
// rewritten after its archives landed (Err set when that failed). Client,
// where the destination says how clients install from it (an OCI mirror),
// is the configuration and notes `tfmirror push` prints.
type IndexWritten struct {
	Dst      string
	Provider backends.Provider
	Err      error
	Client   *ClientConfig
}

// ClientConfig is the clients' provider_installation block for installing
// a provider from a destination, with notes on what would stop it working.
type ClientConfig struct {
	Block string
	Notes []string
}

// Idle: every job queued so far has ended.
type Idle struct{}

func (JobQueued) IsEvent()    {}
func (JobStarted) IsEvent()   {}
func (JobProgress) IsEvent()  {}
func (HashChecked) IsEvent()  {}
func (JobRetrying) IsEvent()  {}
func (JobDone) IsEvent()      {}
func (JobFailed) IsEvent()    {}
func (IndexWritten) IsEvent() {}
func (Idle) IsEvent()         {}
