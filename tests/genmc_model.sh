#!/bin/sh
# Runs a GenMC model (RC11) once per case and checks each verdict: a case is a set of -D
# definitions and the expected outcome, e.g. "WEAKEN=0:pass" or "SCENARIO=2,WEAKEN=1:fail" (a
# weakened order must be rejected, or the model proves nothing). Skipped (exit 77) when the
# checker is not installed.
# usage: tests/genmc_model.sh SOURCE_DIR MODEL.c CASE...   (GENMC=path overrides the checker;
# GENMC_FLAGS adds checker options, e.g. --check-liveness)
set -u
src=${1:?usage: genmc_model.sh SOURCE_DIR MODEL.c CASE...}
model=${2:?usage: genmc_model.sh SOURCE_DIR MODEL.c CASE...}
shift 2
name=$(basename "$model" .c)
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
for c in "$@"; do
    defs=${c%:*}
    want=${c##*:}
    flags=$(echo "$defs" | tr ',' '\n' | sed 's/^/-D/' | tr '\n' ' ')
    # shellcheck disable=SC2086
    out=$("$genmc" --rc11 --disable-estimation ${GENMC_FLAGS:-} -- -I "$src/src" -I "$src/include" $flags \
        "$src/$model" 2>&1)
    if echo "$out" | grep -q "No errors were detected"; then got=pass
    elif echo "$out" | grep -q -E "^Error|Verification unsuccessful"; then got=fail
    else got=broken; fi
    verdict=$(echo "$out" | grep -m1 -E "^Error|No errors" || echo "(no verdict)")
    echo "$name $defs: $got, expected $want: $verdict"
    if [ "$got" != "$want" ]; then
        failed=1
        echo "$out" | tail -40
    fi
done
exit $failed
