#!/bin/sh
# Instructions per fork whose child is not stolen, counted by callgrind inside the root
# functions of bench_join only (not the pool's start-up or idle workers), one worker:
#   join         (root_ws - root_serial) / joins: ws_join against the same recursion as calls
#   spawn/sync   (root_spawn - root_serial) / joins: the typed spawn/sync layer, the same way
#   issue method (root_ws - root_plain) / joins and (root_spawn - root_plain) / joins: against
#                the plain recursive fib compiled at gcc -O2
#   typed        (root_typed - root_plain) / joins: the typed layer (WS_TASK_1, where the
#                argument and result are typed and the child is called directly at the sync)
#                against the plain fib, which computes the same thing the same way
# joins = fib(n + 1) - 1. Each executable given is measured (e.g. the static and the shared
# build, or an older build for a before/after comparison; a root it lacks prints "-").
# usage: bench/join-instructions.sh [bench_join ...] [-n N]
set -eu
n=20
exes=""
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=$2; shift 2 ;;
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
echo "fib($n): $joins forks; instructions per fork (callgrind, 1 worker)"
printf '%-32s %6s %11s %13s %19s %7s\n' executable join spawn/sync "join (issue)" "spawn/sync (issue)" typed
for exe in $exes; do
    ws=$(count "$exe" root_ws)
    serial=$(count "$exe" root_serial)
    spawn=$(count "$exe" root_spawn)
    plain=$(count "$exe" root_plain)
    typed=$(count "$exe" root_typed)
    awk -v e="$exe" -v ws="$ws" -v sp="$spawn" -v s="$serial" -v p="$plain" -v ty="$typed" -v j="$joins" '
        function per(x, base) { return (x > 0 && base > 0) ? sprintf("%.1f", (x - base) / j) : "-" }
        BEGIN { printf "%-32s %6s %11s %13s %19s %7s\n", e, per(ws, s), per(sp, s), per(ws, p), per(sp, p), per(ty, p) }'
done
