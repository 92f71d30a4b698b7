// Package jobs is the UI's queue pane: every sync job with its progress,
// rate, state and, once it lands, the hash checks that vouched for it.
package jobs
