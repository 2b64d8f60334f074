/* sha1.h: SHA-1 (FIPS 180-4), written from the standard, for the UTS benchmark's random number
 * generator. Not for security: SHA-1 is broken for collision resistance; UTS uses it only as a
 * well-mixed, portable, splittable hash so that every implementation grows the same trees. */
#ifndef WS_EXAMPLE_SHA1_H
#define WS_EXAMPLE_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_DIGEST_BYTES 20

/* The digest of the len bytes at msg. */
void sha1_digest(const void *msg, size_t len, uint8_t out[SHA1_DIGEST_BYTES]);

#endif
