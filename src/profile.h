/* profile.h: the profiler's internals that its tests read or set, beside those of internal.h
 * (profile.c defines them all). */
#ifndef WS_PROFILE_H
#define WS_PROFILE_H

#include <stdint.h>

/* Tests only: the quantum of the test clock of ws__prof_set_test_clock (the smallest difference
 * two of its reads show), ns; 1 unless set. Set it while no profile runs, as the clock. */
void ws__prof_set_test_quantum(uint64_t ns);

/* The calling thread runs profiled work of the pool numbered serial (ws_pool's serial): the
 * stall detector shares its figures with the pool's other threads (profile_pool.c calls it
 * for the root; profile.c itself for a stolen child). */
void ws__prof_enter_pool(unsigned serial);

/* After calibration: the quantum of the clock strands are read on, ns (the test clock's while
 * one is set). The stall detector counts a strand within two quanta of its place's typical
 * length at that length, so a stall-free figure may exceed the raw one by up to two quanta per
 * strand. */
double ws__prof_quantum_ns(void);

#endif /* WS_PROFILE_H */
