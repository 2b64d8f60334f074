#!/usr/bin/env bash
# neighbours.sh: how much each runtime slows down when CPU-bound programs run beside it.
#
#   bash bench/neighbours.sh [options] [BUILD_DIR]     (default: build; needs bench/ws-bench)
#
# Each runtime (worksteal, Rayon, oneTBB, OpenMP tasks, the mutex pool) runs fib, nqueens and the
# tree (uts) on P workers alone, and beside N busy-loop processes ("hogs") that this script starts
# before the run and kills after it. A runtime that spins or yields while the hogs want the CPU
# takes their time and its own workers' time alike; one that gives way loses only its fair share:
# with P + N runnable threads on C CPUs, (P + N) / C times its time alone.
#
# Beside the times it prints the CPU time each runtime's process used per run, alone and loaded:
# more CPU beside the hogs is time its waiting threads spun or yielded while the hogs wanted the
# CPUs. The measurements are ws-bench's own: each is one `ws-bench --child` process (the protocol
# at the top of bench/ws_bench.c), which runs the workload, checks its answer and prints one R
# line with the time and the CPU time of its runs.
# Alone and loaded runs alternate within each round (which comes first alternates too), so that a
# change in the machine's load falls on both; a time is the median of the rounds' medians.
# Exits non-zero if an answer was wrong, a run failed or timed out, or a hog was not running
# throughout its loaded run (then that run was not loaded).
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bash bench/neighbours.sh [options] [BUILD_DIR]
  --hogs N           busy-loop processes beside each loaded run (default 2)
  --workers P        the runtimes' worker count (default 2)
  --rounds R         alone and loaded runs per runtime and workload (default 5)
  --runtimes LIST    subset of ws,rayon,tbb,omp,central (default: all that were built)
  --workloads LIST   subset of fib,nqueens,uts (default: all three)
  --size NAME=N      a workload's size (default fib=34, nqueens=13, uts=3000 root children)
  --quick            ws-bench's tiny sizes and 1 round: a smoke test of a few seconds
  --timeout S        seconds one run may take before it is killed and marked failed (300)
EOF
}

hogs=2 workers=2 rounds=5 quick=false timeout=300
runtimes=ws,rayon,tbb,omp,central
workloads=fib,nqueens,uts
declare -A size=([fib]=34 [nqueens]=13 [uts]=3000)
build=build
while (($#)); do
    case $1 in
    --hogs | --workers | --rounds | --timeout)
        [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "neighbours.sh: $1 wants a number" >&2 && exit 2; }
        declare "${1#--}=$2"
        shift
        ;;
    --runtimes | --workloads)
        declare "${1#--}=${2:?$1 wants a list}"
        shift
        ;;
    --size)
        [[ ${2:-} =~ ^(fib|nqueens|uts)=[0-9]+$ ]] || { echo "neighbours.sh: --size NAME=N" >&2 && exit 2; }
        size[${2%%=*}]=${2#*=}
        shift
        ;;
    --quick) quick=true rounds=1 ;;
    -h | --help) usage && exit 0 ;;
    -*) usage >&2 && exit 2 ;;
    *) build=$1 ;;
    esac
    shift
done
((workers >= 1 && rounds >= 1 && timeout >= 1)) || { echo "neighbours.sh: counts start at 1" >&2 && exit 2; }
exe=$build/bench/ws-bench
[[ -x $exe ]] || { echo "neighbours.sh: $exe not found (cmake --build $build --target ws-bench)" >&2 && exit 2; }
tmp=$(mktemp -d)
hog_pids=()
trap '((${#hog_pids[@]})) && kill "${hog_pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
failed=0

# ---- the hogs ----

# A hog is a subshell of this script spinning on a builtin: no system calls, no memory, and a
# command line of its own that names no loop, so no one else's cleanup by pattern can hit it.
start_hogs() {
    hog_pids=()
    for ((i = 0; i < hogs; i++)); do
        (while :; do :; done) &
        hog_pids+=($!)
    done
}

# Kills the hogs; fails if one was no longer running (the run it surrounded was not loaded
# throughout), with how the first one ended in $hog_ended.
stop_hogs() {
    local pid rc
    hog_ended=''
    for pid in "${hog_pids[@]}"; do
        if kill "$pid" 2>/dev/null; then
            wait "$pid" 2>/dev/null || true
        elif [[ -z $hog_ended ]]; then
            rc=0
            wait "$pid" 2>/dev/null || rc=$?
            hog_ended="exit status $rc$( ((rc > 128)) && echo ", signal $((rc - 128))")"
        fi
    done
    hog_pids=()
    [[ -z $hog_ended ]]
}

# ---- one measurement ----

# The ws-bench child's size options for workload $1: its size, or --quick.
size_args() {
    if $quick; then echo --quick; else echo --size "$1=${size[$1]}"; fi
}

# Runs runtime $1 on workload $2 at $3 workers in a ws-bench child with the further options
# $4 (split into words); prints "median others_s capacity_s cpu status answer" (tab-separated)
# from its R line, where cpu is the CPU time the process used per run, or a failed line. Fast runs get up to 5 runs in half a second, slow ones one
# (ws-bench's budget); each is checked.
run_child() {
    local rt=$1 wl=$2 p=$3 line
    # shellcheck disable=SC2086 # $4 is meant to split
    line=$(timeout --kill-after=5 "$timeout" "$exe" --child "$rt" --workloads "$wl" --workers "$p" \
        --reps 5 --budget 0.5 $4 | awk -F'\t' '$1 == "R" { print $6 "\t" $13 "\t" $14 "\t" $18 / $5 "\t" $15 "\t" $16 }') ||
        true
    if [[ -z $line ]]; then
        line=$(printf '0\t0\t0\t0\tfailed\tno result (crashed, or timed out after %s s)' "$timeout")
    fi
    echo "$line"
}

# One round of runtime $1 on workload $2: alone and loaded, in the order $3 ("alone loaded" or
# "loaded alone"); appends each result line to $tmp/$1.$2.{alone,loaded}.
measure_round() {
    local rt=$1 wl=$2 how line
    for how in $3; do
        [[ $how == loaded ]] && start_hogs
        line=$(run_child "$rt" "$wl" "$workers" "$(size_args "$wl")")
        if [[ $how == loaded ]] && ! stop_hogs; then
            line=$(printf '0\t0\t0\t0\tfailed\ta hog ended before the run did (%s)' "$hog_ended")
        fi
        echo "$line" >>"$tmp/$rt.$wl.$how"
    done
}

# ---- which runtimes were built ----

# A runtime this ws-bench cannot run (a peer it was built without) is skipped with one line.
present=()
for rt in ${runtimes//,/ }; do
    probe=$(run_child "$rt" fib 1 --quick | cut -f5,6)
    if [[ ${probe%%$'\t'*} == ok ]]; then
        present+=("$rt")
    else
        why=${probe#*$'\t'}
        [[ $why == *"not implemented"* ]] && why="not built into $exe (docs/benchmarks.md, \"The peers\")"
        echo "  $rt: skipped, $why"
    fi
done

# ---- the rounds ----

cpus=$(nproc)
# Shared fairly per thread, the runtime's P threads get min(P, C) CPUs alone and
# min(P, C * P / (P + N)) beside N hogs.
fair=$(awk -v p="$workers" -v n="$hogs" -v c="$cpus" 'BEGIN {
    alone = p < c ? p : c; loaded = c * p / (p + n); loaded = loaded < p ? loaded : p
    printf "%.2f", alone / loaded }')
started=$(date +%s)
echo "busy neighbours: $workers workers alone and beside $hogs busy-loop processes, $rounds" \
    "round(s), on $cpus online CPUs"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < rounds; r++)); do
    order="alone loaded"
    ((r % 2)) && order="loaded alone"
    for wl in ${workloads//,/ }; do
        for rt in "${present[@]}"; do
            [[ -t 2 ]] && printf '\r  round %d of %d: %s on %s ...      ' $((r + 1)) "$rounds" "$wl" "$rt" >&2
            measure_round "$rt" "$wl" "$order"
        done
    done
done
[[ -t 2 ]] && printf '\r%60s\r' '' >&2

# ---- the table ----

# The median of column $2 of file $1.
median_of() {
    cut -f"$2" "$1" | sort -g | awk '{ t[NR] = $1 }
        END { printf "%.9g", NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }'
}

# The rounds of $1 (a results file): "time cpu others status answer", where time and cpu are the
# medians of the rounds' figures, others the other programs' share of the CPU time over all
# rounds (for a loaded run, mostly the hogs'), and status ok or the first failure's.
summarize() {
    awk -F'\t' -v t="$(median_of "$1" 1)" -v cpu="$(median_of "$1" 4)" '
        { o += $2; c += $3 }
        $5 != "ok" && bad == "" { bad = $5 "\t" $6 }
        END {
            # /proc/stat counts 10 ms ticks: below half a second of capacity the share is noise
            printf "%s\t%s\t%s\t%s\n", t, cpu, (c < 0.5 ? "-" : sprintf("%.0f%%", 100 * (o < c ? o / c : 1))),
                (bad == "" ? "ok\t-" : bad)
        }' "$1"
}

fmt_time() {
    awk -v s="$1" 'BEGIN {
        if (s < 1e-3) printf "%.0f us", s * 1e6
        else if (s < 1) printf "%.1f ms", s * 1e3
        else printf "%.2f s", s }'
}

echo
echo "slowdown = time beside the hogs over time alone; with fair sharing between threads: ${fair}x"
echo "CPU = the CPU time the runtime's process used per run, alone and beside the hogs: more"
echo "  beside them is time its waiting threads spun or yielded while the hogs wanted the CPUs"
echo "others = the CPU share other processes used during the runs (the hogs, when loaded)"
printf '%-8s %-8s %9s %9s %8s %19s %13s  %s\n' workload runtime alone loaded slowdown \
    "CPU alone / loaded" "others al/ld" check
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }
less() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
for wl in ${workloads//,/ }; do
    best='' best_x='' fast='' fast_t='' ws_x=''
    for rt in "${present[@]}"; do
        IFS=$'\t' read -r ta ca oa sa why_a <<<"$(summarize "$tmp/$rt.$wl.alone")"
        IFS=$'\t' read -r tl cl ol sl why_l <<<"$(summarize "$tmp/$rt.$wl.loaded")"
        check=ok x=- cx=-
        if [[ $sa != ok || $sl != ok ]]; then
            failed=1
            check="$([[ $sa != ok ]] && echo "alone $sa: $why_a") $([[ $sl != ok ]] && echo "loaded $sl: $why_l")"
        else
            x=$(ratio "$ta" "$tl") cx=$(ratio "$ca" "$cl")
            if [[ -z $best ]] || less "$x" "$best_x"; then best=$rt best_x=$x; fi
            if [[ -z $fast ]] || less "$tl" "$fast_t"; then fast=$rt fast_t=$tl; fi
            [[ $rt == ws ]] && ws_x=$x
        fi
        cpu=-
        [[ $sa == ok ]] && ta=$(fmt_time "$ta") || ta=-
        [[ $sl == ok ]] && tl=$(fmt_time "$tl") || tl=-
        [[ $cx != - ]] && cpu="$(fmt_time "$ca") / $(fmt_time "$cl")"
        printf '%-8s %-8s %9s %9s %7sx %19s %5sx %5s / %-5s  %s\n' "$wl" "$rt" "$ta" "$tl" "$x" \
            "$cpu" "$cx" "$oa" "$ol" "$check"
    done
    if [[ -n $best ]]; then
        echo "  least hurt on $wl: $best (${best_x}x)$([[ -n $ws_x && $best != ws ]] &&
            echo ", ws ${ws_x}x"); fastest beside the hogs: $fast ($(fmt_time "$fast_t"))"
    fi
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); took $(($(date +%s) - started)) s"
exit $failed
