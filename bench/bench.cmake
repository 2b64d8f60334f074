# ws-bench: the benchmark suite and demo driver (`make demo` runs it; see docs/benchmarks.md).
#
# The same sources are linked twice: ws-bench against the library as shipped (Chase-Lev deque),
# and, when the library provides the mutex-deque build as worksteal_locked_static,
# ws-bench-locked against that. Both define the same ws_* symbols, so they cannot share a
# binary; ws-bench runs ws-bench-locked (found next to itself) for the ws-locked column.
# OpenMP is linked only here, for the OpenMP-tasks baseline; the library never uses it.
find_package(OpenMP REQUIRED COMPONENTS C)

set(WS_BENCH_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/ws_bench.c
  ${CMAKE_CURRENT_SOURCE_DIR}/bench_util.c
  ${CMAKE_CURRENT_SOURCE_DIR}/central_pool.c
  ${CMAKE_CURRENT_SOURCE_DIR}/wl_fib.c
  ${CMAKE_CURRENT_SOURCE_DIR}/wl_nqueens.c
  ${CMAKE_CURRENT_SOURCE_DIR}/wl_uts.c
  ${CMAKE_CURRENT_SOURCE_DIR}/wl_sort.c
  ${CMAKE_CURRENT_SOURCE_DIR}/wl_matmul.c
  ${CMAKE_CURRENT_SOURCE_DIR}/wl_batch.c
  ${CMAKE_CURRENT_SOURCE_DIR}/peer.c)

add_executable(ws-bench ${WS_BENCH_SOURCES})
target_link_libraries(ws-bench PRIVATE ws_internal OpenMP::OpenMP_C)
install(TARGETS ws-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(TARGET worksteal_locked_static)
  add_executable(ws-bench-locked ${WS_BENCH_SOURCES})
  target_compile_definitions(ws-bench-locked PRIVATE WB_LOCKED_DEQUE _GNU_SOURCE)
  target_include_directories(ws-bench-locked PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(ws-bench-locked PRIVATE worksteal_locked_static ws_warnings
                                                OpenMP::OpenMP_C)
  # Building ws-bench alone must still give it its ws-locked column.
  add_dependencies(ws-bench ws-bench-locked)
  install(TARGETS ws-bench-locked RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

if(WS_BUILD_TESTS)
  # A smoke run at tiny sizes: every workload on every scheduler, with oversubscription, and
  # every answer checked. No timing is judged here.
  add_test(NAME bench_quick
           COMMAND ws-bench --quick --workers 1,2,4 --csv ${CMAKE_CURRENT_BINARY_DIR}/bench-quick.csv)
  set_tests_properties(bench_quick PROPERTIES TIMEOUT 300 LABELS bench)
  # The typed tasks beside ws_join / ws_spawn on the workloads that have them, and their n/a on
  # one that has not: the answers checked, as above.
  add_test(NAME bench_stack_quick
           COMMAND ws-bench --quick --schedulers serial,ws,ws-stack --workloads fib,nqueens,uts,batch
                   --workers 1,2,4 --csv ${CMAKE_CURRENT_BINARY_DIR}/bench-stack-quick.csv)
  set_tests_properties(bench_stack_quick PROPERTIES TIMEOUT 300 LABELS bench)
endif()
