package inflate

// The order of the code length code's lengths, and its repeat codes 16-18:
// the extra bits that count the repeats and the count they add to (RFC
// 1951, 3.2.7).
var (
	clOrder    = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
	repeatBits = [3]uint{2, 3, 7}
	repeatBase = [3]int{3, 3, 11}
)

func (d *decoder) readTables() error {
	if err := d.need(14); err != nil {
		return err
	}
	nlit := int(d.take(5)) + 257
	ndist := int(d.take(5)) + 1
	ncl := int(d.take(4)) + 4
	if nlit > 286 || ndist > 30 { // as compress/flate refuses them
		return errInflate
	}
	var cl [19]uint8
	for i := range ncl {
		if err := d.need(3); err != nil {
			return err
		}
		cl[clOrder[i]] = uint8(d.take(3))
	}
	clTable := d.cl[:0]
	var ok bool
	if clTable, ok = build(clTable, cl[:], nil, clBits); !ok {
		return errInflate
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if err := d.need(7); err != nil {
			// A short code near the end of the input: try with what is there.
			if d.nb == 0 {
				return err
			}
		}
		e := clTable[d.bits&(1<<clBits-1)]
		if e&kindMask == kindInvalid || uint(e&31) > d.nb {
			return errInflate
		}
		d.take(uint(e & 31))
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		r := sym - 16 // 16 repeats the previous length, 17 and 18 a zero
		if r == 0 && i == 0 {
			return errInflate
		}
		if err := d.need(repeatBits[r]); err != nil {
			return err
		}
		rep := repeatBase[r] + int(d.take(repeatBits[r]))
		var val uint8
		if r == 0 {
			val = lens[i-1]
		}
		if i+rep > len(lens) {
			return errInflate
		}
		for range rep {
			lens[i] = val
			i++
		}
	}
	if d.lit, ok = build(d.lit[:0], lens[:nlit], litLenValues[:], litBits); !ok {
		return errInflate
	}
	if d.dist, ok = build(d.dist[:0], lens[nlit:], distValues[:], distBits); !ok {
		return errInflate
	}
	return nil
}

// litLenValues and distValues are the entries (without the code length) of
// each symbol: the literal, the end of block, or a base and its extra bits.
var litLenValues, distValues = func() (lit [numLitLen]uint32, dist [numDist]uint32) {
	for i := range 256 {
		lit[i] = kindLiteral | uint32(i)<<16
	}
	lit[256] = kindEnd
	base := uint32(3)
	for i := 257; i < 285; i++ {
		extra := uint32(0)
		if i >= 265 {
			extra = uint32(i-261) / 4
		}
		lit[i] = kindLength | extra<<8 | base<<16
		base += 1 << extra
	}
	lit[285] = kindLength | 258<<16
	lit[286], lit[287] = kindInvalid, kindInvalid
	base = 1
	for i := range 30 {
		extra := uint32(0)
		if i >= 4 {
			extra = uint32(i-2) / 2
		}
		dist[i] = kindLength | extra<<8 | base<<16
		base += 1 << extra
	}
	dist[30], dist[31] = kindInvalid, kindInvalid
	return lit, dist
}()

// build makes the decoding table of a canonical Huffman code from its code
// lengths: 1<<bits entries indexed by the next bits of the input, and a
// subtable for each prefix of codes longer than that. values gives each
// symbol's entry (nil: the symbol itself, for the code length code). It
// accepts what compress/flate accepts: a complete code, a single code of
// one bit, or none at all (their unused codes decode as invalid).
func build(t []uint32, lengths []uint8, values []uint32, bits uint) ([]uint32, bool) {
	var count [maxCodeLen + 1]int
	maxLen := uint(0)
	for _, l := range lengths {
		count[l]++
		maxLen = max(maxLen, uint(l))
	}
	count[0] = 0
	var next [maxCodeLen + 2]uint32
	code := uint32(0)
	for l := 1; l <= maxCodeLen; l++ {
		code = (code + uint32(count[l-1])) << 1
		next[l] = code
	}
	if maxLen > 0 {
		total := next[maxLen] + uint32(count[maxLen])
		if total != 1<<maxLen && !(total == 1 && maxLen == 1) {
			return t, false
		}
	}
	size := 1 << bits
	if cap(t) < size {
		t = make([]uint32, size)
	}
	t = t[:size]
	for i := range t {
		t[i] = kindInvalid
	}
	sub := uint(0)
	if maxLen > bits {
		sub = maxLen - bits
	}
	var links [1 << litBits]uint32 // a prefix's subtable offset; 0: none yet
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		rev := reverse(c, uint(l))
		v := uint32(sym) << 16
		if values != nil {
			v = values[sym]
		}
		extra := v >> 8 & 15
		v = v&^(15<<8) | uint32(l)<<8 | (uint32(l) + extra)
		if uint(l) <= bits {
			for i := rev; i < uint32(size); i += 1 << l {
				t[i] = v
			}
			continue
		}
		prefix := rev & (1<<bits - 1)
		off := links[prefix]
		if off == 0 {
			off = uint32(len(t))
			links[prefix] = off
			t[prefix] = kindLink | uint32(sub)<<8 | off<<16 | uint32(bits)
			for range 1 << sub {
				t = append(t, kindInvalid)
			}
		}
		for i := rev >> bits; i < 1<<sub; i += 1 << (uint(l) - bits) {
			t[off+i] = v
		}
	}
	return t, true
}

func reverse(c uint32, n uint) uint32 {
	r := uint32(0)
	for range n {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}

// The fixed Huffman codes (RFC 1951, 3.2.6).
var fixedLit, fixedDist = func() ([]uint32, []uint32) {
	var l [numLitLen]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	var dl [numDist]uint8
	for i := range dl {
		dl[i] = 5
	}
	lit, _ := build(nil, l[:], litLenValues[:], litBits)
	dist, _ := build(nil, dl[:], distValues[:], distBits)
	return lit, dist
}()
