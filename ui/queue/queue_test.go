package queue_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/internal/keypress"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// request asks to queue to two places: the second lacks more. A plan's
// tasks are transfers that never run; the dialog only counts and hands
// them on.
func request(dests ...queue.Place) queue.Request {
	styles := theme.New()
	return queue.Request{
		Words: queue.Words{Unit: "package(s)", Place: "mirror", Verb: "copy", Jobs: "job(s)"},
		N:     3, Subject: "acme/cloud", Dests: dests,
		Plan: func(i int) queue.Plan {
			run := make([]engine.Task, i+1) // the second place lacks more
			for k := range run {
				run[k] = sync.Transfer{}
			}
			return queue.Plan{Run: run, Forced: append(run, sync.Transfer{Force: true}), Work: len(run),
				Need: "to copy", From: []queue.Source{{Place: queue.Place{Num: 9, Name: "./src"}, N: len(run)}},
				Notes:      []queue.Note{{Style: styles.Warn, Text: "1 differs: skipped"}},
				ForceNotes: []queue.Note{{Style: styles.Bad, Text: "1 differs: REPLACED"}}}
		},
	}
}

var a, b = queue.Place{Num: 1, Name: "./a", Kind: "fs"}, queue.Place{Num: 2, Name: "./b", Kind: "fs"}

func press(d queue.Model, keys ...string) (queue.Model, queue.Action) {
	act := queue.Stay
	for _, k := range keys {
		d, act = d.Update(keypress.Msg(k))
	}
	return d, act
}

func TestPickConfirmForce(t *testing.T) {
	s := theme.New()
	d := queue.New(request(a, b))
	if d.Confirming() || d.Dest() != b {
		t.Fatalf("the dialog should start by asking, on the place lacking the most (./b): confirming %v, dest %+v", d.Confirming(), d.Dest())
	}
	title, lines := d.View(&s, 80)
	if v := ansi.Strip(strings.Join(lines, "\n")); title != "Queue to…" || !strings.Contains(v, "Queue 3 package(s) of acme/cloud to which mirror?") || !strings.Contains(v, "▸ [2] ./b (fs) to copy") {
		t.Errorf("pick step %q:\n%s", title, v)
	}
	d, _ = press(d, "down", "down", "up", "up", "up") // clamped at both ends
	if d.Dest() != a {
		t.Errorf("dest %+v after moving up past the top", d.Dest())
	}
	d, act := press(d, "enter")
	if act != queue.Stay || !d.Confirming() || len(d.Plan().Run) != 1 {
		t.Fatalf("enter confirms the place: action %v, confirming %v, plan %+v", act, d.Confirming(), d.Plan())
	}
	title, lines = d.View(&s, 80)
	if v := ansi.Strip(strings.Join(lines, "\n")); title != "Confirm" || !strings.Contains(v, "1 to copy: 1 from [9] ./src") || !strings.Contains(v, "1 differs: skipped") {
		t.Errorf("confirm step %q:\n%s", title, v)
	}
	if len(d.Tasks()) != 1 {
		t.Errorf("unforced, the plan's Run is queued: %d tasks", len(d.Tasks()))
	}
	d, _ = press(d, "f")
	_, lines = d.View(&s, 80)
	if !d.Forced() || len(d.Tasks()) != 2 || !strings.Contains(ansi.Strip(strings.Join(lines, "\n")), "REPLACED") {
		t.Errorf("f forces: forced %v, %d tasks", d.Forced(), len(d.Tasks()))
	}
	if _, act := press(d, "enter"); act != queue.Queue {
		t.Errorf("enter on the confirm step queues: action %v", act)
	}
	if _, act := press(d, "esc"); act != queue.Cancel {
		t.Errorf("esc cancels: action %v", act)
	}
}

func TestOnePlaceGoesStraightToConfirm(t *testing.T) {
	d := queue.New(request(a))
	if !d.Confirming() || d.Dest() != a {
		t.Fatalf("one writable place: confirming %v, dest %+v", d.Confirming(), d.Dest())
	}
	if keys := d.HelpKeys().ShortHelp(); len(keys) != 3 || keys[1].Help().Key != "f" {
		t.Errorf("the confirm step's help offers f: %v", keys)
	}
}

// TestOnlyForceWouldDoAnything: where every target differs, enter does not
// close the dialog on nothing; it says that f replaces them.
func TestOnlyForceWouldDoAnything(t *testing.T) {
	s := theme.New()
	req := request(a, b)
	req.Plan = func(i int) queue.Plan {
		return queue.Plan{Forced: []engine.Task{sync.Transfer{Force: true}}, Need: "0 to copy, 1 differs",
			Work: i, Nothing: "1 differs: press f to replace it"}
	}
	d := queue.New(req)
	if d.Dest() != b {
		t.Errorf("the picker should start where the work is (./b): %+v", d.Dest())
	}
	d, act := press(d, "enter", "enter")
	_, lines := d.View(&s, 80)
	if v := ansi.Strip(strings.Join(lines, "\n")); act != queue.Stay || !strings.Contains(v, "Nothing to copy unforced: 1 differs: press f to replace it") {
		t.Errorf("enter with nothing to run unforced: action %v, view:\n%s", act, v)
	}
	if _, act := press(d, "f", "enter"); act != queue.Queue {
		t.Errorf("f then enter queues the forced plan: action %v", act)
	}
}

// TestNarrowDialogKeepsNamesAndQuestion: at 80 columns the dialog is 56
// wide, and the lock view's plan says "5 missing to copy, 1 differ from
// the lock". The places were shown as "[1]  (net)", their names squeezed
// out by the plan's words, and the question (from which source?) and the
// confirmed source were cut off the first line.
func TestNarrowDialogKeepsNamesAndQuestion(t *testing.T) {
	s := theme.New()
	req := request(queue.Place{Num: 1, Name: "https://127.0.0.1:42779/", Kind: "net"}, queue.Place{Num: 2, Name: "/tmp/tfmirror-demo-3299918926/primary", Kind: "fs"})
	req.Words = queue.Words{Unit: "package(s) missing or differing", Place: "source", Verb: "copy", Jobs: "job(s)", From: true}
	req.N, req.Subject = 6, "1 lock file"
	plan := req.Plan
	req.Plan = func(i int) queue.Plan {
		p := plan(i)
		p.Need = "5 missing to copy, 1 differ from the lock"
		return p
	}
	const w = 56
	box := func(lines []string) string {
		for _, l := range lines {
			if n := ansi.StringWidth(l); n > w-2 {
				t.Errorf("line wider (%d) than the dialog (%d): %q", n, w-2, ansi.Strip(l))
			}
		}
		return ansi.Strip(strings.Join(lines, "\n"))
	}
	d := queue.New(req)
	_, lines := d.View(&s, w)
	v := box(lines)
	for _, want := range []string{"from which source?", "[1] https://…42779 (net)", "[2] …/primary (fs)"} {
		if !strings.Contains(strings.Join(strings.Fields(v), " "), want) {
			t.Errorf("the pick step lacks %q:\n%s", want, v)
		}
	}
	d, _ = press(d, "enter")
	_, lines = d.View(&s, w)
	if v := box(lines); !strings.Contains(strings.Join(strings.Fields(v), " "), "from [2] …/primary") {
		t.Errorf("the confirm step does not name its source:\n%s", v)
	}
}

// TestConfirmSourceFitsAt60Columns: at 60x16 the dialog is 38 wide; the
// source's name kept 12 columns whatever the line left, and the box cut
// the line: "1 from [1] …0.0.1:393…".
func TestConfirmSourceFitsAt60Columns(t *testing.T) {
	s := theme.New()
	req := request(queue.Place{Num: 3, Name: "/tmp/tfmirror-demo-988721515/secondary", Kind: "fs"})
	plan := req.Plan
	req.Plan = func(i int) queue.Plan {
		p := plan(i)
		p.From[0].Place = queue.Place{Num: 1, Name: "https://127.0.0.1:39371/"}
		p.Notes = nil
		return p
	}
	const w = 38
	_, lines := queue.New(req).View(&s, w)
	for _, l := range lines {
		if n := ansi.StringWidth(l); n > w-2 {
			t.Errorf("line wider (%d) than the dialog (%d): %q", n, w-2, ansi.Strip(l))
		}
	}
	if v := ansi.Strip(strings.Join(lines, "\n")); !strings.Contains(v, "from [1] ") || !strings.Contains(v, "39371") {
		t.Errorf("the source's port is cut:\n%s", v)
	}
}
