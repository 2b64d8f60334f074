#!/bin/sh
# Builds a C++ test with another compiler (e.g. clang++) against the built static library and
# runs it with 1, 2 and 4 workers. Exits 77 (ctest: skipped) when that compiler is absent.
# usage: cxx_other_compiler.sh COMPILER TEST_SOURCE INCLUDE_DIR LIBRARY WORK_DIR [LINK_ARG...]
# (the LINK_ARGs: what the static library needs besides -pthread, e.g. hwloc)
set -eu
cxx=$1 src=$2 inc=$3 lib=$4 work=$5
shift 5
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "$cxx is not installed: skipped"
    exit 77
fi
exe="$work/$(basename "$src" .cpp)_$(basename "$cxx")"
"$cxx" -std=c++17 -O2 -Wall -Wextra -Wpedantic -Werror -I"$inc" "$src" "$lib" -pthread "$@" -o "$exe"
for p in 1 2 4; do
    "$exe" "$p"
done
