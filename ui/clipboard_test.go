package ui

import (
	"encoding/base64"
	"regexp"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/hashing"
)

// TestCopyHashWritesOSC52: y in the matrix copies the hashes Details
// shows for the cell under the cursor, one per press, to the terminal's
// clipboard: the program writes OSC 52 (ESC ] 52 ; c ; BASE64 BEL) holding
// the whole hash, and the status line says what was copied.
func TestCopyHashWritesOSC52(t *testing.T) {
	w := newWorld(t)
	zip := archivePath(w.Primary, "acme/cloud", "2.1.0", "darwin_amd64")
	h1, err := hashing.ZipH1(zip, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zh, err := hashing.ZipZH(zip)
	if err != nil {
		t.Fatal(err)
	}
	tm, waitFor, press := newProgram(t, w.config())
	waitFor("acme/cloud", "2.1.0", listed)
	press("enter", "y") // the matrix, on 2.1.0 darwin_amd64; copy
	osc52 := regexp.MustCompile("\x1b\\]52;c;([A-Za-z0-9+/=]+)\x07")
	var copied []string
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, m := range osc52.FindAllSubmatch(b, -1) {
			s, err := base64.StdEncoding.DecodeString(string(m[1]))
			if err == nil {
				copied = append(copied, string(s))
			}
		}
		return len(copied) > 0
	}, teatest.WithDuration(e2eWait), teatest.WithCheckInterval(50*time.Millisecond))
	if copied[0] != h1.String() && copied[0] != zh.String() {
		t.Fatalf("y copied %q, want the cell's h1: or zh: (%s, %s)", copied[0], h1, zh)
	}
	waitFor("copied " + copied[0])
	press("y") // the next hash
	want := zh.String()
	if copied[0] == want {
		want = h1.String()
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return regexp.MustCompile(regexp.QuoteMeta("\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(want)) + "\x07")).Match(b)
	}, teatest.WithDuration(e2eWait), teatest.WithCheckInterval(50*time.Millisecond))
	press("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(time.Minute))
}
