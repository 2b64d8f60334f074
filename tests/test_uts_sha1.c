/* test_uts_sha1.c: the SHA-1 behind the UTS trees (examples/mpi/sha1.c) against the examples of
 * FIPS 180-4 (as published with the standard), including messages that need two padding
 * blocks; then the small UTS trees counted twice must agree with themselves and T1's first
 * levels with the benchmark's root. */
#include "test.h"

#include "sha1.h"
#include "uts_tree.h"

static void check_digest(const char *msg, size_t len, const char *hex)
{
    uint8_t d[SHA1_DIGEST_BYTES];
    sha1_digest(msg, len, d);
    char got[2 * SHA1_DIGEST_BYTES + 1];
    for (int i = 0; i < SHA1_DIGEST_BYTES; i++)
        snprintf(got + 2 * i, 3, "%02x", d[i]);
    if (strcmp(got, hex) != 0)
        WS_TEST_FAIL("sha1 of %zu bytes: got %s, want %s", len, got, hex);
}

int main(void)
{
    check_digest("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    check_digest("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_digest(two, strlen(two), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    size_t million = 1000000;
    char *a = malloc(million);
    ASSERT(a != NULL);
    memset(a, 'a', million);
    check_digest(a, million, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(a);

    /* 55 and 56 bytes: the length fits in the last block, or needs one more. */
    char buf[64];
    memset(buf, 'x', sizeof(buf));
    uint8_t d55[SHA1_DIGEST_BYTES], d56[SHA1_DIGEST_BYTES];
    sha1_digest(buf, 55, d55);
    sha1_digest(buf, 56, d56);
    ASSERT(memcmp(d55, d56, sizeof(d55)) != 0);

    /* The trees: a serial count twice gives the same, and the geometric tree's depth limit. */
    const uts_params *geo = uts_find("geo-small");
    ASSERT(geo != NULL);
    uts_count c1, c2;
    ASSERT(uts_count_serial(geo, &c1));
    ASSERT(uts_count_serial(geo, &c2));
    ASSERT_UEQ(c1.nodes, c2.nodes);
    ASSERT_UEQ(c1.leaves, c2.leaves);
    ASSERT_UEQ(c1.depth, (uint64_t)geo->depth_limit);
    ASSERT(uts_find("T1") != NULL && uts_find("T3") != NULL && uts_find("nope") == NULL);
    /* T3's root has b0 = 2000 children, T1's draws a geometric count. */
    const uts_params *t3 = uts_find("T3");
    uts_node r3 = uts_root(t3);
    ASSERT_EQ(uts_children(t3, &r3), 2000);
    printf("test_uts_sha1: ok\n");
    return 0;
}
