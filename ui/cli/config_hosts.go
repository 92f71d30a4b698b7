package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/regserve"
)

// hostFlags are config suggest's --serve-url and --host: host blocks
// instead of provider_installation.
type hostFlags struct {
	serveURL string
	hosts    []string
}

// suggestHosts prints, for each hostname arg mirrors (its providers'
// and those --host names), the host block that moves its registry
// protocols onto the mirror serve answers at base, and the credentials
// note.
func suggestHosts(ctx context.Context, out io.Writer, env *Env, arg string, f hostFlags) error {
	u, err := url.Parse(f.serveURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return usageErr("config suggest: --serve-url %q: want the https:// URL tfmirror serve answers at (it prints it), e.g. https://mirror.corp:8443/", f.serveURL)
	}
	base := strings.TrimSuffix(u.String(), "/")
	var hosts []string
	for _, h := range f.hosts {
		n, err := backends.NormalizeHostname(h)
		if err != nil {
			return usageErr("config suggest: --host %q: %v", h, err)
		}
		hosts = append(hosts, n)
	}
	r, err := openPlace(ctx, arg, env.placeOptions())
	if err != nil {
		return err
	}
	ps, err := r.Providers(ctx)
	switch {
	case errors.Is(err, backends.ErrNoCatalogue) && len(hosts) > 0:
	case errors.Is(err, backends.ErrNoCatalogue):
		return usageErr("config suggest: %s cannot list its providers: name the hostnames it mirrors with --host HOST", arg)
	case err != nil:
		return err
	}
	for _, p := range ps {
		// A provider directory with no version in it mirrors nothing.
		if vs, err := r.Versions(ctx, p); err == nil && len(vs) > 0 {
			hosts = append(hosts, p.Hostname)
		}
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	if len(hosts) == 0 {
		fmt.Fprintf(out, "# %s mirrors no hostname: name those it serves with --host HOST\n", arg)
		return errProblem
	}
	fmt.Fprintf(out, "# The registry protocols of each hostname %s mirrors, answered by tfmirror serve at %s/\n", arg, base)
	for _, h := range hosts {
		fmt.Fprint(out, hostBlockText(base, h))
	}
	fmt.Fprintf(out, "# Credentials: a client sends the token it holds for a hostname above (its credentials \"HOST\"\n"+
		"# block or TF_TOKEN_ variable) to %s, not to the hostname's own registry: give it a token for the mirror\n"+
		"# (or none), never the origin's.\n", u.Host)
	for _, h := range hosts {
		fmt.Fprint(out, credentialsHint(h))
	}
	return nil
}

// credentialsHint is the credentials block a client needs for host when
// the mirror asks for a token (tfmirror serve --auth), commented out: the
// token is the operator's to give.
func credentialsHint(host string) string {
	env := " (or set " + backends.TokenEnvName(host) + ")"
	if strings.Contains(host, ":") {
		env = "" // a variable's name cannot hold a port
	}
	return fmt.Sprintf("# If the mirror asks for a token (tfmirror serve --auth), uncomment with it%s:\n"+
		"# credentials %q {\n#   token = \"TOKEN\"\n# }\n", env, host)
}

// hostBlockText is the host block for hostname host served at base.
func hostBlockText(base, host string) string {
	return fmt.Sprintf("host %q {\n  services = {\n    \"providers.v1\" = %q\n    \"modules.v1\"   = %q\n  }\n}\n",
		host, base+regserve.ProvidersPrefix+host+"/", base+regserve.ModulesPrefix+host+"/")
}
