package oci

import "time"

// SetLockWait sets how long a claim on the lock's slow path waits, for a
// test that runs alone (not in parallel); the returned func restores it.
func SetLockWait(d time.Duration) (restore func()) {
	old := lockWait
	lockWait = d
	return func() { lockWait = old }
}

// SetLockLease sets the lease a writer claims, and the most it waits for
// another's, for a test that runs alone; the returned func restores it.
func SetLockLease(d time.Duration) (restore func()) {
	old := lockLease
	lockLease = d
	return func() { lockLease = old }
}
