# The public header compiles as C++ too, and the C++17 interface (worksteal.hpp) works: checked
# when a C++ compiler is installed (the library itself needs only a C compiler).
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

  # test_cxx_unwaited: what a task_group's destructor says when no wait() saw its jobs.
  foreach(t test_cxx_api test_cxx_unwaited)
    add_executable(${t} ${t}.cpp)
    set_target_properties(${t} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                          CXX_EXTENSIONS OFF)
    target_compile_options(${t} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                           $<$<BOOL:${WS_WERROR}>:-Werror>)
    target_link_libraries(${t} PRIVATE worksteal_static)
  endforeach()
  foreach(p 1 2 4)
    add_test(NAME test_cxx_api_${p} COMMAND test_cxx_api ${p})
    set_tests_properties(test_cxx_api_${p} PROPERTIES TIMEOUT 180 LABELS "api;cxx")
  endforeach()

  foreach(c thrown jobs waited unwind)
    add_test(NAME test_cxx_unwaited_${c} COMMAND test_cxx_unwaited ${c})
    set_tests_properties(test_cxx_unwaited_${c} PROPERTIES TIMEOUT 60 LABELS "api;cxx")
  endforeach()

  # The same test built by clang++ against the same library, when clang++ is installed (plain
  # builds only: a sanitizer runtime of one compiler does not mix with the other's).
  if(WS_SANITIZE STREQUAL "")
    add_test(NAME test_cxx_api_clang
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cxx_other_compiler.sh clang++
                     ${CMAKE_CURRENT_SOURCE_DIR}/test_cxx_api.cpp ${PROJECT_SOURCE_DIR}/include
                     $<TARGET_FILE:worksteal_static> ${CMAKE_CURRENT_BINARY_DIR}
                     ${WS_PC_LIBS_PRIVATE})
    set_tests_properties(test_cxx_api_clang PROPERTIES TIMEOUT 300 LABELS "api;cxx"
                                                       SKIP_RETURN_CODE 77)
  endif()

  # Exceptions thrown through ws_join (tests/test_life_exceptions.cpp).
  add_executable(test_life_exceptions test_life_exceptions.cpp)
  set_target_properties(test_life_exceptions PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON)
  target_compile_options(test_life_exceptions PRIVATE -Wall -Wextra
                         $<$<BOOL:${WS_WERROR}>:-Werror>)
  target_link_libraries(test_life_exceptions PRIVATE worksteal_static)
  foreach(args "caught;1" "caught;2" "escaped")
    string(REPLACE ";" "_" suffix "${args}")
    add_test(NAME test_life_exceptions_${suffix} COMMAND test_life_exceptions ${args})
    set_tests_properties(test_life_exceptions_${suffix} PROPERTIES TIMEOUT 120 LABELS life)
  endforeach()
else()
  message(STATUS "No C++ compiler: the C++ tests are not built")
endif()
