package cli

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/backends/serveauth"
	"github.com/tfmirror/tfmirror/backends/tlscert"
)

// docsWorld is a tour world with what the pages name besides: a mirror,
// configurations with lock files, a spec, a trust policy, an S3 server.
type docsWorld struct {
	*tourWorld
	s3      *s3test.Server
	buckets map[string]string // the pages' bucket names -> the server's
	// noJQ are the lines not run for want of jq.
	noJQ []string
}

func newDocsWorld(t *testing.T, port443 bool) *docsWorld {
	t.Helper()
	addr := ""
	if port443 {
		addr = "127.0.0.1:443"
		deadline := time.Now().Add(3 * time.Minute) // other tests hold it for a while
		for {
			l, err := net.Listen("tcp", addr)
			if err == nil {
				l.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Skipf("127.0.0.1:443 stayed busy (%v): the page's ${hostname} templates need an origin registry whose host has no port", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	w := &docsWorld{tourWorld: newTourWorldAt(t, addr), buckets: map[string]string{}}
	origin := w.origin.Host()
	// The OCI registry under the other names the pages give it.
	for _, h := range []string{"reg.internal", "registry.corp", "registry.example.com"} {
		w.hosts[h] = w.oci
	}
	w.hosts["localhost:8443"] = origin // the registry docs/places.md runs on its own machine
	// The configurations the pages name: ../infra and infra (aws), and
	// ../platform (null).
	req := func(name, typ, version string) string {
		return fmt.Sprintf("terraform {\n  required_providers {\n    %s = { source = %q, version = %q }\n  }\n}\n", name, origin+"/hashicorp/"+typ, version)
	}
	for _, d := range []string{"infra", "platform"} {
		if err := os.MkdirAll(filepath.Join(w.tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(w.tmp, "infra"), "main.tf", req("aws", "aws", "~> 5.0"))
	writeFile(t, filepath.Join(w.tmp, "platform"), "main.tf", req("null", "null", ">= 3.0"))
	writeFile(t, filepath.Join(w.dir, "infra"), "versions.tf", req("aws", "aws", "~> 5.0"))
	for _, d := range []string{"a", "b"} { // more configurations, lock files only
		if err := os.MkdirAll(filepath.Join(w.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// The user's mirror (four platforms, as the pages' loops want), a copy
	// on a USB stick, lock files.
	four := []string{"--platform", "linux_amd64", "--platform", "linux_arm64", "--platform", "darwin_arm64", "--platform", "windows_amd64"}
	for _, args := range [][]string{
		append([]string{"sync", "registry://" + origin, "./mirror", "-p", "hashicorp/aws", "-v", "~> 5.0"}, four...),
		append([]string{"sync", "registry://" + origin, "./mirror", "-p", "hashicorp/null", "-v", "3.2.2"}, four...),
		{"sync", "./mirror", "./usb"},
		// acme/alpha in the OCI registry, for the provider localhost/acme/alpha
		// (docs/places.md): a template without ${hostname} keeps no host.
		{"sync", "registry://" + origin, "oci://" + w.oci + "/tf/${namespace}/${type}", "-p", "acme/alpha", "-v", ">= 0", "--platform", "linux_amd64"},
		append([]string{"lock", "./mirror", "--from", "../infra", "--from", "../platform", "--from", "infra"}, four...),
	} {
		if r := w.tfmirror(t, args...); r.code != 0 {
			t.Fatalf("the docs world: tfmirror %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	for src, dst := range map[string]string{"../infra": "a", "../platform": "b"} {
		lock, err := os.ReadFile(filepath.Join(w.dir, src, ".terraform.lock.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(w.dir, dst), ".terraform.lock.hcl", string(lock))
	}

	// A server certificate (m.crt, m.key) for serve --tls-cert.
	cert, key, err := tlscert.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.dir, "m.crt", string(cert))
	writeFile(t, w.dir, "m.key", string(key))

	// A spec (its OCI destination as the page writes it: with ${hostname}
	// where the page's templates have it), a trust policy and a pull-through policy.
	template := "${namespace}/${type}"
	if port443 {
		template = "${hostname}/" + template
	}
	writeFile(t, w.dir, "mirror.hcl", fmt.Sprintf(`destinations = ["./mirror", "oci://%[2]s/tf/%[3]s"]
platforms    = ["linux_amd64", "darwin_arm64"]
from         = ["../infra", "../platform"]
allow        = ["%[1]s/hashicorp/*"]
deny         = ["hashicorp/template"]

provider "%[1]s/hashicorp/aws" {
  versions = "~> 5.0"
}
`, origin, w.oci, template))
	writeFile(t, w.dir, "trust.hcl", fmt.Sprintf("require_signature = true\n\nprovider %q {\n  fingerprints = [%q]\n}\n", origin+"/hashicorp/*", w.origin.Fingerprint()))
	// Who may use serve (docs/pull-through.md): a tokens file, a CA of
	// client certificates, and a client certificate it signed.
	writeFile(t, w.dir, "tokens.hcl", fmt.Sprintf("token \"ci\" {\n  sha256    = %q\n  providers = [\"registry.terraform.io/hashicorp/*\"]\n}\n", serveauth.HashToken("docs-token")))
	cca, ccert, ckey := clientCA(t, "ci-bridge")
	for name, from := range map[string]string{"clients-ca.pem": cca, "client.pem": ccert, "client.key": ckey} {
		b, _ := os.ReadFile(from)
		writeFile(t, w.dir, name, string(b))
	}
	writeFile(t, w.dir, "policy.hcl", fmt.Sprintf("platforms = [\"linux_amd64\", \"darwin_arm64\"]\nallow     = [%q]\n", origin+"/hashicorp/*"))
	return w
}

// namesHostname says whether a line of blocks has an OCI template with
// ${hostname}: a provider's host with a port makes no repository name.
func namesHostname(blocks []docBlock) bool {
	for _, b := range blocks {
		for _, l := range b.lines {
			if strings.Contains(l.text, "${hostname}") {
				return true
			}
		}
	}
	return false
}

// startMirrorCorp starts the network mirror the pages call mirror.corp
// (once): the origin's providers, every version, as a directory served
// over HTTPS under any path prefix (https://mirror.corp/tf/ too).
func (w *docsWorld) startMirrorCorp(t *testing.T) {
	t.Helper()
	if _, ok := w.hosts["mirror.corp"]; ok {
		return
	}
	origin := w.origin.Host()
	dir := filepath.Join(w.tmp, "mirror.corp")
	for _, p := range []string{"hashicorp/aws", "hashicorp/null"} {
		args := []string{"sync", "registry://" + origin, dir, "-p", p, "-v", ">= 0", "--platform", "linux_amd64", "--platform", "darwin_arm64"}
		if r := w.tfmirror(t, args...); r.code != 0 {
			t.Fatalf("the docs world: tfmirror %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		i := strings.Index(r.URL.Path, "/"+origin+"/")
		if i < 0 {
			http.NotFound(rw, r)
			return
		}
		r.URL.Path = r.URL.Path[i:]
		files.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	w.trust(t, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	w.hosts["mirror.corp"] = strings.TrimPrefix(srv.URL, "https://")
}

// trust adds a certificate to the bundle the commands trust.
func (w *docsWorld) trust(t *testing.T, certPEM []byte) {
	t.Helper()
	bundle, err := os.ReadFile(w.caFile)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(w.caFile), filepath.Base(w.caFile), string(bundle)+string(certPEM))
}

// tfmirror runs the binary in the world's directory and environment.
func (w *docsWorld) tfmirror(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(tfmirrorBin, args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), w.env...)
	return runCmd(t, cmd)
}

// startS3 starts the S3 server the pages' buckets live on (once), trusts
// it, and writes the AWS configuration the pages' profiles name.
func (w *docsWorld) startS3(t *testing.T) {
	t.Helper()
	if w.s3 != nil {
		return
	}
	w.s3 = s3test.Start(t)
	w.trust(t, w.s3.CertPEM())
	host := strings.TrimPrefix(w.s3.URL, "https://")
	for _, h := range []string{"s3.internal", "minio.corp:9000"} {
		w.hosts[h] = host
	}
	if err := os.MkdirAll(filepath.Join(w.home, ".aws"), 0o755); err != nil {
		t.Fatal(err)
	}
	keys := fmt.Sprintf("aws_access_key_id = %s\naws_secret_access_key = %s\n", s3test.AccessKey, s3test.SecretKey)
	config := writeFile(t, filepath.Join(w.home, ".aws"), "config", "[default]\nregion = "+s3test.Region+"\n"+keys+"\n[profile mirror-writer]\n"+keys)
	w.env = append(w.env, "AWS_CONFIG_FILE="+config, "AWS_SHARED_CREDENTIALS_FILE="+config, "AWS_PROFILE=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=",
		"AWS_SESSION_TOKEN=", "AWS_REGION=", "AWS_ENDPOINT_URL=", "AWS_ENDPOINT_URL_S3=", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CA_BUNDLE="+w.caFile) // the S3 client trusts the AWS configuration's CA bundle, not SSL_CERT_FILE
}

// mapBuckets maps the s3:// places of l to buckets of the world's S3
// server, and says whether the line names one.
func (w *docsWorld) mapBuckets(t *testing.T, l *docLine) bool {
	t.Helper()
	named := false
	for i, word := range l.words {
		_, rest, ok := strings.Cut(word.value, "s3://")
		if !ok || !strings.HasPrefix(word.raw, "s3://") && !strings.Contains(word.raw, "=s3://") {
			continue
		}
		w.startS3(t)
		name, _, _ := strings.Cut(rest, "/")
		local, ok := w.buckets[name]
		if !ok {
			local = w.s3.Bucket(t)
			w.buckets[name] = local
		}
		l.words[i].raw = strings.Replace(word.raw, "s3://"+name, "s3://"+local, 1)
		l.words[i].value = strings.Replace(word.value, "s3://"+name, "s3://"+local, 1)
		named = true
	}
	return named
}

// runDoc runs a line of a page.
func (w *docsWorld) runDoc(t *testing.T, l docLine) {
	t.Helper()
	if l.script != nil {
		w.runScript(t, l)
		return
	}
	if l.words[0].value == "export" {
		for _, word := range l.words[1:] {
			if !strings.Contains(word.value, "=") {
				t.Errorf("%s:%d: %s: export NAME=VALUE only", l.file, l.n, l.text)
			}
			w.env = append(w.env, word.value)
		}
		return
	}
	l.words = append([]shellWord(nil), l.words...)
	s3 := w.mapBuckets(t, &l)
	for _, word := range l.words {
		if hostIn(word.value) == "mirror.corp" {
			w.startMirrorCorp(t)
		}
	}
	cmdline, err := w.substitute(l.tourLine)
	if err != nil {
		t.Errorf("%s:%d: %s\n%v", l.file, l.n, l.text, err)
		return
	}
	if strings.Contains(l.pipe, "jq ") {
		if _, err := exec.LookPath("jq"); err != nil {
			t.Logf("%s:%d: %s %s\nskipped: jq is not installed (apt-get install jq)", l.file, l.n, l.text, l.pipe)
			w.noJQ = append(w.noJQ, fmt.Sprintf("%s:%d", l.file, l.n))
			return
		}
	}
	if l.words[0].value != "tfmirror" {
		w.shDoc(t, l, cmdline)
		return
	}
	if s3 && !strings.Contains(cmdline, "--s3-endpoint") {
		cmdline += " --s3-endpoint " + w.s3.URL // where the pages' AWS S3 is
	}
	switch {
	case l.pipe == "" && l.kind() == "ui":
		w.runUI(t, l.tourLine, cmdline)
	case l.pipe == "" && l.kind() == "serve":
		w.runServe(t, l.tourLine, cmdline)
	default:
		w.shDoc(t, l, shellLine(cmdline))
	}
}

// shDoc runs a command line with its pipe in bash, the pipe's status that
// of the first command that fails (pipefail).
func (w *docsWorld) shDoc(t *testing.T, l docLine, cmdline string) {
	t.Helper()
	if l.pipe != "" {
		cmdline += " " + l.pipe
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound for a loaded machine
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+cmdline)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), w.env...)
	r := runCmd(t, cmd)
	if r.code != l.want {
		t.Errorf("%s:%d: %s\nran: %s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", l.file, l.n, l.text+" "+l.pipe, cmdline, r.code, l.want, r.stdout, r.stderr)
	}
}

// runScript runs a loop as one bash script: tfmirror is the built binary,
// the hosts are mapped line by line, and its wait fails when a job it
// waits for failed (a bare wait would not say).
func (w *docsWorld) runScript(t *testing.T, l docLine) {
	t.Helper()
	lines := []string{"tfmirror() { '" + tfmirrorBin + "' \"$@\"; }"}
	for _, line := range l.script {
		words, _, err := splitShell(line)
		if err != nil {
			t.Errorf("%s:%d: %v: %s", l.file, l.n, err, line)
			return
		}
		if len(words) == 1 && words[0].value == "wait" {
			lines = append(lines, `for job in $(jobs -p); do wait "$job" || exit $?; done`)
			continue
		}
		mapped, err := w.substitute(tourLine{words: words})
		if err != nil {
			t.Errorf("%s:%d: %s\n%v", l.file, l.n, line, err)
			return
		}
		lines = append(lines, mapped)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a bound for a loaded machine
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", strings.Join(lines, "\n"))
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), w.env...)
	if r := runCmd(t, cmd); r.code != l.want {
		t.Errorf("%s:%d: %s\nran:\n%s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", l.file, l.n, strings.Join(l.script, "\n"), strings.Join(lines, "\n"), r.code, l.want, r.stdout, r.stderr)
	}
}
