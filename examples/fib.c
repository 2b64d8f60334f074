/* fib.c: recursive fork-join with ws_join. Run: ./example_fib [n] */
#include <stdio.h>
#include <stdlib.h>
#include <worksteal.h>

typedef struct fib_call {
    int n;
    long result;
} fib_call;

static long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static void fib(void *p)
{
    fib_call *c = p;
    if (c->n < 20) { /* below a grain size, plain recursion is faster than forking */
        c->result = fib_serial(c->n);
        return;
    }
    fib_call x = {c->n - 1, 0}, y = {c->n - 2, 0};
    ws_join(fib, &x, fib, &y); /* x and y may run in parallel */
    c->result = x.result + y.result;
}

int main(int argc, char **argv)
{
    fib_call c = {argc > 1 ? atoi(argv[1]) : 40, 0};
    fib(&c); /* its ws_join calls, made outside any worker, run on the default pool */
    printf("fib(%d) = %ld, computed with ws_join on the %u workers of the default pool\n", c.n,
           c.result, ws_pool_workers(ws_default_pool()));
    return 0;
}
