#!/bin/sh
# Installs the built project into a temporary prefix, then builds an MPI consumer of
# worksteal_mpi twice, with mpicc and pkg-config's worksteal_mpi.pc and with
# find_package(worksteal COMPONENTS mpi), and runs each on two ranks.
# usage: install_mpi_test.sh BUILD_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -eu
build=$1
mpiexec=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

test -f "$tmp/prefix/include/worksteal_mpi.h"
libdir=$(find "$tmp/prefix" -name worksteal_mpi.pc -path '*pkgconfig*' -exec dirname {} \; | xargs dirname)
test -f "$libdir/libworksteal_mpi.a"
test -f "$libdir/cmake/worksteal/worksteal-mpi-targets.cmake"

cat > "$tmp/consumer.c" <<'C'
#include <worksteal_mpi.h>
#include <stdio.h>
#include <string.h>
/* Counts down from the record's value, one record per step, across the ranks. */
static void step(ws_mpi_emitter *out, const void *rec, void *acc, void *ctx)
{
    int n;
    memcpy(&n, rec, sizeof(n));
    ++*(long *)acc;
    if (n > 0) {
        int next = n - 1;
        if (ws_mpi_emit(out, &next) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    (void)ctx;
}
static void add(void *acc, const void *right, void *ctx)
{
    *(long *)acc += *(const long *)right;
    (void)ctx;
}
int main(int argc, char **argv)
{
    int provided, me;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int start = 99;
    long zero = 0, total = 0;
    ws_mpi_work w = {sizeof(int), step, sizeof(long), &zero, add, NULL, &start, me == 0};
    int err = ws_mpi_run(MPI_COMM_WORLD, NULL, &w, NULL, &total, NULL);
    if (me == 0)
        printf("%ld\n", total);
    MPI_Finalize();
    return err == 0 && total == 100 ? 0 : 1;
}
C

# docs/distributed.md's line exactly; the program must run without LD_LIBRARY_PATH (the rpath
# comes from worksteal.pc, which worksteal_mpi.pc requires)
if command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    mpicc "$tmp/consumer.c" $(pkg-config --cflags --libs worksteal_mpi) -o "$tmp/consumer_pc"
    env -u LD_LIBRARY_PATH WS_NUM_WORKERS=1 "$mpiexec" -n 2 "$@" "$tmp/consumer_pc"
else
    echo "pkg-config not installed: checking worksteal_mpi.pc by hand"
    grep -q '^Libs: .*-lworksteal_mpi' "$libdir/pkgconfig/worksteal_mpi.pc"
fi

mkdir "$tmp/cmake"
cat > "$tmp/cmake/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(worksteal REQUIRED COMPONENTS mpi)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer worksteal::worksteal_mpi)
CM
cmake -S "$tmp/cmake" -B "$tmp/cmake/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_BUILD_RPATH="$libdir" >/dev/null
cmake --build "$tmp/cmake/build" >/dev/null
WS_NUM_WORKERS=1 "$mpiexec" -n 2 "$@" "$tmp/cmake/build/consumer"
echo "install mpi test passed"
