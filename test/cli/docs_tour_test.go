package cli

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDocsTour runs every command block of docs/*.md, and README.md's
// blocks besides its tour, as TestREADMETour runs the tour: one subtest per
// page, its blocks in order in a fresh local world (newDocsWorld), the
// pages' hosts and buckets mapped by the world's tables. A ```sh or ```bash
// block runs line by line; a ```console block runs its "$ " lines, and
// "$ echo $?" followed by a number states the exit code of the command
// before it. A block preceded by "<!-- not run: REASON -->" is not run,
// and the test logs it with its reason; an untagged block holding a
// command fails the test (tag it sh, console, or text).
func TestDocsTour(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join("..", "..", "README.md")}, pages...)
	for _, page := range pages {
		name := strings.TrimPrefix(filepath.ToSlash(page), "../../")
		blocks := readDocBlocks(t, page, name)
		var run []docBlock
		for _, b := range blocks {
			if b.notRun != "" {
				t.Logf("%s:%d: not run: %s", b.file, b.n, b.notRun)
				continue
			}
			if b.runs() {
				run = append(run, b)
			}
		}
		if len(run) == 0 {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(page), ".md"), func(t *testing.T) {
			w := newDocsWorld(t, namesHostname(run))
			start := time.Now()
			for _, b := range run {
				for _, l := range b.lines {
					t.Logf("%s:%d: %s %s", l.file, l.n, l.text, l.pipe)
					w.runDoc(t, l)
				}
			}
			t.Logf("%s: %d blocks ran in %v", name, len(run), time.Since(start).Round(time.Millisecond))
			if len(w.skipped) > 0 {
				t.Skipf("tmux is not installed: the terminal lines %s were not run (apt-get install tmux)", strings.Join(w.skipped, ", "))
			}
			if len(w.noJQ) > 0 {
				t.Skipf("jq is not installed: the lines %s were not run (apt-get install jq)", strings.Join(w.noJQ, ", "))
			}
		})
	}
}

// docBlock is a fenced block of a page.
type docBlock struct {
	file   string
	n      int    // the line of its opening fence
	lang   string // sh, bash, console, hcl, text, "" ...
	notRun string // the reason a <!-- not run: --> comment gives
	lines  []docLine
}

func (b docBlock) runs() bool { return b.lang == "sh" || b.lang == "bash" || b.lang == "console" }

// docLine is a command of a block: a tfmirror command (tourLine), with
// what it pipes into, or an export or another command.
type docLine struct {
	tourLine
	pipe string // "| jq ..." after the first command, as written
	// script is a loop's lines (for ... done, and a wait after it), run
	// as one bash script.
	script []string
}

var notRunComment = regexp.MustCompile(`^<!--\s*not run:\s*(.+?)\s*-->$`)

// readDocBlocks reads the fenced blocks of page; README's tour block is
// left to TestREADMETour (marked not run here, with that reason).
func readDocBlocks(t *testing.T, page, name string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	var body []string
	prev, section := "", ""
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &docBlock{file: name, n: n, lang: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
			if m := notRunComment.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				cur.notRun = m[1]
			}
			body = nil
		case cur != nil && strings.HasPrefix(line, "```"):
			if name == "README.md" && section == "## A tour" && cur.notRun == "" {
				cur.notRun = "here; TestREADMETour runs it, the tour, in its own world"
			}
			parseDocBlock(t, cur, body)
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body = append(body, line)
		case strings.HasPrefix(line, "## "):
			section = strings.TrimSpace(line)
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: the block is not closed", name, cur.n)
	}
	return blocks
}

// parseDocBlock reads b's commands from its body.
func parseDocBlock(t *testing.T, b *docBlock, body []string) {
	t.Helper()
	if b.notRun != "" {
		return
	}
	if !b.runs() {
		for j, line := range body {
			if strings.HasPrefix(line, "tfmirror ") || strings.HasPrefix(line, "$ ") {
				if b.lang == "" {
					t.Errorf("%s:%d: a command in a block with no language: tag it ```sh (run as written), ```console (its \"$ \" lines run) or ```text (not run)", b.file, b.n+1+j)
				}
				break
			}
		}
		return
	}
	console := b.lang == "console"
	pending, start := "", 0
	var script *docLine
	endScript := func() {
		if script != nil {
			b.lines = append(b.lines, *script)
			script = nil
		}
	}
	for j, line := range body {
		n := b.n + 1 + j
		if console && pending == "" {
			cmd, ok := strings.CutPrefix(line, "$ ")
			if !ok {
				// Output, or the exit code "$ echo $?" asked for.
				if k := len(b.lines) - 1; k >= 0 && b.lines[k].text == "echo $?" {
					code, err := strconv.Atoi(strings.Fields(line + " x")[0])
					if err != nil {
						t.Errorf("%s:%d: \"$ echo $?\" is followed by %q, not an exit code", b.file, n, line)
					} else if k == 0 {
						t.Errorf("%s:%d: \"$ echo $?\" with no command before it", b.file, n)
					} else {
						b.lines[k-1].want = code
					}
					b.lines = b.lines[:k]
				}
				continue
			}
			line = cmd
		}
		if pending == "" {
			start = n
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
			pending += cont + " "
			continue
		}
		full := pending + line
		pending = ""
		if strings.TrimSpace(full) == "" || strings.HasPrefix(strings.TrimSpace(full), "#") {
			continue
		}
		// A loop runs as one script, with the wait after it.
		trimmed := strings.TrimSpace(full)
		switch {
		case script == nil && !console && strings.HasPrefix(trimmed, "for "):
			script = &docLine{tourLine: tourLine{file: b.file, n: start, text: trimmed}, script: []string{full}}
			continue
		case script != nil && len(script.script) > 0 && strings.TrimSpace(script.script[len(script.script)-1]) == "done":
			if trimmed == "wait" {
				script.script = append(script.script, full)
				endScript()
				continue
			}
			endScript()
		case script != nil:
			script.script = append(script.script, full)
			continue
		}
		l, err := parseDocLine(start, full)
		if err != nil {
			t.Errorf("%s:%d: %v: %s\n(a block that cannot run against the test's local world: put <!-- not run: REASON --> on the line before it)", b.file, start, err, full)
			continue
		}
		l.file = b.file
		b.lines = append(b.lines, l)
	}
	if pending != "" {
		t.Errorf("%s:%d: the block ends in a continuation line", b.file, start)
	}
	if script != nil && strings.TrimSpace(script.script[len(script.script)-1]) != "done" {
		t.Errorf("%s:%d: the loop has no done", b.file, script.n)
	}
	endScript()
}

// otherCommands are the commands besides tfmirror a block may run: the
// tools a reader checks output with.
var otherCommands = map[string]bool{"export": true, "echo": true, "sha256sum": true, "mkfifo": true, "jq": true, "head": true, "tail": true, "cat": true}

// parseDocLine splits a command line into its first command and what it
// pipes into, and reads the first as a tour line.
func parseDocLine(n int, line string) (docLine, error) {
	first, pipe, comment, err := splitPipe(line)
	if err != nil {
		return docLine{}, err
	}
	words, _, err := splitShell(first)
	if err != nil {
		return docLine{}, err
	}
	if len(words) == 0 {
		return docLine{}, errors.New("no command")
	}
	if words[0].value != "tfmirror" && !otherCommands[words[0].value] {
		return docLine{}, fmt.Errorf("%s is neither tfmirror nor a command the docs test runs (%s)", words[0].value, strings.Join(sortedKeys(otherCommands), ", "))
	}
	for rest := pipe; rest != ""; {
		seg, next, _, err := splitPipe(rest[1:])
		if err != nil {
			return docLine{}, err
		}
		if f := strings.Fields(seg); len(f) == 0 || !otherCommands[f[0]] {
			return docLine{}, fmt.Errorf("the pipe %q: only %s are run", pipe, strings.Join(sortedKeys(otherCommands), ", "))
		}
		rest = next
	}
	l := docLine{tourLine: tourLine{n: n, comment: comment, words: words}, pipe: pipe}
	raw := make([]string, len(words))
	for i, w := range words {
		raw[i] = w.raw
	}
	l.text = strings.Join(raw, " ")
	if m := statedExit.FindStringSubmatch(comment); m != nil {
		l.want, _ = strconv.Atoi(m[1])
	}
	return l, nil
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// splitPipe cuts line at its first unquoted | and at the # that starts its
// comment: the first command, the rest from the | on, the comment.
func splitPipe(line string) (first, pipe, comment string, err error) {
	end, cut := len(line), -1
	wordStart := true
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return "", "", "", errors.New("unterminated single quote")
			}
			i += j + 1
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' {
					j++
				}
			}
			if j >= len(line) {
				return "", "", "", errors.New("unterminated double quote")
			}
			i = j
		case c == '\\':
			i++
		case c == '#' && wordStart:
			end, comment = i, strings.TrimSpace(line[i+1:])
			i = len(line)
			continue
		case c == '|' && cut < 0:
			cut = i
		}
		wordStart = line[i] == ' ' || line[i] == '\t' || line[i] == '|'
	}
	if cut < 0 {
		return line[:end], "", comment, nil
	}
	return line[:cut], strings.TrimSpace(line[cut:end]), comment, nil
}

// TestDocsExtraction checks the docs test's own reading of a page: not-run
// comments, console blocks and their stated exit codes, pipes, exports,
// loops, and blocks that do not run.
func TestDocsExtraction(t *testing.T) {
	page := writeFile(t, t.TempDir(), "page.md", "# x\n\n```hcl\nplatforms = []\n```\n\n"+
		"<!-- not run: needs AWS itself -->\n```sh\ntfmirror ls s3://x/y\n```\n\n"+
		"```sh\nexport AWS_PROFILE=w AWS_REGION=eu-west-1\n"+
		"tfmirror ls ./m --json | jq -r '.[] | \"\\(.a) #\\(.b)\"' | head -1   # exit 1: a gap\n"+
		"for p in a b; do\n  tfmirror sync ./m ./n --platform \"$p\" &\ndone\nwait\ntfmirror verify ./n\n```\n\n"+
		"```console\n$ mkfifo lock.hcl\n$ tfmirror check ./m --lock lock.hcl\ntfmirror: lock.hcl: is a named pipe\n$ echo $?\n2\n```\n")
	blocks := readDocBlocks(t, page, "page.md")
	if len(blocks) != 4 {
		t.Fatalf("read %d blocks, want 4: %+v", len(blocks), blocks)
	}
	if b := blocks[0]; b.runs() || len(b.lines) != 0 {
		t.Errorf("an hcl block: %+v", b)
	}
	if b := blocks[1]; b.notRun != "needs AWS itself" || b.n != 8 {
		t.Errorf("a block not run: %+v", b)
	}
	sh := blocks[2].lines
	if len(sh) != 4 {
		t.Fatalf("the sh block: %d lines, want 4: %+v", len(sh), sh)
	}
	if l := sh[0]; l.words[0].value != "export" || len(l.words) != 3 {
		t.Errorf("export: %+v", l)
	}
	if l := sh[1]; l.text != "tfmirror ls ./m --json" || l.pipe != `| jq -r '.[] | "\(.a) #\(.b)"' | head -1` || l.want != 1 {
		t.Errorf("a pipe: text %q pipe %q want %d", l.text, l.pipe, l.want)
	}
	if l := sh[2]; len(l.script) != 4 || l.n != 15 || strings.TrimSpace(l.script[3]) != "wait" {
		t.Errorf("a loop: %+v", l)
	}
	if l := sh[3]; l.text != "tfmirror verify ./n" || l.script != nil {
		t.Errorf("after the loop: %+v", l)
	}
	con := blocks[3].lines
	if len(con) != 2 || con[0].text != "mkfifo lock.hcl" || con[1].text != "tfmirror check ./m --lock lock.hcl" || con[1].want != 2 || con[0].want != 0 {
		t.Errorf("a console block: %+v", con)
	}
	for _, bad := range []string{"rm -rf ./m", "tfmirror ls ./m | sh", "tfmirror ls 'open"} {
		if _, err := parseDocLine(1, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
