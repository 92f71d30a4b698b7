package hashing

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoExecutable: a release zip holds no executable of the provider it
// is said to be (terraform-provider-TYPE, maybe with a _vVERSION or .exe
// suffix, at its root), which the clients need to install it: another
// provider's zip, or no provider at all.
var ErrNoExecutable = errors.New("the zip holds no executable of the provider")

// CheckExecutable reads the central directory of the zip at path and
// reports whether it holds, at its root, the executable of the provider
// of type typ: terraform-provider-TYPE, terraform-provider-TYPE_vVERSION
// or either with .exe, as OpenTofu and Terraform look for it. Only the
// central directory is read, nothing is inflated.
func CheckExecutable(path, typ string) error {
	r, err := OpenZip(path)
	if err != nil {
		return &ZipError{Path: path, Err: err}
	}
	defer func() { _ = r.Close() }() // read only
	prefix := "terraform-provider-" + strings.ToLower(typ)
	for _, e := range r.File {
		if HasExecutable(e.Name, e.FileInfo().IsDir(), prefix) {
			return nil
		}
	}
	return fmt.Errorf("%w: no %s at its root (is it the release zip of another provider?)", ErrNoExecutable, prefix)
}

// HasExecutable reports whether a zip entry is the executable whose name
// starts with prefix (terraform-provider-TYPE): the name alone, or
// followed by _SOMETHING or .SOMETHING, at the zip's root.
func HasExecutable(name string, isDir bool, prefix string) bool {
	if isDir || strings.Contains(name, "/") || !strings.HasPrefix(strings.ToLower(name), prefix) {
		return false
	}
	rest := name[len(prefix):]
	return rest == "" || rest[0] == '_' || rest[0] == '.'
}
