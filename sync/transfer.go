package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Transfer is one provider package to move from Src to Dst, as an engine
// Task. The transfers of one provider into one destination form a batch:
// the destination's index documents are written once the last has ended.
type Transfer struct {
	Src     backends.Reader
	Dst     backends.Writer
	Archive backends.Archive // as the source lists it, with its evidence
	Force   bool             // replace a different archive in the destination
	// Provenance, when set, is the source's checked provenance of the
	// archive's version (Archive then carries its evidence): the batch
	// writes it into the destination once the version has landed.
	Provenance *Signed
	// Tap, when set, follows the bytes into the staging file (see Tap).
	Tap Tap
	// batch is the transfer's batch, which collects the provenance of
	// the versions that landed for its Finish; the engine gives it (Join).
	batch *providerBatch
	// refused: the destination cannot hold this provider beside the others
	// enqueued with it (a usage error, set by admit).
	refused error
	// unauthentic: the source's provenance of the version does not check,
	// or the trust policy refuses it (set by AuthenticateTransfers).
	unauthentic error
}

var (
	_ engine.Batched  = Transfer{}
	_ engine.Admitter = Transfer{}
)

// Info implements Task.
func (t Transfer) Info() engine.JobInfo {
	info := engine.JobInfo{Package: t.Archive.Package, Src: t.Src.String(), Dst: t.Dst.String(), Size: t.Archive.Size}
	if t.Provenance != nil {
		info.Signer = &t.Provenance.Signer
	}
	return info
}

// transferBatch is the batch of a transfer: its destination and provider.
type transferBatch struct {
	dst      backends.Writer
	provider backends.Provider
}

// Batch implements Batched.
func (t Transfer) Batch() any { return transferBatch{t.Dst, t.Archive.Provider} }

// NewBatch implements Batched.
func (t Transfer) NewBatch() engine.Batch {
	return &providerBatch{dst: t.Dst, provider: t.Archive.Provider}
}

// Join implements Batched.
func (t Transfer) Join(b engine.Batch) engine.Task {
	t.batch = b.(*providerBatch)
	return t
}

// providerBatch is the transfers of one provider into one destination.
type providerBatch struct {
	dst      backends.Writer
	provider backends.Provider
	// carry collects the provenance of the versions that landed, whichever
	// of the batch's transfers landed them and whichever call queued them.
	carry carrier
}

// Finish writes the provider's index documents in the destination, then
// the provenance of the versions that landed (where the destination keeps
// provenance): it describes what the documents list. The landed packages
// the documents do not list (a backends.UnlistedError) have not landed
// after all, as far as clients can tell.
func (b *providerBatch) Finish(ctx context.Context, landed []engine.JobInfo) (engine.Event, map[engine.JobID]error) {
	err := b.dst.Flush(ctx, b.provider)
	carried := b.carry.take()
	if err != nil {
		err = &backends.OpError{Op: "write index", Place: b.dst.String(), Side: "destination", Err: err}
	} else {
		err = writeProvenance(ctx, b.dst, b.provider, carried)
	}
	ev := engine.IndexWritten{Dst: b.dst.String(), Provider: b.provider, Err: err}
	if err == nil {
		if cc, ok := b.dst.(backends.ClientConfigurer); ok {
			block, notes := cc.ClientConfig([]backends.Provider{b.provider})
			ev.Client = &engine.ClientConfig{Block: block, Notes: notes}
		}
		return ev, nil
	}
	unlisted := backends.Unlisted(err)
	failed := map[engine.JobID]error{}
	for _, info := range landed {
		if cause, ok := unlisted[info.Package.Key()]; ok {
			pkg := info.Package
			failed[info.ID] = &backends.OpError{Op: "write index", Place: info.Dst, Side: "destination", Pkg: &pkg, Err: cause}
		}
	}
	return ev, failed
}

func (t Transfer) opErr(op, side, place string, err error) error {
	return &backends.OpError{Op: op, Side: side, Place: place, Pkg: &t.Archive.Package, Err: err}
}

// Attempt streams the archive into a staging area of the destination,
// computing zh: on the way, then h1:, checks every source of truth, and only
// then commits.
func (t Transfer) Attempt(ctx context.Context, env engine.Env) (engine.JobDone, error) {
	a, src, dst := t.Archive, t.Src.String(), t.Dst.String()
	if t.refused != nil {
		return engine.JobDone{}, t.opErr("stage", "destination", dst, t.refused)
	}
	if t.unauthentic != nil {
		return engine.JobDone{}, t.opErr("authenticate", "source", src, backends.Permanent(t.unauthentic))
	}
	start := time.Now()
	unpacked, limit := maxArchive(env.Hashing)
	if limit >= 0 && a.Size > limit {
		return engine.JobDone{}, t.opErr("open", "source", src, fmt.Errorf("the source states %d bytes, more than a zip that unpacks within the limit (%d bytes) can be; refusing to download it: %w", a.Size, unpacked, hashing.ErrTooLarge))
	}
	rc, err := t.Src.Open(ctx, a)
	if err != nil {
		return engine.JobDone{}, t.opErr("open", "source", src, err)
	}
	defer func() { _ = rc.Close() }() // read only
	st, sink, err := t.stage(ctx)
	if err != nil {
		return engine.JobDone{}, t.opErr("stage", "destination", dst, err)
	}
	defer func() { _ = st.Abort() }() // a no-op after Commit; else the error that matters is returned
	if zh := statedZH(st, a, env.Hashing); sink == io.Discard && zh != "" {
		if err := t.checkExecutable(st); err != nil {
			return engine.JobDone{}, err
		}
		return t.commitStated(ctx, env, st, zh, start)
	}
	in := io.Reader(&countingReader{ctx: ctx, r: rc, progress: env.Progress, limit: limit, unpacked: unpacked})
	if sink == io.Discard {
		// The destination uploads the source's own file: reading it is
		// hashing alone, CPU-bound, so it takes a hashing slot. The first
		// archives are then hashed one per core, and their uploads start
		// while the next are hashed, rather than all waiting for all.
		release, err := env.HashSlot(ctx)
		if err != nil {
			return engine.JobDone{}, err
		}
		sr := &slotReader{r: in, release: release}
		defer sr.done()
		in = sr
	}
	sums, n, err := t.receive(ctx, env, rc, st, sink, in)
	if err != nil {
		return engine.JobDone{}, err
	}
	res := hashing.Verify(sums, a.Evidence...)
	for _, c := range res.Checks {
		env.Check(c)
	}
	if err := res.Err(); err != nil {
		return engine.JobDone{}, t.opErr("verify", "source", src, err)
	}
	if err := t.checkExecutable(st); err != nil {
		return engine.JobDone{}, err
	}
	if err := ctx.Err(); err != nil {
		return engine.JobDone{}, err
	}
	if t.Tap != nil {
		t.Tap.Verified(sums)
	}
	if err := st.Commit(ctx, sums, t.Force); err != nil {
		return engine.JobDone{}, t.opErr("commit", "destination", dst, err)
	}
	t.batch.carryAdd(a.Version, t.Provenance)
	return engine.JobDone{Sums: sums, Result: res, Bytes: n, Elapsed: time.Since(start), Verified: res.Verified()}, nil
}

// checkExecutable holds a signed archive (its version's provenance
// checked) to holding its own provider's executable, as push holds the
// zips it is given: a signed SHA256SUMS names a file, and the file must be
// the provider it is mirrored as. Only the zip's central directory is
// read, from the staged file.
func (t Transfer) checkExecutable(st backends.Staged) error {
	if t.Provenance == nil || t.Archive.Layout == backends.Unpacked {
		return nil
	}
	if err := hashing.CheckExecutable(st.Path(), t.Archive.Provider.Type); err != nil {
		return t.opErr("verify", "source", t.Src.String(), backends.Permanent(fmt.Errorf("not mirrored: %s: %w", t.Archive.Package, err)))
	}
	return nil
}

// statedZH returns the zh: the archive's evidence states, where the
// destination checks the bytes that land against the zh: it is given
// (backends.DigestChecker: a registry computes every blob's digest and
// refuses a mismatch) and nothing needs h1:: the source's file then need
// not be read before it is uploaded. It returns "" where a zh: must be
// computed: no source vouching for one, sources stating different ones, a
// malformed one, or one that other evidence (a lock file) contradicts,
// which the read then reports with the file's own hash.
func statedZH(st backends.Staged, a backends.Archive, o hashing.Options) hashing.Hash {
	if dc, ok := st.(backends.DigestChecker); !ok || !dc.ChecksDigest() || a.Size < 0 {
		return ""
	}
	var zh hashing.Hash
	for _, ev := range a.Evidence {
		if ev.AnyOf || !ev.Source.Kind.Vouches() {
			continue
		}
		for _, h := range ev.Hashes {
			if h.Scheme() != hashing.SchemeZip {
				continue
			}
			if _, err := hashing.ParseHash(string(h)); err != nil || zh != "" && h != zh {
				return ""
			}
			zh = h
		}
	}
	if zh == "" || o.WantH1(zh, a.Evidence...) || !hashing.Verify(hashing.Sums{ZH: zh}, a.Evidence...).OK() {
		return ""
	}
	return zh
}

// commitStated commits the archive under the zh: its evidence states,
// without reading the source's file first (statedZH): the destination
// uploads it under that digest, and fails the commit with an integrity
// error naming both hashes when the file's bytes are not the digest's.
func (t Transfer) commitStated(ctx context.Context, env engine.Env, st backends.Staged, zh hashing.Hash, start time.Time) (engine.JobDone, error) {
	sums := hashing.Sums{ZH: zh}
	res := hashing.Verify(sums, t.Archive.Evidence...)
	stop := followSent(env, st)
	err := st.Commit(ctx, sums, t.Force)
	told := stop()
	if err != nil {
		return engine.JobDone{}, t.opErr("commit", "destination", t.Dst.String(), err)
	}
	env.Progress(t.Archive.Size - told) // a blob the registry had sends nothing
	for _, c := range res.Checks {
		env.Check(c)
	}
	t.batch.carryAdd(t.Archive.Version, t.Provenance)
	return engine.JobDone{Sums: res.Sums, Result: res, Bytes: t.Archive.Size, Elapsed: time.Since(start), Verified: res.Verified()}, nil
}

// followSent tells env's progress the bytes st's Commit sends, where st
// counts them (backends.SentCounter): nothing else reads the archive, so
// the upload is the job's progress. It reads the count every
// sentInterval until stop is called, which returns how many bytes were
// told.
func followSent(env engine.Env, st backends.Staged) (stop func() int64) {
	sc, ok := st.(backends.SentCounter)
	if !ok {
		return func() int64 { return 0 }
	}
	done := make(chan struct{})
	var told int64
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(sentInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				// A retried upload starts its count again: only growth
				// beyond what was told is new.
				if n := sc.Sent(); n > told {
					env.Progress(n - told)
					told = n
				}
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return told
	}
}

// sentInterval is how often followSent reads an upload's count: a little
// more often than the engine sends progress events (every 150 ms by
// default).
const sentInterval = 100 * time.Millisecond

// stage opens the destination's staging area and returns where the bytes
// go: a copy in the destination, or, where the destination can take the
// source's own file as it is (an OCI registry uploading a local zip), that
// file, which is then only read, to hash it.
func (t Transfer) stage(ctx context.Context) (backends.Staged, io.Writer, error) {
	if fst, ok := t.Dst.(backends.FileStager); ok {
		if lp, ok := t.Src.(backends.LocalPather); ok {
			st, err := fst.StageFile(ctx, t.Archive.Package, lp.LocalPath(t.Archive))
			return st, io.Discard, err
		}
	}
	st, err := t.Dst.Stage(ctx, t.Archive.Package)
	if err != nil || t.Tap == nil {
		return st, st, err
	}
	if err := t.Tap.Staged(st); err != nil {
		_ = st.Abort() // the tap's error is the one to report
		return nil, nil, err
	}
	return st, tapWriter{st: st, tap: t.Tap}, nil
}

// slotReader holds a hashing slot until its reader ends: the slot is
// released before h1: takes one of its own.
type slotReader struct {
	r       io.Reader
	release func()
}

func (s *slotReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		s.done()
	}
	return n, err
}

func (s *slotReader) done() {
	if s.release != nil {
		s.release()
		s.release = nil
	}
}

// receive copies the archive into the staging file and hashes it on the
// way: zh: (unless the source's stream already computes it to
// authenticate the archive) and, where some evidence needs it or the
// options ask for it, h1:, each entry inflated as it arrives. Only an h1:
// the stream could not follow, or one a lock file turns out to need once
// zh: is known, reads the staged file again.
func (t Transfer) receive(ctx context.Context, env engine.Env, rc io.Reader, st backends.Staged, sink io.Writer, in io.Reader) (hashing.Sums, int64, error) {
	a, src := t.Archive, t.Src.String()
	if sr, ok := rc.(backends.SizedReader); ok && a.Size < 0 {
		env.Expect(sr.StreamSize())
	}
	hr, sourceHashes := rc.(backends.HashingReader)
	wantH1 := env.Hashing.WantH1("", a.Evidence...)
	// An archive that arrives in one chunk is inflated from the staged
	// file afterwards (in the page cache): following it on another
	// goroutine would cost more than reading it again.
	follow := wantH1 && (a.Size < 0 || a.Size > followAbove)
	s := hashing.NewStream(!sourceHashes, follow, env.Hashing)
	defer s.Close()
	n, err := copyFull(sink, s, in, a.Size)
	if err != nil {
		if ctx.Err() != nil {
			return hashing.Sums{}, n, ctx.Err()
		}
		return hashing.Sums{}, n, t.opErr("transfer", "", src+" -> "+t.Dst.String(), err)
	}
	if a.Size >= 0 && n != a.Size {
		return hashing.Sums{}, n, t.opErr("transfer", "source", src, backends.Transient(fmt.Errorf("received %d bytes, but the source states the archive has %d", n, a.Size)))
	}
	sums := hashing.Sums{ZH: s.ZipHash()}
	if sourceHashes {
		var ok bool
		if sums.ZH, ok = hr.ZipHash(); !ok {
			if sums.ZH, err = hashing.ZipZH(st.Path()); err != nil {
				return hashing.Sums{}, n, t.opErr("hash", "destination", t.Dst.String(), err)
			}
		}
	}
	if !wantH1 && !env.Hashing.WantH1(sums.ZH, a.Evidence...) {
		return sums, n, nil
	}
	env.SetPhase(engine.PhaseHashing)
	if sums.H1, err = t.h1(ctx, env, s, st.Path()); err != nil {
		return hashing.Sums{}, n, err
	}
	return sums, n, nil
}

// followAbove is the size above which an archive's h1: is computed on the
// stream.
const followAbove = 256 << 10

// h1 finishes the h1: of the staged zip: from the stream when it followed
// the zip, else by inflating the file, one archive per core while the
// other workers keep downloading.
func (t Transfer) h1(ctx context.Context, env engine.Env, s *hashing.Stream, path string) (hashing.Hash, error) {
	if h, ok := s.FollowedH1(path); ok {
		return h, nil
	}
	release, err := env.HashSlot(ctx)
	if err != nil {
		return "", err
	}
	h1, err := hashing.ZipH1(path, env.Hashing)
	release()
	if err != nil {
		return "", t.opErr("hash", "source", t.Src.String(), unusableZip(t.Src, t.Archive, err))
	}
	return h1, nil
}

// copyFull copies in to the staging file and the hasher through one
// pooled buffer of at most 32 KiB (no larger than the archive): network
// reads come in TLS records of at most 16 KiB and are gathered into writes
// of two, and the buffer stays in the core's cache from the read through
// the hashing to the write. A buffer of 1 MiB cost three times the CPU
// (the kernel's copy into the page cache then reads it from memory), for
// no fewer bytes copied; a small archive from a local file is one read and
// one write.
func copyFull(st io.Writer, s *hashing.Stream, in io.Reader, size int64) (int64, error) {
	buf := copyBuffers.get(size)
	defer copyBuffers.put(buf)
	var n int64
	for {
		m, err := fill(in, *buf)
		if m > 0 {
			if _, werr := st.Write((*buf)[:m]); werr != nil {
				return n, werr
			}
			_, _ = s.Write((*buf)[:m]) // a Stream's Write never fails
			n += int64(m)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// fill reads into buf until it is full or the reader ends; unlike
// io.ReadFull it passes the reader's own errors through as they are (a
// stream cut short reports io.ErrUnexpectedEOF, which is not the end).
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// maxArchive returns the hashing cap on unpacked bytes and the most bytes
// an archive may have: a zip is larger than the contents it unpacks to only
// by its headers, so one beyond the cap (plus room for headers) could never
// be hashed, and a source that states or sends more is lying or endless.
// -1 means no cap.
func maxArchive(o hashing.Options) (unpacked, limit int64) {
	switch {
	case o.MaxUnpacked < 0:
		return -1, -1
	case o.MaxUnpacked == 0:
		unpacked = hashing.DefaultMaxUnpacked
	default:
		unpacked = o.MaxUnpacked
	}
	return unpacked, unpacked + 1<<20
}

type countingReader struct {
	ctx      context.Context
	r        io.Reader
	progress func(int64)
	read     int64
	limit    int64 // -1: none
	unpacked int64 // the cap limit derives from, for the message
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.progress(int64(n))
	c.read += int64(n)
	if c.limit >= 0 && c.read > c.limit {
		return n, fmt.Errorf("the source sent more than %d bytes, more than a zip that unpacks within the limit (%d bytes) can be; refusing the rest: %w", c.limit, c.unpacked, hashing.ErrTooLarge)
	}
	return n, err
}

// Admit implements Admitter: it asks each destination of the transfers
// among tasks whether it can hold their providers together, and marks the
// refused transfers so they fail before they stage anything.
func (Transfer) Admit(tasks []engine.Task) []engine.Task {
	byDst := map[backends.Writer][]backends.Provider{}
	var order []backends.Writer
	for _, t := range tasks {
		if tr, ok := t.(Transfer); ok {
			if _, seen := byDst[tr.Dst]; !seen {
				order = append(order, tr.Dst)
			}
			byDst[tr.Dst] = append(byDst[tr.Dst], tr.Archive.Provider)
		}
	}
	refused := map[backends.Writer]error{}
	for _, dst := range order {
		if err := backends.CheckProviders(dst, byDst[dst]); err != nil {
			refused[dst] = err
		}
	}
	if len(refused) == 0 {
		return tasks
	}
	out := make([]engine.Task, len(tasks))
	for i, t := range tasks {
		if tr, ok := t.(Transfer); ok && refused[tr.Dst] != nil {
			tr.refused = refused[tr.Dst]
			t = tr
		}
		out[i] = t
	}
	return out
}

// unusableZip is the error for an archive that arrived whole (the copy
// catches a transfer cut short) but is not a zip that can be hashed. It is
// permanent: reading the same bytes again meets the same fault, even where
// it reads like a dropped connection (a deflate stream that ends early
// reports io.ErrUnexpectedEOF). It names the source's own file where there
// is one, not the staging copy, which is gone by the time anyone reads the
// message.
func unusableZip(src backends.Reader, a backends.Archive, err error) error {
	var ze *hashing.ZipError
	if !errors.As(err, &ze) {
		// Not the zip's fault: the staging copy could not be read.
		return fmt.Errorf("the archive is not a usable zip: %w", err)
	}
	what := "the archive"
	if lp, ok := src.(backends.LocalPather); ok {
		what = lp.LocalPath(a)
	}
	return backends.Permanent(fmt.Errorf("%s is not a usable zip: %w", what, ze.Err))
}

// copyBuffers are the transfer buffers, in sizes from 4 KiB to 32 KiB: a
// transfer takes the smallest that holds its archive, so thousands of tiny
// archives do not cost 32 KiB each, and returns it for the next.
var copyBuffers bufferPools

type bufferPools [4]gosync.Pool // 4 KiB << i

func (bp *bufferPools) class(size int64) int {
	i := 0
	for i < len(bp)-1 && (size < 0 || size > 4<<10<<i) {
		i++
	}
	return i
}

func (bp *bufferPools) get(size int64) *[]byte {
	i := bp.class(size)
	if b, ok := bp[i].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 4<<10<<i)
	return &b
}

func (bp *bufferPools) put(b *[]byte) { bp[bp.class(int64(len(*b)))].Put(b) }
