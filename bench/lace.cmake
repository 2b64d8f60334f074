# Lace's fib, knapsack and queens programs ported to worksteal's typed tasks (bench/lace/;
# compare.sh runs them beside Lace, built from a Lace source tree, outside CI). Built here so that
# they compile in every build, and checked at small sizes by bench_lace_ports.
foreach(p fib knapsack queens)
  add_executable(lace_port_${p} ${CMAKE_CURRENT_SOURCE_DIR}/lace/${p}.c)
  target_link_libraries(lace_port_${p} PRIVATE worksteal_static ws_warnings)
endforeach()

if(WS_BUILD_TESTS)
  add_test(NAME bench_lace_ports
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lace/check-ports.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(bench_lace_ports PROPERTIES TIMEOUT 300 LABELS bench)
endif()
