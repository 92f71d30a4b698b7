// Package sync holds the mirror operations as plain functions over places:
// it resolves a selection against a source (Selection), plans what a
// destination lacks (MakePlan), carries plans out on an Engine that runs
// Tasks (a provider Transfer, a ModuleTask) on a pool of workers with
// retries and cancellation (Sync, RunTasks), verifies and prunes
// (VerifyPlace, PlanPrune, Outdated); lock files are checked and updated by
// sync/lockcheck. What happens is
// reported as Events to a Sink; sync knows nothing of how they are shown and
// imports no concrete kind of place.
package sync
