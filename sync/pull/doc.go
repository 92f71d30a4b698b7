// Package pull is the pull-through mirror: a place that serves what its
// CACHE (any writable place) holds, and fetches what it lacks from an
// upstream place on demand, verified and landed in CACHE as a sync lands
// it (sync.Transfer, with provenance), while the clients that asked for it
// receive it as it arrives.
//
// Mirror is a backends.Reader: a network mirror's handler serves it as it
// serves any place. Its listings merge what the upstream offers (as the
// policy allows, cached for a TTL, served stale when the upstream fails)
// with what CACHE holds. Opening an archive CACHE lacks starts one fetch
// per package however many clients ask at once (a flight): the engine's
// verified transfer writes the bytes into CACHE's staging file, which
// every waiting client reads as it grows (each byte is written once), and
// commits them only when whole and verified. Server wraps the handler with
// what operators need: /healthz, /metrics, an access log line per request,
// and the policy's reasons in its 404s.
package pull
