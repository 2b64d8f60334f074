#!/usr/bin/env bash
# Runs one make-test suite's ctest on DIR with ctest's own output, closing lines included, and
# keeps what tests/suites_summary.sh needs: the output (DIR/ws-ctest.log) and ctest's exit code
# (DIR/ws-suite-result, absent until ctest has finished).
# usage: tests/ctest_suite.sh DIR [ctest options...]
set -u
dir=${1:?usage: ctest_suite.sh DIR [ctest options...]}
shift
rm -f "$dir/ws-suite-result"
"${CTEST:-ctest}" --test-dir "$dir" "$@" 2>&1 | tee "$dir/ws-ctest.log"
rc=${PIPESTATUS[0]}
echo "$rc" >"$dir/ws-suite-result"
exit "$rc"
