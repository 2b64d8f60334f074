# The split deque's protocol under the GenMC model checker (RC11): both scenarios pass, and each
# weakened order is rejected in the scenario that needs it (tests/model_sdeque.c says which).
# Skipped with a message when the checker is not installed; not under sanitizers (the model does
# not depend on the build).
if(WS_SANITIZE STREQUAL "")
  add_test(NAME model_sdeque
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                   tests/model_sdeque.c SCENARIO=1,WEAKEN=0:pass SCENARIO=2,WEAKEN=0:pass
                   SCENARIO=2,WEAKEN=1:fail SCENARIO=2,WEAKEN=2:fail SCENARIO=1,WEAKEN=3:fail
                   SCENARIO=1,WEAKEN=4:fail SCENARIO=1,WEAKEN=5:fail SCENARIO=1,WEAKEN=6:fail)
  set_tests_properties(model_sdeque PROPERTIES TIMEOUT 900 LABELS model SKIP_RETURN_CODE 77)
endif()

# The reclamation of replaced arrays (growth, and the shrink before a worker sleeps): no thief
# reads a freed array; each weakened order of the store buffering that guards the free fails
# (tests/model_sdeque_reclaim.c).
if(WS_SANITIZE STREQUAL "")
  add_test(NAME model_sdeque_reclaim
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                   tests/model_sdeque_reclaim.c SCENARIO=1,WEAKEN=0:pass SCENARIO=2,WEAKEN=0:pass
                   SCENARIO=1,WEAKEN=1:fail SCENARIO=1,WEAKEN=2:fail SCENARIO=1,WEAKEN=3:fail
                   SCENARIO=1,WEAKEN=4:fail SCENARIO=1,WEAKEN=5:fail SCENARIO=2,WEAKEN=1:fail
                   SCENARIO=2,WEAKEN=5:fail)
  set_tests_properties(model_sdeque_reclaim PROPERTIES TIMEOUT 900 LABELS model
                       SKIP_RETURN_CODE 77)
endif()

# The inline fork-join's plain take of a task whose recorded bottom is the deque's and whose
# index is private: exactly once against a thief, and it fails in both scenarios without the
# guard test (a shared task; one pushed into a reserve): tests/model_sdeque_inline.c.
if(WS_SANITIZE STREQUAL "")
  add_test(NAME model_sdeque_inline
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                   tests/model_sdeque_inline.c SCENARIO=1,WEAKEN=0:pass SCENARIO=2,WEAKEN=0:pass
                   SCENARIO=1,WEAKEN=1:fail SCENARIO=2,WEAKEN=1:fail)
  set_tests_properties(model_sdeque_inline PROPERTIES TIMEOUT 900 LABELS model
                       SKIP_RETURN_CODE 77)
endif()

# A future's state word (src/future_state.h): a taker from a queue, a getter and a canceller race
# for it; it runs exactly once or is cancelled, no getter sleeps through its end, the record is
# recycled exactly once; each weakened order or step fails (tests/model_future.c).
if(WS_SANITIZE STREQUAL "")
  add_test(NAME model_future
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                   tests/model_future.c WEAKEN=0:pass CANCEL=1:pass WEAKEN=1:fail WEAKEN=2:fail
                   WEAKEN=3:fail WEAKEN=4:fail WEAKEN=5:fail CANCEL=1,WEAKEN=4:fail
                   CANCEL=1,WEAKEN=5:fail)
  set_tests_properties(model_future PROPERTIES TIMEOUT 300 LABELS model SKIP_RETURN_CODE 77)
endif()
