# Futures (ws_future_*, tests/test_future.c; label: future). Sizes shrink under the sanitizers
# and without WS_TEST_LONG (tests/test.h); the timeouts are hang guards set for a ThreadSanitizer
# build on two cores. The worker counts go past the machine's cores on purpose.

foreach(p 1 2 4)
  foreach(c any_order outside passed free_early)
    ws_add_test(test_future SOURCES test_future.c TIMEOUT 300 LABELS future ARGS ${c} ${p})
  endforeach()
  # The 10,000-deep chain takes ThreadSanitizer about 100 s on a loaded two-core machine.
  ws_add_test(test_future SOURCES test_future.c TIMEOUT 900 LABELS future ARGS nested ${p})
endforeach()

# The cap of P threads with no spares (WS_NO_SPARES), at up to 16 workers; and with spares.
foreach(p 1 2 4 8 16)
  ws_add_test(test_future SOURCES test_future.c TIMEOUT 300 LABELS future
              ARGS nqueens ${p} nospares)
endforeach()
ws_add_test(test_future SOURCES test_future.c TIMEOUT 300 LABELS future ARGS nqueens 4)

foreach(p 2 8)
  ws_add_test(test_future SOURCES test_future.c TIMEOUT 300 LABELS future ARGS mix ${p})
  ws_add_test(test_future SOURCES test_future.c TIMEOUT 300 LABELS future
              ARGS mix ${p} nospares)
endforeach()

foreach(c fail busy oldest_first other_pool abort_double_free abort_get_after_free abort_freed_outside abort_self_get
          abort_null)
  ws_add_test(test_future SOURCES test_future.c TIMEOUT 180 LABELS future ARGS ${c})
endforeach()

# Where a get that takes its future back runs it: the worker's floor, the claim, the deque.
foreach(c at_index put_back)
  ws_add_test(test_future_index SOURCES test_future_index.c TIMEOUT 60 LABELS future ARGS ${c})
endforeach()

# ws::async and ws::future<T> (worksteal.hpp), when a C++ compiler is installed (tests/cxx.cmake
# enables the language).
if(CMAKE_CXX_COMPILER)
  add_executable(test_future_cxx test_future_cxx.cpp)
  set_target_properties(test_future_cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                                   CXX_EXTENSIONS OFF)
  target_compile_options(test_future_cxx PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         $<$<BOOL:${WS_WERROR}>:-Werror>)
  target_link_libraries(test_future_cxx PRIVATE worksteal_static)
  foreach(p 1 2 4)
    add_test(NAME test_future_cxx_${p} COMMAND test_future_cxx ${p})
    set_tests_properties(test_future_cxx_${p} PROPERTIES TIMEOUT 180 LABELS "future;cxx")
  endforeach()
  # The shapes of test_future_rules fkmh and self_get, through ws::async.
  foreach(run "fkmh 3" "fkmh 4" "self_get 2" "self_get 3" "self_get 4")
    separate_arguments(run)
    list(GET run 0 shape)
    list(GET run 1 p)
    foreach(spares "" nospares)
      string(JOIN _ name test_future_cxx ${shape} ${p} ${spares})
      add_test(NAME ${name} COMMAND test_future_cxx ${p} ${shape} ${spares})
      set_tests_properties(${name} PROPERTIES TIMEOUT 120 LABELS "future;cxx")
    endforeach()
  endforeach()
endif()

# The ways a helping get breaks the promise, one case each (tests/test_future_rules.c).
foreach(p 3 4)
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS fkmh ${p})
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS fkmh ${p} nospares)
endforeach()
foreach(p 2 3 4)
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS self_get ${p})
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS self_get ${p} nospares)
endforeach()
foreach(c put_back leapfrog_window)
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future ARGS ${c})
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS ${c} nospares)
endforeach()
foreach(c dead_slots_cancel dead_slots_get)
  foreach(n 20000 100000)
    ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
                ARGS ${c} ${n})
  endforeach()
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS ${c} 20000 nospares)
endforeach()
foreach(p 2 4)
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS shared_gets ${p})
endforeach()
# Idle workers steal as they come only from 3 workers on: with 2, the one idle worker sleeps
# through the pushes into a reserve left open (no wake-up), and the getter runs all.
foreach(p 3 4)
  ws_add_test(test_future_rules SOURCES test_future_rules.c TIMEOUT 120 LABELS future
              ARGS own_handle ${p})
endforeach()

# Random acyclic programs of futures against a serial interpreter (tests/test_future_gen.c), a
# fixed seed per entry.
foreach(p 1 2 3 4)
  math(EXPR seed "1000 + ${p}")
  ws_add_test(test_future_gen SOURCES test_future_gen.c TIMEOUT 300 LABELS future
              ARGS ${p} --seed ${seed})
  math(EXPR seed "2000 + ${p}")
  ws_add_test(test_future_gen SOURCES test_future_gen.c TIMEOUT 300 LABELS future
              ARGS ${p} nospares --seed ${seed})
endforeach()
