# The phases benchmark (bench/bench_phases.c): flat phase-structured programs and a sparse LU on
# worksteal against OpenMP tasks, each runtime in child processes of its own: bench_phases (the
# driver, and worksteal's child), bench_phases_gomp (gcc and libgomp) and, when clang and libomp
# are found, bench_phases_libomp (clang -fopenmp=libomp; a custom command, since a CMake project
# has one C compiler). The work itself (phases_common.c: busy loop, LU kernels) is compiled once,
# by the project's compiler, and linked into all three, so that only the task runtimes differ.
find_package(OpenMP REQUIRED COMPONENTS C)
add_library(phases_common STATIC phases_common.c)
target_link_libraries(phases_common PRIVATE ws_warnings)
target_link_libraries(phases_common PUBLIC m)

add_executable(bench_phases bench_phases.c)
target_link_libraries(bench_phases PRIVATE ws_internal phases_common)
add_executable(bench_phases_gomp phases_omp.c)
target_link_libraries(bench_phases_gomp PRIVATE phases_common ws_warnings OpenMP::OpenMP_C)
add_dependencies(bench_phases bench_phases_gomp) # building the driver builds its children
install(TARGETS bench_phases bench_phases_gomp
  RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/worksteal)

# clang with libomp: found, and a probe program built and run with it.
find_program(WS_CLANG NAMES clang clang-14 clang-15 clang-16)
set(ws_libomp_ok FALSE)
if(WS_CLANG)
  set(probe ${CMAKE_CURRENT_BINARY_DIR}/libomp_probe)
  file(WRITE ${probe}.c "#include <omp.h>\nint main(void)\n{\n    int n = 0;\n"
       "#pragma omp parallel num_threads(2) reduction(+ : n)\n    n++;\n"
       "    return n == 2 && omp_get_max_threads() > 0 ? 0 : 1;\n}\n")
  execute_process(COMMAND ${WS_CLANG} -fopenmp=libomp ${probe}.c -o ${probe}
                  RESULT_VARIABLE built OUTPUT_QUIET ERROR_QUIET)
  if(built EQUAL 0)
    execute_process(COMMAND ${probe} RESULT_VARIABLE ran OUTPUT_QUIET ERROR_QUIET)
    if(ran EQUAL 0)
      set(ws_libomp_ok TRUE)
    endif()
  endif()
endif()
if(ws_libomp_ok)
  message(STATUS "bench_phases: the libomp child, built with ${WS_CLANG}")
  set(ph_libomp ${CMAKE_CURRENT_BINARY_DIR}/bench_phases_libomp)
  set(ph_flags -std=c11 -O3 -DNDEBUG -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
               -Wmissing-prototypes)
  if(WS_WERROR)
    list(APPEND ph_flags -Werror)
  endif()
  add_custom_command(OUTPUT ${ph_libomp}
    COMMAND ${WS_CLANG} ${ph_flags} -fopenmp=libomp -I${CMAKE_CURRENT_SOURCE_DIR}
            ${CMAKE_CURRENT_SOURCE_DIR}/phases_omp.c $<TARGET_FILE:phases_common> -lm
            -o ${ph_libomp}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/phases_omp.c ${CMAKE_CURRENT_SOURCE_DIR}/phases.h
            phases_common
    COMMENT "Building bench_phases_libomp (clang, libomp)")
  add_custom_target(phases_libomp DEPENDS ${ph_libomp})
  add_dependencies(bench_phases phases_libomp)
  install(PROGRAMS ${ph_libomp} DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/worksteal)
else()
  message(STATUS "bench_phases: no libomp child (clang with -fopenmp=libomp not found; Debian: "
                 "apt-get install -y clang libomp-dev)")
endif()

# ws-bench's demo runs it (bench.cmake, sorted before this file, defines ws-bench).
if(TARGET ws-bench)
  add_dependencies(ws-bench bench_phases)
endif()

# A smoke run at tiny sizes: every version's task counts and every LU checked (against the
# serial factorisation, and L U against the matrix); no timing is judged.
if(WS_BUILD_TESTS)
  add_test(NAME bench_phases_smoke COMMAND bench_phases --smoke)
  set_tests_properties(bench_phases_smoke PROPERTIES TIMEOUT 60 LABELS bench)
endif()
