#!/bin/sh
# The split deque's protocol under the GenMC model checker (RC11): tests/model_sdeque.c in
# both scenarios must pass, and each weakened order must be rejected in the scenario that
# needs it. Skipped (exit 77) when the checker is not installed.
# usage: tests/model_sdeque.sh SOURCE_DIR    (GENMC=path overrides the checker)
set -u
src=${1:?usage: model_sdeque.sh SOURCE_DIR}
# The checker's place beside a checkout (../shared/tools), beside a worktree of one, or PATH.
genmc=${GENMC:-}
for g in "$src/../shared/tools/genmc/genmc" "$src/../../shared/tools/genmc/genmc"; do
    if [ -z "$genmc" ] && [ -x "$g" ]; then genmc=$g; fi
done
if [ -z "$genmc" ]; then
    genmc=$(command -v genmc 2>/dev/null || true)
fi
if [ -z "$genmc" ] || [ ! -x "$genmc" ]; then
    echo "model_sdeque: skipped: the GenMC checker is not installed (set GENMC=/path/to/genmc)"
    exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
failed=0
# run SCENARIO WEAKEN EXPECT (pass or fail)
run() {
    out=$("$genmc" --rc11 --disable-estimation -- -I "$src/src" -I "$src/include" \
        -DSCENARIO="$1" -DWEAKEN="$2" "$src/tests/model_sdeque.c" 2>&1)
    if echo "$out" | grep -q "No errors were detected"; then got=pass
    elif echo "$out" | grep -q "Verification unsuccessful"; then got=fail
    else got=broken; fi
    verdict=$(echo "$out" | grep -m1 -E "^Error|No errors" || echo "(no verdict)")
    echo "scenario $1, weakened order $2: $got, expected $3: $verdict"
    if [ "$got" != "$3" ]; then
        failed=1
        echo "$out" | tail -40
    fi
}
run 1 0 pass
run 2 0 pass
# 1 share release, 2 thief's acquire of ts: scenario 2 (a stale view would take X again).
run 2 1 fail
run 2 2 fail
# 3 bottom release, 4 thief's acquire of bottom, 5 grow's release, 6 thief's acquire of the
# array: scenario 1 (an item pushed into the reserve; an item copied by growth).
run 1 3 fail
run 1 4 fail
run 1 5 fail
run 1 6 fail
exit $failed
