package hashing

import (
	"archive/zip"
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	gosync "sync"

	"github.com/tfmirror/tfmirror/hashing/internal/inflate"
)

// Stream hashes a zip while its bytes are written to it, so a download is
// not read again once it has landed: zh: over the bytes, and, when asked,
// the h1: of the entries, each inflated as its local header and data arrive.
// What the local headers say is only a claim: H1 checks every entry against
// the zip's central directory (which the clients' dirhash.HashZip reads),
// and hashes the file itself wherever the stream cannot vouch for exactly
// what ZipH1 would read (data descriptors it cannot place, other
// compression methods, duplicate names, a prefix before the zip...), so its
// value and its errors are always ZipH1's.
type Stream struct {
	zh   hash.Hash // nil when the caller has zh: from elsewhere
	n    int64
	opts Options

	pipe   *chunkPipe // nil without h1: following
	done   chan struct{}
	follow *follower
	closed bool
}

// NewStream returns a Stream computing zh: when zh is set and following
// the zip's entries for h1: when h1 is set. The entries are inflated on
// another goroutine, a few hundred KiB behind the writes, so a download
// and its inflating overlap.
func NewStream(zh, h1 bool, opts Options) *Stream {
	s := &Stream{opts: opts}
	if zh {
		s.zh = sha256.New()
	}
	if h1 {
		s.pipe = newChunkPipe()
		s.done = make(chan struct{})
		s.follow = &follower{entries: map[int64]streamEntry{}, budget: opts.maxUnpacked()}
		go func() {
			defer close(s.done)
			s.follow.run(s.pipe)
		}()
	}
	return s
}

// Write hashes p. It never fails: a stream that is not a zip only ends
// the following (H1 then hashes the file).
func (s *Stream) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	if s.zh != nil {
		s.zh.Write(p)
	}
	if s.pipe != nil && !s.closed {
		s.pipe.write(p) // the follower reads to the end, whatever it finds
	}
	return len(p), nil
}

// Size is how many bytes were written.
func (s *Stream) Size() int64 { return s.n }

// ZipHash is the zh: of the bytes written; empty when the Stream was made
// without it.
func (s *Stream) ZipHash() Hash {
	if s.zh == nil {
		return ""
	}
	return ZipHashFromSHA256(s.zh.Sum(nil))
}

// Close ends the stream and waits for the follower; call it (or H1) on
// every path, or the follower's goroutine outlives the transfer.
func (s *Stream) Close() {
	if s.pipe == nil || s.closed {
		return
	}
	s.closed = true
	s.pipe.close()
	<-s.done
}

// H1 returns the h1: of the zip whose bytes were written, which path now
// holds: from the entries followed on the stream where the central
// directory agrees with every one, else by ZipH1(path).
func (s *Stream) H1(path string) (Hash, error) {
	if h, ok := s.FollowedH1(path); ok {
		return h, nil
	}
	return ZipH1(path, s.opts)
}

// FollowedH1 is H1 when the stream could vouch for every entry; ok is
// false when only ZipH1(path) can say (which reads the whole file).
func (s *Stream) FollowedH1(path string) (h Hash, ok bool) {
	s.Close()
	if s.follow == nil || s.follow.lost {
		return "", false
	}
	return s.follow.summary(path, s.opts)
}

// chunkPipe hands the written bytes to the follower in pooled chunks, a
// few in flight, so the writer does not wait for each to be inflated.
type chunkPipe struct {
	ch  chan *[]byte
	cur *[]byte
	off int
}

const chunkSize, chunksInFlight = 256 << 10, 4

func newChunkPipe() *chunkPipe { return &chunkPipe{ch: make(chan *[]byte, chunksInFlight)} }

func (c *chunkPipe) write(p []byte) {
	for len(p) > 0 {
		b := chunks.get()
		n := copy((*b)[:cap(*b)], p)
		*b = (*b)[:n]
		c.ch <- b
		p = p[n:]
	}
}

func (c *chunkPipe) close() { close(c.ch) }

func (c *chunkPipe) Read(p []byte) (int, error) {
	for c.cur == nil || c.off == len(*c.cur) {
		if c.cur != nil {
			chunks.put(c.cur)
			c.cur = nil
		}
		b, ok := <-c.ch
		if !ok {
			return 0, io.EOF
		}
		c.cur, c.off = b, 0
	}
	n := copy(p, (*c.cur)[c.off:])
	c.off += n
	return n, nil
}

// streamEntry is what the stream saw of one entry.
type streamEntry struct {
	method uint16
	flags  uint16
	csize  uint64
	usize  uint64
	crc    uint32 // computed over the inflated bytes
	sum    [sha256.Size]byte
}

// follower reads a zip's local headers and data as they stream, recording
// each entry by the offset of its data (zip.File.DataOffset's).
type follower struct {
	entries map[int64]streamEntry
	lost    bool  // the stream could not be followed to its central directory
	budget  int64 // unpacked bytes left; negative caps mean none
}

// counter counts the bytes read from the pipe, so the follower knows the
// offset of what bufio hands it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

const (
	localHeaderSig    = 0x04034b50
	dataDescriptorSig = 0x08074b50
	localHeaderLen    = 30
)

func (f *follower) run(pr io.Reader) {
	c := &counter{r: pr}
	br := readers.get(c)
	defer readers.put(br)
	pos := func() int64 { return c.n - int64(br.Buffered()) }
	for !f.lost {
		sig, err := br.Peek(4)
		if err != nil || binary.LittleEndian.Uint32(sig) != localHeaderSig {
			break // the central directory (or not a zip): the rest is not followed
		}
		if err := f.entry(br, pos); err != nil {
			f.lost = true
		}
	}
	// Drain: the writer must never block on a follower that stopped.
	_, _ = io.Copy(io.Discard, br) // only to keep the writer flowing
}

// entry reads one local header, its data and its data descriptor.
func (f *follower) entry(br *bufio.Reader, pos func() int64) error {
	var hdr [localHeaderLen]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return err
	}
	le := binary.LittleEndian
	e := streamEntry{flags: le.Uint16(hdr[6:]), method: le.Uint16(hdr[8:])}
	csize, usize := uint64(le.Uint32(hdr[18:])), uint64(le.Uint32(hdr[22:]))
	skip := int64(le.Uint16(hdr[26:])) + int64(le.Uint16(hdr[28:]))
	if _, err := br.Discard(int(skip)); err != nil {
		return err
	}
	dd := e.flags&0x8 != 0
	switch {
	case e.flags&0x1 != 0: // encrypted
		return errNotFollowed
	case !dd && (csize == 0xFFFFFFFF || usize == 0xFFFFFFFF): // zip64 sizes in the extra field
		return errNotFollowed
	case dd && e.method != zip.Deflate: // no way to find the end of the data
		return errNotFollowed
	case e.method != zip.Store && e.method != zip.Deflate:
		return errNotFollowed
	}
	start := pos()
	sum := sha256.New()
	crc := crc32.NewIEEE()
	w := io.MultiWriter(sum, crc)
	var n int64
	var err error
	if e.method == zip.Store {
		n, err = copyPooled(w, io.LimitReader(br, int64(csize)))
		if err == nil && n < int64(csize) {
			err = io.EOF // as io.CopyN says a short copy
		}
	} else {
		// inflate leaves br where the deflate stream ends, and stops
		// beyond the budget, so a zip bomb costs no more here than
		// ZipH1's own cap.
		if n, err = inflate.Decode(br, w, f.budget); errors.Is(err, inflate.ErrLimit) {
			err = ErrTooLarge
		}
	}
	if err != nil {
		return err
	}
	if f.budget >= 0 {
		if f.budget -= n; f.budget < 0 {
			return ErrTooLarge // ZipH1 says so, naming the entry
		}
	}
	e.csize, e.usize, e.crc = uint64(pos()-start), uint64(n), crc.Sum32()
	if !dd && (e.csize != csize || e.usize != usize) {
		return errNotFollowed
	}
	if dd {
		if err := e.readDescriptor(br); err != nil {
			return err
		}
	}
	copy(e.sum[:], sum.Sum(nil))
	f.entries[start] = e
	return nil
}

// readDescriptor reads a data descriptor after deflated data, with or
// without its signature, and requires it to state what the stream
// computed; a 64-bit one (or one that disagrees) is not followed.
func (e *streamEntry) readDescriptor(br *bufio.Reader) error {
	b, err := br.Peek(4)
	if err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(b) == dataDescriptorSig {
		_, _ = br.Discard(4) // peeked above: cannot fail
	}
	var d [12]byte
	if _, err := io.ReadFull(br, d[:]); err != nil {
		return err
	}
	le := binary.LittleEndian
	if le.Uint32(d[0:]) != e.crc || uint64(le.Uint32(d[4:])) != e.csize || uint64(le.Uint32(d[8:])) != e.usize {
		return errNotFollowed
	}
	return nil
}

var errNotFollowed = errors.New("zip entry not followed on the stream")

// summary composes the h1: from the followed entries if the central
// directory at path agrees with every one; ok is false otherwise.
func (f *follower) summary(path string, opts Options) (h Hash, ok bool) {
	z, err := OpenZip(path)
	if err != nil {
		return "", false
	}
	defer func() { _ = z.Close() }() // read only
	sums := make(map[string][sha256.Size]byte, len(z.File))
	names := make([]string, 0, len(z.File))
	var total uint64
	for _, zf := range z.File {
		if _, dup := sums[zf.Name]; dup || strings.Contains(zf.Name, "\n") {
			return "", false
		}
		total += zf.UncompressedSize64
		// zip.File.Open reads the local header first, for any entry.
		off, err := zf.DataOffset()
		if err != nil {
			return "", false
		}
		if strings.HasSuffix(zf.Name, "/") {
			// zip.File.Open reads a directory entry as empty, whatever
			// data follows it, unless it states a size.
			if zf.UncompressedSize64 != 0 {
				return "", false
			}
			sums[zf.Name] = sha256.Sum256(nil)
			names = append(names, zf.Name)
			continue
		}
		e, found := f.entries[off]
		dd := zf.Flags&0x8 != 0
		if !found || e.method != zf.Method || e.csize != zf.CompressedSize64 || e.usize != zf.UncompressedSize64 ||
			e.flags&0x8 != zf.Flags&0x8 || (dd || zf.CRC32 != 0) && e.crc != zf.CRC32 {
			return "", false
		}
		sums[zf.Name] = e.sum
		names = append(names, zf.Name)
	}
	if max := opts.maxUnpacked(); max >= 0 && total > uint64(max) {
		return "", false
	}
	return summarize(names, sums), true
}

// summarize is dirhash.Hash1's summary of files whose SHA-256 are known:
// "%x  %s\n" per file in sorted order, hashed again and base64-encoded.
// (dirhash.Hash1 reads each file itself; here the stream already has.)
func summarize(names []string, sums map[string][sha256.Size]byte) Hash {
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%x  %s\n", sums[name], name)
	}
	return Hash("h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil)))
}

// The follower's readers: a bufio.Reader holds its buffer, so a sync of
// thousands of archives reuses a few instead of allocating them per archive
// (inflate.Decode's decoders are pooled likewise). Pools hold no state a caller
// can see.
var readers readerPool

type readerPool struct{ p gosync.Pool }

func (rp *readerPool) get(r io.Reader) *bufio.Reader {
	if br, ok := rp.p.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, 64<<10)
}

func (rp *readerPool) put(br *bufio.Reader) {
	br.Reset(nil)
	rp.p.Put(br)
}

// copyBuffers are the buffers files are read through when hashed in place.
var copyBuffers = bufferPool{size: 256 << 10}

// entryBuffers are what a zip entry's bytes are hashed through: io.Copy
// would allocate 32 KiB per entry, which verify of 100,000 archives turns
// into gigabytes of garbage.
var entryBuffers = bufferPool{size: 32 << 10}

func copyPooled(w io.Writer, r io.Reader) (int64, error) {
	buf := entryBuffers.get()
	defer entryBuffers.put(buf)
	return io.CopyBuffer(w, r, *buf)
}

// chunks are the chunkPipe's.
var chunks = bufferPool{size: chunkSize}

type bufferPool struct {
	size int
	p    gosync.Pool
}

func (bp *bufferPool) get() *[]byte {
	if b, ok := bp.p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, bp.size)
	return &b
}

func (bp *bufferPool) put(b *[]byte) {
	*b = (*b)[:cap(*b)]
	bp.p.Put(b)
}
