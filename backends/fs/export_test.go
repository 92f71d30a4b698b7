package fs

// SetAfterStep makes m call f after each write of a Remove.
func SetAfterStep(m *Mirror, f func(what string)) { m.afterStep = f }

// NameStagingFiles makes m stage every archive under a name, as it does
// where unnamed files (O_TMPFILE) are not supported.
func NameStagingFiles(m *Mirror) { m.named.Store(true) }
