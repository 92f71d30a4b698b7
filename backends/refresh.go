package backends

// Refresher is a place that remembers what it listed (a registry keeps
// each provider's versions): Refresh forgets what it holds of p's
// listings, so that the next listing asks the place again. A long-lived
// reader (the pull-through mirror's upstream) refreshes a provider when
// its own copy of the listing expires, instead of opening the place anew.
type Refresher interface {
	Refresh(p Provider)
}
