package spec

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/hclinput"
)

// LoadPolicy reads a pull-through mirror's policy (`serve --upstream
// --spec FILE`): a spec whose provider blocks, allow and deny patterns,
// platforms and min_age say what may be pulled through. It has no
// destinations (the mirror's CACHE is where everything goes) and may name
// no provider at all (patterns alone, or only min_age). Its errors wrap
// backends.ErrUsage and name the file and line.
func LoadPolicy(path string) (*Spec, error) {
	src, err := hclinput.ReadFile(path)
	if err != nil {
		return nil, backends.Usagef("spec: %v", err)
	}
	p := &parser{file: path, dir: filepath.Dir(path), policy: true}
	s := p.parse(src)
	if err := p.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkPolicy refuses what a pull-through policy cannot honour.
func (p *parser) checkPolicy(s *Spec, r hcl.Range) {
	switch {
	case len(s.Destinations) > 0:
		p.errorf(r, "a pull-through policy has no destinations: everything lands in the CACHE given to serve; leave destinations out")
	case len(s.From) > 0:
		p.errorf(r, "a pull-through policy does not read configurations (from): name providers or allow patterns")
	}
	for _, m := range s.Modules {
		if m.Source != "registry://"+m.Addr.Host {
			p.errorf(r, "module %s (%s): a pull-through policy takes every module from its own registry; leave source out", m.Addr, m.At)
		}
	}
	for _, pr := range s.Providers {
		if pr.Source != "" {
			p.errorf(r, "provider %s (%s): a pull-through policy takes every provider from --upstream; leave source out", pr.Addr, pr.At)
		}
	}
}

// Denied says why the spec's allow and deny patterns leave p out, or "".
func (s *Spec) Denied(p backends.Provider) string { return s.denied(p) }

// minAge parses a duration: Go's ("72h", "90m") or whole days ("7d").
func (p *parser) minAge(s string, r hcl.Range) time.Duration {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return time.Duration(n) * 24 * time.Hour
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		p.errorf(r, `min_age %q: want a duration such as "72h", "90m" or "7d"`, s)
		return 0
	}
	return d
}
