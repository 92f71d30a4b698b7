package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// fourWriterRounds is how many rounds TestFourWritersIntoFreshOCIRepository
// races four processes in CI. Before the repository lock, with the
// registry's late pushes below, 12 of 30 rounds lost a package (so eight
// rounds catch that race 98 times in 100); with it each round takes 7 to
// 17 seconds on a shared 2-core machine, as the writers take turns.
// TFMIRROR_OCI_RACE_ROUNDS=100 runs the long mode (docs/oci-writers.md has
// the figures).
const fourWriterRounds = 8

// tagPushDelay is the delay the registry adds to a tag's push in
// TestFourWritersIntoFreshOCIRepository: up to 30 ms, and one time in three
// 300 to 700 ms.
func tagPushDelay() time.Duration {
	if rand.IntN(3) == 0 {
		return 300*time.Millisecond + rand.N(400*time.Millisecond)
	}
	return rand.N(30 * time.Millisecond)
}

// doneReported returns the platforms of the packages a sync's --json
// output reported done.
func doneReported(t *testing.T, stdout string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("sync --json line %q: %v", sc.Text(), err)
		}
		if ev["type"] == "done" {
			out = append(out, fmt.Sprint(ev["platform"]))
		}
	}
	return out
}

// Four syncs, one platform each, into a fresh repository at once (four CI
// jobs, one per platform): no sync may exit 0 while a package it reported
// done is missing from the version's index, and none should fail, since
// nothing they write disagrees. Registries have no compare-and-swap on
// tags; without mutual exclusion, a writer whose read of the tag came
// before another's push, and whose push landed after that writer's last
// read back, dropped its platform while both exited 0.
func TestFourWritersIntoFreshOCIRepository(t *testing.T) {
	rounds := fourWriterRounds
	if s := os.Getenv("TFMIRROR_OCI_RACE_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("TFMIRROR_OCI_RACE_ROUNDS=%q: want a number of rounds", s)
		}
		rounds = n
	}
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true, TornWrites: true})
	// The registry lands some of the pushes of a tag late, as a busy one
	// behind a load balancer does: most within moments, one in three up to
	// 700 ms later. A push can then land well after its writer read the
	// tag, which is what loses an update without a lock.
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") && !strings.Contains(r.URL.Path, "/manifests/sha256:") {
			time.Sleep(tagPushDelay())
		}
		return false
	})
	plats := []string{"darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}
	var providers []string
	for i := range rounds {
		providers = append(providers, fmt.Sprintf("example.com/acme/four%d", i))
	}
	src := t.TempDir()
	backendtest.WritePacked(t, src, smallVariedSeeds(t, providers, plats))
	dst := "oci://" + reg.Host() + writersTemplate

	var lostRounds, lost, failed int
	for i, p := range providers {
		var ws []*started
		for _, plat := range plats {
			ws = append(ws, start(t, "sync", src, dst, "-p", p, "--plain-http", "--platform", plat, "--json"))
		}
		var rs []result
		for _, w := range ws {
			rs = append(rs, w.wait(t))
		}
		listed := platformsInIndex(t, reg, p, "1.0.0")
		roundLost := 0
		for j, r := range rs {
			if r.code != 0 {
				failed++
				t.Errorf("round %d: the sync of %s exited %d\n%s", i, plats[j], r.code, r.stderr)
				continue
			}
			for _, plat := range doneReported(t, r.stdout) {
				if !slices.Contains(listed, plat) {
					roundLost++
					t.Errorf("round %d: the sync of %s exited 0 and reported %s done, but the index of %s 1.0.0 lists only %v", i, plats[j], plat, p, listed)
				}
			}
		}
		if roundLost > 0 {
			lostRounds++
			lost += roundLost
		}
	}
	t.Logf("%d rounds of %d writers: %d packages lost (reported done, exit 0, not in the index) in %d rounds; %d writers failed", rounds, len(plats), lost, lostRounds, failed)
}

// smallVariedSeeds makes one version's release zips of different small
// sizes (up to 256 KiB), so that concurrent writers reach each step at
// different moments, and a hundred rounds stay small on disk.
func smallVariedSeeds(t *testing.T, providers, platforms []string) []backendtest.Seed {
	t.Helper()
	rnd := rand.New(rand.NewPCG(3, 4))
	var out []backendtest.Seed
	for _, s := range backendtest.Seeds(t, providers, []string{"1.0.0"}, platforms) {
		pad := make([]byte, rnd.IntN(256<<10))
		for i := range pad {
			pad[i] = byte(rnd.Uint32())
		}
		exe := fmt.Sprintf("terraform-provider-%s_v%s", s.Package.Provider.Type, s.Package.Version)
		s.Zip = backendtest.Zip(t, backendtest.Entry{Name: exe, Body: []byte("#!/bin/sh\nexit 1\n")}, backendtest.Entry{Name: "padding", Body: pad, Mode: 0o644})
		out = append(out, s)
	}
	return out
}
