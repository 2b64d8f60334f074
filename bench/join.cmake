# The cost of one join: ns per join, and (with bench/join-instructions.sh) instructions per join.
add_executable(bench_join ${CMAKE_CURRENT_SOURCE_DIR}/bench_join.c)
target_link_libraries(bench_join PRIVATE ws_internal)
if(WS_BUILD_TESTS)
  add_test(NAME bench_join_smoke COMMAND bench_join 16 1)
  set_tests_properties(bench_join_smoke PROPERTIES TIMEOUT 120 LABELS bench)
endif()
