#!/usr/bin/env bash
# First frame of `tfmirror ui` over a filesystem mirror of 100,000 archives
# (20 providers x 1000 versions x 5 platforms, with index documents): the time
# from starting the program in a real terminal (tmux) until the screen shows
# the platform matrix of the first provider with its 1000 versions. Target:
# under 0.2 s. RUNS=n runs (default 7); COLS/ROWS the terminal size.
source "$(dirname "$0")/ui-lib.sh"
RUNS=${RUNS:-7}
first=() matrix=()
for _ in $(seq "$RUNS"); do
  t0=$(now_ms)
  start_ui
  wait_for "tfmirror ─ mirrors:"
  t1=$(now_ms)
  wait_for "bench/p000" "▸10.0.0" "darwin_amd64"
  t2=$(now_ms)
  first+=($((t1 - t0))) matrix+=($((t2 - t0)))
  stop_ui
done
echo "tfmirror ui over $MIRROR (100,000 archives), ${COLS:-160}x${ROWS:-48}, $RUNS runs"
echo "  first frame:          $(printf '%s\n' "${first[@]}" | median) ms median (runs: ${first[*]})"
echo "  matrix on screen:     $(printf '%s\n' "${matrix[@]}" | median) ms median (runs: ${matrix[*]})"
