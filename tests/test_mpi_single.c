/* test_mpi_single.c: ws_mpi_run after a plain MPI_Init (MPI_THREAD_SINGLE) fails with EINVAL
 * at once and says why on one stderr line (tests/mpi.cmake runs it on one rank). Skipped (exit
 * 77) where a plain MPI_Init gives a higher thread level.
 */
#include "test.h"

#include <errno.h>
#include <unistd.h>
#include <worksteal_mpi.h>

static void never(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    (void)out, (void)record, (void)acc, (void)ctx;
    WS_TEST_FAIL("a record ran");
}

static void add(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(long *)acc += *(const long *)right;
}

/* ws_mpi_run's return value, with what it wrote to stderr in err. */
static int run_capturing_stderr(char *err, size_t cap)
{
    static const long zero = 0;
    long result = 0;
    ws_mpi_work w = {.record_size = sizeof(long),
                     .process = never,
                     .acc_size = sizeof(long),
                     .identity = &zero,
                     .combine = add};
    char path[] = "/tmp/test_mpi_single.XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    ASSERT_OK(unlink(path));
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    ASSERT(saved >= 0 && dup2(fd, STDERR_FILENO) >= 0);
    int rc = ws_mpi_run(MPI_COMM_WORLD, NULL, &w, NULL, &result, NULL);
    fflush(stderr);
    ASSERT(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    ssize_t n = pread(fd, err, cap - 1, 0);
    ASSERT(n >= 0);
    err[n] = '\0';
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int level;
    MPI_Query_thread(&level);
    if (level != MPI_THREAD_SINGLE) {
        printf("test_mpi_single: skipped: this MPI's plain MPI_Init gives thread level %d, not "
               "MPI_THREAD_SINGLE\n",
               level);
        MPI_Finalize();
        return 77;
    }
    char err[1024];
    int rc = run_capturing_stderr(err, sizeof err);
    printf("ws_mpi_run: %d, stderr: %s", rc, err);
    ASSERT_EQ(rc, EINVAL);
    ASSERT(strstr(err, "worksteal_mpi: ws_mpi_run: EINVAL: ") == err);
    ASSERT(strstr(err, "MPI_THREAD_SINGLE") != NULL && strstr(err, "MPI_Init_thread") != NULL);
    ASSERT(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    MPI_Finalize();
    printf("test_mpi_single: ok\n");
    return 0;
}
