// test_cxx_api: the C++ interface (worksteal.hpp): results of join, exceptions from either side
// of a join, from task_group jobs and from loops, rethrown only after every task of the join,
// group or loop has finished and with no job left behind; cancellation (from outside, from a job,
// nested groups); reductions of a non-trivial type; pool::run.
//
// usage: test_cxx_api WORKERS
#include "test_cxx.h"
#include "worksteal.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace
{

struct boom : std::runtime_error {
    int id;
    explicit boom(int i) : std::runtime_error("boom " + std::to_string(i)), id(i)
    {
    }
};

void pause_ms(int ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Counts live copies of a closure's state: a job left behind (neither run nor destroyed) keeps
// one alive.
std::atomic<long> live_closures{0};
struct tracker {
    tracker()
    {
        live_closures++;
    }
    tracker(const tracker &)
    {
        live_closures++;
    }
    tracker(tracker &&) noexcept
    {
        live_closures++;
    }
    ~tracker()
    {
        live_closures--;
    }
};

void test_join_results()
{
    auto [a, b] = ws::join([] { return 6 * 7; }, [] { return std::string("forty-two"); });
    CHECK(a == 42 && b == "forty-two");
    int side = 0;
    auto [c, d] = ws::join([&] { side = 1; }, [] { return 2.5; });
    static_assert(std::is_same_v<decltype(c), ws::none>);
    CHECK(side == 1 && d == 2.5);
}

// The side that does not throw is slow: the join must wait for it before rethrowing.
void test_join_exceptions()
{
    for (int thrower = 0; thrower < 3; thrower++) {
        std::atomic<bool> left_done{false}, right_done{false};
        auto left = [&]() -> int {
            if (thrower != 1)
                pause_ms(20);
            left_done = true;
            if (thrower != 1)
                throw boom(0);
            return 1;
        };
        auto right = [&]() -> int {
            if (thrower != 0)
                pause_ms(20);
            right_done = true;
            if (thrower != 0)
                throw boom(1);
            return 2;
        };
        try {
            ws::join(left, right);
            CHECK(false);
        } catch (const boom &e) {
            CHECK(left_done && right_done);
            // Both threw (thrower 2, which never is 1): the left side's exception wins.
            CHECK(e.id == (thrower == 1 ? 1 : 0));
        }
    }
}

// An exception deep in nested joins, on whatever worker ran that leaf, reaches the root.
long fib_throwing(int n, int throw_at)
{
    if (n < 2) {
        if (n == 1 && throw_at-- == 0)
            throw boom(n);
        return n;
    }
    auto [a, b] = ws::join([&] { return fib_throwing(n - 1, throw_at); },
                           [&] { return fib_throwing(n - 2, -1); });
    return a + b;
}

void test_nested_joins(ws::pool &pool)
{
    CHECK(pool.run([] { return fib_throwing(20, -1); }) == 6765);
    try {
        pool.run([] { return fib_throwing(20, 0); });
        CHECK(false);
    } catch (const boom &) {
    }
}

void test_task_group_exception(ws::pool &pool)
{
    constexpr int n = 400;
    std::atomic<int> running{0}, ran{0};
    std::atomic<bool> thrower_may_go{false};
    {
        ws::task_group g(pool.native());
        for (int i = 0; i < n; i++) {
            g.run([&, i, t = tracker()] {
                running++;
                if (i == 0) {
                    while (!thrower_may_go)
                        std::this_thread::yield();
                    running--;
                    throw boom(i);
                }
                pause_ms(i % 7 == 0 ? 1 : 0);
                ran++;
                running--;
            });
        }
        // With more than one worker, siblings run meanwhile: let some finish before the throw.
        while (pool.workers() > 1 && ran < 10)
            std::this_thread::yield();
        thrower_may_go = true;
        try {
            g.wait();
            CHECK(false);
        } catch (const boom &e) {
            CHECK(e.id == 0);
            CHECK(running == 0);       // every sibling that started has finished
            CHECK(live_closures == 0); // and every one that did not was released
        }
        std::printf("task_group: 1 job threw, %d of %d siblings ran, the rest were cancelled\n",
                    ran.load(), n - 1);
        // Reusable at once, uncancelled.
        std::atomic<int> again{0};
        for (int i = 0; i < 100; i++)
            g.run([&] { again++; });
        CHECK(g.wait() == ws::task_group_status::complete);
        CHECK(again == 100);
    }
    CHECK(live_closures == 0);
}

void test_task_group_cancel(ws::pool &pool)
{
    // From outside, while jobs poll; jobs queued behind them never run.
    std::atomic<int> started{0}, after{0};
    ws::task_group g(pool.native());
    unsigned w = pool.workers();
    for (unsigned i = 0; i < w; i++)
        g.run([&] {
            started++;
            while (!g.is_canceling())
                std::this_thread::yield();
        });
    while (started < static_cast<int>(w))
        std::this_thread::yield();
    for (int i = 0; i < 100; i++)
        g.run([&, t = tracker()] { after++; });
    g.cancel();
    g.run([&] { after++; }); // refused quietly: the group is cancelled
    CHECK(g.wait() == ws::task_group_status::canceled);
    CHECK(after == 0);
    CHECK(live_closures == 0);

    // Nested groups: cancelling the outer group reaches a group made inside one of its jobs.
    std::atomic<int> inner_saw{0};
    std::atomic<bool> inner_running{false};
    g.run([&] {
        ws::task_group inner(pool.native());
        inner.run([&] {
            inner_running = true;
            while (!inner.is_canceling())
                std::this_thread::yield();
            inner_saw++;
        });
        CHECK(inner.wait() == ws::task_group_status::canceled);
    });
    while (!inner_running)
        std::this_thread::yield();
    g.cancel();
    CHECK(g.wait() == ws::task_group_status::canceled);
    CHECK(inner_saw == 1);

    // From a job: the jobs it queues behind itself never start.
    std::atomic<int> queued_ran{0};
    g.run([&] {
        for (int i = 0; i < 50; i++)
            g.run([&, t = tracker()] { queued_ran++; });
        g.cancel();
    });
    CHECK(g.wait() == ws::task_group_status::canceled);
    CHECK(live_closures == 0);
    if (pool.workers() == 1)
        CHECK(queued_ran == 0);
}

void test_loops(ws::pool &pool)
{
    pool.run([] {
        constexpr std::size_t n = 100000;
        std::vector<int> v(n);
        ws::parallel_for(0, n, [&](std::size_t i) { v[i] = static_cast<int>(i % 10); });
        long sum = 0;
        for (int x : v)
            sum += x;
        CHECK(sum == 450000);
        std::atomic<long> items{0};
        ws::parallel_for(
            0, n, [&](std::size_t b, std::size_t e) { items += static_cast<long>(e - b); }, 64);
        CHECK(items == static_cast<long>(n));
        ws::parallel_for_each(v, [](int &x) { x *= 2; });
        CHECK(std::accumulate(v.begin(), v.end(), 0L) == 900000);

        // Throwing loop: rethrown after every call has returned.
        std::atomic<int> in_body{0};
        try {
            ws::parallel_for(
                0, n,
                [&](std::size_t i) {
                    in_body++;
                    if (i == n / 2) {
                        in_body--;
                        throw boom(static_cast<int>(i));
                    }
                    in_body--;
                },
                16);
            CHECK(false);
        } catch (const boom &e) {
            CHECK(e.id == static_cast<int>(n / 2));
            CHECK(in_body == 0);
        }

        // Reductions: a non-trivial type in range order, and a number.
        std::string digits = ws::parallel_reduce(
            0, 1000, std::string(),
            [](std::size_t b, std::size_t e, std::string acc) {
                for (std::size_t i = b; i < e; i++)
                    acc += static_cast<char>('0' + i % 10);
                return acc;
            },
            [](std::string l, const std::string &r) { return l + r; }, 7);
        CHECK(digits.size() == 1000);
        for (std::size_t i = 0; i < digits.size(); i++)
            CHECK(digits[i] == static_cast<char>('0' + i % 10));
        double total = ws::parallel_reduce(
            0, n, 0.0,
            [](std::size_t b, std::size_t e, double acc) {
                for (std::size_t i = b; i < e; i++)
                    acc += 0.5;
                return acc;
            },
            std::plus<>());
        CHECK(total == 0.5 * n);
        CHECK(ws::parallel_reduce(
                  5, 5, std::string("id"),
                  [](std::size_t, std::size_t, std::string a) { return a; },
                  std::plus<>()) == "id");
        try {
            ws::parallel_reduce(
                0, n, std::string("x"),
                [](std::size_t b, std::size_t e, std::string acc) {
                    if (b <= 777 && 777 < e)
                        throw boom(777);
                    return acc;
                },
                std::plus<>(), 10);
            CHECK(false);
        } catch (const boom &e) {
            CHECK(e.id == 777);
        }
    });
}

void test_pool_run(ws::pool &pool)
{
    CHECK(pool.run([] { return ws_worker_id(); }) >= 0);
    int x = 0;
    pool.run([&] { x = 1; });
    CHECK(x == 1);
    try {
        pool.run([]() -> int { throw boom(3); });
        CHECK(false);
    } catch (const boom &e) {
        CHECK(e.id == 3);
    }
}

} // namespace

int main(int argc, char **argv)
{
    unsigned workers = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 2;
    ws::pool pool(workers);
    test_join_results();
    test_join_exceptions();
    test_nested_joins(pool);
    test_task_group_exception(pool);
    test_task_group_cancel(pool);
    test_loops(pool);
    test_pool_run(pool);
    std::printf("test_cxx_api %u: passed\n", workers);
    return 0;
}
