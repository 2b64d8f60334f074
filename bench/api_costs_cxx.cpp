// api_costs_cxx: api_costs.c's count for worksteal.hpp: N tasks on a pool of one worker, for
// bench/api-instructions.sh (callgrind at N and 2N; the difference over N is a task's cost).
//
//   api_costs_cxx CASE N    CASE: join   a ws::join tree of N leaves (N - 1 joins)
//                                 group  N ws::task_group jobs, then one wait
#include "worksteal.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

static long hits; // one worker: only its thread writes it

static void join_leaves(long n)
{
    if (n == 1) {
        hits++;
        return;
    }
    ws::join([=] { join_leaves(n / 2); }, [=] { join_leaves(n - n / 2); });
}

int main(int argc, char **argv)
{
    if (argc != 3 || std::atol(argv[2]) < 1) {
        std::fprintf(stderr, "usage: api_costs_cxx join|group N\n");
        return 2;
    }
    const char *name = argv[1];
    long n = std::atol(argv[2]);
    ws::pool pool(1);
    bool known = pool.run([&] {
        if (std::strcmp(name, "join") == 0) {
            join_leaves(n);
        } else if (std::strcmp(name, "group") == 0) {
            ws::task_group g(pool.native());
            for (long i = 0; i < n; i++)
                g.run([] { hits++; });
            g.wait();
        } else {
            return false;
        }
        return true;
    });
    if (!known || hits != n) {
        std::fprintf(stderr, "api_costs_cxx %s: unknown case, or %ld tasks ran of %ld\n", name,
                     hits, n);
        return 1;
    }
    std::printf("api_costs_cxx %s: %ld tasks\n", name, hits);
    return 0;
}
