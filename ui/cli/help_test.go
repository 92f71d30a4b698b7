package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestFlagTyposSuggestTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sync", "--lockk", "x"}, "did you mean --lock?"},
		{[]string{"sync", "--jsno"}, "did you mean --json?"},
		{[]string{"sync", "--dyr-run"}, "did you mean --dry-run?"},
		{[]string{"ls", "--plat", "x"}, "did you mean --platform?"},
		{[]string{"ls", "--ca-certs", "x"}, "did you mean --ca-cert?"}, // a global flag
		{[]string{"sync", "--zzzzzz"}, ""},
	} {
		cmd := newRootCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(c.args)
		code := exitCode(cmd, cmd.ExecuteContext(context.Background()))
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", c.args, code, exitUsage)
		}
		msg := out.String()
		if c.want == "" && strings.Contains(msg, "did you mean") || !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want %q", c.args, msg, c.want)
		}
	}
}

// Every command's help says how to call it before it explains: the usage line
// comes within the first few lines, the long text after the flags.
func TestHelpStartsWithUsage(t *testing.T) {
	root := newRootCmd()
	cmds := root.Commands()
	cmds = append(cmds, root)
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = append(cmds[1:], c.Commands()...)
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			continue
		}
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out.String(), "\n")
		usage := -1
		for i, l := range lines {
			if l == "Usage:" {
				usage = i
				break
			}
		}
		if usage < 0 || usage > 3 {
			t.Errorf("%s --help: Usage: at line %d, want within the first 4:\n%s", c.CommandPath(), usage, out.String())
			continue
		}
		if c.Long != "" && c.Short != "" {
			details, flags := strings.Index(out.String(), "\nDetails:\n"), strings.Index(out.String(), "\nFlags:\n")
			if details < 0 || details < flags {
				t.Errorf("%s --help: the long text is not after the flags under Details:", c.CommandPath())
			}
		}
	}
}
