# Protocol models under the GenMC model checker (RC11), run when the checker is installed and
# skipped with a message otherwise. Not under sanitizers: the model does not depend on the build.
if(WS_SANITIZE STREQUAL "")
  add_test(NAME model_sdeque COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/model_sdeque.sh
                                     ${PROJECT_SOURCE_DIR})
  set_tests_properties(model_sdeque PROPERTIES TIMEOUT 900 LABELS model SKIP_RETURN_CODE 77)
endif()
