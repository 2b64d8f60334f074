# Stack depth and stack overflow (tests/test_stack_depth.c, label: depth): how deep recursions
# run on the workers' default stacks, and an overflow's one line and abort, each case in forked
# children. reach_small is skipped under ThreadSanitizer (its shadow call stack is smaller than
# the main thread's stack).
foreach(c reach_small reach_large spawn_chain join_chain default_size overflow_default
          overflow_env overflow_spare overflow_two overflow_stack_task overflow_spawn overflow_join
          overflow_user_handler fault_null fault_user_handler fault_main)
  ws_add_test(test_stack_depth SOURCES test_stack_depth.c TIMEOUT 300 LABELS depth ARGS ${c})
endforeach()
set_tests_properties(test_stack_depth_reach_small PROPERTIES SKIP_RETURN_CODE 77)
# reach_large's search overflows the main thread's stack in forked children on purpose; under
# ThreadSanitizer its own SIGSEGV handler can then block for good on a lock the faulting code
# held (seen: pthread_getattr_np's, in the handler's report), so the children die of the signal
# there, as they do in the other builds.
if(WS_SANITIZE STREQUAL "thread")
  set_tests_properties(test_stack_depth_reach_large PROPERTIES ENVIRONMENT
                       "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1 handle_segv=0")
endif()
