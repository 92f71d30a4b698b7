package push

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

// ReleaseOptions say how a release's files open into a place: which
// provider its zips are (the zips' names give only the type) and the keys
// that check its SHA256SUMS.sig.
type ReleaseOptions struct {
	// Naming is what --provider, --version and --platform say.
	Naming Naming
	// SigningKeys are the --signing-key files (ASCII-armored public keys).
	SigningKeys []string
	// Signatures says how signatures are checked (key expiry).
	Signatures provenance.Options
}

// OpenRelease opens the release files a sorted: the zips as one read-only
// place (Zips) with the SHA256SUMS given beside them, their .sig checked
// with the signing keys. notes say what was not checked or not used. With
// signing keys, every zip must be listed by a SHA256SUMS whose .sig is
// given: a zip that no signature covers is an error naming it, so nothing
// goes on unsigned where a signed release was asked for. Without zips it
// returns nil (a SHA256SUMS alone is a usage error).
func OpenRelease(ctx context.Context, a Args, o ReleaseOptions) (z *Zips, notes []string, err error) {
	if note := a.SkippedNote(); note != "" {
		notes = append(notes, note)
	}
	sums, sumNotes, err := checkedSums(a, o)
	notes = append(notes, sumNotes...)
	if err != nil || len(a.Zips) == 0 {
		return nil, notes, err
	}
	files, err := Identify(a.Zips, o.Naming)
	if err != nil {
		return nil, notes, backends.Usagef("%v", err)
	}
	if z, err = NewZips(ctx, files, sums); err != nil {
		return nil, notes, err
	}
	if len(o.SigningKeys) > 0 {
		if unsigned := z.Unsigned(); len(unsigned) > 0 {
			return nil, notes, fmt.Errorf("--signing-key was given, and no signature it checked covers %s: nothing is pushed unsigned where a signed release is asked for; give the SHA256SUMS and .sig of its release beside it, or leave it out", strings.Join(unsigned, ", "))
		}
	}
	return z, notes, nil
}

// Unsigned returns the paths of the zips that no SHA256SUMS with a
// checked .sig lists: pushed, they would carry no signature.
func (z *Zips) Unsigned() []string {
	var out []string
	for _, f := range z.files {
		if !slices.ContainsFunc(z.sums, func(sf SumsFile) bool { return sf.sig != nil && sf.lists(f) }) {
			out = append(out, f.Path)
		}
	}
	return out
}

// checkedSums reads the SHA256SUMS files (goreleaser's
// terraform-provider-NAME_VERSION_SHA256SUMS) and checks the signature
// beside each with the signing keys; without a key a signature is noted
// as not checked.
func checkedSums(a Args, o ReleaseOptions) ([]SumsFile, []string, error) {
	var notes []string
	keys, err := ReadSigningKeys(o.SigningKeys)
	if err != nil {
		return nil, nil, backends.Usagef("%v", err)
	}
	sums := make([]SumsFile, 0, len(a.Sums))
	for _, p := range a.Sums {
		sf, err := ReadSums(p)
		if err != nil {
			return nil, nil, backends.Usagef("%v", err)
		}
		sums = append(sums, sf)
	}
	if len(sums) > 0 && len(a.Zips) == 0 {
		return nil, nil, backends.Usagef("%s states the sums of zips, but no zip is given beside it", sums[0].Path)
	}
	if len(keys) > 0 && len(a.Sigs) == 0 {
		return nil, nil, backends.Usagef("--signing-key checks a release's SHA256SUMS.sig, and none is given: keep it beside its SHA256SUMS (goreleaser's dist/ has it), or leave --signing-key out to copy the release unsigned")
	}
	for _, sig := range a.Sigs {
		i := slices.IndexFunc(sums, func(sf SumsFile) bool { return filepath.Clean(sf.Path+".sig") == filepath.Clean(sig) })
		switch {
		case i < 0:
			return nil, nil, backends.Usagef("%s is the signature of %s, which is not among the SRC arguments: give both, or neither", sig, strings.TrimSuffix(sig, ".sig"))
		case len(keys) == 0:
			notes = append(notes, fmt.Sprintf("%s is not checked: pass the release's public key with --signing-key FILE to check it and keep the signature in the registry; the zips are checked against the SHA256SUMS lines", sig))
		default:
			if err := sums[i].CheckSignature(sig, keys, o.Signatures); err != nil {
				return nil, nil, backends.Usagef("%v", err)
			}
			if note := sums[i].ExpiredNote(); note != "" {
				notes = append(notes, note)
			}
		}
	}
	return sums, notes, nil
}

// IsReleaseDir reports whether dir is a release directory: goreleaser's
// dist/, or a directory of terraform-provider-TYPE_VERSION_OS_ARCH.zip
// with their SHA256SUMS at its top and no mirror layout (a filesystem
// mirror keeps its zips three levels down and lists providers).
func IsReleaseDir(ctx context.Context, dir string) bool {
	_, ok, _ := distEntries(ctx, dir)
	return ok
}

// OpenReleaseDir opens a release directory as a read-only place: its zips,
// named by o.Naming's provider (a zip's name gives only its type), their
// SHA256SUMS and its .sig checked with o.SigningKeys as push checks them.
// Its notes are the place's warnings (a signature not checked, a key past
// its expiry). Without a provider it is a usage error saying to name one.
// name is the place as the user wrote it, for messages.
func OpenReleaseDir(ctx context.Context, name, dir string, o ReleaseOptions) (*Zips, error) {
	if len(o.Naming.Providers) == 0 {
		return nil, backends.Usagef("%s is a release directory (release zips and their SHA256SUMS at its top): name its provider with -p HOST/NAMESPACE/TYPE, e.g. -p registry.opentofu.org/acme/alpha (a zip's name gives only its type)", name)
	}
	a, err := Classify(ctx, []string{dir}, o.SigningKeys...)
	switch {
	case err != nil:
		return nil, err
	case len(a.Places) > 0 || len(a.Zips) == 0:
		return nil, backends.Usagef("%s: not a release directory (release zips and their SHA256SUMS at its top)", name)
	}
	a.Skipped = nil // a place is read, not pushed: nothing to say of them
	z, notes, err := OpenRelease(ctx, a, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, sf := range z.sums {
		if sf.sig != nil && sf.sig.err != nil {
			// Nothing of its versions is copied (Provenance says why);
			// said at once, not first when a copy fails.
			notes = append(notes, fmt.Sprintf("not copied: %v", sf.sig.err))
		}
	}
	z.name, z.warnings = name, notes
	return z, nil
}

// Warnings are what opening a release directory noted.
func (z *Zips) Warnings() []string { return z.warnings }
