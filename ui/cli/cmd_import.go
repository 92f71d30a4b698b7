package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/bundle"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/report"
)

const importLong = `Land a bundle written by tfmirror export in DST, any writable place (a
directory, oci://..., s3://...).

Everything is verified before anything lands: the bundle must be whole (its
manifest first, matching the SHA-256 its last entry records, and exactly the
files the manifest lists), every file must have the size and SHA-256 the
manifest states, every archive the h1: and zh: it states, the index documents
no other hash, and where the bundle holds a version's provenance its signature
must check and its signed SHA256SUMS list every archive's zh:. A damaged or
altered bundle is refused whole, saying what is wrong, and DST is left as it
was (exit 1).

--policy FILE and --require-signature apply the trust policy to every version
in the bundle, also before anything lands: a version signed by a key the
policy does not pin for its provider, or (with --require-signature) without a
valid signature, refuses the whole import, naming both keys.

Then the packages are synced into DST as tfmirror sync does (each archive
checked again as it streams, landed atomically, index documents written once
per provider, the provenance written beside them): an interrupted import
resumes where it stopped when run again, and packages DST already holds are
skipped. --audit FILE appends a JSON line per package that lands.`

const importExample = `  tfmirror import providers.tar ./mirror
  tfmirror import providers.tar oci://registry.corp/tf/'${namespace}/${type}'
  tfmirror import providers.tar ./mirror -p hashicorp/aws --platform linux_amd64`

type importFlags struct {
	sel           selectionFlags
	trust         trustFlags
	force, dryRun bool
	json          bool
	jobs          int
}

func newImportCmd(env *Env) *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:     "import BUNDLE DST [selection]",
		Short:   "Verify everything in a bundle, then land it in DST",
		Long:    importLong,
		Example: importExample,
		Args:    exactArgs(2, "BUNDLE and DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&f.dryRun, "dry-run", false, "verify the bundle and print the plan; change nothing")
	fl.BoolVar(&f.force, "force", false, "replace archives DST holds with different hashes")
	fl.BoolVar(&f.json, "json", false, `print one JSON event per line, each with a "type" field; the last is {"type":"summary",...} with "bundle", "verified" and "refused" (with --dry-run: the plan as a JSON array)`)
	jobsVar(fl, &f.jobs, engine.DefaultJobs(), "how many archives to transfer at once")
	f.trust.add(cmd)
	return cmd
}

// runImport verifies the whole bundle args[0] (the selection of it) and
// applies the trust policy to it, then syncs it into args[1].
func runImport(ctx context.Context, env *Env, f *importFlags, args []string, st streams) error {
	bundleArg, dstArg := args[0], args[1]
	s, err := f.sel.selection()
	if err != nil {
		return err
	}
	sp, err := place.Discover(ctx, bundleArg)
	if err != nil || sp.Kind != place.Bundle {
		return usageErr("import: %s is not a bundle: give the .tar file tfmirror export wrote", bundleArg)
	}
	// What a killed export of this bundle left beside it goes.
	bundle.SweepStaging(sp.Target)
	if _, err := place.Parse(dstArg); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	pol, err := f.trust.trustPolicy()
	if err != nil {
		return err
	}
	src, err := openPlace(ctx, bundleArg, env.placeOptions())
	if err != nil {
		return err
	}
	findings, err := sync.VerifyPlaceWith(ctx, src, s, sync.VerifyOptions{Hashing: env.hashing(), Signatures: pol.Signatures})
	if err != nil {
		return err
	}
	if err := refused(st, append(findings, admitted(ctx, src, findings, pol)...), bundleArg, dstArg, f.json); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "%s: verified %s\n", bundleArg, verifiedSummary(findings))
	dst, err := place.OpenWriter(ctx, dstArg, env.placeOptions())
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	plan, err := sync.MakePlan(ctx, src, dst, s, sync.PlanOptions{Hashing: env.hashing(), Trust: pol})
	if err != nil {
		return err
	}
	if f.dryRun {
		return report.Findings(st.stdout, plan.Findings(), f.json)
	}
	aud, err := f.trust.openAudit("import")
	if err != nil {
		return err
	}
	rep := env.syncReporter(st, f.json, false)
	sum := sync.Sync(ctx, env.engine(ctx, f.jobs), dst, f.force, withAudit(rep, aud), plan)
	rep.FinishWith(sum, map[string]any{"bundle": bundleArg, "verified": len(findings), "refused": []report.FindingJSON{}})
	return st.closeAudit(aud, summaryErr(ctx, sum))
}

// admitted applies the trust policy to each version the findings are
// about whose archives all verified: a refused version is an error finding
// that says why (both keys, where a pinned key did not sign it).
func admitted(ctx context.Context, src backends.Reader, findings []sync.Finding, pol *trust.Policy) []sync.Finding {
	verified := map[string]bool{}
	var versions []backends.Package
	for _, f := range findings {
		if f.Package.Version == nil {
			continue
		}
		key := f.Package.Provider.String() + " " + f.Package.Version.String()
		ok, seen := verified[key]
		if !seen {
			versions = append(versions, backends.Package{Provider: f.Package.Provider, Version: f.Package.Version})
			ok = true
		}
		verified[key] = ok && f.Status == sync.StatusOK
	}
	var out []sync.Finding
	for _, pv := range versions {
		if !verified[pv.Provider.String()+" "+pv.Version.String()] {
			continue // its findings say what is wrong already
		}
		if _, err := sync.CheckProvenance(ctx, src, pv.Provider, pv.Version, pol); err != nil {
			out = append(out, sync.Finding{Package: pv, Status: sync.StatusError, Detail: err.Error()})
		}
	}
	return out
}

// refused reports the findings that are not ok, and that nothing landed.
func refused(st streams, findings []sync.Finding, bundleArg, dstArg string, asJSON bool) error {
	var bad []sync.Finding
	for _, f := range findings {
		if f.Status != sync.StatusOK {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	if asJSON {
		// Nothing ran: the summary alone, saying why.
		b, err := json.Marshal(map[string]any{"type": "summary", "bundle": bundleArg, "dst": dstArg, "ok": false,
			"done": 0, "verified": len(findings) - len(bad), "refused": report.FindingsJSON(bad)})
		if err != nil {
			return err
		}
		fmt.Fprintf(st.stdout, "%s\n", b)
	} else if err := report.Findings(st.stdout, bad, false); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "%s: refused: %s; nothing was imported into %s\n", bundleArg, report.Summary(bad), dstArg)
	return errProblem
}

// verifiedSummary says what the verification checked.
func verifiedSummary(findings []sync.Finding) string {
	signed, signers := 0, map[string]bool{}
	for _, f := range findings {
		if f.Signer != nil {
			signed++
			signers[f.Signer.String()] = true
		}
	}
	s := fmt.Sprintf("%d archives: h1: and zh: match the manifest", len(findings))
	if signed > 0 {
		var names []string
		for n := range signers {
			names = append(names, n)
		}
		sort.Strings(names)
		s += fmt.Sprintf("; %d match their signed SHA256SUMS (%s)", signed, strings.Join(names, "; "))
	}
	return s
}
