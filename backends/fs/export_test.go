package fs

// SetAfterStep makes m call f after each write of a Remove.
func SetAfterStep(m *Mirror, f func(what string)) { m.afterStep = f }
