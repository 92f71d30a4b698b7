package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// A writer killed while it held an OCI repository's lock left its claim,
// stating a lease of an hour. sync into that repository says at once what
// it waits for, takes the lock over after the lease a writer claims itself
// (15s, not the hour), and prints the takeover warning naming the holder,
// escaped: on stderr in plain output, as {"type":"warning"} with --json.
func TestSyncIntoOCITellsOfTheLockTakeover(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	providers := []string{"example.com/acme/alpha", "example.com/acme/beta"}
	src := t.TempDir()
	backendtest.WritePacked(t, src, backendtest.Seeds(t, providers, []string{"1.0.0"}, []string{"linux_amd64"}))
	dst := "oci://" + reg.Host() + writersTemplate
	const holder = "ci-runner\x1b[31m pid 7"
	for i, p := range providers {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		reg.ClaimLock(ctx, t, "tf/"+p, holder, time.Hour)
		cancel()
		args := []string{"sync", src, dst, "-p", p, "--plain-http"}
		if i == 1 {
			args = append(args, "--json")
		}
		r := start(t, args...).wait(t)
		if r.code != 0 {
			t.Fatalf("sync %s: exit %d\n%s", p, r.code, r.stderr)
		}
		out := r.stderr
		if i == 1 {
			out = jsonNotices(t, r.stdout)
		}
		if strings.Contains(out, "\x1b") || !strings.Contains(out, `ci-runner\x1b[31m pid 7`) {
			t.Errorf("sync %v: the holder is not named, escaped:\n%s", args, out)
		}
		for _, want := range []string{"waiting: oci mirror", "taken over if it stays unreleased for 15s", "warning: oci mirror", "took over the lock"} {
			if !strings.Contains(out, want) {
				t.Errorf("sync %v: no %q in\n%s", args, want, out)
			}
		}
	}
}

// jsonNotices returns the --json lines of type waiting and warning as
// "TYPE: DETAIL" lines, and fails when a line is not JSON.
func jsonNotices(t *testing.T, stdout string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev struct{ Type, Detail string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if ev.Type == "waiting" || ev.Type == "warning" {
			out = append(out, ev.Type+": "+ev.Detail)
		}
	}
	return strings.Join(out, "\n")
}

// prune --json of an OCI mirror whose lock a killed writer left: the
// takeover warning (and the wait) are rows of its JSON array, the holder
// escaped, and stdout stays one JSON array.
func TestPruneJSONHoldsTheLockTakeover(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	const p = "example.com/acme/alpha"
	src := t.TempDir()
	backendtest.WritePacked(t, src, backendtest.Seeds(t, []string{p}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64"}))
	dst := "oci://" + reg.Host() + writersTemplate
	if r := run(t, nil, "sync", src, dst, "-p", p, "--plain-http"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	reg.ClaimLock(ctx, t, "tf/"+p, "ci-runner\x1b[31m pid 7", time.Hour)
	cancel()
	r := start(t, "prune", dst, "--keep", "1", "-p", p, "--yes", "--json", "--plain-http").wait(t)
	var rows []struct{ Version, Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 {
		t.Fatalf("prune --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	statuses := map[string]string{}
	for _, row := range rows {
		statuses[row.Status] += row.Detail + "\n"
	}
	if w := statuses["warning"]; !strings.Contains(w, "took over the lock") || !strings.Contains(w, `ci-runner\x1b[31m pid 7`) || strings.Contains(w, "\x1b") {
		t.Errorf("prune --json: no warning row naming the holder, escaped:\n%s", r.stdout)
	}
	if !strings.Contains(statuses["waiting"], "taken over if it stays unreleased for 15s") || statuses["removed"] == "" {
		t.Errorf("prune --json: want a waiting row and the removed one:\n%s", r.stdout)
	}
	if strings.Contains(r.stderr, "warning:") {
		t.Errorf("prune --json printed the warning on stderr too:\n%s", r.stderr)
	}
}
