package backends

import (
	"errors"
	"fmt"
	"testing"
)

// An OpError names its place and package once, however many layers say them.
func TestOpErrorStatesContextOnce(t *testing.T) {
	p, _ := ParseProvider("registry.terraform.io/hashicorp/null")
	v, _ := ParseVersion("3.2.1")
	pkg := Package{Provider: p, Version: v, Platform: Platform{OS: "linux", Arch: "amd64"}}
	inner := fmt.Errorf("mirror ./mirror: %s: open: %w", pkg, errors.New("permission denied"))
	for _, tc := range []struct {
		err  *OpError
		want string
	}{
		{&OpError{Op: "open", Side: "source", Place: "./mirror", Pkg: &pkg, Err: inner},
			"source: open: mirror ./mirror: registry.terraform.io/hashicorp/null 3.2.1 linux_amd64: open: permission denied"},
		{&OpError{Op: "open", Side: "source", Place: "./mirror", Pkg: &pkg, Err: errors.New("permission denied")},
			"source ./mirror: registry.terraform.io/hashicorp/null 3.2.1 linux_amd64: open: permission denied"},
		{&OpError{Op: "write index", Side: "destination", Place: "./m", Err: errors.New("disk full")},
			"destination ./m: write index: disk full"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
