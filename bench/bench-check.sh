#!/usr/bin/env bash
# make bench-check: short, repeatable ratio benchmarks compared with bench/bench-baseline.txt.
#   bench/bench-check.sh [BUILD_DIR]   (a Release build with bench_external and bench_join)
# Each figure is a ratio against a baseline measured in the same run (the mutex-queue pool of
# bench/central_pool.c, a bare futex wake-up between two threads, or a bare spinning thread),
# or an instruction count (callgrind), so that a loaded machine moves it little. A figure worse
# than its baseline by more than the baseline's stated factor fails the check (exit 1).
# Valgrind missing: the instruction count is skipped with a message.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
baseline=$here/bench-baseline.txt
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT

echo "bench-check: load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/bench_external" --sections wakeup,batch,lone --workers 2 --samples 2000 --reps 5 \
    --jobs 300000 --csv "$csv" >/dev/null
value() { awk -F, -v s="$1" -v v="$2" -v p="$3" -v m="$4" \
    '$1 == s && $2 == v && $3 == p && $4 == m { print $5 }' "$csv"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

declare -A got
got[wakeup_p50_vs_mutex]=$(ratio "$(value wakeup worksteal 2 p50_us)" "$(value wakeup mutex 2 p50_us)")
got[wakeup_p50_vs_floor]=$(ratio "$(value wakeup worksteal 2 p50_us)" "$(value wakeup futex 2 p50_us)")
got[pool_run_p50_vs_mutex]=$(ratio "$(value wakeup ws_pool_run 2 p50_us)" "$(value wakeup mutex 2 p50_us)")
got[batch_rate_vs_mutex_1w]=$(ratio "$(value batch mutex 1 ms)" "$(value batch worksteal 1 ms)")
got[batch_rate_vs_mutex_2w]=$(ratio "$(value batch mutex 2 ms)" "$(value batch worksteal 2 ms)")
got[wakeup_p99_vs_floor]=$(ratio "$(value wakeup worksteal 2 p99_us)" "$(value wakeup futex 2 p99_us)")
got[lone_p50_vs_mutex]=$(ratio "$(value lone worksteal 1 p50_us)" "$(value lone mutex 1 p50_us)")
got[lone_p99_vs_mutex_or_floor]=$(ratio "$(value lone worksteal 1 p99_us)" "$(awk \
    -v a="$(value lone mutex 1 p99_us)" -v b="$(value lone bare_spin 1 p99_us)" \
    'BEGIN { print (a > b ? a : b) }')")
if command -v valgrind >/dev/null 2>&1; then
    # join-instructions.sh prints a table: the row of the executable, its "join", "spawn/sync",
    # "typed", "stack" and "stack (Lace)" columns.
    row=$(sh "$here/join-instructions.sh" -T "$build/bench/bench_join" |
        awk -v exe="$build/bench/bench_join" '$1 == exe')
    got[join_instructions]=$(echo "$row" | awk '{ print $2 }')
    got[spawn_sync_instructions]=$(echo "$row" | awk '{ print $3 }')
    got[typed_instructions]=$(echo "$row" | awk '{ print $6 }')
    got[stack_instructions]=$(echo "$row" | awk '{ print $7 }')
    got[stack_lace_instructions]=$(echo "$row" | awk '{ print $8 }')
else
    echo "bench-check: valgrind not found, instructions per join not checked"
fi

status=0
printf '%-26s %10s %10s %8s %s\n' figure measured baseline margin verdict
while read -r name base margin better; do
    [[ -z $name || $name == \#* ]] && continue
    [[ -n ${got[$name]:-} ]] || continue
    verdict=$(awk -v g="${got[$name]}" -v b="$base" -v m="$margin" -v d="$better" 'BEGIN {
        bad = (d == "lower") ? (g > b * m) : (g < b / m); print bad ? "WORSE" : "ok" }')
    printf '%-26s %10s %10s %7sx %s (%s is better)\n' "$name" "${got[$name]}" "$base" "$margin" \
        "$verdict" "$better"
    [[ $verdict == ok ]] || status=1
done <"$baseline"
exit $status
