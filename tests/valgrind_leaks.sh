#!/bin/sh
# Runs a program under valgrind's leak check and passes only if every heap block was freed at
# exit (valgrind: "All heap blocks were freed -- no leaks are possible") and valgrind saw no
# error. Skipped (exit 77) when valgrind is not installed (Debian: apt-get install valgrind).
# usage: valgrind_leaks.sh PROGRAM ARGS...
set -u
if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP: valgrind is not installed (Debian: apt-get install valgrind)"
    exit 77
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
valgrind --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
    --error-exitcode=99 --log-file="$log" "$@"
status=$?
if [ $status -ne 0 ] || ! grep -q 'All heap blocks were freed -- no leaks are possible' "$log"; then
    cat "$log"
    echo "FAIL: $* (exit $status): blocks left allocated at exit, or valgrind errors (above)"
    exit 1
fi
grep 'total heap usage' "$log"
echo "no leaks: $*"
