package cli

import (
	gosync "sync"

	"context"
	"errors"
	"fmt"
	"os"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/ui/report"
)

// globalFlags are shared by every command.
type globalFlags struct {
	maxUnpacked int64
	caCert      string
	plainHTTP   bool
	insecure    bool

	// creds are the credentials every place of one command uses, read once.
	credsOnce gosync.Once
	httpCreds backends.Credentials
	ociCreds  credentials.Store
}

func (g *globalFlags) hashing() hashing.Options { return hashing.Options{MaxUnpacked: g.maxUnpacked} }

func (g *globalFlags) placeOptions() place.Options {
	g.credsOnce.Do(g.loadCredentials)
	return place.Options{Hashing: g.hashing(), CACertFile: g.caCert, PlainHTTP: g.plainHTTP, Insecure: g.insecure,
		Credentials: g.httpCreds, OCICredentials: g.ociCreds}
}

// loadCredentials reads the CLI configuration's credentials blocks and
// oci_credentials, with TF_TOKEN_* and the container tools' files; a
// configuration that does not parse leaves only the environment (`tfmirror
// config` says why).
func (g *globalFlags) loadCredentials() {
	c, _ := cliconfig.Load(os.Getenv, "")
	if c == nil {
		g.httpCreds = backends.EnvCredentials(os.Environ())
		return
	}
	g.httpCreds = c.Credentials(os.Environ())
	ambient, err := oci.DefaultCredentials()
	if err != nil {
		ambient = nil
	}
	g.ociCreds = c.OCIStore(ambient)
}

func (g *globalFlags) modplaceOptions() modplace.Options {
	return modplace.Options{CACertFile: g.caCert, PlainHTTP: g.plainHTTP, Insecure: g.insecure, Hashing: g.hashing()}
}

// noCatalogue makes "name the providers" a usage error: the place cannot
// list them and the command line named none.
func noCatalogue(err error) error {
	if errors.Is(err, backends.ErrNoCatalogue) {
		return &exitError{code: exitUsage, err: err}
	}
	return err
}

func openPlace(ctx context.Context, arg string, o place.Options) (backends.Reader, error) {
	r, err := place.Open(ctx, arg, o)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return r, nil
}

// printWarnings reports the junk a place tolerated.
func printWarnings(cmd *cobra.Command, r backends.Reader) {
	if w, ok := r.(backends.Warner); ok {
		for _, msg := range w.Warnings() {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning:", msg)
		}
	}
}

// outputMode picks live progress on a terminal, plain lines otherwise, and
// colour only on a terminal without NO_COLOR.
func outputMode(cmd *cobra.Command, asJSON bool) (report.SyncMode, bool, int) {
	if asJSON {
		return report.JSONLines, false, 0
	}
	f, ok := cmd.OutOrStdout().(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return report.Plain, false, 0
	}
	width, _, err := term.GetSize(f.Fd())
	if err != nil {
		width = 80
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	return report.Live, !noColor, width
}

// isTerminal reports whether the command talks to a terminal both ways.
func isTerminal(cmd *cobra.Command) bool {
	out, ok := cmd.OutOrStdout().(*os.File)
	in, ok2 := cmd.InOrStdin().(*os.File)
	return ok && ok2 && term.IsTerminal(out.Fd()) && term.IsTerminal(in.Fd())
}
