/* ntt.c - number-theoretic transforms over Fr of BN254 and BLS12-381 (ntt.h).
 * The transform is written once in ntt_impl.h and instantiated here per curve; this file
 * holds the curve-independent helpers (bit reversal, table allocation).
 * Elements are Montgomery form, little-endian limbs (ff.h); twiddle tables are owned by the
 * domain and read-only after zp_ntt_<C>_domain_init. Tests: tests/test_ntt.c */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/ff/ff_inline.h"
#include "lib/ntt/ntt.h"
#include "lib/ntt/ntt_int.h"
#include "lib/util/util.h"

#include "lib/ntt/ntt_vec.h"
#include <stdatomic.h>

/* the vector path (ntt_vec.h): -1 not decided yet, 0 off, 1 on */
static atomic_int ntt_vec_state = -1;

static bool ntt_vec_on(void)
{
    int s = atomic_load_explicit(&ntt_vec_state, memory_order_relaxed);
    if (s < 0) {
#if NTT_VEC
        const char *e = getenv("ZP_NTT_VECTOR");
        s = nv_cpu() && !(e && e[0] == '0');
#else
        s = 0;
#endif
        atomic_store_explicit(&ntt_vec_state, s, memory_order_relaxed);
    }
    return s > 0;
}

bool zp_ntt_set_vector(bool on)
{
#if NTT_VEC
    atomic_store(&ntt_vec_state, on && nv_cpu());
#else
    (void)on;
    atomic_store(&ntt_vec_state, 0);
#endif
    return ntt_vec_on();
}

bool zp_ntt_vector(void) { return ntt_vec_on(); }

#define NTT_CAT3_(a, b, c) a##b##c
#define NTT_XCAT3(a, b, c) NTT_CAT3_(a, b, c)

enum { NTT_RB = 4 };  /* bit reversal tiles: 2^4 x 2^4 elements */
enum { NTT_LOG2_TILE_W = 4 };
_Static_assert((1 << NTT_LOG2_TILE_W) == ZP_NTT_TILE_W, "tile width");
_Static_assert(sizeof(size_t) >= 8, "domains up to 2^32 need a 64-bit size_t");

/* the low `bits` bits of v, reversed */
static inline size_t ntt_rev(size_t v, unsigned bits)
{
    if (bits == 0) return 0;
    uint64_t x = v;
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
    x = __builtin_bswap64(x);
    return (size_t)(x >> (64 - bits));
}

/* 64-byte aligned; 2 MiB aligned with a transparent-huge-page hint for large tables
 * (fewer TLB misses on strided twiddle reads, fewer faults). Freed with free(). */
static void *ntt_alloc(size_t bytes) { return zp_alloc_big(bytes); }

#define NTT_C bn254
#define NTT_TWO_ADICITY ZP_FR_BN254_TWO_ADICITY
#include "lib/ntt/ntt_impl.h"
#undef NTT_C
#undef NTT_TWO_ADICITY

#define NTT_C bls12_381
#define NTT_TWO_ADICITY ZP_FR_BLS12_381_TWO_ADICITY
#include "lib/ntt/ntt_impl.h"
#undef NTT_C
#undef NTT_TWO_ADICITY

/* bellman's roots (ntt.h): 7^((r-1) >> 32), then 32 - log_n squarings */
int zp_ntt_bls12_381_root_bellman(zp_fr_bls12_381_t *w, unsigned log_n)
{
    if (log_n > ZP_FR_BLS12_381_TWO_ADICITY) return -EINVAL;
    const uint64_t *m = zp_fr_bls12_381_modulus.l;   /* r - 1 = m with the low bit cleared (r odd) */
    uint64_t e[4];
    for (int i = 0; i < 4; i++) e[i] = (m[i] >> 32) | (i < 3 ? m[i + 1] << 32 : 0);
    zp_fr_bls12_381_t g, x;
    zp_fr_bls12_381_set_u64(&g, ZP_NTT_BELLMAN_GENERATOR);
    zp_fr_bls12_381_pow(&x, &g, e, 4);
    for (unsigned k = log_n; k < ZP_FR_BLS12_381_TWO_ADICITY; k++) zp_fr_bls12_381_sqr(&x, &x);
    *w = x;
    return 0;
}
