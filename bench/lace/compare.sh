#!/usr/bin/env bash
# bench/lace/compare.sh: worksteal's typed tasks beside Lace on Lace's own benchmark programs,
# fib, knapsack and queens (benchmarks/NAME/NAME-lace.c), each run as it is and as ported to
# WS_TASK_n (bench/lace/NAME.c: the same algorithm, inputs and output lines). Lace's dfs is
# left out: its leaves' results are unused, and gcc drops their work in Lace's build (its time
# does not change with the grain), so it would measure the compiler, not the scheduler.
#
#   bash bench/lace/compare.sh [--build DIR] [--scratch DIR] [--programs LIST] [--fib N]
#                              [--items N] [--queens N] LACE_SRC_DIR [ROUNDS]
#
#   LACE_SRC_DIR  a Lace source tree (made for 1.4.2: git archive of its repository, untouched)
#   ROUNDS        rounds of runs (default 5); a cell's time is the median over the rounds, and
#                 three worksteal/Lace ratios follow: of the medians, the median of the rounds'
#                 own ratios (paired: a round's two runs are adjacent), and of the best runs
#   --build DIR   this repository's CMake build directory with libworksteal.a (default build/,
#                 built if missing; a Release build, as `make build` makes)
#   --scratch DIR where Lace is copied and built (default: a new directory under /tmp)
#   --fib N       fib's argument (default 42: 0.5 to 2 s a run on the project's 2-core machine)
#   --items N     knapsack items (default 28)
#   --queens N    queens' board size (default 13)
#   --programs L  a comma-separated subset of fib,knapsack,queens (default: all)
#
# Lace is built with its own CMake in Release (its library with its flags, -O3 -march=native;
# its benchmarks with -O3 -flto). The ports are compiled the way Lace compiles its benchmarks
# (-O3 -DNDEBUG -flto) and linked with this repository's static library, which keeps its own
# Release flags (no -march=native, docs/scheduler.md). Lace 1.4.2's knapsack reader expects 3
# fields from a 2-field fscanf and so rejects every input with items; the copy in the scratch
# directory has that one test corrected (said when it is done), nothing else.
#
# The knapsack input is bench/lace/knapsack-input.sh's: N items from examples/knapsack.c's
# formula, the capacity half their total weight.
#
# In each round every cell (program, workers) runs Lace, then worksteal; 1-worker runs are pinned
# to CPU 0 with taskset, 2-worker runs are not pinned. The time is each program's own "Time:"
# line (the root's run, not the start-up). Each pair's other output lines (the answer) must
# agree, or the script fails.
# Not part of CI or `make test`: it needs a Lace source tree.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$repo/build
scratch=
fib_n=42
items=28
queens_n=13
programs=fib,knapsack,queens
usage() {
    sed -n 's/^#   bash/usage: bash/p' "$0" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --scratch) scratch=$2; shift 2 ;;
    --fib) fib_n=$2; shift 2 ;;
    --items) items=$2; shift 2 ;;
    --queens) queens_n=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "compare.sh: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
lace_src=$(cd "$1" 2>/dev/null && pwd) || { echo "compare.sh: $1 is not a directory" >&2; exit 2; }
rounds=${2:-5}
programs=${programs//,/ }
for p in $programs; do
    case $p in
    fib | knapsack | queens) ;;
    *) echo "compare.sh: unknown program $p" >&2; usage ;;
    esac
    f=benchmarks/$p/$p-lace.c
    [ -f "$lace_src/$f" ] || { echo "compare.sh: $lace_src has no $f: not a Lace tree" >&2; exit 2; }
done
command -v taskset >/dev/null || { echo "compare.sh: taskset (util-linux) is needed" >&2; exit 2; }
[ -n "$scratch" ] || scratch=$(mktemp -d /tmp/ws-lace.XXXXXX)
mkdir -p "$scratch"
jobs=$(nproc 2>/dev/null || echo 2)
jobs=$((jobs < 2 ? jobs : 2)) # the machine is shared

# ---- Lace, from a copy of the given tree ----
lace_version=$(sed -n 's/^ *VERSION \([0-9.]*\).*/\1/p' "$lace_src/CMakeLists.txt" | head -n 1)
echo "Lace ${lace_version:-?} from $lace_src, built in $scratch/lace-build"
rm -rf "$scratch/lace-src"
cp -R "$lace_src" "$scratch/lace-src"
knap_src=$scratch/lace-src/benchmarks/knapsack/knapsack-lace.c
if grep -q '&items\[i\]\.weight) != 3)' "$knap_src"; then
    sed -i 's/&items\[i\]\.weight) != 3)/\&items[i].weight) != 2)/' "$knap_src"
    echo "  knapsack-lace.c: the item reader's test corrected to 2 fields (the copy only)"
fi
cmake -S "$scratch/lace-src" -B "$scratch/lace-build" -DCMAKE_BUILD_TYPE=Release \
    -DLACE_BUILD_TESTS=OFF >"$scratch/lace-build.log" 2>&1 ||
    { cat "$scratch/lace-build.log" >&2; exit 1; }
# shellcheck disable=SC2046 # one target per program
cmake --build "$scratch/lace-build" -j "$jobs" --target $(printf '%s-lace ' $programs) \
    >>"$scratch/lace-build.log" 2>&1 || { cat "$scratch/lace-build.log" >&2; exit 1; }
lace_bin=$scratch/lace-build/benchmarks

# ---- the ports, against this repository's static library ----
if [ ! -f "$build/libworksteal.a" ]; then
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j "$jobs" --target worksteal_static >/dev/null
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
echo "worksteal $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?'), $build/libworksteal.a (${build_type:-unknown} build)"
[ "$build_type" = Release ] || echo "  warning: not a Release build; the figures mean little"
libs="-pthread"
# (grep reads all of nm's output: with -q, nm could die of SIGPIPE and fail the pipeline)
if nm "$build/libworksteal.a" 2>/dev/null | grep ' U hwloc_' >/dev/null; then
    libs="$libs -lhwloc"
fi
for p in $programs; do
    # shellcheck disable=SC2086 # $libs is a list of flags
    ${CC:-cc} -std=c11 -O3 -DNDEBUG -flto -DWS_STATIC_LINK -I"$repo/include" "$here/$p.c" \
        "$build/libworksteal.a" $libs -o "$scratch/$p-ws"
done

# ---- the knapsack input ----
knap_in=$scratch/knapsack-$items.txt
sh "$here/knapsack-input.sh" "$items" >"$knap_in"

# ---- the runs ----
# run OUT PIN EXE ARGS...: runs one program (under taskset -c PIN unless PIN is -), appends its
# time to OUT.times and its answer (its first line) to OUT.answers.
run() {
    local out=$1 pin=$2
    shift 2
    local text
    if [ "$pin" = - ]; then
        text=$("$@")
    else
        text=$(taskset -c "$pin" "$@")
    fi
    echo "$text" | sed -n 's/^Time: *//p' >>"$out.times"
    echo "$text" | grep -v '^Time:' | paste -sd '|' >>"$out.answers"
}

# args PROGRAM: its operands; title PROGRAM: its name in the table.
args() {
    case $1 in
    fib) echo "$fib_n" ;;
    knapsack) echo "$knap_in" ;;
    queens) echo "$queens_n" ;;
    esac
}
title() {
    case $1 in
    fib) echo "fib($fib_n)" ;;
    knapsack) echo "knapsack($items)" ;;
    queens) echo "queens($queens_n)" ;;
    esac
}

cells=$(for p in $programs; do printf '%s:1 %s:2 ' "$p" "$p"; done)
rm -f "$scratch"/*.times "$scratch"/*.answers
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds; $(for p in $programs; do printf '%s ' "$(title "$p")"; done)"
for r in $(seq 1 "$rounds"); do
    printf '  round %d of %d ...\r' "$r" "$rounds" >&2
    for cell in $cells; do
        prog=${cell%:*} w=${cell#*:}
        pin=-
        [ "$w" = 1 ] && pin=0
        run "$scratch/$prog-$w-lace" "$pin" "$lace_bin/$prog-lace" -w "$w" "$(args "$prog")"
        run "$scratch/$prog-$w-ws" "$pin" "$scratch/$prog-ws" -w "$w" "$(args "$prog")"
    done
done
printf '%30s\r' '' >&2
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }'; }

status=0
echo
printf '%-18s %7s  %-24s %-24s %-8s %-8s %s\n' program workers "Lace median (range), s" \
    "worksteal median (range)" "medians" "paired" "best"
for cell in $cells; do
    prog=${cell%:*} w=${cell#*:}
    lace=$scratch/$prog-$w-lace ws=$scratch/$prog-$w-ws
    name=$(title "$prog")
    lm=$(median "$lace.times") wm=$(median "$ws.times")
    # Three worksteal/Lace ratios: of the medians; the median of each round's own ratio (the two
    # runs of a round are adjacent, so a slow minute of the machine slows both); of the best runs.
    paste "$ws.times" "$lace.times" | awk '{ print $1 / $2 }' >"$ws.ratios"
    printf '%-18s %7s  %-24s %-24s %-8.2f %-8.2f %.2f\n' "$name" "$w" "$lm ($(range "$lace.times"))" \
        "$wm ($(range "$ws.times"))" "$(awk -v a="$wm" -v b="$lm" 'BEGIN { print a / b }')" \
        "$(median "$ws.ratios")" \
        "$(awk -v a="$(sort -g "$ws.times" | head -n 1)" -v b="$(sort -g "$lace.times" | head -n 1)" \
            'BEGIN { print a / b }')"
    # Every run of both programs must have given the one same answer.
    if [ "$(sort -u "$lace.answers" "$ws.answers" | wc -l)" != 1 ]; then
        echo "  DIFFERENT ANSWERS: Lace $(sort -u "$lace.answers" | paste -sd,), worksteal" \
            "$(sort -u "$ws.answers" | paste -sd,)"
        status=1
    fi
done
for p in $programs; do echo "$(title "$p"): $(head -n 1 "$scratch/$p-1-ws.answers")"; done
exit $status
