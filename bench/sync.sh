#!/usr/bin/env bash
# Sync benchmark: tfmirror sync vs a raw parallel download, tofu and
# terraform providers mirror, and the h1: floor, for 12 and 48 archives of
# ~23 MB zips holding 60 MB executables (SYNC_ARCHIVES="12" for one size,
# ROUNDS=n to repeat). Prints the ratios.
set -euo pipefail
cd "$(dirname "$0")"
go test -run '^$' -bench '^BenchmarkSync$' -benchtime 1x -timeout 60m -v . 2>&1 | grep -vE '^(goos|goarch|pkg|cpu):' | sed -E 's/^ *[a-z_]+_test.go:[0-9]*: //'
