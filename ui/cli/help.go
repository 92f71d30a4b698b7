package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpTemplate puts how to call a command first (its one-line description,
// usage, examples and flags, as gh and kubectl do) and the long explanation
// after, under Details.
const helpTemplate = `{{with (or .Short .Long)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}{{if and .Short .Long}}
Details:
{{.Long | trimTrailingWhitespaces}}
{{end}}`

// flagError is cobra's flag error made a usage error, with the nearest flag
// named where the unknown one looks like a typo of it.
func flagError(c *cobra.Command, err error) error {
	if s := suggestFlag(c, err.Error()); s != "" {
		return usageErr("%v (did you mean %s? see %s --help)", err, s, c.CommandPath())
	}
	return usageErr("%v (see %s --help)", err, c.CommandPath())
}

// suggestFlag returns the flag of c nearest to the unknown one that msg (pflag's
// "unknown flag: --NAME" or "unknown shorthand flag: 'x' in -xyz") names, or ""
// when none is near enough to be a typo.
func suggestFlag(c *cobra.Command, msg string) string {
	const prefix = "unknown flag: --"
	i := strings.Index(msg, prefix)
	if i < 0 {
		return ""
	}
	typed := strings.TrimSpace(msg[i+len(prefix):])
	if typed == "" {
		return ""
	}
	var names []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	sort.Strings(names)
	best, bestDist := "", 0
	for _, n := range names {
		d := levenshtein.Distance(strings.ToLower(typed), n, nil)
		if strings.HasPrefix(n, typed) && len(typed) >= 3 {
			d = 1 // an abbreviation, as --plat for --platform
		}
		if d > 1 && sameLetters(typed, n) {
			d = 1 // letters swapped, as --jsno for --json
		}
		if best == "" || d < bestDist {
			best, bestDist = n, d
		}
	}
	if best == "" || bestDist > min(3, max(1, len(typed)/2)) {
		return ""
	}
	return fmt.Sprintf("--%s", best)
}

// sameLetters reports whether a and b are anagrams of each other.
func sameLetters(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := []byte(a), []byte(b)
	sort.Slice(x, func(i, j int) bool { return x[i] < x[j] })
	sort.Slice(y, func(i, j int) bool { return y[i] < y[j] })
	return string(x) == string(y)
}
