package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/ui"
	"github.com/tfmirror/tfmirror/ui/demo"
)

const demoLong = `Build a small sample world and open the UI on it, so each of tfmirror's three
jobs can be tried with no setup:

  [1] an HTTPS network mirror on 127.0.0.1 (self-signed certificate) serving
      [2], its downloads slowed (--rate) so transfers can be watched;
  [2] a filesystem mirror, "primary", with four synthetic providers
      (acme/cloud, acme/dns, acme/queue, acme/legacy: real zips holding a small
      script), several versions and up to five platforms, with index documents
      stating hashes (not compared at first: press 2);
  [3] a second filesystem mirror, "secondary", that lacks some platforms and
      versions, and holds one archive (acme/cloud 2.0.0 linux_amd64) with
      different content;
  [4] release/, a provider release (acme/widget 1.0.0) signed as goreleaser
      leaves it, its key release/acme.asc;
  [5] an OCI registry on 127.0.0.1 over HTTPS (the CNCF distribution
      registry, in process, storing in DIR/oci), empty, written as
      oci://127.0.0.1:PORT/tf/${namespace}/${type};
  [6] a module registry on 127.0.0.1 offering acme/network/aws and
      acme/cluster/aws, a few versions each;
  [7] a directory of module packages, "modules", holding acme/network/aws
      1.0.0 only.

Curate: queue what [3] lacks from [1] (select cells, enter, enter), watch the
hashes checked as each archive lands, and try v (verify) on the archive that
differs. Push a release: pick acme/widget, r selects its row, enter, choose
[5], enter: each zip is checked against the signed SHA256SUMS and pushed.
Press m for the Modules view.

Lock-file gaps: --lock opens the same world on infra/.terraform.lock.hcl, a
configuration's lock file naming versions the secondary mirror lacks
packages of; L queues every gap.

Everything is removed on exit unless --keep DIR is given. A kept world prints
how to try each job on it from the command line; --serve DIR serves a kept
world's network mirror and OCI registry until interrupted, and prints those
commands with their addresses.`

const demoExample = `  tfmirror demo
  tfmirror demo --lock                        # the lock-file gaps job
  tfmirror demo --keep /tmp/world             # keep the world, and what you pushed
  tfmirror demo --keep /tmp/world --no-ui     # build it, print the places, exit
  tfmirror demo --serve /tmp/world            # serve a kept world until Ctrl-C`

// demoFlags are the flags of tfmirror demo.
type demoFlags struct {
	keep, serve string
	rate, jobs  int
	noUI, lock  bool
}

func newDemoCmd(env *Env) *cobra.Command {
	var d demoFlags
	cmd := &cobra.Command{
		Use:     "demo",
		Short:   "Open the UI over a sample world built in a temp dir",
		Long:    demoLong,
		Example: demoExample,
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), env, &d, args, streamsOf(cmd))
		},
	}
	f := cmd.Flags()
	f.StringVar(&d.keep, "keep", "", "build the world in DIR (new or empty) and keep it after exit")
	f.StringVar(&d.serve, "serve", "", "serve the kept world in `DIR` (its network mirror and OCI registry) without the UI until interrupted, printing how to try each job on it")
	f.IntVar(&d.rate, "rate", 1<<20, "bytes per second the network mirror serves archives at (0: full speed)")
	jobsVar(f, &d.jobs, 4, "how many archives to transfer at once")
	f.BoolVar(&d.noUI, "no-ui", false, "with --keep: build the world, print the two mirror directories, and exit")
	f.BoolVar(&d.lock, "lock", false, "open on the world's lock file (infra/.terraform.lock.hcl): the lock-file gaps job")
	return cmd
}

// runDemo builds the demo world and opens the UI on it, keeps it (--keep,
// --no-ui), or serves a kept one (--serve).
func runDemo(ctx context.Context, env *Env, d *demoFlags, _ []string, st streams) error {
	switch {
	case d.serve != "" && (d.keep != "" || d.noUI || d.lock):
		return usageErr("--serve DIR serves a kept world: give it alone (not with --keep, --no-ui or --lock)")
	case d.serve != "":
		return serveDemo(ctx, d, st)
	case d.noUI && d.keep == "":
		return usageErr("--no-ui builds a world to keep: give --keep DIR too")
	case !d.noUI && !st.isTerminal():
		return usageErr("the demo UI needs a terminal (--keep DIR --no-ui builds the world without it)")
	}
	dir := d.keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "tfmirror-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usageErr("--keep %s: the directory is not empty; give a new or empty one (--serve %[1]s serves a kept world)", dir)
	}
	world, err := demo.Build(ctx, dir)
	if err != nil {
		return err
	}
	if d.noUI {
		fmt.Fprintf(st.stdout, "%s\n%s\n", world.Primary, world.Secondary)
		fmt.Fprint(st.stderr, demoJobs(world, nil))
		return nil
	}
	srv, err := startDemoServers(ctx, world, d.rate)
	if err != nil {
		return err
	}
	defer srv.close()
	cfg, closeUI, err := demoUIConfig(ctx, env, world, srv, d)
	if err != nil {
		return err
	}
	defer closeUI()
	err = ui.Run(ctx, cfg)
	if d.keep != "" {
		fmt.Fprintf(st.stderr, "the demo world is kept in %s\n%s", d.keep, demoJobs(world, nil))
	}
	return err
}

// demoServers are the world's network mirror and OCI registry.
type demoServers struct {
	net *demo.Served
	oci *demo.OCIRegistry
}

func startDemoServers(ctx context.Context, world *demo.World, rate int) (*demoServers, error) {
	net, err := world.Serve(ctx, demo.ServeOptions{BytesPerSecond: rate})
	if err != nil {
		return nil, err
	}
	oci, err := world.ServeOCI(ctx)
	if err != nil {
		_ = net.Close() // the OCI error is the one to report
		return nil, err
	}
	return &demoServers{net: net, oci: oci}, nil
}

func (s *demoServers) close() {
	_ = s.oci.Close() // the demo is over
	_ = s.net.Close()
}

// demoUIConfig opens the world's places for the UI: [1] the network mirror
// (first: jobs take their source from the first place holding a package,
// and its slowed downloads show progress), [2] primary (aside: [1] serves
// it), [3] secondary, [4] the release, [5] the OCI registry, then the
// module places; with --lock, the world's lock file, [1] and [3] compared.
func demoUIConfig(ctx context.Context, env *Env, world *demo.World, srv *demoServers, d *demoFlags) (ui.Config, func(), error) {
	net, err := srv.net.Open()
	if err != nil {
		return ui.Config{}, nil, err
	}
	o := demoPlaceOptions(env, world)
	mirrors := []ui.Mirror{{Reader: net, Kind: string(place.NetMirror)}}
	for _, a := range []string{world.Primary, world.Secondary, world.Release, srv.oci.Place()} {
		var r backends.Reader
		if a == srv.oci.Place() {
			r, err = place.OpenWriter(ctx, a, o)
		} else {
			r, err = place.Open(ctx, a, o)
		}
		if err != nil {
			return ui.Config{}, nil, fmt.Errorf("demo: opening %s: %w", a, err)
		}
		spec, _ := place.Parse(a)
		// With --lock the release and the OCI registry are aside too: the
		// gaps are the secondary mirror's.
		aside := a == world.Primary || d.lock && a != world.Secondary
		mirrors = append(mirrors, ui.Mirror{Reader: r, Kind: string(spec.Kind), Aside: aside})
	}
	cfg := ui.Config{Mirrors: mirrors, Engine: env.engine(ctx, d.jobs)}
	if d.lock {
		if cfg.Locks, err = uiLocks(ctx, []string{filepath.Join(world.Infra, ".terraform.lock.hcl")}, nil); err != nil {
			return ui.Config{}, nil, err
		}
	}
	mods, closeModules, err := demoModules(ctx, env, world, len(mirrors)+1)
	if err != nil {
		return ui.Config{}, nil, err
	}
	cfg.Modules = mods
	return cfg, closeModules, nil
}

// demoPlaceOptions open the world's places: its servers' certificate
// trusted, its release named and checked with its key.
func demoPlaceOptions(env *Env, world *demo.World) place.Options {
	o := env.placeOptions()
	o.CACertFile = world.CertFile()
	if f, err := backends.ParseProviderFilter(demo.ReleaseProvider); err == nil {
		o.Release.Naming.Providers = []backends.ProviderFilter{f}
	}
	o.Release.SigningKeys = []string{filepath.Join(world.Release, "acme.asc")}
	return o
}

// demoModules serves the demo's module registry and opens it and the
// world's module directory as module places numbered from num.
func demoModules(ctx context.Context, env *Env, world *demo.World, num int) (ui.ModulesConfig, func(), error) {
	var cfg ui.ModulesConfig
	srv, err := world.ServeModules(ctx)
	if err != nil {
		return cfg, nil, err
	}
	reg, err := srv.Open()
	if err == nil {
		cfg.Modules, err = srv.Modules()
	}
	var dir modules.Writer
	if err == nil {
		dir, err = modplace.OpenWriter(ctx, world.Modules, env.placeOptions())
	}
	tmp := ""
	if err == nil {
		tmp, err = os.MkdirTemp("", "tfmirror-demo-modules-")
	}
	if err != nil {
		_ = srv.Close() // err is the one to report
		return cfg, nil, err
	}
	builder := srv.Builder(tmp)
	cfg.Places = []ui.ModulePlace{{Lister: reg, Kind: string(place.Registry), Number: num}, {Lister: dir, Kind: string(place.FS), Number: num + 1}}
	cfg.Builder = builder
	return cfg, func() { _ = builder.Close(); os.RemoveAll(tmp); _ = srv.Close() }, nil // the demo is over
}

// serveDemo serves a kept world's network mirror and OCI registry until
// interrupted, and prints how to try each job with them.
func serveDemo(ctx context.Context, d *demoFlags, st streams) error {
	world, err := demo.Open(d.serve)
	if err != nil {
		return usageErr("--serve %v", err)
	}
	srv, err := startDemoServers(ctx, world, d.rate)
	if err != nil {
		return err
	}
	defer srv.close()
	fmt.Fprintf(st.stdout, "serving the demo world in %s until interrupted (Ctrl-C):\n  network mirror  %s\n  OCI registry    %s\n\n%s",
		d.serve, srv.net.URL, srv.oci.Place(), demoJobs(world, srv))
	if f, ok := st.stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	<-ctx.Done()
	return ctx.Err()
}

// demoJobs says how to try each of tfmirror's jobs on a kept demo world;
// with its servers running, with their addresses.
func demoJobs(w *demo.World, srv *demoServers) string {
	lock := filepath.Join(w.Infra, ".terraform.lock.hcl")
	key := filepath.Join(w.Release, "acme.asc")
	s := fmt.Sprintf(`Try each job on it:
  curate:             tfmirror ui %[1]s %[2]s
  lock file gaps:     tfmirror ui %[2]s %[1]s --lock %[3]s      (L queues the gaps)
                      tfmirror check %[2]s --lock %[3]s
`, w.Primary, w.Secondary, lock)
	if srv == nil {
		return s + fmt.Sprintf(`  push a release to OCI, or use the network mirror: serve the world (until Ctrl-C)
                      tfmirror demo --serve %s
                      and it prints the commands, with its addresses
`, w.Dir)
	}
	oci, cert := "'"+srv.oci.Place()+"'", w.CertFile()
	return s + fmt.Sprintf(`  push a release:     tfmirror push %[1]s %[2]s -p %[3]s --signing-key %[4]s --ca-cert %[5]s
                      tfmirror ui %[1]s %[2]s -p %[3]s --signing-key %[4]s --ca-cert %[5]s
                      tfmirror verify %[2]s -p %[3]s --ca-cert %[5]s
  install from it:    tfmirror config suggest %[2]s -p %[3]s --ca-cert %[5]s   (OpenTofu: SSL_CERT_FILE=%[5]s)
  network mirror:     tfmirror ls %[6]s -p %[8]s --ca-cert %[5]s
                      tfmirror diff %[6]s %[7]s -p %[8]s --ca-cert %[5]s
`, w.Release, oci, demo.ReleaseProvider, key, cert, srv.net.URL, w.Secondary, demo.Host+"/acme/cloud")
}
