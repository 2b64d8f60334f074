# The futures benchmark (bench/wl_futures.c): futures against ws_spawn/ws_sync, futures over the
# mutex pool (central_pool.c) and, when a JDK is found, Java's ForkJoinPool (bench/peer_java/,
# compiled here with javac and run by bench_futures as a subprocess, one JVM per round; the
# program finds the classes in this build tree, so an installed bench_futures has no Java column
# once the build tree is gone).
# ws-bench's n-queens (wl_nqueens.c, with the dispatch it needs) is its spawn/sync version.
find_package(OpenMP REQUIRED COMPONENTS C)
add_executable(bench_futures wl_futures.c central_pool.c wl_nqueens.c bench_util.c peer.c)
target_link_libraries(bench_futures PRIVATE ws_internal OpenMP::OpenMP_C)
# ws-bench runs it as its closing futures section (bench.cmake, sorted before this file, defines
# ws-bench), so building ws-bench builds it too.
if(TARGET ws-bench)
  add_dependencies(ws-bench bench_futures)
endif()

find_package(Java 11 QUIET COMPONENTS Development Runtime)
if(Java_JAVAC_EXECUTABLE AND Java_JAVA_EXECUTABLE)
  message(STATUS "bench_futures: the Java peer (ForkJoinPool), ${Java_JAVAC_EXECUTABLE}")
  set(ws_java_classes ${CMAKE_CURRENT_BINARY_DIR}/peer_java)
  add_custom_command(OUTPUT ${ws_java_classes}/FuturesPeer.class
    COMMAND ${Java_JAVAC_EXECUTABLE} -d ${ws_java_classes}
            ${CMAKE_CURRENT_SOURCE_DIR}/peer_java/FuturesPeer.java
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/peer_java/FuturesPeer.java
    COMMENT "Building the Java peer of bench_futures (javac)")
  add_custom_target(peer_java DEPENDS ${ws_java_classes}/FuturesPeer.class)
  add_dependencies(bench_futures peer_java)
  target_compile_definitions(bench_futures PRIVATE WB_JAVA="${Java_JAVA_EXECUTABLE}"
                                                   WB_JAVA_CLASSES="${ws_java_classes}")
else()
  message(STATUS "bench_futures: no Java peer (no JDK found; Debian: "
                 "apt-get install -y default-jdk-headless)")
endif()

# A tiny smoke run: every version's answer is checked and the thread cap enforced; no timing is.
if(WS_BUILD_TESTS)
  add_test(NAME bench_futures_quick COMMAND bench_futures --quick --cap-workers 1,2,4)
  set_tests_properties(bench_futures_quick PROPERTIES TIMEOUT 300 LABELS bench)
endif()
