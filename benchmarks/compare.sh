#!/usr/bin/env bash
# compare.sh benchmarks breaker against its peer libraries in one run, prints a benchstat
# table with one column per library, and then breaker's median ns/op as a ratio of each peer's.
#
# Usage:
#   ./compare.sh                  run the benchmarks, then print the tables
#   ./compare.sh results.txt      only print the tables for an earlier run's results
#
# Environment (for a run):
#   COUNT      runs of each benchmark (default 10)
#   CPU        GOMAXPROCS values, go test -cpu (default 1,2)
#   BENCH      go test -bench pattern (default .)
#   BENCHTIME  go test -benchtime (default: go test's own, 1s)
#   OUT        results file (default results.txt next to this script)
set -euo pipefail

# benchstat is run with go run at this pinned version, so nothing is installed by hand.
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

here=$(cd "$(dirname "$0")" && pwd)

if [[ $# -gt 1 ]]; then
	echo "usage: $0 [results-file]" >&2
	exit 2
fi

if [[ $# -eq 1 ]]; then
	out=$1
else
	out=${OUT:-$here/results.txt}
fi
# Resolve a relative path against the caller's directory before changing to the module's.
[[ $out == /* ]] || out=$PWD/$out
cd "$here"

if [[ $# -eq 0 ]]; then
	args=(-run '^$' -bench "${BENCH:-.}" -benchmem -count "${COUNT:-10}" -cpu "${CPU:-1,2}")
	if [[ -n ${BENCHTIME:-} ]]; then
		args+=(-benchtime "$BENCHTIME")
	fi
	echo "go test ${args[*]} . > $out" >&2
	go test "${args[@]}" . | tee "$out"
	echo
fi

# benchstat splits columns only by key=value parts of a name, and a part like "/gobreaker"
# has no key. So benchstat reads a copy in which BenchmarkPass/gobreaker is renamed
# BenchmarkPass/lib=gobreaker, and -col /lib gives one column per library, breaker first
# (the results list it first) and so the base of each "vs base" comparison.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
sed -E 's#^(Benchmark[^/[:space:]]+)/#\1/lib=#' "$out" >"$tmp"
go run "$BENCHSTAT" -col /lib "$tmp"

echo
echo "breaker's median ns/op divided by each peer's (below 1: breaker is faster):"
go run ./internal/ratio "$out"
