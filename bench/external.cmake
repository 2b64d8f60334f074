# The external-work benchmark (bench/wl_external.c): injector throughput against the
# central-queue (mutex) pool, wake-up latency of a parked pool, and high-priority latency.
add_executable(bench_external bench_external.c wl_external.c central_pool.c)
target_link_libraries(bench_external PRIVATE ws_internal)

# A tiny smoke run, so that the benchmark keeps working; its numbers are not checked (it exits
# non-zero if a job was lost or ran twice).
if(WS_BUILD_TESTS)
  add_test(NAME bench_external_quick COMMAND bench_external --quick)
  set_tests_properties(bench_external_quick PROPERTIES TIMEOUT 120 LABELS "bench;external")
endif()
