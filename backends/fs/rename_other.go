//go:build !linux

package fs

// renameNoReplace renames oldpath to newpath unless newpath exists. An
// error for an existing newpath matches os.ErrExist.
func renameNoReplace(oldpath, newpath string) error {
	return renameNoReplaceFallback(oldpath, newpath)
}
