package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// specFor loads the spec file at path and resolves it against its sources,
// returning what it wants of the destination written as dst; the spec's
// notes and problems are said on stderr. dst must be one of the spec's
// destinations.
func specFor(ctx context.Context, env *Env, st streams, path, dst string) (*spec.Spec, *spec.Wanted, spec.Destination, error) {
	s, err := spec.Load(path)
	if err != nil {
		return nil, nil, spec.Destination{}, err
	}
	open := func(ctx context.Context, arg string) (backends.Reader, error) {
		return openPlace(ctx, arg, env.placeOptions())
	}
	w, err := s.Wanted(ctx, open)
	if err != nil {
		return nil, nil, spec.Destination{}, err
	}
	d, ok := w.Destination(dst, samePlace)
	if !ok {
		return nil, nil, spec.Destination{}, usageErr("%s is not a destination of spec %s (its destinations: %s)", dst, path, strings.Join(s.Destinations, ", "))
	}
	for _, n := range w.Notes {
		st.tell("note: %s", n)
	}
	for _, p := range w.Problems {
		st.tell("warning: spec %s: %s", path, p.Detail)
	}
	return s, w, d, nil
}

// samePlace reports whether two place arguments name the same place:
// directories by their resolved paths, other places as written.
func samePlace(a, b string) bool {
	sa, errA := place.Parse(a)
	sb, errB := place.Parse(b)
	if errA != nil || errB != nil || sa.Kind != place.FS || sb.Kind != place.FS {
		return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
	}
	return resolvedPath(sa.Target) == resolvedPath(sb.Target)
}

func resolvedPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	if _, err := os.Stat(p); err != nil {
		return filepath.Clean(p)
	}
	return p
}
