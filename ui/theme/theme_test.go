package theme

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestFitAndTruncate(t *testing.T) {
	s := New()
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"abc", 5, "abc  "},
		{"abcdef", 4, "abc…"},
		{"", 3, "   "},
		{"abc", 0, ""},
		{"abc", -2, ""},
		{"●○✗", 2, "●…"},
		{s.Bad.Render("failed"), 4, "fai…"}, // styling does not count
	} {
		got := Fit(tc.in, tc.w)
		if ansi.Strip(got) != tc.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tc.in, tc.w, ansi.Strip(got), tc.want)
		}
	}
	if got := TruncateLeft("/very/long/path/to/mirror", 10); got != "…to/mirror" {
		t.Errorf("TruncateLeft = %q", got)
	}
	if got := TruncateLeft("short", 10); got != "short" {
		t.Errorf("TruncateLeft = %q", got)
	}
}

func TestShortPlace(t *testing.T) {
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"./mirror", 20, "./mirror"},
		{"/tmp/tfmirror-demo-123/primary", 12, "…/primary"},
		{"/tmp/tfmirror-demo-123/primary/", 12, "…/primary"},
		{"/tmp/tfmirror-demo-123/a-very-long-basename", 12, "…ng-basename"},
		{"/tmp/TestX/001/world/secondary", 20, "…/world/secondary"},
		{"https://mirror.corp.example/terraform/", 30, "https://…orp.example/terraform"},
		{"https://127.0.0.1:8443/", 14, "https://…:8443"},
		// The scheme, the host, the last element that is not only
		// variables: never a stray "}".
		{"oci://reg.corp/tf/${namespace}_${type}", 20, "oci://reg.corp/tf/…"},
		{"oci://localhost:5000/tf/${namespace}/${type}", 24, "oci://…calhost:5000/tf/…"},
		{"oci://127.0.0.1:5055/tf/${namespace}/${type}", 20, "oci://…0.1:5055/tf/…"},
		{"oci://registry.example.corp.internal:5000/terraform/providers/${namespace}_${type}", 30, "oci://…rnal:5000/…/providers/…"},
		{"s3://my-very-long-bucket-name-prod/mirrors/terraform/providers", 30, "s3://…et-name-prod/…/providers"},
	} {
		if got := ShortPlace(tc.in, tc.w); got != tc.want || Width(got) > tc.w {
			t.Errorf("ShortPlace(%q, %d) = %q (width %d), want %q", tc.in, tc.w, got, Width(got), tc.want)
		}
	}
}

func TestBox(t *testing.T) {
	s := New()
	for _, tc := range []struct {
		title     string
		lines     []string
		w, h      int
		focused   bool
		wantTop   string
		wantLines int
		wantEmpty bool
	}{
		{"Jobs", []string{"one", "two"}, 12, 4, false, "┌─ Jobs ───┐", 4, false},
		{"Jobs", nil, 12, 3, true, "┏━ Jobs ━━━┓", 3, false},
		{"A title far too long", []string{strings.Repeat("x", 40)}, 12, 3, false, "┌─ A titl… ┐", 3, false},
		{"", nil, 4, 2, false, "┌──┐", 2, false},
		{"T", nil, 1, 5, false, "", 0, true},
		{"T", []string{"a", "b", "c", "d"}, 6, 3, false, "┌────┐", 3, false}, // no room for a title
		{"T", []string{"a", "b", "c", "d"}, 7, 3, false, "┌─ T ─┐", 3, false},
	} {
		got := ansi.Strip(s.Box(tc.title, tc.lines, tc.w, tc.h, tc.focused))
		if tc.wantEmpty {
			if got != "" {
				t.Errorf("Box(%dx%d) = %q, want nothing", tc.w, tc.h, got)
			}
			continue
		}
		lines := strings.Split(got, "\n")
		if len(lines) != tc.wantLines || lines[0] != tc.wantTop {
			t.Errorf("Box(%q, %dx%d): top %q, %d lines; want %q, %d", tc.title, tc.w, tc.h, lines[0], len(lines), tc.wantTop, tc.wantLines)
		}
		for i, l := range lines {
			if Width(l) != tc.w {
				t.Errorf("Box(%q, %dx%d): line %d is %d wide: %q", tc.title, tc.w, tc.h, i, Width(l), l)
			}
		}
	}
}

func TestMarksAreDistinctWithoutColour(t *testing.T) {
	seen := map[string]Mark{}
	for m := range numMarks {
		g := m.Glyph()
		if prev, dup := seen[g]; dup {
			t.Errorf("marks %s and %s share the glyph %q", prev.Label(), m.Label(), g)
		}
		seen[g] = m
		if Width(g) != 1 {
			t.Errorf("mark %s is %d cells wide", m.Label(), Width(g))
		}
	}
}

func TestApart(t *testing.T) {
	tf, tofu := "registry.terraform.io/hashicorp/aws", "registry.opentofu.org/hashicorp/aws"
	for _, tc := range []struct {
		name   string
		others []string
		w      int
		want   string
	}{
		{"short", []string{"other"}, 10, "short"},
		{tf, []string{tofu}, 20, "…terraform.io…rp/aws"},
		{tofu, []string{tf}, 20, "…opentofu.org…rp/aws"},
		{tf, []string{tofu}, 28, "r…terraform.io/hashicorp/aws"},
		{"/srv/a/mirror", []string{"/srv/b/mirror"}, 10, "/…a/mirror"},
		{"/srv/b/mirror", []string{"/srv/a/mirror"}, 10, "/…b/mirror"},
		{"https://mirror.corp.example/terraform/providers/", nil, 30, "https://…p.example/…/providers"},                       // alike to none: as ShortPlace
		{"acme/cloud", []string{"acme/cloudx"}, 6, "…cloud"},                                                                  // told apart by where it ends
		{"registry.terraform.io/acme/cloud-extra-long", []string{"registry.terraform.io/acme/cloud"}, 16, "…loud-extra-long"}, // a telling part too long for the room: its end
		{"abcdef", nil, 1, "…"},
	} {
		got := Apart(tc.name, tc.others, tc.w)
		if got != tc.want || Width(got) > tc.w {
			t.Errorf("Apart(%q, %q, %d) = %q, want %q", tc.name, tc.others, tc.w, got, tc.want)
		}
		// Spans finds the same parts for a whole list at once.
		all := append([]string{tc.name}, tc.others...)
		if got := Spans(all)[0].Cut(tc.name, tc.w); got != tc.want && tc.others != nil {
			t.Errorf("Spans(%q)[0].Cut(%d) = %q, want %q", all, tc.w, got, tc.want)
		}
	}
}

// TestSpansCutListsApart: labels that share their start and their end are
// cut where they differ, a lone label in the middle.
func TestSpansCutListsApart(t *testing.T) {
	labels := []string{"registry.terraform.io/hashicorp/aws", "registry.opentofu.org/hashicorp/aws", "corp.example/hashicorp/aws"}
	spans := Spans(labels)
	seen := map[string]bool{}
	for i, l := range labels {
		got := spans[i].Cut(l, 16)
		if Width(got) > 16 || seen[got] {
			t.Errorf("%q cut to %q: too wide, or the same as another's", l, got)
		}
		seen[got] = true
	}
	if got := Spans([]string{"a-very-long-provider-name"})[0].Cut("a-very-long-provider-name", 11); got != "a-ver…-name" {
		t.Errorf("a lone label is cut in the middle: %q", got)
	}
}
