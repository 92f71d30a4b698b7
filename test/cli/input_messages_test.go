package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Input a shell or a slip of the hand mangled gets a message saying what
// was probably meant, exit 2, in every command and the UI, and nothing is
// written: an oci:// template the shell expanded (unquoted, ${namespace}
// and ${type} become empty), {namespace} without its "$", a scheme
// without its colon, a platform spelled otherwise than the clients name
// it (with what the place holds).
func TestCLIInputMessages(t *testing.T) {
	mirror, _ := fsMirror(t) // linux_amd64 and darwin_arm64
	reg := threeVersionRegistry(t)
	env := caEnv(t, reg.CertPEM())
	const quote = "the shell probably expanded ${...}: quote the template"
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unquoted template", []string{"ls", "oci://127.0.0.1:1/tf//"}, []string{quote, "e.g. 'oci://127.0.0.1:1/tf/${namespace}/${type}'"}},
		{"double-quoted template", []string{"sync", mirror, "oci://127.0.0.1:1/tf/"}, []string{quote}},
		{"{namespace} without $", []string{"sync", "oci://127.0.0.1:1/tf/{namespace}/{type}", "DST"}, []string{"{namespace} is not a template symbol, ${namespace} is", quote, "'oci://127.0.0.1:1/tf/${namespace}/${type}'"}},
		{"expanded template in the UI", []string{"ui", mirror, "oci://127.0.0.1:1/tf//"}, []string{quote}},
		{"expanded template to push", []string{"push", mirror, "oci://127.0.0.1:1/tf//"}, []string{quote}},
		{"https without its colon", []string{"ls", "https//mirror.example/tf/"}, []string{"did you mean https://mirror.example/tf/?"}},
		{"registry without its colon, in the UI", []string{"ui", "registry//" + reg.Host(), "-v", "1.0.0"}, []string{"did you mean registry://" + reg.Host() + "?"}},
		{"Linux_AMD64", []string{"ls", mirror, "--platform", "Linux_AMD64"}, []string{"--platform Linux_AMD64: did you mean linux_amd64?", mirror + " holds darwin_arm64, linux_amd64."}},
		{"linux_x86_64", []string{"sync", mirror, "DST", "--platform", "linux_x86_64"}, []string{"--platform linux_x86_64: did you mean linux_amd64?", mirror + " holds darwin_arm64, linux_amd64."}},
		{"linux_x86_64 on a registry", []string{"ls", "registry://" + reg.Host(), "-p", "acme/alpha", "-v", "1.1.0", "--platform", "linux_x86_64"}, []string{"did you mean linux_amd64?", "registry://" + reg.Host() + " holds darwin_arm64, linux_amd64."}},
		{"darwin-aarch64 in the UI", []string{"ui", mirror, "--platform", "darwin-aarch64"}, []string{"--platform darwin-aarch64: did you mean darwin_arm64?", mirror + " holds darwin_arm64, linux_amd64."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "DST", filepath.Join(dir, "dst"))
			}
			r := run(t, env, args...)
			if r.code != 2 {
				t.Errorf("%v: exit %d, want 2\n%s%s", args, r.code, r.stdout, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("%v: stderr lacks %q:\n%s", args, w, r.stderr)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("%v wrote %s", args, entries[0].Name())
			}
		})
	}
}
