#!/bin/sh
# make-screenshot.sh: regenerates docs/img/trace-nqueens.png, the trace of 10-queens on 2 workers
# shown in docs/profiling.md, with headless Chromium (Debian's chromium package).
#
#   docs/trace-viewer/make-screenshot.sh [BUILD_DIR] [N] [WORKERS]
#
# BUILD_DIR (default build-trace) must hold libworksteal.a. The program runs with WS_TRACE set
# (or, with TRACE_JSON=FILE in the environment, FILE is photographed instead of a new run);
# the trace is wrapped as trace-data.js next to a copy of viewer.html in a temporary directory,
# and Chromium photographs the page. The trace itself is left in that directory for a look in
# Perfetto.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-trace}
n=${2:-10}
workers=${3:-2}
out=$(mktemp -d)

if [ -n "${TRACE_JSON:-}" ]; then
    cp "$TRACE_JSON" "$out/trace.json" # photograph an existing trace instead
else
    # The static library needs hwloc too when it was built with it.
    hwloc=$(sed -n 's/^HWLOC_LIBRARY:FILEPATH=\(.*\)/\1/p' "$build/CMakeCache.txt" 2>/dev/null |
        grep -v NOTFOUND || true)
    cc -std=c11 -O2 -I"$root/include" "$root/docs/trace-viewer/nqueens_trace.c" \
        "$build/libworksteal.a" -lpthread $hwloc -o "$out/nqueens_trace"
    # Rings large enough that no event is dropped up to n = 11 (166926 tasks).
    WS_TRACE="$out/trace.json" WS_TRACE_EVENTS=262144 "$out/nqueens_trace" "$n" "$workers"
fi

{ printf 'window.TRACE = '; cat "$out/trace.json"; printf ';\n'; } >"$out/trace-data.js"
cp "$root/docs/trace-viewer/viewer.html" "$out/viewer.html"

mkdir -p "$root/docs/img"
profile=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --virtual-time-budget=2000 \
    --screenshot="$root/docs/img/trace-nqueens.png" --window-size=1400,500 \
    "file://$out/viewer.html"
rm -rf "$profile"
echo "trace: $out/trace.json"
echo "screenshot: $root/docs/img/trace-nqueens.png ($(wc -c <"$root/docs/img/trace-nqueens.png") bytes)"
