package push

import (
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/ocitemplate"
)

// ConfigBlock returns the provider_installation block that makes OpenTofu
// install providers from the mirror, with notes on anything that would stop
// it working: OpenTofu requires the template to use every symbol the include
// patterns do not pin to one value, and it reaches registries over HTTPS
// only.
func ConfigBlock(t *ocitemplate.Template, providers []backends.Provider, plainHTTP bool) (string, []string) {
	var includes []string
	for _, p := range providers {
		includes = append(includes, p.String())
	}
	var notes []string
	for _, u := range t.Unpinned(providers) {
		notes = append(notes, fmt.Sprintf("OpenTofu will refuse this block: the template does not use ${%s}, but the providers have %d %ss; push them with a template that uses ${%s}, or put them in separate oci_mirror blocks", u.Symbol, len(u.Values), u.Symbol, u.Symbol))
	}
	if plainHTTP {
		notes = append(notes, "OpenTofu reaches OCI registries over HTTPS only; this registry was pushed to over plain HTTP")
	}

	var b strings.Builder
	b.WriteString("provider_installation {\n  oci_mirror {\n")
	fmt.Fprintf(&b, "    repository_template = %s\n", quote(t.String()))
	writeList(&b, "    include             = ", includes)
	b.WriteString("  }\n  direct {\n")
	writeList(&b, "    exclude = ", includes)
	b.WriteString("  }\n}\n")
	return b.String(), notes
}

func writeList(b *strings.Builder, prefix string, items []string) {
	b.WriteString(prefix)
	if len(items) <= 1 {
		b.WriteString("[")
		for _, it := range items {
			b.WriteString(quote(it))
		}
		b.WriteString("]\n")
		return
	}
	indent := strings.Repeat(" ", len(prefix)-len(strings.TrimLeft(prefix, " ")))
	b.WriteString("[\n")
	for _, it := range items {
		fmt.Fprintf(b, "%s  %s,\n", indent, quote(it))
	}
	b.WriteString(indent + "]\n")
}

// quote writes s as an HCL string literal. ${ is kept: in
// repository_template it is the template syntax OpenTofu evaluates.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
