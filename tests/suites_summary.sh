#!/usr/bin/env bash
# The closing summary of `make test`: for each suite, ctest's closing line and the tests that
# failed; then every skipped test with the reason it printed; then one verdict line. Exits 1 if
# a suite failed or has no result (its configure or build failed), else 0.
# usage: tests/suites_summary.sh NAME=DIR...
set -u
failed=()
skipped=()
# The reason a skipped test printed: its output's first line, from ctest's LastTest.log.
skip_reason() {
    local dir=$1 test=$2 log
    log=$(ls -t "$dir"/Testing/Temporary/LastTest*.log 2>/dev/null | head -1)
    [ -n "$log" ] || { echo "(no test log)"; return; }
    awk -v t="$test" '
        $0 ~ "^[0-9]+/[0-9]+ Test: " t "$" { found = 1; next }
        found && /^Output:/ { getline; out = 1; next }
        out && /^<end of output>/ { exit }
        out && NF { print; exit }' "$log" | grep . || echo "(it printed nothing)"
}
echo
echo "== make test: summary =="
for suite in "$@"; do
    name=${suite%%=*}
    dir=${suite#*=}
    if [ ! -f "$dir/ws-suite-result" ]; then
        echo "$name ($dir/): no result: its configure, build or ctest did not finish (see above)"
        failed+=("$name")
        continue
    fi
    closing=$(grep -E '^[0-9]+% tests passed' "$dir/ws-ctest.log" | tail -1)
    echo "$name ($dir/): ${closing:-ctest printed no closing line}"
    # ctest's own lists: "The following tests FAILED:" / "did not run:", one "  N - name (why)" each
    list() { awk -v h="$1" 'index($0, h) { on = 1; next } on && /^[ \t]+[0-9]+ - / { print; next } on { exit }' "$dir/ws-ctest.log"; }
    bad=$(list "The following tests FAILED:")
    if [ "$(cat "$dir/ws-suite-result")" != 0 ] || [ -n "$bad" ]; then
        failed+=("$name")
        [ -n "$bad" ] && echo "$bad" | sed 's/^[ \t]*/    failed: /'
    fi
    while read -r line; do
        [ -n "$line" ] || continue
        test=$(echo "$line" | sed -E 's/^[0-9]+ - ([^ ]+) .*/\1/')
        reason=$(skip_reason "$dir" "$test")
        skipped+=("$name: $test: ${reason#"$test: "}")
    done <<<"$(list "The following tests did not run:")"
done
if ((${#skipped[@]})); then
    echo "skipped (${#skipped[@]}), each with the reason it printed:"
    printf '    %s\n' "${skipped[@]}"
fi
if ((${#failed[@]})); then
    echo "make test: FAILED in: ${failed[*]}"
    exit 1
fi
echo "make test: every suite passed"
