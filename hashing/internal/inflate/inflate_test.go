package inflate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"testing/iotest"

	kflate "github.com/klauspost/compress/flate"
)

// inflateSamples are DEFLATE streams of real kinds of bytes (an executable,
// text, random bytes, runs) at every level of both encoders the project
// meets, stored blocks and Huffman-only ones included.
func inflateSamples(t testing.TB) map[string][]byte {
	s, err := samples()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// samples are made once for all the tests that use them.
var samples = sync.OnceValues(func() (map[string][]byte, error) {
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		return nil, err
	}
	rnd := make([]byte, 300<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	text := bytes.Repeat([]byte("Terraform and OpenTofu install providers from mirrors. "), 5000)
	bodies := map[string][]byte{
		"empty":   nil,
		"one":     {'x'},
		"exe":     exe[:min(len(exe), 3<<20)],
		"text":    text,
		"random":  rnd,
		"zeros":   make([]byte, 700<<10),
		"pattern": bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 50000),
	}
	out := map[string][]byte{}
	for name, body := range bodies {
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
			var b bytes.Buffer
			w, _ := flate.NewWriter(&b, level)
			w.Write(body)
			w.Close()
			out[name+"/std"+string(rune('0'+level+2))] = b.Bytes()
		}
		for _, level := range []int{kflate.ConstantCompression, kflate.BestSpeed, 4, kflate.BestCompression} {
			var b bytes.Buffer
			w, _ := kflate.NewWriter(&b, level)
			// Flushes make empty stored blocks and short ones.
			w.Write(body[:len(body)/3])
			w.Flush()
			w.Write(body[len(body)/3:])
			w.Close()
			out[name+"/klauspost"+string(rune('0'+level+2))] = b.Bytes()
		}
	}
	return out, nil
})

// stdInflate is what compress/flate makes of data: the bytes, the error,
// and how many bytes of data it read (it reads an io.ByteReader exactly).
func stdInflate(data []byte) ([]byte, int, error) {
	r := bytes.NewReader(data)
	out, err := io.ReadAll(flate.NewReader(r))
	return out, len(data) - r.Len(), err
}

// ourInflate is what inflate makes of data read through a bufio.Reader of
// size bufSize over src's pieces.
func ourInflate(data []byte, bufSize int, piece func(io.Reader) io.Reader, limit int64) ([]byte, int, error) {
	r := bytes.NewReader(data)
	br := bufio.NewReaderSize(piece(r), bufSize)
	var out bytes.Buffer
	n, err := Decode(br, &out, limit)
	if n != int64(out.Len()) {
		panic("inflate miscounted what it wrote")
	}
	rest, _ := io.ReadAll(br)
	return out.Bytes(), len(data) - len(rest), err
}

func whole(r io.Reader) io.Reader { return r }

func TestInflateMatchesFlate(t *testing.T) {
	trailer := []byte("PK\x07\x08 the next header")
	for name, stream := range inflateSamples(t) {
		want, _, err := stdInflate(stream)
		if err != nil {
			t.Fatalf("%s: compress/flate: %v", name, err)
		}
		data := append(append([]byte(nil), stream...), trailer...)
		for _, c := range []struct {
			size  int
			piece func(io.Reader) io.Reader
		}{{64 << 10, whole}, {16, whole}, {4096, iotest.OneByteReader}, {100, iotest.HalfReader}} {
			got, read, err := ourInflate(data, c.size, c.piece, -1)
			if err != nil {
				t.Fatalf("%s (buffer %d): %v", name, c.size, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s (buffer %d): %d bytes differ from compress/flate's %d", name, c.size, len(got), len(want))
			}
			if read != len(stream) {
				t.Fatalf("%s (buffer %d): read %d bytes of a %d-byte stream", name, c.size, read, len(stream))
			}
		}
	}
}

func TestInflateLimit(t *testing.T) {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestSpeed)
	if _, err := w.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int64{0, 1000, 1<<20 - 1} {
		got, _, err := ourInflate(b.Bytes(), 64<<10, whole, limit)
		if !errors.Is(err, ErrLimit) || int64(len(got)) != limit+1 {
			t.Errorf("limit %d: %d bytes, %v; want %d bytes, ErrLimit", limit, len(got), err, limit+1)
		}
	}
	if got, _, err := ourInflate(b.Bytes(), 64<<10, whole, 1<<20); err != nil || len(got) != 1<<20 {
		t.Errorf("limit of exactly the size: %d bytes, %v", len(got), err)
	}
}

// TestInflateRefusesWhatFlateRefuses: truncations and corruptions of real
// streams are never decoded into something compress/flate would not make.
func TestInflateRefusesWhatFlateRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for name, stream := range inflateSamples(t) {
		if len(stream) > 200<<10 {
			continue
		}
		for i := 0; i < 40; i++ {
			data := append([]byte(nil), stream...)
			switch {
			case i < 10 && len(data) > 0:
				data = data[:r.IntN(len(data))]
			case len(data) > 0:
				for range 1 + r.IntN(3) {
					data[r.IntN(len(data))] ^= byte(1 << r.IntN(8))
				}
			}
			compareInflate(t, name, data)
		}
	}
}

func compareInflate(t testing.TB, name string, data []byte) {
	want, wread, werr := stdInflate(data)
	for _, size := range []int{16, 64 << 10} {
		got, read, err := ourInflate(data, size, whole, 64<<20)
		if err != nil {
			continue // refused: ZipH1 decides
		}
		if werr != nil {
			t.Fatalf("%s: decoded %d bytes of what compress/flate refuses (%v)", name, len(got), werr)
		}
		if !bytes.Equal(got, want) || read != wread {
			t.Fatalf("%s: %d bytes (read %d) where compress/flate made %d (read %d)", name, len(got), read, len(want), wread)
		}
	}
}

func FuzzInflate(f *testing.F) {
	for _, s := range inflateSamples(f) {
		if len(s) < 4096 {
			f.Add(s)
		}
	}
	// A single distance code of one bit, and no distance code at all,
	// as zlib writes them.
	f.Add([]byte{0x63, 0x60, 0x00, 0x00})
	f.Add([]byte{0x0d, 0xc0, 0x81, 0x00, 0x00, 0x00, 0x00, 0x80, 0xa0, 0xfe, 0xbf, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) { compareInflate(t, "fuzz", data) })
}

// BenchmarkInflate: inflate against klauspost's and the standard library's
// inflaters on ~50 MB of executable bytes (MB/s of output).
func BenchmarkInflate(b *testing.B) {
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 0, 50<<20)
	for len(body) < cap(body) {
		body = append(body, exe[:min(len(exe), cap(body)-len(body))]...)
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.DefaultCompression)
	if _, err := w.Write(body); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d bytes deflate to %d", len(body), z.Len())
	run := func(b *testing.B, dec func(io.Reader) (int64, error)) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			n, err := dec(bytes.NewReader(z.Bytes()))
			if err != nil || n != int64(len(body)) {
				b.Fatalf("%d bytes, %v", n, err)
			}
		}
	}
	b.Run("tfmirror", func(b *testing.B) {
		run(b, func(r io.Reader) (int64, error) { return Decode(bufio.NewReaderSize(r, 64<<10), io.Discard, -1) })
	})
	b.Run("klauspost", func(b *testing.B) {
		run(b, func(r io.Reader) (int64, error) {
			return io.Copy(io.Discard, kflate.NewReader(bufio.NewReaderSize(r, 64<<10)))
		})
	})
	b.Run("stdlib", func(b *testing.B) {
		run(b, func(r io.Reader) (int64, error) {
			return io.Copy(io.Discard, flate.NewReader(bufio.NewReaderSize(r, 64<<10)))
		})
	})
}
