#!/bin/sh
# Instructions per task of the APIs that bench/join-instructions.sh does not cover: callgrind
# counts the whole run of bench/api_costs (and api_costs_cxx) at N and at 2N tasks on one worker,
# and prints (count(2N) - count(N)) / N, so that start-up, teardown and idle waiting cancel out.
# Each task adds one to a counter; what a figure holds is the API's own cost per task.
# usage: bench/api-instructions.sh [BUILD_DIR] [-n N]     (default build, N 20000)
set -eu
dir=build
n=20000
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=$2; shift 2 ;;
    *) dir=$1; shift ;;
    esac
done
count() { # exe case n
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
echo "instructions per task (callgrind, 1 worker, N = $n and 2N)"
for c in join for reduce future group submit cxx:join cxx:group; do
    exe=$dir/bench/api_costs
    case $c in cxx:*) exe=$dir/bench/api_costs_cxx; c=${c#cxx:} ;; esac
    [ -x "$exe" ] || continue
    one=$(count "$exe" "$c" "$n")
    two=$(count "$exe" "$c" $((2 * n)))
    awk -v e="$(basename "$exe")" -v c="$c" -v a="$one" -v b="$two" -v n="$n" \
        'BEGIN { printf "%-14s %-7s %8.1f\n", e, c, (b - a) / n }'
done
