package ui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// The preview of C: per lock file, per provider and platform, the lines C
// would add, and what it cannot add and why; enter writes them.

// fillPlat is what C adds to one provider's lock for one platform, or the
// note saying why it adds nothing or not all.
type fillPlat struct {
	plat string
	from string // the place the hashes come from, as the header labels it
	add  []hashing.Hash
	note string
	bad  bool // the note is a failure, not a warning
}

// fillProv is one provider's lock in one lock file.
type fillProv struct {
	p       backends.Provider
	version string
	plats   []fillPlat
}

// fillFile is one lock file: complete for n of m platforms before, after
// once written, and what is added to it.
type fillFile struct {
	path           string
	n, m, after    int
	provs          []fillProv
	adds, problems int
}

// fillPreview is C's dialog: the preview, scrolled from top.
type fillPreview struct {
	files []fillFile
	adds  int
	top   int
	keys  fillKeys
}

// fillKeys are the preview's keys.
type fillKeys struct {
	list.Nav
	Write, Cancel key.Binding
	scroll        key.Binding // for the key bar
}

func defaultFillKeys() fillKeys {
	return fillKeys{
		Nav:    list.DefaultNav("top", "end"),
		Write:  key.NewBinding(key.WithKeys("enter", "y"), key.WithHelp("enter", "write")),
		Cancel: key.NewBinding(key.WithKeys("esc", "n", "q"), key.WithHelp("esc", "cancel")),
		scroll: key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll")),
	}
}

// ShortHelp implements help.KeyMap.
func (k fillKeys) ShortHelp() []key.Binding { return []key.Binding{k.Write, k.Cancel, k.scroll} }

// FullHelp implements help.KeyMap.
func (k fillKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// fillResult is what hashing said of one locked provider version's
// platform: the hashes from a place, or none (no place holds it).
type fillResult struct {
	fillHashed
	from string
	none bool
}

// fillPreview builds the preview of what C adds to each lock file from
// what the places gave (msg) and the platforms no place holds (none).
func (v *lockView) fillPreview(msg fillHashedMsg, none []fillTarget) fillPreview {
	res := map[lockKey]map[string]fillResult{}
	put := func(tg fillTarget, r fillResult) {
		if res[tg.key] == nil {
			res[tg.key] = map[string]fillResult{}
		}
		res[tg.key][tg.plat.String()] = r
	}
	for i, tg := range msg.targets {
		put(tg, fillResult{fillHashed: msg.hashed[i], from: v.queuePlace(tg.place).Label()})
	}
	for _, tg := range none {
		put(tg, fillResult{none: true})
	}
	p := fillPreview{keys: defaultFillKeys()}
	for _, path := range v.lock.files() {
		f := fillFile{path: path}
		gains := map[lockKey]map[string]bool{}
		for _, pr := range v.lock.order {
			for _, e := range v.lock.locks.Entries {
				if e.Provider == pr && e.Locked.Source == path {
					fp := v.fillEntry(e, res[lockKey{pr, e.Locked.Version.String()}], gains)
					for _, pl := range fp.plats {
						f.adds += len(pl.add)
						if pl.note != "" {
							f.problems++
						}
					}
					if len(fp.plats) > 0 {
						f.provs = append(f.provs, fp)
					}
				}
			}
		}
		f.n, f.m, _ = v.lockComplete(path)
		f.after, _, _ = v.lockCompleteWith(path, func(k lockKey, plat string) bool { return gains[k][plat] })
		p.adds += f.adds
		p.files = append(p.files, f)
	}
	return p
}

// fillEntry is what C adds to one lock file's entry e, from res (by
// platform); gains records the platforms that gain an h1:.
func (v *lockView) fillEntry(e LockEntry, res map[string]fillResult, gains map[lockKey]map[string]bool) fillProv {
	k := lockKey{e.Provider, e.Locked.Version.String()}
	t := v.lock.tied[k]
	fp := fillProv{p: e.Provider, version: k.v}
	for _, plat := range v.lockPlatforms(e.Provider) {
		r, ok := res[plat]
		if !ok {
			continue
		}
		hasH1 := slices.ContainsFunc(e.Locked.Hashes, func(h hashing.Hash) bool { return h.Scheme() == hashing.SchemeH1 && t.platOf[h] == plat })
		fl := fillPlat{plat: plat, from: r.from}
		switch {
		case r.none && hasH1:
			continue // only its zh: is missing, and no place has it
		case r.none:
			fl.note = "○ no place holds the locked package: L fills a mirror, then C"
		case r.problem != "":
			fl.note, fl.bad = "✗ "+r.problem, true
		case !v.fillMatches(k, plat, r.hashes):
			fl.note, fl.bad = "≠ the package there is not the one the lock names: nothing added", true
		default:
			for _, h := range r.hashes {
				if !slices.Contains(e.Locked.Hashes, h) {
					fl.add = append(fl.add, h)
				}
			}
			gainsH1 := slices.ContainsFunc(fl.add, func(h hashing.Hash) bool { return h.Scheme() == hashing.SchemeH1 })
			if gainsH1 {
				if gains[k] == nil {
					gains[k] = map[string]bool{}
				}
				gains[k][plat] = true
			}
			if !hasH1 && !gainsH1 {
				fl.note = "only zh: known: no place states this platform's h1: (init -lockfile=readonly and a filesystem mirror need it)"
			}
		}
		if len(fl.add) > 0 || fl.note != "" {
			fp.plats = append(fp.plats, fl)
		}
	}
	return fp
}

// fillMatches reports whether hashes are of the package the lock names
// for plat: where the lock holds hashes tied to plat, one of them must be
// among hashes (a place whose archive stated nothing is only judged here,
// once hashed).
func (v *lockView) fillMatches(k lockKey, plat string, hashes []hashing.Hash) bool {
	t := v.lock.tied[k]
	tied := false
	for _, h := range v.lock.locked[k].Hashes {
		if t.platOf[h] == plat {
			tied = true
			if slices.Contains(hashes, h) {
				return true
			}
		}
	}
	return !tied
}

// lines renders the preview w cells wide.
func (p fillPreview) lines(s *theme.Styles, w int) []string {
	n := 0
	for _, f := range p.files {
		if f.adds > 0 {
			n++
		}
	}
	head := fmt.Sprintf("Add %s to %s? Nothing is written before enter.", hashesWord(p.adds), lockFilesWord(n))
	style := s.Info
	if p.adds == 0 {
		head, style = "Nothing to add from the places:", s.Warn
	}
	var out []string
	for _, l := range strings.Split(ansi.Wrap(head, max(10, w-2), " "), "\n") {
		out = append(out, " "+style.Render(l))
	}
	for _, f := range p.files {
		out = append(out, "", " "+s.Accent.Render(theme.TruncateLeft(f.path, w-1)))
		what := fmt.Sprintf("complete for %d of %d platforms", f.n, f.m)
		switch {
		case f.m == 0:
			what = "no place ties its hashes to a platform: nothing to add"
		case f.adds > 0 && f.after != f.n:
			what += fmt.Sprintf(", then %d of %d", f.after, f.m)
		case f.adds == 0 && f.problems == 0:
			what += ": nothing to add"
		}
		out = append(out, "  "+s.Dim.Render(theme.Truncate(what, w-2)))
		for _, pr := range f.provs {
			out = append(out, "  "+theme.Truncate(pr.p.String()+" "+pr.version, w-3))
			for _, pl := range pr.plats {
				out = append(out, pl.render(s, w)...)
			}
		}
	}
	return out
}

// render is one platform's lines: where from, each hash added as the lock
// file will hold it, the note wrapped.
func (pl fillPlat) render(s *theme.Styles, w int) []string {
	head := "   " + pl.plat
	if pl.from != "" {
		head += s.Dim.Render(" from " + pl.from)
	}
	out := []string{theme.Truncate(head, w)}
	for _, h := range pl.add {
		out = append(out, s.OK.Render(theme.Truncate(fmt.Sprintf("    + %q,", string(h)), w)))
	}
	if pl.note != "" {
		style := s.Warn
		if pl.bad {
			style = s.Bad
		}
		for _, l := range strings.Split(ansi.Wrap(pl.note, max(10, w-5), " "), "\n") {
			out = append(out, "    "+style.Render(l))
		}
	}
	return out
}

// view is the preview's box, h lines high: its title and the lines shown.
func (p fillPreview) view(s *theme.Styles, w, h int) (string, []string) {
	lines := p.lines(s, w-2)
	rows := max(1, h-2)
	top := max(0, min(p.top, len(lines)-rows))
	title := "Complete the lock files from the places"
	if len(lines) > rows {
		title += fmt.Sprintf(" ─ %d-%d of %d", top+1, min(len(lines), top+rows), len(lines))
	}
	return title, lines[top:min(len(lines), top+rows)]
}

// writes is what writing the preview adds, by lock file, in the files'
// order.
func (p fillPreview) writes() (map[string][]fillFileAdd, []string) {
	out := map[string][]fillFileAdd{}
	var order []string
	for _, f := range p.files {
		for _, pr := range f.provs {
			var hs []hashing.Hash
			for _, pl := range pr.plats {
				hs = append(hs, pl.add...)
			}
			if len(hs) == 0 {
				continue
			}
			if _, ok := out[f.path]; !ok {
				order = append(order, f.path)
			}
			out[f.path] = append(out[f.path], fillFileAdd{p: pr.p, version: pr.version, hashes: hashing.SortUnique(hs)})
		}
	}
	return out, order
}
