package s3

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/hashing"
)

// DefaultConcurrency is how many listing and document requests are in
// flight at once.
const DefaultConcurrency = 16

// Options configure a Store.
type Options struct {
	// Endpoint is the URL of an S3-compatible store (--s3-endpoint), which is
	// then addressed path-style (ENDPOINT/BUCKET/KEY). Empty means AWS S3, at
	// the endpoint the AWS configuration names, virtual-hosted style.
	Endpoint string
	// HTTPClient carries the transport (TLS trust). Nil means one that
	// trusts the system pool.
	HTTPClient *http.Client
	// Hashing caps the work hashing an archive another writer landed may do.
	Hashing hashing.Options
	// Credentials and Region, when set, replace what the AWS configuration
	// chain (environment, shared config and credentials files, profiles,
	// SSO, instance roles) gives.
	Credentials aws.CredentialsProvider
	Region      string
	// Concurrency bounds parallel requests for listings and documents; 0
	// means DefaultConcurrency.
	Concurrency int
	// Timeout is the stall watchdog of every request (httpclient.Watchdog):
	// the wait for an answer while nothing is sent, and then for each next
	// bytes of an object. Zero means DefaultTimeout.
	Timeout time.Duration
	// Retry is the policy the SDK's retryer follows (attempts and waits;
	// the SDK classifies S3's errors). Its zero value means
	// backends.DefaultRetry: 3 tries. A request the SDK tried to the end
	// is not tried again by the sync engine.
	Retry backends.RetryPolicy
	// Debug, when set, gets a line for every request attempt the SDK makes
	// (--debug; see httpclient.Wrap). Nothing of the signature is written:
	// it travels in headers, which the log never shows.
	Debug io.Writer
	// CacheControl, when set, is the Cache-Control the objects written
	// carry (tfmirror publish: what a CDN in front of the bucket keeps,
	// and for how long).
	CacheControl CacheControl
}

// CacheControl is the Cache-Control of archives and of index documents.
type CacheControl struct {
	Archive, Document string
}

// PublishCacheControl is what a published tree's objects carry: archives
// never change once a version is out (a different zip under the same name
// is a conflict sync refuses without --force), so caches keep them for a
// year; documents change as versions and platforms land, so caches keep
// them for docMaxAge.
func PublishCacheControl(docMaxAge time.Duration) CacheControl {
	doc := "no-cache"
	if s := int64(docMaxAge / time.Second); s > 0 {
		doc = fmt.Sprintf("public, max-age=%d", s)
	}
	return CacheControl{Archive: "public, max-age=31536000, immutable", Document: doc}
}

// cacheControl returns v for a PutObjectInput: nil when it is "".
func cacheControl(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// Store is a bucket, or a prefix of one, holding the network-mirror layout.
type Store struct {
	backends.WarningLog

	name   string // as the user wrote it
	bucket string
	prefix string // "" or ending in "/"
	client *s3api.Client
	opts   Options

	landed mirrordoc.Landed // by key: the archives this process landed, as verified

	mu         gosync.Mutex
	listings   map[backends.Provider]cachedListing
	provenance map[backends.Provider]heldProvenance
	views      map[string]docView  // by key: version documents commits read
	docsSeen   map[string]seenDocs // by provider folder: the version documents a listing found
	flight     singleflight.Group
	slots      chan struct{} // the requests each has in flight, store-wide
}

var (
	_ backends.Writer         = (*Store)(nil)
	_ backends.FileStager     = (*Store)(nil)
	_ backends.Lister         = (*Store)(nil)
	_ backends.VersionsLister = (*Store)(nil)
	_ backends.Warner         = (*Store)(nil)
	_ backends.Auditor        = (*Store)(nil)

	_ backends.StatedHashLister = (*Store)(nil)
)

// ParseTarget splits BUCKET[/PREFIX] (an s3:// place without its scheme).
// The prefix is returned without leading or trailing slashes.
func ParseTarget(target string) (bucket, prefix string, err error) {
	bucket, prefix, _ = strings.Cut(target, "/")
	prefix = strings.Trim(prefix, "/")
	switch {
	case bucket == "":
		return "", "", backends.Usagef("s3://%s: no bucket: write s3://BUCKET or s3://BUCKET/PREFIX", target)
	case strings.ContainsAny(bucket, "?#\\ ") || strings.ContainsAny(prefix, "?#\\"):
		return "", "", backends.Usagef("s3://%s: a bucket name or prefix has no ?, #, \\ (or spaces in the bucket)", target)
	}
	for _, seg := range strings.Split(prefix, "/") {
		if (seg == "" && prefix != "") || seg == "." || seg == ".." {
			return "", "", backends.Usagef("s3://%s: the prefix has an empty, . or .. segment", target)
		}
	}
	return bucket, prefix, nil
}

// Open prepares a store for s3://TARGET, name being the place as the user
// wrote it. The AWS configuration is read now; no request is made until the
// store is used.
func Open(ctx context.Context, name, target string, opts Options) (*Store, error) {
	bucket, prefix, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	if prefix != "" {
		prefix += "/"
	}
	if opts.Endpoint != "" {
		u, err := url.Parse(opts.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
			return nil, backends.Usagef("place %s: --s3-endpoint %s: want the store's URL, https://HOST[:PORT] (http:// for a store without TLS)", name, opts.Endpoint)
		}
	}
	client, err := newClient(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{name: name, bucket: bucket, prefix: prefix, client: client, opts: opts,
		listings: map[backends.Provider]cachedListing{}, provenance: map[backends.Provider]heldProvenance{},
		views: map[string]docView{}, docsSeen: map[string]seenDocs{}}
	s.slots = make(chan struct{}, s.concurrency())
	return s, nil
}

// newClient builds the S3 client from the AWS configuration chain and opts:
// request checksums only where an operation requires them (S3-compatible
// stores reject the SDK's newer default ones), and no client-side retry
// quota, which ends a long sync's retries for good after a burst of errors.
func newClient(ctx context.Context, name string, opts Options) (*s3api.Client, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: httpclient.NewTransport(nil)}
	}
	load := []func(*config.LoadOptions) error{
		config.WithHTTPClient(sdkHTTPClient(hc)),
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
		config.WithRetryer(func() aws.Retryer { return sdkRetryer(opts.retry()) }),
	}
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	if opts.Credentials != nil {
		load = append(load, config.WithCredentialsProvider(opts.Credentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, backends.Usagef("place %s: the AWS configuration: %v", name, err)
	}
	if cfg.Region == "" {
		if opts.Endpoint == "" {
			return nil, backends.Usagef("place %s: no AWS region: set AWS_REGION, or region in the profile AWS_PROFILE names", name)
		}
		cfg.Region = "us-east-1" // what S3-compatible stores expect when told nothing
	}
	return s3api.NewFromConfig(cfg, func(o *s3api.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
			o.UsePathStyle = true
		}
		// Wrapped last, once the configuration chain (a CA bundle) and the
		// SDK (its timeouts) have set up their own client: every attempt
		// goes through the one HTTP wrapper.
		o.HTTPClient = wrappedClient{rt: httpclient.Wrap(httpclient.Watchdog(sdkTransport{o.HTTPClient}, opts.timeout()), opts.Debug)}
	}), nil
}

// DefaultTimeout is Options.Timeout's default, as OCI's.
const DefaultTimeout = 2 * time.Minute

func (o Options) timeout() time.Duration { return cmp.Or(o.Timeout, DefaultTimeout) }

func (o Options) retry() backends.RetryPolicy {
	if o.Retry == (backends.RetryPolicy{}) {
		return backends.DefaultRetry
	}
	return o.Retry
}

// sdkRetryer is the SDK's standard retryer following p: its attempts, its
// waits, and no client-side retry quota.
func sdkRetryer(p backends.RetryPolicy) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.RateLimiter = ratelimit.None
		o.MaxAttempts = p.Tries()
		o.MaxBackoff = p.Max
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) { return p.Backoff(attempt), nil })
	})
}

// sdkTransport is the SDK's HTTP client as a RoundTripper, for
// httpclient.Wrap. It follows no redirects, as the SDK wants.
type sdkTransport struct{ c aws.HTTPClient }

func (t sdkTransport) RoundTrip(req *http.Request) (*http.Response, error) { return t.c.Do(req) }

// wrappedClient is a RoundTripper as the SDK's HTTP client. The SDK retries
// inside an operation, sending each attempt through Do with its number in
// the Amz-Sdk-Request header; the attempt recorded in the context (a sync
// job's) is counted on by it, so the debug log numbers every try. When the
// SDK's last try fails as the ones before it did, the retry loop around
// the operation (a sync job's) is told so (backends.GaveUp): tries do not
// multiply.
type wrappedClient struct{ rt http.RoundTripper }

func (c wrappedClient) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	n, most := sdkAttempt(req.Header.Get("Amz-Sdk-Request"))
	if n > 1 {
		req = req.WithContext(backends.WithAttempt(ctx, backends.Attempt(ctx)+n-1))
	}
	resp, err := c.rt.RoundTrip(req)
	if most > 1 && n >= most && (err != nil && backends.IsTransient(err) || err == nil && backends.TransientStatus(resp.StatusCode)) {
		backends.GaveUp(ctx)
	}
	return resp, err
}

// sdkAttempt reads attempt=N and max=M from an Amz-Sdk-Request header
// ("attempt=2; max=3"), or zeros.
func sdkAttempt(header string) (n, most int) {
	for _, part := range strings.Split(header, ";") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, "attempt="); ok {
			n, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(part, "max="); ok {
			most, _ = strconv.Atoi(v)
		}
	}
	return n, most
}

// sdkHTTPClient carries hc's transport settings (TLS trust, proxy, idle
// connections) into the SDK's own kind of client, to which the AWS
// configuration can add a CA bundle (AWS_CA_BUNDLE, ca_bundle). The trust
// pool is copied, since the bundle is added to it.
func sdkHTTPClient(hc *http.Client) aws.HTTPClient {
	tr, ok := hc.Transport.(*http.Transport)
	if !ok {
		return hc
	}
	return awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.Proxy, t.MaxIdleConnsPerHost = tr.Proxy, max(tr.MaxIdleConnsPerHost, t.MaxIdleConnsPerHost)
		if tr.DialContext != nil {
			t.DialContext = tr.DialContext
		}
		if tr.TLSClientConfig != nil {
			t.TLSClientConfig = tr.TLSClientConfig.Clone()
			if t.TLSClientConfig.RootCAs != nil {
				t.TLSClientConfig.RootCAs = t.TLSClientConfig.RootCAs.Clone()
			}
		}
	})
}

func (s *Store) String() string { return s.name }

func (s *Store) warnf(format string, args ...any) {
	s.Warn(fmt.Sprintf("mirror %s: ", s.name) + fmt.Sprintf(format, args...))
}

func (s *Store) concurrency() int {
	if s.opts.Concurrency > 0 {
		return s.opts.Concurrency
	}
	return DefaultConcurrency
}

// providerPrefix is where p's objects are: PREFIX/HOST/NAMESPACE/TYPE/, the
// hostname in its ASCII form, as the clients request it from a network
// mirror.
func (s *Store) providerPrefix(p backends.Provider) string {
	return s.prefix + p.Hostname + "/" + p.Namespace + "/" + p.Type + "/"
}

// location is how an object is named in messages and archive locations.
func (s *Store) location(key string) string { return "s3://" + s.bucket + "/" + key }

// keyOf returns the key an archive location names.
func (s *Store) keyOf(a backends.Archive) string {
	if k, ok := strings.CutPrefix(a.Location, "s3://"+s.bucket+"/"); ok {
		return k
	}
	return s.providerPrefix(a.Provider) + a.Filename()
}

// errorf wraps err with the place and what was being done, once.
func (s *Store) errorf(err error, format string, args ...any) error {
	return fmt.Errorf("mirror %s: %s: %w", s.name, fmt.Sprintf(format, args...), classify(err))
}

// isCanceled reports whether err is the context's end.
func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// each runs f(ctx, i) for every i in [0, n) on at most s.concurrency()
// goroutines, which take the indexes in turn: a request through the SDK
// runs on a deep stack, which a goroutine per request would grow again
// for each one. The calls of every each of the store at once are bounded
// by s.concurrency() together (a plan reads its providers in parallel):
// more requests in flight than the connection pool keeps would open, and
// handshake, a new connection for most of them. f must not call each. The
// first error ends the others (ctx is cancelled for them) and is returned.
func (s *Store) each(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(n, s.concurrency()) {
		g.Go(func() error {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return nil
				}
				select {
				case s.slots <- struct{}{}:
				case <-gctx.Done():
					return gctx.Err()
				}
				err := f(gctx, i)
				<-s.slots
				if err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}
