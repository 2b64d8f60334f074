/* test_cgroup: the default worker count under a cgroup CPU quota (src/platform.c).
 *
 * The fake cases build a /proc/self and a cgroup mount in a temporary directory and point
 * ws__cgroup_cpu_limit at them: cgroup v2 and v1, limits at several levels of the hierarchy,
 * "max", malformed and missing files, a mount of a subtree. The "real" case, where the machine
 * lets root make a cgroup with a CPU quota, moves a child process into one and checks that a
 * pool created there with the default worker count gets the quota's CPUs; elsewhere it exits
 * 77 (ctest's skip) saying why.
 */
#include "../src/platform.h"
#include "test.h"

#include <worksteal.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the fake tree ---- */

static char fake[256]; /* the temporary root; fake/proc holds cgroup and mountinfo */

/* Creates every directory of path (absolute). */
static void make_dirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            ASSERT(mkdir(buf, 0755) == 0 || errno == EEXIST);
            *p = '/';
        }
    }
    ASSERT(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

/* Writes text to fake/rel, making its directories; text NULL removes the file. */
static void put(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fake, rel);
    if (text == NULL) {
        ASSERT(unlink(path) == 0 || errno == ENOENT);
        return;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    make_dirs(dir);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    ASSERT_OK(fclose(f));
}

static void fresh_tree(void)
{
    snprintf(fake, sizeof fake, "/tmp/ws-cgroup-XXXXXX");
    ASSERT(mkdtemp(fake) != NULL);
}

static void remove_tree(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fake);
    ASSERT_OK(system(cmd));
}

static unsigned limit(void)
{
    char proc[512];
    snprintf(proc, sizeof proc, "%s/proc", fake);
    return ws__cgroup_cpu_limit(proc, fake);
}

#define V2_MOUNT "30 22 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
#define V1_MOUNT                                                                           \
    "25 22 0:21 / /sys/fs/cgroup/cpu,cpuacct rw shared:9 - cgroup cgroup rw,cpu,cpuacct\n" \
    "26 22 0:22 / /sys/fs/cgroup/cpuset rw shared:10 - cgroup cgroup rw,cpuset\n"
#define OTHER_MOUNTS                                          \
    "21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" \
    "22 21 0:20 / /sys rw,nosuid shared:2 - sysfs sysfs rw\n" \
    "24 22 0:19 / /sys/fs/cgroup rw shared:3 - tmpfs tmpfs rw,mode=755\n"

/* ---- cases on the fake tree ---- */

/* v2: the smallest limit on the path wins, whichever level sets it; rounded up. */
static void case_v2_nested(void)
{
    fresh_tree();
    put("proc/cgroup", "0::/a/b/c\n");
    put("proc/mountinfo", OTHER_MOUNTS V2_MOUNT);
    put("sys/fs/cgroup/a/b/c/cpu.max", "max 100000\n");
    ASSERT_EQ(limit(), 0); /* "max" everywhere, files missing above */
    put("sys/fs/cgroup/a/b/cpu.max", "150000 100000\n");
    ASSERT_EQ(limit(), 2); /* ceil(1.5) */
    put("sys/fs/cgroup/a/cpu.max", "50000 100000\n");
    ASSERT_EQ(limit(), 1); /* the parent's half CPU binds; at least 1 */
    put("sys/fs/cgroup/a/cpu.max", "800000 200000\n");
    put("sys/fs/cgroup/a/b/c/cpu.max", "300000 100000\n");
    ASSERT_EQ(limit(), 2); /* 4, 1.5 and 3: the middle one */
    put("sys/fs/cgroup/a/b/cpu.max", "max 100000\n");
    ASSERT_EQ(limit(), 3);
    put("sys/fs/cgroup/cpu.max", "100000 100000\n");
    ASSERT_EQ(limit(), 1); /* a limit on the mount point itself counts */
    put("sys/fs/cgroup/cpu.max", "100001 100000\n");
    ASSERT_EQ(limit(), 2); /* just above one CPU rounds up */
    put("sys/fs/cgroup/cpu.max", "1000 100000\n");
    ASSERT_EQ(limit(), 1);
    remove_tree();
    printf("v2_nested: ok\n");
}

/* Malformed files set no limit at their level; a sound level elsewhere still counts. */
static void case_malformed(void)
{
    static const char *bad[] = {
        "abc 100000\n",
        "150000\n",
        "150000 0\n",
        "-5 100000\n",
        "",
        "150000 x\n",
        "150000  100000\n",
        "1.5 100000\n",
        "0 100000\n",
        " 150000 100000\n",
        "max\n",
        "150000 -100000\n",
        "99999999999999999999999 1\n",
    };
    fresh_tree();
    put("proc/cgroup", "0::/a/b\n");
    put("proc/mountinfo", V2_MOUNT);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put("sys/fs/cgroup/a/b/cpu.max", bad[i]);
        put("sys/fs/cgroup/a/cpu.max", "max 100000\n");
        ASSERT_EQ(limit(), 0);
        put("sys/fs/cgroup/a/cpu.max", "250000 100000\n");
        if (limit() != 3)
            WS_TEST_FAIL("cpu.max \"%s\" below a limit of 2.5: %u, expected 3", bad[i], limit());
    }
    /* v1 with a malformed quota or period */
    put("proc/cgroup", "3:cpu,cpuacct:/x\n0::/\n");
    put("proc/mountinfo", V1_MOUNT);
    put("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_quota_us", "2x\n");
    put("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_period_us", "100000\n");
    ASSERT_EQ(limit(), 0);
    put("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_quota_us", "200000\n");
    put("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_period_us", "0\n");
    ASSERT_EQ(limit(), 0);
    remove_tree();
    printf("malformed: ok\n");
}

/* Missing /proc files, no matching mount, missing quota files: no limit. */
static void case_missing(void)
{
    fresh_tree();
    ASSERT_EQ(limit(), 0); /* no proc/cgroup */
    put("proc/cgroup", "0::/a\n");
    ASSERT_EQ(limit(), 0); /* no proc/mountinfo */
    put("proc/mountinfo", OTHER_MOUNTS);
    put("sys/fs/cgroup/a/cpu.max", "50000 100000\n");
    ASSERT_EQ(limit(), 0); /* no cgroup2 mount */
    put("proc/mountinfo", OTHER_MOUNTS V2_MOUNT);
    ASSERT_EQ(limit(), 1); /* found once mounted */
    put("proc/cgroup", "0::/elsewhere\n");
    ASSERT_EQ(limit(), 0); /* the process's directory has no files */
    put("proc/cgroup", "1:name=systemd:/a\n");
    ASSERT_EQ(limit(), 0); /* neither a v1 cpu line nor a v2 line */
    remove_tree();
    printf("missing: ok\n");
}

/* v1: cpu.cfs_quota_us over cpu.cfs_period_us, -1 for none; nested levels as in v2. */
static void case_v1(void)
{
    fresh_tree();
    put("proc/cgroup", "5:memory:/x/y\n4:cpuset:/x/y\n3:cpu,cpuacct:/x/y\n0::/\n");
    put("proc/mountinfo", OTHER_MOUNTS V1_MOUNT V2_MOUNT);
    put("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    put("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put("sys/fs/cgroup/cpu,cpuacct/x/y/cpu.cfs_quota_us", "-1\n");
    put("sys/fs/cgroup/cpu,cpuacct/x/y/cpu.cfs_period_us", "100000\n");
    ASSERT_EQ(limit(), 0);
    put("sys/fs/cgroup/cpu,cpuacct/x/y/cpu.cfs_quota_us", "250000\n");
    ASSERT_EQ(limit(), 3);
    put("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_quota_us", "30000\n");
    put("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_period_us", "20000\n");
    ASSERT_EQ(limit(), 2); /* the parent's 1.5 */
    put("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_period_us", NULL);
    ASSERT_EQ(limit(), 3); /* a quota without its period is no limit */
    /* A v2 limit does not count while the cpu controller is on v1. */
    put("sys/fs/cgroup/cpu.max", "50000 100000\n");
    ASSERT_EQ(limit(), 3);
    /* "cpuacct" and "cpuset" are not "cpu": without a v1 cpu line, v2 is read. */
    put("proc/cgroup", "4:cpuset:/x/y\n2:cpuacct:/x/y\n0::/\n");
    ASSERT_EQ(limit(), 1);
    remove_tree();
    printf("v1: ok\n");
}

/* A mount of a subtree (a container without its own cgroup namespace sees its cgroup as
 * /docker/abc, mounted with that root): the path is taken below the mount's root. */
static void case_mount_root(void)
{
    fresh_tree();
    put("proc/cgroup", "0::/docker/abc/job\n");
    put("proc/mountinfo", "30 22 0:27 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    put("sys/fs/cgroup/job/cpu.max", "150000 100000\n");
    ASSERT_EQ(limit(), 2);
    put("sys/fs/cgroup/cpu.max", "90000 100000\n");
    ASSERT_EQ(limit(), 1); /* the mount point is /docker/abc itself */
    put("proc/cgroup", "0::/docker/abcd/job\n");
    ASSERT_EQ(limit(), 0); /* not below the mount's root: a prefix of the name is not enough */
    remove_tree();
    printf("mount_root: ok\n");
}

/* ---- the real cgroup ---- */

static int skip(const char *why)
{
    printf("real: SKIP: %s\n", why);
    return 77;
}

static bool write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return false;
    bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    return close(fd) == 0 && ok;
}

static bool file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* The directory of a writable cpu hierarchy in which the process sits at the top, and whether
 * it is v2; NULL if none. */
static const char *cpu_hierarchy(bool *v2)
{
    static const char *v1_dirs[] = {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"};
    for (size_t i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", v1_dirs[i]);
        if (file_exists(path)) {
            *v2 = false;
            return v1_dirs[i];
        }
    }
    char line[256] = "";
    FILE *f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "r");
    if (f == NULL)
        return NULL;
    if (fgets(line, sizeof line, f) == NULL)
        line[0] = '\0';
    fclose(f);
    *v2 = true;
    /* the child's cgroup gets cpu.max only if the root passes the cpu controller down */
    if (strstr(line, "cpu") == NULL &&
        !write_file("/sys/fs/cgroup", "cgroup.subtree_control", "+cpu"))
        return NULL;
    return "/sys/fs/cgroup";
}

/* Sets the limit of cgroup dir to quota/period CPUs (quota 0: none). */
static bool set_limit(const char *dir, bool v2, long quota, long period)
{
    char text[64];
    if (v2) {
        if (quota == 0)
            snprintf(text, sizeof text, "max %ld", period);
        else
            snprintf(text, sizeof text, "%ld %ld", quota, period);
        return write_file(dir, "cpu.max", text);
    }
    snprintf(text, sizeof text, "%ld", period);
    if (!write_file(dir, "cpu.cfs_period_us", text))
        return false;
    snprintf(text, sizeof text, "%ld", quota == 0 ? -1L : quota);
    return write_file(dir, "cpu.cfs_quota_us", text);
}

static unsigned default_pool_workers(void)
{
    ws_pool *pool;
    ASSERT_OK(ws_pool_create(&pool, NULL));
    unsigned n = ws_pool_workers(pool);
    ws_pool_destroy(pool);
    return n;
}

/* In the child, inside the cgroup: what the library reads there. */
static void check_inside(unsigned want_limit)
{
    cpu_set_t mask;
    ASSERT_OK(sched_getaffinity(0, sizeof mask, &mask));
    unsigned cpus = (unsigned)CPU_COUNT(&mask);
    unsigned want = want_limit < cpus ? want_limit : cpus;
    ASSERT_EQ(ws__cgroup_cpu_limit("/proc/self", ""), want_limit);
    ASSERT_EQ(ws__available_cpus(), want);
    ASSERT_OK(unsetenv("WS_NUM_WORKERS"));
    ASSERT_EQ(default_pool_workers(), want);
    ASSERT_OK(setenv("WS_NUM_WORKERS", "3", 1));
    ASSERT_EQ(default_pool_workers(), 3); /* the environment still wins */
}

/* Forks a child, moves it into cgroup dir, and lets it check; its exit status. */
static int run_child_in(const char *dir, unsigned want_limit)
{
    int go[2];
    ASSERT_OK(pipe(go));
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(3); /* the parent could not move us */
        check_inside(want_limit);
        _exit(0);
    }
    close(go[0]);
    char text[32];
    snprintf(text, sizeof text, "%ld", (long)pid);
    bool moved = write_file(dir, "cgroup.procs", text);
    if (moved)
        ASSERT(write(go[1], "g", 1) == 1);
    close(go[1]);
    int status;
    ASSERT(waitpid(pid, &status, 0) == pid);
    if (!moved)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int case_real(void)
{
    if (geteuid() != 0)
        return skip("needs root to make a cgroup");
    bool v2;
    const char *base = cpu_hierarchy(&v2);
    if (base == NULL)
        return skip("no writable cgroup cpu controller (v1 cpu mount or v2 cpu in "
                    "/sys/fs/cgroup/cgroup.subtree_control)");
    char outer[256], inner[300];
    snprintf(outer, sizeof outer, "%s/ws-test-%ld", base, (long)getpid());
    snprintf(inner, sizeof inner, "%s/inner", outer);
    if (mkdir(outer, 0755) != 0 || mkdir(inner, 0755) != 0) {
        rmdir(outer);
        return skip("cannot make a cgroup under the cpu hierarchy");
    }
    if (v2 && !write_file(outer, "cgroup.subtree_control", "+cpu")) {
        rmdir(inner);
        rmdir(outer);
        return skip("cannot enable the cpu controller in a new v2 cgroup");
    }
    /* half a CPU above, none below: 1 worker */
    bool set = set_limit(outer, v2, 50000, 100000) && set_limit(inner, v2, 0, 100000);
    int first = set ? run_child_in(inner, 1) : -1;
    /* 2.5 CPUs above, 1.5 below: 2 */
    set = set && first == 0 && set_limit(outer, v2, 250000, 100000) &&
          set_limit(inner, v2, 150000, 100000);
    int second = set ? run_child_in(inner, 2) : -1;
    ASSERT_OK(rmdir(inner));
    ASSERT_OK(rmdir(outer));
    if (first == -1)
        return skip("cannot set a CPU quota or move a process into the cgroup");
    if (first != 0 || second != 0)
        WS_TEST_FAIL("child in %s (%s): exit %d and %d", inner, v2 ? "v2" : "v1", first, second);
    printf("real (%s, %s): ok\n", v2 ? "v2" : "v1", base);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    ASSERT(argc == 2);
    const char *c = argv[1];
    if (strcmp(c, "v2_nested") == 0)
        case_v2_nested();
    else if (strcmp(c, "malformed") == 0)
        case_malformed();
    else if (strcmp(c, "missing") == 0)
        case_missing();
    else if (strcmp(c, "v1") == 0)
        case_v1();
    else if (strcmp(c, "mount_root") == 0)
        case_mount_root();
    else if (strcmp(c, "real") == 0)
        return case_real();
    else
        WS_TEST_FAIL("unknown case %s", c);
    return 0;
}
