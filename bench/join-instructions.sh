#!/bin/sh
# Instructions per ws_join whose child is not stolen, counted by callgrind inside the root
# function only: (count(root_ws) - count(root_serial)) / joins, joins = fib(n + 1) - 1.
# usage: bench/join-instructions.sh [path/to/bench_join] [n]
set -eu
exe=${1:-build/bench/bench_join}
n=${2:-20}
count() {
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$1" \
        --callgrind-out-file=/dev/null "$exe" --callgrind "$n" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
ws=$(count root_ws)
serial=$(count root_serial)
joins=$(awk -v n="$n" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print a - 1 }')
awk -v ws="$ws" -v s="$serial" -v j="$joins" -v n="$n" 'BEGIN {
    printf "fib(%d): %d joins; instructions: ws %d, serial %d\n", n, j, ws, s
    printf "instructions per join: %.1f\n", (ws - s) / j }'
