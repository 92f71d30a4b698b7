// Package ui is tfmirror's terminal UI: places, what they hold, and for the
// item chosen a grid of what each place has, lacks, or has with different
// hashes: a provider's platform matrix across mirrors (the Providers view)
// or a module's versions across module places (the Modules view). What is
// selected is queued to the sync engine, verified, and updated live as
// jobs land.
//
// Everything that blocks (listing, hashing, the engine) runs in tea.Cmds and
// comes back as messages; Update only folds them into state, View only
// draws it.
package ui
