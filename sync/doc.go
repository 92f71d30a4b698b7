// Package sync holds the mirror operations as plain functions over places:
// it resolves a selection against a source (Selection), plans what a
// destination lacks (MakePlan), carries plans out as Tasks (a provider
// Transfer, with its provenance and index writing; ModuleTasks) on the
// job runner of sync/engine (Sync, RunTasks), verifies and prunes
// (VerifyPlace, PlanPrune, Outdated); lock files are checked and updated
// by sync/lockcheck. What happens is reported as engine Events to a Sink;
// sync knows nothing of how they are shown and imports no concrete kind of
// place.
package sync
