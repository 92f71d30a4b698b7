package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/sync/errgroup"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/backends/zipname"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// The object metadata (x-amz-meta-*) in which a writer records the h1: and
// zh: it verified an archive against, as it lands it: an index rebuild by
// another process lists them without downloading the archive again.
const (
	metaH1 = "tfmirror-h1"
	metaZH = "tfmirror-zh"
)

// raceRetry is the policy of a document rewrite that other writers'
// rewrites keep overtaking: 10 rounds, 30 ms apart at first, doubling up to
// 400 ms, each wait spread by ±60% so that writers that met do not meet
// again.
var raceRetry = backends.RetryPolicy{Attempts: 10, Base: 30 * time.Millisecond, Max: 400 * time.Millisecond, Jitter: 0.6}

// maxAttempts is how many rounds raceRetry allows.
var maxAttempts = raceRetry.Tries()

// Stage opens a local temp file for pkg's zip; nothing reaches the bucket
// before Commit.
func (s *Store) Stage(ctx context.Context, pkg backends.Package) (backends.Staged, error) {
	if err := s.checkKey(pkg); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "tfmirror-s3-*.zip")
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: staging file: %w", s.name, pkg, err)
	}
	return &staged{s: s, pkg: pkg, f: f, key: s.providerPrefix(pkg.Provider) + pkg.Filename()}, nil
}

// StageFile stages pkg's zip from a local file as it is (a filesystem
// source's): Commit uploads it from that file, with no staging copy. The
// caller reads the file to hash and check it, and writes nothing to the
// Staged. The upload is signed with the zh: computed from that reading,
// so the store refuses bytes that changed in between: what lands is what
// was checked.
func (s *Store) StageFile(ctx context.Context, pkg backends.Package, path string) (backends.Staged, error) {
	if err := s.checkKey(pkg); err != nil {
		return nil, err
	}
	f, err := regular.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: %w", s.name, pkg, err)
	}
	return &staged{s: s, pkg: pkg, f: f, key: s.providerPrefix(pkg.Provider) + pkg.Filename(), source: true}, nil
}

// checkKey refuses a package whose key would leave its provider's folder.
func (s *Store) checkKey(pkg backends.Package) error {
	for _, part := range []string{pkg.Provider.Hostname, pkg.Provider.Namespace, pkg.Provider.Type} {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "/\\") {
			return fmt.Errorf("mirror %s: %s: refusing a package whose key would leave its provider's folder", s.name, pkg)
		}
	}
	return nil
}

type staged struct {
	s      *Store
	pkg    backends.Package
	f      *os.File
	key    string
	source bool // f is the source's own file (StageFile): only read, never removed
	done   bool
}

func (st *staged) Write(p []byte) (int, error) {
	if st.source {
		return 0, fmt.Errorf("mirror %s: %s: staged from %s: nothing is written to it", st.s.name, st.pkg, st.f.Name())
	}
	return st.f.Write(p)
}

func (st *staged) Path() string { return st.f.Name() }

// Abort removes the local staging file (a source's own file is only
// closed); the bucket is not touched.
func (st *staged) Abort() error {
	if st.done {
		return nil
	}
	st.done = true
	_ = st.f.Close() // a spool of what was uploaded, or discarded
	if st.source {
		return nil
	}
	return os.Remove(st.f.Name())
}

func (st *staged) fail(err error) error {
	return fmt.Errorf("mirror %s: %s: %w", st.s.name, st.pkg, classify(err))
}

// Commit lands the staged zip by a conditional create, so it never
// replaces an archive: of two writers landing one key, one lands and the
// other finds its archive. An archive already there with the same bytes is
// success; a different one is a conflict, replaced with force after its
// listing is dropped from the version document, so that no instant shows
// the new bytes under the old hashes.
func (st *staged) Commit(ctx context.Context, sums hashing.Sums, force bool) error {
	defer func() { _ = st.Abort() }() // removes the local spool only
	defer st.s.forget(st.pkg.Provider)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.s.unlistStale(ctx, st.pkg, st.key); err != nil {
		return st.fail(err)
	}
	err := st.put(ctx, sums, func(in *s3api.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err == nil {
		st.s.landed.Record(st.key, sums)
		return nil
	}
	if !isPrecondition(err) {
		return st.fail(err)
	}
	existing, etag, err := st.s.hashObject(ctx, st.key)
	switch {
	case err != nil:
		return st.fail(err)
	case existing == sums.ZH:
		st.s.landed.Record(st.key, sums)
		return nil
	case !force:
		return fmt.Errorf("mirror %s: %s: conflict: %w (has %s, incoming %s; use --force to replace it)", st.s.name, st.pkg, backends.ErrConflict, existing, sums.ZH)
	}
	if err := st.s.unlist(ctx, st.pkg); err != nil {
		return st.fail(err)
	}
	err = st.put(ctx, sums, func(in *s3api.PutObjectInput) { in.IfMatch = aws.String(etag) })
	if isPrecondition(err) {
		return st.fail(backends.Transient(fmt.Errorf("%s changed while it was being replaced", st.s.location(st.key))))
	}
	if err != nil {
		return st.fail(err)
	}
	st.s.landed.Record(st.key, sums)
	return nil
}

// put uploads the staged file with cond's precondition, recording sums in
// the object's metadata. The request is signed with the zip's SHA-256 (its
// zh:), which the store checks against the bytes it receives before it
// creates the object: an upload cut short (the process killed, the
// connection reset) never lands as a truncated archive. Over TLS the SDK
// would send the bytes unsigned, and some stores (versitygw) then create
// the object from however much of the body arrived.
func (st *staged) put(ctx context.Context, sums hashing.Sums, cond func(*s3api.PutObjectInput)) error {
	if _, err := st.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	info, err := st.f.Stat()
	if err != nil {
		return err
	}
	in := &s3api.PutObjectInput{
		Bucket: &st.s.bucket, Key: &st.key, Body: st.f, ContentLength: aws.Int64(info.Size()),
		ContentType:  aws.String("application/zip"),
		CacheControl: cacheControl(st.s.opts.CacheControl.Archive),
		Metadata:     map[string]string{metaZH: string(sums.ZH)},
	}
	if sums.H1 != "" { // computed only where some evidence needed it
		in.Metadata[metaH1] = string(sums.H1)
	}
	cond(in)
	sum, ok := strings.CutPrefix(string(sums.ZH), string(hashing.SchemeZip))
	if !ok {
		return fmt.Errorf("no zh: to sign the upload with")
	}
	_, err = st.s.client.PutObject(ctx, in, withPayloadHash(sum))
	return classify(err)
}

// withPayloadHash signs a request with the SHA-256 of its body (hex), known
// beforehand, so that the store refuses a body cut short.
func withPayloadHash(sum string) func(*s3api.Options) {
	return func(o *s3api.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("tfmirrorPayloadHash",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(v4.SetPayloadHash(ctx, sum), in)
				}), middleware.After)
		})
	}
}

// hashObject returns the zh: of the object at key, from its bytes, and the
// ETag of the version it read.
func (s *Store) hashObject(ctx context.Context, key string) (hashing.Hash, string, error) {
	out, err := s.client.GetObject(ctx, &s3api.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return "", "", classify(err)
	}
	defer func() { _ = out.Body.Close() }() // read only
	zh := hashing.NewZipHasher()
	if _, err := io.Copy(zh, out.Body); err != nil {
		return "", "", backends.Transient(err)
	}
	return zh.Sum(), aws.ToString(out.ETag), nil
}

// putDoc writes a document if it is still the one old read: If-Match its
// ETag, or If-None-Match: * when it did not exist. A refusal (someone
// wrote it since) is a precondition error. Like archives, it is signed
// with its SHA-256, so a write cut short leaves the old document.
func (s *Store) putDoc(ctx context.Context, old doc, body []byte) error {
	in := &s3api.PutObjectInput{
		Bucket: &s.bucket, Key: &old.key, Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ContentType:  aws.String("application/json"), // the clients refuse documents of any other type
		CacheControl: cacheControl(s.opts.CacheControl.Document),
	}
	if old.exists {
		in.IfMatch = aws.String(old.etag)
	} else {
		in.IfNoneMatch = aws.String("*")
	}
	sum := sha256.Sum256(body)
	s.wroteDoc(old.key)
	_, err := s.client.PutObject(ctx, in, withPayloadHash(hex.EncodeToString(sum[:])))
	return classify(err)
}

// unlistStale drops pkg's listing from its version document when the
// archive it describes is gone (deleted by hand): the archive landing now
// must not be described by it, since index rebuilds keep listings.
func (s *Store) unlistStale(ctx context.Context, pkg backends.Package, key string) error {
	listed, err := s.listedPlatforms(ctx, s.providerPrefix(pkg.Provider)+mirrordoc.VersionName(pkg.Version))
	if err != nil || !listed[pkg.Platform.String()] {
		return err
	}
	_, err = s.client.HeadObject(ctx, &s3api.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err = classify(err); err == nil || !isNotFound(err) {
		return err // there: the conditional create decides
	}
	return s.unlist(ctx, pkg)
}

// unlist removes pkg's platform from its version document, if listed.
func (s *Store) unlist(ctx context.Context, pkg backends.Package) error {
	key := s.providerPrefix(pkg.Provider) + mirrordoc.VersionName(pkg.Version)
	return s.updateDoc(ctx, key, maxAttempts, func(d doc) ([]byte, bool, error) {
		if !d.exists {
			return nil, false, nil
		}
		vd, err := mirrordoc.ParseVersion(d.body)
		if err != nil {
			return nil, false, nil
		}
		if _, ok := vd.Archives[pkg.Platform.String()]; !ok {
			return nil, false, nil
		}
		delete(vd.Archives, pkg.Platform.String())
		b, err := mirrordoc.Encode(vd)
		return b, err == nil, err
	})
}

// backoff waits after round attempt (from 0) as raceRetry says.
func backoff(ctx context.Context, attempt int) error { return raceRetry.Wait(ctx, attempt+1) }

// Flush rebuilds p's version documents from the bucket's listing, then its
// index.json, and reads them back. Each document is replaced only if it is
// still the one read before the listing (If-Match), so a writer whose
// listing is older than the document it would replace starts again: the
// documents converge on every archive any writer landed. When they cannot
// be written, the archives this process landed for p are reported unlisted.
func (s *Store) Flush(ctx context.Context, p backends.Provider) error {
	defer s.forget(p)
	known := map[string]bool{}
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		var again bool
		if again, err = s.flushOnce(ctx, p, known); err == nil && !again {
			return nil
		}
		if err != nil && !isPrecondition(err) {
			break
		}
		if err = backoff(ctx, attempt); err != nil {
			break
		}
		err = fmt.Errorf("other writers kept rewriting them")
	}
	var pkgs []backends.Package
	for _, key := range s.landed.Under(s.providerPrefix(p)) {
		if pkg, perr := packageOf(p, key); perr == nil {
			pkgs = append(pkgs, pkg)
		}
	}
	return &backends.UnlistedError{Packages: pkgs, Err: fmt.Errorf("mirror %s: %s: index documents: %w", s.name, p, err)}
}

// flushOnce is one round of Flush; again reports that another writer
// overtook it, or that the documents read back miss an archive this
// process landed. known collects versions the listing showed, so that the
// next round reads their documents before it lists.
func (s *Store) flushOnce(ctx context.Context, p backends.Provider, known map[string]bool) (again bool, err error) {
	pfx := s.providerPrefix(p)
	idx, err := s.getListedDoc(ctx, pfx+mirrordoc.IndexName)
	if err != nil {
		return false, err
	}
	read := map[string]bool{}
	for v := range known {
		read[v] = true
	}
	if idx.exists {
		if listed, err := mirrordoc.ParseIndex(idx.body); err == nil {
			for v := range listed {
				read[v] = true
			}
		}
	}
	docs, err := s.getDocs(ctx, pfx, read)
	if err != nil {
		return false, err
	}
	l, err := s.listProvider(ctx, p)
	if isNotFound(err) {
		return false, nil // nothing there to list
	}
	if err != nil {
		return false, err
	}
	for v := range l.versions {
		known[v] = true
	}
	index := mirrordoc.Index{Versions: map[string]struct{}{}}
	again, err = s.writeVersionDocs(ctx, pfx, l, docs, index)
	if again || err != nil {
		return again, err
	}
	b, err := mirrordoc.Encode(index)
	if err != nil {
		return false, err
	}
	if !idx.sameBytes(b) {
		if err := s.putDoc(ctx, idx, b); err != nil {
			return isPrecondition(err), ignorePrecondition(err)
		}
	}
	return s.missesLanded(ctx, p, l)
}

// getDocs reads the version documents of the versions in vs, several at a
// time, by version.
func (s *Store) getDocs(ctx context.Context, pfx string, vs map[string]bool) (map[string]doc, error) {
	keys := make([]string, 0, len(vs))
	for v := range vs {
		keys = append(keys, v)
	}
	got := make([]doc, len(keys))
	err := s.each(ctx, len(keys), func(ctx context.Context, i int) (err error) {
		got[i], err = s.getListedDoc(ctx, pfx+keys[i]+".json") // canonical versions: mirrordoc.VersionName's form
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]doc, len(keys))
	for i, v := range keys {
		out[v] = got[i]
	}
	return out, nil
}

// writeVersionDocs writes the version documents the listing calls for,
// several at a time, and adds their versions to index. A document not read
// before the listing is created only if it still does not exist.
func (s *Store) writeVersionDocs(ctx context.Context, pfx string, l *providerListing, docs map[string]doc, index mirrordoc.Index) (again bool, err error) {
	vs := l.sortedVersions()
	bodies := make([][]byte, len(vs))
	overtaken := make([]bool, len(vs))
	err = s.each(ctx, len(vs), func(ctx context.Context, i int) error {
		v := vs[i]
		old, ok := docs[v.String()]
		if !ok {
			old = doc{key: pfx + mirrordoc.VersionName(v)}
		}
		d, err := s.rebuild(ctx, l.archives[v.String()], old)
		if err != nil || len(d.Archives) == 0 {
			return err
		}
		if bodies[i], err = mirrordoc.Encode(d); err != nil || old.sameBytes(bodies[i]) {
			return err
		}
		err = s.putDoc(ctx, old, bodies[i])
		overtaken[i] = isPrecondition(err)
		return ignorePrecondition(err)
	})
	if err != nil {
		return false, err
	}
	for i, v := range vs {
		again = again || overtaken[i]
		if bodies[i] != nil {
			index.Versions[v.String()] = struct{}{}
		}
	}
	return again, nil
}

// rebuild makes a version document for the archives listed, keeping what
// old lists by mirrordoc.Hashes' rule.
func (s *Store) rebuild(ctx context.Context, archives map[string]archiveObject, old doc) (mirrordoc.Version, error) {
	var prev *mirrordoc.Version
	if old.exists {
		prev, _ = mirrordoc.ParseVersion(old.body)
	}
	out := mirrordoc.Version{Archives: map[string]mirrordoc.Archive{}}
	for plat, o := range archives {
		file := path.Base(o.key)
		var listed []string
		if e, _, describes := prev.Entry(o.pkg.Platform, file); describes {
			listed = e.Hashes
		}
		hs, contradicted, err := mirrordoc.Hashes(listed, s.landed.Sums(o.key), s.opts.Hashing.AllHashes, func(h1 bool) (hashing.Sums, error) { return s.findSums(ctx, o, h1) })
		if err != nil {
			return out, fmt.Errorf("%s: %w", o.pkg, err)
		}
		if contradicted {
			s.warnf("%s: does not match the hashes %s lists for it; they are left for verify to report", s.location(o.key), s.location(old.key))
		}
		out.Archives[plat] = mirrordoc.Archive{Hashes: hs, URL: file}
	}
	return out, nil
}

// findSums returns the sums of an archive another process landed: those
// its writer recorded in its metadata, or else those of its bytes.
func (s *Store) findSums(ctx context.Context, o archiveObject, wantH1 bool) (hashing.Sums, error) {
	head, err := s.client.HeadObject(ctx, &s3api.HeadObjectInput{Bucket: &s.bucket, Key: &o.key})
	if err != nil {
		return hashing.Sums{}, s.errorf(err, "%s", s.location(o.key))
	}
	// What its writer verified, recorded beside it: zh: always, h1: where
	// it was computed.
	h1, err1 := hashing.ParseHash(head.Metadata[metaH1])
	zh, err2 := hashing.ParseHash(head.Metadata[metaZH])
	if err2 == nil && zh.Scheme() == hashing.SchemeZip {
		if err1 == nil && h1.Scheme() == hashing.SchemeH1 {
			return hashing.Sums{H1: h1, ZH: zh}, nil
		}
		if !wantH1 {
			return hashing.Sums{ZH: zh}, nil
		}
	}
	tmp, err := os.CreateTemp("", "tfmirror-s3-*.zip")
	if err != nil {
		return hashing.Sums{}, err
	}
	defer os.Remove(tmp.Name())
	defer func() { _ = tmp.Close() }() // a spool, removed after
	out, err := s.client.GetObject(ctx, &s3api.GetObjectInput{Bucket: &s.bucket, Key: &o.key})
	if err != nil {
		return hashing.Sums{}, s.errorf(err, "%s", s.location(o.key))
	}
	defer func() { _ = out.Body.Close() }() // read only
	if _, err := io.Copy(tmp, out.Body); err != nil {
		return hashing.Sums{}, backends.Transient(err)
	}
	return hashing.HashZipSums(tmp.Name(), wantH1, s.opts.Hashing)
}

// missesLanded reads p's documents back and reports whether they miss an
// archive this process landed that the listing l still holds: another
// writer replaced them with older ones since, and the flush goes again.
func (s *Store) missesLanded(ctx context.Context, p backends.Provider, l *providerListing) (bool, error) {
	want := map[string][]archiveObject{}
	for _, key := range s.landed.Under(s.providerPrefix(p)) {
		for v, plats := range l.archives {
			for _, o := range plats {
				if o.key == key {
					want[v] = append(want[v], o)
				}
			}
		}
	}
	if len(want) == 0 {
		return false, nil
	}
	var vs []backends.Version
	for v := range want {
		vs = append(vs, l.versions[v])
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].String() < vs[j].String() })
	// The index and the version documents are read at once: one round
	// trip at the end of the flush instead of two.
	var idx doc
	var docs map[string]*mirrordoc.Version
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { idx, err = s.getDoc(gctx, s.providerPrefix(p)+mirrordoc.IndexName); return err })
	g.Go(func() (err error) { docs, err = s.versionDocs(gctx, p, vs); return err })
	if err := g.Wait(); err != nil {
		return false, err
	}
	indexed, _ := mirrordoc.ParseIndex(idx.body)
	for v, objs := range want {
		if !indexed[v] {
			return true, nil
		}
		for _, o := range objs {
			if _, _, describes := docs[v].Entry(o.pkg.Platform, path.Base(o.key)); !describes {
				return true, nil
			}
		}
	}
	return false, nil
}

// packageOf parses the package an archive key of p names.
func packageOf(p backends.Provider, key string) (backends.Package, error) {
	return zipname.Parse(p, path.Base(key))
}

// isNotFound reports whether err means the object or prefix is not there.
func isNotFound(err error) bool { return errors.Is(err, backends.ErrNotFound) }

func ignorePrecondition(err error) error {
	if isPrecondition(err) {
		return nil
	}
	return err
}
