package sync

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
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
	// carry collects, for the batch's Finish, the provenance of the
	// versions that landed (withCarriers).
	carry *carrier
	// refused: the destination cannot hold this provider beside the others
	// enqueued with it (a usage error, set by admit).
	refused error
}

var _ Batched = Transfer{}

// Info implements Task.
func (t Transfer) Info() JobInfo {
	info := JobInfo{Package: t.Archive.Package, Src: t.Src.String(), Dst: t.Dst.String(), Size: t.Archive.Size}
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

// Finish writes the provider's index documents in the destination, then
// the provenance of the versions that landed (where the destination keeps
// provenance): it describes what the documents list.
func (t Transfer) Finish(ctx context.Context) Event {
	err := t.Dst.Flush(ctx, t.Archive.Provider)
	carried := t.carry.take()
	if err != nil {
		err = &backends.OpError{Op: "write index", Place: t.Dst.String(), Side: "destination", Err: err}
	} else {
		err = writeProvenance(ctx, t.Dst, t.Archive.Provider, carried)
	}
	return IndexWritten{Dst: t.Dst.String(), Provider: t.Archive.Provider, Err: err}
}

func (t Transfer) opErr(op, side, place string, err error) error {
	return &backends.OpError{Op: op, Side: side, Place: place, Pkg: &t.Archive.Package, Err: err}
}

// Attempt streams the archive into a staging area of the destination,
// computing zh: on the way, then h1:, checks every source of truth, and only
// then commits.
func (t Transfer) Attempt(ctx context.Context, env Env) (JobDone, error) {
	a, src, dst := t.Archive, t.Src.String(), t.Dst.String()
	if t.refused != nil {
		return JobDone{}, t.opErr("stage", "destination", dst, t.refused)
	}
	start := time.Now()
	unpacked, limit := maxArchive(env.Hashing)
	if limit >= 0 && a.Size > limit {
		return JobDone{}, t.opErr("open", "source", src, fmt.Errorf("the source states %d bytes, more than a zip that unpacks within the limit (%d bytes) can be; refusing to download it: %w", a.Size, unpacked, hashing.ErrTooLarge))
	}
	rc, err := t.Src.Open(ctx, a)
	if err != nil {
		return JobDone{}, t.opErr("open", "source", src, err)
	}
	defer rc.Close()
	st, err := t.Dst.Stage(ctx, a.Package)
	if err != nil {
		return JobDone{}, t.opErr("stage", "destination", dst, err)
	}
	defer st.Abort()
	sums, n, err := t.receive(ctx, env, rc, st, &countingReader{ctx: ctx, r: rc, progress: env.Progress, limit: limit, unpacked: unpacked})
	if err != nil {
		return JobDone{}, err
	}
	res := hashing.Verify(sums, a.Evidence...)
	for _, c := range res.Checks {
		env.Check(c)
	}
	if err := res.Err(); err != nil {
		return JobDone{}, t.opErr("verify", "source", src, err)
	}
	if err := ctx.Err(); err != nil {
		return JobDone{}, err
	}
	if err := st.Commit(ctx, sums, t.Force); err != nil {
		return JobDone{}, t.opErr("commit", "destination", dst, err)
	}
	t.carry.add(a.Version, t.Provenance)
	return JobDone{Sums: sums, Result: res, Bytes: n, Elapsed: time.Since(start), Verified: res.Verified()}, nil
}

// receive copies the archive into the staging file and hashes it: zh: on
// the way, unless the source's stream already computes it to authenticate
// the archive, then h1: from the staged zip.
func (t Transfer) receive(ctx context.Context, env Env, rc io.Reader, st backends.Staged, in io.Reader) (hashing.Sums, int64, error) {
	a, src := t.Archive, t.Src.String()
	// Network reads come in TLS records of at most 16 KiB: they are
	// gathered into large writes, or the staging file would cost a syscall
	// per record.
	bw := bufio.NewWriterSize(st, 1<<20)
	var w io.Writer = bw
	zh := hashing.NewZipHasher()
	hr, sourceHashes := rc.(backends.HashingReader)
	if !sourceHashes {
		w = io.MultiWriter(bw, zh)
	}
	n, err := io.CopyBuffer(w, in, make([]byte, 1<<20))
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		if ctx.Err() != nil {
			return hashing.Sums{}, n, ctx.Err()
		}
		return hashing.Sums{}, n, t.opErr("transfer", "", src+" -> "+t.Dst.String(), err)
	}
	if a.Size >= 0 && n != a.Size {
		return hashing.Sums{}, n, t.opErr("transfer", "source", src, backends.Transient(fmt.Errorf("received %d bytes, but the source states the archive has %d", n, a.Size)))
	}
	zipHash := zh.Sum()
	if sourceHashes {
		var ok bool
		if zipHash, ok = hr.ZipHash(); !ok {
			if zipHash, err = hashing.HashZipFile(st.Path()); err != nil {
				return hashing.Sums{}, n, t.opErr("hash", "destination", t.Dst.String(), err)
			}
		}
	}
	// Inflating for h1: is the CPU-bound part: one archive per core, while
	// the other workers keep downloading.
	release, err := env.HashSlot(ctx)
	if err != nil {
		return hashing.Sums{}, n, err
	}
	h1, err := hashing.HashZip(st.Path(), env.Hashing)
	release()
	if err != nil {
		return hashing.Sums{}, n, t.opErr("hash", "source", src, unusableZip(t.Src, a, err))
	}
	return hashing.Sums{H1: h1, ZH: zipHash}, n, nil
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

// admit asks each destination of the transfers among tasks whether it can
// hold their providers together, and marks the refused transfers so they
// fail before they stage anything.
func admit(tasks []Task) []Task {
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
	out := make([]Task, len(tasks))
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
