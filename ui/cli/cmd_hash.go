package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

// hashFlags are hash's options, bound to its flags.
type hashFlags struct{ asJSON bool }

func newHashCmd(env *Env) *cobra.Command {
	var f hashFlags
	cmd := &cobra.Command{
		Use:   "hash PATH...",
		Short: "Print the h1: and zh: hashes of provider zips and unpacked directories",
		Long: `Print the hashes Terraform and OpenTofu use for provider packages: h1: (Go's
dirhash over the files in a zip or an unpacked directory) and zh: (SHA-256 of
the zip file; zips only). The values are those the clients write in
.terraform.lock.hcl and in a mirror's <version>.json.`,
		Example: `  tfmirror hash terraform-provider-null_3.2.1_linux_amd64.zip
  tfmirror hash ./mirror/registry.terraform.io/hashicorp/null/3.2.1/linux_amd64 --json`,
		Args: minArgs(1, "PATH..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHash(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print a JSON array of {"path","h1","zh"}`)
	return cmd
}

// runHash prints the hashes of every path in args, in the order given.
func runHash(ctx context.Context, env *Env, f *hashFlags, args []string, st streams) error {
	// One path per core; the output keeps the order given.
	sums := make([]hashing.Sums, len(args))
	errs := make([]error, len(args))
	sync.Parallel(ctx, runtime.NumCPU(), len(args), func(i int) {
		sums[i], errs[i] = hashing.HashPath(args[i], env.hashing())
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	var rows []report.HashRow
	failed := false
	for i, p := range args {
		if errs[i] != nil {
			fmt.Fprintf(st.stderr, "tfmirror: hash %s: %v\n", p, errs[i])
			failed = true
			continue
		}
		rows = append(rows, report.HashRow{Path: p, H1: sums[i].H1, ZH: sums[i].ZH})
	}
	if err := report.Hashes(st.stdout, rows, f.asJSON); err != nil {
		return err
	}
	if failed {
		return errProblem
	}
	return nil
}
