/* peer.c: which peers this ws-bench was built with (peer.h); peers.cmake defines WB_HAVE_TBB
 * and WB_HAVE_RAYON for ws-bench when it links them. */
#include "peer.h"

#include <stddef.h>

#ifdef WB_HAVE_TBB
static const wb_peer tbb = {wb_tbb_create, wb_tbb_destroy, wb_tbb_run,
                            wb_tbb_fib,    wb_tbb_nqueens, wb_tbb_uts};
const wb_peer *const wb_peer_tbb = &tbb;
#else
const wb_peer *const wb_peer_tbb = NULL;
#endif

#ifdef WB_HAVE_RAYON
static const wb_peer rayon = {wb_rayon_create, wb_rayon_destroy, wb_rayon_run,
                              wb_rayon_fib,    wb_rayon_nqueens, wb_rayon_uts};
const wb_peer *const wb_peer_rayon = &rayon;
#else
const wb_peer *const wb_peer_rayon = NULL;
#endif
