package backends

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with every control character but newline and tab
// (C0, DEL, C1, such as ESC and CSI that start terminal escape sequences),
// every bidirectional embedding, override and isolate, and every invalid
// UTF-8 byte written out as a Go escape (\x1b). Names,
// documents and error bodies from places anyone can write reach the
// terminal in warnings and messages: they must not move the cursor, clear
// the screen or retitle the window.
func Printable(s string) string { return escape(s, unprintable) }

// PrintableLine is Printable for what must stay on one line (a name, a
// place): newline and tab are written out too.
func PrintableLine(s string) string {
	return escape(s, func(r rune) bool { return r == '\n' || r == '\t' || unprintable(r) })
}

func escape(s string, unprintable func(rune) bool) string {
	if strings.IndexFunc(s, unprintable) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unprintable(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func unprintable(r rune) bool {
	return r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') || bidiControl(r)
}

// bidiControl reports the embeddings, overrides and isolates that make a
// terminal that orders bidirectional text show the rest of a line in
// another order than it is written (a name that reads as another).
func bidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// RedactPlace is a place argument as messages print it: a URL's user
// information (a password) replaced by REDACTED.
func RedactPlace(arg string) string {
	scheme, rest, ok := strings.Cut(arg, "://")
	if !ok {
		return arg
	}
	authority, path, _ := strings.Cut(rest, "/")
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return arg
	}
	out := scheme + "://REDACTED@" + authority[at+1:]
	if strings.Contains(rest, "/") {
		out += "/" + path
	}
	return out
}
