/* test_common.h - what the unit tests share: a CHECK that counts failures in `fails` (the
 * test's main ends by printing them and returning non-zero when there were any) and a seeded splitmix64 generator (deterministic, so a failure
 * reproduces; each test file picks its own seed with TEST_SEED before including this). */
#ifndef ZP_TEST_COMMON_H
#define ZP_TEST_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TEST_SEED
#define TEST_SEED 0x9e3779b97f4a7c15ULL
#endif

static int fails;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            fails++;                                                                 \
        }                                                                            \
    } while (0)

static uint64_t rng_state = TEST_SEED;
static inline uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* a zp_<F>_random-style source of bytes */
static inline int rnd_cb(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++) ((uint8_t *)buf)[i] = (uint8_t)rnd64();
    return 0;
}
#include "test_slurp.h"
#endif
