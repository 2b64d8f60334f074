# Waits, lifetimes and teardown (label: life): each test reproduces one way a correct program
# used to hang or crash, described in the test's opening comment.

foreach(p 1 2 4)
  ws_add_test(test_life_waits SOURCES test_life_waits.c TIMEOUT 120 LABELS life
              ARGS ${p} acyclic)
endforeach()
foreach(p 1 2)
  ws_add_test(test_life_waits SOURCES test_life_waits.c TIMEOUT 180 LABELS life
              ARGS ${p} siblings)
endforeach()
ws_add_test(test_life_lifetime SOURCES test_life_lifetime.c TIMEOUT 120 LABELS life)
ws_add_test(test_life_teardown SOURCES test_life_teardown.c TIMEOUT 120 LABELS life)
# ThreadSanitizer kills a child of a multi-threaded fork that starts threads unless told not to;
# starting threads there is what this test checks.
ws_add_test(test_life_fork SOURCES test_life_fork.c TIMEOUT 180 LABELS life
            ENV "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1 die_after_fork=0")
ws_add_test(test_life_exit SOURCES test_life_exit.c TIMEOUT 120 LABELS life)
# A use of a destroyed pool's handle: caught by debug builds of the library, skipped elsewhere.
ws_add_test(test_life_destroyed SOURCES test_life_destroyed.c TIMEOUT 120 LABELS life)
set_tests_properties(test_life_destroyed PROPERTIES SKIP_RETURN_CODE 77)
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_definitions(test_life_destroyed PRIVATE WS_TEST_LIB_DEBUG=1)
else()
  target_compile_definitions(test_life_destroyed PRIVATE WS_TEST_LIB_DEBUG=0)
endif()
foreach(p 1 2)
  ws_add_test(test_life_memory SOURCES test_life_memory.c TIMEOUT 300 LABELS life ARGS ${p})
endforeach()

# The admission word's protocol under the GenMC model checker: passes as written, fails with
# each weakened order (tests/model_pool_lifetime.c). Skipped when the checker is not installed.
add_test(NAME model_pool_lifetime
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                 tests/model_pool_lifetime.c WEAKEN=0:pass:2 WAKE=1,WEAKEN=0:pass:5 WEAKEN=1:fail
                 WEAKEN=2:fail WEAKEN=3:fail WEAKEN=4:fail WAKE=1,WEAKEN=1:fail)
set_tests_properties(model_pool_lifetime PROPERTIES TIMEOUT 300 LABELS "life;model"
                     SKIP_RETURN_CODE 77)
# The pool reference a group holds for its injected jobs (tests/model_group_ref.c), likewise.
add_test(NAME model_group_ref
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/genmc_model.sh ${PROJECT_SOURCE_DIR}
                 tests/model_group_ref.c WEAKEN=0:pass:118 WEAKEN=1:fail WEAKEN=2:fail WEAKEN=3:fail)
set_tests_properties(model_group_ref PROPERTIES TIMEOUT 300 LABELS "life;group;model"
                     SKIP_RETURN_CODE 77)
foreach(m alloc thread)
  ws_add_test(test_life_faults SOURCES test_life_faults.c TIMEOUT 600 LABELS life ARGS ${m})
endforeach()

# Nothing left allocated at exit, under valgrind (tests/valgrind_leaks.sh; skipped without it,
# and in the sanitized builds, whose runtimes valgrind cannot run).
if(WS_SANITIZE STREQUAL "")
  add_executable(test_life_leaks test_life_leaks.c)
  target_link_libraries(test_life_leaks PRIVATE ws_internal)
  foreach(c futures pool default)
    foreach(p 1 2)
      add_test(NAME test_life_leaks_${c}_${p}
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/valgrind_leaks.sh
                       $<TARGET_FILE:test_life_leaks> ${c} ${p})
      set_tests_properties(test_life_leaks_${c}_${p} PROPERTIES TIMEOUT 300 LABELS life
                           SKIP_RETURN_CODE 77 ENVIRONMENT WS_NUM_WORKERS=${p})
    endforeach()
  endforeach()
endif()
