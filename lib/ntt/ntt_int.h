/* ntt_int.h - private to lib/ntt and its test: the schedule knobs of the transform.
 * A transform of n = 2^L runs: bit-reversal permutation; phase 1, the first blk_log radix-2
 * stages inside contiguous blocks of 2^blk_log elements (in cache); phase 2, the remaining
 * L - blk_log stages in column passes of at most tile_k stages each, on tiles of
 * 2^k rows x W columns copied to the stack. The defaults suit 1 MiB L2 caches; the test sets
 * tiny values so that small transforms exercise every path. */
#ifndef ZP_NTT_INT_H
#define ZP_NTT_INT_H
#include "lib/ntt/ntt.h"

enum {
    ZP_NTT_BLK_LOG = 13,    /* phase-1 block: 2^13 elements = 256 KiB */
    ZP_NTT_TILE_LOG = 11,   /* phase-2 tile: 2^11 elements = 64 KiB of stack */
    ZP_NTT_TILE_W = 16,     /* tile columns (contiguous elements per row, 512 B) */
    ZP_NTT_PAR_MIN_LOG = 12 /* below 2^12 elements a transform runs on the caller only */
};

/* blk_log in 1..ZP_NTT_BLK_LOG-ish (any >= 1), tile_k in 1..ZP_NTT_TILE_LOG - log2(W) */
int zp_ntt_bn254_domain_init_tuned(zp_ntt_bn254_domain_t *d, unsigned log_n, zp_pool_t *pool,
                                   unsigned blk_log, unsigned tile_k);
int zp_ntt_bls12_381_domain_init_tuned(zp_ntt_bls12_381_domain_t *d, unsigned log_n, zp_pool_t *pool,
                                       unsigned blk_log, unsigned tile_k);
#endif
