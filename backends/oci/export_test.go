package oci

import "time"

// SetLockWait sets how long a claim on the lock's slow path waits, for a
// test that runs alone (not in parallel); the returned func restores it.
func SetLockWait(d time.Duration) (restore func()) {
	old := lockWait
	lockWait = d
	return func() { lockWait = old }
}
