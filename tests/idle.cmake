# Park and wake (src/idle.c): lost wake-ups provoked by delaying a submitter at its futex wake
# (test_idle_faults.c interposes syscall() in its own program only), and the GenMC model of
# the protocol (model_idle.c; skipped with a message when the checker is not installed).

foreach(mode before after)
  ws_add_test(test_idle_faults SOURCES test_idle_faults.c TIMEOUT 300 LABELS sched
              ARGS ${mode})
endforeach()
target_link_libraries(test_idle_faults PRIVATE ${CMAKE_DL_LIBS})

# The model: one worker and one outside submitter; one worker and a thread pushing onto a deque;
# and the first with the store-load order weakened, which must fail. Larger configurations (two
# workers, two submitters, or both kinds of producer) run for minutes and are left out.
set(WS_GENMC /work/shared/tools/genmc/genmc CACHE FILEPATH "GenMC model checker (optional)")
set(WS_MODEL_RUN bash ${CMAKE_CURRENT_SOURCE_DIR}/run_model.sh ${WS_GENMC} ${PROJECT_SOURCE_DIR}/src
    ${CMAKE_CURRENT_SOURCE_DIR}/model_idle.c)
add_test(NAME model_idle COMMAND ${WS_MODEL_RUN} pass -DWORKERS=1 -DPRODUCERS=1)
add_test(NAME model_idle_deque COMMAND ${WS_MODEL_RUN} pass -DWORKERS=1 -DPRODUCERS=0
                                       -DDEQUE_PRODUCER=1)
add_test(NAME model_idle_weakened COMMAND ${WS_MODEL_RUN} fail -DWORKERS=1 -DPRODUCERS=1 -DWEAKEN)
set_tests_properties(model_idle model_idle_deque model_idle_weakened PROPERTIES TIMEOUT 300 LABELS "sched;model"
                     SKIP_RETURN_CODE 77)
