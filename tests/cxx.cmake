# The public header compiles as C++ too: checked when a C++ compiler is installed (the library
# itself needs only a C compiler).
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  add_executable(test_header_cxx test_header_cxx.cpp)
  set_target_properties(test_header_cxx PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON)
  target_compile_options(test_header_cxx PRIVATE -Wall -Wextra -Wpedantic
                         $<$<BOOL:${WS_WERROR}>:-Werror>)
  target_link_libraries(test_header_cxx PRIVATE worksteal_static)
  add_test(NAME test_header_cxx COMMAND test_header_cxx)
  set_tests_properties(test_header_cxx PROPERTIES TIMEOUT 60 LABELS api)
else()
  message(STATUS "No C++ compiler: the C++ header check is not built")
endif()
