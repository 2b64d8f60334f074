# Tests of group errors, cancellation and waits with a limit (label: group). Sizes shrink under
# the sanitizers; 4 workers is more than the machine's cores. The timeouts only catch hangs.
foreach(p 1 2 4)
  foreach(mode errors before during inside nested forkjoin rounds timed destroy placed owed)
    ws_add_test(test_group_cancel SOURCES test_group_cancel.c TIMEOUT 180 LABELS group
                ARGS ${p} ${mode})
  endforeach()
endforeach()

# The find-first example must stop early (its exit status says so), with 2 workers as its
# documentation shows and with more workers than cores.
if(WS_BUILD_EXAMPLES)
  foreach(p 2 4)
    add_test(NAME example_nqueens_first_${p} COMMAND example_nqueens_first 12 ${p})
    set_tests_properties(example_nqueens_first_${p} PROPERTIES TIMEOUT 180 LABELS group)
  endforeach()
endif()

# Groups that got jobs and were never waited for: reported by the library's debug build only.
# The reinit case runs in the debug build only: elsewhere initialising a group whose count a
# worker may still be settling is the undefined behaviour the check is there to catch (a data
# race under ThreadSanitizer).
set(modes destroy waited)
if(CMAKE_BUILD_TYPE STREQUAL "Debug") # the library's WS_DEBUG (the top CMakeLists.txt)
  list(APPEND modes reinit)
endif()
foreach(mode ${modes})
  ws_add_test(test_group_unwaited SOURCES test_group_unwaited.c TIMEOUT 120 LABELS group
              ARGS ${mode})
endforeach()
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_definitions(test_group_unwaited PRIVATE WS_TEST_LIB_DEBUG=1)
else()
  target_compile_definitions(test_group_unwaited PRIVATE WS_TEST_LIB_DEBUG=0)
endif()

# A group's count word and its waiters (src/group_count.h): no waiter sleeps through the count
# reaching 0, and each weakened order or step fails (tests/model_group_count.c).
ws_add_model(model_group_count model_group_count WEAKEN=0:pass:30 HOLDS=1:pass:43
             SUBMIT=1:pass:1800 HOLDS=1,SUBMIT=1:pass:2600 WEAKEN=1:fail WEAKEN=2:fail WEAKEN=3:fail
             WEAKEN=3,SUBMIT=1:fail HOLDS=1,WEAKEN=4:fail)
