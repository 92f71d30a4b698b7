package modulestest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Entry is one archive entry. Exactly one of Body, Link and Dir matters.
type Entry struct {
	Name string
	Body string
	Mode fs.FileMode // permission bits; 0 means 0644
	Link string      // symlink target
	Dir  bool
}

// Files turns name -> body into entries, sorted by name.
func Files(files map[string]string) []Entry {
	var out []Entry
	for n, b := range files {
		out = append(out, Entry{Name: n, Body: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Zip builds a zip of entries, as a release tool would (symlinks stored
// the Unix way: mode bits plus the target as content).
func Zip(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		body := e.Body
		switch {
		case e.Dir:
			fh.SetMode(fs.ModeDir | 0o755)
		case e.Link != "":
			fh.SetMode(fs.ModeSymlink | 0o777)
			body = e.Link
		default:
			fh.SetMode(perm(e.Mode))
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TarGz builds a gzipped tar of entries.
func TarGz(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: int64(perm(e.Mode)), Size: int64(len(e.Body)), Typeflag: tar.TypeReg}
		switch {
		case e.Dir:
			h.Typeflag, h.Size, h.Mode = tar.TypeDir, 0, 0o755
		case e.Link != "":
			h.Typeflag, h.Size, h.Linkname = tar.TypeSymlink, 0, e.Link
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func perm(m fs.FileMode) fs.FileMode {
	if m == 0 {
		return 0o644
	}
	return m
}

// Git runs git in dir with a fixed identity and dates, failing the test on
// error; it returns the output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitRepo makes a repository in a temp dir and commits one tag per
// snapshot, in order: tags[i] holds snapshots[i] (files written anew each
// time; entries with Link become symlinks). It skips the test when git is
// not installed. It returns the repository's path.
func GitRepo(t testing.TB, tags []string, snapshots [][]Entry) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: skipping the git source test")
	}
	dir := t.TempDir()
	Git(t, dir, "init", "--quiet", "--initial-branch=main")
	for i, snap := range snapshots {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != ".git" {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
		for _, e := range snap {
			p := filepath.Join(dir, filepath.FromSlash(e.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			switch {
			case e.Dir:
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
			case e.Link != "":
				if err := os.Symlink(e.Link, p); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(p, []byte(e.Body), perm(e.Mode)); err != nil {
					t.Fatal(err)
				}
			}
		}
		Git(t, dir, "add", "-A")
		Git(t, dir, "commit", "--quiet", "--allow-empty", "-m", "snapshot "+tags[i])
		Git(t, dir, "tag", tags[i])
	}
	return dir
}
