/* msm_fixed.h - fixed-base MSM over a precomputed table (issue 12, optional item): for bases
 * that never change (a proving key's H points), out = sum_i k_i P_i reading, besides the bases,
 * a table of their multiples T_d,i = 2^(c R d) P_i (0 < d < depth), so that the windows of the
 * Booth digits fold into R = ceil(W / depth) rounds instead of W windows: one bucket set and one
 * bucket reduction per round (and c doublings between rounds) instead of per window. The
 * scalars are split with the GLV endomorphism as in msm.h (halves of zp_glv_<C>_bits bits,
 * W = bits / c + 1 windows), the phi(T) = (beta x, y) image computed on read, so the table only
 * holds multiples of P. The bucket accumulation is msm_impl.h's own (batched affine additions
 * with the XYZZ overflow set, running-sum reduction), included, not copied.
 * Cost model: bucket additions ~ 2 n W per MSM in both; the table saves (W - R) bucket
 * reductions of 2^(c-1) buckets and lets c grow; it costs (depth - 1) n points of memory.
 * Measured in doc/fixed-base.md (`zkpipe bench arith --fixed`): 12-15% faster at 2^16 with 3
 * extra copies of the bases, 5-7% at 2^18, none at 2^20, so the prover does not use it.
 *
 * The table is a self-describing blob (it may live in shared memory, so it is untrusted
 * input): a header (zp_msm_fixed_hdr_t: magic, group, c, depth, rounds, windows, n, the
 * identity of the bases it was built from, a checksum of the levels, its own checksum), then
 * depth - 1 levels of n affine points (level d at hdr_bytes + (d-1) n point_bytes). The bases
 * themselves are not copied (level 0 is the caller's array). zp_msm_fixed_<C>_check validates
 * a blob against the bases (on attach); the MSM re-checks the header (cheap) on every call and
 * refuses a blob that does not match with an error naming the field.
 * Rules as msm.h: points affine ((0,0) = infinity), scalars standard form (256-bit integers),
 * caller-owned 64-byte aligned scratch of zp_msm_fixed_<C>_scratch_size(n, c, depth, nthreads)
 * bytes, nthreads == zp_pool_size(pool). Never allocates.
 * Tests: tests/test_msm_fixed.c. Bench: zkpipe bench arith --fixed. */
#ifndef ZP_MSM_FIXED_H
#define ZP_MSM_FIXED_H
#include "lib/msm/msm.h"

enum {
    ZP_MSM_FIXED_C_MIN = 4,
    ZP_MSM_FIXED_C_MAX = 20,
    ZP_MSM_FIXED_HDR_BYTES = 128,    /* the levels start 64-byte aligned */
    ZP_MSM_FIXED_G1_BN254 = 1,       /* zp_msm_fixed_hdr_t.group */
    ZP_MSM_FIXED_G1_BLS12_381 = 2,
};
#define ZP_MSM_FIXED_MAGIC "ZPFIXTB1"

typedef struct {
    char magic[8];          /* ZP_MSM_FIXED_MAGIC */
    uint32_t group;         /* ZP_MSM_FIXED_G1_* */
    uint32_t point_bytes;   /* sizeof the affine point */
    uint32_t c;             /* window bits */
    uint32_t depth;         /* multiples per base, the base itself included (levels: depth-1) */
    uint32_t rounds;        /* R = ceil(windows / depth) */
    uint32_t windows;       /* W = zp_glv_<C>_bits / c + 1 */
    uint64_t n;             /* bases */
    uint64_t bytes;         /* the whole blob */
    uint64_t bases_id;      /* zp_msm_fixed_sum of the bases the table was built from */
    uint64_t levels_sum;    /* zp_msm_fixed_sum of the levels */
    uint64_t hdr_sum;       /* zp_msm_fixed_sum of this header with hdr_sum = 0 */
} zp_msm_fixed_hdr_t;

/* 64-bit checksum of n bytes (four multiply-rotate lanes; not cryptographic: it catches
 * corruption and a table built for other bases, not a forger) */
uint64_t zp_msm_fixed_sum(const void *p, size_t n, uint64_t seed);

#define ZP_MSM_FIXED_API(C)                                                                    \
    /* bytes of the blob for n bases (0: c or depth out of range) */                           \
    size_t zp_msm_fixed_g1_##C##_table_size(size_t n, unsigned c, unsigned depth);            \
    /* fill table (table_size bytes, 64-byte aligned) for the bases; -1: parameters out of   \
     * range (depth 1..windows, c ZP_MSM_FIXED_C_MIN..MAX) or bytes too small */              \
    int zp_msm_fixed_g1_##C##_table_build(void *table, size_t bytes, const zp_g1a_##C##_t *bases, \
                                          size_t n, unsigned c, unsigned depth, zp_pool_t *pool); \
    /* 0 if the blob is a table for these bases (full: also the levels' checksum, one pass   \
     * over the table); else -1 with a message naming the field in err */                     \
    int zp_msm_fixed_g1_##C##_check(const void *table, size_t bytes, const zp_g1a_##C##_t *bases, \
                                    size_t n, bool full, char *err, size_t errlen);           \
    size_t zp_msm_fixed_g1_##C##_scratch_size(size_t n, unsigned c, unsigned depth,           \
                                              unsigned nthreads);                             \
    /* out = sum_i scalars[i] bases[i] through the table; -1 (err set, out untouched) when the \
     * header does not describe a table for n bases of this group of the blob's size */        \
    int zp_msm_fixed_g1_##C(zp_g1_##C##_t *out, const zp_g1a_##C##_t *bases,                   \
                            const zp_scalar_t *scalars, size_t n, const void *table,          \
                            size_t bytes, void *scratch, zp_pool_t *pool, char *err,           \
                            size_t errlen);                                                    \
    /* the same from level arrays (trusted: built by the caller; levels[d-1][i] =             \
     * 2^(c rounds d) bases[i] for 0 < d < depth, depth * rounds >= windows): the bench uses \
     * every R-th level of one full table to try several depths. phix: NULL (phi computed on \
     * read), or depth arrays with phix[d][i] = beta x of level d's point i (d = 0: the       \
     * bases): the variant that stores phi's x, measured by the bench only */                \
    void zp_msm_fixed_g1_##C##_levels(zp_g1_##C##_t *out, const zp_g1a_##C##_t *bases,         \
                                      const zp_g1a_##C##_t *const *levels,                     \
                                      const zp_fq_##C##_t *const *phix, unsigned depth,        \
                                      unsigned rounds, unsigned c, const zp_scalar_t *scalars, \
                                      size_t n, void *scratch, zp_pool_t *pool);               \
    /* windows of the split halves for c (W) */                                                \
    unsigned zp_msm_fixed_g1_##C##_windows(unsigned c);

ZP_MSM_FIXED_API(bn254)
ZP_MSM_FIXED_API(bls12_381)
#endif
