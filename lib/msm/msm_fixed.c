/* msm_fixed.c - the fixed-base table's checksum (msm_fixed.h); the MSM itself is
 * msm_fixed_impl.h, instantiated per curve in msm_fixed_g1_<C>.c.
 * Tests: tests/test_msm_fixed.c */
#include <string.h>

#include "lib/msm/msm_fixed.h"

static inline uint64_t fx_rotl(uint64_t x, unsigned r) { return x << r | x >> (64 - r); }
static inline uint64_t fx_word(const uint8_t *b)
{
    uint64_t w;
    memcpy(&w, b, 8);
    return w;
}
static inline uint64_t fx_mix(uint64_t h, uint64_t w)
{
    return fx_rotl(h ^ (w * 0x9fb21c651e98df25ULL), 29) * 0xc2b2ae3d27d4eb4fULL;
}

uint64_t zp_msm_fixed_sum(const void *p, size_t n, uint64_t seed)
{
    const uint8_t *b = p;
    uint64_t v[4] = {seed ^ 0x243f6a8885a308d3ULL, seed ^ 0x13198a2e03707344ULL,
                     seed ^ 0xa4093822299f31d0ULL, seed ^ 0x082efa98ec4e6c89ULL};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (unsigned j = 0; j < 4; j++) v[j] = fx_mix(v[j], fx_word(b + i + 8 * j));
    for (; i + 8 <= n; i += 8) v[0] = fx_mix(v[0], fx_word(b + i));
    if (i < n) {
        uint64_t t = 0;
        memcpy(&t, b + i, n - i);
        v[1] = fx_mix(v[1], t);
    }
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ULL;
    for (unsigned j = 0; j < 4; j++) h = fx_mix(h, v[j]);
    return h ^ h >> 31;
}
