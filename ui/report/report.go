package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/regserve"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/format"
)

// PackageJSON is one row of `ls --json`.
type PackageJSON struct {
	Provider string         `json:"provider"`
	Version  string         `json:"version"`
	Platform string         `json:"platform"`
	Hashes   []hashing.Hash `json:"hashes"`
	Size     *int64         `json:"size,omitempty"`
	Layout   string         `json:"layout,omitempty"`
	// Signer is who signed the package's version, where the place keeps
	// its provenance and the signature checks; SignerError says why a
	// provenance the place keeps does not check.
	Signer      *provenance.Signer `json:"signer,omitempty"`
	SignerError string             `json:"signer_error,omitempty"`
	// Withheld says why serve's providers.v1 does not offer the version
	// (the place keeps no provenance of it); its network mirror does.
	Withheld string `json:"withheld,omitempty"`
}

// Packages writes archives as `ls` shows them.
func Packages(w io.Writer, as []backends.Archive, asJSON bool) error {
	return SignedPackages(w, as, nil, asJSON)
}

// SignedPackages writes archives as `ls` shows them, with who signed each
// (sigs, in the order of as, or nil) in the JSON form.
func SignedPackages(w io.Writer, as []backends.Archive, sigs []sync.Signature, asJSON bool) error {
	if asJSON {
		rows := NewPackageRows(w)
		if err := rows.Add(as, sigs); err != nil {
			return err
		}
		return rows.Close()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tVERSION\tPLATFORM\tSIZE\tHASHES")
	for _, a := range as {
		size := "-"
		if a.Size >= 0 {
			size = HumanBytes(a.Size)
		} else if a.Layout == backends.Unpacked {
			size = "unpacked"
		}
		var hs []string
		for _, h := range a.Hashes() {
			hs = append(hs, h.Short())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Provider, a.Version, a.Platform, size, strings.Join(hs, " "))
	}
	return tw.Flush()
}

// PackageRows writes the JSON array of `ls --json` as packages are listed,
// a provider's at a time: listing 100,000 archives then holds none of them
// whole.
type PackageRows struct {
	rows         *jsonArray
	lastProvider backends.Provider
	provider     string
	version      backends.VersionKey
}

// NewPackageRows starts the array on w; it writes nothing before the first
// package but "[]" on Close when there is none.
func NewPackageRows(w io.Writer) *PackageRows { return &PackageRows{rows: newJSONArray(w)} }

// Add writes the rows of as, with who signed each (sigs, in the order of
// as, or nil).
func (r *PackageRows) Add(as []backends.Archive, sigs []sync.Signature) error {
	for i, a := range as {
		if r.provider == "" || a.Provider != r.lastProvider {
			r.lastProvider, r.provider = a.Provider, a.Provider.String()
		}
		row := PackageJSON{Provider: r.provider, Version: r.version.Of(a.Version), Platform: a.Platform.String(), Hashes: a.Hashes()}
		if i < len(sigs) {
			if sigs[i].Signed != nil {
				row.Signer = &sigs[i].Signed.Signer
			}
			if sigs[i].Err != nil {
				row.SignerError = sigs[i].Err.Error()
			}
			if sigs[i].Unkept {
				row.Withheld = regserve.Withheld
			}
		}
		if row.Hashes == nil {
			row.Hashes = []hashing.Hash{}
		}
		if a.Size >= 0 {
			size := a.Size
			row.Size = &size
		}
		if a.Layout == backends.Unpacked {
			row.Layout = a.Layout.String()
		}
		if err := r.rows.add(row); err != nil {
			return err
		}
	}
	return nil
}

// Len is how many rows have been written.
func (r *PackageRows) Len() int { return r.rows.n }

// Close ends the array.
func (r *PackageRows) Close() error { return r.rows.close() }

// HashRow is one row of `hash`.
type HashRow struct {
	Path string       `json:"path"`
	H1   hashing.Hash `json:"h1"`
	ZH   hashing.Hash `json:"zh,omitempty"`
}

// Hashes writes `hash` results.
func Hashes(w io.Writer, rows []HashRow, asJSON bool) error {
	if asJSON {
		if rows == nil {
			rows = []HashRow{}
		}
		return writeJSON(w, rows)
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s\n  %s\n", r.Path, r.H1)
		if r.ZH != "" {
			fmt.Fprintf(w, "  %s\n", r.ZH)
		}
	}
	return nil
}

// FindingJSON is one row of `verify`, `diff` and `check` --json.
type FindingJSON struct {
	Provider string          `json:"provider"`
	Version  string          `json:"version"`
	Platform string          `json:"platform"`
	Status   sync.Status     `json:"status"`
	Detail   string          `json:"detail"`
	Checks   []hashing.Check `json:"checks,omitempty"`
	// The hashes each side states (diff).
	SrcHashes []hashing.Hash `json:"src_hashes,omitempty"`
	DstHashes []hashing.Hash `json:"dst_hashes,omitempty"`
	// Signer is who signed the package, where verify checked provenance.
	Signer *provenance.Signer `json:"signer,omitempty"`
}

// Findings writes per-package findings as a table or JSON.
func Findings(w io.Writer, fs []sync.Finding, asJSON bool) error {
	fw := NewFindingWriter(w, asJSON)
	if err := fw.Add(fs); err != nil {
		return err
	}
	return fw.Close()
}

// FindingWriter writes findings as Findings does, as they come (verify of
// 100,000 archives, a batch at a time): the JSON array a row at a time;
// the table, whose columns line up across all its lines, once closed,
// keeping until then each line's cells (strings shared between lines)
// rather than the findings. It counts them by status.
type FindingWriter struct {
	w      io.Writer
	json   *jsonArray
	rows   [][5]string
	tabs   bool // a cell holds what tabwriter reads: tabulated
	widths [4]int
	cells  map[string]string // one copy of each cell's text
	counts map[sync.Status]int
}

var findingHead = [5]string{"STATUS", "PROVIDER", "VERSION", "PLATFORM", "DETAIL"}

// NewFindingWriter writes findings to w, as JSON or a table.
func NewFindingWriter(w io.Writer, asJSON bool) *FindingWriter {
	fw := &FindingWriter{w: w, counts: map[sync.Status]int{}}
	if asJSON {
		fw.json = newJSONArray(w)
	} else {
		fw.cells = map[string]string{}
		fw.widths = widest([4]int{}, findingHead)
	}
	return fw
}

// Add writes, or keeps for the table, findings.
func (fw *FindingWriter) Add(fs []sync.Finding) error {
	for _, f := range fs {
		fw.counts[f.Status]++
		if fw.json != nil {
			if err := fw.json.add(findingJSON(f)); err != nil {
				return err
			}
			continue
		}
		c := fw.rowCells(f)
		fw.tabs = fw.tabs || strings.ContainsAny(c[0]+c[1]+c[2]+c[3]+c[4], "\t\n\v\f\uFFFD") // U+FFFD: also any invalid UTF-8
		fw.widths = widest(fw.widths, c)
		fw.rows = append(fw.rows, c)
	}
	return nil
}

// rowCells is a finding's line in the table, its cells shared with other
// lines where equal.
func (fw *FindingWriter) rowCells(f sync.Finding) [5]string {
	c := [5]string{string(f.Status), "-", "-", "-", advisedDetail(f)}
	if f.Package.Version != nil {
		c[1], c[2] = f.Package.Provider.String(), f.Package.Version.String()
		if f.Package.Platform != (backends.Platform{}) {
			c[3] = f.Package.Platform.String() // none: a row about every platform
		}
	}
	for i, s := range c {
		if kept, ok := fw.cells[s]; ok {
			c[i] = kept
		} else {
			fw.cells[s] = s
		}
	}
	return c
}

// Count is how many findings of status s were added.
func (fw *FindingWriter) Count(s sync.Status) int { return fw.counts[s] }

// Len is how many findings were added.
func (fw *FindingWriter) Len() int {
	n := 0
	for _, c := range fw.counts {
		n += c
	}
	return n
}

// Summary counts the findings added by status, as Summary does.
func (fw *FindingWriter) Summary() string { return summaryOf(fw.counts) }

// Close ends the JSON array, or writes the table: the columns' widths
// first, then each line as a tabwriter aligns it (a test holds the two to
// the same bytes); tabwriter itself would hold every cell of 100,000
// findings too, and more.
func (fw *FindingWriter) Close() error {
	if fw.json != nil {
		return fw.json.close()
	}
	if fw.tabs {
		return tabulated(fw.w, append([][5]string{findingHead}, fw.rows...))
	}
	bw := bufio.NewWriter(fw.w)
	writeRow(bw, fw.widths, findingHead)
	for _, c := range fw.rows {
		writeRow(bw, fw.widths, c)
	}
	return bw.Flush()
}

// tabulated writes rows of cells through a tabwriter.
func tabulated(w io.Writer, rows [][5]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c[0], c[1], c[2], c[3], c[4])
	}
	return tw.Flush()
}

// widest widens the first four columns' widths (in runes, as tabwriter
// counts them) to fit c.
func widest(widths [4]int, c [5]string) [4]int {
	for i := range widths {
		widths[i] = max(widths[i], utf8.RuneCountInString(c[i]))
	}
	return widths
}

// writeRow writes c as tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) writes a
// line of tab-separated cells: each but the last padded to its column's
// width and two spaces.
func writeRow(w *bufio.Writer, widths [4]int, c [5]string) {
	for i, width := range widths {
		w.WriteString(c[i])
		for n := utf8.RuneCountInString(c[i]); n < width+2; n++ {
			w.WriteByte(' ')
		}
	}
	w.WriteString(c[4])
	w.WriteByte('\n')
}

// findingJSON is a finding's row in --json output.
// FindingsJSON are the findings as --json states them.
func FindingsJSON(fs []sync.Finding) []FindingJSON {
	out := make([]FindingJSON, len(fs))
	for i, f := range fs {
		out[i] = findingJSON(f)
	}
	return out
}

func findingJSON(f sync.Finding) FindingJSON {
	row := FindingJSON{Status: f.Status, Detail: advisedDetail(f), SrcHashes: f.SrcHashes, DstHashes: f.DstHashes, Signer: f.Signer}
	if f.Package.Version != nil {
		row.Provider, row.Version, row.Platform = f.Package.Provider.String(), f.Package.Version.String(), f.Package.Platform.String()
	}
	if f.Result != nil {
		row.Checks = f.Result.Checks
	}
	return row
}

// Summary counts findings by status, e.g. "12 ok, 1 mismatch".
func Summary(fs []sync.Finding) string {
	counts := map[sync.Status]int{}
	for _, f := range fs {
		counts[f.Status]++
	}
	return summaryOf(counts)
}

func summaryOf(counts map[sync.Status]int) string {
	order := []sync.Status{sync.StatusOK, sync.StatusPresent, sync.StatusMissing, sync.StatusConflict, sync.StatusMismatch, sync.StatusUnavailable,
		sync.StatusNewer, sync.StatusRemove, sync.StatusKeep, sync.StatusRemoved, sync.StatusLeft, sync.StatusError}
	var parts []string
	for _, s := range order {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if len(parts) == 0 {
		return "nothing selected"
	}
	return strings.Join(parts, ", ")
}

// HumanBytes formats n as B, kB, MB, GB (format.Bytes, which the terminal
// UI shares).
func HumanBytes(n int64) string { return format.Bytes(n) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// jsonArray writes a JSON array a row at a time, byte for byte as
// writeJSON writes the whole slice: `ls --json` of 100,000 packages holds
// one row, not the array and two encodings of it.
type jsonArray struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	n   int
}

func newJSONArray(w io.Writer) *jsonArray {
	a := &jsonArray{w: bufio.NewWriter(w)}
	a.enc = json.NewEncoder(&a.buf)
	a.enc.SetIndent("  ", "  ") // an element's lines, inside the array
	a.enc.SetEscapeHTML(false)
	return a
}

func (a *jsonArray) add(row any) error {
	a.buf.Reset()
	if err := a.enc.Encode(row); err != nil {
		return err
	}
	sep := ",\n  "
	if a.n == 0 {
		sep = "[\n  "
	}
	a.n++
	a.w.WriteString(sep)
	_, err := a.w.Write(bytes.TrimSuffix(a.buf.Bytes(), []byte("\n")))
	return err
}

func (a *jsonArray) close() error {
	if a.n == 0 {
		a.w.WriteString("[]\n")
	} else {
		a.w.WriteString("\n]\n")
	}
	return a.w.Flush()
}

// VersionRow is one row of `ls registry://HOST -p ...` without --version.
type VersionRow struct {
	Provider string `json:"provider"`
	Version  string `json:"version"`
}

// Versions writes the versions a place offers, newest first.
func Versions(w io.Writer, rows []VersionRow, asJSON bool) error {
	if asJSON {
		if rows == nil {
			rows = []VersionRow{}
		}
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tVERSION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Provider, r.Version)
	}
	return tw.Flush()
}
