# WS_TRACE (src/trace.c), label "trace": one entry per case of tests/test_trace.c. Every traced
# run happens in a forked child; the timeouts allow a ThreadSanitizer build on two cores, so
# that only a hang reaches them.
foreach(c json record overflow env alloc_fail pools pools_overflow unwritable)
  ws_add_test(test_trace SOURCES test_trace.c TIMEOUT 180 LABELS trace ARGS ${c})
endforeach()
target_link_libraries(test_trace PRIVATE m)
