#!/bin/bash
# Mutation test of the GenMC models: applies each mutant of a list (tests/mutants/README.md
# gives the format) to a scratch copy of the tree (never to this checkout), runs the passing
# cases of every registered model whose program includes the changed file, as ctest runs them
# (tests/genmc_model.sh with the test's GENMC_FLAGS), cheapest first, and stops at the first
# case that no longer passes. Each mutant is
#   caught     a case failed (the checker found an error);
#   vacuous    a case passed below its floor of complete executions (genmc_model.sh fails it);
#   timeout    a case ran past the limit of CPU time (-t);
#   survived   every case passed;
#   broken     the mutant does not apply (its text is not found exactly once) or a case gave no
#              verdict (e.g. it does not compile): a fault of the list, not a result.
# Then a tally per protocol: the score is (caught + vacuous) over the mutants not judged
# equivalent or an order the code may relax ("judge:" in the list).
#
# usage: tests/mutants/run.sh [-j JOBS] [-t SECONDS] [-l LIST] [-o RESULTS] [-k] [FILTER]
#   -j  mutants run side by side (default 1); each runs its cases one after another
#   -t  the limit of CPU time per case (default 600 s)
#   -l  the list (default tests/mutants/mutants.txt)
#   -o  also write the result lines and the tally to this file
#   -k  keep the scratch directory (its path is printed)
#   FILTER  an extended regular expression matched against "ID PROTOCOL FILE"
# Cases marked :long run only with GENMC_LONG=1 in the environment (make mutants sets it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ "${1:-}" = --one ]; then
    # Internal: runs mutant $3 of scratch directory $2 (called through xargs for -j).
    work=$2 id=$3 limit=$4
    m=$work/m/$id
    proto=$(sed -n 's/^protocol: //p' "$m/meta")
    file=$(sed -n 's/^file: //p' "$m/meta")
    tree=$m/tree
    mkdir -p "$tree"
    cp -a "$root/src" "$root/include" "$root/tests" "$tree/"
    if ! perl -e '
        local $/; my ($path, $ff, $rf) = @ARGV;
        open my $h, "<", $ff or die; my $find = <$h>; close $h;
        open $h, "<", $rf or die; my $rep = <$h>; close $h;
        open $h, "<", $path or die "no file $path\n"; my $text = <$h>; close $h;
        my $n = () = $text =~ /\Q$find\E/g;
        die "the text to replace occurs $n times\n" if $n != 1;
        $text =~ s/\Q$find\E/$rep/;
        open $h, ">", $path or die; print $h $text; close $h;' \
        "$tree/$file" "$m/find" "$m/replace" 2>"$m/apply.err"; then
        echo "$id $proto broken: $(head -1 "$m/apply.err") ($file)" >"$m/result"
        rm -rf "$tree"
        exit 0
    fi
    # The cases of every model whose program includes the file, cheapest (lowest floor) first.
    awk -v f="$file" '$1 == f { print $2 }' "$work/deps" | sort -u >"$m/models"
    awk 'NR == FNR { want[$1] = 1; next } ($3 in want)' "$m/models" "$work/cases" |
        sort -k5,5n >"$m/cases"
    result="survived"
    ran=0
    while read -r test flags model case floor; do
        # A :long case runs only with GENMC_LONG=1 (make mutants sets it), as in ctest; left
        # out otherwise, since genmc_model.sh would skip it and give no verdict.
        case $case in *:long) [ "${GENMC_LONG:-0}" = 1 ] || continue ;; esac
        ran=$((ran + 1))
        [ "$flags" = - ] && flags= || flags=$(echo "$flags" | tr , ' ')
        start=$(date +%s)
        # The limit is on CPU time (ulimit -t), so that a loaded machine does not turn a slow
        # case into a timeout; the wall-clock limit, ten times that, only stops a hang.
        out=$(ulimit -t "$limit"
            GENMC_FLAGS=$flags timeout $((10 * limit)) sh "$tree/tests/genmc_model.sh" "$tree" \
                "$model" "$case" 2>&1)
        rc=$?
        secs=$(($(date +%s) - start))
        where="$test $(echo "$case" | cut -d: -f1) (${secs} s)"
        got=$(echo "$out" | head -1 | sed -n 's/^[^:]*: \([a-z]*\),.*/\1/p')
        if [ $rc = 124 ] || { [ "$got" = broken ] && ! echo "$out" | grep -q -E "error|ERROR|Error"; }; then
            result="timeout: $where"
            break
        fi
        case $got in
        pass) ;;
        fail) result="caught: $where"; break ;;
        vacuous) result="vacuous: $where, $(echo "$out" | head -1 | sed -n 's/.*(\(.*\);.*/\1/p')"; break ;;
        *) result="broken: $where: $(echo "$out" | grep -m1 -E "error|ERROR" || echo "no verdict")"; break ;;
        esac
    done <"$m/cases"
    [ "$ran" = 0 ] && [ -s "$m/cases" ] && result="broken: every case is long (GENMC_LONG=1)"
    [ "$ran" = 0 ] && [ ! -s "$m/cases" ] && result="broken: no registered model includes $file"
    echo "$id $proto $result" >"$m/result"
    rm -rf "$tree"
    exit 0
fi

jobs=1 limit=600 list=$here/mutants.txt outfile= keep=0
while getopts j:t:l:o:k opt; do
    case $opt in
    j) jobs=$OPTARG ;;
    t) limit=$OPTARG ;;
    l) list=$OPTARG ;;
    o) outfile=$OPTARG ;;
    k) keep=1 ;;
    *) sed -n 's/^# usage: /usage: /p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
filter=${1:-.}
case $list in /*) ;; *) list=$PWD/$list ;; esac
case $outfile in /* | "") ;; *) outfile=$PWD/$outfile ;; esac

genmc=${GENMC:-}
for g in "$root/../shared/tools/genmc/genmc" "$root/../../shared/tools/genmc/genmc"; do
    if [ -z "$genmc" ] && [ -x "$g" ]; then genmc=$g; fi
done
[ -z "$genmc" ] && genmc=$(command -v genmc 2>/dev/null || true)
if [ -z "$genmc" ] || [ ! -x "$genmc" ]; then
    echo "run.sh: the GenMC checker is not installed (set GENMC=/path/to/genmc)" >&2
    exit 2
fi
export GENMC=$genmc
genmc_include=$(dirname "$genmc")/include
command -v clang-14 >/dev/null || "$genmc" >/dev/null 2>&1 # installs clang-14 on first use

work=$(mktemp -d "${TMPDIR:-/tmp}/ws-mutants.XXXXXX")
if [ $keep = 0 ]; then trap 'rm -rf "$work"' EXIT; else echo "scratch: $work"; fi

# The registered model tests, as ctest runs them: a configured (not built) copy of the tree.
cmake -S "$root" -B "$work/build" -DWS_BUILD_TESTS=ON -DWS_BUILD_BENCH=OFF \
    -DWS_BUILD_EXAMPLES=OFF >"$work/cmake.log" 2>&1 || {
    echo "run.sh: cmake failed (see $work/cmake.log)" >&2
    exit 2
}
# cases: TEST FLAGS MODEL CASE FLOOR, one passing case a line (FLAGS "-" for none).
ctest --test-dir "$work/build" -N -V -L model 2>/dev/null | awk '
    / Test command: / {
        n = 0; delete c
        for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); if (seen) c[++n] = $i; if ($i == "command:") seen = 1 }
        seen = 0; flags = "-"; inenv = 1; next }
    inenv && /GENMC_FLAGS=/ { sub(/.*GENMC_FLAGS=/, ""); flags = $0; gsub(/ /, ",", flags); next }
    /^ *Test *#[0-9]+: / {
        name = $NF
        for (i = 5; i <= n; i++) if (c[i] ~ /:pass:/) {
            split(c[i], p, ":"); print name, flags, c[4], c[i], p[3] }
        inenv = 0 }' >"$work/cases"
# deps: FILE MODEL for every source file that each model's program includes.
for model in $(awk '{ print $3 }' "$work/cases" | sort -u); do
    defs=$(awk -v m="$model" '$3 == m { split($4, d, ":"); print d[1]; exit }' "$work/cases" |
        tr ',' '\n' | grep -v '^--' | sed 's/^/-D/' | tr '\n' ' ')
    # shellcheck disable=SC2086
    (cd "$root" && clang-14 -M -D__CONFIG_GENMC_INODE_DATA_SIZE=64 -I"$genmc_include" -I src -I include $defs "$model" |
        tr ' \\' '\n\n' | grep -v -e '^$' -e ':$' | xargs realpath -m --relative-to="$root") |
        grep -E '^(src|include)/' | sort -u | sed "s#\$# $model#"
done >"$work/deps"

# The list: blocks of "key: value" lines, a blank line between mutants.
mkdir -p "$work/m"
awk -v dir="$work/m" '
    function flush() { if (id != "") { close(dir "/" id "/find"); close(dir "/" id "/replace"); close(dir "/" id "/meta") } id = "" }
    /^#/ { next }
    /^id: / { flush(); id = $2; system("mkdir -p " dir "/" id); nf = 0; nr = 0
              printf "" > (dir "/" id "/find"); printf "" > (dir "/" id "/replace"); next }
    id == "" { next }
    /^find:/ { s = $0; sub(/^find: ?/, "", s); printf "%s%s", (nf++ ? "\n" : ""), s > (dir "/" id "/find"); next }
    /^replace:/ { s = $0; sub(/^replace: ?/, "", s); printf "%s%s", (nr++ ? "\n" : ""), s > (dir "/" id "/replace"); next }
    /^[a-z]+:/ { print > (dir "/" id "/meta"); next }
    END { flush() }' "$list"
ids=$(for d in "$work"/m/*/; do
    id=$(basename "$d")
    key="$id $(sed -n 's/^protocol: //p' "$d/meta") $(sed -n 's/^file: //p' "$d/meta")"
    echo "$key" | grep -q -E "$filter" && echo "$id"
done)
[ -n "$ids" ] || { echo "run.sh: no mutant matches $filter" >&2; exit 2; }
echo "$(echo "$ids" | wc -l) mutants, $jobs at a time, $limit s a case at most (list: $list)"
echo "$ids" | xargs -P "$jobs" -I{} sh -c 'bash "$0" --one "$1" "$2" "$3"; cat "$1/m/$2/result"' \
    "$0" "$work" {} "$limit" | tee "$work/results"

# The tally, per protocol.
for id in $ids; do
    r=$(awk '{ print $3 }' "$work/m/$id/result" | tr -d :)
    j=$(sed -n 's/^judge: \([a-z]*\).*/\1/p' "$work/m/$id/meta")
    echo "$(sed -n 's/^protocol: //p' "$work/m/$id/meta") $r ${j:-bug}"
done | awk '
    { p[$1] = 1; n[$1]++; r[$1 " " $2]++; if ($3 == "equivalent" || $3 == "relaxable") x[$1]++
      else if ($2 == "caught" || $2 == "vacuous") k[$1]++
      if ($2 == "survived" && $3 != "equivalent" && $3 != "relaxable") s[$1]++ }
    END {
        printf "\n%-10s %6s %6s %7s %7s %8s %6s %5s %6s\n", "protocol", "total", "caught",
               "vacuous", "timeout", "survived", "broken", "excl", "score"
        for (q in p) {
            d = n[q] - x[q]; T += n[q]; C += r[q " caught"]; V += r[q " vacuous"]
            O += r[q " timeout"]; S += r[q " survived"]; B += r[q " broken"]; X += x[q]; K += k[q]
            printf "%-10s %6d %6d %7d %7d %8d %6d %5d %3d/%-3d\n", q, n[q], r[q " caught"],
                   r[q " vacuous"], r[q " timeout"], r[q " survived"], r[q " broken"], x[q],
                   k[q], d }
        printf "%-10s %6d %6d %7d %7d %8d %6d %5d %3d/%-3d\n", "all", T, C, V, O, S, B, X, K, T - X
    }' | tee -a "$work/results"
[ -n "$outfile" ] && cp "$work/results" "$outfile"
exit 0
