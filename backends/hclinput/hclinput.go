package hclinput

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apparentlymart/go-textseg/v15/textseg"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tfmirror/tfmirror/hashing/regular"
)

// MaxSize is the largest file read. The largest real lock files are tens of
// KB: one provider locked for every platform it is released for (14 for
// hashicorp/aws) holds about 30 hashes, some 2 KB, so 1 MiB is some 500
// such providers; a CLI configuration is a few KB. It also bounds what a
// hostile file costs: hcl takes about a second and 400 MB to parse 1 MiB of
// one-byte tokens, and far less for real content.
const MaxSize = 1 << 20

// MaxDepth bounds nesting: brackets, blocks, strings and their template
// sequences, and operators chained in one expression (each is one level of
// the parser's recursion). Real lock files and CLI configurations nest fewer
// than ten levels.
const MaxDepth = 100

// TooLargeError is ReadFile's error for a file over MaxSize.
type TooLargeError struct {
	Path string
	Size int64
}

func (e *TooLargeError) Error() string { return e.Path + ": " + e.Detail() }

// Detail says how large the file is and what the limit is, without its
// name, for messages that give the name already.
func (e *TooLargeError) Detail() string {
	return fmt.Sprintf("%d bytes, larger than %d MiB, the most tfmirror reads of a lock file or CLI configuration", e.Size, MaxSize>>20)
}

// ReadFile reads a file for Check, refusing one larger than MaxSize without
// reading it all, and one that is not a regular file (a named pipe would
// hang the read) without waiting. Errors are os.ReadFile's
// (errors.Is(err, fs.ErrNotExist) holds for a missing file), a
// *regular.Error or a *TooLargeError.
func ReadFile(path string) ([]byte, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if len(b) > MaxSize {
		size := int64(len(b))
		if fi, err := f.Stat(); err == nil && fi.Size() > size {
			size = fi.Size()
		}
		return nil, &TooLargeError{Path: path, Size: size}
	}
	return b, nil
}

// Syntax is how a file is written.
type Syntax int

const (
	// Native is HCL's native syntax (lock files, .terraformrc, *.tfrc).
	Native Syntax = iota
	// JSON is HCL's JSON syntax (*.tfrc.json).
	JSON
)

// Check returns an error diagnostic, at the place the limit is crossed, when
// src is larger than MaxSize or nests deeper than MaxDepth; callers parse src
// only when it returns none.
func Check(src []byte, filename string, syntax Syntax) hcl.Diagnostics {
	if len(src) > MaxSize {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "File too large",
			Detail:   (&TooLargeError{Path: filename, Size: int64(len(src))}).Detail(),
		}}
	}
	var at *hcl.Range
	if syntax == JSON {
		at = jsonTooDeep(src, filename)
	} else {
		at = nativeTooDeep(src, filename)
	}
	if at == nil {
		return nil
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Nesting too deep",
		Detail:   fmt.Sprintf("more than %d levels of brackets, blocks, strings or chained operators here; lock files and CLI configurations nest fewer than ten, so tfmirror does not parse this file", MaxDepth),
		Subject:  at,
	}}
}

// levelKind says how the parser treats newlines inside a level.
type levelKind int

const (
	// body: the top level, a block body or an object constructor, where a
	// newline ends an item.
	body levelKind = iota
	// wrapped: parentheses, brackets, template sequences and for
	// expressions, where newlines are ignored.
	wrapped
	// text: a quoted string or heredoc, whose literal parts nest nothing.
	text
)

type level struct {
	kind levelKind
	// run counts the tokens of the item being read at this level, each of
	// which may be one more level of recursion (a unary or binary operator,
	// a ternary, an index or attribute access on an expression, a template
	// directive).
	run int
	// forPending: a "{" whose first token, "for", would make it newline
	// insensitive.
	forPending bool
}

// nativeTooDeep runs hcl's own lexer (iterative, so safe on any input) and
// returns where the parser's recursion would pass MaxDepth, bounded above
// by the open levels plus the tokens of the unfinished item at each. An item
// ends at a comma or "=", and at a newline where the parser reads newlines;
// tokens are counted whenever unsure, so the bound errs high.
func nativeTooDeep(src []byte, filename string) *hcl.Range {
	toks, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	stack := []level{{kind: body}}
	depth := 1 // len(stack) + the runs of every level
	push := func(k levelKind) {
		stack = append(stack, level{kind: k})
		depth++
	}
	endItem := func(l *level) {
		depth -= l.run
		l.run = 0
	}
	for i := range toks {
		t := &toks[i]
		top := &stack[len(stack)-1]
		switch t.Type {
		case hclsyntax.TokenEOF:
			continue
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenTemplateSeqEnd, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if len(stack) > 1 {
				depth -= top.run + 1
				stack = stack[:len(stack)-1]
			}
			continue
		}
		newline := t.Type == hclsyntax.TokenNewline ||
			(t.Type == hclsyntax.TokenComment && len(t.Bytes) > 0 && t.Bytes[len(t.Bytes)-1] == '\n')
		if top.forPending {
			if newline || t.Type == hclsyntax.TokenComment {
				continue
			}
			top.forPending = false
			if t.Type == hclsyntax.TokenIdent && string(t.Bytes) == "for" {
				top.kind = wrapped
			}
		}
		if top.kind == text {
			// Only template sequences nest inside a string; every one is
			// counted, as if/for directives nest without brackets.
			if t.Type == hclsyntax.TokenTemplateInterp || t.Type == hclsyntax.TokenTemplateControl {
				top.run++
				depth++
				push(wrapped)
			}
		} else {
			switch {
			case newline:
				if top.kind == body {
					endItem(top)
				}
				continue
			case t.Type == hclsyntax.TokenComment:
				continue
			case t.Type == hclsyntax.TokenComma || t.Type == hclsyntax.TokenEqual:
				endItem(top)
				continue
			}
			top.run++
			depth++
			switch t.Type {
			case hclsyntax.TokenOBrace:
				push(body)
				stack[len(stack)-1].forPending = true
			case hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
				hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
				push(wrapped)
			case hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
				push(text)
			}
		}
		if depth > MaxDepth {
			r := t.Range
			return &r
		}
	}
	return nil
}

// jsonTooDeep returns where the brackets of a JSON document pass MaxDepth.
// Strings are skipped exactly as hcl's JSON scanner skips them (by grapheme
// cluster, ending at an unescaped quote or a control byte), so that no
// bracket the parser sees is taken for string content.
func jsonTooDeep(src []byte, filename string) *hcl.Range {
	depth := 0
	line, lineStart := 1, 0
	for i := 0; i < len(src); {
		switch b := src[i]; b {
		case '\n':
			line, lineStart = line+1, i+1
		case '[', '{':
			depth++
			if depth > MaxDepth {
				pos := hcl.Pos{Line: line, Column: i - lineStart + 1, Byte: i}
				return &hcl.Range{Filename: filename, Start: pos, End: hcl.Pos{Line: line, Column: pos.Column + 1, Byte: i + 1}}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"':
			i = skipJSONString(src, i)
			continue
		}
		i++
	}
	return nil
}

// skipJSONString returns the offset just past the string starting at
// src[start] (a quote), as hcl/v2/json's scanString ends it.
func skipJSONString(src []byte, start int) int {
	i := start + 1
	escaping := false
	for i < len(src) {
		switch b := src[i]; {
		case b == '\\':
			escaping = !escaping
			i++
		case b == '"':
			i++
			if !escaping {
				return i
			}
			escaping = false
		case b < 32:
			return i
		default:
			advance, _, err := textseg.ScanGraphemeClusters(src[i:], true)
			if err != nil || advance < 1 {
				advance = 1
			}
			i += advance
			escaping = false
		}
	}
	return i
}

// Message joins the error diagnostics of diags into one line, each
// "SUMMARY: DETAIL", led by "FILE:LINE: " where located and the
// diagnostic has a subject (a file's; an expression parsed from a flag has
// no file worth naming).
func Message(diags hcl.Diagnostics, located bool) string {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if located && d.Subject != nil {
			msg = fmt.Sprintf("%s:%d: %s", d.Subject.Filename, d.Subject.Start.Line, msg)
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}
