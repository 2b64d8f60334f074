# Park and wake (src/idle.c): lost wake-ups provoked by delaying a submitter at its futex wake
# (test_idle_faults.c interposes syscall() in its own program only), and the GenMC model of
# the protocol (model_idle.c; skipped with a message when the checker is not installed).

foreach(mode before after)
  ws_add_test(test_idle_faults SOURCES test_idle_faults.c TIMEOUT 300 LABELS sched
              ARGS ${mode})
endforeach()
target_link_libraries(test_idle_faults PRIVATE ${CMAKE_DL_LIBS})

# The model (tests/genmc_model.sh runs it) on the real idle.c, injector.c, deque.c and worker.c's
# search, with a futex that wakes one: one worker and one outside submitter (a push in flight
# included), one worker and a push onto another worker's deque, and one worker that stays in
# the loop after the last job, so that the teardown meets it asleep; each passes with
# --check-liveness (a worker that sleeps through the teardown is an error), and each of these
# must fail: the in-flight check of park removed, and every single order weakened that these
# cases rely on (tests/model_idle.c lists them, and those that only larger cases would need).
set(idle_weakened)
foreach(n 2 3 5 6 8 9)
  list(APPEND idle_weakened WEAKEN=${n}:fail)
endforeach()
ws_add_model(model_idle model_idle --check-liveness,WORKERS=1:pass:224 NO_IN_FLIGHT:fail
             ${idle_weakened} --check-liveness,PRODUCERS=0,DEQUE_PRODUCER=1:pass:3200:long
             PRODUCERS=0,DEQUE_PRODUCER=1,WEAKEN=1:fail:long --check-liveness,STAY=1:pass:3600:long)
if(TEST model_idle)
  set_tests_properties(model_idle PROPERTIES LABELS "sched;model")
endif()

# The two-worker and two-submitter cases on the mirrored loops (tests/model_idle_handoff.c), in
# the normal build only: one worker and two outside submitters (the second lost wake-up of an old
# protocol: a clear after a wake-up that reached nobody suppressed the other submitter's), and two
# workers, one parked and one searching, each job held by its worker, with one submitter of two
# jobs (the search hand-off). Minutes each (make models); weakened, or without the hand-off, they fail within a
# second.
if(WS_SANITIZE STREQUAL "")
  add_test(NAME model_idle_handoff_two_submitters
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                   tests/model_idle_handoff.c WORKERS=1,PRODUCERS=2:pass:41000:long
                   WORKERS=1,PRODUCERS=2,WEAKEN:fail)
  set_tests_properties(model_idle_handoff_two_submitters PROPERTIES TIMEOUT 7200
                       LABELS "sched;model" SKIP_RETURN_CODE 77
                       ENVIRONMENT GENMC_FLAGS=--check-liveness)
  set(two_workers WORKERS=2,START_PARKED=1,START_SEARCHING=1,HOLD=1,PRODUCERS=1,SUBMITS=2)
  add_test(NAME model_idle_handoff_two_workers
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                   tests/model_idle_handoff.c ${two_workers}:pass:210000:long ${two_workers},WEAKEN:fail
                   ${two_workers},NO_HANDOFF:fail)
  set_tests_properties(model_idle_handoff_two_workers PROPERTIES TIMEOUT 7200
                       LABELS "sched;model" SKIP_RETURN_CODE 77
                       ENVIRONMENT GENMC_FLAGS=--check-liveness)
endif()
