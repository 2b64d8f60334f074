/* test_stack_link: a typed task's slow spawn keeps the registers that its inline asm says it keeps,
 * whatever the link (worksteal.h, ws__frames_push). The program uses the public header only, as a
 * user's would, and is built four times (tests/sched.cmake): against the shared library with lazy
 * binding (-Wl,-z,lazy, LD_BIND_NOW unset: the first call goes through the dynamic linker's
 * resolver) and against the static library, each at -O0 and -O2.
 *
 * Each register group below is a typed task that pins a known value in every register of the
 * group (local register variables, made live by an empty asm) just before a WS_SPAWN and reads
 * them back just after: together the groups cover every general register the asm keeps (all but
 * rsp, rdi, which carries its argument, and r10 and r11, which it names as changed; rbp only where
 * it is no frame pointer). A register variable stays in its register whatever an asm clobbers, so
 * r10 and r11 cannot be pinned this way; the group "pressure" instead keeps 14 values live across
 * the spawn, more than the registers the asm keeps, so that the compiler puts some in any register
 * the asm does not name as changed: with r10 and r11 missing from its list, values placed there
 * were lost to the lazy resolver (this group failed on the shared library, at -O2).
 * The first spawn of a task that a worker takes from elsewhere is slow, so every name_run's first
 * WS_SPAWN calls the library through the asm. Each group runs first in a fresh process of its own
 * (re-executed from /proc/self/exe), so that its first slow spawn is the process's first call of
 * the routine, through the lazy resolver; then 2,000 more times.
 *
 * usage: test_stack_link            runs every group in a child process and checks each
 *        test_stack_link GROUP      one group, in this process
 */
#define _GNU_SOURCE /* unsetenv, _DYNAMIC */
#include <worksteal.h>

#include <elf.h>
#include <link.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                         \
            fputc('\n', stderr);                                  \
            abort();                                              \
        }                                                         \
    } while (0)

WS_TASK_1(long, leaf, long, x)
{
    return x + 1;
}

/* The tasks below differ only in their registers: PIN_n(r1, ..., rn) declares the pinned
 * variables, holding distinct values derived from seed, around one WS_SPAWN of leaf. */
#define PIN_VAR(reg, i) register uint64_t v_##i __asm__(reg) = seed * 0x9e3779b97f4a7c15ull + (i)
#define PIN_CHECK(i)                                                                          \
    CHECK(v_##i == seed * 0x9e3779b97f4a7c15ull + (i), "register %s changed across WS_SPAWN", \
          regs[i])

#if defined(__x86_64__)
#define GROUP_TASK_4(name, r0, r1, r2, r3)                                 \
    WS_TASK_1(long, name, uint64_t, seed)                                  \
    {                                                                      \
        static const char *const regs[] = {r0, r1, r2, r3};                \
        PIN_VAR(r0, 0);                                                    \
        PIN_VAR(r1, 1);                                                    \
        PIN_VAR(r2, 2);                                                    \
        PIN_VAR(r3, 3);                                                    \
        __asm__ volatile("" : "+r"(v_0), "+r"(v_1), "+r"(v_2), "+r"(v_3)); \
        WS_SPAWN(leaf, (long)seed);                                        \
        __asm__ volatile("" : "+r"(v_0), "+r"(v_1), "+r"(v_2), "+r"(v_3)); \
        PIN_CHECK(0);                                                      \
        PIN_CHECK(1);                                                      \
        PIN_CHECK(2);                                                      \
        PIN_CHECK(3);                                                      \
        return WS_SYNC(leaf);                                              \
    }
#define GROUP_TASK_2(name, r0, r1)                   \
    WS_TASK_1(long, name, uint64_t, seed)            \
    {                                                \
        static const char *const regs[] = {r0, r1};  \
        PIN_VAR(r0, 0);                              \
        PIN_VAR(r1, 1);                              \
        __asm__ volatile("" : "+r"(v_0), "+r"(v_1)); \
        WS_SPAWN(leaf, (long)seed);                  \
        __asm__ volatile("" : "+r"(v_0), "+r"(v_1)); \
        PIN_CHECK(0);                                \
        PIN_CHECK(1);                                \
        return WS_SYNC(leaf);                        \
    }

GROUP_TASK_4(g_args, "rax", "rcx", "rdx", "rsi")
GROUP_TASK_4(g_r8_rbx, "r8", "r9", "rbx", "rax")
GROUP_TASK_4(g_callee, "r12", "r13", "r14", "r15")
/* rbp only where it is no frame pointer (the sanitizer builds keep frame pointers). */
#if defined(__OPTIMIZE__) && !defined(WS_SANITIZED)
#define WS_TEST_PIN_RBP 1
GROUP_TASK_2(g_rbp, "rbp", "rbx")
#endif

/* 14 values live across the spawn, each made opaque to the compiler before and after it. */
#define LIVE(i) uint64_t x##i = seed * 0x9e3779b97f4a7c15ull + (i)
#define HIDE(i) __asm__ volatile("" : "+r"(x##i))
#define SAME(i) \
    CHECK(x##i == seed * 0x9e3779b97f4a7c15ull + (i), "value %d lost across WS_SPAWN", i)
#define EACH14(M) \
    M(0);         \
    M(1);         \
    M(2);         \
    M(3);         \
    M(4);         \
    M(5);         \
    M(6);         \
    M(7);         \
    M(8);         \
    M(9);         \
    M(10);        \
    M(11);        \
    M(12);        \
    M(13)
WS_TASK_1(long, g_pressure, uint64_t, seed)
{
    EACH14(LIVE);
    EACH14(HIDE);
    WS_SPAWN(leaf, (long)seed);
    EACH14(HIDE);
    EACH14(SAME);
    return WS_SYNC(leaf);
}

typedef long (*group_run)(ws_pool *pool, uint64_t seed);
static const struct {
    const char *name;
    group_run run;
} GROUPS[] = {
    {"pressure", g_pressure_run}, {"args", g_args_run},
    {"r8_rbx", g_r8_rbx_run},     {"callee", g_callee_run},
#if defined(WS_TEST_PIN_RBP)
    {"rbp", g_rbp_run},
#endif
};
#define NGROUPS (sizeof GROUPS / sizeof GROUPS[0])
#else
#define NGROUPS 0
#endif

/* Whether this program binds its symbols at load time (DF_BIND_NOW or DF_1_NOW), which would hide
 * the lazy resolver from the test. */
static __attribute__((unused)) int binds_now(void)
{
    for (const ElfW(Dyn) *d = _DYNAMIC; d != NULL && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_BIND_NOW))
            return 1;
        if (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_NOW))
            return 1;
        if (d->d_tag == DT_BIND_NOW)
            return 1;
    }
    return 0;
}

static void run_group(size_t g)
{
#if defined(__x86_64__)
    ws_pool *pool;
    ws_config cfg = {.workers = 2};
    CHECK(ws_pool_create(&pool, &cfg) == 0, "ws_pool_create");
    for (uint64_t seed = 1; seed <= 2001; seed++) {
        long r = GROUPS[g].run(pool, seed);
        CHECK(r == (long)seed + 1, "group %s: result %ld, want %ld", GROUPS[g].name, r,
              (long)seed + 1);
    }
    ws_pool_destroy(pool);
#else
    (void)g;
#endif
}

/* Runs group g in a fresh process: its first slow spawn is the process's first. */
static void run_child(size_t g) __attribute__((unused)); /* where main checks nothing */
static void run_child(size_t g)
{
    char name[] = "test_stack_link", arg[16];
    snprintf(arg, sizeof arg, "%zu", g);
    char *argv[] = {name, arg, NULL};
    pid_t pid;
    int err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    CHECK(err == 0, "posix_spawn: %s", strerror(err));
    int status;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "group %zu failed (status %#x)", g,
          status);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        run_group((size_t)strtoul(argv[1], NULL, 10));
        return 0;
    }
#if !defined(__x86_64__) || defined(__clang__) || defined(__SANITIZE_THREAD__)
    /* Elsewhere the slow spawn is a plain call, across which a variable pinned to a register
     * the call may change keeps no promise (gcc's local register variables). */
    printf("test_stack_link: nothing to check (the slow spawn's inline asm is x86-64 gcc's, "
           "without ThreadSanitizer)\n");
    return 0;
#else
    /* The children inherit the environment: the lazy build must really bind lazily. */
    if (unsetenv("LD_BIND_NOW") != 0)
        abort();
#if defined(WS_TEST_LAZY)
    CHECK(!binds_now(), "the lazy build binds its symbols at load time");
#endif
    for (size_t g = 0; g < NGROUPS; g++)
        run_child(g);
#if defined(WS_TEST_LAZY)
    const char *link = "shared library, bound lazily";
#else
    const char *link = "static library";
#endif
    printf("test_stack_link: %zu register groups kept across the first and 2,000 later slow "
           "spawns (%s)\n",
           (size_t)NGROUPS, link);
    return 0;
#endif
}
