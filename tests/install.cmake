# The install layout and both ways of consuming it (not under sanitizers: the consumers are
# plain builds).
if(WS_SANITIZE STREQUAL "")
  add_test(NAME install_consumers
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install_test.sh ${PROJECT_BINARY_DIR}
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(install_consumers PROPERTIES TIMEOUT 300 LABELS install)
endif()
