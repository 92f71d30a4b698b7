package pull_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync/pull"
)

// absPath finds an absolute path of this machine in an answer.
var absPath = regexp.MustCompile(`(^|[\s"'(=])/(tmp|home|root|work|var|usr)/`)

// noLocal fails when an answer names a local path or the cache.
func noLocal(t *testing.T, w *world, what, body string) {
	t.Helper()
	if absPath.MatchString(body) || strings.Contains(body, w.cache) {
		t.Errorf("%s names a local path: %q", what, body)
	}
}

// A tampered archive is refused once and remembered for the refused-TTL:
// the next requests within it are answered 502 from memory (counted in
// /metrics), not fetched again; after it, the archive is fetched again.
// No answer names a local path.
func TestRefusedArchiveIsRememberedForAWhile(t *testing.T) {
	host := "linux_amd64"
	zips := map[string][]byte{host: bigZip(t, "alpha", "1.0.0", host, 1000)}
	ttl := time.Hour
	w := newWorldWith(t, func(o *pull.Options) { o.RefusedTTL = ttl }, registrytest.Faults{TamperArchive: true, NoPackages: true}, nil, zips)
	file := "terraform-provider-alpha_1.0.0_" + host + ".zip"
	get := func() (int, string) {
		resp, err := w.get(t, context.Background(), file)
		if err != nil {
			return 0, err.Error() // cut short: the client refuses it
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	get()
	w.waitIdle(t)
	for i := 0; i < 3; i++ {
		code, body := get()
		if code != http.StatusBadGateway || !strings.Contains(body, "does not match its hashes") {
			t.Errorf("request %d for the refused archive: %d %q", i+2, code, body)
		}
		noLocal(t, w, "the refused archive's answer", body)
	}
	if n := w.reg.Count(registrytest.KindArchive); n != 1 {
		t.Errorf("the origin served the tampered archive %d times, want once within the refused-TTL", n)
	}
	if code, body := w.body(t, "/metrics"); code != 200 || !strings.Contains(body, "tfmirror_pull_refused_archive_hits_total 3") {
		t.Errorf("/metrics does not count the 3 answers from memory:\n%s", grepLines(body, "refused"))
	}
	code, body := w.body(t, "/healthz")
	var h struct {
		Upstream                string
		Fetches, Fetch_failures int
		Refused_archives        int
	}
	if err := json.Unmarshal([]byte(body), &h); code != 200 || err != nil || h.Fetches != 0 || h.Fetch_failures != 1 || h.Refused_archives != 1 {
		t.Errorf("/healthz after a refused fetch: %d %s (%v)", code, body, err)
	}
	noLocal(t, w, "/healthz", body)
}

// After the refused-TTL the archive is fetched again: once per period.
func TestRefusedArchiveIsFetchedAgainAfterItsTTL(t *testing.T) {
	host := "linux_amd64"
	zips := map[string][]byte{host: bigZip(t, "alpha", "1.0.0", host, 1000)}
	w := newWorldWith(t, func(o *pull.Options) { o.RefusedTTL = time.Nanosecond }, registrytest.Faults{TamperArchive: true, NoPackages: true}, nil, zips)
	file := "terraform-provider-alpha_1.0.0_" + host + ".zip"
	for i := 0; i < 2; i++ {
		if resp, err := w.get(t, context.Background(), file); err == nil {
			resp.Body.Close()
		}
		w.waitIdle(t)
	}
	if n := w.reg.Count(registrytest.KindArchive); n != 2 {
		t.Errorf("the origin served the archive %d times, want 2 (the refusal expired)", n)
	}
}

func grepLines(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A dead upstream is a 502 and a silent one a 504, each with a body that
// says what to do and names nothing local; /healthz then says the
// upstream fails, and counts the landed fetch it served before.
func TestUpstreamDeadIs502SilentIs504(t *testing.T) {
	host := "linux_amd64"
	zips := map[string][]byte{host: bigZip(t, "alpha", "1.0.0", host, 1000)}
	var reg *registrytest.Server
	w := newWorldWith(t, func(o *pull.Options) {
		o.TTL = time.Nanosecond
		o.Upstream = func(ctx context.Context, p backends.Provider) (backends.Reader, error) {
			c := httpclient.Client{HTTP: reg.Client(), Timeout: 300 * time.Millisecond, Retries: -1}
			return registry.Open("registry://"+reg.Host(), reg.Host(), registry.Options{HTTP: c})
		}
	}, registrytest.Faults{}, nil, zips)
	reg = w.reg
	file := "terraform-provider-alpha_1.0.0_" + host + ".zip"
	if code, _ := w.body(t, file); code != 200 {
		t.Fatalf("the archive from a working upstream: %d", code)
	}
	w.waitIdle(t)

	w.reg.Wrap(func(http.Handler) http.Handler {
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	})
	other := "/" + strings.Replace(w.prov.String(), "alpha", "beta", 1) + "/index.json"
	waitStatus(t, w, other, http.StatusBadGateway, "502 upstream failed")

	w.reg.Wrap(func(http.Handler) http.Handler {
		return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	})
	waitStatus(t, w, other, http.StatusGatewayTimeout, "504 upstream timed out")

	_, body := w.body(t, "/healthz")
	var h struct {
		Upstream string
		Fetches  int
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil || h.Upstream != "failing" || h.Fetches != 1 {
		t.Errorf("/healthz with the upstream failing after one landed fetch: %s (%v)", body, err)
	}
	noLocal(t, w, "/healthz", body)
}

// waitStatus asks for path until it is answered code with a body holding
// want (the handler reuses an answer for a moment), and checks the body
// names nothing local.
func waitStatus(t *testing.T, w *world, path string, code int, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a bound for a loaded machine
	for {
		got, body := w.body(t, path)
		if got == code && strings.Contains(body, want) {
			noLocal(t, w, path, body)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d %q, want %d with %q", path, got, body, code, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A hostname the mirror may not reach is refused before any request to
// it: a 404 that says why, and the upstream asked nothing.
func TestUnreachableHostRefusedBeforeAnyRequest(t *testing.T) {
	zips := map[string][]byte{"linux_amd64": bigZip(t, "alpha", "1.0.0", "linux_amd64", 1000)}
	w := newWorldWith(t, func(o *pull.Options) {
		o.Reach = func(host string) string { return "this mirror does not reach " + host }
	}, registrytest.Faults{}, nil, zips)
	w.reg.Reset()
	for _, file := range []string{"index.json", "1.0.0.json", "terraform-provider-alpha_1.0.0_linux_amd64.zip"} {
		if code, body := w.body(t, file); code != 404 || !strings.Contains(body, "does not reach") {
			t.Errorf("%s of a host the mirror may not reach: %d %q", file, code, body)
		}
	}
	if n := len(w.reg.Requests()); n != 0 {
		t.Errorf("the upstream was asked %d times", n)
	}
}
