package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

const pushLong = `Push provider release zips into an OCI registry in the layout OpenTofu's
oci_mirror installation method reads, then print the provider_installation
block to paste into the OpenTofu CLI configuration.

SRC is a release zip (goreleaser's terraform-provider-NAME_1.2.3_linux_amd64.zip)
or a place (a filesystem mirror directory, https://, registry://, oci://), of
which every selected archive is pushed. OCI_DST is oci://REGISTRY[:PORT]/TEMPLATE,
the oci_mirror repository_template: ${hostname}, ${namespace} and ${type} stand
for the provider's address (quote it in the shell).

Zips: a zip's name gives only the provider's type, so name the provider with
--provider HOSTNAME/NAMESPACE/TYPE, the full address (e.g.
registry.opentofu.org/acme/widget): a zip says nothing of its host, so
NAMESPACE/TYPE alone is refused. Version and platform come
from the standard file name; for other names give an exact --version and one
--platform. With a place as SRC, --provider, --version and --platform select.

A goreleaser release: give its dist/ directory, or dist/* (the shell's
list of it). A directory with a SHA256SUMS and release zips at its top and
no mirror layout is taken as goreleaser's dist (a filesystem mirror stays a
mirror). Its zips are pushed; the SHA256SUMS and its .sig are used as below;
goreleaser's other outputs (artifacts.json, metadata.json, config.yaml,
CHANGELOG.md, terraform-provider-NAME_VERSION_manifest.json and the
per-platform build directories holding the bare executable) and the
publisher's public key kept beside them (*.asc, *.id, or the --signing-key
file) are named in one note and not pushed; any other file is an error
naming it (exit 2). The same directory is a read-only place for every
other command (ls, verify, diff, sync, ui) with -p and --signing-key.

SHA256SUMS: give the release's SHA256SUMS among the SRC arguments (goreleaser's
terraform-provider-NAME_VERSION_SHA256SUMS) and each zip is uploaded straight
from the file under the digest its line states, without being read first:
the registry computes the digest of what it receives and refuses a mismatch,
which push reports as an integrity error naming the zip, the stated and the
actual hash (exit 1; nothing is listed for that zip). A zip of the release
the file does not list is an error.

Without SHA256SUMS each zip is read once for its zh: (the layer's digest),
then uploaded from the file. A mirror as SRC whose index states zh: is pushed
like zips with SHA256SUMS; h1: is computed only where some evidence needs it
(a mirror stating only h1:) or with --hashes all, which reads every zip and
inflates every entry (checking its CRC-32). A blob the registry already holds
is not uploaded again. Each platform becomes an image manifest holding the zip as its
single archive/zip layer; each version an image index tagged with the version
("+" written as "_"). Platforms already in the registry are kept; a platform
already there with the same zip is skipped without uploading, one with a
different zip is refused unless --force.

Signature: --signing-key FILE (the release's ASCII-armored public key, as
its publisher gives it to the registry; repeatable, or a keyring) checks the
SHA256SUMS.sig given beside it. A signature that does not check refuses the
release (exit 1, naming the SHA256SUMS and the keys' fingerprints); one that
does is kept in the registry with the archives as a sync from an origin
registry keeps it, so verify, ls and export name the signer; --policy and
--require-signature apply to it as below. With --signing-key every zip
pushed must be listed in a SHA256SUMS whose .sig it checked: a zip no
checked signature covers (an extra version left in dist/) refuses the push,
naming it (exit 1, nothing pushed). Without --signing-key the .sig is not
checked (a note says so).

Credentials are those docker and podman use (docker login / podman login, their
credential helpers). --plain-http talks HTTP to local registries; --insecure
skips TLS verification; --ca-cert trusts an extra CA. Exits 1 when any archive
failed.`

const pushExample = `  tfmirror push -p registry.opentofu.org/acme/alpha --signing-key acme.asc dist/* 'oci://registry.example.com/providers/${namespace}/${type}'
  tfmirror push --provider registry.opentofu.org/acme/alpha dist/*.zip dist/*_SHA256SUMS 'oci://registry.example.com/providers/${namespace}/${type}'
  tfmirror push -p example.com/acme/alpha terraform-provider-alpha_1.2.3_linux_amd64.zip 'oci://localhost:5000/${hostname}/${namespace}/${type}' --plain-http
  tfmirror push ./mirror 'oci://registry.example.com/providers/${namespace}/${type}' -p hashicorp/aws -v "~> 5.0" --json`

// pushFlags are push's own flags.
type pushFlags struct {
	sel           selectionFlags
	trust         trustFlags
	asJSON, force bool
	jobs          int
}

func newPushCmd(env *Env) *cobra.Command {
	var f pushFlags
	cmd := &cobra.Command{
		Use:     "push SRC... OCI_DST [selection]",
		Short:   "Push release zips, or a mirror's archives, into an OCI registry for OpenTofu's oci_mirror",
		Long:    pushLong + "\n\n" + trustHelp,
		Example: pushExample,
		Args:    minArgs(2, "SRC... and OCI_DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPush(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	fl := cmd.Flags()
	env.addHashesFlag(cmd, "in the index documents")
	fl.BoolVar(&f.asJSON, "json", false, `print one JSON event per line, each with a "type" field; the last is {"type":"summary",...}`)
	fl.BoolVar(&f.force, "force", false, "replace platforms the registry holds with a different zip")
	jobsVar(fl, &f.jobs, engine.DefaultJobs(), "how many archives to push at once")
	f.trust.add(cmd)
	return cmd
}

// runPush plans every source (args but the last) against the OCI
// destination (the last), runs the plans as one run, and prints the
// oci_mirror block for the providers it holds.
func runPush(ctx context.Context, env *Env, f *pushFlags, args []string, st streams) error {
	srcArgs, dstArg := args[:len(args)-1], args[len(args)-1]
	s, err := f.sel.selection()
	if err != nil {
		return err
	}
	if spec, err := place.Parse(dstArg); errors.Is(err, backends.ErrUsage) && strings.HasPrefix(dstArg, "oci://") {
		return usageErr("push: %v", err) // an oci:// the shell mangled: what was meant
	} else if err != nil || spec.Kind != place.OCI {
		return usageErr("push: the last argument must be oci://REGISTRY[:PORT]/TEMPLATE, not %q", dstArg)
	}
	dst, err := place.OpenWriter(ctx, dstArg, env.placeOptions())
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	mirror, ok := dst.(*oci.Mirror)
	if !ok {
		return usageErr("push: %s is not an OCI mirror", dstArg)
	}
	pol, err := f.trust.trustPolicy()
	if err != nil {
		return err
	}
	srcs, notes, err := pushSources(ctx, env, f, s, pol, srcArgs)
	if err != nil {
		return err
	}
	var plans []*sync.Plan
	for _, src := range srcs {
		plan, err := sync.MakePlan(ctx, src, dst, s, sync.PlanOptions{Hashing: env.hashing(), Trust: pol})
		st.warnings(src)
		if err != nil {
			return err
		}
		plans = append(plans, plan)
	}
	// The release's notes once the plans stand: a usage error comes alone.
	for _, n := range notes {
		fmt.Fprintf(st.stderr, "note: %s\n", n)
	}
	aud, err := f.trust.openAudit("push")
	if err != nil {
		return err
	}
	eng := env.engine(ctx, f.jobs)
	rep := env.syncReporter(st, f.asJSON, true)
	sum := sync.Sync(ctx, eng, dst, f.force, withAudit(rep, aud), plans...)
	st.warnings(dst)
	printMirrorConfig(st, mirror, sum.Held, f.asJSON)
	rep.Finish(sum)
	return st.closeAudit(aud, summaryErr(ctx, sum))
}

// printMirrorConfig prints the provider_installation block that installs
// providers (sorted) from the OCI mirror.
func printMirrorConfig(st streams, mirror *oci.Mirror, providers []backends.Provider, asJSON bool) {
	if len(providers) == 0 {
		return
	}
	block, notes := mirror.ClientConfig(providers)
	if asJSON {
		var include []string
		for _, p := range providers {
			include = append(include, p.String())
		}
		b, _ := json.Marshal(map[string]any{"type": "oci_mirror_config", "repository_template": mirror.Template().String(), "include": include, "config": block, "notes": notes})
		fmt.Fprintf(st.stdout, "%s\n", b)
		return
	}
	fmt.Fprintf(st.stdout, "\nAdd to the OpenTofu CLI configuration (~/.tofurc, or the file TF_CLI_CONFIG_FILE names):\n\n%s", block)
	for _, n := range notes {
		fmt.Fprintf(st.stderr, "note: %s\n", n)
	}
}

// pushSources opens push's SRC arguments (push.Classify sorts them, and
// opens a goreleaser dist directory into its files): places (directories
// and URLs) as they are, and every zip file together as one place, with
// the SHA256SUMS given beside them and their checked signatures
// (push.OpenRelease).
func pushSources(ctx context.Context, env *Env, f *pushFlags, s sync.Selection, pol *trust.Policy, args []string) ([]backends.Reader, []string, error) {
	a, err := push.Classify(ctx, args, f.sel.signingKeys...)
	if err != nil {
		return nil, nil, fmt.Errorf("push: %w", err)
	}
	var srcs []backends.Reader
	for _, p := range a.Places {
		r, err := openPlace(ctx, p, env.placeOptions())
		if err != nil {
			return nil, nil, err
		}
		srcs = append(srcs, r)
	}
	naming := push.Naming{Providers: s.Providers, Version: f.sel.version}
	if len(f.sel.platforms) == 1 {
		naming.Platform = f.sel.platforms[0]
	}
	zips, notes, err := push.OpenRelease(ctx, a, push.ReleaseOptions{Naming: naming, SigningKeys: f.sel.signingKeys, Signatures: pol.Signatures})
	if err != nil {
		return nil, nil, fmt.Errorf("push: %w", err)
	}
	if zips == nil {
		return srcs, notes, nil
	}
	return append([]backends.Reader{zips}, srcs...), notes, nil
}
