package details

import (
	"strconv"

	"github.com/tfmirror/tfmirror/backends"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// ModulePlace is what one place holds of a module version.
type ModulePlace struct {
	Number   int
	Name     string
	Compared bool
	Mark     theme.Mark
	// Label names Mark as the modules view means it.
	Label string
	// Listing is the place's entry for the version; nil when it lacks it.
	Listing *modules.Listing
	// Err is why the place could not be listed.
	Err error
	// Note says why a place holds nothing of the module when that is not
	// obvious (a registry serving another host's modules).
	Note string
}

// ModuleVersion is the version under the modules table's cursor.
type ModuleVersion struct {
	Module  modules.Module
	Version string
	Places  []ModulePlace
	// Ref is the number of the place whose digest the others are compared
	// with (0: none states one).
	Ref int
}

// ShowModule shows a module version.
func (m *Model) ShowModule(v *ModuleVersion) {
	m.cell, m.job, m.mod = nil, nil, v
	m.about("module " + v.Module.String() + " " + v.Version)
}

// moduleLines says, per place, where the package lives: the registry's
// location, the oci://...?digest= address or the file, so it can be
// pasted into a configuration or checked by hand.
func (m Model) moduleLines() []string {
	s := m.styles
	v := m.mod
	lines := []string{s.Bold.Render(v.Version) + " " + s.Dim.Render(theme.Truncate(v.Module.Short(), max(1, m.w-len(v.Version)-1)))}
	names := make([]string, len(v.Places))
	for i, p := range v.Places {
		names[i] = p.Name
	}
	short := m.shortNames(names)
	for i, p := range v.Places {
		lines = append(lines, m.placeLines(place{p.Number, p.Name, short[i], p.Compared, p.Mark, p.Label, p.Err}, p.Listing != nil, "")...)
		if p.Err != nil {
			continue
		}
		if p.Listing == nil {
			if p.Note != "" {
				lines = append(lines, m.wrapStyled(s.Dim.Render, p.Note, 4)...)
			}
			continue
		}
		it := p.Listing
		// A registry's own spelling ("v1.2") is worth knowing: it is what a
		// configuration's version constraint met. Tags and file names
		// follow from the version.
		if it.Source != nil && it.Listed != "" && it.Listed != v.Version {
			lines = append(lines, "    "+s.Dim.Render("listed as "+it.Listed))
		}
		if it.Err != nil {
			lines = append(lines, m.wrapStyled(s.Bad.Render, "✗ no location: "+it.Err.Error(), 4)...)
			continue
		}
		if p.Mark == theme.MarkDiffers && v.Ref > 0 {
			lines = append(lines, "    "+s.Bad.Render("≠ digest differs from ["+strconv.Itoa(v.Ref)+"]'s"))
		}
		lines = append(lines, m.wrap(backends.PrintableLine(it.Location), 4)...)
		for _, prov := range moduleProvenance(*it) {
			lines = append(lines, m.wrap(prov, 4)...)
		}
	}
	return lines
}

// moduleProvenance is what a mirror keeps of where a package came from:
// its zip's sha256 and the git commit it was built from, a line each.
func moduleProvenance(it modules.Listing) []string {
	var out []string
	if it.SHA256 != "" {
		out = append(out, "sha256:"+it.SHA256)
	}
	if it.Revision != "" {
		out = append(out, "commit:"+it.Revision)
	}
	return out
}
