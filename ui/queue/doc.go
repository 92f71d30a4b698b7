// Package queue is the dialog that takes a view's selection to a
// destination: pick a writable place, see what would be done, confirm
// (with f to force). The view says what queueing to each place would do;
// the dialog is the same for providers and modules.
package queue
