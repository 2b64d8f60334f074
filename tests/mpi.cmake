# worksteal_mpi under mpirun (label: mpi), one worker per rank, with more ranks than cores.
# Registered only when MPI was found (the top level then built src/mpi and examples/mpi).
#
# Sanitizer builds: Open MPI's own libraries are not instrumented and report on their own.
# Under ThreadSanitizer they show a lock-order inversion in mca_btl_tcp_add_procs and unlocks
# "by a wrong thread" in mca_pml_ob1, so the ThreadSanitizer build runs none of these tests.
# Under AddressSanitizer they leak at exit (in plugins that are unloaded before the report, so
# no suppression can name them): that build runs the test_mpi_run cases with leak detection
# off, keeping the address and undefined-behaviour checks on our code. The plain build runs all.
if(NOT TARGET worksteal_mpi_static)
  message(STATUS "MPI not found: the MPI tests are skipped")
  return()
endif()
if(WS_SANITIZE STREQUAL "thread")
  message(STATUS "MPI tests are skipped under ThreadSanitizer (reports from inside Open MPI)")
  return()
endif()

# Open MPI refuses to run as root and to put more ranks than cores without these flags.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE ws_mpiexec_version
                ERROR_QUIET)
set(ws_mpiexec_flags "")
if(ws_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(ws_mpiexec_flags --oversubscribe --allow-run-as-root)
endif()

# ws_add_mpi_test(NAME RANKS PROGRAM [args...]): one ctest entry running PROGRAM on RANKS ranks.
function(ws_add_mpi_test name ranks program)
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${ws_mpiexec_flags}
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${program}> ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 LABELS mpi)
endfunction()

add_executable(test_mpi_run test_mpi_run.c)
target_link_libraries(test_mpi_run PRIVATE worksteal_mpi_static ws_warnings)
target_compile_definitions(test_mpi_run PRIVATE _GNU_SOURCE)
ws_add_mpi_test(mpi_run_np2 2 test_mpi_run 20)
ws_add_mpi_test(mpi_run_np4 4 test_mpi_run 10)
# A plain MPI_Init: ws_mpi_run refuses at once and names the thread level.
add_executable(test_mpi_single test_mpi_single.c)
target_link_libraries(test_mpi_single PRIVATE worksteal_mpi_static ws_warnings)
target_compile_definitions(test_mpi_single PRIVATE _GNU_SOURCE)
ws_add_mpi_test(mpi_run_single 1 test_mpi_single)
set_tests_properties(mpi_run_single PROPERTIES SKIP_RETURN_CODE 77)
# Adversarial timing: every message held back a random 0..2 ms, so tokens, replies and
# requests overtake each other.
ws_add_mpi_test(mpi_run_np4_delayed 4 test_mpi_run 3)
set_tests_properties(mpi_run_np4_delayed PROPERTIES ENVIRONMENT WS_MPI_DELAY_US=2000)
if(WS_SANITIZE STREQUAL "address")
  foreach(t mpi_run_np2 mpi_run_np4 mpi_run_single)
    set_tests_properties(${t} PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
  endforeach()
  set_tests_properties(mpi_run_np4_delayed PROPERTIES ENVIRONMENT
    "WS_MPI_DELAY_US=2000;ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
  return()
endif()

# The SHA-1 of the UTS trees against FIPS 180-4's examples, and the small trees' counts.
add_executable(test_uts_sha1 test_uts_sha1.c)
target_link_libraries(test_uts_sha1 PRIVATE ws_uts_tree ws_warnings)
add_test(NAME test_uts_sha1 COMMAND test_uts_sha1)
set_tests_properties(test_uts_sha1 PROPERTIES TIMEOUT 120 LABELS mpi)

# UTS over ranks with the published counts of T1 and T3; the small trees many times.
ws_add_mpi_test(mpi_uts_T1_np2 2 ws-mpi-uts --tree T1 --workers 1 --check)
ws_add_mpi_test(mpi_uts_T3_np4 4 ws-mpi-uts --tree T3 --workers 1 --check)
ws_add_mpi_test(mpi_uts_small_np4 4 ws-mpi-uts --tree bin-small --workers 1 --reps 10 --check
                --quiet)
ws_add_mpi_test(mpi_uts_small_np2_delayed 2 ws-mpi-uts --tree geo-small --workers 1 --reps 10
                --delay-us 1000 --check --quiet)
ws_add_mpi_test(mpi_sweep_np4 4 ws-mpi-sweep --rows 256 --cols 256 --workers 1 --reps 3 --check)

# The installed library: pkg-config with mpicc, and find_package(worksteal COMPONENTS mpi).
add_test(NAME install_mpi_consumers
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install_mpi_test.sh ${PROJECT_BINARY_DIR}
                 ${MPIEXEC_EXECUTABLE} ${ws_mpiexec_flags})
set_tests_properties(install_mpi_consumers PROPERTIES TIMEOUT 300 LABELS "mpi;install")
