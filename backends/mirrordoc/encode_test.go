package mirrordoc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encodeCases are documents the fast path writes and documents it must
// leave to encoding/json.
var encodeCases = []Version{
	{Archives: map[string]Archive{}},
	{Archives: map[string]Archive{"linux_amd64": {Hashes: []string{"h1:a+/=", "zh:b"}, URL: "terraform-provider-x_1.0.0_linux_amd64.zip"}}},
	{Archives: map[string]Archive{
		"windows_386":  {URL: "c.zip"},
		"darwin_arm64": {Hashes: []string{}, URL: "a.zip"},
		"linux_amd64":  {Hashes: []string{"zh:1", "h1:2", "zh:1"}, URL: "https://example.com/b.zip?x=1"},
	}},
	{Archives: map[string]Archive{"": {}}},
	// encoding/json's: nil, escapes, HTML characters, control and
	// non-ASCII characters.
	{},
	{Archives: map[string]Archive{"linux_amd64": {URL: "a&b.zip"}}},
	{Archives: map[string]Archive{"linux_amd64": {URL: "<a>.zip"}}},
	{Archives: map[string]Archive{"linux_\"amd64": {URL: "a.zip"}}},
	{Archives: map[string]Archive{"linux_amd64": {Hashes: []string{"zh:\\"}, URL: "a.zip"}}},
	{Archives: map[string]Archive{"linux_amd64": {URL: "a\n.zip"}}},
	{Archives: map[string]Archive{"linux_amd64": {URL: "caf\xc3\xa9.zip"}}},
	{Archives: map[string]Archive{"linux_amd64": {URL: "\x7f.zip"}}},
}

func TestEncodeVersionFastAgreesWithEncodingJSON(t *testing.T) {
	taken := 0
	for _, v := range encodeCases {
		if encodesAsEncodingJSON(t, v) {
			taken++
		}
	}
	if taken != 4 {
		t.Errorf("the fast path wrote %d of the documents, want the first 4", taken)
	}
}

func FuzzEncodeVersion(f *testing.F) {
	f.Add("linux_amd64", "zh:1", "h1:2", "a.zip", "darwin_arm64", "b.zip", true)
	f.Add("", "", "", "", "", "", false)
	f.Add("linux_amd64", "<", "&", "\u2028", "x\x00", "\xff", true)
	f.Fuzz(func(t *testing.T, p1, h1, h2, url1, p2, url2 string, empty bool) {
		v := Version{Archives: map[string]Archive{p1: {Hashes: []string{h1, h2}, URL: url1}}}
		if empty {
			v.Archives[p2] = Archive{Hashes: []string{}, URL: url2}
		} else {
			v.Archives[p2] = Archive{URL: url2}
		}
		encodesAsEncodingJSON(t, v)
	})
}

// encodesAsEncodingJSON fails t when Encode writes v other than
// json.MarshalIndent does, and reports whether the fast path wrote it.
func encodesAsEncodingJSON(t *testing.T, v Version) bool {
	t.Helper()
	want, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode(%+v):\n%s\nwant (encoding/json):\n%s", v, got, want)
	}
	fast, ok := encodeVersionFast(v)
	if ok && !bytes.Equal(fast, want) {
		t.Fatalf("fast path for %+v:\n%s\nwant:\n%s", v, fast, want)
	}
	if ok && strings.ContainsAny(string(fast), "\\") {
		t.Fatalf("the fast path wrote an escape: %s", fast)
	}
	return ok
}
