package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends/place"
)

// redirectFlags are serve's --redirect and --redirect-ttl.
type redirectFlags struct {
	on  bool
	ttl time.Duration
}

func (f *redirectFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.on, "redirect", false, "answer a request for a zip an s3:// PLACE (or CACHE) holds with a redirect to a presigned URL of its object: the bytes flow from the store, the documents from tfmirror")
	fl.DurationVar(&f.ttl, "redirect-ttl", 5*time.Minute, "how long a presigned URL of --redirect is valid (a download need only start within it)")
}

// check refuses --redirect for a place that is no bucket, and a TTL out of
// what S3 signs (up to 7 days).
func (f *redirectFlags) check(arg string) error {
	if !f.on {
		return nil
	}
	if s, err := place.Parse(arg); err != nil || s.Kind != place.S3 {
		return usageErr("serve: --redirect sends clients to presigned URLs of an object store: it needs an s3:// PLACE or CACHE, not %s", arg)
	}
	if f.ttl < time.Second || f.ttl > 7*24*time.Hour {
		return usageErr("serve: --redirect-ttl %s: want from 1s to 168h (S3 signs URLs for at most 7 days)", f.ttl)
	}
	return nil
}

// duration is what netmirror.Handler.Redirect is set to: 0 without
// --redirect.
func (f *redirectFlags) duration() time.Duration {
	if !f.on {
		return 0
	}
	return f.ttl
}
