package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/hashing"
)

// holdingTransport holds the first PUT of a version document until the
// test releases it: the moment between a writer's listing and its write.
type holdingTransport struct {
	next    http.RoundTripper
	once    gosync.Once
	held    chan struct{} // closed when the PUT is being held
	release chan struct{}
}

func (h *holdingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, ".json") && !strings.HasSuffix(r.URL.Path, "/index.json") {
		first := false
		h.once.Do(func() { first = true })
		if first {
			close(h.held)
			select {
			case <-h.release:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}
	}
	return h.next.RoundTrip(r)
}

// commit lands one archive the way the engine does.
func commit(t *testing.T, w backends.Writer, pkg backends.Package, zip []byte, force bool) error {
	t.Helper()
	return backendtest.Commit(context.Background(), t, w, pkg, zip, force)
}

// Writer A lists the bucket and, before it writes the version document,
// writer B lands another platform of the same version and writes its
// documents. A's document, built from a listing without B's archive, must
// not replace B's: A starts again and both archives end up listed.
func TestFlushConvergesWithAConcurrentWriter(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the AWS configuration adds a bundle only to its own kind of transport
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	hold := &holdingTransport{next: srv.HTTPClient().Transport, held: make(chan struct{}), release: make(chan struct{})}
	oa := srv.Options()
	oa.HTTPClient = &http.Client{Transport: hold}
	ctx := context.Background()
	a, err := s3.Open(ctx, "s3://"+bucket, bucket, oa)
	if err != nil {
		t.Fatal(err)
	}
	b := openStore(t, srv, bucket, "")
	x := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	y := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	if err := commit(t, a, x, backendtest.ProviderZip(t, x, ""), false); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- a.Flush(ctx, x.Provider) }()
	select {
	case <-hold.held:
	case err := <-flushed:
		t.Fatalf("A's flush ended without writing a version document: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("A's flush did not reach its write within a minute")
	}
	if err := commit(t, b, y, backendtest.ProviderZip(t, y, ""), false); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx, y.Provider); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-flushed; err != nil {
		t.Fatalf("A's flush: %v", err)
	}
	as, err := b.Archives(ctx, x.Provider, x.Version)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 {
		t.Fatalf("Archives = %v, want both platforms", as)
	}
	for _, a := range as {
		if len(a.Hashes()) != 2 {
			t.Errorf("%s is listed with %v, want its h1: and zh:", a.Package, a.Hashes())
		}
	}
}

// An archive whose listing outlived it (deleted by hand) lands without the
// old listing describing it meanwhile: Commit drops the listing first.
func TestCommitDropsTheListingOfADeletedArchive(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	st := openStore(t, srv, bucket, "")
	ctx := context.Background()
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	other := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	for _, p := range []backends.Package{pkg, other} {
		if err := commit(t, st, p, backendtest.ProviderZip(t, p, "old"), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	key := "example.com/acme/alpha/" + pkg.Filename()
	if _, err := srv.Client().DeleteObject(ctx, &s3api.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatal(err)
	}
	fresh := openStore(t, srv, bucket, "") // another process: it did not land the old archive
	if err := commit(t, fresh, pkg, backendtest.ProviderZip(t, pkg, "new"), false); err != nil {
		t.Fatal(err)
	}
	// Before any flush, the new archive is not described by the old listing.
	as, err := fresh.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Key() == pkg.Key() && len(a.Evidence) != 0 {
			t.Fatalf("the new archive is listed with the deleted one's hashes: %v", a.Hashes())
		}
	}
	if err := fresh.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	if probs := fresh.Audit(ctx, pkg.Provider); len(probs) != 0 {
		t.Fatalf("Audit after the flush: %v", probs)
	}
}

// A conditional create that finds a different archive is a conflict
// (backends.ErrConflict) that leaves the archive and its listing alone.
func TestCommitConflictLeavesTheArchive(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	a, b := openStore(t, srv, bucket, ""), openStore(t, srv, bucket, "")
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	if err := commit(t, a, pkg, backendtest.ProviderZip(t, pkg, "a"), false); err != nil {
		t.Fatal(err)
	}
	err := commit(t, b, pkg, backendtest.ProviderZip(t, pkg, "b"), false)
	if !errors.Is(err, backends.ErrConflict) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v, want a conflict that names --force", err)
	}
}

// recordingTransport keeps the headers of every request it carries.
type recordingTransport struct {
	next http.RoundTripper
	mu   gosync.Mutex
	reqs []http.Header
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Header.Clone())
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// Requests carry checksums only where S3 requires them: S3-compatible stores
// reject the SDK's newer default ones (a CRC trailer in an aws-chunked
// body). A sync's PUTs and GETs carry none.
func TestRequestsCarryNoChecksumsUnlessRequired(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the AWS configuration adds a bundle only to its own kind of transport
	t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "")
	srv := s3test.Start(t)
	rec := &recordingTransport{next: srv.HTTPClient().Transport}
	o := srv.Options()
	o.HTTPClient = &http.Client{Transport: rec}
	bucket := srv.Bucket(t)
	st, err := s3.Open(context.Background(), "s3://"+bucket, bucket, o)
	if err != nil {
		t.Fatal(err)
	}
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	if err := commit(t, st, pkg, backendtest.ProviderZip(t, pkg, ""), false); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(context.Background(), pkg.Provider); err != nil {
		t.Fatal(err)
	}
	if len(rec.reqs) == 0 {
		t.Fatal("no request went through the transport")
	}
	for _, h := range rec.reqs {
		for name := range h {
			if strings.HasPrefix(strings.ToLower(name), "x-amz-checksum-") || strings.EqualFold(name, "X-Amz-Sdk-Checksum-Algorithm") || strings.EqualFold(name, "X-Amz-Trailer") {
				t.Errorf("a request (%s) carries %s: %s", h.Get("Content-Type"), name, h.Get(name))
			}
		}
		if strings.Contains(h.Get("Content-Encoding"), "aws-chunked") {
			t.Errorf("a request (%s) has an aws-chunked body", h.Get("Content-Type"))
		}
	}
}

// cutConn is a TCP connection that dies after left bytes have been
// written, as a process killed mid-upload does: the store sees the TCP
// stream end inside a TLS record, with no close_notify and the body short.
type cutConn struct {
	net.Conn
	left int
}

func (c *cutConn) Write(p []byte) (int, error) {
	if len(p) > c.left {
		n, _ := c.Conn.Write(p[:c.left])
		c.left = 0
		c.Conn.Close()
		return n, errors.New("the uploading process died")
	}
	c.left -= len(p)
	return c.Conn.Write(p)
}

// An upload cut short, its connection dropped mid-body, lands nothing: the
// store checks the bytes it got against the SHA-256 the request is signed
// with, so a truncated archive never appears in the bucket (versitygw
// creates the object from what arrived of an unsigned body).
func TestAnUploadCutShortLandsNothing(t *testing.T) {
	srv := s3test.Start(t)
	tr := srv.HTTPClient().Transport.(*http.Transport)
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: c, left: 256 << 10}, nil
	}
	o := srv.Options()
	o.HTTPClient = &http.Client{Transport: tr}
	bucket := srv.Bucket(t)
	st, err := s3.Open(context.Background(), "s3://"+bucket, bucket, o)
	if err != nil {
		t.Fatal(err)
	}
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	body := make([]byte, 1<<20) // incompressible: the zip is larger than the cut
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	zip := backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-alpha", Body: body})
	if err := commit(t, st, pkg, zip, false); err == nil {
		t.Fatal("a commit whose upload was cut short succeeded")
	}
	key := "example.com/acme/alpha/" + pkg.Filename()
	if _, err := srv.Client().HeadObject(context.Background(), &s3api.HeadObjectInput{Bucket: &bucket, Key: &key}); err == nil {
		t.Fatalf("the bucket holds %s after an upload cut short", key)
	}
}

// An archive staged from a local file (a filesystem source's, StageFile)
// is uploaded from that file, which is only read: the bytes that land are
// those hashed, since the upload is signed with their SHA-256. A file that
// changed after it was hashed is refused by the store and lands nothing;
// neither commit nor abort removes the source's file.
func TestStageFileLandsOnlyTheBytesHashed(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	st := openStore(t, srv, bucket, "")
	ctx := context.Background()
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	zip := backendtest.ProviderZip(t, pkg, "checked")
	src := filepath.Join(t.TempDir(), pkg.Filename())
	if err := os.WriteFile(src, zip, 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(src, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := "example.com/acme/alpha/" + pkg.Filename()

	// The file changes after it was hashed: one byte, the size unchanged.
	swapped := bytes.Clone(zip)
	swapped[len(swapped)/2] ^= 0xff
	staged, err := st.StageFile(ctx, pkg, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := staged.Commit(ctx, sums, false); err == nil {
		t.Fatal("a file that changed after it was hashed was committed")
	}
	if _, err := srv.Client().HeadObject(ctx, &s3api.HeadObjectInput{Bucket: &bucket, Key: &key}); err == nil {
		t.Fatalf("the bucket holds %s, whose bytes are not those hashed", key)
	}

	// The file as hashed lands, byte for byte, and stays where it was.
	if err := os.WriteFile(src, zip, 0o644); err != nil {
		t.Fatal(err)
	}
	staged, err = st.StageFile(ctx, pkg, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := staged.Write([]byte("x")); err == nil {
		t.Fatal("a Staged from a file took a write")
	}
	if err := staged.Commit(ctx, sums, false); err != nil {
		t.Fatal(err)
	}
	staged.Abort()
	if got, err := os.ReadFile(src); err != nil || !bytes.Equal(got, zip) {
		t.Fatalf("the source file after the commit: %v (%d bytes, want %d)", err, len(got), len(zip))
	}
	out, err := srv.Client().GetObject(ctx, &s3api.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	if got, _ := io.ReadAll(out.Body); !bytes.Equal(got, zip) {
		t.Fatalf("the bucket holds %d bytes that are not the file's %d", len(got), len(zip))
	}
}

// requestLog records each request as "METHOD /bucket/key?query".
type requestLog struct {
	next http.RoundTripper
	mu   gosync.Mutex
	reqs []string
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, req.Method+" "+req.URL.Path)
	l.mu.Unlock()
	return l.next.RoundTrip(req)
}

// count returns how many requests were "METHOD /bucket/key".
func (l *requestLog) count(method, path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if r == method+" "+path {
			n++
		}
	}
	return n
}

// The commits of a version's platforms landing together read its version
// document (for a stale listing) once between them; after a listing of
// the provider's folder that found no such document (a sync's plan), not
// at all. This store's own write of the document is never taken for what
// it read before: a platform it listed, then deleted by hand, is unlisted
// before it lands again.
func TestCommitsReadAVersionDocumentOnce(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the AWS configuration adds a bundle only to its own kind of transport
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	ctx := context.Background()
	rec := &requestLog{next: srv.HTTPClient().Transport}
	o := srv.Options()
	o.HTTPClient = &http.Client{Transport: rec}
	st, err := s3.Open(ctx, "s3://"+bucket, bucket, o)
	if err != nil {
		t.Fatal(err)
	}
	landAll := func(seeds []backendtest.Seed, salt string) {
		t.Helper()
		var g gosync.WaitGroup
		errs := make(chan error, len(seeds))
		for _, s := range seeds {
			g.Go(func() { errs <- commit(t, st, s.Package, backendtest.ProviderZip(t, s.Package, salt), false) })
		}
		g.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	plats := []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"}
	v1 := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, plats)
	landAll(v1, "")
	doc1 := "/" + bucket + "/example.com/acme/alpha/1.0.0.json"
	if n := rec.count("GET", doc1); n != 1 {
		t.Fatalf("4 commits of 1.0.0 read %s %d times, want once", doc1, n)
	}
	p := v1[0].Package.Provider
	if err := st.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}

	// A plan lists the folder: 1.1.0 has no document there.
	if _, err := st.Versions(ctx, p); err != nil {
		t.Fatal(err)
	}
	v2 := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.1.0"}, plats)
	landAll(v2, "")
	if n := rec.count("GET", "/"+bucket+"/example.com/acme/alpha/1.1.0.json"); n != 0 {
		t.Fatalf("commits of a version the listing showed without a document read it %d times", n)
	}

	// The flush wrote 1.0.0.json listing linux_amd64; its archive is
	// deleted by hand and lands again with other bytes: the listing is
	// dropped first, whatever was seen before the write.
	key := "example.com/acme/alpha/" + v1[0].Package.Filename()
	if _, err := srv.Client().DeleteObject(ctx, &s3api.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatal(err)
	}
	landAll(v1[:1], "new")
	as, err := st.Archives(ctx, p, v1[0].Package.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Key() == v1[0].Package.Key() && len(a.Evidence) != 0 {
			t.Fatalf("the new archive is listed with the deleted one's hashes: %v", a.Hashes())
		}
	}
}

// A flush after a listing of the provider's folder that found no
// index.json (a sync's plan) reads none before its rebuild: it creates
// one with If-None-Match. When another writer has created it since, that
// create is refused, and the flush reads it and lists what both landed.
func TestFlushReadsNoDocumentTheListingShowedAbsent(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the AWS configuration adds a bundle only to its own kind of transport
	srv := s3test.Start(t)
	ctx := context.Background()
	for _, other := range []bool{false, true} {
		bucket := srv.Bucket(t)
		rec := &requestLog{next: srv.HTTPClient().Transport}
		o := srv.Options()
		o.HTTPClient = &http.Client{Transport: rec}
		st, err := s3.Open(ctx, "s3://"+bucket, bucket, o)
		if err != nil {
			t.Fatal(err)
		}
		x := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
		y := backendtest.Pkg(t, "example.com/acme/alpha", "1.1.0", "linux_amd64")
		if _, err := st.Versions(ctx, x.Provider); !errors.Is(err, backends.ErrNotFound) {
			t.Fatalf("Versions of an empty bucket: %v, want ErrNotFound", err)
		}
		if err := commit(t, st, x, backendtest.ProviderZip(t, x, ""), false); err != nil {
			t.Fatal(err)
		}
		if other {
			b := openStore(t, srv, bucket, "")
			if err := commit(t, b, y, backendtest.ProviderZip(t, y, ""), false); err != nil {
				t.Fatal(err)
			}
			if err := b.Flush(ctx, y.Provider); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Flush(ctx, x.Provider); err != nil {
			t.Fatal(err)
		}
		index := "/" + bucket + "/example.com/acme/alpha/index.json"
		want := 1 // the read-back
		if other {
			want = 2 // the read before the second round (the first's create was refused), its read-back
		}
		if n := rec.count("GET", index); n != want {
			t.Errorf("another writer %v: the flush read index.json %d times, want %d", other, n, want)
		}
		as, err := openStore(t, srv, bucket, "").AllArchives(ctx, x.Provider)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) != 1+btoi(other) {
			t.Errorf("another writer %v: archives %v", other, as)
		}
		for _, a := range as {
			if len(a.Hashes()) == 0 {
				t.Errorf("another writer %v: %s is not listed", other, a.Package)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
