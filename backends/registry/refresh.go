package registry

import "github.com/tfmirror/tfmirror/backends"

var _ backends.Refresher = (*Registry)(nil)

// Refresh forgets p's versions (and the platforms of each), so the next
// listing of p asks the registry again. What is known of a package's
// download, once listed, stays: a release is not changed in place.
func (r *Registry) Refresh(p backends.Provider) {
	r.mu.Lock()
	delete(r.versions, p)
	r.mu.Unlock()
}
