package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/ui"
	"github.com/tfmirror/tfmirror/ui/demo"
)

const demoLong = `Build a small sample world and open the UI on it, so every feature can be tried
with no setup:

  [1] an HTTPS network mirror on 127.0.0.1 (self-signed certificate) serving
      [2], its downloads slowed (--rate) so transfers can be watched;
  [2] a filesystem mirror, "primary", with four synthetic providers
      (acme/cloud, acme/dns, acme/queue, acme/legacy: real zips holding a small
      script), several versions and up to five platforms, with index documents
      stating hashes;
  [3] a second filesystem mirror, "secondary", that lacks some platforms and
      versions, and holds one archive (acme/cloud 2.0.0 linux_amd64) with
      different content;
  [4] a module registry on 127.0.0.1 (self-signed certificate) offering
      acme/network/aws and acme/cluster/aws, a few versions each;
  [5] a directory of module packages, "modules", holding acme/network/aws
      1.0.0 only.

Queue what [3] lacks from [1] (select cells, enter), watch the hashes checked
as each archive lands, and try v (verify) on the archive that differs. Press m
for the Modules view: select versions [5] lacks (space), enter, and they are
fetched from [4], packed and stored.

The world also holds what the two other jobs need: infra/, a configuration
with a .terraform.lock.hcl locking versions the secondary mirror lacks
packages of, and release/, a provider release signed as goreleaser leaves it
(its key is release/acme.asc). Build it with --keep DIR --no-ui, and the
commands to try each job on it are printed.

Everything is removed on exit unless --keep DIR is given.`

const demoExample = `  tfmirror demo
  tfmirror demo --keep /tmp/world
  tfmirror demo --keep /tmp/world --no-ui   # build it, print the places, exit`

func newDemoCmd(env *Env) *cobra.Command {
	var keep string
	var rate, jobs int
	var noUI bool
	cmd := &cobra.Command{
		Use:     "demo",
		Short:   "Open the UI over a sample world built in a temp dir",
		Long:    demoLong,
		Example: demoExample,
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if noUI && keep == "" {
				return usageErr("--no-ui builds a world to keep: give --keep DIR too")
			}
			if !noUI && !isTerminal(cmd) {
				return usageErr("the demo UI needs a terminal (--keep DIR --no-ui builds the world without it)")
			}
			dir := keep
			if dir == "" {
				tmp, err := os.MkdirTemp("", "tfmirror-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = tmp
			} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return usageErr("--keep %s: the directory is not empty; give a new or empty one", dir)
			}
			world, err := demo.Build(ctx, dir)
			if err != nil {
				return err
			}
			if noUI {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n%s\n", world.Primary, world.Secondary)
				fmt.Fprint(cmd.ErrOrStderr(), demoJobs(world))
				return nil
			}
			srv, err := world.Serve(ctx, demo.ServeOptions{BytesPerSecond: rate})
			if err != nil {
				return err
			}
			defer srv.Close()
			// The network mirror first: jobs take their source from the first
			// mirror holding a package, and its slowed downloads show progress.
			net, err := srv.Open()
			if err != nil {
				return err
			}
			mirrors := []ui.Mirror{{Reader: net, Kind: string(place.NetMirror)}}
			for _, d := range []string{world.Primary, world.Secondary} {
				r, err := place.Open(ctx, d, env.placeOptions())
				if err != nil {
					return err
				}
				mirrors = append(mirrors, ui.Mirror{Reader: r, Kind: string(place.FS)})
			}
			mods, closeModules, err := demoModules(ctx, env, world, len(mirrors)+1)
			if err != nil {
				return err
			}
			defer closeModules()
			err = ui.Run(ctx, ui.Config{Mirrors: mirrors, Engine: env.engine(ctx, jobs), Modules: mods})
			if keep != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "the demo world is kept in %s\n%s", keep, demoJobs(world))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&keep, "keep", "", "build the world in DIR (new or empty) and keep it after exit")
	f.IntVar(&rate, "rate", 1<<20, "bytes per second the network mirror serves archives at (0: full speed)")
	jobsVar(f, &jobs, 4, "how many archives to transfer at once")
	f.BoolVar(&noUI, "no-ui", false, "with --keep: build the world, print the two mirror directories, and exit")
	return cmd
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
		srv.Close()
		return cfg, nil, err
	}
	builder := srv.Builder(tmp)
	cfg.Places = []ui.ModulePlace{{Lister: reg, Kind: string(place.Registry), Number: num}, {Lister: dir, Kind: string(place.FS), Number: num + 1}}
	cfg.Builder = builder
	return cfg, func() { builder.Close(); os.RemoveAll(tmp); srv.Close() }, nil
}

// demoJobs says how to try each of tfmirror's jobs on a kept demo world.
func demoJobs(w *demo.World) string {
	lock := filepath.Join(w.Infra, ".terraform.lock.hcl")
	key := filepath.Join(w.Release, "acme.asc")
	return fmt.Sprintf(`Try each job on it:
  curate:             tfmirror ui %[1]s %[2]s
  lock file gaps:     tfmirror ui %[2]s %[1]s --lock %[3]s      (L queues the gaps)
                      tfmirror check %[2]s --lock %[3]s
  push a release:     tfmirror ui %[4]s %[2]s -p %[5]s --signing-key %[6]s
                      tfmirror push %[4]s 'oci://REGISTRY/${namespace}/${type}' -p %[5]s --signing-key %[6]s
`, w.Primary, w.Secondary, lock, w.Release, demo.ReleaseProvider, key)
}
