package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// TestREADMETour runs every command of README.md's "A tour", in its order,
// in one working directory, against a local world: an origin registry, a
// module registry and an OCI registry, each over TLS, and the files the
// tour names. README's hosts are mapped to the local servers by the table
// in newTourWorld; a line naming any other host fails, so no line escapes
// the test. Each line must exit 0, or with the code its comment states
// ("exit 1: ..."). Terminal-UI lines run in tmux, serve in the background.
func TestREADMETour(t *testing.T) {
	lines := readTour(t, filepath.Join("..", "..", "README.md"))
	w := newTourWorld(t)
	for _, l := range lines {
		w.run(t, l)
	}
	if len(w.skipped) > 0 {
		t.Skipf("tmux is not installed: the terminal lines %s were not run (apt-get install tmux)", strings.Join(w.skipped, ", "))
	}
}

// tourLine is one command of the tour: continuation lines joined, the
// comment apart.
type tourLine struct {
	file    string // the page, as named in messages (README.md, docs/spec.md)
	n       int    // the page's line number where the command starts
	text    string
	comment string
	words   []shellWord
	want    int // the exit code the comment states; 0 when it states none
}

// shellWord is a word of a command line as sh splits it: raw as written
// (quotes kept), value with the quotes removed.
type shellWord struct{ raw, value string }

var statedExit = regexp.MustCompile(`\bexits? (\d+)\b`)

// readTour extracts the commands of the sh block under "## A tour".
func readTour(t *testing.T, readme string) []tourLine {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var lines []tourLine
	state, pending, start := "before", "", 0
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		switch {
		case state == "before" && strings.TrimSpace(line) == "## A tour":
			state = "section"
		case state == "section" && strings.HasPrefix(line, "## "):
			t.Fatalf("%s:%d: the tour section has no ```sh block", readme, n)
		case state == "section" && strings.HasPrefix(line, "```"):
			state = "block"
		case state == "block" && strings.HasPrefix(line, "```"):
			if pending != "" {
				t.Fatalf("%s:%d: the tour ends in a continuation line", readme, start)
			}
			if len(lines) == 0 {
				t.Fatalf("%s: the tour has no command", readme)
			}
			return lines
		case state == "block":
			if pending == "" {
				start = n
			}
			if cont, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
				pending += cont + " "
				continue
			}
			full := pending + line
			pending = ""
			if strings.TrimSpace(full) == "" {
				continue
			}
			l, err := parseTourLine(start, full)
			if err != nil {
				t.Fatalf("%s:%d: %v: %s", readme, start, err, full)
			}
			l.file = "README.md"
			lines = append(lines, l)
		}
	}
	t.Fatalf("%s: no \"## A tour\" section with a ```sh block", readme)
	return nil
}

func parseTourLine(n int, line string) (tourLine, error) {
	words, comment, err := splitShell(line)
	if err != nil {
		return tourLine{}, err
	}
	if len(words) == 0 || words[0].value != "tfmirror" {
		return tourLine{}, errors.New("not a tfmirror command")
	}
	l := tourLine{n: n, comment: comment, words: words}
	raw := make([]string, len(words))
	for i, w := range words {
		raw[i] = w.raw
	}
	l.text = strings.Join(raw, " ")
	if m := statedExit.FindStringSubmatch(comment); m != nil {
		l.want, _ = strconv.Atoi(m[1])
	}
	return l, nil
}

// splitShell splits line into words as sh does (single and double quotes,
// backslash escapes; no expansion) and returns the comment: what follows
// an unquoted # that starts a word.
func splitShell(line string) ([]shellWord, string, error) {
	var words []shellWord
	var raw, val strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, shellWord{raw.String(), val.String()})
		}
		raw.Reset()
		val.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			end()
			continue
		case c == '#' && !inWord:
			return words, strings.TrimSpace(line[i+1:]), nil
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, "", errors.New("unterminated single quote")
			}
			raw.WriteString(line[i : i+j+2])
			val.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) && strings.IndexByte("\"\\$`", line[j+1]) >= 0 {
					j++
				}
				val.WriteByte(line[j])
			}
			if j == len(line) {
				return nil, "", errors.New("unterminated double quote")
			}
			raw.WriteString(line[i : j+1])
			i = j
		case c == '\\' && i+1 < len(line):
			raw.WriteString(line[i : i+2])
			val.WriteByte(line[i+1])
			i++
		default:
			raw.WriteByte(c)
			val.WriteByte(c)
		}
		inWord = true
	}
	end()
	return words, "", nil
}

// hostLike is the first part of a provider or module address with a host,
// or the host of a URL.
var hostLike = regexp.MustCompile(`^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:[0-9]+)?$`)

// hostIn returns the host a word names: a URL's, or the first part of an
// address HOST/... (a flag's value after "=" too); "" when it names none.
func hostIn(word string) string {
	if strings.HasPrefix(word, "-") {
		if _, v, ok := strings.Cut(word, "="); ok {
			word = v
		}
	}
	if scheme, rest, ok := strings.Cut(word, "://"); ok {
		if scheme == "file" || scheme == "s3" { // an s3:// place names a bucket, not a host
			return ""
		}
		host, _, _ := strings.Cut(rest, "/")
		return host
	}
	if first, _, ok := strings.Cut(word, "/"); ok && hostLike.MatchString(first) {
		return first
	}
	return ""
}

// tourWorld is the local world the tour runs in.
type tourWorld struct {
	dir   string   // the working directory
	env   []string // added to the environment of every command
	hosts map[string]string
	tmp   string
	// skipped are the terminal lines not run for want of tmux.
	skipped []string

	origin *registrytest.Server // the origin registry (registry.terraform.io)
	oci    string               // the OCI registry's host (reg.corp)
	home   string               // $HOME
	caFile string               // the CA bundle the commands trust (SSL_CERT_FILE)
}

// Tour world contents: providers on the origin registry, versions of the
// module, the widget's release zips in dist/.
var (
	tourAWS       = []string{"4.67.0", "5.0.0", "5.1.0"}
	tourNull      = []string{"3.2.1", "3.2.2"}
	tourAlpha     = []string{"1.2.0"} // docs/places.md's
	tourPlatforms = []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}
	tourVPC       = []string{"4.0.0", "5.0.0", "5.1.0"}
	tourWidget    = []string{"linux_amd64", "darwin_arm64"}
)

func newTourWorld(t *testing.T) *tourWorld { return newTourWorldAt(t, "") }

// newTourWorldAt is a tour world with the origin registry listening on
// originAddr ("" for any free port).
func newTourWorldAt(t *testing.T, originAddr string) *tourWorld {
	t.Helper()
	tmp := t.TempDir()
	w := &tourWorld{dir: filepath.Join(tmp, "work"), tmp: tmp}

	var providers []registrytest.Provider
	for _, p := range []struct {
		ns, typ  string
		versions []string
	}{{"hashicorp", "aws", tourAWS}, {"hashicorp", "null", tourNull}, {"acme", "alpha", tourAlpha}} {
		rp := registrytest.Provider{Namespace: p.ns, Type: p.typ}
		for _, v := range p.versions {
			archives := map[string][]byte{}
			for _, plat := range tourPlatforms {
				archives[plat] = registrytest.ProviderZip(p.typ, v, plat)
			}
			rp.Versions = append(rp.Versions, registrytest.Version{Version: v, Archives: archives})
		}
		providers = append(providers, rp)
	}
	origin := registrytest.NewWithOptions(t, registrytest.Options{Addr: originAddr}, providers...)

	mods := modulestest.New(t)
	for _, v := range tourVPC {
		files := modulestest.Files(map[string]string{"main.tf": "variable \"cidr\" {\n  default = \"10.0.0.0/16\"\n}\n# vpc " + v + "\n"})
		mods.File("/archives/vpc-"+v+".zip", modulestest.Zip(t, files))
		mods.Add("terraform-aws-modules/vpc/aws", v, modulestest.Download{Location: "/archives/vpc-" + v + ".zip"})
	}

	reg := ocitest.New(t)

	// README's hosts, mapped to the world's servers. A provider address
	// with a host follows the same table.
	w.hosts = map[string]string{
		"registry.terraform.io": origin.Host(),  // the origin registry of providers
		"registry.opentofu.org": mods.Host(),    // the module registry
		"reg.corp":              reg.Host(),     // the OCI registry
		"corp.example":          "corp.example", // a provider's hostname, never contacted
	}

	// Trust the three servers as a user trusts a private CA.
	var bundle []byte
	bundle = append(bundle, origin.CertPEM()...)
	for _, f := range []string{mods.CAFile(), reg.CAFile()} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bundle = append(bundle, b...)
	}
	home := filepath.Join(tmp, "home")
	certs := filepath.Join(tmp, "certs")
	configured := filepath.Join(tmp, "configured-mirror")
	for _, d := range []string{w.dir, home, certs, configured, filepath.Join(w.dir, "dist"), filepath.Join(w.dir, "infra")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	caFile := writeFile(t, tmp, "ca.pem", string(bundle))
	w.origin, w.oci, w.home, w.caFile = origin, reg.Host(), home, caFile

	// The user's CLI configuration names a filesystem mirror (for
	// `tfmirror` without places).
	backendtest.WritePacked(t, configured, backendtest.Seeds(t, []string{"registry.terraform.io/hashicorp/null"}, tourNull, []string{"linux_amd64"}))
	cliConfig := writeFile(t, tmp, "cli.tfrc", fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n  direct {}\n}\n", configured))

	// Files the tour names: a goreleaser dist of the widget (zips, the
	// SHA256SUMS signed by acme.asc, a report), a configuration using a
	// module.
	var sums strings.Builder
	for _, plat := range tourWidget {
		zip := registrytest.ProviderZip("widget", "1.2.3", plat)
		name := "terraform-provider-widget_1.2.3_" + plat + ".zip"
		writeFile(t, filepath.Join(w.dir, "dist"), name, string(zip))
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(zip), name)
	}
	signer := backendtest.NewSigner(t, "acme releases")
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, signer.Entity, strings.NewReader(sums.String()), nil); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.dir, "dist"), "terraform-provider-widget_1.2.3_SHA256SUMS", sums.String())
	writeFile(t, filepath.Join(w.dir, "dist"), "terraform-provider-widget_1.2.3_SHA256SUMS.sig", sig.String())
	writeFile(t, filepath.Join(w.dir, "dist"), "artifacts.json", "[]")
	writeFile(t, w.dir, "acme.asc", signer.Armor)
	writeFile(t, filepath.Join(w.dir, "infra"), "main.tf", "module \"vpc\" {\n  source  = \"terraform-aws-modules/vpc/aws\"\n  version = \"~> 5.0\"\n}\n")

	w.env = []string{
		"HOME=" + home, "TF_CLI_CONFIG_FILE=" + cliConfig, "TERRAFORM_CONFIG=", "TOFU_CLI_CONFIG_FILE=",
		"SSL_CERT_FILE=" + caFile, "SSL_CERT_DIR=" + certs,
		"DOCKER_CONFIG=" + home, "XDG_CONFIG_HOME=" + home, "XDG_RUNTIME_DIR=", "REGISTRY_AUTH_FILE=",
		"TMPDIR=" + tmp, "NO_COLOR=1",
	}
	return w
}

// substitute maps the hosts of l to the world's; it fails naming a host
// the table does not know.
func (w *tourWorld) substitute(l tourLine) (string, error) {
	raw := make([]string, len(l.words))
	for i, word := range l.words {
		raw[i] = word.raw
		host := hostIn(word.value)
		if host == "" {
			continue
		}
		local, ok := w.hosts[host]
		if !ok {
			return "", fmt.Errorf("%q names the host %s, which the tour test does not map to a local server (add it to tourWorld.hosts)", word.value, host)
		}
		if !strings.Contains(word.raw, host) {
			return "", fmt.Errorf("%q: the host %s is quoted across its letters; write it plainly", word.raw, host)
		}
		raw[i] = strings.Replace(word.raw, host, local, 1)
	}
	return strings.Join(raw, " "), nil
}

// shellLine is cmdline as sh runs it: the built binary for tfmirror.
func shellLine(cmdline string) string {
	return "exec '" + tfmirrorBin + "'" + strings.TrimPrefix(cmdline, "tfmirror")
}

// kind is how a line runs: in a terminal, as a server, or as a command.
func (l tourLine) kind() string {
	switch {
	case len(l.words) == 1, l.words[1].value == "ui", l.words[1].value == "demo", strings.ContainsAny(l.words[1].value, "/."):
		return "ui"
	case l.words[1].value == "serve":
		return "serve"
	}
	return "command"
}

func (w *tourWorld) run(t *testing.T, l tourLine) {
	t.Helper()
	cmdline, err := w.substitute(l)
	if err != nil {
		t.Errorf("%s:%d: %s\n%v", l.file, l.n, l.text, err)
		return
	}
	switch l.kind() {
	case "ui":
		w.runUI(t, l, cmdline)
	case "serve":
		w.runServe(t, l, cmdline)
	default:
		r := w.sh(t, cmdline)
		if r.code != l.want {
			t.Errorf("%s:%d: %s\nran: %s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", l.file, l.n, l.text, cmdline, r.code, l.want, r.stdout, r.stderr)
		}
	}
}

// sh runs cmdline with sh in the world's directory, as a user would type
// it (quotes, globs).
func (w *tourWorld) sh(t *testing.T, cmdline string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound for a loaded machine
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", shellLine(cmdline))
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), w.env...)
	return runCmd(t, cmd)
}

// runServe starts a serve line on a free port, waits for its "Serving"
// line, then stops it with SIGTERM: it must exit 143, as README says.
func (w *tourWorld) runServe(t *testing.T, l tourLine, cmdline string) {
	t.Helper()
	cmdline += " --addr 127.0.0.1:0" // not README's port 8443: tests run side by side
	if !strings.Contains(cmdline, "--tls-cert") {
		cmdline += " --cert-out " + filepath.Join(w.tmp, "serve-ca.pem")
	}
	cmd := exec.Command("sh", "-c", shellLine(cmdline))
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), w.env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := make(chan bool, 1)
	var out strings.Builder
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if !found && strings.HasPrefix(sc.Text(), "Serving ") {
				found = true
				serving <- true
			}
		}
		if !found {
			serving <- false
		}
	}()
	ok := false
	select {
	case ok = <-serving:
	case <-time.After(time.Minute):
	}
	if ok {
		cmd.Process.Signal(syscall.SIGTERM)
	} else {
		cmd.Process.Kill()
	}
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	switch {
	case !ok:
		t.Errorf("%s:%d: %s\nran: %s\nno \"Serving\" line; exit %d (%v)\nstdout:\n%s\nstderr:\n%s", l.file, l.n, l.text, cmdline, code, err, out.String(), errb.String())
	case code != 143:
		t.Errorf("%s:%d: %s\nran: %s\nafter SIGTERM: exit %d (%v), want 143\nstdout:\n%s\nstderr:\n%s", l.file, l.n, l.text, cmdline, code, err, out.String(), errb.String())
	}
}

// runUI runs a terminal-UI line in tmux: the first screen must come, q
// must end it with exit 0 (or Ctrl-C with the 130 the line states).
func (w *tourWorld) runUI(t *testing.T, l tourLine, cmdline string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Logf("%s:%d: %s\nskipped: tmux is not installed, and this line needs a terminal (apt-get install tmux)", l.file, l.n, l.text)
		w.skipped = append(w.skipped, fmt.Sprintf("%s:%d", l.file, l.n))
		return
	}
	dir := t.TempDir()
	// The pane stays after the program exits, to read its status and its
	// last screen.
	conf := writeFile(t, dir, "tmux.conf", "set -g remain-on-exit on\n")
	s := &tmuxSession{t: t, socket: filepath.Join(dir, "tmux.sock")}
	args := []string{"-f", conf, "new-session", "-d", "-x", "120", "-y", "36", "-c", w.dir}
	for _, e := range w.env {
		args = append(args, "-e", e)
	}
	// The UI draws on stdout; its stderr goes to a file, so that a message
	// is kept when the program ends early.
	stderrFile := filepath.Join(dir, "stderr")
	s.tmux(append(args, shellLine(cmdline)+" 2>"+stderrFile)...)
	defer exec.Command("tmux", "-S", s.socket, "kill-server").Run()

	fail := func(what string) {
		stderr, _ := os.ReadFile(stderrFile)
		t.Errorf("%s:%d: %s\nran in a terminal: %s\n%s\nscreen:\n%s\nstderr:\n%s", l.file, l.n, l.text, cmdline, what, strings.TrimRight(s.screen(false), "\n"), stderr)
	}
	deadline := time.Now().Add(time.Minute) // a bound for a loaded machine
	for {
		if dead, status := s.paneStatus(); dead {
			fail(fmt.Sprintf("exit %d before its first screen", status))
			return
		}
		scr := s.screen(false)
		// The header names the places ("[1] …"); where they need the
		// room it drops the words "mirrors:" or "module places:", and
		// then the program's name.
		if head, _, _ := strings.Cut(scr, "\n"); strings.Contains(head, "[1] ") {
			break
		}
		if time.Now().After(deadline) {
			fail("no first screen within a minute")
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	// q quits; a stated 130 is Ctrl-C's (an interrupt).
	if l.want == 130 {
		s.keys("C-c")
	} else {
		s.keys("q")
	}
	for {
		dead, status := s.paneStatus()
		if dead && status != l.want {
			fail(fmt.Sprintf("exit %d after q, want %d", status, l.want))
		}
		if dead {
			return
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			fail("still running a minute after q")
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// paneStatus reports whether the program in the pane has ended, and its
// exit status.
func (s *tmuxSession) paneStatus() (dead bool, status int) {
	out := strings.Fields(s.tmux("display-message", "-p", "#{pane_dead} #{pane_dead_status}"))
	if len(out) == 0 || out[0] != "1" {
		return false, 0
	}
	if len(out) > 1 {
		status, _ = strconv.Atoi(out[1])
	}
	return true, status
}

// TestTourExtraction checks the tour test's own reading of README:
// continuation lines, quotes, comments, stated exit codes, the host table,
// and a line naming a host the table does not know.
func TestTourExtraction(t *testing.T) {
	readme := writeFile(t, t.TempDir(), "README.md", "# x\n\n```sh\nnot the tour\n```\n\n## A tour\n\n```sh\n"+
		"tfmirror ls registry://registry.terraform.io -p hashicorp/null   # the versions\n"+
		"\n"+
		"tfmirror diff ./a 'oci://reg.corp/x/${type}#y' \\\n"+
		"    -p corp.example/acme/widget \"~> 5.0\"  # the plan; exit 1: DST lacks something\n"+
		"tfmirror ls https://mirror.example.net/ -p example.com/acme/x\n"+
		"```\n\n## Next\n")
	lines := readTour(t, readme)
	if len(lines) != 3 {
		t.Fatalf("read %d lines, want 3: %+v", len(lines), lines)
	}
	if l := lines[1]; l.n != 12 || l.want != 1 || l.comment != "the plan; exit 1: DST lacks something" ||
		l.text != `tfmirror diff ./a 'oci://reg.corp/x/${type}#y' -p corp.example/acme/widget "~> 5.0"` {
		t.Errorf("continued line: %+v", l)
	}
	if lines[0].want != 0 || lines[0].kind() != "command" {
		t.Errorf("first line: %+v", lines[0])
	}
	w := &tourWorld{hosts: map[string]string{"registry.terraform.io": "127.0.0.1:1", "reg.corp": "127.0.0.1:2", "corp.example": "corp.example"}}
	for i, want := range []string{
		"tfmirror ls registry://127.0.0.1:1 -p hashicorp/null",
		`tfmirror diff ./a 'oci://127.0.0.1:2/x/${type}#y' -p corp.example/acme/widget "~> 5.0"`,
	} {
		if got, err := w.substitute(lines[i]); err != nil || got != want {
			t.Errorf("substitute(%s) = %q, %v; want %q", lines[i].text, got, err, want)
		}
	}
	if _, err := w.substitute(lines[2]); err == nil || !strings.Contains(err.Error(), "mirror.example.net") {
		t.Errorf("a host the table does not know: %v", err)
	}
	for _, c := range []struct{ line, kind string }{{"tfmirror", "ui"}, {"tfmirror ui ./m", "ui"}, {"tfmirror ./m", "ui"}, {"tfmirror serve ./m", "serve"}} {
		if l, err := parseTourLine(1, c.line); err != nil || l.kind() != c.kind {
			t.Errorf("%s: kind %q, %v; want %q", c.line, l.kind(), err, c.kind)
		}
	}
	for _, bad := range []string{"ls ./m", "tfmirror ls 'unterminated"} {
		if _, err := parseTourLine(1, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
