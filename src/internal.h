/* internal.h: private to the library; declarations shared between src/ files, grouped by the
 * file that defines them. Never installed.
 */
#ifndef WS_INTERNAL_H
#define WS_INTERNAL_H

#include "worksteal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- worker.c ---------------------------------------------------------------------------- */

/* For loops with automatic grain (loop.c): true when splitting the current range is useful now,
 * that is, the calling worker's deque is empty (what it pushed was stolen) or some workers of its
 * pool are looking for work. False outside a worker. Cheap: a few relaxed loads. */
bool ws__split_wanted(void);

#endif /* WS_INTERNAL_H */
