#!/bin/sh
# Installs the built project into a temporary prefix, then builds and runs a consumer program
# with the README's pkg-config lines (shared, with no LD_LIBRARY_PATH, and static), the README's
# hello world with its build line, and through
# find_package(worksteal) in CMake; then runs the installed ws-bench with its closing sections
# (BUILD_DIR is built with WS_BUILD_BENCH=ON, as make test's). Last, it configures the source
# as the README's install line does, with the default options, and checks that this build makes
# no test, example, benchmark or peer and installs no program.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

test -f "$tmp/prefix/include/worksteal.h"
test -f "$tmp/prefix/include/worksteal.hpp"
libdir=$(find "$tmp/prefix" -name worksteal.pc -path '*pkgconfig*' -exec dirname {} \; | xargs dirname)
test -f "$libdir/libworksteal.a"
test -f "$libdir/cmake/worksteal/worksteal-config.cmake"
test -f "$tmp/prefix/share/doc/worksteal/LICENSE"
test -f "$tmp/prefix/share/worksteal/trace-viewer/viewer.html"

cat > "$tmp/consumer.c" <<'C'
#include <worksteal.h>
#include <stdio.h>
static void add(void *p) { __atomic_fetch_add((int *)p, 1, __ATOMIC_RELAXED); }
int main(void)
{
    int n = 0;
    ws_join(add, &n, add, &n);
    printf("%d\n", n);
    return n == 2 ? 0 : 1;
}
C

# pkg-config: the README's line exactly, against the shared library; the program must run
# without LD_LIBRARY_PATH (worksteal.pc carries an rpath outside the system directories)
if command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    cc "$tmp/consumer.c" $(pkg-config --cflags --libs worksteal) -o "$tmp/consumer_pc"
    env -u LD_LIBRARY_PATH "$tmp/consumer_pc"
    # the README's hello world (its first C block), with its build line
    awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' "$src/README.md" > "$tmp/hello.c"
    grep -q 'int main' "$tmp/hello.c"
    grep -q '^cc -O2 hello.c $(pkg-config --cflags --libs worksteal) -o hello && ./hello$' \
        "$src/README.md"
    (cd "$tmp" && cc -O2 hello.c $(pkg-config --cflags --libs worksteal) -o hello &&
        env -u LD_LIBRARY_PATH ./hello) | grep -q '^fib(30) = 832040 on [0-9]* workers$'
    # the README's static line: no shared library needed at run time
    cc "$tmp/consumer.c" $(pkg-config --cflags worksteal) \
        "$(pkg-config --variable=libdir worksteal)/libworksteal.a" \
        $(pkg-config --variable=static_libs worksteal) -o "$tmp/consumer_static"
    if readelf -d "$tmp/consumer_static" 2>/dev/null | grep -q 'libworksteal'; then
        echo "FAIL: the static consumer still needs libworksteal.so"
        exit 1
    fi
    "$tmp/consumer_static"
else
    echo "pkg-config not installed: checking worksteal.pc by hand"
    grep -q '^Libs: .*-lworksteal .*-Wl,-rpath,' "$libdir/pkgconfig/worksteal.pc"
fi

# The C++ header, when a C++ compiler is installed.
cxx=
for c in "${CXX:-}" c++ g++ clang++; do
    if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
        cxx=$c
        break
    fi
done
cat > "$tmp/consumer.cpp" <<'CXX'
#include <worksteal.hpp>
#include <cstdio>
int main()
{
    auto [a, b] = ws::join([] { return 1; }, [] { return 2; });
    std::printf("%d\n", a + b);
    return a + b == 3 ? 0 : 1;
}
CXX
if [ -n "$cxx" ] && command -v pkg-config >/dev/null 2>&1; then
    "$cxx" -std=c++17 "$tmp/consumer.cpp" $(pkg-config --cflags --libs worksteal) \
        -o "$tmp/consumer_cxx_pc"
    env -u LD_LIBRARY_PATH "$tmp/consumer_cxx_pc"
elif [ -z "$cxx" ]; then
    echo "no C++ compiler: the C++ consumer is not built"
fi

# find_package(worksteal)
mkdir "$tmp/cmake"
languages=C
[ -n "$cxx" ] && languages="C CXX"
cat > "$tmp/cmake/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(consumer $languages)
find_package(worksteal REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer worksteal::worksteal)
if(CMAKE_CXX_COMPILER)
  add_executable(consumer_cxx ../consumer.cpp)
  set_target_properties(consumer_cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_link_libraries(consumer_cxx worksteal::worksteal)
endif()
CM
cmake -S "$tmp/cmake" -B "$tmp/cmake/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_BUILD_RPATH="$libdir" ${cxx:+-DCMAKE_CXX_COMPILER="$(command -v "$cxx")"} >/dev/null
cmake --build "$tmp/cmake/build" >/dev/null
"$tmp/cmake/build/consumer"
if [ -n "$cxx" ]; then
    "$tmp/cmake/build/consumer_cxx"
fi

# The installed ws-bench finds its closing sections' programs (installed in libexec/worksteal).
if [ -x "$tmp/prefix/bin/ws-bench" ]; then
    (cd "$tmp" && "$tmp/prefix/bin/ws-bench" --quick --extras --workloads fib \
        --schedulers serial,ws --workers 1,2 --csv "$tmp/bench.csv" > "$tmp/bench.out") || {
        cat "$tmp/bench.out"
        echo "FAIL: the installed ws-bench failed"
        exit 1
    }
    for section in "bench_loop --quick" "bench_external --quick" "bench_phases --smoke"; do
        if ! grep -q "== .*: $section" "$tmp/bench.out" ||
            grep -q "skipped: ${section% *}" "$tmp/bench.out"; then
            cat "$tmp/bench.out"
            echo "FAIL: the installed ws-bench did not run $section"
            exit 1
        fi
    done
fi
# The README's install line, with its defaults: the library alone (configured, not built).
grep -q '^cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j$' "$src/README.md"
cmake -S "$src" -B "$tmp/defaults" -DCMAKE_BUILD_TYPE=Release >/dev/null
extra=$(cmake --build "$tmp/defaults" --target help |
    grep -E '(ws-bench|bench_|peer|rayon|java|test_|example_)' || true)
if [ -n "$extra" ] || [ -d "$tmp/defaults/tests" ] || [ -d "$tmp/defaults/bench" ]; then
    echo "$extra"
    echo "FAIL: the README's install line builds tests, examples or benchmarks (above)"
    exit 1
fi
if grep -rn --include=cmake_install.cmake -e 'ws-bench' -e 'libexec' "$tmp/defaults"; then
    echo "FAIL: the README's install line installs ws-bench or its helpers (above)"
    exit 1
fi
echo "install test passed"
