# Tests of external work: the injector, groups, priorities, fairness, blocking tasks and destroy
# (label: external). Sizes shrink under the sanitizers (test_scaled); several entries run more
# workers than the machine has cores. The timeouts only catch hangs.

foreach(c single multi)
  ws_add_test(test_external_fifo SOURCES test_external_fifo.c TIMEOUT 180 LABELS external
              ARGS ${c})
endforeach()

foreach(p 1 2 4 8)
  foreach(mode submit group nested reuse worker mixed mixed_high cross)
    ws_add_test(test_external_stress SOURCES test_external_stress.c TIMEOUT 240
                LABELS external ARGS ${p} ${mode})
  endforeach()
endforeach()

foreach(p 1 2 4)
  ws_add_test(test_external_priority SOURCES test_external_priority.c TIMEOUT 180
              LABELS external ARGS ${p})
endforeach()
# A burst of jobs on a parked pool must wake more than one worker, at either priority.
foreach(p 2 4)
  ws_add_test(test_external_priority SOURCES test_external_priority.c TIMEOUT 180
              LABELS external ARGS ${p} burst_normal)
  ws_add_test(test_external_priority SOURCES test_external_priority.c TIMEOUT 180
              LABELS external ARGS ${p} burst_high)
endforeach()

foreach(p 2 4)
  foreach(mode wait loop joinwait)
    ws_add_test(test_external_fairness SOURCES test_external_fairness.c TIMEOUT 180
                LABELS external ARGS ${p} ${mode})
  endforeach()
endforeach()
ws_add_test(test_external_fairness SOURCES test_external_fairness.c TIMEOUT 180
            LABELS external ARGS 1 join)

# WORKERS MAX_SPARES (0: the default, one spare per worker)
foreach(cfg "2;0" "4;0" "2;1")
  ws_add_test(test_external_blocking SOURCES test_external_blocking.c TIMEOUT 180
              LABELS external ARGS ${cfg})
endforeach()

foreach(p 1 4)
  foreach(c queued chain)
    ws_add_test(test_external_destroy SOURCES test_external_destroy.c TIMEOUT 180
                LABELS external ARGS ${p} ${c})
  endforeach()
endforeach()

foreach(c flags enomem abort_submit abort_group_submit)
  ws_add_test(test_external_errors SOURCES test_external_errors.c TIMEOUT 120 LABELS external
              ARGS ${c})
endforeach()
