package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/audit"
)

// trustHelp is the part of sync's and push's help about signatures.
const trustHelp = `Signatures: where the source keeps a version's provenance (an origin
registry's signed SHA256SUMS, its signature and key; a mirror tfmirror wrote
keeps them beside the archives), the signature is checked and each archive's
zh: against the signed line before it lands, and the provenance is written
into DST with the archives. --policy FILE pins the keys (fingerprints) that
may sign each provider (see README, "Provenance, trust policy and audit
log"); --require-signature refuses what has no valid signature, as
OPENTOFU_ENFORCE_GPG_VALIDATION=true does; OPENTOFU_ENFORCE_GPG_EXPIRATION=true
refuses expired keys. --audit FILE appends a JSON line per package that lands
or is refused.`

// trustFlags are the signature and audit flags of the commands that change
// mirrors.
type trustFlags struct {
	policy           string
	requireSignature bool
	audit            string
}

func (f *trustFlags) add(cmd *cobra.Command) {
	f.addPolicy(cmd)
	f.addAudit(cmd)
}

// addPolicy adds --policy and --require-signature alone (export, which
// changes no mirror, keeps no audit log).
func (f *trustFlags) addPolicy(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.policy, "policy", "", "a trust policy `FILE` (HCL): the key fingerprints that may sign each provider")
	fl.BoolVar(&f.requireSignature, "require-signature", false, "mirror nothing without a valid signature (as OPENTOFU_ENFORCE_GPG_VALIDATION=true)")
}

func (f *trustFlags) addAudit(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.audit, "audit", "", "append a JSON line per package changed to `FILE` (what, from where, hashes, signer, when)")
}

// trustPolicy is the policy the flags and OpenTofu's environment describe:
// nil-safe defaults when neither says anything.
func (f *trustFlags) trustPolicy() (*trust.Policy, error) {
	return loadTrustPolicy(f.policy, f.requireSignature)
}

// loadTrustPolicy is the trust policy a command applies: OpenTofu's
// environment (OPENTOFU_ENFORCE_GPG_VALIDATION, _EXPIRATION), then the
// policy file, if any, and --require-signature. import calls it with its
// own flags.
func loadTrustPolicy(file string, requireSignature bool) (*trust.Policy, error) {
	pol := trust.Defaults(os.Getenv)
	pol.RequireSignature = pol.RequireSignature || requireSignature
	if file == "" {
		return pol, nil
	}
	return trust.Load(file, pol)
}

// signatures are the signature rules of OpenTofu's environment, for
// commands that only read (verify, ls).
func signatures() provenance.Options {
	return trust.Defaults(os.Getenv).Signatures
}

// openAudit opens --audit's file for command, or returns nil without it.
func (f *trustFlags) openAudit(command string) (*audit.Log, error) {
	return openAuditLog(f.audit, command)
}

// openAuditLog opens the audit log at path for command (nil when path is
// empty); lines name this binary's version. import calls it.
func openAuditLog(path, command string) (*audit.Log, error) {
	if path == "" {
		return nil, nil
	}
	l, err := audit.Open(path, command, buildVersion())
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return l, nil
}

// withAudit is sink, and the audit log when there is one.
func withAudit(sink sync.Sink, l *audit.Log) sync.Sink {
	if l == nil {
		return sink
	}
	return sync.Sinks{sink, l}
}

// auditPrune records what a prune removed: who signed each removed package
// is read before the removal (its provenance goes with its version).
func auditPrune(ctx context.Context, l *audit.Log, dst backends.Remover, plan *sync.PrunePlan, prune func() sync.PruneResult) sync.PruneResult {
	if l == nil {
		return prune()
	}
	removing := plan.Removing()
	sigs := sync.Signatures(ctx, dst, removing, signatures())
	res := prune()
	for _, ev := range sync.RemovedEvents(dst, removing, sigs, res) {
		l.Show(ev)
	}
	return res
}
