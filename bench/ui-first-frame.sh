#!/usr/bin/env bash
# First frame of `tfmirror ui` over a filesystem mirror of 100,000 archives
# (20 providers x 1000 versions x 5 platforms, with index documents): the time
# from starting the program in a real terminal (tmux) until the screen shows
# the platform matrix of the first provider with its 1000 versions. Target:
# under 0.2 s. RUNS=n runs (default 7); COLS/ROWS the terminal size.
#
# The tmux server is started once, before the runs, and each run opens a
# session in it: starting a server took ~0.1 s of the figure on these
# machines. Beside each run, the same harness times a program that prints the
# awaited text at once (printf), which is what tmux and the polling take of
# the figure; tfmirror's own share is the difference.
source "$(dirname "$0")/ui-lib.sh"
RUNS=${RUNS:-7}
tmux -S "$SOCK" new-session -d -s keep "sleep 3600"
session() { # NAME CMD: a session running CMD; waits for it to be gone first
  while tmux -S "$SOCK" has-session -t "=$1" 2>/dev/null; do sleep 0.01; done
  tmux -S "$SOCK" new-session -d -s "$1" -x "${COLS:-160}" -y "${ROWS:-48}" "$2"
}
first=() matrix=() base=() own=()
for _ in $(seq "$RUNS"); do
  TARGET=printf
  t0=$(now_ms)
  session printf "printf 'tfmirror ─ mirrors:'; sleep 60"
  wait_for "tfmirror ─ mirrors:"
  b=$(( $(now_ms) - t0 ))
  tmux -S "$SOCK" kill-session -t printf
  TARGET=ui
  t0=$(now_ms)
  session ui "$BIN ui $MIRROR"
  wait_for "tfmirror ─ mirrors:"
  t1=$(now_ms)
  wait_for "bench/p000" "▸10.0.0" "darwin_amd64"
  t2=$(now_ms)
  tmux -S "$SOCK" send-keys -t ui q
  first+=($((t1 - t0))) matrix+=($((t2 - t0))) base+=("$b") own+=($((t1 - t0 - b)))
done
echo "tfmirror ui over $MIRROR (100,000 archives), ${COLS:-160}x${ROWS:-48}, $RUNS runs"
echo "  first frame:          $(printf '%s\n' "${first[@]}" | median) ms median (runs: ${first[*]})"
echo "  of which tmux:        $(printf '%s\n' "${base[@]}" | median) ms median (runs: ${base[*]}): the same text printed by printf"
echo "  tfmirror's own share: $(printf '%s\n' "${own[@]}" | median) ms median (runs: ${own[*]})"
echo "  matrix on screen:     $(printf '%s\n' "${matrix[@]}" | median) ms median (runs: ${matrix[*]})"
