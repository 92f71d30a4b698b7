#!/usr/bin/env bash
# Sync benchmark (issue 5): tfmirror sync vs terraform providers mirror vs the
# physical limit, on 24 archives of ~60 MB executables. Prints the ratios.
set -euo pipefail
cd "$(dirname "$0")"
go test -run '^$' -bench '^BenchmarkSync$' -benchtime 1x -timeout 30m -v . 2>&1 | grep -vE '^(goos|goarch|pkg|cpu):' | sed 's/^ *sync_bench_test.go:[0-9]*: //'
