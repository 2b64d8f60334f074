/* test_trace_json.h: a strict JSON reader for the trace tests (RFC 8259, nothing more).
 *
 * json_parse reads a whole text into a tree of jval and fails, with the byte offset and a reason,
 * on anything RFC 8259 does not allow: trailing commas, single quotes, leading zeros, a bare
 * "1." or ".5", unknown escapes, unpaired surrogates, raw control characters or malformed UTF-8
 * in strings, literals other than true/false/null, and anything after the top-level value. It
 * also rejects a key repeated in one object, which the RFC only discourages, because the trace
 * writer must never produce one. Header-only, like test.h.
 */
#ifndef WS_TEST_TRACE_JSON_H
#define WS_TEST_TRACE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum jtype { J_NULL, J_FALSE, J_TRUE, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } jtype;

typedef struct jval {
    jtype type;
    double number;      /* J_NUMBER */
    char *text;         /* J_NUMBER: the literal as written; J_STRING: decoded UTF-8 */
    size_t n;           /* J_ARRAY, J_OBJECT: elements or members */
    struct jval *items; /* J_ARRAY, J_OBJECT: the values */
    char **keys;        /* J_OBJECT: the decoded keys */
} jval;

typedef struct jparser {
    const char *s;
    size_t len, pos;
    int depth;
    char err[160];
} jparser;

enum { JSON_MAX_DEPTH = 64 };

static inline bool json_value_(jparser *p, jval *out);

static inline bool json_fail_(jparser *p, const char *why)
{
    if (p->err[0] == '\0')
        snprintf(p->err, sizeof p->err, "offset %zu: %s", p->pos, why);
    return false;
}

static inline void json_skip_ws_(jparser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static inline void json_free(jval *v)
{
    if (v->type == J_ARRAY || v->type == J_OBJECT) {
        for (size_t i = 0; i < v->n; i++) {
            json_free(&v->items[i]);
            if (v->type == J_OBJECT)
                free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
    free(v->text);
    memset(v, 0, sizeof *v);
}

/* A growable byte buffer for decoded strings. */
typedef struct jbuf {
    char *p;
    size_t n, cap;
} jbuf;

static inline void jbuf_put_(jbuf *b, char c)
{
    if (b->n + 1 >= b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        b->p = (char *)realloc(b->p, b->cap);
        if (b->p == NULL)
            abort();
    }
    b->p[b->n++] = c;
    b->p[b->n] = '\0';
}

static inline void jbuf_put_utf8_(jbuf *b, uint32_t cp)
{
    if (cp < 0x80) {
        jbuf_put_(b, (char)cp);
    } else if (cp < 0x800) {
        jbuf_put_(b, (char)(0xC0 | (cp >> 6)));
        jbuf_put_(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        jbuf_put_(b, (char)(0xE0 | (cp >> 12)));
        jbuf_put_(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        jbuf_put_(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        jbuf_put_(b, (char)(0xF0 | (cp >> 18)));
        jbuf_put_(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        jbuf_put_(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        jbuf_put_(b, (char)(0x80 | (cp & 0x3F)));
    }
}

static inline bool json_hex4_(jparser *p, uint32_t *out)
{
    if (p->len - p->pos < 4)
        return json_fail_(p, "truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return json_fail_(p, "bad hex digit in \\u escape");
    }
    *out = v;
    return true;
}

/* One raw UTF-8 sequence starting at a byte >= 0x80: well-formed, shortest form, no surrogate,
 * at most U+10FFFF. */
static inline bool json_utf8_(jparser *p, jbuf *b)
{
    unsigned char c = (unsigned char)p->s[p->pos];
    int extra;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) {
        extra = 1, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        extra = 2, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        extra = 3, cp = c & 0x07, min = 0x10000;
    } else {
        return json_fail_(p, "invalid UTF-8 lead byte");
    }
    if (p->len - p->pos <= (size_t)extra)
        return json_fail_(p, "truncated UTF-8 sequence");
    for (int i = 1; i <= extra; i++) {
        unsigned char d = (unsigned char)p->s[p->pos + (size_t)i];
        if ((d & 0xC0) != 0x80)
            return json_fail_(p, "invalid UTF-8 continuation byte");
        cp = cp << 6 | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return json_fail_(p, "overlong or out-of-range UTF-8");
    for (int i = 0; i <= extra; i++)
        jbuf_put_(b, p->s[p->pos++]);
    return true;
}

static inline bool json_string_(jparser *p, char **out)
{
    jbuf b = {(char *)calloc(1, 32), 0, 32}; /* an empty string is still an allocation */
    if (b.p == NULL)
        abort();
    p->pos++; /* the opening quote */
    for (;;) {
        if (p->pos >= p->len) {
            free(b.p);
            return json_fail_(p, "unterminated string");
        }
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            *out = b.p;
            return true;
        }
        if (c < 0x20) {
            free(b.p);
            return json_fail_(p, "raw control character in string");
        }
        if (c >= 0x80) {
            if (!json_utf8_(p, &b)) {
                free(b.p);
                return false;
            }
            continue;
        }
        p->pos++;
        if (c != '\\') {
            jbuf_put_(&b, (char)c);
            continue;
        }
        if (p->pos >= p->len) {
            free(b.p);
            return json_fail_(p, "unterminated escape");
        }
        char e = p->s[p->pos++];
        uint32_t cp;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            jbuf_put_(&b, e);
            break;
        case 'b':
            jbuf_put_(&b, '\b');
            break;
        case 'f':
            jbuf_put_(&b, '\f');
            break;
        case 'n':
            jbuf_put_(&b, '\n');
            break;
        case 'r':
            jbuf_put_(&b, '\r');
            break;
        case 't':
            jbuf_put_(&b, '\t');
            break;
        case 'u':
            if (!json_hex4_(p, &cp)) {
                free(b.p);
                return false;
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(b.p);
                return json_fail_(p, "lone low surrogate");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                    free(b.p);
                    return json_fail_(p, "high surrogate without a low one");
                }
                p->pos += 2;
                if (!json_hex4_(p, &lo)) {
                    free(b.p);
                    return false;
                }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(b.p);
                    return json_fail_(p, "high surrogate without a low one");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0) {
                free(b.p);
                return json_fail_(p, "\\u0000 (the tests keep strings NUL-terminated)");
            }
            jbuf_put_utf8_(&b, cp);
            break;
        default:
            free(b.p);
            return json_fail_(p, "unknown escape");
        }
    }
}

static inline bool json_digits_(jparser *p)
{
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
        p->pos++;
    return p->pos > start;
}

static inline bool json_number_(jparser *p, jval *out)
{
    size_t start = p->pos;
    if (p->s[p->pos] == '-')
        p->pos++;
    if (p->pos >= p->len)
        return json_fail_(p, "truncated number");
    if (p->s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            return json_fail_(p, "leading zero in number");
    } else if (!json_digits_(p)) {
        return json_fail_(p, "number without digits");
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        if (!json_digits_(p))
            return json_fail_(p, "no digit after the decimal point");
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (!json_digits_(p))
            return json_fail_(p, "no digit in the exponent");
    }
    size_t n = p->pos - start;
    out->type = J_NUMBER;
    out->text = (char *)malloc(n + 1);
    if (out->text == NULL)
        abort();
    memcpy(out->text, p->s + start, n);
    out->text[n] = '\0';
    out->number = strtod(out->text, NULL);
    return true;
}

static inline void json_append_(jval *v, size_t *cap, const jval *item, char *key)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        v->items = (jval *)realloc(v->items, *cap * sizeof *v->items);
        if (v->type == J_OBJECT)
            v->keys = (char **)realloc(v->keys, *cap * sizeof *v->keys);
        if (v->items == NULL || (v->type == J_OBJECT && v->keys == NULL))
            abort();
    }
    v->items[v->n] = *item;
    if (v->type == J_OBJECT)
        v->keys[v->n] = key;
    v->n++;
}

/* An array or an object; the opening bracket is at p->pos. */
static inline bool json_container_(jparser *p, jval *out, bool object)
{
    char close = object ? '}' : ']';
    size_t cap = 0;
    out->type = object ? J_OBJECT : J_ARRAY;
    if (++p->depth > JSON_MAX_DEPTH)
        return json_fail_(p, "nested too deeply");
    p->pos++;
    json_skip_ws_(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        p->depth--;
        return true;
    }
    for (;;) {
        char *key = NULL;
        json_skip_ws_(p);
        if (object) {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return json_fail_(p, "expected a string key");
            if (!json_string_(p, &key))
                return false;
            for (size_t i = 0; i < out->n; i++) {
                if (strcmp(out->keys[i], key) == 0) {
                    free(key);
                    return json_fail_(p, "key repeated in an object");
                }
            }
            json_skip_ws_(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(key);
                return json_fail_(p, "expected ':' after a key");
            }
            p->pos++;
        }
        jval item;
        memset(&item, 0, sizeof item);
        if (!json_value_(p, &item)) {
            json_free(&item);
            free(key);
            return false;
        }
        json_append_(out, &cap, &item, key);
        json_skip_ws_(p);
        if (p->pos >= p->len)
            return json_fail_(p, object ? "unterminated object" : "unterminated array");
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue; /* a value must follow: "[1,]" fails in json_value_ */
        }
        if (p->s[p->pos] == close) {
            p->pos++;
            p->depth--;
            return true;
        }
        return json_fail_(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static inline bool json_literal_(jparser *p, const char *word, jtype type, jval *out)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return json_fail_(p, "unexpected character");
    p->pos += n;
    out->type = type;
    return true;
}

static inline bool json_value_(jparser *p, jval *out)
{
    json_skip_ws_(p);
    if (p->pos >= p->len)
        return json_fail_(p, "expected a value, found the end");
    char c = p->s[p->pos];
    switch (c) {
    case '{':
        return json_container_(p, out, true);
    case '[':
        return json_container_(p, out, false);
    case '"':
        out->type = J_STRING;
        return json_string_(p, &out->text);
    case 't':
        return json_literal_(p, "true", J_TRUE, out);
    case 'f':
        return json_literal_(p, "false", J_FALSE, out);
    case 'n':
        return json_literal_(p, "null", J_NULL, out);
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return json_number_(p, out);
        return json_fail_(p, "expected a value");
    }
}

/* Parses text[0..len) as one JSON text. On failure *out is empty and err holds the reason. */
static inline bool json_parse(const char *text, size_t len, jval *out, char *err, size_t errlen)
{
    jparser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.len = len;
    memset(out, 0, sizeof *out);
    bool ok = json_value_(&p, out);
    if (ok) {
        json_skip_ws_(&p);
        if (p.pos != p.len)
            ok = json_fail_(&p, "text after the value");
    }
    if (!ok)
        json_free(out);
    snprintf(err, errlen, "%s", p.err);
    return ok;
}

/* The member `key` of an object, or NULL. */
static inline const jval *json_get(const jval *obj, const char *key)
{
    if (obj == NULL || obj->type != J_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

/* The string member `key`, or NULL if absent or not a string. */
static inline const char *json_get_str(const jval *obj, const char *key)
{
    const jval *v = json_get(obj, key);
    return v != NULL && v->type == J_STRING ? v->text : NULL;
}

#endif /* WS_TEST_TRACE_JSON_H */
