// cxx_tasks.cpp: the C++ interface (worksteal.hpp): join with results, a task group whose job
// throws, and a reduction. Run: ./example_cxx_tasks
#include <worksteal.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

static long fib(int n)
{
    if (n < 2)
        return n;
    auto [x, y] = ws::join([=] { return fib(n - 1); }, [=] { return fib(n - 2); });
    return x + y;
}

int main()
{
    ws::pool pool(2);
    long f = pool.run([] { return fib(30); });

    std::vector<double> v(1000000, 0.5);
    double sum = ws::parallel_reduce(
        0, v.size(), 0.0,
        [&](std::size_t b, std::size_t e, double acc) {
            for (std::size_t i = b; i < e; i++)
                acc += v[i];
            return acc;
        },
        [](double l, double r) { return l + r; });

    ws::task_group g(pool.native());
    for (int i = 0; i < 100; i++)
        g.run([i] {
            if (i == 42)
                throw std::runtime_error("job 42 failed");
        });
    std::string caught = "nothing"; // a copy: the exception is gone after its catch block
    bool threw = false;
    try {
        g.wait(); // returns once every job has finished or been cancelled, then rethrows
    } catch (const std::exception &e) {
        caught = e.what();
        threw = true;
    }
    std::printf("ws::join: fib(30) = %ld; ws::parallel_reduce: sum = %.1f; a task group whose "
                "job threw: wait() rethrew \"%s\"\n",
                f, sum, caught.c_str());
    return f == 832040 && sum == 500000.0 && threw ? 0 : 1;
}
