# The deque benchmark: lock-free Chase-Lev against the mutex baseline (bench/bench_deque.c).
add_executable(bench_deque bench_deque.c)
target_link_libraries(bench_deque PRIVATE ws_internal)

# A tiny smoke run, so that the benchmark keeps working; its numbers are not checked.
if(WS_BUILD_TESTS)
  add_test(NAME bench_deque_smoke COMMAND bench_deque --quick)
  set_tests_properties(bench_deque_smoke PROPERTIES TIMEOUT 120 LABELS "bench;deque")
endif()
