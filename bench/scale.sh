#!/usr/bin/env bash
# Scale figures, each beside what it is compared with, in one run:
#   fs -> fs copy of 10,000 tiny archives   tfmirror sync vs cp -r of the same tree
#   no-op re-sync of 100,000 archives       tfmirror sync vs find listing both trees with sizes
#   memory per archive                      peak RSS of no-op sync, ls and verify at 10,000 and
#                                           100,000 archives: the growth per archive between them
# RUNS=n alternating runs of each pair (default 3); the median ratio and the spread are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
BIN=$OUT/tfmirror-scale-bench
mkdir -p "$OUT"
go build -o "$BIN" .
gen() { # gen DIR PROVIDERS VERSIONS
  [ -d "$1" ] || go run ./bench/ui-genmirror -dir "$1" -providers "$2" -versions "$3" -platforms 5 >/dev/null
}
gen "$OUT/mirror10k" 10 200
gen "$OUT/mirror100k" 20 1000
RUNS=${RUNS:-3}
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
spread() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.2f-%.2f", lo, hi}'; }
rss() { # rss CMD...: peak resident KB of a command (its output discarded)
  /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1
}
# timed CMD...: runs CMD (output discarded); sets wall and cpu (user + system
# seconds, which the load of a shared machine distorts less than wall time).
timed() {
  local t0 t1
  t0=$(now)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%U %S" -o "$OUT/.cpu" "$@" >/dev/null 2>&1
    cpu=$(awk '{printf "%.2f", $1 + $2}' "$OUT/.cpu")
  else
    "$@" >/dev/null 2>&1
    cpu="?"
  fi
  t1=$(now)
  wall=$(secs "$t0" "$t1")
}

echo "== fs -> fs copy of 10,000 tiny archives (index documents stating h1: and zh:)"
# Each side writes a directory of its own that no earlier step deleted, and
# the order alternates: ext4 without a journal (these machines) skips, one by
# one, the inodes deleted in the last minute when it allocates one, which
# made whichever side ran right after a deletion pay for it (cp -r took 0.55 s
# into a fresh tree and 2.1-2.7 s after one was deleted). The trees are
# removed at the end of the script.
rm -rf "$OUT"/cp10k* "$OUT"/sync10k*
ratios=()
copy() { t0=$(now); cp -r "$OUT/mirror10k" "$OUT/cp10k.$1"; sync; c=$(secs "$t0" "$(now)"); }
mirror() { t0=$(now); "$BIN" sync "$OUT/mirror10k" "$OUT/sync10k.$1" >/dev/null 2>&1; sync; s=$(secs "$t0" "$(now)"); }
for i in $(seq "$RUNS"); do
  sync
  if [ $((i % 2)) = 1 ]; then copy "$i"; mirror "$i"; else mirror "$i"; copy "$i"; fi
  printf "  cp -r %6.2fs   tfmirror sync %6.2fs   ratio %.2f\n" "$c" "$s" "$(echo "$s / $c" | bc -l)"
  ratios+=("$(echo "$s / $c" | bc -l)")
done
printf "  ratio tfmirror / cp -r: median %.2f (runs %s; target <= 2)\n" "$(printf '%s\n' "${ratios[@]}" | median)" "$(printf '%s\n' "${ratios[@]}" | spread)"
trap 'rm -rf "$OUT"/cp10k.* "$OUT"/sync10k.*' EXIT

echo "== no-op re-sync of 100,000 archives"
[ -d "$OUT/copy100k" ] || cp -r "$OUT/mirror100k" "$OUT/copy100k"
ratios=() cratios=()
for _ in $(seq "$RUNS"); do
  timed find "$OUT/mirror100k" "$OUT/copy100k" -printf '%s\n'; f=$wall fc=$cpu
  timed "$BIN" sync "$OUT/mirror100k" "$OUT/copy100k"; s=$wall sc=$cpu
  printf "  find %6.2fs (CPU %ss)   tfmirror sync (no-op) %6.2fs (CPU %ss)   ratio %.2f\n" "$f" "$fc" "$s" "$sc" "$(echo "$s / $f" | bc -l)"
  ratios+=("$(echo "$s / $f" | bc -l)")
  [ "$cpu" = "?" ] || cratios+=("$(echo "$sc / $fc" | bc -l)")
done
printf "  ratio no-op sync / find: median %.2f (runs %s; target <= 3)\n" "$(printf '%s\n' "${ratios[@]}" | median)" "$(printf '%s\n' "${ratios[@]}" | spread)"
[ ${#cratios[@]} -eq 0 ] || printf "  CPU ratio: median %.2f (runs %s)\n" "$(printf '%s\n' "${cratios[@]}" | median)" "$(printf '%s\n' "${cratios[@]}" | spread)"

echo "== memory per archive: peak RSS growth from 10,000 to 100,000 archives (target < 1 KB)"
if [ -x /usr/bin/time ]; then
  [ -d "$OUT/copy10k" ] || cp -r "$OUT/mirror10k" "$OUT/copy10k"
  for what in "sync (no-op)" ls verify; do
    case $what in
      "sync (no-op)") small=$(rss "$BIN" sync "$OUT/mirror10k" "$OUT/copy10k"); big=$(rss "$BIN" sync "$OUT/mirror100k" "$OUT/copy100k") ;;
      ls) small=$(rss "$BIN" ls "$OUT/mirror10k" --json); big=$(rss "$BIN" ls "$OUT/mirror100k" --json) ;;
      verify) small=$(rss "$BIN" verify "$OUT/mirror10k"); big=$(rss "$BIN" verify "$OUT/mirror100k") ;;
    esac
    printf "  %-13s %6d KB at 10k, %7d KB at 100k: %5.0f B per archive\n" "$what" "$small" "$big" "$(echo "($big - $small) * 1024 / 90000" | bc -l)"
  done
else
  echo "  skipped: /usr/bin/time is not installed (apt-get install -y time)"
fi
