# The files of src/ call one another in one direction (tests/layering.sh lists the layers, and
# docs/scheduler.md draws them): checked on the static library's symbols, in the normal build.
if(WS_SANITIZE STREQUAL "")
  add_test(NAME layering COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layering.sh
                                 $<TARGET_FILE:worksteal_static>)
  set_tests_properties(layering PROPERTIES TIMEOUT 60 LABELS docs)
endif()
