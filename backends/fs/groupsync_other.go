//go:build !linux

package fs

import "os"

// groupFS reports false: group syncs are used only where syncfs(2) is
// known to make files durable and report errors (Linux).
func groupFS(dir string) (uint64, bool) { return 0, false }

func syncFS(f *os.File) error { return f.Sync() }

// fewDirtyPages is never asked where groupFS reports false.
func fewDirtyPages() bool { return false }
