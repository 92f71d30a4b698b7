package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

func newPushCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var asJSON, force bool
	var jobs int
	cmd := &cobra.Command{
		Use:   "push SRC... OCI_DST [selection]",
		Short: "Push release zips, or a mirror's archives, into an OCI registry for OpenTofu's oci_mirror",
		Long: `Push provider release zips into an OCI registry in the layout OpenTofu's
oci_mirror installation method reads, then print the provider_installation
block to paste into the OpenTofu CLI configuration.

SRC is a release zip (goreleaser's terraform-provider-NAME_1.2.3_linux_amd64.zip)
or a place (a filesystem mirror directory, https://, registry://, oci://), of
which every selected archive is pushed. OCI_DST is oci://REGISTRY[:PORT]/TEMPLATE,
the oci_mirror repository_template: ${hostname}, ${namespace} and ${type} stand
for the provider's address (quote it in the shell).

Zips: a zip's name gives only the provider's type, so name the provider with
--provider HOSTNAME/NAMESPACE/TYPE; NAMESPACE/TYPE means the provider on
registry.opentofu.org, as in OpenTofu configuration. Version and platform come
from the standard file name; for other names give an exact --version and one
--platform. With a place as SRC, --provider, --version and --platform select.

Each zip's h1: and zh: are computed before it is pushed and checked again on
the staged copy. Each platform becomes an image manifest holding the zip as its
single archive/zip layer; each version an image index tagged with the version
("+" written as "_"). Platforms already in the registry are kept; a platform
already there with the same zip is skipped without uploading, one with a
different zip is refused unless --force.

Credentials are those docker and podman use (docker login / podman login, their
credential helpers). --plain-http talks HTTP to local registries; --insecure
skips TLS verification; --ca-cert trusts an extra CA. Exits 1 when any archive
failed.`,
		Example: `  tfmirror push --provider acme/alpha dist/*.zip 'oci://registry.example.com/providers/${namespace}/${type}'
  tfmirror push -p example.com/acme/alpha terraform-provider-alpha_1.2.3_linux_amd64.zip 'oci://localhost:5000/${hostname}/${namespace}/${type}' --plain-http
  tfmirror push ./mirror 'oci://registry.example.com/providers/${namespace}/${type}' -p hashicorp/aws -v "~> 5.0" --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("push takes SRC... and OCI_DST (got %d arguments); see %s --help", len(args), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := sel.selection()
			if err != nil {
				return err
			}
			dstArg := args[len(args)-1]
			if spec, err := place.Parse(dstArg); err != nil || spec.Kind != place.OCI {
				return usageErr("push: the last argument must be oci://REGISTRY[:PORT]/TEMPLATE, not %q", dstArg)
			}
			dst, err := place.OpenWriter(ctx, dstArg, g.placeOptions())
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			mirror, ok := dst.(*oci.Mirror)
			if !ok {
				return usageErr("push: %s is not an OCI mirror", dstArg)
			}
			srcs, err := pushSources(cmd, g, sel, s, args[:len(args)-1])
			if err != nil {
				return err
			}

			out := cmd.OutOrStdout()
			emit := func(m map[string]any) {
				b, _ := json.Marshal(m)
				fmt.Fprintf(out, "%s\n", b)
			}
			var specs []sync.JobSpec
			landed := map[backends.Provider]bool{}
			present, problems := 0, 0
			for _, src := range srcs {
				plan, err := sync.MakePlan(ctx, src, dst, s, sync.PlanOptions{Hashing: g.hashing()})
				printWarnings(cmd, src)
				if err != nil {
					return err
				}
				jobs, left := plan.Jobs(dst, force)
				specs = append(specs, jobs...)
				for _, it := range left {
					pkg := it.Archive.Package
					switch {
					case it.Status == sync.StatusPresent:
						present++
						landed[pkg.Provider] = true
					default:
						problems++
					}
					if asJSON {
						emit(map[string]any{"type": string(it.Status), "provider": pkg.Provider.String(), "version": pkg.Version.String(),
							"platform": pkg.Platform.String(), "src": src.String(), "dst": dst.String(), "detail": it.Detail})
					} else if it.Status == sync.StatusPresent {
						fmt.Fprintf(out, "= %s: already in %s (%s)\n", pkg, dst, it.Detail)
					} else {
						fmt.Fprintf(cmd.ErrOrStderr(), "%s %s: skipped: %s\n", it.Status, pkg, it.Detail)
					}
				}
			}

			mode, color, width := outputMode(cmd, asJSON)
			start := time.Now()
			eng := sync.NewEngine(ctx, sync.Options{Jobs: jobs, Hashing: g.hashing()})
			eng.Enqueue(specs...)
			eng.Close()
			var t *sync.Tracker
			if mode == report.Plain {
				t = report.PushPlain(out, eng.Events())
			} else {
				t = report.NewSyncReporter(out, mode, color, width).Run(eng.Events())
			}
			printWarnings(cmd, dst)
			for _, j := range t.Jobs {
				if j.State == sync.Done {
					landed[j.Info.Package.Provider] = true
				}
			}
			failed := t.Failures()
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d pushed (%s) in %s, %d already there, %d failed, %d skipped\n",
					dst, t.Counts()[sync.Done], report.HumanBytes(t.BytesMoved()), time.Since(start).Round(time.Millisecond), present, len(failed), problems)
			}
			if len(landed) > 0 {
				var providers []backends.Provider
				for p := range landed {
					providers = append(providers, p)
				}
				backends.SortProviders(providers)
				block, notes := push.ConfigBlock(mirror.Template(), providers, g.plainHTTP)
				if asJSON {
					var include []string
					for _, p := range providers {
						include = append(include, p.String())
					}
					emit(map[string]any{"type": "oci_mirror_config", "repository_template": mirror.Template().String(), "include": include, "config": block, "notes": notes})
				} else {
					fmt.Fprintf(out, "\nAdd to the OpenTofu CLI configuration (~/.tofurc, or the file TF_CLI_CONFIG_FILE names):\n\n%s", block)
					for _, n := range notes {
						fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
					}
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if len(failed)+problems+len(t.IndexFails) > 0 {
				return errProblem
			}
			return nil
		},
	}
	sel.add(cmd)
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, `print one JSON event per line, each with a "type" field`)
	f.BoolVar(&force, "force", false, "replace platforms the registry holds with a different zip")
	f.IntVar(&jobs, "jobs", sync.DefaultJobs(), "how many archives to push at once")
	return cmd
}

// pushSources opens push's SRC arguments: places (directories and URLs) as
// they are, and every zip file together as one place.
func pushSources(cmd *cobra.Command, g *globalFlags, sel selectionFlags, s sync.Selection, args []string) ([]backends.Reader, error) {
	var srcs []backends.Reader
	var zipArgs []string
	for _, a := range args {
		if !strings.Contains(a, "://") {
			if fi, err := os.Stat(a); err == nil && !fi.IsDir() || err != nil && strings.HasSuffix(strings.ToLower(a), ".zip") {
				zipArgs = append(zipArgs, a)
				continue
			}
		}
		r, err := openPlace(cmd.Context(), a, g.placeOptions())
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, r)
	}
	if len(zipArgs) == 0 {
		return srcs, nil
	}
	naming := push.Naming{Providers: s.Providers, Version: sel.version}
	if len(sel.platforms) == 1 {
		naming.Platform = sel.platforms[0]
	}
	files, err := push.Identify(zipArgs, naming)
	if err != nil {
		return nil, usageErr("push: %v", err)
	}
	zips, err := push.NewZips(cmd.Context(), files, g.hashing())
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	return append([]backends.Reader{zips}, srcs...), nil
}
