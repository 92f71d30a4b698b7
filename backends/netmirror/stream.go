package netmirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// A place other than a directory is served through its Reader. Each zip's
// document lists the hashes the place states for it (backends.Archive's
// evidence: a mirror document's h1: and zh:, an OCI layer's digest as zh:,
// a registry's signed SHA-256), or, where it states none, the sums of the
// zip read once from the place (cached by location and size). The zip is
// streamed from Open and checked on the way against exactly those hashes
// and the stated size: the last chunk read is held back until the check
// passes, so a zip that disagrees is never delivered whole. When nothing has
// been sent yet the client gets 502; otherwise the response is aborted
// (http.ErrAbortHandler: the connection or stream is reset), which the
// clients report as a failed download.

// chunk is how much of a zip is read, and held back, at a time.
const chunk = 64 << 10

// evidence returns the hashes a zip is served with and checked against:
// the known ones the place states, or the zip's computed sums.
func (h *Handler) evidence(ctx context.Context, a backends.Archive) ([]hashing.Evidence, error) {
	var ev []hashing.Evidence
	for _, e := range a.Evidence {
		var known []hashing.Hash
		for _, hh := range e.Hashes {
			if hh.Known() {
				known = append(known, hh)
			}
		}
		if len(known) > 0 {
			e.Hashes = known
			ev = append(ev, e)
		}
	}
	if len(ev) > 0 {
		return ev, nil
	}
	sums, err := h.computedSums(ctx, a)
	if err != nil {
		return nil, err
	}
	return []hashing.Evidence{{Source: hashing.Source{Kind: hashing.SourceArchive, Detail: a.Location}, Hashes: sums.List()}}, nil
}

// computedSums reads a zip whose place states no hashes and returns its
// sums, once per location and size; concurrent first requests share one
// read.
func (h *Handler) computedSums(ctx context.Context, a backends.Archive) (hashing.Sums, error) {
	key := computedKey(a)
	h.mu.Lock()
	s, ok := h.computed[key]
	h.mu.Unlock()
	if ok {
		return s, nil
	}
	v, err, _ := h.flight.Do("sums\x00"+key, func() (any, error) {
		rc, err := h.r.Open(context.WithoutCancel(ctx), a)
		if err != nil {
			return hashing.Sums{}, err
		}
		defer func() { _ = rc.Close() }() // read only
		return h.streamSums(io.Discard, rc, a.Size, true, "", nil)
	})
	if err != nil {
		return hashing.Sums{}, fmt.Errorf("%s: %s: %w", h.r, a.Package, err)
	}
	s = v.(hashing.Sums)
	h.mu.Lock()
	h.computed[key] = s
	h.mu.Unlock()
	return s, nil
}

// computedKey identifies a zip whose sums this server computed: where it is
// and its size, all a place that states no hashes tells of it.
func computedKey(a backends.Archive) string {
	return a.Location + "\x00" + strconv.FormatInt(a.Size, 10)
}

// serveStream streams a zip from the place, checked against ev on the way.
func (h *Handler) serveStream(ctx context.Context, w http.ResponseWriter, r *http.Request, a backends.Archive) {
	ev, err := h.evidence(ctx, a)
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	if a.Size >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(a.Size, 10))
	}
	if r.Method == http.MethodHead {
		return
	}
	rc, err := h.r.Open(ctx, a)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer func() { _ = rc.Close() }() // read only
	cw := &countingWriter{w: w}
	_, err = h.streamSums(cw, rc, a.Size, wants(ev, hashing.SchemeH1), stated(ev, hashing.SchemeZip), func(s hashing.Sums) error {
		return hashing.Verify(s, ev...).Err()
	})
	if err != nil && ev[0].Source.Kind == hashing.SourceArchive && errors.Is(err, hashing.ErrHashMismatch) {
		// The sums were this server's own reading of a zip that has
		// changed since (replaced with one of the same size): the next
		// document lists the new zip's.
		h.mu.Lock()
		delete(h.computed, computedKey(a))
		h.mu.Unlock()
	}
	h.endStream(ctx, w, a, cw.n, err)
}

// endStream ends a zip's response after streamSums returned err, having
// written n bytes: a 502 when nothing was sent, otherwise the response is
// aborted so that the client refuses it.
func (h *Handler) endStream(ctx context.Context, w http.ResponseWriter, a backends.Archive, n int64, err error) {
	var gone clientGone
	if err == nil || errors.As(err, &gone) || ctx.Err() != nil {
		return
	}
	switch {
	case n == 0:
		h.logf("error: %s: %v: not served", a.Package, err)
		status, body := answer(err, fmt.Sprintf("502 %s: not served: it could not be read from the place this mirror serves, or it does not match what that place states (the mirror's log has the details)", a.Package))
		if status == http.StatusInternalServerError {
			status = http.StatusBadGateway
		}
		http.Error(w, body, status)
	default:
		h.logf("error: %s: %v: the response was cut short after %d bytes, so the client refuses it", a.Package, err, n)
		panic(http.ErrAbortHandler)
	}
}

// streamSums copies src to w and returns the sums of what it read: zh:
// always, h1: when withH1 (from a spool file, unless a zip of the same zh:
// as knownZH was streamed whole before). It holds back the last chunk read
// until src ends and check, given the sums, passes; when reading, the size
// (unless negative) or check fails, that error is returned and the held
// bytes are never written. Errors writing to w are clientGone. A src that
// hashes what it reads (backends.HashingReader: a registry's download,
// which authenticates it) gives its zh: at its end instead of this hashing
// the bytes again.
func (h *Handler) streamSums(w io.Writer, src io.Reader, size int64, withH1 bool, knownZH hashing.Hash, check func(hashing.Sums) error) (hashing.Sums, error) {
	hr, hashes := src.(backends.HashingReader)
	zh := hashing.NewZipHasher()
	var sink io.Writer = zh
	if hashes {
		sink = io.Discard
	}
	var spool *os.File
	if _, told := src.(backends.H1Reader); withH1 && !told && h.h1Of(knownZH) == "" {
		f, err := os.CreateTemp("", "tfmirror-serve-*.zip")
		if err != nil {
			return hashing.Sums{}, err
		}
		defer os.Remove(f.Name())
		defer func() { _ = f.Close() }() // a spool, removed after
		spool, sink = f, io.MultiWriter(sink, f)
	}
	// Two buffers take turns: one is read into while the other holds the
	// last chunk, so no byte is copied twice.
	buf, held := make([]byte, chunk), make([]byte, 0, chunk)
	var n int64
	for {
		k, err := src.Read(buf[:chunk])
		if k > 0 {
			if len(held) > 0 {
				if _, werr := w.Write(held); werr != nil {
					return hashing.Sums{}, clientGone{werr}
				}
			}
			held, buf = buf[:k], held[:cap(held)]
			if _, werr := sink.Write(held); werr != nil {
				return hashing.Sums{}, werr
			}
			if n += int64(k); size >= 0 && n > size {
				return hashing.Sums{}, fmt.Errorf("more bytes than the %d the place states", size)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return hashing.Sums{}, err
		}
	}
	if size >= 0 && n != size {
		return hashing.Sums{}, fmt.Errorf("%d bytes, not the %d the place states", n, size)
	}
	sums := hashing.Sums{ZH: zh.Sum()}
	if hashes {
		var ok bool
		if sums.ZH, ok = hr.ZipHash(); !ok {
			return hashing.Sums{}, errors.New("the place's stream ended without stating the hash of what it sent")
		}
	}
	if err := h.addH1(&sums, spool, withH1, src); err != nil {
		return sums, err
	}
	if check != nil {
		if err := check(sums); err != nil {
			return sums, err
		}
	}
	if sums.H1 != "" {
		h.mu.Lock()
		h.h1s[sums.ZH] = sums.H1
		h.mu.Unlock()
	}
	if _, err := w.Write(held); err != nil {
		return sums, clientGone{err}
	}
	return sums, nil
}

// addH1 sets sums.H1 where withH1: from the spool file where there is one,
// else from a zip of the same zh: streamed whole before, else from the
// stream itself (backends.H1Reader), which may say the zip is wrong.
func (h *Handler) addH1(sums *hashing.Sums, spool *os.File, withH1 bool, src io.Reader) error {
	if spool == nil {
		if withH1 {
			sums.H1 = h.h1Of(sums.ZH)
		}
		if hr, ok := src.(backends.H1Reader); ok && withH1 && sums.H1 == "" {
			h1, err := hr.ZipH1()
			sums.H1 = h1
			return err
		}
		return nil
	}
	if err := spool.Close(); err != nil {
		return err
	}
	h1, err := hashing.ZipH1(spool.Name(), h.opts)
	sums.H1 = h1
	return err
}

// h1Of returns the h1: of the zip whose zh: is zh, when one was streamed
// whole before (the same SHA-256, the same bytes), or "".
func (h *Handler) h1Of(zh hashing.Hash) hashing.Hash {
	if zh == "" {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.h1s[zh]
}

// wants reports whether ev states a hash of scheme s.
func wants(ev []hashing.Evidence, s hashing.Scheme) bool { return stated(ev, s) != "" }

// stated returns the first hash of scheme s that ev states, or "".
func stated(ev []hashing.Evidence, s hashing.Scheme) hashing.Hash {
	for _, e := range ev {
		for _, h := range e.Hashes {
			if h.Scheme() == s {
				return h
			}
		}
	}
	return ""
}

// clientGone is a failure to write the response: the client went away.
type clientGone struct{ err error }

func (c clientGone) Error() string { return "writing the response: " + c.err.Error() }
func (c clientGone) Unwrap() error { return c.err }

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
