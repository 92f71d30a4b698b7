package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/serveauth"
	"github.com/tfmirror/tfmirror/hashing/regular"
	"github.com/tfmirror/tfmirror/sync/pull"
)

// authFlags are who may use serve: --auth FILE (tokens) and --client-ca
// FILE (client certificates).
type authFlags struct {
	file     string
	clientCA string
}

func (a *authFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.file, "auth", "", "a tokens `FILE` (HCL): each token block's name, sha256 of the token, and the providers and modules it may read; reloaded on SIGHUP. Clients send the token from a credentials block (TF_TOKEN_...)")
	fl.StringVar(&a.clientCA, "client-ca", "", "PEM `FILE` of the CAs whose client certificates may use the mirror (mTLS); with --auth, a token or a certificate suffices")
}

// secure wraps so's handler in the authorization --auth and --client-ca
// ask for, and sets the TLS layer to ask for client certificates. Without
// either on an address beyond loopback it warns that anyone may use the
// mirror. denied is told of each refusal (the access log, the metrics).
// The returned stop ends the SIGHUP reloads.
func (a *authFlags) secure(ctx context.Context, stderr io.Writer, logger func(string, ...any), so *netmirror.ServeOptions, denied func(*http.Request, int, string)) (stop func(), err error) {
	if a.file == "" && a.clientCA == "" {
		if !loopback(so.Addr) {
			fmt.Fprintf(stderr, "warning: serving on %s without --auth or --client-ca: anyone who reaches it may use it\n", so.Addr)
		}
		return func() {}, nil
	}
	auth := &serveauth.Auth{Path: a.file, Certificates: a.clientCA != "", Denied: denied}
	if _, err := auth.Reload(); err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("serve: %w", err)}
	}
	if a.clientCA != "" {
		pemBytes, err := regular.ReadFile(a.clientCA, 0)
		if err != nil {
			return nil, usageErr("serve: --client-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, usageErr("serve: --client-ca %s: no PEM certificate in it", a.clientCA)
		}
		so.ClientCAs, so.ClientAuth = pool, tls.RequireAndVerifyClientCert
		if a.file != "" {
			so.ClientAuth = tls.VerifyClientCertIfGiven
		}
	}
	so.Handler = auth.Handler(so.Handler)
	return a.reloads(ctx, auth, logger), nil
}

// reloads reads the tokens file again on each SIGHUP, keeping the tokens
// in use when it does not load; connections are not touched.
func (a *authFlags) reloads(ctx context.Context, auth *serveauth.Auth, logf func(string, ...any)) func() {
	if a.file == "" {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				if n, err := auth.Reload(); err != nil {
					logf("error: reloading the tokens: %v; the tokens in use stay", err)
				} else {
					logf("reloaded %d tokens from %s", n, a.file)
				}
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// loopback reports whether addr listens on the loopback interface only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// deniedLog is the access log's line for a request the authorization
// refused.
func deniedLog(log func(pull.Access), metrics *pull.Metrics) func(*http.Request, int, string) {
	return func(r *http.Request, status int, client string) {
		metrics.Denied(status, client)
		log(pull.Access{Time: time.Now(), Remote: r.RemoteAddr, Method: r.Method, Path: r.URL.EscapedPath(), Status: status, Client: client, Reason: "unauthorized"})
	}
}
