#!/bin/sh
# bench/lace/check-ports.sh BUILD_DIR: the ports of Lace's programs (bench/lace/fib.c,
# knapsack.c, queens.c), as built in BUILD_DIR/bench, at small sizes on 1, 2 and 4 workers: each
# answer against one computed here (fib by iteration, the knapsack by the dynamic program over
# capacities, the queens by a backtracking search row by row). ctest runs it (bench_lace_ports),
# so the ports stay correct without Lace.
set -eu
bin=${1:?usage: check-ports.sh BUILD_DIR}/bench
here=$(cd "$(dirname "$0")" && pwd)
input=$(mktemp)
trap 'rm -f "$input"' EXIT
sh "$here/knapsack-input.sh" 18 >"$input"
fib_want="fib(25) = $(awk 'BEGIN { a = 0; b = 1; for (i = 0; i < 25; i++) { t = a + b; a = b; b = t } print a }')"
knap_want="Best value is $(awk 'NR == 1 { cap = $2; next }
    { v = $1; w = $2; for (c = cap; c >= w; c--) if (best[c - w] + v > best[c]) best[c] = best[c - w] + v }
    END { print best[cap] + 0 }' "$input")"
queens_want="Result: Q(9) = $(awk 'function place(row,   c, ok, r) {
        if (row == n) return 1
        ok = 0
        for (c = 0; c < n; c++) {
            for (r = 0; r < row; r++)
                if (col[r] == c || col[r] - c == row - r || c - col[r] == row - r) break
            if (r == row) { col[row] = c; ok += place(row + 1) }
        }
        return ok
    }
    BEGIN { n = 9; print place(0) }')"
status=0
check() { # WORKERS PROGRAM OPERAND WANT: the program's answer line must be WANT
    got=$("$bin/$2" -w "$1" "$3" | grep -v -e '^Time:' -e '^running ' | head -n 1)
    if [ "$got" = "$4" ]; then
        echo "ok   $2 -w $1: $got"
    else
        echo "FAIL $2 -w $1: got '$got', want '$4'"
        status=1
    fi
}
for w in 1 2 4; do
    check "$w" lace_port_fib 25 "$fib_want"
    check "$w" lace_port_knapsack "$input" "$knap_want"
    check "$w" lace_port_queens 9 "$queens_want"
done
exit $status
