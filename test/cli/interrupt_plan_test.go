package cli

import (
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// A signal while the streamed plan is still listing the source ends the
// sync as one during the run does: the exit code names the signal, the
// last line says it was interrupted (--json: the summary, interrupted, not
// ok), and no "context canceled" is blamed.
func TestCLISignalWhilePlanning(t *testing.T) {
	for _, asJSON := range []bool{true, false} {
		t.Run(map[bool]string{true: "json", false: "text"}[asJSON], func(t *testing.T) { signalWhilePlanning(t, asJSON) })
	}
}

func signalWhilePlanning(t *testing.T, asJSON bool) {
	// The listing of versions stalls until the test ends: the signal lands
	// while the plan is being made.
	srv, ca, started := stallingRegistry(t, "/versions")
	dst := t.TempDir()
	args := []string{"sync", "registry://" + srv.Host(), dst, "-p", "acme/alpha", "-v", "1.1.0", "--ca-cert", ca}
	if asJSON {
		args = append(args, "--json")
	}
	cmd := exec.Command(tfmirrorBin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	signalWhenStarted(t, cmd, started, syscall.SIGINT, func() string { return out.String() + errOut.String() })
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT while planning, want 130:\n%s%s", code, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last map[string]any
	switch {
	case !asJSON && !strings.Contains(errOut.String(), "interrupted: 0 synced"):
		t.Errorf("the run does not say it was interrupted:\n%s%s", out.String(), errOut.String())
	case asJSON && (json.Unmarshal([]byte(lines[len(lines)-1]), &last) != nil || last["type"] != "summary" || last["ok"] != false || last["interrupted"] != true):
		t.Errorf("the output does not end with a summary of an interrupted run:\n%s", out.String())
	}
	if strings.Contains(out.String()+errOut.String(), "context canceled") {
		t.Errorf("blames a context:\n%s%s", out.String(), errOut.String())
	}
}
