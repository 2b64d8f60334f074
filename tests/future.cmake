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
endif()
