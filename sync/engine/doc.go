// Package engine is the job runner under every operation of sync: a pool
// of workers that runs Tasks with per-job retries (Options.Attempts, never
// multiplying what the layers below retried), cancellation, batches that
// own their state (Batched, Batch: finished once their last job has ended)
// and admission (Admitter), reporting everything as Events in order per
// job; Do runs one task and returns how it ended. It knows no operation:
// what a task does (a provider transfer, a module copy) lives with the
// operations in sync.
package engine
