package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/regserve"
)

// serveFlags are serve's options, bound to its flags: where it listens,
// its certificate, and the pull-through's, modules', auth's and log's.
type serveFlags struct {
	addr, certFile, keyFile, certOut string
	pull                             pullFlags
}

func newServeCmd(env *Env) *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve PLACE [--addr HOST:PORT] [--tls-cert F --tls-key F] [--cert-out FILE] | serve CACHE --upstream origin|PLACE [--spec F] [--offline]",
		Short: "Serve any readable place as a network mirror over HTTPS",
		Long:  serveLong,
		Example: `  tfmirror serve ./mirror
  tfmirror serve s3://corp-tf/providers                   # a bucket, with the AWS configuration
  tfmirror serve oci://reg.corp/tf/'${namespace}/${type}'  # an OCI mirror, for Terraform too
  tfmirror serve ./mirror --addr 0.0.0.0:8443 --tls-cert mirror.crt --tls-key mirror.key
  tfmirror serve ./mirror --addr 127.0.0.1:9443 --cert-out ./mirror-ca.pem &
  SSL_CERT_FILE=./mirror-ca.pem SSL_CERT_DIR=./mirror-ca.pem terraform init
  tfmirror serve ./cache --upstream origin                 # pull-through: fetch, verify, keep, serve
  tfmirror serve s3://corp-tf/cache --upstream origin --spec policy.hcl --log-format json`,
		Args: exactArgs(1, "PLACE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), env, &sf, args, streamsOf(cmd))
		},
	}
	f := cmd.Flags()
	env.addHashesFlag(cmd, "in the served documents")
	f.StringVar(&sf.addr, "addr", netmirror.DefaultAddr, "HOST:PORT to listen on (port 0 picks a free one)")
	f.StringVar(&sf.certFile, "tls-cert", "", "PEM certificate to serve (with --tls-key)")
	f.StringVar(&sf.keyFile, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&sf.certOut, "cert-out", "", "where to write the generated self-signed certificate (default: tfmirror-serve-PORT.pem in the temp directory)")
	sf.pull.add(cmd)
	return cmd
}

// runServe serves the place args[0] as a network mirror (with its
// registry protocols), or as a pull-through cache (--upstream).
func runServe(ctx context.Context, env *Env, sf *serveFlags, args []string, st streams) error {
	pf := &sf.pull
	addr, certFile, keyFile, certOut := sf.addr, sf.certFile, sf.keyFile, sf.certOut
	if (certFile == "") != (keyFile == "") {
		return usageErr("serve: give both --tls-cert and --tls-key, or neither for a self-signed certificate")
	}
	if certFile != "" && certOut != "" {
		return usageErr("serve: --cert-out is where a generated certificate goes; with --tls-cert there is none")
	}
	if err := checkServeFlags(addr, certFile, keyFile); err != nil {
		return err
	}
	if err := pf.redirect.check(args[0]); err != nil {
		return err
	}
	so := netmirror.ServeOptions{Addr: addr, CertFile: certFile, KeyFile: keyFile, CertOut: certOut, Hashing: env.hashing(), Drain: pf.drain}
	if pf.pullThrough() {
		return servePullThrough(ctx, env, st, args[0], pf, so)
	}
	if err := pf.plainOnly(); err != nil {
		return err
	}
	r, err := openPlace(ctx, args[0], env.placeOptions())
	if err != nil {
		return err
	}
	so.Logger = pf.serveLogger(st.stderr)
	so.Ready = pf.ready(st, "Serving "+args[0]+" as a network mirror", args[0], "")
	mods, err := pf.serveModules(ctx, env.placeOptions(), so.Logger, nil, nil)
	if err != nil {
		return err
	}
	so.Handler = regserve.New(pf.plainHandler(st, r, so), regserve.Options{Providers: r, Modules: mods, Logger: so.Logger})
	stop, err := pf.auth.secure(ctx, st.stderr, so.Logger.Printf, &so, deniedLog(pf.accessLog(st), nil))
	if err != nil {
		return err
	}
	defer stop()
	so.Stopped = pf.stopped
	err = netmirror.Serve(ctx, r, so)
	st.warnings(r)
	return pf.done(ctx, st, err)
}

// checkServeFlags refuses, as usage errors, an --addr that is not
// HOST:PORT with a numeric port (a service name such as "http" would
// listen on its well-known port) and a --tls-cert/--tls-key pair that
// cannot be loaded.
func checkServeFlags(addr, certFile, keyFile string) error {
	_, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || strconv.FormatUint(n, 10) != port {
		return usageErr("serve: --addr %q: want HOST:PORT with a port from 0 to 65535 (e.g. %s; port 0 picks a free one)", addr, netmirror.DefaultAddr)
	}
	if certFile != "" {
		if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
			return usageErr("serve: --tls-cert %s / --tls-key %s: %v", certFile, keyFile, err)
		}
	}
	return nil
}

// serveLong is serve's help.
const serveLong = `Serve a place over HTTPS with the Provider Network Mirror Protocol, so Terraform
and OpenTofu can install from it with a network_mirror block: a directory, a
bucket (s3://), an OCI mirror (oci://; Terraform has no oci_mirror, and
clients need no OCI client this way), another network mirror or a registry.
Clients ask for /HOST/NAMESPACE/TYPE/index.json, VERSION.json and the zips.

A directory is served from its files: index.json and <version>.json are built
from the zips on disk (a directory without them is fine); hashes are computed
on first request and cached. Where the directory's own <version>.json states
hashes that the zip does not match, only those are served, so clients refuse
the zip. Unpacked packages are not served. Nothing outside the directory is
served, symlinks included.

Any other place is read as tfmirror reads it: each version document lists
every hash the place states for a zip (a bucket's documents' h1: and zh:, an
OCI layer's digest as zh:, a registry's signed SHA-256), or, where it states
none, the zip's sums computed once. Zips are streamed from the place and
checked on the way against exactly the hashes served: one that disagrees is
cut short (the client sees a failed download), never delivered whole.

Hostnames: HOST/NAMESPACE/TYPE is the provider, as the clients address it. An
OCI template without ${hostname} reads one repository per namespace and type
whatever HOST a client asks for; a version tfmirror pushed names its provider
in its index, and is served only under that provider's HOST (push and sync
with the full address the clients use, e.g. registry.terraform.io/hashicorp/aws).

Without --tls-cert/--tls-key a self-signed certificate is made for 127.0.0.1,
::1, localhost and the --addr host, and written to --cert-out (default: a file
in the temp directory; the path is printed). Clients trust it with
SSL_CERT_FILE (set SSL_CERT_DIR to it as well), tfmirror with --ca-cert.

Pull-through (--upstream origin|PLACE): CACHE, any writable place, is served
as above, and what it lacks is fetched from SOURCE the first time a client asks:
once however many ask at once, streamed to them as it arrives, verified on the
way (signed SHA256SUMS, --policy, --require-signature) and landed in CACHE with
its provenance, as sync lands it; a zip that does not match is cut short and
lands nothing. The listings merge what SOURCE offers with what CACHE holds, are
reused for --listing-ttl and served stale while SOURCE fails. --spec FILE says
what may be pulled through (provider blocks, allow/deny, versions, platforms,
min_age: a version is offered once first seen that long ago); a refusal is a 404
saying why. --offline serves CACHE alone. /healthz answers 200, /metrics the
Prometheus text format; --audit FILE records landings and refusals. Several
processes may share one bucket or OCI repository. With --upstream origin the
clients name the hosts it reaches: only those --allow-host or the policy names,
or, with neither, public ones (internal addresses are refused, checked as each
connection is made). An upstream that fails is a 502, one that does not answer
within --upstream-timeout a 504; an archive that did not match its hashes is
answered 502 from memory for --refused-ttl. See docs/pull-through.md.

Registry protocols: for each hostname it mirrors, serve also answers
providers.v1 below /v1/providers/HOST/ (a version whose provenance PLACE keeps:
the origin's signed SHA256SUMS, signature and key as kept, so clients check the
signature and lock every platform's signed hash; others are left out, and
logged) and modules.v1 below /v1/modules/HOST/. A CLI configuration's host block
points a hostname at them: tfmirror config suggest PLACE --serve-url URL prints
it.

Who may use it: --auth FILE names bearer tokens by their SHA-256, each with a
name and the providers and modules it may read (401 without a known token, 403
for what its patterns leave out; reloaded on SIGHUP); the clients send theirs
from a credentials "HOST" block or TF_TOKEN_HOST. Neither client sends it for
archive downloads (nor for providers.v1's SHA256SUMS, nor module packages), so
the answers to a token name those at URLs signed for it (valid an hour). --client-ca FILE admits clients whose certificate that CA
signed (with --auth, either suffices). The access log and /metrics name the
token, never the token itself. Without either, serve on an address beyond
loopback warns that anyone who reaches it may use it.

One line per request goes to stderr (--log-format json: one JSON object per
line). Ctrl-C or SIGTERM stops it gracefully, letting requests in flight
finish for --drain; it then says what it drained and cancelled, and exits 130
(SIGINT) or 143 (SIGTERM).
Mirrors must be served at an https URL, and provider hostnames with a port do
not work through network mirrors in either client.`

// printServing says where a server listens, how clients trust it and what
// goes into their CLI configuration.
func printServing(out io.Writer, what string, s netmirror.Serving) {
	fmt.Fprintf(out, "%s at %s\n", what, s.URL)
	if s.CertOut != "" {
		fmt.Fprintf(out, "Self-signed certificate (for %s) written to %s\n", strings.Join(s.Hosts, ", "), s.CertOut)
		fmt.Fprintf(out, "Clients trust it with: SSL_CERT_FILE=%s SSL_CERT_DIR=%s\n", s.CertOut, s.CertOut)
		fmt.Fprintf(out, "tfmirror trusts it with: --ca-cert %s\n", s.CertOut)
	}
	fmt.Fprintf(out, "\nAdd to the CLI configuration (~/.terraformrc, or the file TF_CLI_CONFIG_FILE names):\n\n")
	fmt.Fprintf(out, "provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n\n", s.URL)
	fmt.Fprintf(out, "Or move a hostname's registry protocols (providers.v1, modules.v1) onto it with a host block:\n")
	fmt.Fprintf(out, "  tfmirror config suggest PLACE --serve-url %s   # prints one per hostname\n\n", s.URL)
	fmt.Fprintln(out, "Requests are logged to stderr; Ctrl-C stops.")
}
