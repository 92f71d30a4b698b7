package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Audit checks p's files other than its archives (which verify hashes as
// it reads them) against the manifest: the index documents' bytes and the
// hashes they state, and the provenance of each version: its signature,
// and a signed line for every platform the bundle holds.
func (b *Bundle) Audit(ctx context.Context, p backends.Provider) []backends.Problem {
	f, err := regular.Open(b.file)
	if err != nil {
		return []backends.Problem{{Package: backends.Package{Provider: p}, Detail: fmt.Sprintf("bundle %s: %v", b.name, err)}}
	}
	defer func() { _ = f.Close() }() // read only
	var out []backends.Problem
	dir := ProviderDir(p) + "/"
	for _, fl := range b.manifest.Files {
		k, _ := classify(fl.Path)
		if !strings.HasPrefix(fl.Path, dir) || k.what == kindArchive || k.what == kindProvenance {
			continue
		}
		raw, err := b.readChecked(f, fl.Path, maxDocument)
		if err == nil && k.what == kindVersionDoc {
			err = b.checkVersionDoc(p, k.version, fl.Path, raw)
		}
		if err != nil {
			out = append(out, backends.Problem{Package: backends.Package{Provider: p}, Detail: err.Error()})
		}
	}
	for _, v := range b.versions[p] {
		out = append(out, b.auditProvenance(p, v)...)
	}
	return out
}

// checkVersionDoc checks that a VERSION.json states, for each archive, no
// hash the manifest does not.
func (b *Bundle) checkVersionDoc(p backends.Provider, version, name string, raw []byte) error {
	var doc struct {
		Archives map[string]struct {
			Hashes []string `json:"hashes"`
		} `json:"archives"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return b.damaged("%s: %v", name, err)
	}
	stated := map[string]map[string]bool{}
	for _, a := range b.archives[p][version] {
		stated[a.Platform.String()] = map[string]bool{}
		for _, h := range a.Hashes() {
			stated[a.Platform.String()][string(h)] = true
		}
	}
	for plat, ad := range doc.Archives {
		for _, h := range ad.Hashes {
			if !stated[plat][h] {
				return b.damaged("%s states %s for %s, which the manifest does not", name, h, plat)
			}
		}
	}
	return nil
}

// auditProvenance reports a version's provenance that does not check, and
// its platforms the signed SHA256SUMS has no line for.
func (b *Bundle) auditProvenance(p backends.Provider, v backends.Version) []backends.Problem {
	s := b.provs[versionKey{p, v.String()}]
	if s == nil {
		return nil
	}
	pkg := backends.Package{Provider: p, Version: v}
	if s.err != nil {
		return []backends.Problem{{Package: pkg, Detail: fmt.Sprintf("bundle %s: %s %s: provenance: %v", b.name, p, v, s.err)}}
	}
	var out []backends.Problem
	for _, a := range b.archives[p][v.String()] {
		if _, err := s.prov.ZipHashes(a.Platform.String()); err != nil {
			out = append(out, backends.Problem{Package: a.Package, Detail: fmt.Sprintf("bundle %s: %v", b.name, err)})
		}
	}
	return out
}
