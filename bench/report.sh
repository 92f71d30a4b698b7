#!/usr/bin/env bash
# The performance report, in one run: each figure next to the limit or the
# peer it is compared with, and the ratio. Takes a few minutes; run it on a
# quiet machine (figures from a loaded one mean little). Raw outputs go to
# bench/out/.
#
#   sync throughput      tfmirror sync (registry -> fs) vs the limit: the larger
#                        of a raw parallel download and h1 of the same files on
#                        all cores; and vs terraform providers mirror
#   no-op re-sync        the same sync again, vs the first run
#   hashing              h1: and zh: MB/s vs plain sha256 on one core
#   OCI push             tfmirror sync fs -> oci vs the same blobs and manifests
#                        pushed with plain HTTP requests
#   S3 sync              tfmirror sync fs -> s3:// (versitygw, loopback TLS) vs
#                        the same bytes PUT with the AWS SDK; no-op re-sync
#   S3 listing           ls and no-op re-sync of a bucket of 10,000 archives
#   network mirror ls    20 providers x 30 versions over loopback TLS
#   TUI first frame      tfmirror ui over a 100,000-archive mirror, in tmux
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
mkdir -p "$OUT"
echo "machine: $(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"

gotest() { # gotest PKG BENCH FILE
  go test -run '^$' -bench "$2" -benchtime "${BENCHTIME:-1x}" -timeout 30m -v "$1" >"$OUT/$3" 2>&1 || { cat "$OUT/$3"; exit 1; }
}

echo "== sync (24 archives of ~60 MB executables from a local origin registry)"
gotest ./bench '^BenchmarkSync$' sync.txt
grep -E '^\s+sync_bench_test.go:[0-9]+: (\(|ratios|  )' "$OUT/sync.txt" | sed -E 's/^\s+sync_bench_test.go:[0-9]+: /  /'

echo "== hashing (one 50 MB zip of Go binary bytes, one core)"
BENCHTIME=5x gotest ./hashing '^BenchmarkHash$' hash.txt
grep -E '^BenchmarkHash/.*MB/s' "$OUT/hash.txt" | awk '{printf "  %-40s %10s MB/s\n", $1, $(NF-1)}'

echo "== OCI push (24 zips into the distribution registry, TLS)"
gotest ./bench '^BenchmarkOCIPush$' oci.txt
grep -E '(tfmirror sync fs|plain HTTP|ratio)' "$OUT/oci.txt" | sed -E 's/^\s+[a-z_]+_test.go:[0-9]+: /  /'

echo "== S3 (versitygw over loopback TLS): sync of 24 zips, listing of 10,000 archives"
gotest ./bench '^BenchmarkS3(Sync|List)$' s3.txt
grep -E '(\(a\)|\(b\)|\(R\)|\(H\)|\(l\)|\(d\)|\(n\)|ratios)' "$OUT/s3.txt" | sed -E 's/^\s+[a-z0-9_]+_test.go:[0-9]+: /  /'

echo "== network mirror listing (20 providers x 30 versions, loopback TLS)"
BENCHTIME=10x gotest ./backends/netmirror '^BenchmarkListNetworkMirror$' netmirror.txt
grep -E '^BenchmarkListNetworkMirror.*ns/op' "$OUT/netmirror.txt" | awk '{printf "  %.1f ms per listing\n", $3/1e6}'

echo "== TUI first frame (100,000 archives)"
if command -v tmux >/dev/null; then
  RUNS=${RUNS:-5} bash bench/ui-first-frame.sh | sed 's/^/  /'
else
  echo "  skipped: tmux is not installed (apt-get install -y tmux)"
fi
