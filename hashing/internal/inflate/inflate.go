// Package inflate is the DEFLATE decoder of hashing's streaming hasher
// (hashing.Stream): the riskiest code of the tree, kept apart from the hash
// functions, fuzzed against compress/flate (FuzzInflate).
package inflate

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	gosync "sync"
)

// Decode decodes the raw DEFLATE stream (RFC 1951) at the head of br into
// w and leaves br at the first byte after the stream, as an inflater reading
// an io.ByteReader does. It writes at most limit+1 bytes before it says
// ErrLimit (a negative limit is no cap), and returns how many it wrote.
//
// It is the follower's fast path: it keeps a 64-bit bit buffer filled eight
// bytes at a time, decodes each symbol with one table look-up whose entry
// carries the length or distance base and its extra bits, and copies matches
// a word at a time into a flat buffer that is hashed a chunk at a time. Its
// errors are never reported as they are: a stream it cannot decode is one
// the stream did not follow, and ZipH1 (klauspost's inflater, whose
// output and errors are the standard library's) decides what it is. What it
// decodes without error is byte for byte what compress/flate decodes, and it
// consumes exactly the bytes compress/flate consumes (FuzzInflate).
func Decode(br *bufio.Reader, w io.Writer, limit int64) (n int64, err error) {
	d := decoders.Get().(*decoder)
	defer func() {
		// A pooled decoder keeps its buffers, not the caller's reader,
		// writer or bytes.
		d.br, d.w, d.in = nil, nil, nil
		decoders.Put(d)
	}()
	defer func() {
		// A decoder fault on hostile input is a stream not followed,
		// never a crash: ZipH1 reads the file instead.
		if r := recover(); r != nil {
			n, err = d.written, errInflate
		}
	}()
	d.reset(br, w, limit)
	err = d.run()
	return d.written, err
}

var errInflate = errors.New("deflate stream not decoded")

// ErrLimit is Decode's error for a stream that unpacks to more than its
// limit.
var ErrLimit = errors.New("deflate stream unpacks to more than the limit")

const (
	windowSize = 32 << 10
	flushSize  = 256 << 10
	// outSlack lets the longest match (258 bytes) be copied a word at a
	// time past the flush mark without a bounds check failing.
	outSlack = 258 + 16

	litBits  = 10 // main table bits of the literal/length code
	distBits = 8  // of the distance code
	clBits   = 7  // the code length code is at most 7 bits: no subtables

	maxCodeLen = 15
	numLitLen  = 288
	numDist    = 32
)

// A table entry: the low 5 bits are how many bits the symbol takes, its
// code and its extra bits together (for a subtable link, litBits or
// distBits), bits 5-7 its kind, bits 8-11 its code's length (the
// subtable's index bits), bits 16-31 its value (the literal, the length or
// distance base, the subtable's offset). The values below hold the extra
// bits' count in bits 8-11 until build makes them entries.
const (
	kindLiteral = iota << 5
	kindLength
	kindEnd
	kindLink
	kindInvalid
	kindMask = 7 << 5
)

type decoder struct {
	br      *bufio.Reader
	w       io.Writer
	limit   int64
	written int64

	in   []byte // br's buffered bytes, from its read position
	pos  int    // next byte of in not yet in bits
	eof  bool   // br has no more bytes than in
	bits uint64 // bits from in, least significant first
	nb   uint   // how many of bits are valid

	out     []byte // the window's last 32 KiB, then what is not yet flushed
	op      int    // where the next output byte goes
	flushed int    // out[:flushed] was written to w (or is the kept window)

	lit  []uint32
	dist []uint32
	cl   [1 << clBits]uint32
	lens [numLitLen + numDist]uint8
}

var decoders = gosync.Pool{New: func() any {
	return &decoder{
		out:  make([]byte, windowSize+flushSize+outSlack),
		lit:  make([]uint32, 0, 1<<litBits+numLitLen<<(maxCodeLen-litBits)),
		dist: make([]uint32, 0, 1<<distBits+numDist<<(maxCodeLen-distBits)),
	}
}}

func (d *decoder) reset(br *bufio.Reader, w io.Writer, limit int64) {
	d.br, d.w, d.limit, d.written = br, w, limit, 0
	d.in, d.pos, d.eof, d.bits, d.nb = nil, 0, false, 0, 0
	d.op, d.flushed = 0, 0
}

// fill makes more of br's bytes available in d.in, keeping the whole bytes
// still in the bit buffer (they go back to br if the stream ends here).
// It reports false when br has nothing more.
func (d *decoder) fill() bool {
	if d.eof {
		return false
	}
	keep := int(d.nb / 8)
	if _, err := d.br.Discard(d.pos - keep); err != nil {
		panic(err) // cannot happen: those bytes were peeked
	}
	in, err := d.br.Peek(d.br.Size())
	if err != nil {
		d.eof = true
	}
	grew := len(in) > len(d.in)-d.pos+keep
	d.in, d.pos = in, keep
	return grew
}

// loadWord tops a bit buffer of nb < 64 bits up to 56-63 from the eight
// bytes at in[pos:], taking the whole bytes it used. The bits it loads
// above those are the bytes that follow, so the next load may overlap them.
func loadWord(bits uint64, nb uint, in []byte, pos int) (uint64, uint, int) {
	return bits | binary.LittleEndian.Uint64(in[pos:])<<nb, nb | 56, pos + int((63-nb)>>3)
}

// refill tops the bit buffer up to at least 56 bits where the input has
// them.
func (d *decoder) refill() {
	if d.pos+8 <= len(d.in) {
		d.bits, d.nb, d.pos = loadWord(d.bits, d.nb, d.in, d.pos)
		return
	}
	for d.nb <= 56 {
		if d.pos == len(d.in) && !d.fill() {
			return
		}
		if d.pos+8 <= len(d.in) {
			d.refill()
			return
		}
		d.bits |= uint64(d.in[d.pos]) << d.nb
		d.pos++
		d.nb += 8
	}
}

// need makes sure n bits are buffered, or fails: the stream is truncated.
func (d *decoder) need(n uint) error {
	if d.nb < n {
		d.refill()
		if d.nb < n {
			return io.ErrUnexpectedEOF
		}
	}
	return nil
}

func (d *decoder) take(n uint) uint32 {
	v := uint32(d.bits & (1<<n - 1))
	d.bits >>= n
	d.nb -= n
	return v
}

// finish hands the bytes read past the stream's end back to br.
func (d *decoder) finish() error {
	_, err := d.br.Discard(d.pos - int(d.nb/8))
	d.in = nil
	return err
}

func (d *decoder) run() error {
	for {
		if err := d.need(3); err != nil {
			return err
		}
		final := d.take(1)
		var err error
		switch d.take(2) {
		case 0:
			err = d.stored()
		case 1:
			err = d.huffman(fixedLit, fixedDist)
		case 2:
			if err = d.readTables(); err == nil {
				err = d.huffman(d.lit, d.dist)
			}
		default:
			err = errInflate
		}
		if err != nil {
			return err
		}
		if final == 1 {
			if err := d.flush(); err != nil {
				return err
			}
			return d.finish()
		}
	}
}

// flush writes what is not yet written and keeps the last 32 KiB at the
// front of out for the matches to come.
func (d *decoder) flush() error {
	if d.op == d.flushed {
		return nil
	}
	chunk := d.out[d.flushed:d.op]
	if d.limit >= 0 && d.written+int64(len(chunk)) > d.limit {
		chunk = chunk[:d.limit+1-d.written]
		m, _ := d.w.Write(chunk)
		d.written += int64(m)
		return ErrLimit
	}
	m, err := d.w.Write(chunk)
	d.written += int64(m)
	if err != nil {
		return err
	}
	if d.op > windowSize {
		copy(d.out, d.out[d.op-windowSize:d.op])
		d.op = windowSize
	}
	d.flushed = d.op
	return nil
}

func (d *decoder) stored() error {
	d.take(d.nb % 8) // to the byte boundary
	if err := d.need(32); err != nil {
		return err
	}
	n, nn := d.take(16), d.take(16)
	if n != ^nn&0xffff {
		return errInflate
	}
	for n > 0 {
		if d.op >= flushAt {
			if err := d.flush(); err != nil {
				return err
			}
		}
		room := uint32(flushAt - d.op)
		// Whole bytes still in the bit buffer come first.
		for d.nb >= 8 && n > 0 && room > 0 {
			d.out[d.op] = byte(d.take(8))
			d.op++
			n--
			room--
		}
		if n == 0 || room == 0 {
			continue
		}
		// The bit buffer is empty: what it held above its valid bits
		// were bytes now copied straight from the input.
		d.bits = 0
		if d.pos == len(d.in) && !d.fill() {
			return io.ErrUnexpectedEOF
		}
		c := copy(d.out[d.op:d.op+int(min(n, room))], d.in[d.pos:])
		d.op += c
		d.pos += c
		n -= uint32(c)
	}
	return nil
}

// huffman decodes one block's symbols until its end of block.
func (d *decoder) huffman(lit, dist []uint32) error {
	// The loop keeps the decoder's hot state in locals and puts it back
	// wherever it calls out.
	bits, nb, in, pos := d.bits, d.nb, d.in, d.pos
	out, op := d.out, d.op
	// The main tables as arrays: their look-ups need no bounds check.
	litMain, distMain := (*[1 << litBits]uint32)(lit), (*[1 << distBits]uint32)(dist)
	for {
		// 48 bits are enough for a length, its extra bits, a distance
		// and its extra bits (15+5+15+13).
		if nb < 48 && pos+8 <= len(in) {
			bits, nb, pos = loadWord(bits, nb, in, pos)
		}
		if op >= flushAt || nb < 48 { // a full buffer, or the input's last bytes
			if err := d.topUp(bits, nb, pos, op); err != nil {
				return err
			}
			bits, nb, in, pos, op = d.bits, d.nb, d.in, d.pos, d.op
		}
		e := litEntry(litMain, lit, bits)
		n := uint(e & 31)
		if n > nb {
			return io.ErrUnexpectedEOF
		}
		v := bits
		bits >>= n
		nb -= n
		switch e & kindMask {
		case kindLiteral:
			out[op] = byte(e >> 16)
			op++
			// Literals come in runs: a second one from the same bits
			// needs no refill (out has slack for it past flushAt).
			if e = litMain[bits&(1<<litBits-1)]; e&kindMask == kindLiteral && uint(e&31) <= nb {
				n = uint(e & 31)
				bits >>= n
				nb -= n
				out[op] = byte(e >> 16)
				op++
			}
			continue
		case kindLength:
		case kindEnd:
			d.bits, d.nb, d.pos, d.op = bits, nb, pos, op
			return nil
		default:
			return errInflate
		}
		// The extra bits follow the code: both were taken above.
		length := int(e>>16) + int(v&(1<<n-1)>>(e>>8&15))
		if e = distEntry(distMain, dist, bits); e&kindMask != kindLength {
			return errInflate
		}
		if n = uint(e & 31); n > nb {
			return io.ErrUnexpectedEOF
		}
		distance := int(e>>16) + int(bits&(1<<n-1)>>(e>>8&15))
		bits >>= n
		nb -= n
		if distance > op {
			return errInflate // before the start of the stream
		}
		copyMatch(out, op, op-distance, length)
		op += length
	}
}

const flushAt = windowSize + flushSize

// topUp is the decoding loop's rare path: it flushes a full buffer and
// refills the bit buffer from the reader where in has run short.
func (d *decoder) topUp(bits uint64, nb uint, pos, op int) error {
	d.bits, d.nb, d.pos, d.op = bits, nb, pos, op
	if op >= flushAt {
		if err := d.flush(); err != nil {
			return err
		}
	}
	if d.nb < 48 {
		d.refill()
	}
	return nil
}

// litEntry and distEntry look the next symbol up in a main table (an
// array, so without a bounds check) and, for a long code, in its subtable.
func litEntry(main *[1 << litBits]uint32, t []uint32, bits uint64) uint32 {
	e := main[bits&(1<<litBits-1)]
	if e&kindMask == kindLink {
		e = t[e>>16+uint32(bits>>litBits)&(1<<(e>>8&15)-1)]
	}
	return e
}

func distEntry(main *[1 << distBits]uint32, t []uint32, bits uint64) uint32 {
	e := main[bits&(1<<distBits-1)]
	if e&kindMask == kindLink {
		e = t[e>>16+uint32(bits>>distBits)&(1<<(e>>8&15)-1)]
	}
	return e
}

// copyMatch copies a match of length bytes from src to op. Each word is
// read from bytes already written where they are at least 8 apart, and may
// spill up to 7 bytes into outSlack.
func copyMatch(out []byte, op, src, length int) {
	if op-src >= 8 {
		for i := 0; i < length; i += 8 {
			binary.LittleEndian.PutUint64(out[op+i:], binary.LittleEndian.Uint64(out[src+i:]))
		}
		return
	}
	for i := range length {
		out[op+i] = out[src+i]
	}
}
