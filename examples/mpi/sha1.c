/* sha1.c: SHA-1 as FIPS 180-4 specifies it (sections 4.1.1, 4.2.1, 5.1.1, 5.3.1 and 6.1): the
 * message is padded with a 1 bit, zeros and its 64-bit big-endian bit length to a multiple of
 * 512 bits, and each 512-bit block goes through 80 rounds that update five 32-bit words. */
#include "sha1.h"

#include <string.h>

static uint32_t rotl(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32 - n));
}

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* f_t of section 4.1.1, one per group of 20 rounds. */
static uint32_t f_ch(uint32_t b, uint32_t c, uint32_t d)
{
    return (b & c) ^ (~b & d);
}

static uint32_t f_parity(uint32_t b, uint32_t c, uint32_t d)
{
    return b ^ c ^ d;
}

static uint32_t f_maj(uint32_t b, uint32_t c, uint32_t d)
{
    return (b & c) ^ (b & d) ^ (c & d);
}

/* Section 6.1.2: one 64-byte block into the hash value h; K_t from section 4.2.1. */
static void compress(uint32_t h[5], const uint8_t block[64])
{
    uint32_t w[80];
    for (unsigned t = 0; t < 16; t++)
        w[t] = load_be32(block + 4 * t);
    for (unsigned t = 16; t < 80; t++)
        w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t v[5] = {h[0], h[1], h[2], h[3], h[4]}; /* a, b, c, d, e */
#define SHA1_ROUNDS(first, f, k)                                              \
    for (unsigned t = first; t < first + 20; t++) {                           \
        uint32_t tmp = rotl(v[0], 5) + f(v[1], v[2], v[3]) + v[4] + k + w[t]; \
        v[4] = v[3];                                                          \
        v[3] = v[2];                                                          \
        v[2] = rotl(v[1], 30);                                                \
        v[1] = v[0];                                                          \
        v[0] = tmp;                                                           \
    }
    SHA1_ROUNDS(0, f_ch, 0x5a827999u)
    SHA1_ROUNDS(20, f_parity, 0x6ed9eba1u)
    SHA1_ROUNDS(40, f_maj, 0x8f1bbcdcu)
    SHA1_ROUNDS(60, f_parity, 0xca62c1d6u)
#undef SHA1_ROUNDS
    for (unsigned i = 0; i < 5; i++)
        h[i] += v[i];
}

void sha1_digest(const void *msg, size_t len, uint8_t out[SHA1_DIGEST_BYTES])
{
    /* Section 5.3.1: the initial hash value. */
    uint32_t h[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
    const uint8_t *p = msg;
    size_t left = len;
    for (; left >= 64; left -= 64, p += 64)
        compress(h, p);

    /* Section 5.1.1: the tail, a 1 bit, zeros to 56 mod 64 bytes, the length in bits. */
    uint8_t tail[128] = {0};
    memcpy(tail, p, left);
    tail[left] = 0x80;
    size_t tail_len = left + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (unsigned i = 0; i < 8; i++)
        tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t off = 0; off < tail_len; off += 64)
        compress(h, tail + off);

    for (unsigned i = 0; i < 5; i++)
        store_be32(out + 4 * i, h[i]);
}
