// test_header_cxx: the public header compiles as C++ (extern "C", no C-only syntax) and links
// against the C library from a C++ program.
#include "worksteal.h"

#include <cstdio>

static void add_one(void *p)
{
    ++*static_cast<int *>(p);
}

// The typed tasks, as C++: a declaration used before its definition, eight arguments, spawn,
// call and sync by name, void tasks, one of no arguments.
WS_DECLARE_TASK_2(int, add, int, x, int, y);

WS_TASK_1(int, add_twice, int, x)
{
    WS_SPAWN(add, x, x);
    int y = WS_CALL(add, x, 12);
    return WS_SYNC(add) + y;
}

WS_TASK_2(int, add, int, x, int, y)
{
    return x + y;
}

WS_TASK_8(long, weigh, int, a, int, b, int, c, int, d, int, e, int, f, int, g, int, h)
{
    return a + 2L * b + 3L * c + 4L * d + 5L * e + 6L * f + 7L * g + 8L * h;
}

WS_VOID_TASK_1(bump, int *, p)
{
    ++*p;
}

WS_TASK_1(long, sfib, int, n)
{
    if (n < 2)
        return n;
    WS_SPAWN(sfib, n - 1);
    long x = WS_CALL(sfib, n - 2);
    return x + WS_SYNC(sfib);
}

WS_VOID_TASK_0(snop)
{
}

int main()
{
    int a = 0, b = 0;
    ws_join(add_one, &a, add_one, &b); // outside a worker: runs on the default pool
    ws_task task;
    ws_spawn(&task, add_one, &a);
    ws_sync(&task);
    int sum = add_twice_run(nullptr, 10); // 10 + 10 + 10 + 12
    bump_run(nullptr, &b);
    bump_run(nullptr, &b);
    long weight = weigh_run(nullptr, 1, 1, 1, 1, 1, 1, 1, 1); // eight arguments, run from outside
    snop_run(nullptr);
    long fib = sfib_run(nullptr, 20);
    if (a != 2 || b != 3 || sum != 42 || weight != 36 || fib != 6765 || ws_worker_id() != -1) {
        std::fprintf(stderr, "test_header_cxx: FAIL: a=%d b=%d\n", a, b);
        return 1;
    }
    std::printf("the header compiles and links as C++\n");
    return 0;
}
