# docs/api.md against include/worksteal.h and the environment variables the library reads
# (tests/doc_check.sh says what to add where). The examples are run by examples/CMakeLists.txt.
if(WS_SANITIZE STREQUAL "")
  add_test(NAME doc_check COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/doc_check.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(doc_check PROPERTIES TIMEOUT 60 LABELS docs)
endif()
