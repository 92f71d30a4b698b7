package netmirror_test

import (
	"archive/zip"
	"bufio"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/hashing"
)

// bigZip writes a release zip of n random (incompressible) bytes at p's
// place in dir.
func bigZip(t *testing.T, dir string, p pkg, n int) string {
	t.Helper()
	file := p.path(dir)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "terraform-provider-" + p.typ, Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(w, rand.Reader, int64(n)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return file
}

// serveDirStall serves dir with a handler whose clients may stall for
// stall, over HTTP/1.1 and HTTP/2.
func serveDirStall(t *testing.T, dir string, stall time.Duration) (*httptest.Server, *backendtest.Buffer) {
	t.Helper()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &backendtest.Buffer{}
	h := netmirror.NewHandler(m, log.New(logs, "", 0), hashing.Options{})
	h.Stall = stall
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, logs
}

// rawConn opens a TLS connection speaking HTTP/1.1 to srv.
func rawConn(t *testing.T, srv *httptest.Server) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s", what)
		}
	}
}

// A client that stops reading an archive must not hold the server: once it
// has accepted nothing for Stall, the response is given up (the goroutine
// and the open file go), and the server answers others meanwhile.
func TestServeDropsAClientThatStopsReading(t *testing.T) {
	dir := t.TempDir()
	p := pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"}
	bigZip(t, dir, p, 48<<20) // more than the socket buffers hold
	srv, logs := serveDirStall(t, dir, 300*time.Millisecond)
	name := filepath.Base(p.path(dir))

	c := rawConn(t, srv)
	fmt.Fprintf(c, "GET /example.com/acme/alpha/%s HTTP/1.1\r\nHost: x\r\n\r\n", name)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("response %v, %v", resp, err)
	}
	// Reads nothing more: the server gives up on it.
	waitFor(t, "the stalled download is still being written:\n"+logs.String(), func() bool {
		return strings.Contains(logs.String(), "GET /example.com/acme/alpha/"+name+" 200")
	})
	n, _ := io.Copy(io.Discard, resp.Body)
	if n >= resp.ContentLength {
		t.Errorf("read %d of %d bytes from a response the server gave up", n, resp.ContentLength)
	}
	// A reader that keeps up gets the whole archive, however long it takes.
	got, err := srv.Client().Get(srv.URL + "/example.com/acme/alpha/" + name)
	if err != nil {
		t.Fatal(err)
	}
	n, err = io.Copy(io.Discard, got.Body)
	got.Body.Close()
	if err != nil || n != got.ContentLength {
		t.Errorf("a reader keeping up: %d of %d bytes, %v", n, got.ContentLength, err)
	}
	// The deadline of one response is not left on the connection for the
	// next: a request after an idle pause is answered (HEAD too, whose
	// headers are written after the handler returns).
	for _, method := range []string{"HEAD", "GET"} {
		c := rawConn(t, srv)
		br := bufio.NewReader(c)
		for i := range 2 {
			fmt.Fprintf(c, "%s /example.com/acme/alpha/index.json HTTP/1.1\r\nHost: x\r\n\r\n", method)
			resp, err := http.ReadResponse(br, &http.Request{Method: method})
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s %d on one connection: %v, %v", method, i, resp, err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				time.Sleep(3 * 300 * time.Millisecond) // idle for longer than Stall, as a client between requests
			}
		}
	}
}

// A request that announces a body and trickles it (a slowloris) is answered
// and its connection closed, not held while the server waits for the body.
func TestServeDoesNotWaitForARequestBody(t *testing.T) {
	dir := t.TempDir()
	writeMirror(t, dir, pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"})
	srv, _ := serveDirStall(t, dir, 300*time.Millisecond)
	for _, method := range []string{"GET", "POST"} {
		c := rawConn(t, srv)
		fmt.Fprintf(c, "%s /example.com/acme/alpha/index.json HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab", method)
		c.SetReadDeadline(time.Now().Add(time.Minute))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s with a trickled body: %v", method, err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode < 400 {
			t.Errorf("%s with a body: %s", method, resp.Status)
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("%s with a trickled body: the connection stays open (%v)", method, err)
		}
	}
}

// A directory's zip rewritten in place while it streams (same size, other
// bytes: a `cp` over it, a disk fault) is never delivered whole: the server
// checks what it sends against the sums it serves and cuts the response
// short.
func TestServeCutsShortAZipRewrittenWhileStreaming(t *testing.T) {
	dir := t.TempDir()
	p := pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"}
	file := bigZip(t, dir, p, 48<<20)
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	srv, logs := serveDirStall(t, dir, time.Minute)
	name := filepath.Base(file)
	// The version document first, as clients ask: its sums are the ones
	// the zip is held to.
	if resp, err := srv.Client().Get(srv.URL + "/example.com/acme/alpha/1.0.0.json"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("version document: %v %v", resp, err)
	}
	c := rawConn(t, srv)
	fmt.Fprintf(c, "GET /example.com/acme/alpha/%s HTTP/1.1\r\nHost: x\r\n\r\n", name)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("response %v, %v", resp, err)
	}
	head := make([]byte, 1<<20)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	// Rewritten in place, past what the socket buffers hold.
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	other := make([]byte, len(orig)-(32<<20))
	rand.Read(other)
	if _, err := f.WriteAt(other, 32<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp.Body)
	got := append(head, rest...)
	if err == nil && len(got) == len(orig) {
		t.Fatalf("the rewritten zip was delivered whole (same bytes as before: %v)", string(got) == string(orig))
	}
	if string(got) != string(orig[:len(got)]) && len(got) == len(orig) {
		t.Fatal("wrong bytes delivered")
	}
	waitFor(t, "a log line saying why", func() bool { return strings.Contains(logs.String(), "cut short") })
}
