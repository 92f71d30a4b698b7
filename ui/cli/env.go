package cli

import (
	"strings"
	gosync "sync"

	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/bundle"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	"github.com/tfmirror/tfmirror/backends/ociclient"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/report"
)

// Env is what every command runs with, built once from the global flags:
// the options places are opened with (the CLI configuration's credentials
// read once, however many places a command opens), and hashing's limits.
type Env struct {
	maxUnpacked int64
	// allHashes (--hashes all) computes h1: for every archive.
	allHashes bool
	caCert    string
	// clientCert and clientKey (--client-cert, --client-key) are presented
	// to every HTTPS place that asks for a client certificate.
	clientCert, clientKey string
	plainHTTP             bool
	insecure              bool
	// debug (--debug) sends a line per HTTP request attempt to stderr.
	debug      bool
	stderr     io.Writer
	s3Endpoint string

	// release is how a release directory given as a place opens: the
	// command's --provider, --version, --platform and --signing-key.
	release push.ReleaseOptions

	// notices receive what places say as it happens (backends.Notice):
	// the command's reporter once it has one, stderr until then.
	noticeMu gosync.Mutex
	notices  func(backends.Notice)

	// creds are the credentials every place of one command uses, read once.
	credsOnce gosync.Once
	httpCreds backends.Credentials
	ociCreds  credentials.Store
}

// engine is the one engine of a command: jobs transfers at once, every
// archive hashed under the global flags' options. Every command that moves
// archives builds it here.
func (env *Env) engine(ctx context.Context, jobs int) *engine.Engine {
	return engine.NewEngine(ctx, engine.Options{Jobs: jobs, Hashing: env.hashing()})
}

func (env *Env) hashing() hashing.Options {
	return hashing.Options{MaxUnpacked: env.maxUnpacked, AllHashes: env.allHashes}
}

// hashesFlag is --hashes: "needed" (the default) or "all".
type hashesFlag struct{ all *bool }

func (f hashesFlag) String() string {
	if f.all != nil && *f.all {
		return "all"
	}
	return "needed"
}

func (f hashesFlag) Set(v string) error {
	switch v {
	case "all":
		*f.all = true
	case "needed":
		*f.all = false
	default:
		return fmt.Errorf("want \"all\" or \"needed\", not %q", v)
	}
	return nil
}

func (hashesFlag) Type() string { return "all|needed" }

// addHashesFlag adds --hashes to a command whose archives get index
// documents or lock entries.
func (env *Env) addHashesFlag(cmd *cobra.Command, what string) {
	cmd.Flags().Var(hashesFlag{&env.allHashes}, "hashes",
		`"all": compute h1: for every archive and list it `+what+`, even where the source's zh: evidence suffices; "needed" (default): h1: only where some evidence states nothing else`)
}

// placeOptions are the options every place of a command opens with,
// provider and module places alike.
func (env *Env) placeOptions() place.Options {
	env.credsOnce.Do(env.loadCredentials)
	return place.Options{Hashing: env.hashing(), CACertFile: env.caCert, ClientCertFile: env.clientCert, ClientKeyFile: env.clientKey, PlainHTTP: env.plainHTTP, Insecure: env.insecure,
		Credentials: env.httpCreds, OCICredentials: env.ociCreds, Debug: env.debugLog(), S3Endpoint: env.s3Endpoint, Signatures: signatures(), Release: env.release,
		Notify: env.notice}
}

// readReleaseFlags takes, from the command about to run, what a release
// directory given as a place needs: the selection's full provider
// addresses (a zip's name gives only the type), an exact version and one
// platform for zips whose names do not say, and --signing-key. A flag that
// does not parse is the selection's to report.
func (env *Env) readReleaseFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	var o push.ReleaseOptions
	if ps, err := fl.GetStringSlice("provider"); err == nil {
		for _, p := range ps {
			if f, err := backends.ParseProviderFilter(p); err == nil {
				o.Naming.Providers = append(o.Naming.Providers, f)
			}
		}
	}
	if v, err := fl.GetString("version"); err == nil {
		o.Naming.Version = v
	}
	if plats, err := fl.GetStringSlice("platform"); err == nil && len(plats) == 1 {
		o.Naming.Platform = plats[0]
	}
	if keys, err := fl.GetStringArray("signing-key"); err == nil {
		o.SigningKeys = keys
	}
	env.release = o
}

// debugLog is where --debug writes, or nil without it.
func (env *Env) debugLog() io.Writer {
	if !env.debug || env.stderr == nil {
		return nil
	}
	return env.stderr
}

// loadCredentials reads the CLI configuration's credentials blocks and
// oci_credentials, with TF_TOKEN_* and the container tools' files; a
// configuration that does not parse leaves only the environment (`tfmirror
// config` says why).
func (env *Env) loadCredentials() {
	c, _ := cliconfig.Load(os.Getenv, "")
	if c == nil {
		env.httpCreds = backends.EnvCredentials(os.Environ())
		return
	}
	env.httpCreds = c.Credentials(os.Environ())
	ambient, err := ociclient.DefaultCredentials()
	if err != nil {
		ambient = nil
	}
	env.ociCreds = c.OCIStore(ambient)
}

// noCatalogue makes "name the providers" a usage error: the place cannot
// list them and the command line named none.
func noCatalogue(err error) error {
	if errors.Is(err, backends.ErrNoCatalogue) {
		return &exitError{code: exitUsage, err: err}
	}
	return err
}

// openPlace opens a place named on the command line: one that cannot be
// opened is a usage error (exit 2), but a damaged or altered bundle is a
// problem found (exit 1).
func openPlace(ctx context.Context, arg string, o place.Options) (backends.Reader, error) {
	r, err := place.Open(ctx, arg, o)
	if errors.Is(err, bundle.ErrDamaged) {
		// The bundle was found and read: what is wrong is in it, a
		// problem found (exit 1), for every command that opens it.
		return nil, &exitError{code: exitProblem, err: err}
	}
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w%s", err, registryHint(arg))}
	}
	return r, nil
}

// registryHint is, for a place that reads like a provider's address
// (HOST/NAMESPACE/TYPE, no such directory), how to name its registry.
func registryHint(arg string) string {
	parts := strings.Split(arg, "/")
	if len(parts) != 3 || !strings.Contains(parts[0], ".") || strings.Contains(arg, "://") {
		return ""
	}
	if _, err := os.Stat(arg); err == nil {
		return ""
	}
	return fmt.Sprintf(" (to read the provider %s from its registry: registry://%s -p %s/%s)", arg, parts[0], parts[1], parts[2])
}

// notice shows what a place says as it happens: through the command's
// reporter (a JSON line with --json), or as a line on stderr.
func (env *Env) notice(n backends.Notice) {
	env.noticeMu.Lock()
	show := env.notices
	env.noticeMu.Unlock()
	if show != nil {
		show(n)
		return
	}
	if env.stderr != nil {
		fmt.Fprintf(env.stderr, "%s: %s\n", n.Kind, n.Message)
	}
}

// syncReporter is streams.reporter's, which also shows the places' notices.
func (env *Env) syncReporter(st streams, asJSON, push bool) *report.SyncReporter {
	rep := st.reporter(asJSON, push)
	env.noticeMu.Lock()
	env.notices = rep.Notice
	env.noticeMu.Unlock()
	return rep
}

// summaryErr is a run's exit: interrupted, a problem (the reporter has said
// which), or success.
func summaryErr(ctx context.Context, sum sync.Summary) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !sum.OK() {
		return errProblem
	}
	return nil
}
