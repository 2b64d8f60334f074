/* verdict.h: the one rule by which every section of ws-bench judges a goal: the speed goals of
 * ws_bench.c, the grain goals of bench_loop and the futures goals of bench_futures (each section
 * is a program of its own, so the rule is header-only).
 *
 * A goal gets a verdict ("met" or "NOT met") only when the machine was quiet enough while its
 * figures were measured: other processes took at most WB_DISTURBED of the CPU time the machine
 * had meanwhile (its wall time times its CPUs, from /proc/stat: steal time counts as taken).
 * Otherwise it gets "no verdict" and the reason: on a busy machine a miss says more about the
 * other programs than about the scheduler, and so may a pass. --quick sizes are too small to
 * judge at all. Where the runs were too short for /proc/stat's 10 ms ticks to tell the share,
 * the caller's own check of the machine decides (ws_bench.c's CPU check; none elsewhere).
 */
#ifndef WS_BENCH_VERDICT_H
#define WS_BENCH_VERDICT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The most of the machine's CPU time other processes may take while a goal's figures are
 * measured, for the goal to be judged. */
#define WB_DISTURBED 0.10

/* CPU time used by everyone (from /proc/stat) and by this process (all its threads, and its
 * children once waited for: bench_loop and bench_phases measure in child processes), with the
 * wall time: the difference of two samples says how much other programs took meanwhile. */
typedef struct wb_cpu_sample {
    double all_s, self_s, wall_s;
} wb_cpu_sample;

static inline wb_cpu_sample wb_cpu_sample_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    wb_cpu_sample c = {0, 0, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9};
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        unsigned long long v[8] = {0};
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) == 8) {
            /* busy = user nice system irq softirq steal (not idle, not iowait); steal is time
             * the hypervisor gave our virtual CPUs to someone else */
            unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            c.all_s = (double)busy / (double)sysconf(_SC_CLK_TCK);
        }
        fclose(f);
    }
    const int whose[] = {RUSAGE_SELF, RUSAGE_CHILDREN};
    for (int i = 0; i < 2; i++) {
        struct rusage ru;
        if (getrusage(whose[i], &ru) == 0)
            c.self_s += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                        (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    }
    return c;
}

static inline unsigned wb_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* Other processes' CPU time and the machine's CPU time, summed over measured stretches. */
typedef struct wb_others {
    double others_s, capacity_s;
} wb_others;

/* Adds the stretch from a to b. */
static inline void wb_others_add(wb_others *o, wb_cpu_sample a, wb_cpu_sample b)
{
    double others = (b.all_s - a.all_s) - (b.self_s - a.self_s);
    o->others_s += others > 0 ? others : 0;
    o->capacity_s += (b.wall_s - a.wall_s) * wb_online_cpus();
}

/* Other processes' share of the CPU time, 0 to 1; -1 if unknown: below about 50 ticks of
 * capacity the figure is noise. */
static inline double wb_others_share(const wb_others *o)
{
    if (o->capacity_s < 0.5)
        return -1;
    return o->others_s < o->capacity_s ? o->others_s / o->capacity_s : 1;
}

/* Why a goal measured while other processes took `others` of the CPU time (-1: unknown) cannot
 * be judged, or NULL if it can. quick: --quick sizes; busy: the caller's own check found the
 * machine busy (used only when others is unknown). buf holds the reason when one is written. */
static inline const char *wb_no_verdict(double others, bool quick, bool busy, char *buf, size_t len)
{
    if (quick)
        return "--quick sizes are too small";
    if (others > WB_DISTURBED) {
        snprintf(buf, len, "other programs used %.0f%% of the CPUs meanwhile", 100 * others);
        return buf;
    }
    if (others < 0 && busy)
        return "the CPU check found the machine busy";
    return NULL;
}

/* The verdict on a goal: "met", "NOT met", or "no verdict: <why>" (in buf). */
static inline const char *wb_verdict(bool met, double others, bool quick, bool busy, char *buf,
                                     size_t len)
{
    char why[96];
    const char *blocked = wb_no_verdict(others, quick, busy, why, sizeof why);
    if (blocked == NULL)
        return met ? "met" : "NOT met";
    snprintf(buf, len, "no verdict: %s", blocked);
    return buf;
}

#endif /* WS_BENCH_VERDICT_H */
