package theme

import (
	"sort"
	"strings"
)

// ShortPlace shortens a place's name to w cells by one rule, the same
// wherever a place is named: it keeps what tells places apart, the scheme
// (its kind), the host, and the last path element (for an OCI template,
// the last element that is not only ${...} variables), and leaves out,
// in this order, the elements between them, then the template's
// variables, then the start of the host. Only where even that does not fit
// is the last element cut.
func ShortPlace(name string, w int) string {
	if Width(name) <= w {
		return name
	}
	if w <= 1 {
		return Truncate(name, w)
	}
	scheme, host, elems := splitPlace(name)
	last := len(elems) - 1
	for last > 0 && onlyVariables(elems[last]) {
		last--
	}
	var tail string
	if last >= 0 && last < len(elems)-1 {
		tail = "/" + strings.Join(elems[last+1:], "/")
	}
	lastEl, mid := "", ""
	if last >= 0 {
		lastEl = elems[last]
		if last > 0 {
			mid = "/…"
		}
	}
	if host == "" && scheme == "" {
		// A directory: its last element, after as many of those before it
		// as fit.
		for k := 0; k < last; k++ {
			if c := "…/" + strings.Join(elems[k+1:last+1], "/") + tail; Width(c) <= w {
				return c
			}
		}
	}
	sep := ""
	if lastEl != "" {
		sep = "/"
	}
	for _, c := range []string{
		scheme + host + mid + sep + lastEl + tail,
		scheme + host + mid + sep + lastEl + ifSome(tail, "/…"),
	} {
		if Width(c) <= w {
			return c
		}
	}
	// The host's start goes (its end, a port or a domain, tells it apart),
	// down to a few cells; then the last element is cut in the middle.
	rest := mid + sep + lastEl + ifSome(tail, "/…")
	if room := w - Width(scheme) - Width(rest); room >= 5 && host != "" {
		return scheme + TruncateLeft(host, room) + rest
	}
	if host == "" && lastEl != "" {
		if c := "…/" + lastEl + ifSome(tail, "/…"); Width(c) <= w && last > 0 {
			return c
		}
		return TruncateLeft(strings.Join(elems[:last+1], "/")+ifSome(tail, "/…"), w) // a file's end: its type
	}
	if lastEl == "" && host != "" && w-Width(scheme) < 6 {
		return TruncateLeft(host, w) // a bare host: its end tells it apart
	}
	// Then the host's end in five cells, and the last element cut.
	if avail := w - Width(scheme) - Width(mid+sep); host != "" && lastEl != "" && avail >= 8 {
		hostW := max(7, avail-min(Width(lastEl), 5))
		return scheme + TruncateLeft(host, hostW) + mid + sep + cutMiddle([]rune(lastEl), avail-hostW)
	}
	// Then the last element goes: the host's end is kept; at the very
	// least, the scheme, which says the kind.
	if room := w - Width(scheme) - 2; host != "" && room >= 2 {
		return scheme + TruncateLeft(host, room) + ifSome(lastEl+tail, "/…")
	}
	switch short := strings.TrimSuffix(scheme, "//"); {
	case scheme != "" && w >= Width(scheme)+1:
		return scheme + "…"
	case scheme != "" && w >= Width(short)+1:
		return short + "…"
	}
	return cutMiddle([]rune(scheme+host+rest), w)
}

// ShortPlaces shortens each of names to w cells as ShortPlace does, and
// where two come out the same, keeps instead the path element that tells
// them apart (the last one that differs), before their last element.
func ShortPlaces(names []string, w []int) []string {
	out := make([]string, len(names))
	seen := map[string][]int{}
	for i, n := range names {
		out[i] = ShortPlace(n, w[i])
		if Width(n) > w[i] {
			seen[alike(n)] = append(seen[alike(n)], i)
		}
	}
	for _, same := range seen {
		if len(same) < 2 {
			continue
		}
		for _, i := range same {
			for _, j := range same {
				if i != j {
					out[i] = toldApart(names[i], names[j], w[i])
					break
				}
			}
		}
	}
	return out
}

// alike is what ShortPlace keeps of a name: names alike in it can read
// the same once shortened.
func alike(name string) string {
	scheme, host, elems := splitPlace(name)
	last := len(elems) - 1
	for last > 0 && onlyVariables(elems[last]) {
		last--
	}
	if last < 0 {
		return scheme + host
	}
	return scheme + host + "/" + elems[last]
}

// toldApart shortens name to w cells keeping the last path element in
// which it differs from other, and its last element.
func toldApart(name, other string, w int) string {
	scheme, host, elems := splitPlace(name)
	_, oHost, oElems := splitPlace(other)
	if host != oHost || len(elems) == 0 {
		return ShortPlace(name, w)
	}
	d := len(elems) - 1
	for k := 1; k <= len(elems) && k <= len(oElems); k++ {
		if elems[len(elems)-k] != oElems[len(oElems)-k] {
			d = len(elems) - k
			break
		}
	}
	prefix := "…/"
	if scheme != "" {
		prefix = scheme + "…/"
	}
	end := ""
	if d < len(elems)-1 {
		end = "/" + elems[len(elems)-1]
		if d < len(elems)-2 {
			end = "/…" + end
		}
	}
	// The last element, which both share, goes before the telling one is
	// cut.
	more := ifSome(end, "/…")
	for _, c := range []string{prefix + strings.Join(elems[d:], "/"), prefix + elems[d] + end, prefix + elems[d] + more} {
		if Width(c) <= w {
			return c
		}
	}
	return prefix + Truncate(elems[d], max(1, w-Width(prefix)-Width(more))) + more
}

func ifSome(s, then string) string {
	if s == "" {
		return ""
	}
	return then
}

// splitPlace parts a place's name: the scheme with its "://" (none for a
// path), the host (a URL's), and the path's elements; a path's leading
// "/" or "./" is kept on its first element.
func splitPlace(name string) (scheme, host string, elems []string) {
	rest := name
	if i := strings.Index(name, "://"); i >= 0 {
		scheme, rest = name[:i+3], name[i+3:]
		host, rest, _ = strings.Cut(rest, "/")
	}
	for _, e := range strings.Split(strings.TrimRight(rest, "/"), "/") {
		if e != "" {
			elems = append(elems, e)
		}
	}
	return scheme, host, elems
}

// onlyVariables reports whether a template element is nothing but ${...}
// variables and separators: what every place of one template shares.
func onlyVariables(e string) bool {
	if !strings.Contains(e, "${") {
		return false
	}
	for e != "" {
		i := strings.Index(e, "${")
		if i < 0 {
			return strings.Trim(e, "_-.") == ""
		}
		if strings.Trim(e[:i], "_-.") != "" {
			return false
		}
		j := strings.IndexByte(e[i:], '}')
		if j < 0 {
			return false
		}
		e = e[i+j+1:]
	}
	return true
}

// Apart shortens a place's name to w cells, cutting in the middle but
// keeping the part that tells it apart from the others: where it first
// differs from the most alike of them, up to where its end stops being
// shared, then as much of its end and its start as fits. A name alike to
// no other is shortened as ShortPlace does.
func Apart(name string, others []string, w int) string {
	if Width(name) <= w {
		return name
	}
	r := []rune(name)
	from, to := telling(r, others)
	if from == 0 && to == len(r) {
		return ShortPlace(name, w)
	}
	return Span{from, to}.Cut(name, w)
}

// Span is the part of a name, in runes [From, To), that tells it apart
// from the names it is shown with.
type Span struct{ From, To int }

// Cut shortens name to w cells as Apart does, with its telling part known.
func (s Span) Cut(name string, w int) string {
	if Width(name) <= w {
		return name
	}
	r := []rune(name)
	if s.From <= 0 && s.To >= len(r) || s.From >= s.To || s.To > len(r) {
		return cutMiddle(r, w)
	}
	return cutAround(r, s.From, s.To, w)
}

// Spans finds the telling part of each of names at once, for a list: the
// name most alike to each at its start is a neighbour in sorted order, and
// so at its end among the names reversed.
func Spans(names []string) []Span {
	n := len(names)
	rs := make([][]rune, n)
	rev := make([][]rune, n)
	for i, s := range names {
		rs[i] = []rune(s)
		rev[i] = make([]rune, len(rs[i]))
		for k, c := range rs[i] {
			rev[i][len(rs[i])-1-k] = c
		}
	}
	prefix, suffix := make([]int, n), make([]int, n)
	shared := func(keys [][]rune, out []int) {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return string(keys[order[a]]) < string(keys[order[b]]) })
		for k := 1; k < n; k++ {
			a, b := order[k-1], order[k]
			if string(keys[a]) == string(keys[b]) {
				continue
			}
			p := 0
			for p < len(keys[a]) && p < len(keys[b]) && keys[a][p] == keys[b][p] {
				p++
			}
			out[a], out[b] = max(out[a], p), max(out[b], p)
		}
	}
	shared(rs, prefix)
	shared(rev, suffix)
	out := make([]Span, n)
	for i := range out {
		if len(rs[i]) > 0 {
			out[i].From, out[i].To = whole(rs[i], prefix[i], len(rs[i])-suffix[i])
		}
	}
	return out
}

// telling is the part of r, as rune indices [from, to), that no other
// shares at its start or end.
func telling(r []rune, others []string) (from, to int) {
	n := len(r)
	to = n
	for _, o := range others {
		or := []rune(o)
		if string(or) == string(r) {
			continue
		}
		p := 0
		for p < n && p < len(or) && r[p] == or[p] {
			p++
		}
		q := 0
		for q < n && q < len(or) && r[n-1-q] == or[len(or)-1-q] {
			q++
		}
		from, to = max(from, p), min(to, n-q)
	}
	return whole(r, from, to)
}

// whole widens the telling part r[from:to] to the words it cuts into
// (between '/', '.' and ':'), so "eu-we" reads "eu-west-1".
func whole(r []rune, from, to int) (int, int) {
	n := len(r)
	from = min(from, n-1) // a name another extends is told apart by its end
	to = max(to, from+1)
	sep := func(c rune) bool { return c == '/' || c == '.' || c == ':' }
	for from > 0 && !sep(r[from-1]) {
		from--
	}
	for to < n && !sep(r[to]) {
		to++
	}
	return from, to
}

// cutMiddle keeps the start and the end of r, an ellipsis between.
func cutMiddle(r []rune, w int) string {
	if w <= 1 {
		return Truncate(string(r), w)
	}
	head := (w - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(w-1-head):])
}

// cutAround keeps r[from:to], then as much of the end, then of the start,
// as fits in w cells, an ellipsis wherever runes are left out.
func cutAround(r []rune, from, to, w int) string {
	n := len(r)
	if w <= 1 {
		return Truncate(string(r), w)
	}
	if room := w - 1 - min(1, n-to); to-from > room {
		// The telling part alone is too long: its end, which is where
		// names most often differ (a version, a directory's name).
		s := "…" + string(r[to-room:to])
		if to < n {
			s += "…"
		}
		return s
	}
	keep := make([]bool, n)
	width := 1 // nothing kept: one ellipsis
	add := func(i int) bool {
		left, right := i == 0 || keep[i-1], i == n-1 || keep[i+1]
		d := 1
		switch {
		case left && right:
			d-- // it joins two kept runs, or ends the only gap
		case !left && !right:
			d++ // it splits a gap in two
		}
		if width+d > w {
			return false
		}
		keep[i], width = true, width+d
		return true
	}
	for i := from; i < to && add(i); i++ {
	}
	for i := n - 1; i >= to && add(i); i-- {
	}
	for i := 0; i < from && add(i); i++ {
	}
	var b strings.Builder
	for i, c := range r {
		switch {
		case keep[i]:
			b.WriteRune(c)
		case i == 0 || keep[i-1]:
			b.WriteString("…")
		}
	}
	return b.String()
}
