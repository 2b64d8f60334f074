#!/usr/bin/env bash
# futures-syscalls.sh: futex calls per future of a futures workload (bench_futures --once), at
# 1 and 2 workers, counted by strace -f -c -e trace=futex.
#
#   bash bench/futures-syscalls.sh [BUILD_DIR] [WORKLOAD] [SMALL] [BIG]
#
# Defaults: build, fib, 20, 27 (nqueens: 8 and 11; sum: 65536 and 4194304 elements). A run also
# makes the calls of starting and stopping its pool (thread creation, the workers' first parks,
# the wake-ups of ws_pool_destroy). So each worker count runs the workload at SMALL and at BIG on
# fresh pools, and the calls per future are the difference of their futex calls over the
# difference of their futures: the pool's fixed cost cancels out. The raw counts are printed
# too.
set -euo pipefail

build=${1:-build}
workload=${2:-fib}
case $workload in
fib) sizes="20 27" ;;
nqueens) sizes="8 11" ;;
sum) sizes="65536 4194304" ;;
*)
    echo "futures-syscalls.sh: the workload is fib, nqueens or sum, not '$workload'" >&2
    exit 2
    ;;
esac
read -r small big <<<"$sizes"
small=${3:-$small}
big=${4:-$big}
exe=$build/bench/bench_futures
if [[ ! -x $exe ]]; then
    echo "futures-syscalls.sh: $exe not found (cmake --build $build --target bench_futures)" >&2
    exit 2
fi
if ! command -v strace >/dev/null; then
    echo "futures-syscalls.sh: strace not found (Debian: apt-get install -y strace)" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs the workload at size n once on p workers under strace; prints "<futures> <futex calls>".
count() {
    local p=$1 n=$2 out=$tmp/out summary=$tmp/strace
    strace -f -c -e trace=futex -o "$summary" "$exe" --once "$workload" --"$workload" "$n" \
        --workers "$p" >"$out"
    if ! grep -q ' ok$' "$out"; then
        echo "futures-syscalls.sh: $workload($n) on $p workers failed: $(cat "$out")" >&2
        exit 1
    fi
    local futures calls
    futures=$(awk '{print $2}' "$out")
    # the summary's futex row: % time, seconds, usecs/call, calls, [errors,] syscall
    calls=$(awk '$NF == "futex" {print $4}' "$summary")
    echo "$futures ${calls:-0}"
}

printf '%7s %26s %26s %16s\n' workers "$workload($small): fut, futex" \
    "$workload($big): fut, futex" "futex per future"
for p in 1 2; do
    read -r fs cs < <(count "$p" "$small")
    read -r fb cb < <(count "$p" "$big")
    per=$(awk -v a="$cb" -v b="$cs" -v x="$fb" -v y="$fs" 'BEGIN {printf "%.6f", (a - b) / (x - y)}')
    printf '%7s %26s %26s %16s\n' "$p" "$fs, $cs" "$fb, $cb" "$per"
done
