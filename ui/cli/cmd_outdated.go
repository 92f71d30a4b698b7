package cli

import (
	"context"
	"fmt"
	gosync "sync"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

const outdatedLong = `For every provider MIRROR holds, list the releases upstream that MIRROR lacks:
missing, when the constraints want it (sync would add it), and newer, when it
is newer than MIRROR's newest version of the provider but outside the
constraints. Only version lists are read, one request per provider.

Upstream is --source PLACE for every provider (an origin registry, a network
mirror, another mirror), or by default each provider's origin registry,
registry://HOSTNAME. The constraints are --version; without it every release
newer than MIRROR's newest is wanted (prereleases are shown as newer).

With --spec FILE, upstream and constraints are the spec's: each provider it
wants, from its source, at the versions its constraints and lock files
resolve to (also the providers MIRROR does not hold yet).

Places that cannot list their providers (a network mirror, an OCI mirror
without a catalogue) need --provider. Module mirrors are not compared yet.

Exits 1 when a wanted release is missing, or an upstream could not be read.`

const outdatedExample = `  tfmirror outdated ./mirror
  tfmirror outdated ./mirror --source registry://registry.opentofu.org -p hashicorp/aws -v "~> 5.0"
  tfmirror outdated ./mirror --spec mirror.hcl --json
  tfmirror outdated oci://registry.corp/tf/'${hostname}/${namespace}/${type}' --source https://mirror.corp/tf/ --json`

// outdatedFlags are outdated's options, bound to its flags.
type outdatedFlags struct {
	providers                    []string
	source, constraint, specFile string
	asJSON                       bool
}

func newOutdatedCmd(env *Env) *cobra.Command {
	var o outdatedFlags
	cmd := &cobra.Command{
		Use:     "outdated MIRROR [--spec FILE | --source PLACE] [--provider ADDR] [--version C] [--json]",
		Short:   "List the releases upstream that a mirror lacks",
		Long:    outdatedLong,
		Example: outdatedExample,
		Args:    exactArgs(1, "MIRROR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOutdated(cmd.Context(), env, &o, args, streamsOf(cmd))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.specFile, "spec", "", "compare with what the mirror spec `FILE` wants: each provider's source and the versions it resolves to (MIRROR must be one of its destinations)")
	f.StringVar(&o.source, "source", "", "where releases are published, for every provider (`PLACE`: registry://HOST, https://MIRROR/, a directory, oci://...); default each provider's origin registry")
	f.StringSliceVarP(&o.providers, "provider", "p", nil, "provider HOST/NAMESPACE/TYPE, or NAMESPACE/TYPE on any host (repeatable); default every provider MIRROR holds")
	f.StringVarP(&o.constraint, "version", "v", "", `the versions MIRROR should hold ("~> 5.0", ">= 1.2", "latest"); default every release newer than MIRROR's newest`)
	f.BoolVar(&o.asJSON, "json", false, `print a JSON array of {"provider","version","status","newest","source","detail"}`)
	return cmd
}

// runOutdated lists the releases upstream that the mirror args[0] lacks.
func runOutdated(ctx context.Context, env *Env, o *outdatedFlags, args []string, st streams) error {
	sf := selectionFlags{providers: o.providers, version: o.constraint}
	sel, err := sf.baseSelection()
	if err != nil {
		return err
	}
	up, also, err := outdatedUpstream(ctx, env, st, args[0], o.source, o.specFile, sel.Versions)
	if err != nil {
		return err
	}
	mirror, err := openPlace(ctx, args[0], env.placeOptions())
	if err != nil {
		return err
	}
	rows, err := sync.Outdated(ctx, mirror, sync.Selection{Providers: sel.Providers}, up, also...)
	st.warnings(mirror)
	if err != nil {
		return noCatalogue(err)
	}
	if err := report.Outdated(st.stdout, rows, o.asJSON); err != nil {
		return err
	}
	findings := make([]sync.Finding, len(rows))
	for i, r := range rows {
		findings[i] = r.Finding()
	}
	if !o.asJSON {
		fmt.Fprintf(st.stderr, "%s: %s\n", mirror, outdatedSummary(findings))
	}
	for _, f := range findings {
		if f.Status == sync.StatusMissing || f.Status == sync.StatusError {
			return errProblem
		}
	}
	return nil
}

func outdatedSummary(fs []sync.Finding) string {
	if len(fs) == 0 {
		return "up to date"
	}
	return report.Summary(fs)
}

// outdatedUpstream is where outdated looks: the spec's sources and
// versions with --spec (and the providers it wants), else upstream's.
func outdatedUpstream(ctx context.Context, env *Env, st streams, mirror, source, specFile string, c backends.VersionConstraint) (sync.Upstream, []backends.Provider, error) {
	if specFile == "" {
		up, err := upstream(ctx, env, source, c)
		return up, nil, err
	}
	if source != "" || !c.IsZero() {
		return nil, nil, usageErr("--spec names the sources and versions: --source and --version do not apply with it")
	}
	_, w, d, err := specFor(ctx, env, st, specFile, mirror)
	if err != nil {
		return nil, nil, err
	}
	return w.Upstream(d), w.Providers(d), nil
}

// upstream is where outdated looks: --source for every provider, or each
// provider's origin registry, opened once per host.
func upstream(ctx context.Context, env *Env, source string, c backends.VersionConstraint) (sync.Upstream, error) {
	var want func([]backends.Version) []backends.Version
	if !c.IsZero() {
		want = c.ProviderVersions
	}
	if source != "" {
		src, err := openPlace(ctx, source, env.placeOptions())
		if err != nil {
			return nil, err
		}
		return func(context.Context, backends.Provider) (backends.Reader, func([]backends.Version) []backends.Version, error) {
			return src, want, nil
		}, nil
	}
	var mu gosync.Mutex
	registries := map[string]backends.Reader{}
	return func(ctx context.Context, p backends.Provider) (backends.Reader, func([]backends.Version) []backends.Version, error) {
		mu.Lock()
		defer mu.Unlock()
		if r, ok := registries[p.Hostname]; ok {
			return r, want, nil
		}
		r, err := openPlace(ctx, "registry://"+p.Hostname, env.placeOptions())
		if err != nil {
			return nil, nil, fmt.Errorf("%v (name another upstream with --source PLACE)", err)
		}
		registries[p.Hostname] = r
		return r, want, nil
	}, nil
}
