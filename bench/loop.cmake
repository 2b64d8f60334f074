# The loop benchmark (bench/bench_loop.c): ws_parallel_for / ws_parallel_reduce against serial
# code and OpenMP. OpenMP is linked to this benchmark only, never to the library.
find_package(OpenMP REQUIRED COMPONENTS C)
add_executable(bench_loop bench_loop.c)
target_link_libraries(bench_loop PRIVATE ws_internal OpenMP::OpenMP_C m)

# A tiny smoke run, so that the benchmark keeps working; its timings are not checked, its
# results are (it exits non-zero if a variant disagrees with the serial answer).
if(WS_BUILD_TESTS)
  add_test(NAME bench_loop_quick COMMAND bench_loop --quick)
  set_tests_properties(bench_loop_quick PROPERTIES TIMEOUT 300 LABELS "bench;loop")
endif()
