// test_cxx_unwaited.cpp: what a task_group's destructor says on stderr when no wait() saw its
// jobs. Each case runs in a child process whose stderr is read back:
//   thrown   a job throws and no wait() follows: one line, in every build;
//   jobs     jobs run and no wait() follows: one line when NDEBUG is not defined, else nothing;
//   waited   jobs, one throwing, then wait() (which rethrows): nothing;
//   unwind   the scope left by an exception: nothing (the destructor cancels and waits).
#include "test_cxx.h"

#include <worksteal.hpp>

#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

// Runs body in a child with its stderr sent to a pipe; returns what it wrote there. The child
// must exit with status 0.
template <class F> static std::string child_stderr(F body)
{
    int fd[2];
    CHECK(pipe(fd) == 0);
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDERR_FILENO) < 0)
            _exit(99);
        body();
        std::fflush(stderr);
        _exit(0);
    }
    close(fd[1]);
    std::string err;
    char buf[512];
    ssize_t n;
    while ((n = read(fd[0], buf, sizeof buf)) > 0)
        err.append(buf, static_cast<size_t>(n));
    close(fd[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return err;
}

static ws_pool *make_pool()
{
    ws_pool *pool = nullptr;
    ws_config cfg{};
    cfg.workers = 2;
    CHECK(ws_pool_create(&pool, &cfg) == 0);
    return pool;
}

static void thrown()
{
    ws_pool *pool = make_pool();
    {
        ws::task_group g(pool);
        g.run([] { throw std::runtime_error("lost"); });
    }
    ws_pool_destroy(pool);
}

static void jobs()
{
    ws_pool *pool = make_pool();
    {
        ws::task_group g(pool);
        g.run([] {});
        g.run([] {});
    }
    ws_pool_destroy(pool);
}

static void waited()
{
    ws_pool *pool = make_pool();
    {
        ws::task_group g(pool);
        g.run([] {});
        g.run([] { throw std::runtime_error("seen"); });
        bool caught = false;
        try {
            g.wait();
        } catch (const std::runtime_error &) {
            caught = true;
        }
        CHECK(caught);
    }
    ws_pool_destroy(pool);
}

static void unwind()
{
    ws_pool *pool = make_pool();
    try {
        ws::task_group g(pool);
        g.run([] {});
        throw std::logic_error("leaving");
    } catch (const std::logic_error &) {
    }
    ws_pool_destroy(pool);
}

int main(int argc, char **argv)
{
    std::string c = argc > 1 ? argv[1] : "";
    std::string err;
    if (c == "thrown") {
        err = child_stderr(thrown);
        CHECK(err == "worksteal: ~task_group: a job threw and no wait() rethrew it: the "
                     "exception is dropped (call wait() before the group is destroyed)\n");
    } else if (c == "jobs") {
        err = child_stderr(jobs);
#ifndef NDEBUG
        CHECK(err.rfind("worksteal: ~task_group: jobs run after the last wait()", 0) == 0);
        CHECK(err.find('\n') == err.size() - 1);
#else
        CHECK(err.empty());
#endif
    } else if (c == "waited") {
        err = child_stderr(waited);
        CHECK(err.empty());
    } else if (c == "unwind") {
        err = child_stderr(unwind);
        CHECK(err.empty());
    } else {
        std::fprintf(stderr, "usage: %s thrown|jobs|waited|unwind\n", argv[0]);
        return 2;
    }
    std::printf("%s: stderr: %s", c.c_str(), err.empty() ? "(nothing)\n" : err.c_str());
    std::printf("ok\n");
    return 0;
}
