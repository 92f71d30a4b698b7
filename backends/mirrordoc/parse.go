package mirrordoc

import "strings"

// parseVersionFast decodes the version documents tfmirror and the clients
// write: {"archives": {PLATFORM: {"hashes": [...], "url": "..."}}} with
// plain ASCII strings. It reports false for anything else (escapes,
// other keys or value types, keys in another case, repeated keys, null),
// which encoding/json decodes instead: where it answers, its answer is
// encoding/json's. A scan of 100,000 archives reads 20,000 of these
// documents; this costs a tenth of the reflection decoder, and the hashes
// of one document share one allocation.
func parseVersionFast(b []byte) (*Version, bool) {
	p := docParser{b: b, spans: make([]span, 0, 32)}
	if !p.byte('{') || !p.key("archives") || !p.byte('{') {
		return nil, false
	}
	entries := make([]docEntry, 0, 16)
	for first := true; !p.peek('}'); first = false {
		if !first && !p.byte(',') {
			return nil, false
		}
		e, ok := p.entry()
		if !ok {
			return nil, false
		}
		entries = append(entries, e)
	}
	if !p.byte('}') || !p.end() {
		return nil, false
	}
	return p.version(entries)
}

// docEntry is one platform's entry as parsed: where its strings are.
type docEntry struct {
	plat       span
	from, to   int // its hashes in p.spans
	url        span
	hasURL     bool
	hashesSeen bool
}

// entry consumes "PLATFORM": {"hashes": [...], "url": "..."}.
func (p *docParser) entry() (e docEntry, ok bool) {
	if e.plat, ok = p.str(); !ok || !p.byte(':') || !p.byte('{') {
		return e, false
	}
	for first := true; !p.peek('}'); first = false {
		if !first && !p.byte(',') {
			return e, false
		}
		name, ok := p.str()
		if !ok || !p.byte(':') {
			return e, false
		}
		switch {
		case p.is(name, "hashes") && !e.hashesSeen:
			e.hashesSeen = true
			if e.from, e.to, ok = p.strings(); !ok {
				return e, false
			}
		case p.is(name, "url") && !e.hasURL:
			e.hasURL = true
			if e.url, ok = p.str(); !ok {
				return e, false
			}
		default:
			return e, false // another key, or one repeated
		}
	}
	return e, true
}

// version builds the document from its parsed entries.
func (p *docParser) version(entries []docEntry) (*Version, bool) {
	// One string holds every hash of the document: what a listing keeps
	// of it is the hashes, without a header and rounding each.
	n := 0
	for _, h := range p.spans {
		n += h.end - h.start
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, h := range p.spans {
		sb.Write(p.b[h.start:h.end])
	}
	all := sb.String()
	doc := &Version{Archives: make(map[string]Archive, len(entries))}
	off := 0
	for _, e := range entries {
		name := p.text(e.plat)
		if _, dup := doc.Archives[name]; dup {
			return nil, false
		}
		var a Archive
		if e.hashesSeen {
			a.Hashes = make([]string, e.to-e.from)
			for i, h := range p.spans[e.from:e.to] {
				a.Hashes[i] = all[off : off+h.end-h.start]
				off += h.end - h.start
			}
		}
		if e.hasURL {
			a.URL = p.text(e.url)
		}
		doc.Archives[name] = a
	}
	return doc, true
}

// span is a string's bytes in the document, without its quotes.
type span struct{ start, end int }

type docParser struct {
	b     []byte
	i     int
	spans []span // the strings of every array, in order
}

func (p *docParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c after any white space.
func (p *docParser) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek is byte, for the closing bracket that ends a loop.
func (p *docParser) peek(c byte) bool { return p.byte(c) }

func (p *docParser) end() bool {
	p.space()
	return p.i == len(p.b)
}

// str consumes a string of printable ASCII without escapes.
func (p *docParser) str() (span, bool) {
	if !p.byte('"') {
		return span{}, false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return span{start, p.i - 1}, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return span{}, false
		}
	}
	return span{}, false
}

// key consumes "name": exactly.
func (p *docParser) key(name string) bool {
	s, ok := p.str()
	return ok && p.is(s, name) && p.byte(':')
}

// strings consumes an array of strings, appending them to p.spans: they
// are p.spans[from:to]. An empty array is an empty, non-nil list, as
// encoding/json decodes it.
func (p *docParser) strings() (from, to int, ok bool) {
	if !p.byte('[') {
		return 0, 0, false
	}
	from = len(p.spans)
	for first := true; !p.peek(']'); first = false {
		if !first && !p.byte(',') {
			return 0, 0, false
		}
		s, ok := p.str()
		if !ok {
			return 0, 0, false
		}
		p.spans = append(p.spans, s)
	}
	return from, len(p.spans), true
}

func (p *docParser) text(s span) string { return string(p.b[s.start:s.end]) }

func (p *docParser) is(s span, lit string) bool { return string(p.b[s.start:s.end]) == lit }
