# Scheduler and fork-join tests (label: sched). Sizes shrink under the sanitizers (test_scaled
# and WS_SANITIZED in the sources); the timeouts are set for a ThreadSanitizer build on two
# cores, so that only a hang reaches them.

foreach(p 1 2 4 8 default)
  ws_add_test(test_sched_fib SOURCES test_sched_fib.c TIMEOUT 180 LABELS sched ARGS ${p})
  ws_add_test(test_sched_nqueens SOURCES test_sched_nqueens.c TIMEOUT 180 LABELS sched
              ARGS ${p})
endforeach()

ws_add_test(test_sched_spawn_many SOURCES test_sched_spawn_many.c TIMEOUT 180 LABELS sched)
ws_add_test(test_sched_spawn_many SOURCES test_sched_spawn_many.c TIMEOUT 180 LABELS sched
            ARGS 1)

foreach(mode a b)
  ws_add_test(test_sched_deep SOURCES test_sched_deep.c TIMEOUT 180 LABELS sched ARGS ${mode})
endforeach()

ws_add_test(test_sched_wakeup SOURCES test_sched_wakeup.c TIMEOUT 180 LABELS sched)
# More workers than cores: sleepers and searchers compete for the CPUs with the submitters.
ws_add_test(test_sched_wakeup SOURCES test_sched_wakeup.c TIMEOUT 180 LABELS sched
            ARGS 8 30000)
ws_add_test(test_sched_nested_pools SOURCES test_sched_nested_pools.c TIMEOUT 180
            LABELS sched)
ws_add_test(test_sched_pool_churn SOURCES test_sched_pool_churn.c TIMEOUT 180 LABELS sched)
ws_add_test(test_sched_idle SOURCES test_sched_idle.c TIMEOUT 60 LABELS sched)
ws_add_test(test_sched_stats SOURCES test_sched_stats.c TIMEOUT 120 LABELS sched)
ws_add_test(test_sched_api SOURCES test_sched_api.c TIMEOUT 120 LABELS sched
            ENV WS_NUM_WORKERS=3)

foreach(c max_workers config_reasons env_workers env_stack env_unknown thread_fail alloc_fail
          abort_sync_order
          abort_sync_twice abort_unsynced abort_join_null abort_spawn_null)
  ws_add_test(test_sched_errors SOURCES test_sched_errors.c TIMEOUT 180 LABELS sched ARGS ${c})
endforeach()

# The park/wake store-buffering pattern as a litmus test (test_idle_litmus.c).
ws_add_test(test_idle_litmus SOURCES test_idle_litmus.c TIMEOUT 180 LABELS sched)

# Work a blocked worker holds stays within reach: past the public part's 16 bits, and from a
# worker waiting in ws_pool_run on another pool (test_sched_stranded.c; a hang is the failure).
foreach(c publish pool_run)
  ws_add_test(test_sched_stranded SOURCES test_sched_stranded.c TIMEOUT 120 LABELS sched
              ARGS ${c})
endforeach()
# Idle workers park at once while the machine has no CPU to spare, once most of the last counts
# of runnable threads say so (the count forced by a test hook; the assertions count looks, not
# time).
foreach(c parse contended score)
  ws_add_test(test_sched_contention SOURCES test_sched_contention.c TIMEOUT 120 LABELS sched
              ARGS ${c})
endforeach()
# Typed tasks (WS_TASK_n, src/frames.c): arities, name_run from everywhere, declarations and
# mutual recursion, exactly-once trees on more workers than cores, chains deeper than many
# segments, the rest of the API inside a typed task, statistics, profiling, tracing, and the
# contract violations' one line and abort (name_run on a pool inherited through fork() too).
foreach(c arity nested mutual deep boundary mix order)
  foreach(p 1 2 4)
    ws_add_test(test_sched_stack SOURCES test_sched_stack.c TIMEOUT 180 LABELS sched
                ARGS ${c} ${p})
  endforeach()
endforeach()
foreach(p 1 2 4 8)
  ws_add_test(test_sched_stack SOURCES test_sched_stack.c TIMEOUT 180 LABELS sched
              ARGS stress ${p})
endforeach()
foreach(c "stats 1" "stats 2" "profile 2" "trace 2" "spread 2" "spread 4" "spread 8")
  separate_arguments(args UNIX_COMMAND "${c}")
  ws_add_test(test_sched_stack SOURCES test_sched_stack.c TIMEOUT 180 LABELS sched ARGS ${args})
endforeach()
foreach(c forked abort_sync_other abort_sync_none abort_unsynced abort_no_memory)
  ws_add_test(test_sched_stack SOURCES test_sched_stack.c TIMEOUT 180 LABELS sched ARGS ${c})
endforeach()
# The same through the library's slow paths alone (WS_NO_INLINE_JOIN).
add_executable(test_sched_stack_no_inline test_sched_stack.c)
target_link_libraries(test_sched_stack_no_inline PRIVATE ws_internal)
target_compile_definitions(test_sched_stack_no_inline PRIVATE WS_NO_INLINE_JOIN)
foreach(c arity mutual stress deep boundary mix order spread)
  ws_add_test(test_sched_stack_no_inline TIMEOUT 180 LABELS sched ARGS ${c} 2)
endforeach()
ws_add_test(test_sched_stack_no_inline TIMEOUT 180 LABELS sched ARGS stats 1)
foreach(c abort_sync_other abort_sync_none abort_unsynced abort_no_memory)
  ws_add_test(test_sched_stack_no_inline TIMEOUT 180 LABELS sched ARGS ${c})
endforeach()
# The test's source builds without warnings: a build of it with -Werror and without its pragmas
# (WS_TEST_STACK_STRICT), run as a test so that a warning of worksteal.h fails this entry only.
add_executable(test_sched_stack_strict EXCLUDE_FROM_ALL test_sched_stack.c)
target_link_libraries(test_sched_stack_strict PRIVATE ws_internal)
target_compile_definitions(test_sched_stack_strict PRIVATE WS_TEST_STACK_STRICT)
target_compile_options(test_sched_stack_strict PRIVATE -Werror)
add_test(NAME test_sched_stack_strict
         COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target test_sched_stack_strict)
set_tests_properties(test_sched_stack_strict PROPERTIES TIMEOUT 300 LABELS sched)

# The typed tasks as a user links them (tests/test_stack_link.c): against the shared library with
# lazy binding, and against the static library, at -O0 and -O2; a register pinned across the
# slow spawn's inline asm must keep its value.
foreach(link shared static)
  foreach(opt O0 O2)
    set(t test_stack_link_${link}_${opt})
    add_executable(${t} test_stack_link.c)
    target_link_libraries(${t} PRIVATE worksteal_${link} ws_warnings)
    target_compile_options(${t} PRIVATE -${opt})
    if(link STREQUAL "shared")
      target_compile_definitions(${t} PRIVATE WS_TEST_LAZY)
      target_link_options(${t} PRIVATE -Wl,-z,lazy)
    endif()
    ws_add_test(${t} TIMEOUT 120 LABELS sched)
  endforeach()
endforeach()
# Every typed-task case once more against the shared library, bound lazily: the same source,
# without the case that needs the library's internal allocation hook.
add_executable(test_sched_stack_shared test_sched_stack.c)
target_link_libraries(test_sched_stack_shared PRIVATE worksteal_shared ws_warnings)
target_include_directories(test_sched_stack_shared PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(test_sched_stack_shared PRIVATE _GNU_SOURCE WS_TEST_SHARED)
target_link_options(test_sched_stack_shared PRIVATE -Wl,-z,lazy)
foreach(c arity nested mutual deep boundary mix order stress spread)
  ws_add_test(test_sched_stack_shared TIMEOUT 180 LABELS sched ARGS ${c} 2)
endforeach()
foreach(c "stats 1" "profile 2" forked abort_sync_other abort_sync_none abort_unsynced)
  separate_arguments(args UNIX_COMMAND "${c}")
  ws_add_test(test_sched_stack_shared TIMEOUT 180 LABELS sched ARGS ${args})
endforeach()
