/* model_frames_sources.h: the sources of the stack-task models (tests/model_frames.c,
 * tests/model_frames_wake.c), included as they are: the deque, the header's inline fast paths
 * of the typed tasks, frames.c. The header's inline ws_spawn and ws_sync are not the models'
 * (frames.c calls the library's: model_join_mirror.h). Included once, after the model's -D
 * hooks. */
#ifndef WS_MODEL_FRAMES_SOURCES_H
#define WS_MODEL_FRAMES_SOURCES_H

/* The header's portable spellings, as under ThreadSanitizer: the checker runs no inline
 * assembly. */
#define __SANITIZE_THREAD__ 1
#undef __BYTE_ORDER__

#include "../src/deque.c"
#include "worksteal.h"
#undef ws_spawn
#undef ws_sync
#include "../src/frames.c"

#endif /* WS_MODEL_FRAMES_SOURCES_H */
