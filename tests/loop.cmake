# Parallel loops and reductions (src/loop.c): one program per concern, label "loop".
foreach(t for nested balance reduce float reduce_alloc abort)
  ws_add_test(test_loop_${t} SOURCES test_loop_${t}.c TIMEOUT 240 LABELS loop)
endforeach()
target_link_libraries(test_loop_float PRIVATE m)
