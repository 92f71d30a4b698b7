package ui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// Everything here runs in tea.Cmds: listing, hashing and talking to the
// engine block, so none of it happens in Update or View.

// providersListedMsg is one mirror's catalogue of providers.
type providersListedMsg struct {
	mirror    int
	providers []backends.Provider
	err       error
	warnings  []string
}

func listProvidersCmd(ctx context.Context, i int, r backends.Reader) tea.Cmd {
	return func() tea.Msg {
		ps, err := r.Providers(ctx)
		msg := providersListedMsg{mirror: i, providers: ps, err: err}
		if w, ok := r.(backends.Warner); ok {
			msg.warnings = w.Warnings()
		}
		return msg
	}
}

// providerLoadedMsg is one mirror's versions and archives of one provider.
// gen identifies the load, so a result overtaken by a newer load of the same
// pair is dropped.
type providerLoadedMsg struct {
	gen      uint64
	mirror   int
	provider backends.Provider
	versions []backends.Version
	archives []backends.Archive
	err      error
}

func loadProviderCmd(ctx context.Context, gen uint64, i int, r backends.Reader, p backends.Provider) tea.Cmd {
	return func() tea.Msg {
		msg := providerLoadedMsg{gen: gen, mirror: i, provider: p}
		if l, ok := r.(backends.Lister); ok {
			// One pass lists every archive; the versions are theirs.
			as, err := l.AllArchives(ctx, p)
			if errors.Is(err, backends.ErrNotFound) {
				return msg
			}
			msg.archives, msg.err = as, err
			seen := map[string]bool{}
			for _, a := range as {
				if v := a.Version.String(); !seen[v] {
					seen[v] = true
					msg.versions = append(msg.versions, a.Version)
				}
			}
			backends.SortVersionsNewestFirst(msg.versions)
			return msg
		}
		vs, err := r.Versions(ctx, p)
		if errors.Is(err, backends.ErrNotFound) {
			return msg // the mirror holds nothing of p
		}
		if err != nil {
			msg.err = err
			return msg
		}
		msg.versions = vs
		msg.archives, msg.err = backends.ListArchives(ctx, r, p, vs)
		return msg
	}
}

// loadTickMsg fires a moment after the provider cursor stops, so holding an
// arrow key does not start a listing per provider passed.
type loadTickMsg struct{ token uint64 }

const loadDelay = 120 * time.Millisecond

func loadTick(token uint64) tea.Cmd {
	return tea.Tick(loadDelay, func(time.Time) tea.Msg { return loadTickMsg{token} })
}

// relistTickMsg fires once after jobs land, to re-list the destinations they
// landed in once rather than once per job.
type relistTickMsg struct{}

const relistDelay = 200 * time.Millisecond

func relistTick() tea.Cmd {
	return tea.Tick(relistDelay, func(time.Time) tea.Msg { return relistTickMsg{} })
}

// verifiedMsg is the result of recomputing one archive's hashes.
type verifiedMsg struct {
	key     verifyKey
	finding sync.Finding
}

// verifyCmd hashes one archive, waiting for one of a few slots so that
// verifying a whole column does not hash hundreds of archives at once.
func verifyCmd(ctx context.Context, slots chan struct{}, key verifyKey, r backends.Reader, a backends.Archive, opts hashing.Options) tea.Cmd {
	return func() tea.Msg {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return verifiedMsg{key: key, finding: sync.Finding{Package: a.Package, Status: sync.StatusError, Detail: ctx.Err().Error()}}
		}
		return verifiedMsg{key: key, finding: sync.VerifyArchive(ctx, r, a, opts)}
	}
}

// engineEventMsg carries one engine event into Update.
type engineEventMsg struct{ ev sync.Event }

// engineClosedMsg: the engine has stopped and sent its last event.
type engineClosedMsg struct{}

// waitForEvent is the one-shot command that reads the next engine event;
// Update issues it again after each one.
func waitForEvent(events <-chan sync.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-events
		if !ok {
			return engineClosedMsg{}
		}
		return engineEventMsg{ev}
	}
}

// enqueuedMsg reports jobs handed to the engine.
type enqueuedMsg struct {
	ids  []sync.JobID
	dest string
}

// enqueueCmd hands jobs to the engine. Enqueue sends an event per job and
// would wait for Update to read them once the channel's buffer is full, so
// it must not run inside Update.
func enqueueCmd(eng *sync.Engine, specs []sync.Task, dest string) tea.Cmd {
	return func() tea.Msg {
		return enqueuedMsg{ids: eng.Enqueue(specs...), dest: dest}
	}
}

// jobCmd cancels or retries a job, outside Update for the same reason.
func jobCmd(f func()) tea.Cmd {
	return func() tea.Msg {
		f()
		return nil
	}
}

// quitTimeoutMsg ends a quit that waits for jobs to stop, should they not.
type quitTimeoutMsg struct{}

const quitTimeout = 5 * time.Second
