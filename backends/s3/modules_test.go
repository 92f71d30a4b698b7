package s3_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/hashing"
)

var mod = modulestest.Net

// A bucket as a module place: a package put is listed with its subdir
// and sha256, streams back byte for byte, is Present when put again,
// a conflict when other contents are put without force, and replaced
// with force; a module the bucket lacks is ErrNotFound.
func TestModulesInABucket(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "")
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	ctx := context.Background()
	ms := openStore(t, srv, bucket, "modules").Modules()
	pkg := modulestest.Build(t, mod, "1.0.0", map[string]string{"main.tf": "root", "modules/vpc/main.tf": "vpc"}, "modules/vpc")
	var progressed int64
	st, err := ms.Put(ctx, pkg, false, func(n int64) { progressed += n })
	loc := "s3://" + bucket + "/modules/registry.example.com/acme/net/aws/1.0.0.zip"
	if err != nil || st.Present || st.Address != loc+"//modules/vpc" || st.Bytes != pkg.Size || progressed != pkg.Size {
		t.Fatalf("Put: %+v (progress %d), %v", st, progressed, err)
	}

	ls, err := ms.ListModule(ctx, mod, backends.VersionConstraint{})
	if err != nil || len(ls.Items) != 1 || len(ls.Warnings) != 0 {
		t.Fatalf("ListModule: %+v, %v", ls, err)
	}
	it := ls.Items[0]
	if it.Location != loc+"//modules/vpc" || "zh:"+it.SHA256 != string(pkg.Sums.ZH) || it.Version.String() != "1.0.0" {
		t.Errorf("listed %+v, want %s with the sha256 of %s", it, loc, pkg.Sums.ZH)
	}
	if served := modules.ServedFrom(it); served.Subdir != "modules/vpc" || served.OCI != "" {
		t.Errorf("served as %+v", served)
	}

	rc, size, err := ms.OpenPackage(ctx, mod, pkg.Version)
	if err != nil {
		t.Fatal(err)
	}
	zh := hashing.NewZipHasher()
	n, _ := io.Copy(zh, rc)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if n != size || zh.Sum() != pkg.Sums.ZH {
		t.Errorf("OpenPackage streamed %d bytes (said %d) hashing to %s, want %s", n, size, zh.Sum(), pkg.Sums.ZH)
	}

	if st, err := ms.Put(ctx, pkg, false, nil); err != nil || !st.Present || st.Address != loc+"//modules/vpc" {
		t.Errorf("Put again: %+v, %v; want Present", st, err)
	}
	other := modulestest.Build(t, mod, "1.0.0", map[string]string{"main.tf": "changed"}, "")
	if _, err := ms.Put(ctx, other, false, nil); !errors.Is(err, backends.ErrConflict) {
		t.Errorf("Put of other contents: %v, want a conflict", err)
	}
	if st, err := ms.Put(ctx, other, true, nil); err != nil || st.Present || st.Address != loc {
		t.Errorf("Put --force: %+v, %v", st, err)
	}
	if ls, err := ms.ListModule(ctx, mod, backends.VersionConstraint{}); err != nil || "zh:"+ls.Items[0].SHA256 != string(other.Sums.ZH) || ls.Items[0].Location != loc {
		t.Errorf("after --force: %+v, %v", ls, err)
	}

	gone := modules.Module{Host: "registry.example.com", Namespace: "acme", Name: "gone", System: "aws"}
	if _, err := ms.ListModule(ctx, gone, backends.VersionConstraint{}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("ListModule of a module the bucket lacks: %v, want ErrNotFound", err)
	}
	if _, _, err := ms.OpenPackage(ctx, gone, pkg.Version); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("OpenPackage of a module the bucket lacks: %v, want ErrNotFound", err)
	}
}
