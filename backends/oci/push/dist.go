package push

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Args are push's SRC arguments sorted by what they are. A goreleaser dist
// directory given as itself is opened into the files at its top; given as
// dist/* by the shell, the same files arrive one by one: both sort alike.
type Args struct {
	// Places are the arguments read as places: URLs and mirror
	// directories.
	Places []string
	// Zips are the release zips, Sums the SHA256SUMS files and Sigs their
	// detached signatures.
	Zips, Sums, Sigs []string
	// Skipped are goreleaser's other outputs, which push does not upload:
	// its reports (artifacts.json, metadata.json, config.yaml,
	// CHANGELOG.md), the registry manifest (terraform-provider-NAME_VERSION_manifest.json),
	// the per-platform build directories (named with a trailing /) and the
	// publisher's public key (*.asc, *.id), which --signing-key may name.
	Skipped []string
	// keys are the --signing-key files, known by their identity.
	keys []os.FileInfo
}

// goreleaserReports are the files goreleaser writes at the top of dist/
// besides the release's artifacts.
var goreleaserReports = map[string]bool{"artifacts.json": true, "metadata.json": true, "config.yaml": true, "CHANGELOG.md": true}

// Classify sorts push's SRC arguments. A file that is none of a release
// zip, a SHA256SUMS, its .sig, one of goreleaser's other outputs or a
// public key (*.asc, *.id, or one of keyFiles, the --signing-key files,
// whatever its name) is a usage error naming it: nothing given is ignored
// unsaid.
func Classify(ctx context.Context, args []string, keyFiles ...string) (Args, error) {
	var a Args
	for _, k := range keyFiles {
		if fi, err := os.Stat(k); err == nil {
			a.keys = append(a.keys, fi)
		}
	}
	for _, arg := range args {
		if err := a.add(ctx, arg, false); err != nil {
			return Args{}, err
		}
	}
	return a, nil
}

// add sorts one argument; inDist says it is an entry of a dist directory,
// where a directory can only be a build directory.
func (a *Args) add(ctx context.Context, arg string, inDist bool) error {
	if strings.Contains(arg, "://") {
		a.Places = append(a.Places, arg)
		return nil
	}
	fi, err := os.Stat(arg)
	switch {
	case err != nil && strings.HasSuffix(strings.ToLower(arg), ".zip"):
		a.Zips = append(a.Zips, arg) // NewZips says it is missing, naming it
		return nil
	case err != nil:
		a.Places = append(a.Places, arg) // opening the place says why not
		return nil
	case fi.IsDir():
		return a.addDir(ctx, arg, inDist)
	case slices.ContainsFunc(a.keys, func(k os.FileInfo) bool { return os.SameFile(k, fi) }):
		// The --signing-key file kept with the release: it checks the
		// .sig, it is not pushed.
		a.Skipped = append(a.Skipped, filepath.Base(arg))
		return nil
	case !fi.Mode().IsRegular():
		// A named pipe would hold push in its open, a device feed it
		// without end.
		return backends.Usagef("%s: not a regular file (%s): push takes release zips, a SHA256SUMS and its .sig as files", arg, regular.Kind(fi.Mode()))
	}
	return a.addFile(arg)
}

func (a *Args) addDir(ctx context.Context, dir string, inDist bool) error {
	switch {
	case isBuildDir(dir):
		a.Skipped = append(a.Skipped, filepath.Base(dir)+"/")
		return nil
	case inDist:
		return backends.Usagef("%s: a directory in a goreleaser dist that is not a build directory (terraform-provider-NAME_OS_ARCH holding the executable): push takes the zips, the SHA256SUMS and its .sig; give those", dir)
	}
	entries, ok, err := distEntries(ctx, dir)
	if err != nil || !ok {
		if !ok {
			a.Places = append(a.Places, dir)
		}
		return err
	}
	for _, e := range entries {
		if err := a.add(ctx, e, true); err != nil {
			return err
		}
	}
	return nil
}

// distEntries returns the paths at the top of dir when it is a goreleaser
// dist: a SHA256SUMS and release zips at its top, and no mirror layout (a
// filesystem mirror keeps its zips three levels down and lists providers).
func distEntries(ctx context.Context, dir string) ([]string, bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, nil // opening it as a place says why
	}
	var sums, zips bool
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		paths = append(paths, filepath.Join(dir, name))
		if e.IsDir() {
			continue
		}
		isSums, _ := IsSumsFile(name)
		sums = sums || isSums
		zips = zips || strings.HasSuffix(strings.ToLower(name), ".zip") && hasPrefixFold(name, "terraform-provider-")
	}
	if !sums || !zips {
		return nil, false, nil
	}
	if holdsProviders(dir) || ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	return paths, true, nil
}

// holdsProviders reports whether dir has a filesystem mirror's layout: a
// HOST/NAMESPACE/TYPE directory naming a provider, its first two levels
// real directories (the clients follow no symbolic link there).
func holdsProviders(dir string) bool {
	for _, h := range subdirs(dir, false) {
		for _, ns := range subdirs(filepath.Join(dir, h), false) {
			for _, ty := range subdirs(filepath.Join(dir, h, ns), true) {
				if _, err := backends.NewProvider(h, ns, ty); err == nil {
					return true
				}
			}
		}
	}
	return false
}

// subdirs lists the names of dir's directories, and of its symbolic links
// to directories when links is set.
func subdirs(dir string, links bool) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if e.IsDir() || links && e.Type()&os.ModeSymlink != 0 && isDir(filepath.Join(dir, e.Name())) {
			names = append(names, e.Name())
		}
	}
	return names
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// isBuildDir reports whether dir is one of goreleaser's per-platform build
// directories (terraform-provider-NAME_OS_ARCH[_VARIANT]): it holds the
// bare executable (terraform-provider-NAME[_vVERSION][.exe]) and nothing
// else.
func isBuildDir(dir string) bool {
	if !hasPrefixFold(filepath.Base(dir), "terraform-provider-") {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !hasPrefixFold(e.Name(), "terraform-provider-") {
			return false
		}
	}
	return true
}

// addFile sorts a file by its name, and a file of another name by whether
// it is a zip (push took any file as a zip before it knew dist/).
func (a *Args) addFile(path string) error {
	base := filepath.Base(path)
	isSums, isSig := IsSumsFile(base)
	lower := strings.ToLower(base)
	switch {
	case isSums:
		a.Sums = append(a.Sums, path)
	case isSig:
		a.Sigs = append(a.Sigs, path)
	case strings.HasSuffix(lower, ".zip"):
		a.Zips = append(a.Zips, path)
	case goreleaserReports[base] || hasPrefixFold(base, "terraform-provider-") && strings.HasSuffix(lower, "_manifest.json"):
		a.Skipped = append(a.Skipped, base)
	case strings.HasSuffix(lower, ".asc") || strings.HasSuffix(lower, ".id"):
		// The publisher's public key (or its ID) kept beside the release:
		// --signing-key names it to check the .sig; it is not pushed.
		a.Skipped = append(a.Skipped, base)
	case isZip(path):
		a.Zips = append(a.Zips, path)
	default:
		return backends.Usagef("%s: not a release zip, a SHA256SUMS or its .sig, nor one of goreleaser's other outputs (artifacts.json, metadata.json, config.yaml, CHANGELOG.md, terraform-provider-NAME_VERSION_manifest.json, build directories) or a public key (*.asc, *.id): leave it out of the SRC arguments", path)
	}
	return nil
}

// isZip reports whether the file starts as a zip does.
func isZip(path string) bool {
	f, err := regular.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }() // read only
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && bytes.Equal(magic, []byte("PK\x03\x04"))
}

// SkippedNote is the one line that names what a push skipped, or "".
func (a Args) SkippedNote() string {
	if len(a.Skipped) == 0 {
		return ""
	}
	return fmt.Sprintf("not pushed (goreleaser's other outputs, public keys): %s", strings.Join(a.Skipped, ", "))
}

func hasPrefixFold(s, prefix string) bool {
	_, ok := cutPrefixFold(s, prefix)
	return ok
}
