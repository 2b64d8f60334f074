/* topology.c: the machine's shape, where workers go (WS_PIN), and the victim order built from it.
 *
 * The machine is read with hwloc when the library is built with it (WS_HAVE_HWLOC; this file is
 * the only one that knows). hwloc honours HWLOC_SYNTHETIC and HWLOC_XMLFILE, which is how the
 * tests describe machines they do not run on; such a topology is "not this system" for hwloc, and
 * then the workers are placed on its CPUs for the victim order but no thread is pinned. Without
 * hwloc the machine is the process's CPU set alone: pinning works, but no cache or NUMA level is
 * known, so the victim order stays flat.
 *
 * A placement is computed once, at pool creation, from the usable CPUs in topology order (the
 * process's CPU set, within what the topology allows):
 *   compact  worker i on the i-th usable CPU: neighbours share cores, then L2, then L3;
 *   cores    one worker per core first (the first usable CPU of each core, in topology order),
 *            the cores' second hardware threads only after every core has one;
 *   scatter  as far apart as the tree allows: consecutive workers alternate packages, then L3s
 *            within a package, then cores (the CPUs sorted by their position read from the leaf
 *            up, which for a regular tree is a round-robin at every level);
 *   a list   worker i on the i-th CPU listed ("0-3,8"); every CPU must be usable.
 * With more workers than CPUs the order wraps around, so no CPU gets two workers while another
 * has none. A pool keeps only its places and victim lists; what hwloc read is kept once for the
 * process (see read_machine), so only the first placed pool pays for reading the machine.
 *
 * The victim order (worker.c's steal_round): each placed worker has the other workers sorted by
 * the level of the nearest group they share: L2 (or core), L3, NUMA node (or package when a node
 * spans packages), then the rest. docs/topology.md has the policy and how to read the counts.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WS_HAVE_HWLOC
#include <hwloc.h>
#endif

enum { KEY_DEPTH = 12 }; /* tree levels that the scatter order distinguishes */

/* One usable CPU of the machine. */
typedef struct cpu_info {
    unsigned os;                /* the OS's number for it */
    int node;                   /* OS number of its NUMA node, -1: unknown */
    int core;                   /* an id of its core, unique in the machine */
    int group[WS_LEVEL_REMOTE]; /* ids of its L2 (or core), L3, NUMA node groups; -1: none */
    unsigned smt;               /* its rank among the usable CPUs of its core */
    uint16_t key[KEY_DEPTH];    /* its rank among its siblings, then its parent's, upward */
} cpu_info;

/* The usable CPUs in topology order, and what is known about them. */
typedef struct machine {
    cpu_info *cpus;
    unsigned n;
    bool levels;      /* groups are known (hwloc) */
    bool this_system; /* the topology is the machine we run on: pinning may be applied */
    char desc[160];
} machine;

static const char *const policy_names[] = {"none", "cores", "compact", "scatter", "list"};

/* ---------------------------------------------------------------------------------------- */
/* CPU lists                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* s as a CPU list ("0-3,8"), cut to fit n bytes. */
static void format_cpus(const ws__cpuset *s, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned c = 0; c < WS_CPUSET_MAX && len < n; c++) {
        if (!ws__cpuset_has(s, c))
            continue;
        unsigned last = c;
        while (last + 1 < WS_CPUSET_MAX && ws__cpuset_has(s, last + 1))
            last++;
        int k = last == c ? snprintf(buf + len, n - len, "%s%u", len ? "," : "", c)
                          : snprintf(buf + len, n - len, "%s%u-%u", len ? "," : "", c, last);
        len += k > 0 ? (size_t)k : 0;
        c = last;
    }
}

/* Reads "<digits>" at *s below WS_CPUSET_MAX; false if there is none. */
static bool read_cpu(const char **s, unsigned *out)
{
    const char *p = *s;
    unsigned v = 0;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (unsigned)(*p++ - '0');
        if (v >= WS_CPUSET_MAX)
            return false;
    }
    *s = p;
    *out = v;
    return true;
}

int ws__pin_parse(const char *text, ws__pin_spec *out)
{
    memset(out, 0, sizeof *out);
    for (int p = WS_PIN_NONE; p < WS_PIN_LIST; p++) {
        if (strcmp(text, policy_names[p]) == 0) {
            out->policy = (ws__pin_policy)p;
            return 0;
        }
    }
    out->policy = WS_PIN_LIST;
    const char *s = text;
    do {
        unsigned first, last;
        if (!read_cpu(&s, &first))
            return EINVAL;
        last = first;
        if (*s == '-' && (s++, !read_cpu(&s, &last) || last < first))
            return EINVAL;
        for (unsigned c = first; c <= last; c++) {
            if (out->ncpus == WS_CPUSET_MAX)
                return EINVAL;
            out->cpus[out->ncpus++] = (uint16_t)c;
        }
    } while (*s++ == ',');
    return s[-1] == '\0' ? 0 : EINVAL;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading the machine                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* The machine as the CPU set alone: no levels, topology order = CPU number order. */
static int read_flat(machine *m, const ws__cpuset *usable, const char *why)
{
    m->n = 0;
    m->cpus = ws__calloc(WS_CPUSET_MAX, sizeof(cpu_info));
    if (m->cpus == NULL)
        return ENOMEM;
    for (unsigned c = 0; c < WS_CPUSET_MAX; c++) {
        if (!ws__cpuset_has(usable, c))
            continue;
        cpu_info *ci = &m->cpus[m->n];
        ci->os = c;
        ci->node = -1;
        ci->core = (int)c;
        for (int l = 0; l < WS_LEVEL_REMOTE; l++)
            ci->group[l] = -1;
        ci->key[0] = (uint16_t)m->n++;
    }
    m->levels = false;
    m->this_system = true;
    snprintf(m->desc, sizeof m->desc, "%s: CPUs %u, no cache or NUMA levels", why, m->n);
    return 0;
}

/* The CPUs a placement may use: *mask if given, else the process's CPU set. */
static void usable_cpus(ws__cpuset *usable, const ws__cpuset *mask)
{
    if (mask != NULL)
        *usable = *mask;
    else
        ws__process_cpus(usable);
}

#ifdef WS_HAVE_HWLOC

static void hwloc_version(char *buf, size_t n)
{
#ifdef HWLOC_VERSION
    snprintf(buf, n, "hwloc %s", HWLOC_VERSION);
#else
    unsigned v = hwloc_get_api_version();
    snprintf(buf, n, "hwloc (API %u.%u)", v >> 16, v >> 8 & 0xff);
#endif
}

static int gp_id(hwloc_obj_t o)
{
    return o != NULL ? (int)o->gp_index : -1;
}

/* The NUMA node whose CPUs include pu's, or NULL. */
static hwloc_obj_t node_of(hwloc_topology_t topo, hwloc_obj_t pu)
{
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)) != NULL) {
        if (node->cpuset != NULL && hwloc_bitmap_isset(node->cpuset, pu->os_index))
            return node;
    }
    return NULL;
}

static void describe_cpu(hwloc_topology_t topo, hwloc_obj_t pu, cpu_info *ci)
{
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t l2 = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L2CACHE, pu);
    hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L3CACHE, pu);
    hwloc_obj_t pack = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
    hwloc_obj_t node = node_of(topo, pu);
    ci->os = pu->os_index;
    ci->core = gp_id(core != NULL ? core : pu);
    ci->group[WS_LEVEL_L2] = l2 != NULL ? gp_id(l2) : ci->core;
    ci->group[WS_LEVEL_L3] = gp_id(l3);
    /* The memory level: the NUMA node, unless it spans packages (then the package). */
    bool node_fits =
        node != NULL && (pack == NULL || hwloc_bitmap_isincluded(node->cpuset, pack->cpuset));
    ci->group[WS_LEVEL_NUMA] = node_fits ? gp_id(node) : gp_id(pack != NULL ? pack : node);
    ci->node = node != NULL ? (int)node->os_index : -1;
    hwloc_obj_t o = pu;
    for (int k = 0; k < KEY_DEPTH && o != NULL && o->parent != NULL; k++, o = o->parent)
        ci->key[k] = (uint16_t)o->sibling_rank;
}

static int count(hwloc_topology_t topo, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    return n > 0 ? n : 0;
}

/* Fills m with every CPU the topology allows. */
static int read_hwloc(machine *m, hwloc_topology_t topo)
{
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    int npu = count(topo, HWLOC_OBJ_PU);
    m->cpus = ws__calloc((size_t)npu + 1, sizeof(cpu_info));
    if (m->cpus == NULL)
        return ENOMEM;
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
        if (pu != NULL && hwloc_bitmap_isset(allowed, pu->os_index))
            describe_cpu(topo, pu, &m->cpus[m->n++]);
    }
    m->levels = true;
    char version[32];
    hwloc_version(version, sizeof version);
    snprintf(m->desc, sizeof m->desc,
             "%s: packages %d, NUMA nodes %d, L3 %d, L2 %d, cores %d, CPUs %d%s", version,
             count(topo, HWLOC_OBJ_PACKAGE), count(topo, HWLOC_OBJ_NUMANODE),
             count(topo, HWLOC_OBJ_L3CACHE), count(topo, HWLOC_OBJ_L2CACHE),
             count(topo, HWLOC_OBJ_CORE), npu, m->this_system ? "" : " (not this machine)");
    return 0;
}

/* The machine as hwloc reads it, kept for the process: a load takes milliseconds (it reads
 * /sys and loads hwloc's plugins), too much for every pool. Reloaded when the variables that
 * make hwloc read another machine change (the tests switch synthetic topologies). Guarded by
 * cache_lock; never freed (reachable to the end, like any process-wide table). */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool valid;
    char key[1024];
    machine m;
} cache;

/* The variables hwloc reads the machine's description from, as one string; false if too long
 * to keep (then the machine is read every time). */
static bool cache_key(char *key, size_t n)
{
    const char *synthetic = getenv("HWLOC_SYNTHETIC"), *xml = getenv("HWLOC_XMLFILE");
    const char *this_system = getenv("HWLOC_THISSYSTEM");
    int len = snprintf(key, n, "%s\n%s\n%s", synthetic ? synthetic : "", xml ? xml : "",
                       this_system ? this_system : "");
    return len >= 0 && (size_t)len < n;
}

/* Reads the machine with hwloc into *m (all the CPUs it allows). */
static int load_hwloc(machine *m)
{
    hwloc_topology_t topo;
    memset(m, 0, sizeof *m);
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    (void)hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return -1;
    }
    m->this_system = hwloc_topology_is_thissystem(topo) != 0;
    int err = read_hwloc(m, topo);
    hwloc_topology_destroy(topo);
    return err;
}

/* Reads the machine; the usable CPUs are *mask if given, else the process's CPU set (or, for a
 * topology of another machine, all of its CPUs). */
static int read_machine(machine *m, const ws__cpuset *mask)
{
    ws__cpuset usable;
    usable_cpus(&usable, mask);
    char key[sizeof cache.key];
    bool keep = cache_key(key, sizeof key);
    pthread_mutex_lock(&cache_lock);
    if (!cache.valid || !keep || strcmp(key, cache.key) != 0) {
        ws__free(cache.m.cpus);
        cache.valid = false;
        int err = load_hwloc(&cache.m);
        if (err != 0) {
            ws__free(cache.m.cpus);
            cache.m.cpus = NULL;
            pthread_mutex_unlock(&cache_lock);
            return err == ENOMEM ? ENOMEM
                                 : read_flat(m, &usable, "hwloc could not read the machine");
        }
        cache.valid = keep;
        memcpy(cache.key, key, sizeof key);
    }
    *m = cache.m;
    m->n = 0;
    m->cpus = ws__calloc((size_t)cache.m.n + 1, sizeof(cpu_info));
    bool all = mask == NULL && !m->this_system; /* another machine: the process mask is moot */
    for (unsigned i = 0; m->cpus != NULL && i < cache.m.n; i++) {
        if (all || ws__cpuset_has(&usable, cache.m.cpus[i].os))
            m->cpus[m->n++] = cache.m.cpus[i];
    }
    pthread_mutex_unlock(&cache_lock);
    return m->cpus != NULL ? 0 : ENOMEM;
}

void ws__topology_build_info(char *buf, size_t n)
{
    char version[32];
    hwloc_version(version, sizeof version);
    snprintf(buf, n, "built with %s", version);
}

#else /* no hwloc */

static int read_machine(machine *m, const ws__cpuset *mask)
{
    ws__cpuset usable;
    usable_cpus(&usable, mask);
    return read_flat(m, &usable, "built without hwloc");
}

void ws__topology_build_info(char *buf, size_t n)
{
    ws__cpuset usable;
    ws__process_cpus(&usable);
    machine m = {0};
    if (read_flat(&m, &usable, "built without hwloc") == 0)
        snprintf(buf, n, "%s", m.desc);
    else
        snprintf(buf, n, "built without hwloc");
    ws__free(m.cpus);
}

#endif /* WS_HAVE_HWLOC */

/* ---------------------------------------------------------------------------------------- */
/* Orders                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static int compare_cores(const cpu_info *a, const cpu_info *b)
{
    return a->smt != b->smt ? (a->smt < b->smt ? -1 : 1) : 0;
}

static int compare_scatter(const cpu_info *a, const cpu_info *b)
{
    for (int k = 0; k < KEY_DEPTH; k++) {
        if (a->key[k] != b->key[k])
            return a->key[k] < b->key[k] ? -1 : 1;
    }
    return 0;
}

/* Sorts order[0..n) (indexes into m->cpus) by cmp, ties kept in topology order. Insertion sort:
 * run once per pool creation on at most WS_CPUSET_MAX CPUs. */
static void sort_order(const machine *m, uint16_t *order, unsigned n,
                       int (*cmp)(const cpu_info *, const cpu_info *))
{
    for (unsigned i = 1; i < n; i++) {
        uint16_t x = order[i];
        unsigned j = i;
        while (j > 0 && cmp(&m->cpus[order[j - 1]], &m->cpus[x]) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
}

/* Fills order[] with indexes into m->cpus, in the order workers take them; returns its length,
 * or 0 with *why set if a listed CPU is not usable. */
static unsigned make_order(machine *m, const ws__pin_spec *spec, uint16_t *order, char *why,
                           size_t why_len)
{
    if (spec->policy == WS_PIN_LIST) {
        for (unsigned i = 0; i < spec->ncpus; i++) {
            unsigned k = 0;
            while (k < m->n && m->cpus[k].os != spec->cpus[i])
                k++;
            if (k == m->n) {
                ws__cpuset usable = {{0}};
                for (unsigned j = 0; j < m->n; j++)
                    ws__cpuset_add(&usable, m->cpus[j].os);
                char set[96];
                format_cpus(&usable, set, sizeof set);
                snprintf(why, why_len, "CPU %u is not in this process's CPU set %s", spec->cpus[i],
                         set);
                return 0;
            }
            order[i] = (uint16_t)k;
        }
        return spec->ncpus;
    }
    for (unsigned i = 0; i < m->n; i++) {
        order[i] = (uint16_t)i;
        m->cpus[i].smt = 0;
        for (unsigned j = 0; j < i; j++)
            m->cpus[i].smt += m->cpus[j].core == m->cpus[i].core;
    }
    if (spec->policy == WS_PIN_CORES)
        sort_order(m, order, m->n, compare_cores);
    else if (spec->policy == WS_PIN_SCATTER)
        sort_order(m, order, m->n, compare_scatter);
    return m->n;
}

/* ---------------------------------------------------------------------------------------- */
/* Placements                                                                                */
/* ---------------------------------------------------------------------------------------- */

unsigned ws__steal_level(const ws__place *a, const ws__place *b)
{
    for (unsigned l = 0; l < WS_LEVEL_REMOTE; l++) {
        if (a->group[l] >= 0 && a->group[l] == b->group[l])
            return l;
    }
    return WS_LEVEL_REMOTE;
}

/* Worker i's victims: the other workers, nearest level first (ties in id order). */
static void make_victims(ws__placement *pl, unsigned i)
{
    unsigned n = pl->nworkers, k = 0;
    uint16_t *out = pl->victims + (size_t)i * (n - 1);
    for (unsigned l = 0; l < WS_LEVELS; l++) {
        for (unsigned j = 0; j < n; j++) {
            if (j != i && ws__steal_level(&pl->places[i], &pl->places[j]) == l)
                out[k++] = (uint16_t)j;
        }
        pl->level_end[i][l] = (uint16_t)k;
    }
}

static int place_workers(ws__placement *pl, machine *m, const ws__pin_spec *spec, char *why,
                         size_t why_len)
{
    uint16_t *order = ws__calloc(WS_CPUSET_MAX, sizeof(uint16_t));
    if (order == NULL)
        return ENOMEM;
    unsigned len = m->n == 0 ? 0 : make_order(m, spec, order, why, why_len);
    if (len == 0) {
        if (m->n == 0)
            snprintf(why, why_len, "no usable CPU");
        ws__free(order);
        return EINVAL;
    }
    for (unsigned i = 0; i < pl->nworkers; i++) {
        const cpu_info *ci = &m->cpus[order[i % len]];
        ws__place *p = &pl->places[i];
        p->cpu = (int)ci->os;
        p->node = ci->node;
        memcpy(p->group, ci->group, sizeof p->group);
    }
    for (unsigned k = 0; k < m->n; k++)
        ws__cpuset_add(&pl->cpus, m->cpus[k].os);
    ws__free(order);
    if (m->levels && pl->nworkers > 1) {
        for (unsigned i = 0; i < pl->nworkers; i++)
            make_victims(pl, i);
    }
    return 0;
}

int ws__placement_make(ws__placement **out, const ws__pin_spec *spec, unsigned nworkers,
                       const ws__cpuset *mask, char *why, size_t why_len)
{
    *out = NULL;
    why[0] = '\0';
    if (spec->policy == WS_PIN_NONE || nworkers == 0)
        return 0;
    size_t victims = (size_t)nworkers * (nworkers - 1);
    ws__placement *pl = ws__aligned_alloc(WS_CACHE_LINE, sizeof *pl);
    if (pl == NULL)
        return ENOMEM;
    pl->policy = spec->policy;
    pl->nworkers = nworkers;
    pl->places = ws__calloc(nworkers, sizeof(ws__place));
    pl->level_end = ws__calloc(nworkers, sizeof *pl->level_end);
    pl->victims = ws__calloc(victims + 1, sizeof(uint16_t));
    machine m = {0};
    int err = pl->places == NULL || pl->level_end == NULL || pl->victims == NULL
                  ? ENOMEM
                  : read_machine(&m, mask);
    if (err == 0)
        err = place_workers(pl, &m, spec, why, why_len);
    if (err == 0) {
        pl->levels = m.levels && nworkers > 1;
        pl->pinned = m.this_system;
        snprintf(pl->machine, sizeof pl->machine, "%s", m.desc);
    }
    ws__free(m.cpus);
    if (err != 0) {
        ws__placement_free(pl);
        return err;
    }
    *out = pl;
    return 0;
}

void ws__placement_free(ws__placement *pl)
{
    if (pl == NULL)
        return;
    ws__free(pl->places);
    ws__free(pl->level_end);
    ws__free(pl->victims);
    ws__free(pl);
}

void ws__placement_summary(const ws__placement *pl, char *buf, size_t n)
{
    if (pl == NULL) {
        char build[160];
        ws__topology_build_info(build, sizeof build);
        snprintf(buf, n, "workers not pinned (WS_PIN none), flat victim order; %s", build);
        return;
    }
    snprintf(buf, n, "WS_PIN %s; machine: %s; workers %s; victim order %s",
             policy_names[pl->policy], pl->machine,
             pl->pinned ? "pinned" : "placed but not pinned (the topology is not this machine)",
             pl->levels ? "L2, L3, NUMA node, rest" : "flat (no levels known)");
}
