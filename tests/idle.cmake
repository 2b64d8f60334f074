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
# the loop after the last job, so that the teardown meets it asleep (and, in seconds, the push
# onto a deque with the worker asleep first: the push's wake-up); each passes with
# --check-liveness (a worker that sleeps through the teardown is an error), and each of these
# must fail: the in-flight check of park removed, and every single order weakened that these
# cases rely on (tests/model_idle.c lists them, and those that only larger cases would need).
set(idle_weakened)
foreach(n 2 3 5 6 8 9)
  list(APPEND idle_weakened WEAKEN=${n}:fail)
endforeach()
ws_add_model(model_idle model_idle --check-liveness,WORKERS=1:pass:224 NO_IN_FLIGHT:fail
             ${idle_weakened} --check-liveness,PRODUCERS=0,DEQUE_PRODUCER=1,IDLE_FIRST=2:pass:10
             --check-liveness,PRODUCERS=0,DEQUE_PRODUCER=1:pass:3200:long
             PRODUCERS=0,DEQUE_PRODUCER=1,WEAKEN=1:fail:long --check-liveness,STAY=1:pass:3600:long)
if(TEST model_idle)
  set_tests_properties(model_idle PROPERTIES LABELS "sched;model")
endif()

# The search hand-off on the real idle.c (tests/model_idle.c, "The search hand-off"): a worker
# asleep before the burst and a second one still searching when it comes, each holding the job
# it takes, with two jobs from one submitter or one each from two; the sleeper gets its job only
# if the searcher hands the search on. Seconds each; without the hand-off, or with the end of a
# search acq_rel, it fails. Then one worker asleep before two submitters (one wakes it, the other
# relies on it).
set(idle_handoff WORKERS=1,SEARCHER=1,HOLD=1,IDLE_FIRST=2)
ws_add_model(model_idle_search_handoff model_idle ${idle_handoff},SUBMITS=2:pass:4700
             ${idle_handoff},PRODUCERS=2:pass:9500 ${idle_handoff},SUBMITS=2,NO_HANDOFF:fail
             ${idle_handoff},SUBMITS=2,WEAKEN=4:fail
             --check-liveness,WORKERS=1,PRODUCERS=2,IDLE_FIRST=2:pass:3600
             WORKERS=1,PRODUCERS=2,IDLE_FIRST=2,WEAKEN=2:fail)
if(TEST model_idle_search_handoff)
  set_tests_properties(model_idle_search_handoff PROPERTIES LABELS "sched;model")
endif()

# The two-submitter case on the mirrored loops (tests/model_idle_handoff.c), in the normal build
# only: one worker and two outside submitters, the worker's parking racing them (the second lost
# wake-up of an old protocol: a clear after a wake-up that reached nobody suppressed the other
# submitter's), which the real idle.c covers only with the worker asleep first (above). Minutes
# (make models); weakened, it fails within a second. Its two-worker case (the search hand-off) is
# checked on the real idle.c above.
if(WS_SANITIZE STREQUAL "")
  add_test(NAME model_idle_handoff_two_submitters
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                   tests/model_idle_handoff.c WORKERS=1,PRODUCERS=2:pass:41000:long
                   WORKERS=1,PRODUCERS=2,WEAKEN:fail)
  set_tests_properties(model_idle_handoff_two_submitters PROPERTIES TIMEOUT 7200
                       LABELS "sched;model" SKIP_RETURN_CODE 77
                       ENVIRONMENT GENMC_FLAGS=--check-liveness)
endif()

# The injector queue with four records and three takes (tests/model_injector.c): a record taken
# one take after its link was read; fails with the first read of a link in take_locked relaxed.
ws_add_model(model_injector_chain model_injector PRODUCERS=1,ITEMS=4,CONSUMERS=1,TRIES=3:pass:320)
