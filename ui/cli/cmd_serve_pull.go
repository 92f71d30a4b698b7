package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	gosync "sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/regserve"
	"github.com/tfmirror/tfmirror/sync/pull"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// pullFlags are serve's pull-through flags (and --log-format, which plain
// serve takes too).
type pullFlags struct {
	upstream   string
	spec       string
	offline    bool
	ttl        time.Duration
	logFormat  string
	drain      time.Duration
	spoolDir   string
	allowHost  []string
	timeout    time.Duration
	refusedTTL time.Duration
	modules    string
	trust      trustFlags
	redirect   redirectFlags
	auth       authFlags
	// json: serve --json (JSON lines on stdout, ending in a summary).
	json bool
	js   *serveJSON
	// drained is how the stop went, once serving stopped; fetches the
	// pull-through fetches still running then, cancelled.
	drained *netmirror.Drained
	fetches int
}

func (f *pullFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.upstream, "upstream", "", "pull-through: fetch what CACHE lacks from `SOURCE`: origin (each provider's origin registry) or a place")
	fl.StringVar(&f.spec, "spec", "", "pull-through: a policy `FILE` (HCL): providers, allow/deny, versions, platforms, min_age")
	fl.BoolVar(&f.offline, "offline", false, "pull-through: serve only what CACHE holds, asking no upstream")
	fl.DurationVar(&f.ttl, "listing-ttl", pull.DefaultTTL, "pull-through: how long an upstream listing is reused (served stale while the upstream fails)")
	fl.StringVar(&f.logFormat, "log-format", "text", "access log lines on stderr: text or json")
	fl.BoolVar(&f.json, "json", false, `JSON lines on stdout: {"type":"serving",...} when it listens, {"type":"request",...} per request (the access log), {"type":"summary",...} when it stops`)
	fl.DurationVar(&f.drain, "drain", 30*time.Second, "on SIGTERM, how long requests in flight may take to finish")
	fl.StringVar(&f.spoolDir, "spool-dir", "", "pull-through with --modules: where fetched modules are unpacked and packed (default: the temp directory); a provider's zip streams to the clients from CACHE's own staging file")
	fl.StringSliceVar(&f.allowHost, "allow-host", nil, "pull-through with --upstream origin: a `HOST` clients may have the mirror reach (repeatable); with it or a --spec naming providers, only named hosts are reached, otherwise only public ones")
	fl.DurationVar(&f.timeout, "upstream-timeout", httpclient.DefaultTimeout, "pull-through: how long the upstream has to answer a request (504 to the client after its retries)")
	fl.DurationVar(&f.refusedTTL, "refused-ttl", pull.DefaultRefusedTTL, "pull-through: how long an upstream archive that did not match its hashes is answered as refused before it is fetched again")
	fl.StringVar(&f.modules, "modules", "", "serve modules.v1 from the module `PLACE` (a directory, s3://BUCKET/PREFIX or oci://REGISTRY/TEMPLATE); with --upstream, what it lacks is fetched from each module's registry and landed there")
	f.trust.add(cmd)
	f.redirect.add(cmd)
	f.auth.add(cmd)
}

// pullThrough reports whether serve runs as a pull-through mirror.
func (f *pullFlags) pullThrough() bool { return f.upstream != "" || f.offline }

// plainOnly refuses the pull-through flags without --upstream.
func (f *pullFlags) plainOnly() error {
	switch {
	case f.spec != "":
		return usageErr("serve: --spec is a pull-through policy: give --upstream origin|PLACE too (a plain serve serves what PLACE holds)")
	case f.trust.policy != "" || f.trust.requireSignature || f.trust.audit != "":
		return usageErr("serve: --policy, --require-signature and --audit apply to what a pull-through mirror fetches: give --upstream origin|PLACE too")
	}
	return f.checkLogFormat()
}

func (f *pullFlags) checkLogFormat() error {
	if f.logFormat != "text" && f.logFormat != "json" {
		return usageErr("serve: --log-format %q: want text or json", f.logFormat)
	}
	return nil
}

// serveLogger is where serve's lines other than the access log go (what
// landed, errors), in the access log's format: an RFC 3339 time first, or
// a JSON object with --log-format json.
func (f *pullFlags) serveLogger(w io.Writer) *log.Logger {
	return log.New(&logLines{w: w, json: f.logFormat == "json"}, "", 0)
}

// logLines writes each line a log.Logger gives it (one Write per line)
// stamped with the time as the access log is.
type logLines struct {
	mu   gosync.Mutex
	w    io.Writer
	json bool
}

func (l *logLines) Write(p []byte) (int, error) {
	now := time.Now().UTC().Format(time.RFC3339)
	msg := strings.TrimRight(string(p), "\n")
	line := []byte(now + " " + msg)
	if l.json {
		line, _ = json.Marshal(struct {
			Time    string `json:"time"`
			Message string `json:"message"`
		}{now, msg})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	return len(p), nil
}

// accessLog is where each request's line goes: stdout's JSON lines with
// --json, else stderr in the --log-format.
func (f *pullFlags) accessLog(st streams) func(pull.Access) {
	if f.js != nil {
		return f.js.access
	}
	return pull.AccessLog(st.stderr, f.logFormat == "json")
}

// ready is what serve says once it listens: the serving line with --json,
// else where it listens and the block to paste.
func (f *pullFlags) ready(st streams, what, place, upstream string) func(netmirror.Serving) {
	out := st.stdout
	if f.json {
		f.js = newServeJSON(out)
	}
	return func(s netmirror.Serving) {
		if f.js != nil {
			f.js.serving(place, upstream, s)
			return
		}
		printServing(out, what, s)
	}
}

// stopped records how the stop went (ServeOptions.Stopped).
func (f *pullFlags) stopped(d netmirror.Drained) { f.drained = &d }

// done ends serve: the summary line with --json. Stopped by a signal, it
// says what the stop drained and cancelled and ends as interrupted, so
// the exit code is the signal's (130, 143).
func (f *pullFlags) done(ctx context.Context, st streams, err error) error {
	if f.js != nil {
		f.js.summary(err)
	}
	var intr Interrupted
	if err != nil || f.drained == nil || !errors.As(context.Cause(ctx), &intr) {
		return err
	}
	msg := fmt.Sprintf("serve: interrupted: stopped serving; %v", f.drained)
	if f.fetches > 0 {
		what := "downloads"
		if f.fetches == 1 {
			what = "download"
		}
		msg += fmt.Sprintf("; %d %s from upstream cancelled, nothing of them landed", f.fetches, what)
	}
	f.serveLogger(st.stderr).Print(msg) // a log line like serve's others
	return context.Canceled             // said; Execute exits with the signal's code
}

// plainHandler is plain serve's handler, its access log as --log-format
// says.
func (f *pullFlags) plainHandler(st streams, r backends.Reader, so netmirror.ServeOptions) http.Handler {
	h := netmirror.NewHandler(r, so.Logger, so.Hashing)
	h.Redirect = f.redirect.duration()
	// The one access log format of every serve mode (pull.AccessLog).
	log := f.accessLog(st)
	h.Access = func(a netmirror.Access) {
		log(pull.Access{Time: time.Now().Add(-a.Elapsed), Remote: a.Remote, Method: a.Method, Path: a.Path, Status: a.Status, Bytes: a.Bytes, Elapsed: a.Elapsed, Cut: a.Cut, Client: a.Client})
	}
	return h
}

// servePullThrough runs `serve CACHE --upstream SOURCE`.
func servePullThrough(ctx context.Context, env *Env, st streams, cacheArg string, f *pullFlags, so netmirror.ServeOptions) error {
	if err := f.checkLogFormat(); err != nil {
		return err
	}
	o := env.placeOptions()
	cache, err := place.OpenWriter(ctx, cacheArg, o)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	pol, err := f.policy(cache)
	if err != nil {
		return err
	}
	o.Timeout = f.timeout
	reach, err := f.reach(pol, &o)
	if err != nil {
		return err
	}
	src, err := f.source(ctx, o)
	if err != nil {
		return err
	}
	tp, err := f.trust.trustPolicy()
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	auditLog, err := f.trust.openAudit("serve")
	if err != nil {
		return err
	}
	stderr := st.stderr
	logger := f.serveLogger(stderr)
	metrics := pull.NewMetrics()
	upstream := backends.RedactPlace(f.upstream)
	if f.offline {
		upstream = "nothing (offline)"
	}
	m := pull.New(pull.Options{Cache: cache, Upstream: src, UpstreamName: upstream, Policy: pol, Trust: tp,
		Hashing: env.hashing(), TTL: f.ttl, Logger: logger, Audit: auditLog, Metrics: metrics,
		Origin: f.upstream == "origin", Reach: reach, RefusedTTL: f.refusedTTL})
	h := netmirror.NewHandler(m, logger, env.hashing())
	h.Access = func(netmirror.Access) {} // the Server logs each request, with more
	h.Redirect = f.redirect.duration()
	so.Ready = f.ready(st, "Serving "+cacheArg+" as a pull-through mirror of "+upstream, cacheArg, upstream)
	mods, err := f.serveModules(ctx, o, logger, pol, metrics)
	if err != nil {
		m.Close()
		return err
	}
	next := regserve.New(h, regserve.Options{Providers: m, Modules: mods, Logger: logger})
	mm, _ := mods.(*pull.ModuleMirror)
	so.Handler = &pull.Server{Mirror: m, Modules: mm, Next: next, Metrics: metrics, Access: f.accessLog(st)}
	so.Logger, so.Drain = logger, f.drain
	stop, err := f.auth.secure(ctx, stderr, logger.Printf, &so, deniedLog(f.accessLog(st), metrics))
	if err != nil {
		m.Close()
		return err
	}
	defer stop()
	so.Stopped = f.stopped
	err = netmirror.Serve(ctx, nil, so)
	f.fetches = m.Flights()
	m.Close()
	st.warnings(cache)
	return f.done(ctx, st, st.closeAudit(auditLog, err))
}

// source is where the mirror fetches from: each provider's origin registry
// (found by service discovery on its hostname, as the clients' direct
// installation does), or one place; nil offline.
func (f *pullFlags) source(ctx context.Context, o place.Options) (pull.Source, error) {
	switch {
	case f.offline:
		return nil, nil
	case f.upstream == "origin":
		return func(ctx context.Context, p backends.Provider) (backends.Reader, error) {
			return place.Open(ctx, "registry://"+p.Hostname, o)
		}, nil
	}
	if _, err := openPlace(ctx, f.upstream, o); err != nil {
		return nil, err
	}
	arg := f.upstream
	return func(ctx context.Context, p backends.Provider) (backends.Reader, error) {
		return place.Open(ctx, arg, o)
	}, nil
}

// reach is, with --upstream origin, what the mirror may reach of the
// hostnames clients name: the --allow-host hosts and those the policy's
// provider blocks and allow patterns name, whatever their addresses; with
// none named, any public host (a literal address that is not public is
// refused before any request, a name that resolves to one when it is
// connected to). It sets o's HTTP client to one that connects so.
func (f *pullFlags) reach(pol *pull.Policy, o *place.Options) (func(string) string, error) {
	if f.offline {
		return nil, nil // reaches nothing
	}
	if f.upstream != "origin" {
		if len(f.allowHost) > 0 {
			return nil, usageErr("serve: --allow-host names the hosts --upstream origin may reach; with --upstream %s the mirror reaches that place alone", backends.RedactPlace(f.upstream))
		}
		return nil, nil
	}
	named := map[string]bool{}
	for _, h := range f.allowHost {
		n, err := backends.NormalizeHostname(strings.TrimSuffix(h, "."))
		if err != nil {
			return nil, usageErr("serve: --allow-host %q: %v", h, err)
		}
		named[bareHost(n)] = true
	}
	for _, h := range pol.Hosts() {
		named[bareHost(h)] = true
	}
	r := httpclient.NewReach(func(host string) bool { return named[host] })
	roots, err := httpclient.LoadRoots(o.CACertFile)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	cert, err := o.ClientCert()
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	o.HTTPClient = &http.Client{Transport: r.Transport(httpclient.NewClientTransport(roots, cert))}
	return func(host string) string {
		bare := bareHost(host)
		switch {
		case named[bare]:
			return ""
		case len(named) > 0:
			return fmt.Sprintf("this mirror reaches only the registries its operator names (serve --allow-host, or the policy's provider blocks and allow patterns); %s is not one", host)
		}
		if err := r.Allows(bare); err != nil {
			return fmt.Sprintf("this mirror does not reach %s: not a public address (its operator can name it with serve --allow-host)", host)
		}
		return ""
	}, nil
}

// bareHost is a comparison-form hostname without its port.
func bareHost(h string) string {
	if i := strings.LastIndexByte(h, ':'); i > 0 && !strings.HasSuffix(h, "]") {
		return h[:i]
	}
	return h
}

// policy reads --spec; a cooldown is recorded in CACHE, which must then be
// a directory.
func (f *pullFlags) policy(cache backends.Writer) (*pull.Policy, error) {
	if f.spec == "" {
		return nil, nil
	}
	s, err := spec.LoadPolicy(f.spec)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	pol := &pull.Policy{Spec: s}
	if s.MinAge > 0 {
		switch c := cache.(type) {
		case interface{ Dir() string }:
			pol.Seen = &pull.SeenDir{Dir: c.Dir()}
		case backends.NoteKeeper:
			pol.Seen = &pull.NoteSeen{Keeper: c}
		default:
			return nil, usageErr("serve: %s: min_age records when each version was first seen in CACHE, which needs a directory, a bucket or an OCI CACHE (%s is none of them)", f.spec, cache)
		}
	}
	return pol, nil
}
