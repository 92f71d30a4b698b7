package fetch

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"time"
)

// ErrNoGit is wrapped when a git source is met and no git binary is found.
var ErrNoGit = errors.New("git is not installed (or not on PATH)")

// gitSource is a git:: address taken apart: the repository URL (scp-style
// addresses kept as written) and go-getter's own arguments.
type gitSource struct {
	repo   string
	ref    string
	depth  int
	sshKey []byte
}

func parseGitSource(src string) (gitSource, error) {
	base, rawQuery, _ := strings.Cut(src, "?")
	var g gitSource
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return g, fmt.Errorf("git address %q: bad query: %v", src, err)
	}
	g.ref = q.Get("ref")
	q.Del("ref")
	if d := q.Get("depth"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return g, fmt.Errorf("git address %q: depth %q is not a count", src, d)
		}
		g.depth = n
	}
	q.Del("depth")
	if k := q.Get("sshkey"); k != "" {
		key, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			return g, fmt.Errorf("git address %q: sshkey is not base64: %v", src, err)
		}
		g.sshKey = key
	}
	q.Del("sshkey")
	g.repo = base
	if len(q) > 0 {
		g.repo += "?" + q.Encode()
	}
	// Arguments that start with "-" would be read by git as options.
	if g.repo == "" || strings.HasPrefix(g.repo, "-") {
		return g, fmt.Errorf("git address %q: bad repository", src)
	}
	if strings.HasPrefix(g.ref, "-") {
		return g, fmt.Errorf("git address %q: bad ref %q", src, g.ref)
	}
	if scheme, _, ok := strings.Cut(g.repo, "://"); ok {
		switch strings.ToLower(scheme) {
		case "https", "http", "ssh", "git", "file":
		default:
			return g, fmt.Errorf("git address %q: transport %q is not allowed (use https, ssh, git or file)", src, scheme)
		}
	} else if !scpLike.MatchString(g.repo) {
		return g, fmt.Errorf("git address %q: not a URL or an scp-style user@host:path address", src)
	}
	return g, nil
}

// git clones a repository at a ref with the system's git, as go-getter
// does (a shallow clone of the ref when depth is given, submodules
// included), and returns the work tree and the commit it holds.
func (f *fetcher) git(src string) (string, string, error) {
	g, err := parseGitSource(src)
	if err != nil {
		return "", "", err
	}
	bin, err := f.gitBinary(g.repo)
	if err != nil {
		return "", "", err
	}
	dir, err := f.tempDir()
	if err != nil {
		return "", "", err
	}
	tree := filepath.Join(dir, "repo")
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	if g.sshKey != nil {
		keyFile := filepath.Join(dir, "sshkey")
		if err := os.WriteFile(keyFile, g.sshKey, 0o600); err != nil {
			return "", "", err
		}
		env = append(env, "GIT_SSH_COMMAND=ssh -i "+keyFile+" -o IdentitiesOnly=yes")
	}
	run := gitRunner(f.ctx, bin, env)
	if g.depth > 0 {
		// A shallow clone of the ref, as go-getter makes it; no mirror,
		// since a mirror would fetch the whole history depth is there to
		// avoid.
		clone := []string{"clone", "--quiet", "--depth", strconv.Itoa(g.depth)}
		if g.ref != "" {
			clone = append(clone, "--branch", g.ref)
		}
		if _, err := run(append(clone, "--", g.repo, tree)...); err != nil {
			return "", "", fmt.Errorf("cloning %s: %w", g.repo, err)
		}
	} else {
		mirror, err := f.b.gitMirror(f.ctx, g, run)
		if err != nil {
			return "", "", err
		}
		if _, err := run("clone", "--quiet", "--shared", "--no-checkout", "--", mirror, tree); err != nil {
			return "", "", fmt.Errorf("cloning %s: %w", g.repo, err)
		}
		ref := g.ref
		if ref == "" {
			ref = "HEAD"
		}
		if _, err := run("-C", tree, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach", ref, "--"); err != nil {
			return "", "", fmt.Errorf("%s: ref %q: %w", g.repo, g.ref, err)
		}
		// Relative submodule URLs are relative to the real origin.
		if _, err := run("-C", tree, "remote", "set-url", "origin", g.repo); err != nil {
			return "", "", fmt.Errorf("%s: %w", g.repo, err)
		}
	}
	if _, err := os.Stat(filepath.Join(tree, ".gitmodules")); err == nil {
		if _, err := run("-C", tree, "submodule", "update", "--init", "--recursive"); err != nil {
			return "", "", fmt.Errorf("%s: submodules: %w", g.repo, err)
		}
	}
	rev, err := run("-C", tree, "rev-parse", "HEAD")
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", g.repo, err)
	}
	return tree, rev, nil
}

// gitBinary finds the git to run: the one the options name, or git on PATH.
// It is a step of its own so that either way a missing git is reported as
// ErrNoGit, naming the repository that needed it and what to do instead.
func (f *fetcher) gitBinary(repo string) (string, error) {
	if bin := f.b.opts.Git; bin != "" {
		if _, err := exec.LookPath(bin); err != nil {
			return "", fmt.Errorf("%w: %s: needed to fetch %s; install git, or mirror from a registry that serves archives", ErrNoGit, bin, repo)
		}
		return bin, nil
	}
	bin, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("%w: needed to fetch %s; install git, or mirror from a registry that serves archives", ErrNoGit, repo)
	}
	return bin, nil
}

// gitRunner returns how a fetch runs git: bin with env, stopped with ctx,
// giving back its trimmed standard output. It is a step of its own because
// every git command of a fetch, the shared mirror's included, fails the same
// way: the context's error when the job was cancelled, otherwise the
// subcommand, git's exit and the tail of what git wrote on standard error.
func gitRunner(ctx context.Context, bin string, env []string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			msg := strings.TrimSpace(errb.String())
			if len(msg) > 600 {
				msg = "…" + msg[len(msg)-600:]
			}
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, msg)
		}
		return strings.TrimSpace(out.String()), nil
	}
}

// mirrorMaxAge is how long a repository mirror is used before it is
// fetched again, so a long-lived Builder (the UI's) sees tags that moved.
const mirrorMaxAge = time.Minute

// gitMirrors holds one bare mirror clone per repository for a Builder's
// life: the versions of a module are usually tags of one repository, and
// cloning it once instead of once per version is what makes a re-run
// cheap.
type gitMirrors struct {
	mu    gosync.Mutex
	dir   string
	repos map[string]*gitMirror
}

type gitMirror struct {
	mu      gosync.Mutex
	path    string
	fetched time.Time
}

// gitMirror returns an up-to-date mirror of g's repository, cloning or
// fetching it first when needed. Jobs for the same repository wait for
// one another here; others do not.
func (b *Builder) gitMirror(ctx context.Context, g gitSource, run func(args ...string) (string, error)) (string, error) {
	key := g.repo + "\x00" + string(g.sshKey)
	b.mirrors.mu.Lock()
	if b.mirrors.dir == "" {
		d, err := os.MkdirTemp(b.opts.TempDir, "tfmirror-git-")
		if err != nil {
			b.mirrors.mu.Unlock()
			return "", err
		}
		b.mirrors.dir = d
		b.mirrors.repos = map[string]*gitMirror{}
	}
	m := b.mirrors.repos[key]
	if m == nil {
		m = &gitMirror{path: filepath.Join(b.mirrors.dir, strconv.Itoa(len(b.mirrors.repos))+".git")}
		b.mirrors.repos[key] = m
	}
	b.mirrors.mu.Unlock()

	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.fetched.IsZero():
		os.RemoveAll(m.path)
		if _, err := run("clone", "--quiet", "--mirror", "--", g.repo, m.path); err != nil {
			os.RemoveAll(m.path)
			return "", fmt.Errorf("cloning %s: %w", g.repo, err)
		}
	case time.Since(m.fetched) > mirrorMaxAge:
		if _, err := run("-C", m.path, "fetch", "--quiet", "--prune", "--force"); err != nil {
			return "", fmt.Errorf("fetching %s: %w", g.repo, err)
		}
	default:
		return m.path, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.fetched = time.Now()
	return m.path, nil
}

// Close removes the repository mirrors the Builder made. Packages it built
// are not affected.
func (b *Builder) Close() error {
	b.mirrors.mu.Lock()
	defer b.mirrors.mu.Unlock()
	if b.mirrors.dir == "" {
		return nil
	}
	err := os.RemoveAll(b.mirrors.dir)
	b.mirrors.dir, b.mirrors.repos = "", nil
	return err
}
