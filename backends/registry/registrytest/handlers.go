package registrytest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tfmirror/tfmirror/hashing"
)

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	f := s.currentFaults()
	if r.URL.Path == "/.well-known/terraform.json" {
		s.record(r, KindDiscovery)
		if !s.authorized(w, r) {
			return
		}
		base := "/v1/providers/"
		if s.opts.AbsoluteDiscovery {
			base = s.api.URL + base
		}
		writeJSON(w, "application/json", map[string]string{"providers.v1": base, "modules.v1": "/v1/modules/"})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/providers/")
	parts := strings.Split(rest, "/")
	kind := KindOther
	switch {
	case ok && len(parts) == 3 && parts[2] == "versions":
		kind = KindVersions
	case ok && len(parts) == 6 && parts[3] == "download":
		kind = KindDownload
	}
	s.record(r, kind)
	if !s.authorized(w, r) {
		return
	}
	ct := "application/json"
	if f.ContentType != "" {
		ct = f.ContentType
	}
	switch {
	case f.RedirectLoop:
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	case f.APIStatus != 0:
		http.Error(w, "registrytest: fault", f.APIStatus)
	case kind == KindVersions:
		s.serveVersions(w, ct, parts[0], parts[1])
	case kind == KindDownload:
		s.serveDownload(w, ct, f, parts[0], parts[1], parts[2], parts[4]+"_"+parts[5])
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" || r.Header.Get("Authorization") == "Bearer "+s.opts.Token {
		return true
	}
	http.Error(w, `{"errors":["unauthorized"]}`, http.StatusUnauthorized)
	return false
}

type platformJSON struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

func (s *Server) serveVersions(w http.ResponseWriter, ct, ns, typ string) {
	type versionJSON struct {
		Version   string         `json:"version"`
		Protocols []string       `json:"protocols"`
		Platforms []platformJSON `json:"platforms"`
	}
	doc := struct {
		Versions []versionJSON `json:"versions"`
		Warnings []string      `json:"warnings"`
	}{Versions: []versionJSON{}}
	for _, key := range s.order {
		r := s.releases[key]
		if r.ns != ns || r.typ != typ {
			continue
		}
		vj := versionJSON{Version: r.version, Protocols: r.protocols, Platforms: []platformJSON{}}
		for _, plat := range sortedKeys(r.zips) {
			goos, arch, _ := strings.Cut(plat, "_")
			vj.Platforms = append(vj.Platforms, platformJSON{goos, arch})
		}
		doc.Versions = append(doc.Versions, vj)
	}
	if len(doc.Versions) == 0 {
		writeStatus(w, http.StatusNotFound)
		return
	}
	writeJSON(w, ct, doc)
}

func (s *Server) serveDownload(w http.ResponseWriter, ct string, f Faults, ns, typ, version, plat string) {
	r := s.releases[ns+"/"+typ+"/"+version]
	if r == nil || r.zips[plat] == nil {
		writeStatus(w, http.StatusNotFound)
		return
	}
	base := fmt.Sprintf("%s/%s/%s/%s/", s.files.URL, ns, typ, version)
	goos, arch, _ := strings.Cut(plat, "_")
	type key struct {
		KeyID      string `json:"key_id"`
		ASCIIArmor string `json:"ascii_armor"`
	}
	doc := map[string]any{
		"protocols":             r.protocols,
		"os":                    goos,
		"arch":                  arch,
		"filename":              r.filename(plat),
		"download_url":          base + r.filename(plat),
		"shasums_url":           base + r.sumsName(),
		"shasums_signature_url": base + r.sumsName() + ".sig",
		"shasum":                s.SHA256(ns, typ, version, plat),
		"signing_keys":          map[string][]key{"gpg_public_keys": {{KeyID: s.KeyID(), ASCIIArmor: s.armored}}},
	}
	if f.NoSigningKeys {
		doc["signing_keys"] = map[string][]key{"gpg_public_keys": {}}
	}
	if !f.NoPackages {
		pkgs := map[string]any{}
		for _, p := range sortedKeys(r.zips) {
			sum, h1 := r.digests[p], r.h1s[p]
			if f.UnsignedPackages && p != plat {
				sum, h1 = sha256.Sum256(Tamper(r.zips[p])), "h1:"+strings.Repeat("A", 43)+"="
			}
			if f.WrongPackagesH1 {
				h1 = zipH1(Tamper(r.zips[p]))
			}
			hashes := []string{fmt.Sprintf("zh:%x", sum)}
			if h1 != "" {
				hashes = append([]string{h1}, hashes...)
			}
			pkgs[p] = map[string]any{"hashes": hashes, "package_size": len(r.zips[p])}
		}
		doc["packages"] = pkgs
	}
	writeJSON(w, ct, doc)
}

func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request) {
	f := s.currentFaults()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 {
		s.record(r, KindOther)
		http.NotFound(w, r)
		return
	}
	rel := s.releases[parts[0]+"/"+parts[1]+"/"+parts[2]]
	name := parts[3]
	switch {
	case rel == nil:
		s.record(r, KindOther)
		http.NotFound(w, r)
	case name == rel.sumsName():
		s.record(r, KindSums)
		body := rel.sums
		if f.TamperSums {
			body = tamperHex(body)
		}
		writeBody(w, "text/plain; charset=utf-8", body)
	case name == rel.sumsName()+".sig":
		s.record(r, KindSig)
		switch {
		case f.MissingSig:
			http.NotFound(w, r)
		case f.UnknownKey:
			writeBody(w, "application/octet-stream", rel.sigO)
		default:
			writeBody(w, "application/octet-stream", rel.sig)
		}
	default:
		for plat, zb := range rel.zips {
			if name != rel.filename(plat) {
				continue
			}
			s.record(r, KindArchive)
			if f.TamperArchive {
				zb = Tamper(zb)
			}
			w.Header().Set("Content-Type", "application/zip")
			w.Header().Set("Content-Length", fmt.Sprint(len(zb)))
			n, _ := w.Write(zb)
			s.mu.Lock()
			s.bytes += int64(n)
			s.mu.Unlock()
			return
		}
		s.record(r, KindOther)
		http.NotFound(w, r)
	}
}

// tamperHex changes the first hex digit of a SHA256SUMS document.
func tamperHex(b []byte) []byte {
	out := append([]byte(nil), b...)
	if len(out) > 0 {
		if out[0] == '0' {
			out[0] = '1'
		} else {
			out[0] = '0'
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, ct string, v any) {
	b, _ := json.Marshal(v)
	writeBody(w, ct, b)
}

func writeBody(w http.ResponseWriter, ct string, b []byte) {
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	_, _ = w.Write(b) // a client gone: no one left to tell
}

func writeStatus(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"errors":[%q]}`, http.StatusText(code))
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NewKey makes a GPG signing key (Ed25519: quick to generate).
func NewKey(name string) (*openpgp.Entity, error) {
	return openpgp.NewEntity(name, "", "", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Curve: packet.Curve25519, Time: func() time.Time { return time.Now().Add(-time.Hour) }})
}

// ArmoredPublicKey returns e's public key, ASCII-armored, as registries
// publish it.
func ArmoredPublicKey(e *openpgp.Entity) (string, error) {
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		return "", err
	}
	if err := e.Serialize(w); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// Sign makes a binary detached signature of doc, as registries publish for
// SHA256SUMS.
func Sign(e *openpgp.Entity, doc []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := openpgp.DetachSign(&buf, e, bytes.NewReader(doc), nil); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipH1 is the h1: of a zip, as OpenTofu's registry lists it in packages;
// "" for bytes that are not a zip (a test's deliberately broken archive).
func zipH1(zb []byte) string {
	f, err := os.CreateTemp("", "registrytest-*.zip")
	if err != nil {
		return ""
	}
	defer os.Remove(f.Name())
	_, err = f.Write(zb)
	if cerr := f.Close(); err != nil || cerr != nil {
		return ""
	}
	h, err := hashing.ZipH1(f.Name(), hashing.Options{})
	if err != nil {
		return ""
	}
	return string(h)
}

// zipTime is fixed so the same files always make the same zip bytes.
var zipTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// Zip builds a zip of files (name -> content), in name order, stored
// uncompressed with fixed timestamps, so equal inputs give equal bytes.
// Names starting with "terraform-provider-" are executable.
func Zip(files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := &zip.FileHeader{Name: n, Method: zip.Store, Modified: zipTime}
		h.SetMode(0o644)
		if strings.HasPrefix(n, "terraform-provider-") {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			panic(err) // writes to a bytes.Buffer do not fail
		}
		if _, err := io.WriteString(w, files[n]); err != nil {
			panic(err) // writes to a bytes.Buffer do not fail
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// ProviderZip builds a release zip for a provider: one executable,
// terraform-provider-TYPE_vVERSION, a tiny shell script (the clients install
// it without running it). extra makes otherwise equal zips differ.
func ProviderZip(typ, version, extra string) []byte {
	name := fmt.Sprintf("terraform-provider-%s_v%s", typ, version)
	return Zip(map[string]string{name: "#!/bin/sh\n# " + typ + " " + version + " " + extra + "\nexit 1\n"})
}

// Tamper returns a zip with one byte of its first file's content changed,
// rebuilt so it is still a valid zip (of the same size when its entries are
// stored, as Zip makes them): a substituted archive that only its hash gives
// away. Input that is not a zip gets its last byte flipped instead.
func Tamper(zb []byte) []byte {
	flip := func() []byte {
		out := append([]byte(nil), zb...)
		if len(out) > 0 {
			out[len(out)-1] ^= 1
		}
		return out
	}
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil || len(zr.File) == 0 {
		return flip()
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return flip()
		}
		content, err := io.ReadAll(rc)
		_ = rc.Close() // read only
		if err != nil {
			return flip()
		}
		if i == 0 && len(content) > 0 {
			content[len(content)-1] ^= 1
		}
		h := &zip.FileHeader{Name: f.Name, Method: zip.Store, Modified: f.Modified}
		h.SetMode(f.Mode())
		w, err := zw.CreateHeader(h)
		if err == nil {
			_, err = w.Write(content)
		}
		if err != nil {
			panic(err) // writes to a bytes.Buffer do not fail
		}
	}
	if err := zw.Close(); err != nil {
		panic(err) // writes to a bytes.Buffer do not fail
	}
	return buf.Bytes()
}
