# The peers of ws-bench (bench/peer.h): fib, nqueens and the unbalanced tree written with oneTBB
# and with Rayon, linked into ws-bench when their toolchains are found, each skipped with one
# line otherwise. ws-bench is defined in bench.cmake, which bench/CMakeLists.txt includes first
# (its glob is sorted).
if(NOT TARGET ws-bench)
  message(FATAL_ERROR "bench/peers.cmake needs ws-bench (bench.cmake) to be defined first")
endif()

# ---- oneTBB: tbb::task_group (peer_tbb.cpp) ----
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  find_package(TBB CONFIG QUIET COMPONENTS tbb)
endif()
if(TBB_FOUND)
  message(STATUS "ws-bench: the oneTBB peer (tbb::task_group), oneTBB ${TBB_VERSION}")
  target_sources(ws-bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/peer_tbb.cpp)
  set_target_properties(ws-bench PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                            CXX_EXTENSIONS OFF)
  target_compile_definitions(ws-bench PRIVATE WB_HAVE_TBB=1)
  target_link_libraries(ws-bench PRIVATE TBB::tbb)
else()
  message(STATUS "ws-bench: no oneTBB peer (oneTBB and a C++ compiler not found; Debian: "
                 "apt-get install -y libtbb-dev g++)")
endif()

# ---- Rayon: rayon::join (peer_rayon/), built offline from Debian's crate sources ----
find_program(WS_CARGO cargo)
set(WS_RUST_REGISTRY /usr/share/cargo/registry CACHE PATH
    "Rust crate sources for the Rayon peer (Debian's librust-*-dev packages put them here)")
file(GLOB ws_rayon_crate LIST_DIRECTORIES true ${WS_RUST_REGISTRY}/rayon-1.*)
if(WS_CARGO AND ws_rayon_crate)
  message(STATUS "ws-bench: the Rayon peer (rayon::join), ${ws_rayon_crate}")
  set(crate ${CMAKE_CURRENT_BINARY_DIR}/peer_rayon)
  configure_file(${CMAKE_CURRENT_SOURCE_DIR}/peer_rayon/Cargo.toml.in ${crate}/Cargo.toml @ONLY)
  file(WRITE ${crate}/.cargo/config.toml
       "[source.crates-io]\nreplace-with = \"packaged\"\n\n"
       "[source.packaged]\ndirectory = \"${WS_RUST_REGISTRY}\"\n")
  set(lib ${crate}/target/release/libws_peer_rayon.a)
  add_custom_command(OUTPUT ${lib}
    COMMAND ${WS_CARGO} build --release --offline --quiet
    WORKING_DIRECTORY ${crate}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/peer_rayon/src/lib.rs ${crate}/Cargo.toml
    COMMENT "Building the Rayon peer (cargo build --release --offline)")
  add_custom_target(peer_rayon DEPENDS ${lib})
  add_library(ws_peer_rayon STATIC IMPORTED)
  set_target_properties(ws_peer_rayon PROPERTIES IMPORTED_LOCATION ${lib})
  add_dependencies(ws-bench peer_rayon)
  target_compile_definitions(ws-bench PRIVATE WB_HAVE_RAYON=1)
  # what Rust's standard library needs from the C side (rustc --print native-static-libs)
  target_link_libraries(ws-bench PRIVATE ws_peer_rayon Threads::Threads ${CMAKE_DL_LIBS} m rt util)
else()
  message(STATUS "ws-bench: no Rayon peer (cargo and Rayon's sources in ${WS_RUST_REGISTRY} not "
                 "found; Debian: apt-get install -y cargo rustc librust-rayon-dev)")
endif()

# Each peer built runs once at tiny sizes, 1 to 4 threads (more than the CPUs), on its three
# workloads; ws-bench exits non-zero if an answer differs from the reference (the node count and
# hash sum for the tree), and a skipped peer fails the test.
if(WS_BUILD_TESTS)
  foreach(peer tbb rayon)
    if((peer STREQUAL "tbb" AND TBB_FOUND) OR (peer STREQUAL "rayon" AND TARGET peer_rayon))
      add_test(NAME bench_peer_${peer}
               COMMAND ws-bench --quick --workloads fib,nqueens,uts --schedulers serial,${peer}
                       --workers 1,2,4 --csv ${CMAKE_CURRENT_BINARY_DIR}/bench-peer-${peer}.csv)
      set_tests_properties(bench_peer_${peer} PROPERTIES TIMEOUT 120 LABELS bench
                           FAIL_REGULAR_EXPRESSION "skipped, not built")
    endif()
  endforeach()
endif()
