#!/bin/sh
# Runs a GenMC model once per case and checks each verdict. A case is DEFS:VERDICT[:FLOOR]:
#   DEFS     comma-separated items: NAME or NAME=VALUE (a -D definition), or a checker option
#            (an item that starts with "--": --imm for the weaker model in place of RC11,
#            --check-liveness to report a thread that spins forever, ...);
#   VERDICT  pass, or fail (a weakened order must be rejected, or the model proves nothing);
#   FLOOR    for a pass, required: the least number of complete executions the case explores.
#            GenMC says "No errors were detected" also when no execution completes (each one cut
#            by an assumption, e.g. a futex wait that nobody ends, which it counts as blocked):
#            a pass below its floor is "vacuous" and fails the case.
#   :long    appended to a case: it runs only with GENMC_LONG=1 (make models); make test runs the
#            cases that take seconds, so that every model runs there and the suite stays short.
# e.g. "SCENARIO=1,WEAKEN=0:pass:400", "--imm,SCENARIO=2:pass:9000", "SCENARIO=2,WEAKEN=1:fail",
# "SCENARIO=2,WEAKEN=0:pass:65000:long".
# Skipped (exit 77) when the checker is not installed.
# usage: tests/genmc_model.sh SOURCE_DIR MODEL.c CASE...   (GENMC=path overrides the checker;
# GENMC_FLAGS adds checker options to every case)
set -u
src=${1:?usage: genmc_model.sh SOURCE_DIR MODEL.c CASE...}
model=${2:?usage: genmc_model.sh SOURCE_DIR MODEL.c CASE...}
shift 2
name=$(basename "$model" .c)
case $src in
/*) ;;
*) src=$(cd "$src" && pwd) ;;
esac
# The checker's place beside a checkout (../shared/tools), beside a worktree of one, or PATH.
genmc=${GENMC:-}
for g in "$src/../shared/tools/genmc/genmc" "$src/../../shared/tools/genmc/genmc"; do
    if [ -z "$genmc" ] && [ -x "$g" ]; then genmc=$g; fi
done
if [ -z "$genmc" ]; then
    genmc=$(command -v genmc 2>/dev/null || true)
fi
if [ -z "$genmc" ] || [ ! -x "$genmc" ]; then
    echo "$name: skipped: the GenMC checker is not installed (set GENMC=/path/to/genmc)"
    exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
failed=0
long_skipped=0
for c in "$@"; do
    # A case of make test that runs longer than this is stopped: it belongs to the long ones.
    limit="timeout 300"
    case $c in
    *:long)
        c=${c%:long}
        limit=
        if [ "${GENMC_LONG:-0}" != 1 ]; then
            long_skipped=$((long_skipped + 1))
            continue
        fi
        ;;
    esac
    want=$(echo "$c" | cut -d: -f2)
    floor=$(echo "$c" | cut -s -d: -f3)
    defs=${c%%:*}
    mm=--rc11
    opts=
    flags=
    for item in $(echo "$defs" | tr ',' ' '); do
        case $item in
        --imm | --rc11 | --ra | --tso | --sc) mm=$item ;;
        --*) opts="$opts $item" ;;
        *) flags="$flags -D$item" ;;
        esac
    done
    if [ "$want" = pass ] && [ -z "$floor" ]; then
        echo "$name $defs: broken: a passing case states no floor (DEFS:pass:FLOOR)"
        failed=1
        continue
    fi
    start=$(date +%s)
    # shellcheck disable=SC2086
    out=$($limit "$genmc" $mm --disable-estimation ${GENMC_FLAGS:-} $opts -- -I "$src/src" \
        -I "$src/include" $flags "$src/$model" 2>&1)
    secs=$(($(date +%s) - start))
    complete=$(echo "$out" | sed -n 's/^Number of complete executions explored: *//p')
    blocked=$(echo "$out" | sed -n 's/^Number of blocked executions seen: *//p')
    if echo "$out" | grep -q -E "^Error|Verification unsuccessful"; then got=fail
    elif ! echo "$out" | grep -q "No errors were detected" || [ -z "$complete" ]; then got=broken
    elif [ -n "$floor" ] && [ "$complete" -lt "$floor" ]; then got=vacuous
    else got=pass; fi
    verdict=$(echo "$out" | grep -m1 -E "^Error|No errors|Non-terminating|unsuccessful" ||
        echo "(no verdict)")
    echo "$name $defs: $got, expected $want: $verdict (${complete:-?} complete executions," \
        "${blocked:-0} blocked${floor:+, floor $floor}; ${secs} s)"
    if [ "$got" != "$want" ]; then
        failed=1
        echo "$out" | tail -40
    fi
done
if [ "$long_skipped" -gt 0 ]; then
    echo "$name: $long_skipped long case(s) not run (GENMC_LONG=1, or make models, runs them)"
fi
exit $failed
