# Shared by the ui-* benchmarks: build the binary and the 100k-archive mirror,
# and drive tfmirror in a private tmux server (its own socket, killed on exit).
# shellcheck shell=bash
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
# TFMIRROR_BIN, when set, is the binary measured (another build, to compare
# side by side) instead of one built from this tree.
BIN=${TFMIRROR_BIN:-$OUT/tfmirror-ui-bench}
MIRROR=$OUT/mirror100k
command -v tmux >/dev/null || { echo "these benchmarks drive a real terminal: install tmux (apt-get install -y tmux)" >&2; exit 2; }
mkdir -p "$OUT"
[ -n "${TFMIRROR_BIN:-}" ] || go build -o "$BIN" .
if [ ! -d "$MIRROR" ]; then
  go run ./bench/ui-genmirror -dir "$MIRROR" -providers 20 -versions 1000 -platforms 5
fi
SOCK=$(mktemp -u "${TMPDIR:-/tmp}/tfmirror-ui-bench.XXXXXX")
trap 'tmux -S "$SOCK" kill-server 2>/dev/null || true; rm -f "$SOCK"' EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# TARGET, when set, names the session the screen is read from.
screen() { tmux -S "$SOCK" capture-pane -p ${TARGET:+-t "$TARGET"} 2>/dev/null || true; }
# wait_for PATTERN...: poll the screen every few ms until every pattern is on
# it (fixed strings); give up after 30 s.
wait_for() {
  local deadline=$(( $(now_ms) + 30000 ))
  while :; do
    local s ok=1
    s=$(screen)
    for p in "$@"; do grep -qF -- "$p" <<<"$s" || { ok=0; break; }; done
    [ "$ok" = 1 ] && return 0
    if [ "$(now_ms)" -gt "$deadline" ]; then echo "timed out waiting for: $*" >&2; screen >&2; return 1; fi
    sleep 0.002
  done
}
start_ui() { tmux -S "$SOCK" new-session -d -x "${COLS:-160}" -y "${ROWS:-48}" "$BIN ui $MIRROR"; }
stop_ui() {
  tmux -S "$SOCK" send-keys q 2>/dev/null || true
  for _ in $(seq 200); do tmux -S "$SOCK" has-session 2>/dev/null || return 0; sleep 0.01; done
  tmux -S "$SOCK" kill-server 2>/dev/null || true
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
