/* uts_tree.c: node generation and counting for the UTS trees (uts_tree.h has the rules). */
#include "uts_tree.h"

#include "sha1.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parameters from the UTS distribution's sample trees (T1 and T3, with their published counts)
 * and two small trees of the same kinds that the tests walk many times. */
static const uts_params known[] = {
    {"T1", UTS_GEOMETRIC, 19, 4.0, 10, 0, 0, 4130071, 3305118, 10},
    {"T3", UTS_BINOMIAL, 42, 2000.0, 0, 0.124875, 8, 4112897, 3599034, 1572},
    {"geo-small", UTS_GEOMETRIC, 7, 4.0, 6, 0, 0, 0, 0, 0},
    {"bin-small", UTS_BINOMIAL, 42, 2000.0, 0, 0.12, 8, 0, 0, 0},
};

const uts_params *uts_find(const char *name)
{
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(known[i].name, name) == 0)
            return &known[i];
    return NULL;
}

const char *uts_names(void)
{
    return "T1, T3, geo-small, bin-small";
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

uts_node uts_root(const uts_params *p)
{
    uint8_t seed[UTS_STATE_BYTES] = {0};
    put_be32(seed + 16, (uint32_t)p->seed);
    uts_node root = {.height = 0};
    sha1_digest(seed, sizeof(seed), root.state);
    return root;
}

uts_node uts_child(const uts_node *parent, int i)
{
    uint8_t msg[UTS_STATE_BYTES + 4];
    memcpy(msg, parent->state, UTS_STATE_BYTES);
    put_be32(msg + UTS_STATE_BYTES, (uint32_t)i);
    uts_node child = {.height = parent->height + 1};
    sha1_digest(msg, sizeof(msg), child.state);
    return child;
}

/* The node's one draw, uniform on [0, 1). */
static double draw(const uts_node *n)
{
    const uint8_t *s = n->state + 16;
    uint32_t v = (uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 | (uint32_t)s[2] << 8 | s[3];
    return (double)(v & 0x7fffffffu) / 2147483648.0;
}

int uts_children(const uts_params *p, const uts_node *n)
{
    if (p->kind == UTS_BINOMIAL) {
        if (n->height == 0)
            return (int)floor(p->b0);
        return draw(n) < p->q ? p->m : 0;
    }
    /* Geometric with fixed shape: the inverse of the geometric distribution's CDF at the draw,
     * with success probability 1 / (1 + b) so that its mean is b. */
    if (n->height >= p->depth_limit)
        return 0;
    double success = 1.0 / (1.0 + p->b0);
    int k = (int)floor(log(1.0 - draw(n)) / log(1.0 - success));
    return k > UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : k;
}

void uts_count_node(uts_count *c, const uts_node *n, int children)
{
    c->nodes++;
    c->leaves += children == 0;
    if ((uint64_t)n->height > c->depth)
        c->depth = (uint64_t)n->height;
}

void uts_count_add(uts_count *c, const uts_count *more)
{
    c->nodes += more->nodes;
    c->leaves += more->leaves;
    if (more->depth > c->depth)
        c->depth = more->depth;
}

bool uts_count_serial(const uts_params *p, uts_count *out)
{
    size_t cap = 1024, top = 0;
    uts_node *stack = malloc(cap * sizeof(*stack));
    if (!stack)
        return false;
    *out = (uts_count){0};
    stack[top++] = uts_root(p);
    while (top > 0) {
        uts_node n = stack[--top];
        int kids = uts_children(p, &n);
        uts_count_node(out, &n, kids);
        if (top + (size_t)kids > cap) {
            size_t bigger = 2 * cap + (size_t)kids;
            uts_node *grown = realloc(stack, bigger * sizeof(*stack));
            if (!grown) {
                free(stack);
                return false;
            }
            stack = grown;
            cap = bigger;
        }
        for (int i = 0; i < kids; i++)
            stack[top++] = uts_child(&n, i);
    }
    free(stack);
    return true;
}

bool uts_count_matches(const uts_params *p, const uts_count *c)
{
    if (p->nodes == 0)
        return true;
    return c->nodes == p->nodes && c->leaves == p->leaves && c->depth == p->depth;
}
