package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/s3"
)

const publishLong = `Write the selected packages of PLACE into DEST as static files in the Provider
Network Mirror Protocol's layout, which a web server, or object storage with a
CDN in front, serves to terraform and tofu with no tfmirror process running:

  HOST/NAMESPACE/TYPE/index.json           the versions (short-lived)
  HOST/NAMESPACE/TYPE/VERSION.json         each version's archives and hashes
  HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip   (immutable)

DEST is a directory or s3://BUCKET[/PREFIX]. Publishing is sync with that
destination: every archive is verified as it lands, nothing unverified or half
written is ever listed, and a publish again copies only what DEST lacks and
rewrites only the documents of providers that changed.

Objects in s3:// carry what a CDN needs: Content-Type application/zip or
application/json, and Cache-Control "public, max-age=31536000, immutable" on
archives (a version's zip never changes; a different one under the same name
is a conflict, refused without --force), "public, max-age=N" on documents
(--index-max-age; 0 says no-cache). A directory's headers come from the web
server that serves it: docs/publish.md has an nginx configuration.

Clients use it as a network mirror:
  provider_installation { network_mirror { url = "https://cdn.example.com/providers/" } }`

const publishExample = `  tfmirror publish ./mirror ./site -p registry.terraform.io/hashicorp/aws --platform linux_amd64
  tfmirror publish registry://registry.terraform.io s3://providers-site -p hashicorp/null -v "~> 3.2" --s3-endpoint https://s3.internal:9000
  tfmirror publish ./mirror s3://providers-site/tf --index-max-age 5m --json`

// publishFlags are publish's options, bound to its flags: sync's, and how
// long caches may keep an s3:// DEST's index documents.
type publishFlags struct {
	sync   syncFlags
	maxAge time.Duration
}

func newPublishCmd(env *Env) *cobra.Command {
	var f publishFlags
	cmd := &cobra.Command{
		Use:     "publish PLACE DEST [selection]",
		Short:   "Write PLACE as static network-mirror files for a web server or object storage + CDN",
		Long:    publishLong + "\n\n" + trustHelp,
		Example: publishExample,
		Args:    exactArgs(2, "PLACE and DEST (a directory or s3://BUCKET[/PREFIX])"),
		RunE: func(cmd *cobra.Command, args []string) error {
			overlapSyscalls() // publishing lands files, as a sync does
			return runPublish(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sync.addRunFlags(cmd, env, "DEST", " (caches may keep the old ones for up to a year)")
	cmd.Flags().DurationVar(&f.maxAge, "index-max-age", time.Minute, "how long caches may keep an s3:// DEST's index documents (Cache-Control max-age)")
	f.sync.trust.add(cmd)
	return cmd
}

// runPublish syncs PLACE into DEST, a directory or a bucket a web server
// or object storage serves as it is.
func runPublish(ctx context.Context, env *Env, f *publishFlags, args []string, st streams) error {
	s, err := place.Parse(args[1])
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if s.Kind != place.FS && s.Kind != place.S3 {
		return usageErr("publish DEST %s: want a directory or s3://BUCKET[/PREFIX], which a web server or object storage serves as it is (to fill an OCI registry, use sync or push; to serve a place through tfmirror, use serve)", args[1])
	}
	if f.maxAge < 0 {
		return usageErr("--index-max-age %s: want a duration of 0 or more (0: caches ask again every time)", f.maxAge)
	}
	sf := f.sync
	sf.dstOptions = func(o *place.Options) { o.S3CacheControl = s3.PublishCacheControl(f.maxAge) }
	return syncProviders(ctx, env, &sf, args[0], args[1], st)
}
