package backends_test

import (
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode ✓\n\tkept":     "plain text, ünïcode ✓\n\tkept",
		"\x1b[2J\x1b]0;title\x07":           `\x1b[2J\x1b]0;title\a`,
		"csi \u009b31m, del \x7f, nul \x00": `csi \u009b31m, del \x7f, nul \x00`,
		"bad utf-8 \xff\xfe":                `bad utf-8 \xff\xfe`,
		"\r overwrite":                      `\r overwrite`,
		"evil\u202egpj.exe \u2066x\u2069":   `evil\u202egpj.exe \u2066x\u2069`,
		"שלום, right to left, kept":         "שלום, right to left, kept",
	} {
		if got := backends.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintableLine(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb\tc":         `a\nb\tc`,
		"\x1b[2J and\r\n": `\x1b[2J and\r\n`,
		"ｗｉｄｅ-名前 ✓":       "ｗｉｄｅ-名前 ✓",
	} {
		if got := backends.PrintableLine(in); got != want {
			t.Errorf("PrintableLine(%q) = %q, want %q", in, got, want)
		}
	}
}
