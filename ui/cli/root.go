package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/ui"
	"github.com/tfmirror/tfmirror/ui/report"
)

// Exit codes, as the command-line contract fixes them.
const (
	exitOK      = 0
	exitProblem = 1
	exitUsage   = 2
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// problem is returned when the command ran and found something wrong; the
// report has already said what.
var errProblem = &exitError{code: exitProblem, err: errors.New("problems found (see above)")}

// Execute runs the command line with args and returns the exit code: 0
// success, 1 the command ran and found a problem, 2 usage or configuration.
func Execute(ctx context.Context, args []string) int {
	cmd, env := newRoot()
	if len(args) == 1 && args[0] == "--version" {
		// The root's --version is the UI's version constraint; alone, with no
		// value, it can only mean tfmirror's own version.
		args = []string{"version"}
	}
	cmd.SetArgs(args)
	ran, err := cmd.ExecuteContextC(ctx)
	explainPlatform(ctx, env, ran, err)
	var intr Interrupted
	if err != nil && ctx.Err() != nil && errors.As(context.Cause(ctx), &intr) {
		// The run has said what it did; the exit code says how it ended.
		if !errors.Is(err, context.Canceled) {
			fmt.Fprintln(cmd.ErrOrStderr(), "tfmirror:", backends.Printable(err.Error()))
		}
		return intr.ExitCode()
	}
	return exitCode(cmd, err)
}

// Interrupted is the cause of a context cancelled by a signal.
type Interrupted struct{ Signal os.Signal }

func (i Interrupted) Error() string { return "interrupted by " + i.Signal.String() }

// ExitCode is the shell's code for death by the signal: 128 + its number.
func (i Interrupted) ExitCode() int {
	if s, ok := i.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

func exitCode(cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var intr *ui.Interrupted
	if errors.As(err, &intr) {
		// Ctrl-C in the UI interrupted jobs: said once the terminal is
		// back, as the other commands say what an interrupt cancelled.
		fmt.Fprintln(cmd.ErrOrStderr(), "tfmirror:", backends.Printable(err.Error()))
		return 130
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee != errProblem {
			fmt.Fprintln(cmd.ErrOrStderr(), "tfmirror:", report.Advised(ee.err))
		}
		return ee.code
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "tfmirror:", report.Advised(err))
	if errors.Is(err, backends.ErrUsage) {
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		return 130
	}
	return exitProblem
}

func newRootCmd() *cobra.Command {
	root, _ := newRoot()
	return root
}

// newRoot is the command tree, with the settings its global flags fill.
func newRoot() (*cobra.Command, *Env) {
	env := &Env{}
	root := &cobra.Command{
		Use:   "tfmirror",
		Short: "Browse, compare, sync and verify private Terraform/OpenTofu provider mirrors",
		Long: `tfmirror browses, compares, syncs and verifies private Terraform/OpenTofu
provider mirrors: filesystem mirrors (a directory), network mirrors
(https://HOST/PATH/), origin registries (registry://HOST), OCI registries in
OpenTofu's oci_mirror layout (oci://REGISTRY/TEMPLATE) and object storage
holding a network mirror (s3://BUCKET/PREFIX; credentials and region from the
AWS configuration, --s3-endpoint for S3-compatible stores).`,
		Example: `  tfmirror ls ./mirror
  tfmirror hash ./mirror/registry.terraform.io/hashicorp/null/*.zip
  tfmirror verify ./mirror --provider hashicorp/aws`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().Int64Var(&env.maxUnpacked, "max-unpacked", hashing.DefaultMaxUnpacked,
		"the most bytes hashing one zip may unpack (a guard against zip bombs); -1 for no limit")
	root.PersistentFlags().StringVar(&env.caCert, "ca-cert", "",
		"PEM `FILE` of extra CA certificates to trust for https://, registry://, oci:// and s3:// places, such as the one tfmirror serve writes")
	root.PersistentFlags().StringVar(&env.clientCert, "client-cert", "",
		"PEM `FILE` of a client certificate to present to https://, registry://, oci:// and s3:// places that ask for one (mTLS; with --client-key), the pull-through's upstream included")
	root.PersistentFlags().StringVar(&env.clientKey, "client-key", "", "PEM `FILE` of the private key of --client-cert")
	root.PersistentFlags().BoolVar(&env.plainHTTP, "plain-http", false, "talk plain HTTP to oci:// registries (local test registries; OpenTofu itself needs HTTPS)")
	root.PersistentFlags().BoolVar(&env.insecure, "insecure", false, "do not verify the TLS certificates of oci:// registries")
	root.PersistentFlags().BoolVar(&env.debug, "debug", false,
		"write every HTTP request to stderr: method, URL, status, bytes, time and attempt (never credentials)")
	root.PersistentPreRun = func(cmd *cobra.Command, args []string) {
		env.stderr = cmd.ErrOrStderr()
		env.readReleaseFlags(cmd)
	}
	root.PersistentFlags().StringVar(&env.s3Endpoint, "s3-endpoint", "",
		"`URL` of an S3-compatible store (MinIO, Ceph, versitygw, ...) for s3:// places, addressed path-style; default AWS S3")
	root.SetFlagErrorFunc(flagError)
	root.SetHelpTemplate(helpTemplate)
	root.AddCommand(newLsCmd(env), newHashCmd(env), newVerifyCmd(env))
	root.AddCommand(newDiffCmd(env), newSyncCmd(env))
	root.AddCommand(newOutdatedCmd(env), newPruneCmd(env))
	root.AddCommand(newModulesCmd(env))
	root.AddCommand(newPushCmd(env), newPublishCmd(env))
	root.AddCommand(newExportCmd(env), newImportCmd(env))
	root.AddCommand(newUICmd(env), newDemoCmd(env))
	// With no subcommand, tfmirror opens the UI (tfmirror [MIRROR...]).
	var rootUI uiFlags
	rootUI.add(root)
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		return runUI(cmd.Context(), env, &rootUI, args, streamsOf(cmd))
	}
	root.AddCommand(newServeCmd(env))
	root.AddCommand(newLockCmd(env), newCheckCmd(env), newConfigCmd(env), newVersionCmd(), newManCmd())
	return root, env
}
