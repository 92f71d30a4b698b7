package s3test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"go/build"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/tlscert"
)

// Module and Version are the versitygw the tests run.
const (
	Module  = "github.com/versity/versitygw/cmd/versitygw"
	Version = "v1.8.0"
)

// The root account of every server the tests start.
const (
	AccessKey = "tfmirror-test"
	SecretKey = "tfmirror-test-secret"
	Region    = "us-east-1"
)

// Server is a running versitygw. It stops when the test ends.
type Server struct {
	// URL is the endpoint, https://127.0.0.1:PORT.
	URL string
	// Dir is the storage root: one directory per bucket, one file per
	// object, named by its key.
	Dir string

	caFile string
	caPEM  []byte
	roots  *x509.CertPool
	cmd    *exec.Cmd
	done   chan struct{}
}

var (
	binOnce gosync.Once
	binPath string
	binErr  error
	buckets atomic.Int64
)

// Binary returns the path of a versitygw binary, building it into the tool
// cache when none is installed; it skips t when that fails.
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = findOrBuild() })
	if binErr != nil {
		t.Skipf("s3test: versitygw is not installed and could not be built (%v): install it with `go install %s@%s`", binErr, Module, Version)
	}
	return binPath
}

// findOrBuild looks where `go install` puts binaries and in the tool cache,
// then builds the pinned version into the cache.
func findOrBuild() (string, error) {
	if p := os.Getenv("TFMIRROR_VERSITYGW"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	for _, gp := range filepath.SplitList(build.Default.GOPATH) {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "versitygw"); isExecutable(p) {
			return p, nil
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "tfmirror-tools", "versitygw-"+Version)
	p := filepath.Join(dir, "versitygw")
	if isExecutable(p) {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "install", Module+"@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return p, nil
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0
}

// Start starts a server over TLS with an empty storage root.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	s := &Server{Dir: filepath.Join(dir, "data"), caFile: filepath.Join(dir, "ca.pem"), caPEM: certPEM}
	keyFile := filepath.Join(dir, "key.pem")
	for _, f := range []struct {
		path string
		data []byte
	}{{s.caFile, certPEM}, {keyFile, keyPEM}} {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			t.Fatalf("s3test: %v", err)
		}
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatalf("s3test: %v", err)
	}
	s.roots = x509.NewCertPool()
	s.roots.AppendCertsFromPEM(certPEM)
	// A port found free may be taken before the server binds it: try again.
	for attempt := 1; ; attempt++ {
		err := s.start(t, bin, keyFile, filepath.Join(dir, "versitygw.log"))
		if err == nil {
			return s
		}
		if attempt == 3 {
			t.Fatalf("s3test: %v", err)
		}
	}
}

// start runs the binary on a free port and waits, a minute at most, until
// it completes a TLS handshake.
func (s *Server) start(t testing.TB, bin, keyFile, logFile string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	_ = l.Close() // only asked for a free port
	logf, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }() // the child writes its own copy
	cmd := exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--port", addr, "--region", Region,
		"--cert", s.caFile, "--key", keyFile, "--keep-alive", "--quiet", "posix", s.Dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // killed by Stop
	if err := awaitTLS("versitygw", addr, s.roots, done, logFile); err != nil {
		_ = cmd.Process.Kill() // done says when it is gone
		<-done
		return err
	}
	s.URL, s.cmd, s.done = "https://"+addr, cmd, done
	t.Cleanup(s.Stop)
	return nil
}

// awaitTLS waits, a minute at most, until the server at addr completes a
// TLS handshake trusting roots; done closes when its process exits, whose
// log is then the error.
func awaitTLS(name, addr string, roots *x509.CertPool, done <-chan struct{}, logFile string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-done:
			out, _ := os.ReadFile(logFile)
			return fmt.Errorf("%s exited: %s", name, strings.TrimSpace(string(out)))
		default:
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{RootCAs: roots})
		if err == nil {
			_ = conn.Close() // only a probe
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer on %s within a minute: %v", name, addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition: the server's first handshake
	}
}

// Stop kills the server (by its PID) and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill() // done says when it is gone
		<-s.done
	}
}

// CPU is the CPU time (user and system) the server has used so far, read
// from /proc/PID/stat (0 where there is no such file): a benchmark on a
// machine the server shares tells its work from the client's with it.
func (s *Server) CPU() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return 0
	}
	// After the command's name: state, ppid, ... utime (14th) and stime
	// (15th) of the whole process, in clock ticks of 1/100 s (USER_HZ).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	var user, sys int64
	if _, err := fmt.Sscan(f[11], &user); err != nil {
		return 0
	}
	if _, err := fmt.Sscan(f[12], &sys); err != nil {
		return 0
	}
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// CAFile is a PEM file of the certificate the server presents (its own
// CA), for --ca-cert and SSL_CERT_FILE.
func (s *Server) CAFile() string { return s.caFile }

// CertPEM is the certificate the server presents.
func (s *Server) CertPEM() []byte { return s.caPEM }

// HTTPClient trusts the server's certificate.
func (s *Server) HTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: s.roots}
	t.MaxIdleConnsPerHost = 32
	return &http.Client{Transport: t}
}

// Options open a store on this server as the root account.
func (s *Server) Options() s3.Options {
	return s3.Options{
		Endpoint: s.URL, HTTPClient: s.HTTPClient(), Region: Region,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	}
}

// Env is what a tfmirror process needs to reach the server as the root
// account through the AWS configuration chain, with nothing of the
// machine's own AWS configuration.
func (s *Server) Env() []string {
	none := filepath.Join(s.Dir, "..", "no-aws-config")
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=" + Region,
		"AWS_CONFIG_FILE=" + none, "AWS_SHARED_CREDENTIALS_FILE=" + none, "AWS_PROFILE=", "AWS_SESSION_TOKEN=",
		"AWS_ENDPOINT_URL=", "AWS_ENDPOINT_URL_S3=", "AWS_EC2_METADATA_DISABLED=true"}
}

// Args are the tfmirror flags that point at the server and trust it.
func (s *Server) Args() []string { return []string{"--s3-endpoint", s.URL, "--ca-cert", s.caFile} }

// Client is a plain S3 client of the server, for tests to look at and
// damage buckets with nothing of tfmirror in between.
func (s *Server) Client() *s3api.Client {
	return s3api.New(s3api.Options{
		BaseEndpoint: aws.String(s.URL), UsePathStyle: true, Region: Region, HTTPClient: s.HTTPClient(),
		Credentials:                credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// Bucket creates a bucket with a name no other bucket of this process has.
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("tfmirror-%d-%d", os.Getpid(), buckets.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client().CreateBucket(ctx, &s3api.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("s3test: create bucket %s: %v", name, err)
	}
	return name
}

// PublicRead lets anyone read the bucket's objects without credentials
// (a bucket policy allowing s3:GetObject to every principal), as a bucket
// serving a network mirror to the clients is set up.
func (s *Server) PublicRead(t testing.TB, bucket string) {
	t.Helper()
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::%s/*"}]}`, bucket)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client().PutBucketPolicy(ctx, &s3api.PutBucketPolicyInput{Bucket: &bucket, Policy: &policy}); err != nil {
		t.Fatalf("s3test: bucket policy of %s: %v", bucket, err)
	}
}

// Get fetches an object the way a client of the network mirror does:
// anonymously, path-style, over HTTPS. It returns the status, the
// Content-Type and the body.
func (s *Server) Get(t testing.TB, bucket, key string) (int, string, []byte) {
	t.Helper()
	resp, err := s.HTTPClient().Get(s.URL + "/" + bucket + "/" + key)
	if err != nil {
		t.Fatalf("s3test: GET %s: %v", key, err)
	}
	defer func() { _ = resp.Body.Close() }() // read only
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("s3test: GET %s: %v", key, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// Upload copies every file under dir into the bucket under prefix ("" or
// ending in "/"), keys being the files' slash-separated paths, as `aws s3
// sync` uploads a mirror directory: documents as application/json, zips as
// application/zip, with nothing of tfmirror in between.
func (s *Server) Upload(t testing.TB, bucket, prefix, dir string) {
	t.Helper()
	c := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ctype := "application/octet-stream"
		switch filepath.Ext(p) {
		case ".json":
			ctype = "application/json"
		case ".zip":
			ctype = "application/zip"
		}
		key := prefix + filepath.ToSlash(rel)
		_, err = c.PutObject(ctx, &s3api.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body), ContentType: &ctype})
		return err
	})
	if err != nil {
		t.Fatalf("s3test: upload %s: %v", dir, err)
	}
}
