package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/readers"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Modules is a bucket (or a prefix of one) as a module place, laid out as
// a directory of modules is: PREFIX/HOST/NAMESPACE/NAME/SYSTEM/VERSION.zip,
// with VERSION.json (modules.Record: its sums, source, commit and subdir)
// beside each. Give modules a bucket or prefix of their own: a provider's
// HOST/NAMESPACE/TYPE/ would hold a module's NAME/SYSTEM/ folders.
type Modules struct{ s *Store }

var (
	_ modules.Writer        = (*Modules)(nil)
	_ modules.PackageOpener = (*Modules)(nil)
)

// Modules returns the store as a module place.
func (s *Store) Modules() *Modules { return &Modules{s: s} }

// String names the place as the user wrote it.
func (ms *Modules) String() string { return ms.s.name }

func (ms *Modules) folder(m modules.Module) string {
	return ms.s.prefix + m.Host + "/" + m.Namespace + "/" + m.Name + "/" + m.System + "/"
}

func (ms *Modules) zipKey(m modules.Module, v modules.Version) string {
	return ms.folder(m) + v.String() + ".zip"
}

func (ms *Modules) fail(what string, err error) error {
	return fmt.Errorf("module mirror %s: %s: %w", ms.s.name, what, classify(err))
}

// ListModule lists the zips of m (those c selects, newest first), with
// their records: one listing, then the records, a few at a time.
func (ms *Modules) ListModule(ctx context.Context, m modules.Module, c backends.VersionConstraint) (modules.Listings, error) {
	s, pfx := ms.s, ms.folder(m)
	zips, records := map[string]bool{}, map[string]bool{}
	var out modules.Listings
	var all []modules.Version
	pages := s3api.NewListObjectsV2Paginator(s.client, &s3api.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &pfx, Delimiter: aws.String("/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return out, ms.fail(m.String()+": list "+s.location(pfx), err)
		}
		for _, o := range page.Contents {
			name := strings.TrimPrefix(aws.ToString(o.Key), pfx)
			if base, ok := strings.CutSuffix(name, ".json"); ok {
				records[base] = true
				continue
			}
			base, isZip := strings.CutSuffix(name, ".zip")
			v, err := modules.ParseVersion(base)
			if !isZip || err != nil || v.String() != base {
				out.Warnings = append(out.Warnings, fmt.Sprintf("module mirror %s: %s: %s is not VERSION.zip; skipped", s.name, m, s.location(aws.ToString(o.Key))))
				continue
			}
			zips[base] = true
			all = append(all, v)
		}
	}
	if len(all) == 0 {
		return out, fmt.Errorf("module mirror %s: %s: %w (nothing in %s)", s.name, m, backends.ErrNotFound, s.location(pfx))
	}
	vs := c.Filter(all)
	items := make([]modules.Listing, len(vs))
	err := s.each(ctx, len(vs), func(ctx context.Context, i int) error {
		v := vs[i]
		it := modules.Listing{Module: m, Version: v, Listed: v.String() + ".zip"}
		sub := ""
		if records[v.String()] {
			rec, err := ms.record(ctx, m, v)
			if err != nil {
				return err
			}
			sub, it.SHA256, it.Revision = rec.Subdir, strings.TrimPrefix(rec.ZH, "zh:"), rec.Revision
		}
		it.Location = modules.JoinSubdir(s.location(ms.zipKey(m, v)), sub)
		items[i] = it
		return nil
	})
	if err != nil {
		return modules.Listings{}, err
	}
	out.Items = items
	sort.Strings(out.Warnings)
	return out, nil
}

// record reads the VERSION.json of m at v.
func (ms *Modules) record(ctx context.Context, m modules.Module, v modules.Version) (modules.Record, error) {
	var rec modules.Record
	d, err := ms.s.getDoc(ctx, ms.folder(m)+v.String()+".json")
	if err != nil || !d.exists {
		return rec, err
	}
	if err := json.Unmarshal(d.body, &rec); err != nil {
		return rec, fmt.Errorf("module mirror %s: %s: %w", ms.s.name, ms.s.location(d.key), err)
	}
	return rec, nil
}

// Put uploads pkg's zip unless the bucket holds the same contents (its
// zh:, read from the object's bytes); other contents are a conflict
// unless force. The upload is conditional (If-None-Match: *, or If-Match
// the object replaced) and signed with the zip's SHA-256, so a write cut
// short or raced lands nothing torn; the record follows the zip.
func (ms *Modules) Put(ctx context.Context, pkg *modules.Package, force bool, progress func(int64)) (modules.Stored, error) {
	s, key, label := ms.s, ms.zipKey(pkg.Module, pkg.Version), pkg.Label()
	loc := s.location(key)
	st := modules.Stored{Address: modules.JoinSubdir(loc, pkg.Subdir)}
	for attempt := 0; ; attempt++ {
		have, etag, err := s.hashObject(ctx, key)
		if err != nil && !errors.Is(err, backends.ErrNotFound) {
			return st, ms.fail(label+": read "+loc, err)
		}
		if err == nil {
			check := hashing.Check{Source: hashing.Source{Kind: hashing.SourceArchive, Detail: loc}, Scheme: hashing.SchemeZip, Want: []hashing.Hash{pkg.Sums.ZH}, Got: have}
			if have == pkg.Sums.ZH {
				check.Status = hashing.Match
				st.Present, st.Checks = true, []hashing.Check{check}
				if rec, err := ms.record(ctx, pkg.Module, pkg.Version); err == nil && rec.ZH == string(pkg.Sums.ZH) {
					st.Address = modules.JoinSubdir(loc, rec.Subdir)
					return st, nil
				}
				return st, ms.putRecord(ctx, pkg) // the zip landed, its record did not
			}
			if !force {
				return st, fmt.Errorf("module mirror %s: %s: %s: %w: it holds %s, this build is %s", s.name, label, loc, backends.ErrConflict, have, pkg.Sums.ZH)
			}
		}
		n, err := ms.putZip(ctx, pkg, key, etag, progress)
		if isPrecondition(err) && attempt < maxAttempts {
			if err := backoff(ctx, attempt); err != nil {
				return st, err
			}
			continue // another writer landed it meanwhile: compare again
		}
		if err != nil {
			return st, ms.fail(label+": write "+loc, err)
		}
		st.Bytes = n
		st.Checks = []hashing.Check{{Source: hashing.Source{Kind: hashing.SourceArchive, Detail: "written " + loc}, Scheme: hashing.SchemeZip, Status: hashing.Match, Want: []hashing.Hash{pkg.Sums.ZH}, Got: pkg.Sums.ZH}}
		return st, ms.putRecord(ctx, pkg)
	}
}

// putZip uploads the package's zip to key: only where there is none (etag
// "") or where the object is still the one with etag. The bucket checks
// the bytes against the zh: the request is signed with.
func (ms *Modules) putZip(ctx context.Context, pkg *modules.Package, key, etag string, progress func(int64)) (int64, error) {
	f, err := regular.Open(pkg.Path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read only
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	var body io.Reader = f
	if progress != nil {
		body = readers.OnRead(f, progress)
	}
	s := ms.s
	in := &s3api.PutObjectInput{
		Bucket: &s.bucket, Key: &key, Body: body, ContentLength: aws.Int64(fi.Size()),
		ContentType: aws.String("application/zip"), Metadata: map[string]string{metaZH: string(pkg.Sums.ZH)},
	}
	if etag == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(etag)
	}
	if _, err := s.client.PutObject(ctx, in, withPayloadHash(pkg.Sums.ZH.Value())); err != nil {
		return 0, classify(err)
	}
	return fi.Size(), nil
}

// putRecord writes pkg's VERSION.json.
func (ms *Modules) putRecord(ctx context.Context, pkg *modules.Package) error {
	key := ms.folder(pkg.Module) + pkg.Version.String() + ".json"
	return ms.s.updateDoc(ctx, key, maxAttempts, func(d doc) ([]byte, bool, error) {
		b := pkg.Record().Marshal()
		return b, !d.sameBytes(b), nil
	})
}

// OpenPackage implements modules.PackageOpener: the zip of m at v.
func (ms *Modules) OpenPackage(ctx context.Context, m modules.Module, v modules.Version) (io.ReadCloser, int64, error) {
	s, key := ms.s, ms.zipKey(m, v)
	out, err := s.client.GetObject(ctx, &s3api.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, 0, ms.fail(m.String()+" "+v.String()+": "+s.location(key), err)
	}
	return out.Body, aws.ToInt64(out.ContentLength), nil
}
