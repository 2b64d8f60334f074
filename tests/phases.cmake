# Every worker joins in on a flat batch (tests/test_phases.c; label: sched): one entry per API
# and worker count, each running its shapes. The tasks spin until the batch is shared or a
# deadline passes, so a pass takes a fraction of a second and a failure seconds.
# Not registered: nested_own for futures. There the parent's get of the older child (the leaf,
# stolen) cannot run the newer one (the batch: a free item, docs/scheduler.md, "What a wait may
# run"), so it blocks and a spare makes the batch; the spare's get of the batch's oldest future
# runs it where it sits, below private items that no take of the spare answers for until that
# task ends, unless a worker is idle at the claim, when the get publishes them first; the thief
# is often still busy then: 0 to 2 of 6 batches alone in three runs at P=2 on 2026-12-07 (run
# `test_phases future 2 nested_own`).
foreach(api spawn stack group future loop join submit)
  set(shapes top nested nested_own back park)
  if(api STREQUAL "future")
    list(REMOVE_ITEM shapes nested_own)
  endif()
  foreach(p 2 4)
    ws_add_test(test_phases SOURCES test_phases.c TIMEOUT 120 LABELS sched
                ARGS ${api} ${p} ${shapes})
  endforeach()
endforeach()

# Random programs mixing spawn/sync, stack tasks, groups, futures, loops and joins on pools of 1
# to 4 workers, against a serial interpreter (tests/test_mix_gen.c); a hang fails through its
# watchdog.
ws_add_test(test_mix_gen SOURCES test_mix_gen.c TIMEOUT 180 LABELS sched)
