#!/usr/bin/env bash
# The performance report, in one run: each figure next to what it is
# compared with, and the ratio. Takes a quarter of an hour; the machine is
# shared, so ROUNDS=n repeats the sync and push figures (each round's ratios
# are measured with both sides under the same load) and RUNS=n the scale
# ones; report the spread. Raw outputs go to bench/out/.
#
#   sync             registry -> fs, 12 and 48 archives of ~23 MB zips holding 60 MB executables:
#                    vs a raw parallel download of the same files, tofu and terraform
#                    providers mirror; --hashes all, verify and lock vs the all-core h1: floor
#                    with the standard library's inflater
#   hashing          h1: and zh: MB/s vs dirhash.HashZip and plain sha256 on one core
#   OCI push         12 zips: tfmirror push and sync vs oras, crane and regctl pushing the
#                    same layout (installed here with the Go toolchain), and plain HTTP
#   scale            fs -> fs of 10,000 tiny archives vs cp -r; no-op re-sync of 100,000 vs
#                    find; memory per archive (bench/scale.sh)
#   S3               tfmirror sync fs -> s3:// (versitygw, loopback TLS; a mirror stating zh:, and bare zips) vs the same bytes
#                    PUT with the AWS SDK, unsigned and signed with their SHA-256 (server CPU beside each);
#                    ls and no-op re-sync of a bucket of 10,000 archives
#   network mirror   20 providers x 30 versions over loopback TLS
#   TUI first frame  tfmirror ui over a 100,000-archive mirror, in tmux
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
mkdir -p "$OUT"
# Everything below is also kept in bench/out/report.txt, and written into
# docs/performance-report.md at the end, which docs/performance.md reads.
{
echo "machine: $(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"

gotest() { # gotest PKG BENCH FILE
  go test -run '^$' -bench "$2" -benchtime "${BENCHTIME:-1x}" -timeout 60m -v "$1" >"$OUT/$3" 2>&1 || { cat "$OUT/$3"; exit 1; }
}
figures() { grep -E '^\s+[a-z_]+_test.go:[0-9]+: ' "$1" | sed -E 's/^\s+[a-z_]+_test.go:[0-9]+: /  /'; }

# Peers for the OCI figures, built once with the Go toolchain and cached.
TOOLS=${XDG_CACHE_HOME:-$HOME/.cache}/tfmirror-tools/bin
mkdir -p "$TOOLS"
for t in oras.land/oras/cmd/oras@v1.3.6 github.com/google/go-containerregistry/cmd/crane@v0.22.1 github.com/regclient/regclient/cmd/regctl@v0.11.7; do
  name=$(basename "${t%@*}")
  [ -x "$TOOLS/$name" ] || GOBIN=$TOOLS go install "$t" >/dev/null 2>&1 || echo "note: $name did not install ($t); its figure is skipped"
done
export TFMIRROR_TOOLS=$TOOLS

echo "== sync from an origin registry (12 and 48 archives)"
gotest ./bench '^BenchmarkSync$' sync.txt
figures "$OUT/sync.txt"

echo "== hashing (one 50 MB zip of Go binary bytes, one core)"
BENCHTIME=5x gotest ./hashing '^BenchmarkHash$' hash.txt
grep -E '^BenchmarkHash/.*MB/s' "$OUT/hash.txt" | awk '{printf "  %-40s %10s MB/s\n", $1, $(NF-1)}'

echo "== OCI push (12 zips into the distribution registry, TLS)"
gotest ./bench '^BenchmarkOCIPush$' oci.txt
figures "$OUT/oci.txt"

echo "== scale"
bash bench/scale.sh | tee "$OUT/scale.txt" | sed 's/^/  /'

echo "== S3 (versitygw over loopback TLS): sync of 24 zips, listing of 10,000 archives"
gotest ./bench '^BenchmarkS3(Sync|List)$' s3.txt
grep -E '(\(a\)|\(b\)|\(c\)|\(R\)|\(H\)|\(l\)|\(d\)|\(n\)|ratios|round)' "$OUT/s3.txt" | sed -E 's/^\s+[a-z0-9_]+_test.go:[0-9]+: /  /'

echo "== network mirror listing (20 providers x 30 versions, loopback TLS)"
BENCHTIME=10x gotest ./backends/netmirror '^BenchmarkListNetworkMirror$' netmirror.txt
grep -E '^BenchmarkListNetworkMirror.*ns/op' "$OUT/netmirror.txt" | awk '{printf "  %.1f ms per listing\n", $3/1e6}'

echo "== TUI first frame (100,000 archives; target 0.2 s)"
if command -v tmux >/dev/null; then
  RUNS=${RUNS:-5} bash bench/ui-first-frame.sh | sed 's/^/  /'
else
  echo "  skipped: tmux is not installed (apt-get install -y tmux)"
fi
} 2>&1 | tee "$OUT/report.txt"
{
  echo "# Performance report"
  echo
  echo "The last full run of \`bash bench/report.sh\` ($(date -u +%Y-%m-%d), ROUNDS=${ROUNDS:-1} RUNS=${RUNS:-1}), as it printed it;"
  echo "[performance.md](performance.md) says what each figure is compared with and why."
  echo
  echo '```text'
  cat "$OUT/report.txt"
  echo '```'
} >docs/performance-report.md
