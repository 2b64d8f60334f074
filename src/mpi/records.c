/* records.c: a growable ring of fixed-size records, used as a stack with access to both ends: a
 * driver works at the top (newest first, depth-first), while records leave for other workers
 * and ranks from the bottom (the oldest, nearest the root of a tree: the largest pieces). */
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

void ws__records_init(ws__records *r, size_t size)
{
    *r = (ws__records){.size = size};
}

void ws__records_free(ws__records *r)
{
    free(r->buf);
    ws__records_init(r, r->size);
}

static unsigned char *slot_at(const ws__records *r, size_t i)
{
    return r->buf + ((r->first + i) & (r->cap - 1)) * r->size;
}

bool ws__records_reserve(ws__records *r, size_t n)
{
    if (r->count + n <= r->cap)
        return true;
    size_t cap = r->cap ? r->cap : 16;
    while (cap < r->count + n)
        cap *= 2;
    unsigned char *buf = malloc(cap * r->size);
    if (!buf)
        return false;
    for (size_t i = 0; i < r->count; i++)
        memcpy(buf + i * r->size, slot_at(r, i), r->size);
    free(r->buf);
    r->buf = buf;
    r->cap = cap;
    r->first = 0;
    return true;
}

void ws__records_push(ws__records *r, const void *src, size_t n)
{
    const unsigned char *p = src;
    for (size_t i = 0; i < n; i++, r->count++)
        memcpy(slot_at(r, r->count), p + i * r->size, r->size);
}

void ws__records_pop(ws__records *r, void *dst)
{
    r->count--;
    memcpy(dst, slot_at(r, r->count), r->size);
}

void ws__records_move_bottom(ws__records *from, ws__records *to, size_t n)
{
    for (size_t i = 0; i < n; i++, to->count++)
        memcpy(slot_at(to, to->count), slot_at(from, i), from->size);
    from->first = (from->first + n) & (from->cap - 1);
    from->count -= n;
}

void ws__records_move_top(ws__records *from, ws__records *to, size_t n)
{
    size_t base = from->count - n;
    for (size_t i = 0; i < n; i++, to->count++)
        memcpy(slot_at(to, to->count), slot_at(from, base + i), from->size);
    from->count -= n;
}

void ws__records_take_bottom(ws__records *r, void *dst, size_t n)
{
    unsigned char *p = dst;
    for (size_t i = 0; i < n; i++)
        memcpy(p + i * r->size, slot_at(r, i), r->size);
    r->first = (r->first + n) & (r->cap - 1);
    r->count -= n;
}
