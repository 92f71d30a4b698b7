package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
)

// platformTypo is a --platform written otherwise than the clients name
// platforms (Linux_AMD64, linux_x86_64): a usage error that says what was
// meant and, once the command's place has been asked, what it holds.
type platformTypo struct {
	given string
	want  backends.Platform
	sel   sync.Selection // the rest of the selection
	holds string         // "PLACE holds linux_amd64, darwin_arm64"
}

func (e *platformTypo) Error() string {
	msg := fmt.Sprintf("--platform %s: did you mean %s?", e.given, e.want)
	if e.holds != "" {
		msg += " " + e.holds
	}
	return msg + " (platforms are lowercase OS_ARCH, as the clients and Go name them)"
}

// platformsWait bounds how long a --platform typo's message waits for the
// place to say what it holds; past it the message goes without.
const platformsWait = 10 * time.Second

// explainPlatform adds to a --platform typo what the place the command was
// given (its first argument) holds, for the rest of the selection.
func explainPlatform(ctx context.Context, env *Env, ran *cobra.Command, err error) {
	var pt *platformTypo
	if ran == nil || !errors.As(err, &pt) || len(ran.Flags().Args()) == 0 {
		return
	}
	arg := ran.Flags().Args()[0]
	if sp, err := place.Parse(arg); err != nil || sp.Kind == place.Registry && pt.sel.Versions.IsZero() {
		return // a registry without --version would be read whole
	}
	ctx, cancel := context.WithTimeout(ctx, platformsWait)
	defer cancel()
	r, err := place.Open(ctx, arg, env.placeOptions())
	if err != nil {
		return
	}
	as, _ := pt.sel.Resolve(ctx, r)
	var plats []string
	for _, a := range as {
		if p := a.Platform.String(); !slices.Contains(plats, p) {
			plats = append(plats, p)
		}
	}
	slices.Sort(plats)
	switch {
	case len(plats) > 0:
		pt.holds = fmt.Sprintf("%s holds %s.", backends.Printable(arg), strings.Join(plats, ", "))
	case ctx.Err() == nil && len(as) == 0:
		pt.holds = fmt.Sprintf("%s holds no archive the rest of the selection selects.", backends.Printable(arg))
	}
}
