/* test_profile_cycles: WS_PROFILE_CYCLES=1, the profiler's PMU option (src/profile.c), behind
 * its runtime check. Where the machine counts the thread's user-mode cycles (perf_event_open),
 * the profile says its stall-free figures come from them; where it does not (a virtual machine
 * without a PMU, as the one these tests were written on), the profile falls back to the stall
 * detector and says so, and profiling works as without the option.
 */
#include "../src/internal.h"
#include "../src/profile.h"
#include "profile_shapes.h"
#include "test.h"

#include <stdlib.h>

int main(void)
{
    ASSERT_OK(setenv("WS_PROFILE_CYCLES", "1", 1)); /* read when the process first profiles */
    int fd = ws__user_cycles_open();
    bool have_pmu = fd >= 0;
    if (have_pmu)
        ws__user_cycles_close(fd);
    printf("user-mode cycle counter: %s\n", have_pmu ? "yes" : "no (the detector is used)");
    ws_pool *pool;
    ws_config cfg = {.workers = 2};
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    shape_tree_arg t = {6, 20000, 20000};
    for (int i = 0; i < 3; i++) {
        ws_profile p;
        ASSERT_OK(ws_pool_profile(pool, shape_tree_join, &t, &p));
        printf("work %.1f us (stall-free %.1f), span %.1f us (stall-free %.1f), stall clock %u\n",
               p.work_s * 1e6, p.stall_free_work_s * 1e6, p.span_s * 1e6, p.stall_free_span_s * 1e6,
               p.stall_clock);
        ASSERT_UEQ(p.stall_clock, have_pmu ? 1 : 0);
        ASSERT_UEQ(p.strands, 2 * 63 + 64);
        /* The detector's band moves a strand by up to two quanta of the clock (src/profile.c);
         * the cycle counter only takes time off. */
        double band_s = have_pmu ? 0 : 2 * ws__prof_quantum_ns() * 1e-9 * (double)p.strands;
        ASSERT(p.stall_free_work_s > 0 && p.stall_free_work_s <= p.work_s + band_s);
        ASSERT(p.stall_free_span_s > 0 && p.stall_free_span_s <= p.span_s + band_s);
    }
    ws_pool_destroy(pool);
    return 0;
}
