package hashing

import (
	"archive/zip"
	"bytes"
	stdflate "compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// streamZip writes b to a Stream the way a download does (small chunks),
// and to a file, then returns the stream's h1: and zh:, and whether the
// stream followed the zip (no second read of the file).
func streamZip(t testing.TB, b []byte, opts Options) (h1, zh Hash, followed bool, err error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.zip")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewStream(true, true, opts)
	for i := 0; i < len(b); i += 16 << 10 {
		if _, err := s.Write(b[i:min(i+16<<10, len(b))]); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	followed = !s.follow.lost
	if followed {
		_, followed = s.follow.summary(p, opts)
	}
	h1, err = s.H1(p)
	return h1, s.ZipHash(), followed, err
}

type zipEntry struct {
	name   string
	body   []byte
	method uint16
	raw    bool // CreateRaw: sizes in the local header, no data descriptor
}

func buildZip(t testing.TB, prefix []byte, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.Write(prefix)
	zw := zip.NewWriter(&buf)
	zw.SetOffset(int64(len(prefix)))
	for _, e := range entries {
		if !e.raw {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(e.body); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var data bytes.Buffer
		if e.method == zip.Deflate {
			fw, _ := stdflate.NewWriter(&data, stdflate.DefaultCompression)
			if _, err := fw.Write(e.body); err != nil {
				t.Fatal(err)
			}
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
		} else {
			data.Write(e.body)
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: e.method, CRC32: crc32.ChecksumIEEE(e.body),
			CompressedSize64: uint64(data.Len()), UncompressedSize64: uint64(len(e.body))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipH1(t testing.TB, b []byte) (Hash, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "d.zip")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := dirhash.HashZip(p, dirhash.Hash1)
	return Hash(h), err
}

// The stream's h1: is dirhash.HashZip's for every shape of zip, and it is
// computed on the stream (not by reading the file again) for the shapes
// release zips have: deflated or stored entries, with or without data
// descriptors, directory entries.
func TestStreamH1(t *testing.T) {
	exe := bytes.Repeat([]byte("\x7fELF binary-ish bytes 0123456789 "), 40000)
	cases := []struct {
		name   string
		zip    []byte
		follow bool
	}{
		{"deflate with data descriptors (zip.Writer.Create)", buildZip(t, nil, zipEntry{name: "terraform-provider-x_v1.0.0", body: exe, method: zip.Deflate}, zipEntry{name: "NOTICE", body: []byte("n\n"), method: zip.Deflate}), true},
		{"raw deflate, sizes in the local header", buildZip(t, nil, zipEntry{name: "terraform-provider-x", body: exe, method: zip.Deflate, raw: true}, zipEntry{name: "LICENSE", body: []byte("l"), method: zip.Store, raw: true}), true},
		{"stored raw", buildZip(t, nil, zipEntry{name: "a", body: exe[:1000], method: zip.Store, raw: true}), true},
		{"directory entries", buildZip(t, nil, zipEntry{name: "sub/", method: zip.Store, raw: true}, zipEntry{name: "sub/f", body: []byte("x"), method: zip.Deflate}), true},
		{"empty zip", buildZip(t, nil), true},
		{"empty entry", buildZip(t, nil, zipEntry{name: "e", method: zip.Deflate}), true},
		{"stored with a data descriptor", buildZip(t, nil, zipEntry{name: "s", body: []byte("stored"), method: zip.Store}), false},
		{"duplicate names", buildZip(t, nil, zipEntry{name: "d", body: []byte("1"), method: zip.Deflate}, zipEntry{name: "d", body: []byte("2"), method: zip.Deflate}), false},
		{"prefix before the zip", buildZip(t, []byte("#!/bin/sh\nexit 0\n"), zipEntry{name: "p", body: exe[:5000], method: zip.Deflate}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, wantErr := zipH1(t, c.zip)
			got, zh, followed, err := streamZip(t, c.zip, Options{})
			if (err == nil) != (wantErr == nil) || got != want {
				t.Fatalf("stream h1 = %s, %v; dirhash.HashZip = %s, %v", got, err, want, wantErr)
			}
			if zh != ZipHashFromSHA256(sha256Of(c.zip)) {
				t.Errorf("zh = %s", zh)
			}
			if followed != c.follow {
				t.Errorf("followed on the stream = %v, want %v", followed, c.follow)
			}
		})
	}
}

func sha256Of(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// What the local headers claim is checked against the central directory:
// a local header whose data differs from what the central directory
// describes (a different CRC, another entry's name) gives ZipH1's
// answer, never the stream's.
func TestStreamDistrustsLocalHeaders(t *testing.T) {
	good := buildZip(t, nil, zipEntry{name: "aaaa", body: []byte("first body"), method: zip.Store, raw: true}, zipEntry{name: "bbbb", body: []byte("other body"), method: zip.Store, raw: true})

	renamed := bytes.Clone(good) // the first local header names "bbbb"
	copy(renamed[localHeaderLen:], "bbbb")
	if h, _, _, err := streamZip(t, renamed, Options{}); err != nil || h != mustH1(t, renamed) {
		t.Errorf("renamed local header: %s, %v; want %s", h, err, mustH1(t, renamed))
	}

	badCRC := bytes.Clone(good) // central directory CRC of the first entry
	cd := bytes.Index(badCRC, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(badCRC[cd+16:], 12345)
	_, wantErr := zipH1(t, badCRC)
	_, _, followed, err := streamZip(t, badCRC, Options{})
	if wantErr == nil || err == nil || followed {
		t.Errorf("central CRC mismatch: stream err %v (followed %v), ZipH1 err %v", err, followed, wantErr)
	}

	swapped := bytes.Clone(good) // the data of the first entry changes after its header
	copy(swapped[bytes.Index(swapped, []byte("first body")):], "FIRST BODY")
	want, wantErr := zipH1(t, swapped)
	got, _, _, err := streamZip(t, swapped, Options{})
	if got != want || (err == nil) != (wantErr == nil) {
		t.Errorf("changed data: %s, %v; ZipH1 %s, %v", got, err, want, wantErr)
	}
}

func mustH1(t *testing.T, b []byte) Hash {
	h, err := zipH1(t, b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The stream honours the unpacked-size cap as ZipH1 does: a zip bomb ends
// with ErrTooLarge.
func TestStreamCapped(t *testing.T) {
	bomb := buildZip(t, nil, zipEntry{name: "bomb", body: make([]byte, 8<<20), method: zip.Deflate})
	_, _, _, err := streamZip(t, bomb, Options{MaxUnpacked: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), ErrTooLarge.Error()) {
		t.Fatalf("err = %v", err)
	}
	if _, _, followed, err := streamZip(t, bomb, Options{MaxUnpacked: -1}); err != nil || !followed {
		t.Fatalf("uncapped: %v (followed %v)", err, followed)
	}
}

// Arbitrary bytes: the stream agrees with dirhash.HashZip (value, or
// failing), and never hangs or panics.
func FuzzStream(f *testing.F) {
	f.Add(buildZip(f, nil, zipEntry{name: "x", body: []byte("hello hello hello"), method: zip.Deflate}))
	f.Add(buildZip(f, nil, zipEntry{name: "x", body: []byte("hi"), method: zip.Store, raw: true}, zipEntry{name: "d/", method: zip.Store, raw: true}))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := zipH1(t, b)
		got, _, _, err := streamZip(t, b, Options{MaxUnpacked: -1})
		if (err == nil) != (wantErr == nil) || got != want {
			t.Fatalf("stream %s, %v; ZipH1 %s, %v", got, err, want, wantErr)
		}
	})
}

var _ io.Writer = (*Stream)(nil)

// TestStreamFollowsIrregularWrites: however a download's bytes arrive (a
// byte, a TLS record, a large copy buffer) and whenever the follower gets
// to run, a release zip is followed on the stream, never read again.
func TestStreamFollowsIrregularWrites(t *testing.T) {
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	z := buildZip(t, nil, zipEntry{name: "terraform-provider-x_v1.0.0", body: exe[:min(len(exe), 3<<20)], method: zip.Deflate},
		zipEntry{name: "NOTICE", body: []byte("n\n"), method: zip.Deflate})
	p := filepath.Join(t.TempDir(), "r.zip")
	if err := os.WriteFile(p, z, 0o644); err != nil {
		t.Fatal(err)
	}
	want := mustH1(t, z)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 12 {
		s := NewStream(true, true, Options{})
		for off := 0; off < len(z); {
			n := min(len(z)-off, []int{1, 7, 16 << 10, 32 << 10, 100 << 10}[r.IntN(5)]+r.IntN(64))
			if _, err := s.Write(z[off : off+n]); err != nil {
				t.Fatal(err)
			}
			off += n
			if r.IntN(8) == 0 {
				runtime.Gosched()
			}
		}
		h, ok := s.FollowedH1(p)
		if !ok || h != want {
			t.Fatalf("write pattern %d: followed %v, h1 %s; want followed, %s", i, ok, h, want)
		}
	}
}
