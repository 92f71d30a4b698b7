package lockfile

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The clients write a provider's version constraints in a lock file in one
// canonical form and refuse any other spelling of them when they read it, so
// that diffs of the file only ever show changes of meaning. The parser and
// printer below reproduce that form: the clients' "Ruby-style" syntax
// (operators =, !=, >, >=, <, <=, ~>; one to three numeric parts; optional
// -prerelease and +metadata), deduplicated, sorted by boundary then operator,
// missing parts written as zeros, "~> X" and "~> X.Y" written as "~> X.Y".

type constraintOp int

// Operator order is the tie-break the clients use between terms with the same
// boundary; the numeric values are that priority.
const (
	opGreater constraintOp = iota + 1
	opGreaterEqual
	opEqual
	opPessimisticPatch // ~> X.Y.Z
	opPessimisticMinor // ~> X or ~> X.Y
	opLessEqual
	opLess
	opNotEqual
)

var opText = map[constraintOp]string{
	opGreater:          "> ",
	opGreaterEqual:     ">= ",
	opEqual:            "",
	opPessimisticPatch: "~> ",
	opPessimisticMinor: "~> ",
	opLessEqual:        "<= ",
	opLess:             "< ",
	opNotEqual:         "!= ",
}

// constraintTerm is one comma-separated part of a constraint string, with
// unwritten numeric parts already taken as zero (they mean the same).
type constraintTerm struct {
	op                  constraintOp
	major, minor, patch string // decimal digits, no leading zeros
	pre, meta           string
}

func (t constraintTerm) String() string {
	var b strings.Builder
	b.WriteString(opText[t.op])
	b.WriteString(t.major + "." + t.minor)
	if t.op != opPessimisticMinor {
		b.WriteString("." + t.patch)
	}
	if t.pre != "" {
		b.WriteString("-" + t.pre)
	}
	if t.meta != "" {
		b.WriteString("+" + t.meta)
	}
	return b.String()
}

// CanonicalConstraints parses a version constraint string as the clients do
// and returns the form they write in lock files. An empty string gives "".
func CanonicalConstraints(s string) (string, error) {
	terms, err := parseConstraints(s)
	if err != nil {
		return "", err
	}
	seen := map[constraintTerm]bool{}
	uniq := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	sort.SliceStable(uniq, func(i, j int) bool {
		if c := compareBoundary(uniq[i], uniq[j]); c != 0 {
			return c < 0
		}
		return uniq[i].op < uniq[j].op
	})
	parts := make([]string, len(uniq))
	for i, t := range uniq {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", "), nil
}

func parseConstraints(s string) ([]constraintTerm, error) {
	var out []constraintTerm
	rest := strings.TrimSpace(s)
	for rest != "" {
		term, remain, err := parseTerm(rest)
		if err != nil {
			return nil, fmt.Errorf("constraint %q: %w", s, err)
		}
		out = append(out, term)
		remain = strings.TrimSpace(remain)
		if remain == "" {
			break
		}
		switch {
		case strings.HasPrefix(remain, "v"):
			return nil, fmt.Errorf(`constraint %q: a "v" prefix should not be used when specifying versions`, s)
		case !strings.HasPrefix(remain, ","):
			return nil, fmt.Errorf("constraint %q: missing comma after %q", s, strings.TrimSpace(rest[:len(rest)-len(remain)]))
		}
		rest = strings.TrimSpace(remain[1:])
		if rest == "" {
			return nil, fmt.Errorf("constraint %q: nothing after the last comma", s)
		}
	}
	return out, nil
}

// parseTerm reads one term from the front of s and returns what follows it.
func parseTerm(s string) (constraintTerm, string, error) {
	var t constraintTerm
	var err error
	if t.op, s, err = parseOperator(s); err != nil {
		return t, "", err
	}
	nums, s, err := scanNumbers(s)
	if err != nil {
		return t, "", err
	}
	if t.op == opPessimisticMinor && len(nums) == 3 {
		t.op = opPessimisticPatch
	}
	for len(nums) < 3 {
		nums = append(nums, "0")
	}
	t.major, t.minor, t.patch = nums[0], nums[1], nums[2]
	if len(s) > 0 && s[0] == '-' {
		if t.pre, s, err = scanExtra(s[1:], "prerelease"); err != nil {
			return t, "", err
		}
	}
	if len(s) > 0 && s[0] == '+' {
		if t.meta, s, err = scanExtra(s[1:], "build metadata"); err != nil {
			return t, "", err
		}
	}
	return t, s, nil
}

// parseOperator reads a term's operator and the spacing after it, and returns
// what follows. It is a step of its own because the clients refuse most of
// their spelling mistakes here, each with its own message ("=<", a "v"
// prefix, more than one space). "~>" comes back as opPessimisticMinor; only
// the number of parts that follow can tell it is opPessimisticPatch.
func parseOperator(s string) (constraintOp, string, error) {
	i := 0
	for i < len(s) && strings.IndexByte("<>=!~", s[i]) >= 0 {
		i++
	}
	var c constraintOp
	op := s[:i]
	switch op {
	case "", "=":
		c = opEqual
	case "!=":
		c = opNotEqual
	case ">":
		c = opGreater
	case ">=":
		c = opGreaterEqual
	case "<":
		c = opLess
	case "<=":
		c = opLessEqual
	case "~>":
		c = opPessimisticMinor
	case "=<":
		return 0, "", errors.New(`invalid operator "=<"; did you mean "<="?`)
	case "=>":
		return 0, "", errors.New(`invalid operator "=>"; did you mean ">="?`)
	default:
		return 0, "", fmt.Errorf("invalid operator %q", op)
	}
	j := i
	for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == 'v') {
		j++
	}
	switch sep := s[i:j]; {
	case sep == "":
	case strings.ContainsRune(sep, 'v'):
		return 0, "", errors.New(`a "v" prefix should not be used when specifying versions`)
	case op == "":
		return 0, "", errors.New("extraneous spaces at start of specification")
	case sep != " ":
		return 0, "", fmt.Errorf("only one space is expected after the operator %q", op)
	}
	return c, s[j:], nil
}

// scanNumbers reads the dot-separated numeric parts of a term's version, one
// to three of them, without leading zeros, and returns what follows. The
// clients refuse wildcards here rather than reading them as "any".
func scanNumbers(s string) ([]string, string, error) {
	var nums []string
	for {
		k := 0
		for k < len(s) && (isDigit(s[k]) || s[k] == '*' || s[k] == 'x' || s[k] == 'X') {
			k++
		}
		part := s[:k]
		switch {
		case part == "":
			return nil, "", errors.New("a version number is expected")
		case strings.ContainsAny(part, "*xX"):
			return nil, "", errors.New("wildcards are not allowed; omit the parts that should be unconstrained")
		}
		nums = append(nums, trimLeadingZeros(part))
		s = s[k:]
		if len(s) == 0 || s[0] != '.' {
			break
		}
		s = s[1:]
	}
	if len(nums) > 3 {
		return nil, "", errors.New("too many numbered portions; only three are allowed (major, minor, patch)")
	}
	return nums, s, nil
}

// scanExtra reads dot-separated identifiers of letters, digits and dashes.
func scanExtra(s, what string) (string, string, error) {
	k := 0
	for k < len(s) && (isDigit(s[k]) || isLetter(s[k]) || s[k] == '-' || s[k] == '.') {
		k++
	}
	extra := s[:k]
	for _, id := range strings.Split(extra, ".") {
		if id == "" {
			return "", "", fmt.Errorf("empty identifier in the %s portion", what)
		}
	}
	return extra, s[k:], nil
}

func trimLeadingZeros(d string) string {
	d = strings.TrimLeft(d, "0")
	if d == "" {
		return "0"
	}
	return d
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// compareBoundary orders terms by their version with semver precedence, and
// versions equal but for build metadata by that metadata, as the clients
// order them.
func compareBoundary(a, b constraintTerm) int {
	for _, p := range [][2]string{{a.major, b.major}, {a.minor, b.minor}, {a.patch, b.patch}} {
		if c := compareNumeric(p[0], p[1]); c != 0 {
			return c
		}
	}
	switch {
	case a.pre == b.pre:
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	case extraLess(a.pre, b.pre):
		return -1
	default:
		return 1
	}
	switch {
	case a.meta == b.meta:
		return 0
	case extraLess(a.meta, b.meta):
		return -1
	}
	return 1
}

func compareNumeric(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// extraLess orders prerelease (and, for sorting only, metadata) strings the
// way the clients' version library does: identifier by identifier, except
// that when one string is on its last identifier and the other is not, the
// shorter one comes first without comparing that identifier.
func extraLess(a, b string) bool {
	if a == b {
		return false
	}
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; ; i++ {
		lastA, lastB := i == len(pa)-1, i == len(pb)-1
		switch {
		case lastA && !lastB:
			return true
		case lastB && !lastA:
			return false
		case lastA:
			return identLess(pa[i], pb[i])
		case pa[i] != pb[i]:
			return identLess(pa[i], pb[i])
		}
	}
}

func identLess(a, b string) bool {
	na, nb := allDigits(a), allDigits(b)
	switch {
	case na && !nb:
		return true
	case nb && !na:
		return false
	case na:
		return compareNumeric(a, b) < 0
	}
	return a < b
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
