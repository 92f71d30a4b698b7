package place

import (
	"os"
	"regexp"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
)

// Place arguments as a shell or a slip of the hand leaves them: caught
// with what was probably meant, as usage errors (exit 2), before they are
// taken for a directory that does not exist or an invalid repository.

// bareSymbol is a template symbol written without its "$": {namespace}.
var bareSymbol = regexp.MustCompile(`(^|[^$])\{([a-z]+)\}`)

// expandedTemplate catches an oci:// template a shell has been through:
// unquoted (or in double quotes), ${namespace} and ${type} become empty,
// leaving an empty path segment (oci://REG/tf//) or a trailing slash; and
// {namespace} without its "$" is no symbol at all.
func expandedTemplate(arg, target string) error {
	_, path, _ := strings.Cut(target, "/")
	if m := bareSymbol.FindStringSubmatch(target); m != nil {
		fixed := bareSymbol.ReplaceAllString(arg, "$1$${$2}")
		return backends.Usagef("place %s: {%s} is not a template symbol, ${%s} is: the shell probably expanded ${...}: quote the template, e.g. '%s'", arg, m[2], m[2], fixed)
	}
	if path == "" || strings.Contains(path, "//") || strings.HasSuffix(path, "/") {
		prefix := arg
		if i := strings.Index(arg[len("oci://"):], "//"); i >= 0 {
			prefix = arg[:len("oci://")+i]
		}
		prefix = strings.TrimSuffix(prefix, "/")
		return backends.Usagef("place %s: the repository template has an empty part: the shell probably expanded ${...}: quote the template, e.g. '%s/${namespace}/${type}'", arg, prefix)
	}
	return nil
}

// missingColon catches a scheme written without its colon (https//host),
// which would otherwise be taken for a directory named https.
func missingColon(arg string) error {
	scheme, rest, ok := strings.Cut(arg, "//")
	if !ok {
		return nil
	}
	switch strings.ToLower(scheme) {
	case "file", "https", "http", "registry", "oci", "s3":
	default:
		return nil
	}
	if _, err := os.Stat(arg); err == nil {
		return nil // a directory named so, after all
	}
	return backends.Usagef("place %s: did you mean %s://%s? (a scheme is followed by \"://\"; a directory named %s can be written ./%s)", arg, scheme, rest, scheme, arg)
}
