package cli

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// Four serve processes on one versitygw bucket, a cold stampede of 100
// clients (25 on each) for every zip at once: every client gets every zip
// whole, and the fleet fetches each zip from the upstream about once (the
// fetch leases in the bucket): the others wait for it and serve it from
// the bucket. Logged: the fetches per zip (the target is at most 1.2 on
// average); failed: a zip fetched more than twice.
func TestFleetFetchesEachZipOnce(t *testing.T) {
	w := newS3World(t)
	fleetStampede(t, "one bucket", w.srv.Env(), append([]string{w.place("cache")}, w.srv.Args()...)...)
}

// The same with four serve processes on one OCI repository (the
// distribution registry in process): the leases are notes in the
// repository, updated under its writer lock.
func TestFleetOnOneOCIRepositoryFetchesEachZipOnce(t *testing.T) {
	reg := ocitest.New(t)
	fleetStampede(t, "one OCI repository", cleanEnv(t), "oci://"+reg.Host()+"/tf/${hostname}/${namespace}/${type}", "--ca-cert", reg.CAFile())
}

// fleetStampede starts four serve processes of CACHE (cache[0], with the
// flags after it) pulling through a directory of 8 zips, sends 100 clients
// for every zip at once, and reports the upstream fetches per zip.
func fleetStampede(t *testing.T, what string, env []string, cache ...string) {
	plats := []string{"darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}
	seeds := randomSeeds(t, 37, 512<<10, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, plats)
	src := sourceMirror(t, seeds)
	const replicas, clients = 4, 100
	var urls []string
	var certs [][]byte
	var hcs []*http.Client
	var stops []func() string
	for range replicas {
		url, cert, stop := startServeWith(t, env, append([]string{cache[0], "--upstream", src}, cache[1:]...)...)
		pem := []byte(readFile(t, cert))
		urls, certs, hcs = append(urls, url), append(certs, pem), append(hcs, pullClient(pem))
		stops = append(stops, stop)
	}
	var wg gosync.WaitGroup
	errs := make(chan error, clients*len(seeds))
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			for j := range seeds {
				s := seeds[(i+j)%len(seeds)]
				if err := getWhole(hcs[i%replicas], urls[i%replicas]+"example.com/acme/alpha/"+s.Package.Filename(), s.Zip); err != nil {
					errs <- err
				}
			}
		})
	}
	reportAll(t, &wg, errs)
	elapsed := time.Since(start)
	total := 0
	for i, url := range urls {
		waitLanded(t, url, certs[i])
		total += int(metricSum(t, hcs[i], url, `tfmirror_pull_fetches_total{`))
	}
	perZip := float64(total) / float64(len(seeds))
	t.Logf("%d processes on %s, %d clients, %d zips of %d KiB: %d fetches from the upstream, %.2f per zip (target <= 1.2); every client done in %s",
		replicas, what, clients, len(seeds), 512, total, perZip, elapsed.Round(time.Millisecond))
	if total > 2*len(seeds) {
		t.Errorf("the fleet fetched %d times for %d zips: the leases did not coalesce the misses", total, len(seeds))
		for i, stop := range stops { // what each process said, but its access log
			for _, line := range strings.Split(stop(), "\n") {
				if strings.TrimSpace(line) != "" && !strings.Contains(line, " GET /") {
					t.Logf("serve %d: %s", i, line)
				}
			}
		}
	}
}

// getWhole downloads url with c: an error unless it answers 200 with want.
func getWhole(c *http.Client, url string, want []byte) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(b, want) {
		return fmt.Errorf("%s: status %d, %d bytes (%v), not the zip's %d", url, resp.StatusCode, len(b), err, len(want))
	}
	return nil
}

// reportAll waits for wg, then fails the test with each error sent on
// errs.
func reportAll(t *testing.T, wg *gosync.WaitGroup, errs chan error) {
	t.Helper()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
