package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// Which flag fixes an error is the command line's to say, whatever layer
// the error comes from.
func TestAdvice(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("mirror ./m: pkg: %w (has zh:a, incoming zh:b)", backends.ErrConflict), "; use --force to replace it"},
		{fmt.Errorf("zip entry \"x\": %w", hashing.ErrTooLarge), "raise the limit with --max-unpacked"},
		{fmt.Errorf("mirror https://m/: %w", backends.ErrNoCatalogue), "--provider (HOST/NAMESPACE/TYPE) or --lock"},
		{fmt.Errorf("connection refused"), ""},
	} {
		got := Advised(tc.err)
		if tc.want == "" && got != tc.err.Error() || tc.want != "" && got != tc.err.Error()+"; "+Advice(tc.err) {
			t.Errorf("Advised(%v) = %q", tc.err, got)
		}
		if tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("Advised(%v) = %q, want %q in it", tc.err, got, tc.want)
		}
	}
}
