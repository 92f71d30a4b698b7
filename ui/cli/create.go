package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/place"
)

// offerToCreate asks, on a terminal, whether a directory given to the UI
// that does not exist yet should be created (as sync creates its DST), and
// creates it if so: the UI then opens with it as an empty mirror to copy
// into. Anything else keeps openErr, the usage error it was: no terminal to
// ask on, a path that exists but is no mirror, a name that looks like a
// mistyped command, or an answer other than yes.
func offerToCreate(ctx context.Context, env *Env, st streams, commandTypos func(string) []string, s place.Spec, num int, openErr error) (backends.Reader, error) {
	if _, err := os.Stat(s.Target); !errors.Is(err, os.ErrNotExist) || !st.isTerminal() {
		return nil, openErr
	}
	if len(commandTypos(s.Raw)) > 0 {
		return nil, openErr
	}
	fmt.Fprintf(st.stderr, "[%d] %s does not exist. Create it (an empty mirror)? [y/N] ", num, backends.Printable(s.Raw))
	answer, err := readLine(st.stdin)
	if err != nil || !strings.EqualFold(answer, "y") && !strings.EqualFold(answer, "yes") {
		return nil, openErr
	}
	o := env.placeOptions()
	o.Create = true
	r, err := place.Open(ctx, s.Raw, o)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return r, nil
}

// readLine reads one line, a byte at a time: what follows it is the UI's
// to read.
func readLine(in io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return strings.TrimSpace(b.String()), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			return strings.TrimSpace(b.String()), err
		}
	}
}

// mkdirFor makes the directory file is to be written in, and the missing
// ones above it; made lists those it made, deepest first.
func mkdirFor(file string) (made []string, err error) {
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			break
		}
		made = append(made, dir)
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if len(made) == 0 {
		return nil, nil
	}
	return made, os.MkdirAll(made[0], 0o755)
}

// removeMade removes the directories mkdirFor made, where they are still
// empty.
func removeMade(made []string) {
	for _, dir := range made {
		if os.Remove(dir) != nil {
			return
		}
	}
}
