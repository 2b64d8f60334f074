#!/bin/sh
# Instructions per fork whose child is not stolen, counted by callgrind inside the root
# functions of bench_join only (not the pool's start-up or idle workers), one worker:
#   join         (root_ws - root_serial) / joins: ws_join against the same recursion as calls
#   spawn/sync   (root_spawn - root_serial) / joins: ws_spawn/ws_sync, the same way
#   issue method (root_ws - root_plain) / joins and (root_spawn - root_plain) / joins: against
#                the plain recursive fib compiled at gcc -O2
#   task         (root_stack - root_plain) / joins: the typed tasks (WS_TASK_1: the frame on
#                the worker's task stack, the worker a hidden parameter, the argument and result
#                typed, the child called directly at the sync) in bench_join's fib (spawn
#                fib(n-2), call fib(n-1), a long result) against the plain fib, which computes
#                the same thing the same way
#   task (Lace)  (root_stack_lace - root_plain) / joins: the same in fib as Lace's benchmark
#                writes it (spawn fib(n-1), call fib(n-2), an int result)
# (The roots keep the names of 0.1, where these were the stack tasks, WS_STACK_TASK_1; 0.1's
# other typed layer, root_typed, is not measured.)
# joins = fib(n + 1) - 1. Each executable given is measured (e.g. the static and the shared
# build, or an older build for a before/after comparison; a root it lacks prints "-").
# Beside the counts, ns per fork at one worker from a timed run of the same executable
# (bench_join 30 5: medians of 5 interleaved runs; join and spawn/sync over the same calls,
# the typed tasks over the plain fib), wall-clock and so only as steady as the machine; -T
# leaves it out.
# usage: bench/join-instructions.sh [bench_join ...] [-n N] [-T]
set -eu
n=20
timed=1
exes=""
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=$2; shift 2 ;;
    -T) timed=0; shift ;;
    *) exes="$exes $1"; shift ;;
    esac
done
[ -n "$exes" ] || exes=build/bench/bench_join
count() { # exe root
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$2" \
        --callgrind-out-file=/dev/null "$1" --callgrind "$n" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
joins=$(awk -v n="$n" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print a - 1 }')
ns() { # exe label: the figure of bench_join's "cost of a LABEL" line, or "-"
    echo "$times" | sed -n "s|.*cost of a $2 *\([0-9.]*\) ns.*|\1|p" | grep . || echo -
}
echo "fib($n): $joins forks; instructions per fork (callgrind, 1 worker)"
[ $timed = 0 ] || echo "and ns per fork, 1 worker (bench_join 30 5, wall-clock)"
printf '%-32s %6s %11s %13s %19s %8s %15s' executable join spawn/sync "join (issue)" \
    "spawn/sync (issue)" task "task (Lace)"
[ $timed = 0 ] && echo || printf ' %8s %8s %8s %8s\n' "ns join" "ns s/s" "ns task" "ns Lace"
for exe in $exes; do
    ws=$(count "$exe" root_ws)
    serial=$(count "$exe" root_serial)
    spawn=$(count "$exe" root_spawn)
    plain=$(count "$exe" root_plain)
    stack=$(count "$exe" root_stack)
    lace=$(count "$exe" root_stack_lace)
    awk -v e="$exe" -v ws="$ws" -v sp="$spawn" -v s="$serial" -v p="$plain" -v st="$stack" -v la="$lace" -v j="$joins" '
        function per(x, base) { return (x > 0 && base > 0) ? sprintf("%.1f", (x - base) / j) : "-" }
        BEGIN { printf "%-32s %6s %11s %13s %19s %8s %15s", e, per(ws, s), per(sp, s), per(ws, p), per(sp, p), per(st, p), per(la, p) }'
    if [ $timed = 0 ]; then
        echo
        continue
    fi
    times=$("$exe" 30 5 2>&1 || true)
    # before 0.2 the typed tasks' line was "cost of a stack fork" ("typed fork" was the old layer's)
    task=$(ns "$exe" "stack fork")
    [ "$task" != - ] || task=$(ns "$exe" "typed fork")
    printf ' %8s %8s %8s %8s\n' "$(ns "$exe" join)" "$(ns "$exe" spawn/sync)" "$task" \
        "$(ns "$exe" "Lace fork")"
done
