# The split deque's protocol under the GenMC model checker (RC11): both scenarios pass, and each
# weakened order is rejected in the scenario that needs it (tests/model_sdeque.c says which).
# Scenario 2 also runs under IMM (--imm, 21,057 executions, 62 s of CPU), which sees the orders
# that matter only through load buffering (a thief's read of a slot before the owner reuses it),
# which RC11 forbids by construction; scenario 3 (IMM only: 105 executions, 3 s) is the short one
# of those, a pop of a public item racing a steal, then a push into the slot the thief read.
ws_add_model(model_sdeque model_sdeque SCENARIO=1,WEAKEN=0:pass:400 SCENARIO=2,WEAKEN=0:pass:9000:long
             --imm,SCENARIO=2,WEAKEN=0:pass:10500:long --imm,SCENARIO=3,WEAKEN=0:pass:100
             SCENARIO=2,WEAKEN=1:fail:long SCENARIO=2,WEAKEN=2:fail:long SCENARIO=1,WEAKEN=3:fail
             SCENARIO=1,WEAKEN=4:fail SCENARIO=1,WEAKEN=5:fail SCENARIO=1,WEAKEN=6:fail)

# The reclamation of replaced arrays (growth, and the shrink before a worker sleeps): no thief
# reads a freed array; each weakened order of the store buffering that guards the free fails
# (tests/model_sdeque_reclaim.c).
ws_add_model(model_sdeque_reclaim model_sdeque_reclaim SCENARIO=1,WEAKEN=0:pass:500
             SCENARIO=2,WEAKEN=0:pass:65000:long SCENARIO=1,WEAKEN=1:fail SCENARIO=1,WEAKEN=2:fail
             SCENARIO=1,WEAKEN=3:fail SCENARIO=1,WEAKEN=4:fail SCENARIO=1,WEAKEN=5:fail
             SCENARIO=2,WEAKEN=1:fail:long SCENARIO=2,WEAKEN=5:fail:long)

# The inline fork-join of worksteal.h (its inline functions) on the real deque: exactly once
# against two thieves that run the records, across growth, a shrink and a record reused; it
# fails without the guard test (a task in a reserve taken back plainly):
# tests/model_sdeque_inline.c.
ws_add_model(model_sdeque_inline model_sdeque_inline SCENARIO=1,WEAKEN=0:pass:9900:long
             SCENARIO=2,WEAKEN=0:pass:110000:long SCENARIO=3,WEAKEN=0:pass:2000:long SCENARIO=2,WEAKEN=1:fail:long
             SCENARIO=3,WEAKEN=1:fail)

# A thief's request survives the owner's reopening of its fast path (the depth cap's update in
# push_rare included): wanted = 1 implies limit = 0 at rest, and a request cleared was served
# (the guard moved), with one thief and with two; fails with the reopening CAS relaxed, and with
# the thieves' exchange a plain store or relaxed (tests/model_sdeque_ask.c).
ws_add_model(model_sdeque_ask model_sdeque_ask SCENARIO=1,WEAKEN=0:pass:15 SCENARIO=2,WEAKEN=0:pass:630
             SCENARIO=1,WEAKEN=1:fail SCENARIO=2,WEAKEN=2:fail SCENARIO=1,WEAKEN=3:fail)

# A blocking owner's ws__sdeque_publish_all reaches every item, with the public count cut to
# 2 bits; fails if the deque may hold more items than the field counts
# (tests/model_sdeque_publish.c).
ws_add_model(model_sdeque_publish model_sdeque_publish WEAKEN=0:pass:24 WEAKEN=1:fail)

# A pop below the guard that keeps the reserve's room (ws__sdeque_pop_public raises the guard
# back after storing the new bottom): exactly once with an item pushed into the kept room; 9,891
# executions, 16 s of CPU. With the raise before the store of bottom, a thief takes the popped
# item too (tests/mutants: deque-room-before-bottom; tests/model_sdeque_room.c).
ws_add_model(model_sdeque_room model_sdeque_room SCENARIO=1:pass:4900)

# A push onto a deque that thieves emptied takes the slow path (which sees it empty and wakes a
# sleeper) even when the thief that took the last item read an older bottom and could not tell:
# after the owner's pop above top (scenario 1) and after a pop that finds the deque emptied
# (scenario 2); each fails without the pop's close of the fast path that it needs
# (tests/model_sdeque_emptied.c).
ws_add_model(model_sdeque_emptied model_sdeque_emptied SCENARIO=1,WITHOUT=0:pass:150
             SCENARIO=2,WITHOUT=0:pass:160 SCENARIO=1,WITHOUT=1:fail SCENARIO=2,WITHOUT=2:fail)

# A steal that comes back empty while an item it may take stays public says it lost a race (a
# CAS lost to the owner's pop), so that a worker about to sleep looks again; fails without the
# report (tests/model_sdeque_retry.c).
ws_add_model(model_sdeque_retry model_sdeque_retry WITHOUT=0:pass:5 WITHOUT=1:fail)

# ws_pool_run from a worker of another pool (src/pool.c, src/spare.c's ws__block_worker on the
# real deque): the woken spare takes every task the blocked worker forked, with and without a
# thief racing it; fails without the publish (the path before the fix), with the spare's wait
# relaxed, and with the owner's or the thief's half of the publication relaxed
# (tests/model_pool_run.c).
ws_add_model(model_pool_run model_pool_run THIEF=0:pass:2 THIEF=1:pass:1300 THIEF=0,SKIP_PUBLISH:fail
             THIEF=1,SKIP_PUBLISH:fail THIEF=0,WEAKEN=1:fail THIEF=1,WEAKEN=2:fail
             THIEF=1,WEAKEN=3:fail)

# A future's state word (src/future_state.h): a taker from a queue, a getter and a canceller race
# for it; it runs exactly once or is cancelled, no getter sleeps through its end, the record is
# recycled exactly once, and after every read of the record by a holder that freed its handle
# early (FREE_EARLY: the finish's acquire half); each weakened order or step fails
# (tests/model_future.c).
ws_add_model(model_future model_future WEAKEN=0:pass:16 CANCEL=1:pass:135 FREE_EARLY=1:pass:2
             WEAKEN=1:fail WEAKEN=2:fail WEAKEN=3:fail WEAKEN=4:fail WEAKEN=5:fail
             CANCEL=1,WEAKEN=4:fail CANCEL=1,WEAKEN=5:fail)

# The futures' inline submit and get of worksteal.h (as they are, on the real deque) against a
# getter elsewhere and a cancel: the function runs once, its result reaches every getter, no
# waiter sleeps through the finish; fails with the inline claim a store, its finish relaxed, or
# its finish a load and a store (tests/model_future_inline.c).
ws_add_model(model_future_inline model_future_inline WEAKEN=0:pass:19 CANCEL=1:pass:128:long WEAKEN=1:fail
             WEAKEN=2:fail:long WEAKEN=3:fail:long)

# The typed tasks' task stack (src/frames.c, with the header's inline spawn and sync) on the
# real deque: every leaf runs once with its arguments, a thief's request is never lost with the
# stack spawns' fast path open, and the flush keeps the deque in spawn order; fails with the
# owner's reopening CAS or the thief's exchange of end_fast relaxed (tests/model_frames.c).
ws_add_model(model_frames model_frames SCENARIO=1,WEAKEN=0:pass:2500:long SCENARIO=2,WEAKEN=0:pass:200
             SCENARIO=1,WEAKEN=1:fail SCENARIO=1,WEAKEN=2:fail:long)

# No thief sleeps while a worker's stack-task frames stay private with nobody asking: the real
# frames.c, deque, idle.c and worker search, a thief parking and an owner spawning; fails when
# a failed steal does not ask for the frames (tests/model_frames_wake.c, which says what the
# bounds leave out).
# And a task that blocks (ws_block_begin) with a frame private while a thief waits for it: the
# block's flush makes it reachable (BLOCK=1, 2,507 executions, 16 s; none without the flush).
ws_add_model(model_frames_wake model_frames_wake ROUNDS=1,MODEL_LOOKS=1:pass:1000
             --disable-instruction-caching,BLOCK=1,MODEL_LOOKS=2:pass:1250 WITHOUT=1:fail:long)

# A pool's teardown on the real pool.c (wait_admitted_gone, pool_teardown, join_spares), spare.c,
# idle.c, the injector, the deque and worker.c's loop: one worker and one job injected, the
# teardown meeting the worker running, searching or asleep; the job runs once and every thread
# leaves (scenario 1, 12,953 executions, 82 s of CPU). A job blocked until a spare ran its child,
# the teardown meeting it blocked with the spare asleep (scenario 2, 2,800 executions, 53 s),
# or after its end with the spare retired or asleep (MEET=0, 493 executions, 5 s), or blocking
# again once the spare retired, which must wake it (TWICE=1, 3,332 executions, 38 s). Two workers
# and no spare, one asleep while a task of the other blocks with a private child: the block's
# publication and notify wake the sleeper (scenario 3, 7 executions, 1 s). A thread
# that the teardown does not reach is a join that spins forever, which --check-liveness reports
# (tests/model_pool_teardown.c).
ws_add_model(model_pool_teardown model_pool_teardown
             --check-liveness,--disable-instruction-caching,SCENARIO=1:pass:6400
             --check-liveness,--disable-instruction-caching,SCENARIO=2:pass:1400
             --check-liveness,--disable-instruction-caching,SCENARIO=2,MEET=0:pass:240
             --check-liveness,--disable-instruction-caching,SCENARIO=2,MEET=0,TWICE=1:pass:1600
             --check-liveness,--disable-instruction-caching,SCENARIO=3:pass:7)

# The injector queue alone (src/injector.c) with two producers and two consumers, and with one
# producer of three records and one consumer of two takes: every record taken once, in its
# producer's order, its payload seen; fails with the consumer lock, the link or its read relaxed
# (tests/model_injector.c). 398 and 60 executions, under a second each.
ws_add_model(model_injector model_injector PRODUCERS=2,CONSUMERS=2:pass:199
             PRODUCERS=1,ITEMS=3,CONSUMERS=1,TRIES=2:pass:30 WEAKEN=1:fail
             PRODUCERS=1,ITEMS=3,CONSUMERS=1,TRIES=2,WEAKEN=2:fail
             PRODUCERS=1,ITEMS=3,CONSUMERS=1,TRIES=2,WEAKEN=3:fail)

# A get of a future that another worker claimed where it sat helps by leapfrogging that worker
# with the floor the claim's release hands it, never taking the runner's outer work: the real
# ws_future_submit and ws_future_get (future.c), leapfrog and deque (33 executions, 2 s); fails
# with the claim relaxed (tests/model_future_leapfrog.c). GenMC's spin-loop analysis does not
# finish on these sources: off.
ws_add_model(model_future_leapfrog model_future_leapfrog --disable-spin-assume:pass:30)

# A wait runs only work that it waits for: the real leapfrog, bounded steal and put-back; the
# helper never takes the runner's next work after the run it waits for ended (1), a free item
# (2), or an outer waited item a put-back moved up to the floor (3) (6,678, 7,436 and 7 executions);
# each fails with its mechanism removed, and the REACH cases fail because the real code takes
# the guarded paths (tests/model_wait_rule.c).
ws_add_model(model_wait_rule model_wait_rule SCENARIO=1:pass:3300 SCENARIO=2:pass:3700 SCENARIO=3:pass:4
             SCENARIO=1,WEAKEN=1:fail SCENARIO=2,WEAKEN=2:fail SCENARIO=3,WEAKEN=3:fail
             SCENARIO=1,REACH=1:fail)
