# The busy-neighbour table (bench/neighbours.sh, docs/benchmarks.md "Busy neighbours"): each
# runtime's fib, nqueens and tree alone and beside CPU hogs. The test is its smoke run at tiny
# sizes: it fails on a wrong answer, a failed run, or a hog that was not running throughout its
# loaded run; no timing is judged. It runs alone (RUN_SERIAL): its hogs would slow the tests
# beside it.
if(WS_BUILD_TESTS)
  add_test(NAME bench_neighbours_quick
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/neighbours.sh --quick ${CMAKE_BINARY_DIR})
  set_tests_properties(bench_neighbours_quick PROPERTIES TIMEOUT 120 LABELS bench RUN_SERIAL TRUE)
endif()
