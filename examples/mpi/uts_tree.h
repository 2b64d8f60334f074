/* uts_tree.h: the trees of the Unbalanced Tree Search benchmark (Olivier et al., "UTS: An
 * Unbalanced Tree Search Benchmark", LCPC 2006), grown exactly as the published benchmark grows
 * them, so that node, leaf and depth counts can be checked against its sample trees.
 *
 * A node is its 20-byte random state and its height. The root's state is the SHA-1 digest of 16
 * zero bytes and the 4-byte big-endian seed; child i's state is the digest of the parent's state
 * followed by i as 4 big-endian bytes. A node draws one number from its own state: the last four
 * state bytes, big-endian, with the top bit cleared, divided by 2^31. The tree kind turns that
 * number into a child count:
 *   binomial:  the root has b0 children; any other node has m children with probability q;
 *   geometric (fixed shape): nodes above depth d have a geometrically distributed child count
 *              with mean b0, nodes at depth d have none.
 */
#ifndef WS_EXAMPLE_UTS_TREE_H
#define WS_EXAMPLE_UTS_TREE_H

#include <stdbool.h>
#include <stdint.h>

#define UTS_STATE_BYTES  20
#define UTS_MAX_CHILDREN 100 /* the benchmark's cap on a non-root node's children */

typedef enum uts_kind { UTS_BINOMIAL, UTS_GEOMETRIC } uts_kind;

typedef struct uts_params {
    const char *name;
    uts_kind kind;
    int seed;
    double b0;       /* root children (binomial) or mean children (geometric) */
    int depth_limit; /* geometric: the depth at which nodes stop having children */
    double q;        /* binomial: probability that a non-root node has children */
    int m;           /* binomial: children of such a node */
    uint64_t nodes;  /* the published counts, 0 when unknown */
    uint64_t leaves;
    unsigned depth;
} uts_params;

typedef struct uts_node {
    uint8_t state[UTS_STATE_BYTES];
    int32_t height;
} uts_node;

/* What a search counts. */
typedef struct uts_count {
    uint64_t nodes, leaves;
    uint64_t depth; /* the largest height seen */
} uts_count;

/* The named sample trees (T1, T3) and small ones for tests; NULL when the name is unknown. */
const uts_params *uts_find(const char *name);
/* Every known name, comma separated, for usage messages. */
const char *uts_names(void);

uts_node uts_root(const uts_params *p);
int uts_children(const uts_params *p, const uts_node *n);
uts_node uts_child(const uts_node *parent, int i);

/* Adds node n alone (not its subtree) to c: one node, a leaf if it has no children. */
void uts_count_node(uts_count *c, const uts_node *n, int children);
/* c += more. */
void uts_count_add(uts_count *c, const uts_count *more);
/* A serial depth-first count of the whole tree; false if out of memory. */
bool uts_count_serial(const uts_params *p, uts_count *out);
/* True if c matches p's published counts (or p has none). */
bool uts_count_matches(const uts_params *p, const uts_count *c);

#endif
