package pull

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	gosync "sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/tfmirror/tfmirror/backends"
)

// Replicas on one CACHE (several serve processes on one bucket) coalesce a
// cold miss: before it fetches a zip, a process takes the zip's lease, a
// note in CACHE (backends.NoteKeeper: an object written only if it is
// still the one read, so two processes never both take it). The holder
// fetches, renews the lease while it does, and releases it saying whether
// the zip landed. Another process asking for the zip meanwhile waits for
// the release (its clients wait with it) and then serves the zip from
// CACHE; a lease not renewed for leaseTTL (its holder died) is taken over,
// and a release without a landing lets the next asker fetch. The lease
// times are wall-clock times, so replicas' clocks must agree within a few
// seconds (NTP).

// Lease timing: a holder renews every leaseTTL/3; a waiter reads the lease
// every leasePoll (±50%).
var (
	leaseTTL  = 15 * time.Second
	leasePoll = 150 * time.Millisecond
)

// lease is the note a zip's fetch holds in CACHE.
type lease struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
	// Released: the holder is done; Landed: and the zip is in CACHE.
	Released bool `json:"released,omitempty"`
	Landed   bool `json:"landed,omitempty"`
}

// fleet is a process's state of the leases it holds.
type fleet struct {
	once gosync.Once
	me   string // this process, as a lease names it
	mu   gosync.Mutex
	held map[backends.PackageKey]bool // leases kept by a keepLease
	// group makes one lease take, and one wait, per zip at a time.
	group singleflight.Group
}

var errLeaseHeld = errors.New("another process holds the lease")

// holder names this process in its leases.
func (f *fleet) holder() string {
	f.once.Do(func() {
		host, _ := os.Hostname()
		b := make([]byte, 6)
		rand.Read(b)
		f.me = fmt.Sprintf("%s pid %d %s", host, os.Getpid(), hex.EncodeToString(b))
		f.held = map[backends.PackageKey]bool{}
	})
	return f.me
}

// leaseName is the note of pkg's lease.
func leaseName(pkg backends.Package) string {
	return "leases/" + pkg.Provider.Hostname + "/" + pkg.Provider.Namespace + "/" + pkg.Provider.Type + "/" + pkg.Filename() + ".json"
}

// fleetFetch is fetchOrJoin across the processes sharing CACHE: the fetch
// is made by the process holding pkg's lease; the others wait for it and
// serve the zip from CACHE.
func (m *Mirror) fleetFetch(ctx context.Context, pkg backends.Package) (io.ReadCloser, error) {
	nk, ok := m.opts.Cache.(backends.NoteKeeper)
	if !ok {
		return m.fetchOrJoin(ctx, pkg)
	}
	for attempt := 0; ; attempt++ {
		m.mu.Lock()
		local := m.flights[pkg.Key()] != nil
		m.mu.Unlock()
		if local || attempt == 5 { // a fetch here to join, or the fleet keeps failing
			return m.fetchOrJoin(ctx, pkg)
		}
		v, err, _ := m.fleet.group.Do("lease\x00"+leaseName(pkg), func() (any, error) {
			return m.takeLease(ctx, nk, pkg)
		})
		if err != nil {
			m.logf("warning: %s: the fetch lease in %s (%v): fetching without it", pkg, m.opts.Cache, err)
			return m.fetchOrJoin(ctx, pkg)
		}
		if v.(bool) {
			rc, err := m.fetchOrJoin(ctx, pkg)
			m.keepLease(nk, pkg)
			return rc, err
		}
		v, err, _ = m.fleet.group.Do("await\x00"+leaseName(pkg), func() (any, error) {
			return m.awaitLease(ctx, nk, pkg)
		})
		if err != nil {
			return nil, err
		}
		if v.(bool) { // landed: listed (an OCI mirror opens a zip by its listed digest)
			if rc, ok := m.openCached(ctx, pkg); ok {
				return rc, nil
			}
			if rc, err := m.opts.Cache.Open(ctx, backends.Archive{Package: pkg, Layout: backends.Packed, Size: -1}); err == nil {
				m.opts.Metrics.hit(true)
				return rc, nil
			}
		}
	}
}

// readLease reads pkg's lease (zero when there is none) without writing.
func readLease(ctx context.Context, nk backends.NoteKeeper, pkg backends.Package) (lease, error) {
	var l lease
	errRead := errors.New("read only")
	err := nk.UpdateNote(ctx, leaseName(pkg), func(old []byte) ([]byte, error) {
		if len(old) > 0 {
			if err := json.Unmarshal(old, &l); err != nil {
				l = lease{} // not a lease: taken as none
			}
		}
		return nil, errRead
	})
	if errors.Is(err, errRead) {
		err = nil
	}
	return l, err
}

// takeLease takes pkg's lease: true when this process holds it now; false
// when another live process does.
func (m *Mirror) takeLease(ctx context.Context, nk backends.NoteKeeper, pkg backends.Package) (bool, error) {
	me := m.fleet.holder()
	err := nk.UpdateNote(ctx, leaseName(pkg), func(old []byte) ([]byte, error) {
		var l lease
		if len(old) > 0 && json.Unmarshal(old, &l) == nil && l.Holder != me && !l.Released && time.Now().Before(l.Expires) {
			return nil, errLeaseHeld
		}
		if l.Holder != "" && l.Holder != me && !l.Released {
			m.logf("%s: took over the fetch lease of %s, not renewed since %s", pkg, l.Holder, l.Expires.Add(-leaseTTL).Format(time.RFC3339))
		}
		return json.Marshal(lease{Holder: me, Expires: time.Now().Add(leaseTTL)})
	})
	if errors.Is(err, errLeaseHeld) {
		return false, nil
	}
	return err == nil, err
}

// awaitLease waits while another process holds pkg's lease: true when it
// released it with the zip landed, false when it released it without, or
// stopped renewing it (the caller takes it).
func (m *Mirror) awaitLease(ctx context.Context, nk backends.NoteKeeper, pkg backends.Package) (bool, error) {
	for {
		l, err := readLease(ctx, nk, pkg)
		switch {
		case err != nil:
			return false, err
		case l.Released || l.Holder == "":
			return l.Landed, nil
		case time.Now().After(l.Expires):
			return false, nil
		}
		if err := (backends.RetryPolicy{Base: leasePoll, Max: leasePoll, Jitter: 0.5}).Wait(ctx, 1); err != nil {
			return false, err
		}
	}
}

// keepLease renews pkg's lease while this process fetches it, then
// releases it, saying whether it landed; once per lease taken.
func (m *Mirror) keepLease(nk backends.NoteKeeper, pkg backends.Package) {
	f := &m.fleet
	me := f.holder()
	key := pkg.Key()
	f.mu.Lock()
	if f.held[key] {
		f.mu.Unlock()
		return
	}
	f.held[key] = true
	f.mu.Unlock()
	go func() {
		defer func() { f.mu.Lock(); delete(f.held, key); f.mu.Unlock() }()
		for {
			m.mu.Lock()
			fetching, landed := m.flights[key] != nil, m.landed[key]
			m.mu.Unlock()
			next := lease{Holder: me, Expires: time.Now().Add(leaseTTL)}
			if !fetching {
				next = lease{Holder: me, Released: true, Landed: landed}
			}
			ctx, cancel := context.WithTimeout(context.Background(), leaseTTL/3)
			err := nk.UpdateNote(ctx, leaseName(pkg), func(old []byte) ([]byte, error) {
				var l lease
				if json.Unmarshal(old, &l) != nil || l.Holder != me {
					return nil, errLeaseHeld // taken over: not this process's any more
				}
				return json.Marshal(next)
			})
			cancel()
			if !fetching || errors.Is(err, errLeaseHeld) {
				return
			}
			// Renewed (or a failed renewal, tried again): wait, or stop
			// waiting as soon as the fetch ends.
			m.awaitFlightEnd(key, leaseTTL/3)
		}
	}()
}

// awaitFlightEnd waits up to d, or until the fetch of key here ended.
func (m *Mirror) awaitFlightEnd(key backends.PackageKey, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		m.mu.Lock()
		gone := m.flights[key] == nil
		m.mu.Unlock()
		if gone {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
