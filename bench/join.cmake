# The cost of one join: ns per join, and (with bench/join-instructions.sh) instructions per join.
add_executable(bench_join ${CMAKE_CURRENT_SOURCE_DIR}/bench_join.c)
target_link_libraries(bench_join PRIVATE ws_internal)
if(WS_BUILD_TESTS)
  add_test(NAME bench_join_smoke COMMAND bench_join 16 1)
  set_tests_properties(bench_join_smoke PROPERTIES TIMEOUT 120 LABELS bench)
endif()
# The same program against the shared library, to compare the inline fast path's thread-local
# access there (initial-exec through the GOT) with the static library's.
add_executable(bench_join_shared ${CMAKE_CURRENT_SOURCE_DIR}/bench_join.c)
target_link_libraries(bench_join_shared PRIVATE worksteal_shared ws_warnings)
target_include_directories(bench_join_shared PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(bench_join_shared PRIVATE _GNU_SOURCE)
