/* mix64.h: the benchmarks' 64-bit mixing function, in C that C++ compiles too (bench.h and the
 * tree of wl_uts.h, which peer_tbb.cpp walks, share it). */
#ifndef WS_BENCH_MIX64_H
#define WS_BENCH_MIX64_H

#include <stdint.h>

/* The splitmix64 finalizer: cheap and well spread. */
static inline uint64_t wb_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

#endif /* WS_BENCH_MIX64_H */
