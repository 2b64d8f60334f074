#!/bin/sh
# Installs the built project into a temporary prefix, then builds and runs a consumer program
# twice: with pkg-config flags from worksteal.pc, and through find_package(worksteal) in CMake.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

test -f "$tmp/prefix/include/worksteal.h"
libdir=$(find "$tmp/prefix" -name worksteal.pc -path '*pkgconfig*' -exec dirname {} \; | xargs dirname)
test -f "$libdir/libworksteal.a"
test -f "$libdir/cmake/worksteal/worksteal-config.cmake"

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

# pkg-config, against the shared library
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs worksteal)
    cc -std=c11 "$tmp/consumer.c" $flags -pthread -Wl,-rpath,"$libdir" -o "$tmp/consumer_pc"
    "$tmp/consumer_pc"
else
    echo "pkg-config not installed: checking worksteal.pc by hand"
    grep -q '^Libs: .*-lworksteal' "$libdir/pkgconfig/worksteal.pc"
fi

# find_package(worksteal)
mkdir "$tmp/cmake"
cat > "$tmp/cmake/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(worksteal REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer worksteal::worksteal)
CM
cmake -S "$tmp/cmake" -B "$tmp/cmake/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_BUILD_RPATH="$libdir" >/dev/null
cmake --build "$tmp/cmake/build" >/dev/null
"$tmp/cmake/build/consumer"
echo "install test passed"
