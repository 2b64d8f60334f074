// worksteal.hpp: a C++17 interface over the C API of worksteal.h. Header-only; everything is in
// namespace ws.
//
//   ws::join(f, g)                   runs f() and g(), possibly in parallel; returns both results
//   ws::task_group                   run(f) / wait() / cancel(), over a ws_group
//   ws::parallel_for(b, e, f)        f(i) for each i, or f(b, e) for each subrange
//   ws::parallel_for_each(range, f)  f(x) for each element of a random-access range
//   ws::parallel_reduce(b, e, identity, fold, combine)
//   ws::pool                         an owned ws_pool; run(f) returns f's result
//   ws::async([pool,] f)             starts f() as a ws_future; returns a ws::future<T>
//
// Exceptions. A function given to any of these may throw. The exception is caught on the worker
// that ran it (it never unwinds through the C runtime's frames), the other tasks of the same
// join, group or loop run to their end (a task_group is cancelled first, so its jobs that have
// not started never do; a loop skips the subranges it has not started), and the first exception
// caught is rethrown by join, wait or the loop to their caller (a ws::future keeps its own
// exception for its get). docs/cxx.md has the rules.
#ifndef WORKSTEAL_HPP
#define WORKSTEAL_HPP

#include "worksteal.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <functional>
#include <iterator>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

namespace ws
{

// What ws::join returns for a function that returns void.
struct none {
};

namespace detail
{

// Turns a run-time error code of the C API into an exception.
[[noreturn]] inline void throw_error(int err, const char *what)
{
    if (err == ENOMEM)
        throw std::bad_alloc();
    throw std::system_error(err, std::generic_category(), what);
}

// The first exception thrown by a set of tasks; later ones are dropped. capture() is called in a
// catch block on any thread; take() after every task has finished (the join, wait or loop's
// return orders the store of error before it).
class first_exception
{
  public:
    void capture() noexcept
    {
        if (!taken_.exchange(true, std::memory_order_acq_rel))
            error_ = std::current_exception();
    }
    bool failed() const noexcept
    {
        return taken_.load(std::memory_order_relaxed); // a hint to skip work; take() decides
    }
    std::exception_ptr take() noexcept
    {
        std::exception_ptr e = std::move(error_);
        error_ = nullptr;
        taken_.store(false, std::memory_order_relaxed);
        return e;
    }
    void rethrow()
    {
        if (std::exception_ptr e = take())
            std::rethrow_exception(e);
    }

  private:
    std::atomic<bool> taken_{false};
    std::exception_ptr error_;
};

template <class R>
using stored_t =
    std::conditional_t<std::is_void_v<R>, none, std::remove_cv_t<std::remove_reference_t<R>>>;

// Calls f and keeps its result (none for void) or its exception.
template <class F> struct outcome {
    using result_type = std::invoke_result_t<F &>;
    F &f;
    std::optional<stored_t<result_type>> value;
    std::exception_ptr error;

    void call() noexcept
    {
        try {
            if constexpr (std::is_void_v<result_type>) {
                std::invoke(f);
                value.emplace();
            } else {
                value.emplace(std::invoke(f));
            }
        } catch (...) {
            error = std::current_exception();
        }
    }
    static void trampoline(void *p) noexcept
    {
        static_cast<outcome *>(p)->call();
    }
    stored_t<result_type> get()
    {
        if (error)
            std::rethrow_exception(error);
        return std::move(*value);
    }
};

} // namespace detail

// Runs f() and g(), possibly in parallel, and returns {f(), g()} (ws::none for a void result).
// If either throws, join returns only after both have finished, then rethrows f's exception if
// f threw, else g's. From any thread (outside a worker, on the default pool), like ws_join.
template <class F, class G> auto join(F &&f, G &&g)
{
    detail::outcome<std::remove_reference_t<F>> a{f, std::nullopt, nullptr};
    detail::outcome<std::remove_reference_t<G>> b{g, std::nullopt, nullptr};
    ws_join(&decltype(a)::trampoline, &a, &decltype(b)::trampoline, &b);
    auto ra = a.get(); // rethrows a's exception first
    auto rb = b.get();
    return std::pair<decltype(ra), decltype(rb)>(std::move(ra), std::move(rb));
}

enum class task_group_status { complete, canceled };

// A set of jobs run on a pool and waited for together (a ws_group underneath). run() from any
// thread; wait() from one thread at a time. A task_group made inside a job of another task_group
// (or of a ws_group) is nested in it: cancelling the outer one cancels it too.
class task_group
{
  public:
    explicit task_group(ws_pool *pool = nullptr)
    {
        ws_group_init(&group_, pool);
    }
    task_group(const task_group &) = delete;
    task_group &operator=(const task_group &) = delete;

    // Waits for the jobs still running (cancelling them first if the scope is being left by an
    // exception). Unless an exception is leaving the scope, it says on stderr what no wait() saw:
    // an exception of a job (dropped), or, in debug builds (NDEBUG not defined), jobs run after
    // the last wait().
    ~task_group()
    {
        bool unwinding = std::uncaught_exceptions() > unwinding_;
        if (unwinding)
            ws_group_cancel(&group_);
        ws_group_wait(&group_);
        if (!unwinding)
            report_unwaited();
    }

    // Queues f() as a job (f is moved or copied into it). If the group is cancelled, f never
    // runs (not an error). Throws std::bad_alloc, or std::system_error (the pool is being
    // destroyed, ESHUTDOWN).
    template <class F> void run(F &&f)
    {
        using job_t = job<std::decay_t<F>>;
        auto *j = new job_t{this, std::forward<F>(f)};
        unwaited_.store(true, std::memory_order_relaxed); // a flag for the destructor alone
        int err = ws_group_submit_cancellable(&group_, &job_t::trampoline, &job_t::discard, j, 0);
        if (err == 0)
            return;
        delete j;
        if (err != ECANCELED)
            detail::throw_error(err, "ws_group_submit");
    }

    // Returns when every job run so far has finished (helping, on a worker of the pool). Then
    // rethrows the first exception a job threw, if any; else says whether the group (or one it
    // is nested in) was cancelled. Either way the group is ready for new jobs, uncancelled.
    task_group_status wait()
    {
        unwaited_.store(false, std::memory_order_relaxed);
        ws_group_wait(&group_);
        bool cancelled = ws_group_cancelled(&group_);
        std::exception_ptr e = errors_.take();
        (void)ws_group_reset(&group_); // nothing is pending: cannot fail
        if (e)
            std::rethrow_exception(e);
        return cancelled ? task_group_status::canceled : task_group_status::complete;
    }

    // Jobs that have not started never will; running ones may poll is_canceling(). Any thread.
    void cancel() noexcept
    {
        ws_group_cancel(&group_);
    }
    bool is_canceling() const noexcept
    {
        return ws_group_cancelled(&group_);
    }
    // The C group, to submit C jobs or read ws_group_skipped.
    ws_group *native() noexcept
    {
        return &group_;
    }

  private:
    void report_unwaited() noexcept
    {
        if (errors_.take()) {
            std::fputs("worksteal: ~task_group: a job threw and no wait() rethrew it: the "
                       "exception is dropped (call wait() before the group is destroyed)\n",
                       stderr);
            return;
        }
#ifndef NDEBUG
        if (unwaited_.load(std::memory_order_relaxed))
            std::fputs("worksteal: ~task_group: jobs run after the last wait() (or with no "
                       "wait()): the destructor waited for them (call wait() to see their "
                       "exceptions)\n",
                       stderr);
#endif
    }

    template <class F> struct job {
        task_group *owner;
        F f;
        static void trampoline(void *p) noexcept
        {
            job *j = static_cast<job *>(p);
            try {
                std::invoke(j->f);
            } catch (...) {
                j->owner->errors_.capture();
                ws_group_cancel(&j->owner->group_);
            }
            delete j;
        }
        static void discard(void *p) noexcept
        {
            delete static_cast<job *>(p);
        }
    };

    ws_group group_;
    detail::first_exception errors_;
    std::atomic<bool> unwaited_{false}; // run() since the last wait(): reported in debug builds
    int unwinding_ = std::uncaught_exceptions();
};

namespace detail
{

template <class F> struct loop_ctx {
    F &f;
    first_exception errors;

    static void body(std::size_t b, std::size_t e, void *p) noexcept
    {
        auto *c = static_cast<loop_ctx *>(p);
        if (c->errors.failed())
            return;
        try {
            if constexpr (std::is_invocable_v<F &, std::size_t, std::size_t>) {
                std::invoke(c->f, b, e);
            } else {
                for (std::size_t i = b; i < e; i++)
                    std::invoke(c->f, i);
            }
        } catch (...) {
            c->errors.capture();
        }
    }
};

} // namespace detail

// Calls f(i) for every i in [begin, end), or f(b, e) on disjoint subranges covering it when f
// takes two indices, as ws_parallel_for (grain 0: automatic). If a call throws, subranges not
// yet started are skipped, and the first exception is rethrown once every call has returned.
template <class F>
void parallel_for(std::size_t begin, std::size_t end, F &&f, std::size_t grain = 0)
{
    detail::loop_ctx<std::remove_reference_t<F>> ctx{f, {}};
    ws_parallel_for(begin, end, grain, &decltype(ctx)::body, &ctx);
    ctx.errors.rethrow();
}

// Calls f(x) for every element x of a random-access range (a vector, an array, a span).
template <class Range, class F> void parallel_for_each(Range &&range, F &&f, std::size_t grain = 0)
{
    auto first = std::begin(range);
    std::size_t n = static_cast<std::size_t>(std::distance(first, std::end(range)));
    parallel_for(
        0, n,
        [&](std::size_t b, std::size_t e) {
            for (auto it = first + static_cast<std::ptrdiff_t>(b),
                      last = first + static_cast<std::ptrdiff_t>(e);
                 it != last; ++it)
                std::invoke(f, *it);
        },
        grain);
}

namespace detail
{

// The C reduction moves accumulators as bytes, so each one is a pointer to a T on the heap
// (null until its leaf is folded): any T works, whatever its copy and move do.
template <class T, class Fold, class Combine> struct reduce_ctx {
    const T &identity;
    Fold &fold;
    Combine &combine;
    first_exception errors;

    static void fold_leaf(std::size_t b, std::size_t e, void *acc, void *p) noexcept
    {
        auto *c = static_cast<reduce_ctx *>(p);
        T *&slot = *static_cast<T **>(acc);
        if (c->errors.failed())
            return;
        try {
            T folded =
                std::invoke(c->fold, b, e, slot != nullptr ? std::move(*slot) : T(c->identity));
            if (slot != nullptr)
                *slot = std::move(folded);
            else
                slot = new T(std::move(folded));
        } catch (...) {
            c->errors.capture();
        }
    }
    static void combine_pair(void *acc, const void *right, void *p) noexcept
    {
        auto *c = static_cast<reduce_ctx *>(p);
        T *&left = *static_cast<T **>(acc);
        T *r = *static_cast<T *const *>(right); // ours now: the right slot is dead after this
        if (r == nullptr)
            return;
        if (left == nullptr) {
            left = r;
            return;
        }
        try {
            if (!c->errors.failed())
                *left = std::invoke(c->combine, std::move(*left), std::move(*r));
        } catch (...) {
            c->errors.capture();
        }
        delete r;
    }
};

} // namespace detail

// Folds [begin, end) over the fixed tree of ws_parallel_reduce: fold(b, e, acc) returns acc with
// the items b..e-1 folded in (acc starts as a copy of identity on each leaf); combine(left,
// right) returns their merge, in range order. Deterministic given deterministic fold and combine.
// An empty range returns identity. Exceptions as parallel_for. Throws std::invalid_argument if
// begin > end.
template <class T, class Fold, class Combine>
T parallel_reduce(std::size_t begin, std::size_t end, T identity, Fold &&fold, Combine &&combine,
                  std::size_t grain = 0)
{
    if (begin > end)
        throw std::invalid_argument("ws::parallel_reduce: begin > end");
    using ctx_t =
        detail::reduce_ctx<T, std::remove_reference_t<Fold>, std::remove_reference_t<Combine>>;
    ctx_t ctx{identity, fold, combine, {}};
    T *none_yet = nullptr, *result = nullptr;
    int err = ws_parallel_reduce(begin, end, grain, sizeof(T *), &none_yet, &ctx_t::fold_leaf,
                                 &ctx_t::combine_pair, &ctx, &result);
    if (err != 0)
        detail::throw_error(err, "ws_parallel_reduce");
    if (std::exception_ptr e = ctx.errors.take()) {
        delete result;
        std::rethrow_exception(e);
    }
    if (result == nullptr)
        return identity;
    T out = std::move(*result);
    delete result;
    return out;
}

// An owned pool: created with `workers` workers (0: the default count), destroyed (after all its
// work) with the object.
class pool
{
  public:
    explicit pool(unsigned workers = 0)
    {
        ws_config config{};
        config.workers = workers;
        int err = ws_pool_create(&pool_, &config);
        if (err != 0)
            detail::throw_error(err, "ws_pool_create");
    }
    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;
    ~pool()
    {
        ws_pool_destroy(pool_);
    }

    // Runs f() on a worker of the pool, waits for it and everything it forked, and returns its
    // result or rethrows its exception. Throws std::system_error if the pool is being destroyed.
    template <class F> auto run(F &&f)
    {
        detail::outcome<std::remove_reference_t<F>> o{f, std::nullopt, nullptr};
        int err = ws_pool_run(pool_, &decltype(o)::trampoline, &o);
        if (err != 0)
            detail::throw_error(err, "ws_pool_run");
        if constexpr (std::is_void_v<std::invoke_result_t<F &>>)
            o.get();
        else
            return o.get();
    }
    unsigned workers() const noexcept
    {
        return ws_pool_workers(pool_);
    }
    ws_pool *native() noexcept
    {
        return pool_;
    }

  private:
    ws_pool *pool_ = nullptr;
};

// ---- futures ----------------------------------------------------------------------------

template <class T> class future;

namespace detail
{

// The type a ws::future holds for a function returning R: R without reference or cv, or void.
template <class R>
using future_value_t =
    std::conditional_t<std::is_void_v<R>, void, std::remove_cv_t<std::remove_reference_t<R>>>;

// What a ws::future shares with its task, in one heap block with the callable (future_block):
// the result or the exception, and the count of owners. The task owns a share until its
// function has returned (or, if it is cancelled before it starts, until the handle's cancel()
// learns that it never will); the handle owns one until it is got or destroyed. The last owner
// deletes the block. The result needs no order of its own: the C future publishes it (the task
// writes it before its function returns; ws_future_get returns after that).
template <class T> struct future_result {
    std::optional<stored_t<T>> value;
    std::exception_ptr error;
    std::atomic<unsigned> owners{2};

    virtual ~future_result() = default;
    void release() noexcept
    {
        // acq_rel: the last owner's acquire sees every write the other owner made to the block
        // before its release, so it may destroy it.
        if (owners.fetch_sub(1, std::memory_order_acq_rel) == 1)
            delete this;
    }
};

template <class T, class F> struct future_block final : future_result<T> {
    std::optional<F> fn; // destroyed once it has run, so that what it captured goes early

    template <class G> explicit future_block(G &&g) : fn(std::in_place, std::forward<G>(g))
    {
    }

    // The C future's function: calls fn once, keeps its result or exception, drops its share.
    static void *run(void *p) noexcept
    {
        auto *b = static_cast<future_block *>(p);
        try {
            if constexpr (std::is_void_v<T>) {
                std::invoke(*b->fn);
                b->value.emplace();
            } else {
                b->value.emplace(std::invoke(*b->fn));
            }
        } catch (...) {
            b->error = std::current_exception();
        }
        b->fn.reset();
        b->release();
        return nullptr;
    }
};

struct make_future;

} // namespace detail

// The result of ws::async: move-only, like std::future. get() waits (on a worker of the pool it
// helps, as ws_future_get does: it never sleeps while there is work it can run), then returns the
// function's result or rethrows its exception, once; afterwards valid() is false. The destructor
// gives the future back without waiting: a function that has not run yet still runs, and its
// result (or exception) is dropped. get() and wait() on a future that is not valid (moved from,
// got already, or default-constructed) throw std::logic_error.
template <class T> class future
{
  public:
    future() noexcept = default;
    future(future &&other) noexcept
        : c_(std::exchange(other.c_, nullptr)), shared_(std::exchange(other.shared_, nullptr)),
          cancelled_(other.cancelled_)
    {
    }
    future &operator=(future &&other) noexcept
    {
        if (this != &other) {
            reset();
            c_ = std::exchange(other.c_, nullptr);
            shared_ = std::exchange(other.shared_, nullptr);
            cancelled_ = other.cancelled_;
        }
        return *this;
    }
    future(const future &) = delete;
    future &operator=(const future &) = delete;
    ~future()
    {
        reset();
    }

    bool valid() const noexcept
    {
        return c_ != nullptr;
    }

    // Returns once the function has returned or the future was cancelled before it started.
    void wait() const
    {
        (void)ws_future_get(checked("ws::future::wait"));
    }

    // The function's result (T, or nothing for void); rethrows its exception; throws
    // std::system_error (ECANCELED) if the future was cancelled before it started.
    T get()
    {
        ws_future *c = checked("ws::future::get");
        (void)ws_future_get(c);
        bool cancelled = ws_future_status(c) == ECANCELED;
        struct release_at_exit {
            future *f;
            ~release_at_exit()
            {
                f->reset();
            }
        } done{this};
        if (cancelled)
            throw std::system_error(ECANCELED, std::generic_category(), "ws::future::get");
        if (shared_->error)
            std::rethrow_exception(shared_->error);
        if constexpr (std::is_void_v<T>)
            return;
        else
            return std::move(*shared_->value);
    }

    // If the function has not started, it never will: true (get() then throws). False if it has
    // started or finished, or the future is not valid. Any thread that owns the handle.
    bool cancel() noexcept
    {
        if (c_ == nullptr || !ws_future_cancel(c_))
            return false;
        if (!cancelled_) { // the task will never run: its share of the block goes now
            cancelled_ = true;
            shared_->release();
        }
        return true;
    }

  private:
    friend struct detail::make_future;
    future(ws_future *c, detail::future_result<T> *shared) noexcept : c_(c), shared_(shared)
    {
    }
    ws_future *checked(const char *what) const
    {
        if (c_ == nullptr)
            throw std::logic_error(std::string(what) + ": the future is not valid");
        return c_;
    }
    void reset() noexcept
    {
        if (c_ == nullptr)
            return;
        ws_future_free(std::exchange(c_, nullptr));
        std::exchange(shared_, nullptr)->release();
        cancelled_ = false;
    }

    ws_future *c_ = nullptr;
    detail::future_result<T> *shared_ = nullptr;
    bool cancelled_ = false;
};

namespace detail
{

struct make_future {
    template <class F> static auto submit(ws_pool *pool, F &&f)
    {
        using T = future_value_t<std::invoke_result_t<std::decay_t<F> &>>;
        using block_t = future_block<T, std::decay_t<F>>;
        auto *block = new block_t(std::forward<F>(f));
        ws_future *c = nullptr;
        int err = ws_future_submit(&c, pool, &block_t::run, block);
        if (err != 0) {
            delete block;
            throw_error(err, "ws_future_submit");
        }
        return future<T>(c, block);
    }
};

} // namespace detail

// Starts f() (moved or copied into the future) on pool, as ws_future_submit: on the calling
// worker's deque when called on a worker of pool, else through the pool's injector. pool nullptr:
// the calling worker's pool, or the default pool outside a worker. Throws std::bad_alloc, or
// std::system_error (ESHUTDOWN: the pool is being destroyed).
template <class F> auto async(ws_pool *pool, F &&f)
{
    return detail::make_future::submit(pool, std::forward<F>(f));
}
template <class F> auto async(pool &p, F &&f)
{
    return detail::make_future::submit(p.native(), std::forward<F>(f));
}
template <class F> auto async(F &&f)
{
    return detail::make_future::submit(nullptr, std::forward<F>(f));
}

} // namespace ws

#endif // WORKSTEAL_HPP
