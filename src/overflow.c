/* overflow.c: a library thread whose C stack overflows prints one line and aborts.
 *
 * Every thread the library starts (the workers and the spares, worker.c) starts here. It has a
 * guard region below its stack (WS_STACK_GUARD, platform.h), an alternate signal stack of its
 * own, and a record, found through a thread-local pointer, holding the bounds of its guard and
 * the line to print, written before the thread runs anything. A fault in the guard region (the
 * stack has run out: the guard lies just below its low end) is that thread's overflow: the
 * handler writes the line and aborts, e.g.
 *
 *   worksteal: thread ws1:w0 (worker 0 of pool 1) overflowed its C stack of 536870912 bytes:
 *   raise WS_STACK_SIZE or ws_config.stack_size
 *
 * (one line). Everything else goes where it went before: a fault elsewhere on a library thread,
 * any fault on a thread that is not the library's (the main thread's stack is the program's,
 * and so is its overflow), and a SIGSEGV sent with kill() go to the action that was installed
 * before ours, or, if that was the default, to the default action (ours is removed and the
 * fault happens again as the handler returns, so the core dump shows the faulting instruction).
 * The handler is installed once per process, before the first library thread starts; a program
 * that installs its own SIGSEGV handler afterwards replaces it (and overflows are then its
 * handler's to report).
 *
 * Why an alternate stack: the kernel delivers the signal on the thread's own stack, which is
 * full: without another one, the delivery itself faults and the kernel kills the process with a
 * bare SIGSEGV. Async-signal safety: the handler reads its record and calls only write(2),
 * sigaction(2), pause(2), raise(3) and abort(3), and its one atomic is lock-free. The record's
 * pointer is an initial-exec thread-local (a plain load, also in the shared library, where the
 * dynamic model may call the dynamic linker).
 * SA_ONSTACK applies to every thread: on a thread of the program's own that set up an
 * alternate stack, a previous handler installed without SA_ONSTACK now runs on that stack rather
 * than on the thread's (the one difference such a thread can see).
 *
 * Under the sanitizers (make test runs the overflow tests under both):
 *   - ASan and TSan install a SEGV handler of their own at start-up (handle_segv=1), and let the
 *     program install its own over it (with handle_segv=2, or the deprecated
 *     allow_user_segv_handler=0, their sigaction ignores ours without an error, and they report
 *     an overflow themselves). Ours is then the one the kernel calls, and theirs the previous
 *     action, to which other faults go: ASan prints its report; TSan, called from inside its own
 *     wrapper of the program's handler, prints the start of its report, then "nested bug in the
 *     same thread", and exits with its usual status (as with any program's handler that chains
 *     to it). TSan runs a handler for a synchronous signal (SIGSEGV, SIGBUS) at once, on the
 *     stack the kernel chose.
 *   - ASan gives every thread it starts an alternate stack of its own (use_sigaltstack=1). Ours
 *     replaces it while the thread runs the library's code and is put back before the thread
 *     returns into ASan, which then frees its own.
 *   - The handler is not instrumented by ASan: before a call of a noreturn function (abort)
 *     ASan unpoisons the thread's stacks, and, when it runs on an alternate stack, warns on
 *     stderr about a thread stack above 64 MiB (the default here), which would make the one
 *     line several.
 */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__)
#define WS_NO_ASAN __attribute__((no_sanitize_address))
#else
#define WS_NO_ASAN
#endif

enum {
    /* The alternate stack: room for a chained handler too (ASan's report runs on it). */
    ALT_STACK_BYTES = 64 << 10,
    LINE_BYTES = 256,
};

/* A library thread's record: written by its creator and by the thread itself before
 * `current` points to it, read by the handler on the same thread only. */
typedef struct guarded_thread {
    void *(*fn)(void *);
    void *arg;
    void *alt_stack; /* ALT_STACK_BYTES (ws__pages_alloc) */
    /* A fault at an address in [guard_low, guard_high) is an overflow of this thread's stack:
     * the guard region, just below the stack's low end (empty where the system does not say
     * where the stack is). */
    uintptr_t guard_low, guard_high;
    size_t line_len;
    char line[LINE_BYTES]; /* the report, newline included */
} guarded_thread;

static _Thread_local const guarded_thread *current WS_TLS_FAST;

/* The actions of SIGSEGV and SIGBUS before ours; written once, before the first library thread
 * starts (install), read by the handler. */
static struct sigaction previous[2];

/* 1 once a thread reports its overflow: two threads whose stacks run out at the same time (a
 * recursion spread over the workers) would print two lines; the second waits for the abort. */
static _Atomic int reporting;

static struct sigaction *previous_of(int sig)
{
    return &previous[sig == SIGBUS];
}

/* ---------------------------------------------------------------------------------------- */
/* The handler                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void write_all(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(STDERR_FILENO, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* A fault that is not ours to report: as if our handler had never been installed. */
static void chain(int sig, siginfo_t *info, void *context)
{
    const struct sigaction *p = previous_of(sig);
    bool sent = info->si_code <= 0; /* by kill() or raise(), not by a faulting access */
    if (p->sa_flags & SA_SIGINFO) {
        p->sa_sigaction(sig, info, context);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
    } else if (!(p->sa_handler == SIG_IGN && sent)) {
        /* The default action (the kernel also takes it for a fault whose signal is ignored):
         * the faulting access runs again after we return, now without us; a sent signal does
         * not come back by itself, so it is raised again (blocked until we return). */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        if (sent)
            raise(sig);
    }
}

static WS_NO_ASAN void on_fault(int sig, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    const guarded_thread *g = current;
    uintptr_t addr = (uintptr_t)info->si_addr;
    if (g != NULL && info->si_code > 0 && addr >= g->guard_low && addr < g->guard_high) {
        /* relaxed: only picks the one thread that reports; it publishes nothing. */
        while (ws_exchange_relaxed(&reporting, 1) != 0)
            pause(); /* until the reporting thread's abort ends the process */
        write_all(g->line, g->line_len);
        abort();
    }
    chain(sig, info, context);
    errno = saved_errno;
}

/* Once per process: our handler for SIGSEGV and SIGBUS, the previous actions kept first so that
 * the handler never reads them unset. */
static void install(void)
{
    static const int signals[] = {SIGSEGV, SIGBUS};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        if (sigaction(signals[i], NULL, previous_of(signals[i])) != 0 ||
            sigaction(signals[i], &sa, NULL) != 0)
            fprintf(stderr,
                    "worksteal: cannot install the handler of signal %d (%s): a stack "
                    "overflow will end in that signal without a message\n",
                    signals[i], strerror(errno));
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Library threads                                                                           */
/* ---------------------------------------------------------------------------------------- */

static void *guarded_main(void *arg)
{
    guarded_thread *g = arg;
    stack_t mine = {.ss_sp = g->alt_stack, .ss_size = ALT_STACK_BYTES, .ss_flags = 0}, before;
    bool alt = sigaltstack(&mine, &before) == 0;
    uintptr_t low;
    size_t size, guard;
    if (alt && ws__thread_stack(&low, &size, &guard) && guard != 0) {
        g->guard_low = low - guard;
        g->guard_high = low;
    }
    current = g;
    void *result = g->fn(g->arg);
    current = NULL;
    if (alt)
        sigaltstack(&before, NULL); /* a sanitizer's, or none */
    ws__pages_free(g->alt_stack, ALT_STACK_BYTES);
    ws__free(g);
    return result;
}

int ws__overflow_thread_start(ws__thread *t, size_t stack_size, const ws__cpuset *cpus,
                              const char *who, void *(*fn)(void *), void *arg)
{
    static pthread_once_t installed = PTHREAD_ONCE_INIT;
    pthread_once(&installed, install);
    guarded_thread *g = ws__malloc(sizeof *g);
    void *alt = g != NULL ? ws__pages_alloc(ALT_STACK_BYTES) : NULL;
    if (alt == NULL) {
        ws__free(g);
        return ENOMEM;
    }
    memset(g, 0, sizeof *g);
    g->fn = fn;
    g->arg = arg;
    g->alt_stack = alt;
    int n = snprintf(g->line, sizeof g->line,
                     "worksteal: %s overflowed its C stack of %zu bytes: raise WS_STACK_SIZE or "
                     "ws_config.stack_size\n",
                     who, stack_size);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len >= sizeof g->line) { /* cut short (a long `who`), it still ends the line */
        len = sizeof g->line - 1;
        g->line[len - 1] = '\n';
    }
    g->line_len = len;
    int err = ws__thread_start_on(t, stack_size, cpus, guarded_main, g);
    if (err != 0) {
        ws__pages_free(alt, ALT_STACK_BYTES);
        ws__free(g);
    }
    return err;
}
