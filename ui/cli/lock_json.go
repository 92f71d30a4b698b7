package cli

import (
	"encoding/json"
	"fmt"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/report"
)

// lockOut is what lock reports on stdout: the hashes added, as lines of
// text, or with --json one {"type":"lock_file"} object per lock file and a
// {"type":"summary"} line last.
type lockOut struct {
	json bool
	// counts of lock files by outcome, and of hashes added
	files, written, unchanged, dryRun, failed, added int
}

// lockFileJSON is one lock file's line of lock --json.
type lockFileJSON struct {
	Type      string               `json:"type"`
	Path      string               `json:"path"`
	Status    string               `json:"status"` // written, unchanged, dry_run, not_changed
	Added     int                  `json:"added"`
	Providers []lockProviderJSON   `json:"providers"`
	Problems  []report.FindingJSON `json:"problems,omitempty"`
	Error     string               `json:"error,omitempty"`
}

type lockProviderJSON struct {
	Provider   string         `json:"provider"`
	Version    string         `json:"version"`
	OldVersion string         `json:"old_version,omitempty"`
	New        bool           `json:"new"`
	Added      []lockHashJSON `json:"added"`
	// Platforms locked (--platform's or those the lock is about); of
	// them, those assumed and those locked without an h1:.
	Platforms []string `json:"platforms"`
	Assumed   []string `json:"assumed,omitempty"`
	NoH1      []string `json:"no_h1,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

type lockHashJSON struct {
	Hash     string `json:"hash"`
	Platform string `json:"platform,omitempty"`
}

// updated reports what was added to the lock file at path, and how it ended.
func (o *lockOut) updated(st streams, path, place, status string, updates []lockcheck.LockUpdate) {
	n := 0
	if !o.json {
		n = report.LockUpdates(st.stdout, updates)
	}
	providers := []lockProviderJSON{}
	for _, u := range updates {
		p := lockProviderJSON{Provider: u.Provider.String(), Version: u.Version.String(), New: u.New, Added: []lockHashJSON{},
			Platforms: backends.PlatformStrings(u.Platforms), Assumed: backends.PlatformStrings(u.Assumed), NoH1: backends.PlatformStrings(u.NoH1),
			Notes: u.Notes(), Warnings: u.Warnings(place)}
		if u.OldVersion != nil {
			p.OldVersion = u.OldVersion.String()
		}
		for _, h := range u.Added {
			lh := lockHashJSON{Hash: string(h.Hash)}
			if h.Platform != (backends.Platform{}) {
				lh.Platform = h.Platform.String()
			}
			p.Added = append(p.Added, lh)
		}
		if o.json {
			n += len(u.Added)
		}
		providers = append(providers, p)
	}
	if status != "written" {
		n = 0 // nothing was added to the file itself
	}
	o.count(status, n)
	o.line(st, lockFileJSON{Type: "lock_file", Path: path, Status: status, Added: n, Providers: providers})
}

// notChanged reports a lock file left alone: the problems found, or why.
func (o *lockOut) notChanged(st streams, path string, problems []sync.Finding, err error) error {
	o.count("not_changed", 0)
	if !o.json {
		if len(problems) > 0 {
			return report.Findings(st.stdout, problems, false)
		}
		return nil
	}
	l := lockFileJSON{Type: "lock_file", Path: path, Status: "not_changed", Providers: []lockProviderJSON{}, Problems: report.FindingsJSON(problems)}
	if err != nil {
		l.Error = err.Error()
	}
	o.line(st, l)
	return nil
}

func (o *lockOut) count(status string, added int) {
	o.files++
	o.added += added
	switch status {
	case "written":
		o.written++
	case "unchanged":
		o.unchanged++
	case "dry_run":
		o.dryRun++
	default:
		o.failed++
	}
}

func (o *lockOut) line(st streams, v any) {
	if !o.json {
		return
	}
	b, _ := json.Marshal(v)
	fmt.Fprintf(st.stdout, "%s\n", b)
}

// summary is lock --json's last line.
func (o *lockOut) summary(st streams) {
	o.line(st, map[string]any{"type": "summary", "files": o.files, "written": o.written, "unchanged": o.unchanged,
		"dry_run": o.dryRun, "not_changed": o.failed, "hashes_added": o.added, "ok": o.failed == 0})
}
