package mirrordoc

import (
	"strings"

	"encoding/json"
	"reflect"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

// versionDocs are documents the fast path takes and documents it must
// leave to encoding/json, which decides what each means.
var versionDocs = []string{
	`{"archives":{}}`,
	`{"archives": {"linux_amd64": {"hashes": ["h1:a=", "zh:b"], "url": "terraform-provider-x_1.0.0_linux_amd64.zip"}}}`,
	"{\n  \"archives\": {\n    \"darwin_arm64\": {\n      \"hashes\": [],\n      \"url\": \"a.zip\"\n    },\n    \"linux_amd64\": {\n      \"url\": \"b.zip\"\n    }\n  }\n}\n",
	`{"archives":{"linux_amd64":{"url":"a.zip","hashes":["zh:1"]},"windows_386":{"hashes":["zh:2","zh:3"]}}}`,
	`{"archives":{"":{}}}`,
	// encoding/json's business: case-folded keys, repeated keys, escapes,
	// null, other keys and values, trailing junk, malformed documents.
	`{"Archives":{"linux_amd64":{"HASHES":["zh:1"],"Url":"a.zip"}}}`,
	`{"archives":{"linux_amd64":{"hashes":["zh:1"]},"linux_amd64":{"url":"b.zip"}}}`,
	`{"archives":{"linux_amd64":{"hashes":["zh:1"],"hashes":["zh:2"]}}}`,
	`{"archives":{"linux_amd64":{"url":"a\u002ezip"}}}`,
	`{"archives":{"linux_amd64":{"url":"caf` + "\xc3\xa9" + `.zip"}}}`,
	`{"archives":{"linux_amd64":{"hashes":null}}}`,
	`{"archives":null}`,
	`{"archives":{"linux_amd64":{"hashes":["zh:1"],"size":3}}}`,
	`{"versions":{},"archives":{}}`,
	`{"archives":{}} x`,
	`{"archives":{"linux_amd64":{"hashes":["zh:1",]}}}`,
	`{"archives":{"linux_amd64":{"hashes":["zh:1"]}`,
	`{"archives":{"linux_amd64":{"hashes":[1]}}}`,
	`[]`,
	``,
}

func TestParseVersionFastAgreesWithEncodingJSON(t *testing.T) {
	taken := 0
	for _, doc := range versionDocs {
		if sameAsEncodingJSON(t, []byte(doc)) {
			taken++
		}
	}
	if taken != 5 {
		t.Errorf("the fast path took %d of the documents, want the first 5", taken)
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, doc := range versionDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameAsEncodingJSON(t, b) })
}

// sameAsEncodingJSON fails t when the fast path decodes b other than
// encoding/json does, and reports whether it decoded it.
func sameAsEncodingJSON(t *testing.T, b []byte) bool {
	t.Helper()
	fast, ok := parseVersionFast(b)
	if !ok {
		return false
	}
	var want Version
	if err := json.Unmarshal(b, &want); err != nil {
		t.Errorf("%q: the fast path decoded a document encoding/json refuses: %v", b, err)
		return true
	}
	if !reflect.DeepEqual(*fast, want) {
		t.Errorf("%q: fast path %#v, encoding/json %#v", b, *fast, want)
	}
	return true
}

func TestPlainVersionsNeedNoParse(t *testing.T) {
	for _, s := range []string{"1.2.3", "0.0.0", "10.20.30", "1.0.10", "123456789012345678.0.1",
		"1.2", "1", "01.2.3", "1.02.3", "1.2.03", "1.2.3-beta", "1.2.3+x", "v1.2.3", "1..3", ".1.2", "1.2.3.",
		"1234567890123456789.0.0", "1.2.3.4", ""} {
		v, err := backends.ParseVersion(s)
		canonical := err == nil && v.String() == s
		if plainVersion(s) && !canonical {
			t.Errorf("%q: taken as its own canonical form, but ParseVersion gives %v, %v", s, v, err)
		}
		if !plainVersion(s) && canonical && !strings.ContainsAny(s, "-+") && strings.Count(s, ".") == 2 && len(s) < 20 {
			t.Errorf("%q: a plain version left to ParseVersion", s)
		}
	}
}
