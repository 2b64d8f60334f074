// test_future_cxx: ws::async and ws::future<T> (worksteal.hpp): results of any type, void,
// exceptions rethrown by get() (and only by the get of the future that threw), move semantics
// (moved-from futures are not valid; a move-assigned future gives its old one back), many
// futures got in any order, nested inside each other and on the caller's own pool, futures
// dropped without a get (the task still runs, the callable and the result are destroyed exactly
// once), cancel(), and get() from plain threads.
//
// usage: test_future_cxx WORKERS: the cases above, one after another
//        test_future_cxx WORKERS fkmh|self_get [nospares]: the shapes of tests/test_future_rules.c
//        of the same names through ws::async, 10 rounds on a new pool each. main starts f, k
//        (and m); f starts h, never gets it, and computes; k gets f, m gets k, and h gets m
//        (fkmh) or k (self_get). No cycle, but if k's worker, waiting for f, takes h, h waits for
//        a future that lies under it on the same stack: a hang (the watchdog of
//        tests/test_watchdog.h fails it with where the round stands) or the library's abort.
#include "test_cxx.h"
#include "test_watchdog.h"
#include "worksteal.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
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

// Counts live copies of a closure's state, and the calls made through them.
std::atomic<long> live{0};
std::atomic<long> calls{0};
struct tracker {
    tracker()
    {
        live++;
    }
    tracker(const tracker &)
    {
        live++;
    }
    tracker(tracker &&) noexcept
    {
        live++;
    }
    ~tracker()
    {
        live--;
    }
};

// A result type that counts its live copies too: a result never got must still be destroyed.
std::atomic<long> live_results{0};
struct counted_result {
    std::string text;
    explicit counted_result(std::string t) : text(std::move(t))
    {
        live_results++;
    }
    counted_result(const counted_result &o) : text(o.text)
    {
        live_results++;
    }
    counted_result(counted_result &&o) noexcept : text(std::move(o.text))
    {
        live_results++;
    }
    ~counted_result()
    {
        live_results--;
    }
};

// A spin gate, as in tests/test_future.c: holds a worker until it is opened.
struct gate {
    std::atomic<bool> started{false}, open{false};
    void hold()
    {
        started = true;
        while (!open)
            std::this_thread::yield();
    }
    void wait_started() const
    {
        while (!started)
            std::this_thread::yield();
    }
};

long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

// Futures nested in futures: each call submits its two halves and gets them (oldest first).
long fib_futures(int n)
{
    if (n < 10)
        return fib_serial(n);
    auto a = ws::async([n] { return fib_futures(n - 1); });
    auto b = ws::async([n] { return fib_futures(n - 2); });
    return a.get() + b.get();
}

void test_results(ws::pool &pool)
{
    auto i = ws::async(pool, [] { return 6 * 7; });
    auto s = ws::async(pool.native(), [] { return std::string(1000, 'x'); });
    auto v = ws::async([] { return std::vector<int>{1, 2, 3}; });      // default pool
    auto p = ws::async(pool, [] { return std::make_unique<int>(5); }); // move-only result
    CHECK(i.valid() && s.valid() && v.valid() && p.valid());
    CHECK(i.get() == 42);
    CHECK(!i.valid());
    CHECK(s.get() == std::string(1000, 'x'));
    CHECK((v.get() == std::vector<int>{1, 2, 3}));
    CHECK(*p.get() == 5);
    static_assert(std::is_same_v<decltype(i), ws::future<int>>);
    static_assert(std::is_same_v<decltype(s.get()), std::string>);

    long big = pool.run([] { return fib_futures(22); });
    CHECK(big == fib_serial(22));

    // A reference result is stored as a copy.
    static int shared_value = 7;
    auto r = ws::async(pool, []() -> int & { return shared_value; });
    static_assert(std::is_same_v<decltype(r), ws::future<int>>);
    CHECK(r.get() == 7);
}

void test_void(ws::pool &pool)
{
    std::atomic<int> ran{0};
    auto f = ws::async(pool, [&] { ran++; });
    static_assert(std::is_same_v<decltype(f), ws::future<void>>);
    f.wait();
    CHECK(ran == 1);
    CHECK(f.valid()); // wait() does not consume
    f.get();
    CHECK(!f.valid());
    CHECK(ran == 1);
}

void test_exceptions(ws::pool &pool)
{
    std::vector<ws::future<int>> fs;
    for (int i = 0; i < 64; i++)
        fs.push_back(ws::async(pool, [i]() -> int {
            if (i % 3 == 0)
                throw boom(i);
            return i;
        }));
    for (int i = 63; i >= 0; i--) { // newest first
        try {
            int v = fs[static_cast<size_t>(i)].get();
            CHECK(i % 3 != 0 && v == i);
        } catch (const boom &e) {
            CHECK(i % 3 == 0 && e.id == i);
        }
        CHECK(!fs[static_cast<size_t>(i)].valid());
    }

    auto v = ws::async(pool, [] { throw std::logic_error("void threw"); });
    bool caught = false;
    try {
        v.get();
    } catch (const std::logic_error &e) {
        caught = std::string(e.what()) == "void threw";
    }
    CHECK(caught);

    // An exception thrown deep in nested futures comes up through every get.
    auto outer = ws::async(pool, [] {
        auto inner = ws::async([] {
            auto innermost = ws::async([]() -> int { throw boom(99); });
            return innermost.get() + 1;
        });
        return inner.get() + 1;
    });
    try {
        (void)outer.get();
        CHECK(false);
    } catch (const boom &e) {
        CHECK(e.id == 99);
    }

    // A thrown exception that is never got is dropped with the future.
    {
        auto dropped = ws::async(pool, []() -> int { throw boom(1); });
        dropped.wait();
    }
}

void test_invalid(ws::pool &pool)
{
    ws::future<int> none;
    CHECK(!none.valid());
    CHECK(!none.cancel());
    bool threw = false;
    try {
        (void)none.get();
    } catch (const std::logic_error &) {
        threw = true;
    }
    CHECK(threw);
    auto f = ws::async(pool, [] { return 1; });
    CHECK(f.get() == 1);
    threw = false;
    try {
        f.wait();
    } catch (const std::logic_error &) {
        threw = true;
    }
    CHECK(threw);
}

void test_moves(unsigned workers)
{
    long before = live, results_before = live_results;
    {
        ws::pool pool(workers);
        auto a = ws::async(pool, [t = tracker()] { return counted_result("a"); });
        ws::future<counted_result> b(std::move(a));
        CHECK(!a.valid() && b.valid());
        ws::future<counted_result> c;
        c = std::move(b);
        CHECK(!b.valid() && c.valid());
        CHECK(c.get().text == "a");

        // Move-assigning over a valid future gives the old one back (its task still runs).
        auto d = ws::async(pool, [t = tracker()] { return counted_result("d"); });
        auto e = ws::async(pool, [t = tracker()] { return counted_result("e"); });
        d = std::move(e);
        CHECK(d.get().text == "e");

        std::vector<ws::future<counted_result>> v;
        for (int i = 0; i < 100; i++) // the vector moves them as it grows
            v.push_back(
                ws::async(pool, [i, t = tracker()] { return counted_result(std::to_string(i)); }));
        for (int i = 0; i < 100; i++)
            CHECK(v[static_cast<size_t>(i)].get().text == std::to_string(i));
    } // ~pool waits for the future given back unfinished
    // Every callable and every result was destroyed, got or not.
    CHECK(live == before);
    CHECK(live_results == results_before);
}

void test_dropped(unsigned workers)
{
    long before = live, results_before = live_results;
    calls = 0;
    {
        ws::pool pool(workers);
        for (int i = 0; i < 1000; i++) {
            auto f = ws::async(pool, [t = tracker()] {
                calls++;
                return counted_result("dropped");
            });
            // destroyed here, never got: the task still runs
        }
    } // ~pool waits for every task
    CHECK(calls == 1000);
    CHECK(live == before);
    CHECK(live_results == results_before);
}

void test_many(ws::pool &pool, std::mt19937 &rng)
{
    const int n = 20000;
    std::vector<ws::future<long>> fs;
    fs.reserve(n);
    for (int i = 0; i < n; i++)
        fs.push_back(ws::async(pool, [i] { return static_cast<long>(i) * i; }));
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order)
        CHECK(fs[static_cast<size_t>(i)].get() == static_cast<long>(i) * i);

    // Submitted on a worker, got on the same worker oldest first.
    long sum = pool.run([] {
        std::vector<ws::future<long>> inner;
        for (int i = 0; i < 1000; i++)
            inner.push_back(ws::async([i] { return fib_futures(10 + i % 6); }));
        long s = 0;
        for (auto &f : inner)
            s += f.get();
        return s;
    });
    long expected = 0;
    for (int i = 0; i < 1000; i++)
        expected += fib_serial(10 + i % 6);
    CHECK(sum == expected);
}

void test_cancel()
{
    ws::pool pool(1);
    gate g;
    auto held = ws::async(pool, [&] { g.hold(); });
    g.wait_started(); // the pool's only worker is busy: nothing else starts
    long before = live;
    std::atomic<int> ran{0};
    auto f = ws::async(pool, [&ran, t = tracker()] {
        ran++;
        return 1;
    });
    CHECK(f.cancel());
    CHECK(f.cancel());     // idempotent
    CHECK(!held.cancel()); // running: cannot be cancelled
    bool threw = false;
    try {
        (void)f.get();
    } catch (const std::system_error &e) {
        threw = e.code() == std::errc::operation_canceled;
    }
    CHECK(threw);
    CHECK(!f.valid());

    auto dropped = ws::async(pool, [&ran, t = tracker()] { ran++; });
    CHECK(dropped.cancel());
    dropped = ws::future<void>(); // cancelled and given back without a get

    g.open = true;
    held.get();
    auto after = ws::async(pool, [&] { return ran.load(); });
    CHECK(after.get() == 0);
    CHECK(!after.cancel()); // not valid any more
    CHECK(ran == 0);
    CHECK(live == before); // the cancelled callables were destroyed
}

void test_outside_threads(ws::pool &pool)
{
    std::vector<ws::future<int>> fs;
    for (int i = 0; i < 400; i++)
        fs.push_back(ws::async(pool, [i] { return static_cast<int>(fib_serial(i % 15)) + i; }));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&fs, t] {
            for (size_t i = static_cast<size_t>(t); i < fs.size(); i += 4) {
                int k = static_cast<int>(i);
                CHECK(fs[i].get() == static_cast<int>(fib_serial(k % 15)) + k);
            }
        });
    for (auto &t : threads)
        t.join();
    for (auto &f : fs)
        CHECK(!f.valid());
}

// ---- fkmh and self_get: a get that takes work its future never waits for --------------------

// The name of the future whose get the calling thread is inside (innermost), if any.
thread_local const char *getting = nullptr;

template <class T> T tracked_get(ws::future<T> &f, const char *name)
{
    const char *outer = getting;
    getting = name;
    struct restore {
        const char *outer;
        ~restore()
        {
            getting = outer;
            test_progress();
        }
    } at_exit{outer};
    return f.get();
}

struct shape {
    bool with_m = false;
    unsigned round = 0, workers = 0, blockers = 0;
    ws::future<long> f, k, m, h;
    std::vector<ws::future<void>> blocker;
    std::atomic<bool> all_submitted{false}, k_in_get{false}, m_in_get{false}, h_submitted{false},
        h_started{false};
    std::atomic<unsigned> blockers_started{0};
    std::atomic<int> h_worker{-2};
};

std::atomic<shape *> shape_now{nullptr};

void shape_report(void *)
{
    shape *s = shape_now.load();
    if (s == nullptr)
        return;
    std::fprintf(stderr,
                 "test_future_cxx %s: round %u on %u workers: k in its get %d, m in its get %d, "
                 "h submitted %d, h started %d (on worker %d)\n",
                 s->with_m ? "fkmh" : "self_get", s->round + 1, s->workers, s->k_in_get.load(),
                 s->m_in_get.load(), s->h_submitted.load(), s->h_started.load(),
                 s->h_worker.load());
}

// A wait that only shapes the interleaving: gives up after half a second (scaled).
template <class Ready> void shape_wait(Ready ready)
{
    auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(test_hang_seconds(0.5));
    while (!ready() && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
}

void nothing(void *)
{
}

long shape_h(shape &s)
{
    s.h_worker = ws_worker_id();
    s.h_started = true;
    test_progress();
    if (getting != nullptr)
        std::fprintf(stderr,
                     "test_future_cxx: round %u: h started on worker %d inside the get of %s, "
                     "which does not wait for h\n",
                     s.round + 1, s.h_worker.load(), getting);
    return (s.with_m ? tracked_get(s.m, "m") : tracked_get(s.k, "k")) + 1000;
}

long shape_f(shape &s)
{
    while (!s.all_submitted) // k's and m's futures are in place
        std::this_thread::yield();
    shape_wait([&] {
        return s.k_in_get && (!s.with_m || s.m_in_get) && s.blockers_started == s.blockers;
    });
    s.h = ws::async([&s] { return shape_h(s); });
    s.h_submitted = true;
    test_progress();
    shape_wait([&] {
        ws_task t; // each push shares h with a thief that asked
        ws_spawn(&t, nothing, nullptr);
        ws_sync(&t);
        return s.h_started.load();
    });
    return 1;
}

void shape_round(shape &s, bool no_spares)
{
    ws_config config{};
    config.workers = s.workers;
    config.max_spares = no_spares ? WS_NO_SPARES : 0;
    ws_pool *pool = nullptr;
    CHECK(ws_pool_create(&pool, &config) == 0);
    s.f = ws::async(pool, [&s] { return shape_f(s); });
    s.k = ws::async(pool, [&s] {
        s.k_in_get = true;
        test_progress();
        return tracked_get(s.f, "f") + 10;
    });
    if (s.with_m)
        s.m = ws::async(pool, [&s] {
            s.m_in_get = true;
            test_progress();
            return tracked_get(s.k, "k") + 100;
        });
    for (unsigned i = 0; i < s.blockers; i++)
        s.blocker.push_back(ws::async(pool, [&s] {
            s.blockers_started++;
            shape_wait([&] { return s.h_started.load(); });
        }));
    s.all_submitted = true;
    while (!s.h_submitted)
        std::this_thread::yield();
    CHECK(tracked_get(s.h, "h") == (s.with_m ? 1111 : 1011));
    for (auto &b : s.blocker)
        b.get();
    ws_pool_destroy(pool);
}

void test_shape(bool with_m, unsigned workers, bool no_spares)
{
    unsigned busy = with_m ? 3 : 2; // the workers that f, k (and m) occupy
    CHECK(workers >= busy);
    test_watchdog_start(with_m ? "test_future_cxx fkmh" : "test_future_cxx self_get", 20,
                        shape_report, nullptr);
    for (unsigned round = 0; round < 10; round++) {
        shape s;
        s.with_m = with_m;
        s.round = round;
        s.workers = workers;
        s.blockers = workers - busy;
        shape_now = &s;
        shape_round(s, no_spares);
        shape_now = nullptr;
    }
    test_watchdog_stop();
    std::printf("test_future_cxx %s: 10 rounds on %u workers (%s): every round finished\\n",
                with_m ? "fkmh" : "self_get", workers,
                no_spares ? "WS_NO_SPARES" : "default spares");
}

} // namespace

int main(int argc, char **argv)
{
    unsigned workers = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 2;
    CHECK(workers > 0);
    if (argc > 2) {
        bool with_m = std::strcmp(argv[2], "fkmh") == 0;
        CHECK(with_m || std::strcmp(argv[2], "self_get") == 0);
        test_shape(with_m, workers, argc > 3 && std::strcmp(argv[3], "nospares") == 0);
        std::printf("ok\\n");
        return 0;
    }
    std::random_device seed_source;
    unsigned seed = seed_source();
    std::printf("test_future_cxx: seed %u\n", seed);
    std::mt19937 rng(seed);
    {
        ws::pool pool(workers);
        test_results(pool);
        test_void(pool);
        test_exceptions(pool);
        test_invalid(pool);
        test_many(pool, rng);
        test_outside_threads(pool);
    }
    test_moves(workers);
    test_dropped(workers);
    test_cancel();
    std::printf("ok\n");
    return 0;
}
