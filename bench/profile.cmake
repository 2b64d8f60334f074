# The profiler against computations of known span (bench/profile_shapes.c): prints, for each
# shape and 1, 2 and 4 workers, the median span against the expected one (docs/profiling.md).
add_executable(profile_shapes profile_shapes.c)
target_link_libraries(profile_shapes PRIVATE ws_internal)

# A smoke run, so that it keeps working; its figures are not checked (a loaded machine misses).
if(WS_BUILD_TESTS)
  add_test(NAME profile_shapes_quick COMMAND profile_shapes --quick)
  set_tests_properties(profile_shapes_quick PROPERTIES TIMEOUT 300 LABELS "bench;profile")
endif()
