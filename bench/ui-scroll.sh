#!/usr/bin/env bash
# Scrolling and filtering a 1000-version provider in `tfmirror ui`, driven as
# a user would in a real terminal (tmux send-keys / capture-pane): the time
# from the keys being sent until the screen shows their effect, polling every
# few milliseconds (so each figure includes tmux's own latency, and esc the
# terminal's wait to tell a lone escape from the start of a sequence). A
# provider is listed 120 ms after the cursor rests on it, so that holding an
# arrow key does not list every provider passed. Expects the default 160x48
# (some of what it waits for is cut at 80 columns).
source "$(dirname "$0")/ui-lib.sh"
RUNS=${RUNS:-5}
measure() { # NAME EXPECT KEYS...: send keys, wait for EXPECT on screen
  local name=$1 expect=$2; shift 2
  local t0; t0=$(now_ms)
  tmux -S "$SOCK" send-keys "$@"
  wait_for "$expect"
  echo "$name $(( $(now_ms) - t0 ))"
}
results=$(
  for _ in $(seq "$RUNS"); do
    start_ui
    wait_for "bench/p000" "▸10.0.0" "darwin_amd64"
    tmux -S "$SOCK" send-keys Enter # focus the matrix
    measure "end-(oldest-version)" "▸0.1.0" G
    measure "home-(newest-version)" "▸10.0.0" g
    measure "100-x-down" "▸9.0.0" -N 100 Down
    measure "start-filter-(/)" "1000 of 1000 versions" /
    measure "filter-9.5-(typed)" "11 of 1000 versions" 9 . 5
    measure "clear-filter-(esc)" "present" Escape
    tmux -S "$SOCK" send-keys BTab # focus the providers
    measure "next-provider-(listed)" "p001 ─ mirror 1 ─ 1000 versions" Down
    measure "next-provider-(cursor)" "▸bench/p002" Down
    stop_ui
  done
)
echo "tfmirror ui, a provider with 1000 versions (x5 platforms), ${COLS:-160}x${ROWS:-48}, $RUNS runs; key -> screen, median ms"
for name in $(awk '{print $1}' <<<"$results" | awk '!seen[$0]++'); do
  printf '  %-24s %4s ms  (runs: %s)\n' "$name" "$(awk -v n="$name" '$1==n {print $2}' <<<"$results" | median)" "$(awk -v n="$name" '$1==n {printf "%s ", $2}' <<<"$results")"
done
