package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/place"
)

// configSuggestFlags are config suggest's options, bound to its flags.
type configSuggestFlags struct {
	providers []string
	hosts     hostFlags
}

func newConfigSuggestCmd(env *Env) *cobra.Command {
	var f configSuggestFlags
	cmd := &cobra.Command{
		Use:   "suggest PLACE [-p HOST/NAMESPACE/TYPE...] | suggest PLACE --serve-url URL [--host HOST...]",
		Short: "Print the provider_installation block for a mirror as it is",
		Long: `Print the provider_installation block that makes Terraform and OpenTofu install
what PLACE holds from it, and everything else directly: the mirror's block
(filesystem_mirror for a directory, network_mirror for an https:// mirror or a
bucket, oci_mirror for oci://) with include naming each provider it holds, and a
direct block that excludes exactly those. A bare direct {} beside a partial
mirror would let the clients fetch the mirror's providers from the origin
(hashicorp/terraform#39104).

A place that cannot list its providers (a network mirror, an OCI template
without ${hostname} or whose registry refuses its catalogue) takes them from -p.
With --serve-url URL (where tfmirror serve answers for PLACE), it prints
instead a host block for each hostname PLACE mirrors (its providers', and those
named with --host): the block moves that hostname's registry protocols
(providers.v1 and modules.v1) onto the mirror, with no provider_installation
and no module source rewritten; the clients then check each provider's origin
signature themselves and lock every platform's signed hash. The note after the
blocks says which credentials the clients send where.

Exits 1 when PLACE holds no provider.`,
		Example: `  tfmirror config suggest ./mirror >> ~/.terraformrc
  tfmirror config suggest 'oci://reg.corp/tf/${hostname}/${namespace}/${type}'   # a template the registry's catalogue can list
  tfmirror config suggest https://mirror.corp/ -p registry.terraform.io/hashicorp/aws
  tfmirror config suggest ./mirror --serve-url https://mirror.corp:8443/ --host registry.opentofu.org`,
		Args: exactArgs(1, "PLACE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConfigSuggest(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	cmd.Flags().StringArrayVarP(&f.providers, "provider", "p", nil, "a provider the place holds, HOST/NAMESPACE/TYPE (for places that cannot list theirs)")
	cmd.Flags().StringVar(&f.hosts.serveURL, "serve-url", "", "print host blocks for the mirror tfmirror serve answers at `URL` (its registry protocols), instead of provider_installation")
	cmd.Flags().StringArrayVar(&f.hosts.hosts, "host", nil, "with --serve-url: a hostname the mirror serves besides its providers' (modules, pull-through)")
	return cmd
}

// runConfigSuggest prints the provider_installation block for args[0], or
// with --serve-url its host blocks.
func runConfigSuggest(ctx context.Context, env *Env, f *configSuggestFlags, args []string, st streams) error {
	if f.hosts.serveURL != "" {
		if len(f.providers) > 0 {
			return usageErr("config suggest: -p names providers for provider_installation; with --serve-url, name hostnames with --host")
		}
		return suggestHosts(ctx, st.stdout, env, args[0], f.hosts)
	}
	if len(f.hosts.hosts) > 0 {
		return usageErr("config suggest: --host adds a hostname to the host blocks --serve-url prints: give --serve-url too")
	}
	return suggestConfig(ctx, st.stdout, env, args[0], f.providers)
}

// suggestConfig prints the block for arg.
func suggestConfig(ctx context.Context, out io.Writer, env *Env, arg string, named []string) error {
	s, err := place.Discover(ctx, arg)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	method, err := mirrorMethod(s, env)
	if err != nil {
		return err
	}
	var held []string
	for _, n := range named {
		p, err := backends.ParseProvider(n)
		if err != nil {
			return usageErr("config suggest: -p %q: %v (give HOST/NAMESPACE/TYPE)", n, err)
		}
		held = append(held, p.String())
	}
	if len(held) == 0 {
		r, err := openPlace(ctx, arg, env.placeOptions())
		if err != nil {
			return err
		}
		ps, err := r.Providers(ctx)
		if errors.Is(err, backends.ErrNoCatalogue) {
			return usageErr("config suggest: %s cannot list its providers: name them with -p HOST/NAMESPACE/TYPE", arg)
		}
		if err != nil {
			return err
		}
		for _, p := range ps {
			// A provider directory or repository with no version in it
			// holds nothing to install.
			if vs, err := r.Versions(ctx, p); err == nil && len(vs) > 0 {
				held = append(held, p.String())
			}
		}
	}
	if len(held) == 0 {
		fmt.Fprintf(out, "# %s holds no provider: nothing to install from it\n", arg)
		return errProblem
	}
	list := "[\n" + quotedLines(held, "      ") + "    ]"
	fmt.Fprintf(out, "provider_installation {\n  %s {\n%s    include = %s\n  }\n  direct {\n    exclude = %s\n  }\n}\n",
		method.name, method.body, list, list)
	if u, err := url.Parse(arg); err == nil && s.Kind == place.NetMirror && u.Host != "" {
		fmt.Fprint(out, credentialsHint(strings.ToLower(u.Host)))
	}
	return nil
}

type mirrorBlock struct{ name, body string }

// mirrorMethod is the installation method that reads place s.
func mirrorMethod(s place.Spec, env *Env) (mirrorBlock, error) {
	switch s.Kind {
	case place.FS:
		abs, err := filepath.Abs(s.Target)
		if err != nil {
			return mirrorBlock{}, err
		}
		return mirrorBlock{"filesystem_mirror", fmt.Sprintf("    path    = %q\n", abs)}, nil
	case place.NetMirror:
		url := s.Raw
		if !strings.HasSuffix(url, "/") {
			url += "/"
		}
		return mirrorBlock{"network_mirror", fmt.Sprintf("    url     = %q\n", url)}, nil
	case place.OCI:
		return mirrorBlock{"oci_mirror", fmt.Sprintf("    repository_template = %q\n", s.Target)}, nil
	case place.S3:
		bucket, prefix, _ := strings.Cut(s.Target, "/")
		url := "https://" + bucket + ".s3.amazonaws.com/"
		if env.s3Endpoint != "" {
			url = strings.TrimSuffix(env.s3Endpoint, "/") + "/" + bucket + "/"
		}
		if prefix != "" {
			url += strings.Trim(prefix, "/") + "/"
		}
		return mirrorBlock{"network_mirror", fmt.Sprintf("    # the bucket must be readable over HTTPS (or serve it: tfmirror serve %s)\n    url     = %q\n", s.Raw, url)}, nil
	}
	return mirrorBlock{}, usageErr("config suggest: %s is not a mirror the clients read (a directory, https://, oci:// or s3://)", s.Raw)
}

func quotedLines(ss []string, indent string) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s%q,\n", indent, s)
	}
	return b.String()
}
