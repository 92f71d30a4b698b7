package pull

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/audit"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// A flight is one archive on its way from the upstream into CACHE. The
// verified transfer writes the upstream's bytes into CACHE's staging file,
// and each client that asked for the archive reads that very file as it
// grows (the flight is the transfer's sync.Tap: each byte is written
// once), at its own pace, so a slow or departed client neither slows the
// fetch nor stops it. The flight holds the staging file open for reading
// until its last client is done, so a staging file that is discarded (a
// zip that failed its check, a retry's) stays readable to them and
// nothing of it outlives the process. The clients' ends: the bytes, then
// EOF once the upstream ended, or the fetch's error, which cuts their
// responses; the h1: (backends.H1Reader) once the transfer has verified
// the zip, before it commits it.
type flight struct {
	key backends.PackageKey

	// ready is closed once the upstream's stream is open (or the fetch
	// failed first): hashes then says whether that stream hashes what it
	// sends (backends.HashingReader), so the readers need not.
	ready     chan struct{}
	readyOnce gosync.Once
	hashes    bool

	mu    gosync.Mutex
	wake  chan struct{} // closed and replaced whenever the state changes
	spool *os.File      // the staging file the clients read (nil until staged)
	n     int64         // bytes the clients may read from spool
	// staging is the running attempt's staging file, opened for reading,
	// and w the bytes that attempt wrote into it: a retry's become the
	// spool once they are past n, having matched the spool's up to there.
	staging  *os.File
	w        int64
	files    []*os.File   // every staging file opened, closed with the last reference
	end      int64        // where the upstream's stream ended; -1 until it did
	complete bool         // the clients have every byte: n == end
	zh       hashing.Hash // what the upstream's stream says it hashed, once it ended
	err      error        // the fetch failed (before the zip was verified)
	refs     int          // readers, and the fetch itself
	verified bool         // the transfer verified the zip; h1 is its h1:

	// checked is closed once the transfer has verified the zip, finished
	// once the fetch has ended; h1 is then the h1: it computed, if any.
	checked  chan struct{}
	finished chan struct{}
	h1       hashing.Hash
}

var _ sync.Tap = (*flight)(nil)

// opened records whether the upstream's stream hashes what it sends, the
// first time it is opened (or fails).
func (f *flight) opened(hashes bool) {
	f.readyOnce.Do(func() {
		f.hashes = hashes
		close(f.ready)
	})
}

func newFlight(key backends.PackageKey) *flight {
	return &flight{key: key, wake: make(chan struct{}), ready: make(chan struct{}), end: -1,
		checked: make(chan struct{}), finished: make(chan struct{}), refs: 1}
}

// changed wakes the readers; the caller holds f.mu.
func (f *flight) changed() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// Staged implements sync.Tap: it opens the attempt's staging file for the
// clients to read.
func (f *flight) Staged(st backends.Staged) error {
	file, err := regular.Open(st.Path())
	if err != nil {
		return fmt.Errorf("opening the staging file for the clients: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files = append(f.files, file)
	f.staging, f.w = file, 0
	if f.spool == nil {
		f.spool = file
	}
	return nil
}

// Wrote implements sync.Tap: b is in the staging file, after the bytes
// written before it. A retry's bytes must match, byte for byte, what the
// clients may have been sent already.
func (f *flight) Wrote(b []byte) error {
	f.mu.Lock()
	off, have, staging, spool := f.w, f.n, f.staging, f.spool
	f.mu.Unlock()
	if staging != spool && off < have {
		k := min(int64(len(b)), have-off)
		old := make([]byte, k)
		if _, err := spool.ReadAt(old, off); err != nil {
			return fmt.Errorf("reading the spool: %w", err)
		}
		if !bytes.Equal(old, b[:k]) {
			return backends.Permanent(errors.New("the upstream sent other bytes on a retry than before, which clients have received already"))
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.w = off + int64(len(b))
	if f.w <= f.n {
		return nil
	}
	if f.end >= 0 && f.w > f.end {
		return backends.Permanent(fmt.Errorf("the upstream sent more than the %d bytes it sent before", f.end))
	}
	f.spool, f.n = staging, f.w
	f.complete = f.n == f.end
	f.changed()
	return nil
}

// ended records that the upstream's stream ended after n bytes, and the
// zh: it says it hashed ("" where it does not hash). Its last bytes reach
// the staging file after this.
func (f *flight) ended(n int64, zh hashing.Hash) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.end >= 0 && n != f.end || n < f.n {
		return backends.Permanent(fmt.Errorf("the upstream sent %d bytes on a retry, %d before", n, max(f.end, f.n)))
	}
	f.end, f.zh = n, zh
	if f.n == n && !f.complete {
		f.complete = true
		f.changed()
	}
	return nil
}

// Verified implements sync.Tap: the zip passed every check, and the
// clients may have its h1: (and their last bytes) without waiting for
// the commit; what befalls the commit no longer cuts their streams.
func (f *flight) Verified(sums hashing.Sums) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.verified {
		return // a retry after a failed commit
	}
	f.verified, f.h1 = true, sums.H1
	close(f.checked)
}

// fail ends the readers' streams with err (the first failure stands),
// unless the zip was verified: they then have it whole.
func (f *flight) fail(err error) {
	f.opened(false)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil && !f.verified {
		f.err = err
	}
	f.changed()
}

// finish records that the fetch ended, landing a zip whose h1: is h1 ("":
// none, or not computed).
func (f *flight) finish(h1 hashing.Hash) {
	f.mu.Lock()
	if h1 != "" {
		f.h1 = h1
	}
	f.mu.Unlock()
	close(f.finished)
}

// ref takes a reference for a reader. A flight holds its fetch's own until
// it has left the mirror's map, so one found there is never closed.
func (f *flight) ref() {
	f.mu.Lock()
	f.refs++
	f.mu.Unlock()
}

// release drops one reference; the last closes the staging files.
func (f *flight) release() {
	f.mu.Lock()
	f.refs--
	var files []*os.File
	if f.refs == 0 {
		files, f.files = f.files, nil
	}
	f.mu.Unlock()
	for _, file := range files {
		_ = file.Close() // opened for reading only
	}
}

// reader is a client's stream of the archive; the caller took a reference
// for it.
func (f *flight) reader(ctx context.Context) io.ReadCloser {
	return &flightReader{f: f, ctx: ctx}
}

// flightReader is a client's stream of a flight's spool. It is a
// backends.HashingReader: its zh: is the one the upstream's stream
// computed of the very bytes the spool holds (an origin registry's, which
// authenticates them), or, from an upstream that does not hash, its own of
// the bytes it read; the server need not hash them again.
type flightReader struct {
	f       *flight
	ctx     context.Context
	off     int64
	started bool
	h       *hashing.ZipHasher // nil where the upstream hashes
	eof     bool
	once    gosync.Once
}

var (
	_ backends.HashingReader = (*flightReader)(nil)
	_ backends.H1Reader      = (*flightReader)(nil)
)

func (r *flightReader) Read(p []byte) (int, error) {
	if !r.started {
		select {
		case <-r.f.ready:
		case <-r.ctx.Done():
			return 0, r.ctx.Err()
		}
		r.started = true
		if !r.f.hashes {
			r.h = hashing.NewZipHasher()
		}
	}
	for {
		r.f.mu.Lock()
		n, complete, err, wake, spool := r.f.n, r.f.complete, r.f.err, r.f.wake, r.f.spool
		r.f.mu.Unlock()
		switch {
		case err != nil:
			return 0, err
		case r.off < n:
			k, err := spool.ReadAt(p[:min(int64(len(p)), n-r.off)], r.off)
			r.off += int64(k)
			if r.h != nil {
				r.h.Write(p[:k])
			}
			if err == io.EOF {
				err = nil
			}
			return k, err
		case complete:
			r.eof = true
			return 0, io.EOF
		}
		select {
		case <-wake:
		case <-r.ctx.Done():
			return 0, r.ctx.Err()
		}
	}
}

// ZipHash implements backends.HashingReader, once the stream has ended.
func (r *flightReader) ZipHash() (hashing.Hash, bool) {
	if !r.eof {
		return "", false
	}
	if r.h != nil {
		return r.h.Sum(), true
	}
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	return r.f.zh, r.f.zh != ""
}

// ZipH1 implements backends.H1Reader: once the transfer has verified the
// zip, the h1: it computed; or, once the fetch has ended without, why.
func (r *flightReader) ZipH1() (hashing.Hash, error) {
	select {
	case <-r.f.checked:
	case <-r.f.finished:
	case <-r.ctx.Done():
		return "", r.ctx.Err()
	}
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	return r.f.h1, r.f.err
}

func (r *flightReader) Close() error {
	r.once.Do(r.f.release)
	return nil
}

// teeSource is the upstream as the transfer reads it: each stream it opens
// tells the flight whether it hashes, and where it ends.
type teeSource struct {
	backends.Reader
	f *flight
}

func (s teeSource) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	rc, err := s.Reader.Open(ctx, a)
	if err != nil {
		return nil, err
	}
	if _, ok := rc.(backends.HashingReader); ok {
		s.f.opened(true)
		return &hashingTee{tee{rc: rc, f: s.f}}, nil
	}
	s.f.opened(false)
	return &tee{rc: rc, f: s.f}, nil
}

// hashingTee is a tee of a stream that hashes itself (backends.HashingReader).
type hashingTee struct{ tee }

var _ backends.HashingReader = (*hashingTee)(nil)

type tee struct {
	rc  io.ReadCloser
	f   *flight
	off int64
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.off += int64(n)
	if err == io.EOF {
		var zh hashing.Hash
		if hr, ok := t.rc.(backends.HashingReader); ok {
			zh, _ = hr.ZipHash()
		}
		if eerr := t.f.ended(t.off, zh); eerr != nil {
			return n, eerr
		}
	}
	return n, err
}

func (t *tee) Close() error { return t.rc.Close() }

// ZipHash passes on the zh: the upstream's stream computed (an origin
// registry's, which hashes what it sends to authenticate it): the
// transfer then need not hash the same bytes again.
func (t *hashingTee) ZipHash() (hashing.Hash, bool) {
	return t.rc.(backends.HashingReader).ZipHash()
}

// StreamSize passes the upstream stream's size on (an HTTP
// Content-Length), for the transfer's checks.
func (t *tee) StreamSize() int64 {
	if s, ok := t.rc.(backends.SizedReader); ok {
		return s.StreamSize()
	}
	return -1
}

// fetchOrJoin returns a stream of pkg from its flight, starting one when
// none is under way.
func (m *Mirror) fetchOrJoin(ctx context.Context, pkg backends.Package) (io.ReadCloser, error) {
	rels, err := m.offered(ctx, pkg.Provider, pkg.Version)
	if err != nil {
		return nil, err
	}
	i := -1
	for j, a := range rels {
		if a.Platform == pkg.Platform {
			i = j
		}
	}
	if i < 0 {
		return nil, fmt.Errorf("%s: %s: not offered upstream: %w", m, pkg, backends.ErrNotFound)
	}
	rel, err := m.release(ctx, pkg.Provider, pkg.Version)
	if err != nil {
		return nil, err
	}
	key := pkg.Key()
	m.mu.Lock()
	if f := m.flights[key]; f != nil {
		f.ref()
		m.mu.Unlock()
		m.opts.Metrics.miss()
		return f.reader(ctx), nil
	}
	if m.landed[key] {
		m.mu.Unlock()
		if rc, ok := m.openCached(ctx, pkg); ok {
			return rc, nil
		}
		m.mu.Lock()
	}
	f := newFlight(key)
	f.refs++ // the caller's reader; no one else knows f yet
	m.flights[key] = f
	m.wg.Add(1)
	m.mu.Unlock()
	m.opts.Metrics.miss()
	go m.fetch(f, rel, rels[i])
	return f.reader(ctx), nil
}

// fetch lands one archive in CACHE through the engine's verified transfer,
// with the version's provenance, as a sync does, and ends its flight.
func (m *Mirror) fetch(f *flight, rel *release, a backends.Archive) {
	defer m.wg.Done()
	m.opts.Metrics.fetchStarted()
	attempts := m.opts.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	res := engine.Do(m.ctx, engine.Options{Attempts: attempts, Hashing: m.hashingFor(a)},
		sync.Transfer{Src: teeSource{Reader: rel.r, f: f}, Dst: m.opts.Cache, Archive: a, Provenance: rel.signed, Tap: f},
		func(e engine.JobRetrying) { m.logf("retrying %s from %s: %v", a.Package, m.opts.UpstreamName, e.Err) })
	if iw, ok := res.Finished.(engine.IndexWritten); ok && iw.Err != nil {
		m.logf("error: %s: writing the cache's index: %v", a.Package, iw.Err)
	}
	done, failed := res.Done, res.Err
	landed := done != nil && failed == nil
	if landed {
		m.landedFile(m.ctx, a.Package, done.Sums.ZH)
	}
	m.record(a, rel, done, failed)
	// Counted before the flight ends: /healthz, which reads the flights
	// first, never says "fetching 0" before it counts the fetch.
	m.health.fetched(landed)
	m.mu.Lock()
	delete(m.flights, f.key)
	if landed {
		m.landed[f.key] = true
	}
	m.mu.Unlock()
	if !landed {
		if failed == nil {
			failed = fmt.Errorf("%s: the fetch ended without landing", a.Package)
		}
		m.refuse(f.key, failed)
		f.fail(m.upstreamErr(a.Provider, failed))
	}
	var h1 hashing.Hash
	if landed {
		h1 = done.Sums.H1
	}
	f.finish(h1)
	f.release()
}

// auditRefusal records, in the audit log, a zip a client asked for that the
// policy refuses.
func (m *Mirror) auditRefusal(pkg backends.Package, why string) {
	if m.opts.Audit != nil {
		m.opts.Audit.Record(audit.Entry{Event: audit.Refused, Source: m.opts.UpstreamName, Destination: m.opts.Cache.String(), Detail: why}, pkg)
	}
}

// record counts, logs and audits how a fetch ended.
func (m *Mirror) record(a backends.Archive, rel *release, done *engine.JobDone, failed error) {
	m.opts.Metrics.fetchEnded(done, failed)
	entry := audit.Entry{Source: rel.r.String(), Destination: m.opts.Cache.String()}
	if rel.signed != nil {
		entry.Signer = &rel.signed.Signer
	}
	switch {
	case failed == nil && done != nil:
		m.logf("landed %s from %s in %s (%d bytes, %s)", a.Package, m.opts.UpstreamName, m.opts.Cache, done.Bytes, done.Elapsed.Round(1e6))
		entry.Event, entry.Hashes, entry.Size = audit.Landed, done.Sums.List(), done.Bytes
	case done != nil:
		m.logf("error: %s landed in %s, but its index does not list it: %v", a.Package, m.opts.Cache, failed)
		entry.Event, entry.Detail = audit.Unlisted, failed.Error()
	default:
		m.logf("error: %s from %s: not landed: %v", a.Package, m.opts.UpstreamName, failed)
		entry.Event, entry.Detail, entry.Hashes = audit.Refused, failed.Error(), a.Hashes()
	}
	if m.opts.Audit != nil {
		m.opts.Audit.Record(entry, a.Package)
	}
}
