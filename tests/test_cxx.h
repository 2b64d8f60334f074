/* test_cxx.h: the assertion of the C++ tests (the tests written in C++): stays on in release
 * builds, prints the failed condition with its place, and aborts. */
#ifndef WS_TEST_CXX_H
#define WS_TEST_CXX_H

#include <cstdio>
#include <cstdlib>

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            std::fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                         \
        }                                                                         \
    } while (0)

#endif /* WS_TEST_CXX_H */
