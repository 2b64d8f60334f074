/* wl_external.h: the benchmarks of external work (bench/wl_external.c).
 *
 * external_bench_main(argc, argv) takes the options of bench_external:
 *   [--quick] [--workers N] [--reps N] [--jobs N] [--samples N] [--csv FILE] [--sections LIST]
 * and prints its tables: injector throughput against the central-queue (mutex) pool, the
 * queues alone, wake-up latency of a parked pool, the latency of a high-priority job on a
 * saturated pool, and (when named in --sections) a batch of group jobs from the main thread at
 * 1 and 2 workers.
 * Returns 0, or 1 if a run lost or duplicated a job (or an option was bad).
 */
#ifndef WS_BENCH_WL_EXTERNAL_H
#define WS_BENCH_WL_EXTERNAL_H

int external_bench_main(int argc, char **argv);

#endif /* WS_BENCH_WL_EXTERNAL_H */
