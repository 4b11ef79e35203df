/* ff.h - prime fields of BN254 and BLS12-381 and their extension towers.
 *
 * Representation (the same as snarkjs/ffjavascript, so zkey bytes are used without conversion):
 *   - little-endian 64-bit limbs, Montgomery form a*R mod p, R = 2^(64*N):
 *     Fr (both curves) N = 4, R = 2^256; Fq BN254 N = 4, R = 2^256; Fq BLS12-381 N = 6, R = 2^384.
 *   - every element is fully reduced (< p) after every operation.
 *   - on little-endian hosts the limb array is byte-identical to the zkey/ptau "LEM" encoding.
 * Scalars for MSM are zp_scalar_t: 4 limbs, STANDARD (not Montgomery) form, little-endian.
 *
 * Fields F in {fr_bn254, fq_bn254, fr_bls12_381, fq_bls12_381} each get the API below
 * (written once as a template in ff_impl.h, instantiated per field in ff.c).
 * Towers per curve C in {bn254, bls12_381}:
 *   fq2_C  = fq_C[u]/(u^2+1)
 *   fq6_C  = fq2_C[v]/(v^3 - xi), xi = 9+u (BN254), 1+u (BLS12-381)
 *   fq12_C = fq6_C[w]/(w^2 - v)
 * Arithmetic never fails and never allocates; output arguments come first; aliasing of
 * output and inputs is allowed everywhere.
 * Tests: tests/test_ff.c (known answers + random properties). Bench: cli/bench.c */
#ifndef ZP_FF_H
#define ZP_FF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint64_t l[4]; } zp_scalar_t;   /* standard-form scalar, < r */

#define ZP_FIELD_API(F, N)                                                                  \
    typedef struct { uint64_t l[N]; } zp_##F##_t;                                           \
    enum { ZP_##F##_LIMBS = N, ZP_##F##_BYTES = 8 * N };                                    \
    extern const zp_##F##_t zp_##F##_modulus;   /* p, plain integer */                      \
    extern const zp_##F##_t zp_##F##_one;       /* R mod p (Montgomery 1) */                \
    extern const zp_##F##_t zp_##F##_r2;        /* R^2 mod p */                             \
    void zp_##F##_add(zp_##F##_t *r, const zp_##F##_t *a, const zp_##F##_t *b);            \
    void zp_##F##_sub(zp_##F##_t *r, const zp_##F##_t *a, const zp_##F##_t *b);            \
    void zp_##F##_neg(zp_##F##_t *r, const zp_##F##_t *a);                                  \
    void zp_##F##_dbl(zp_##F##_t *r, const zp_##F##_t *a);                                  \
    void zp_##F##_mul(zp_##F##_t *r, const zp_##F##_t *a, const zp_##F##_t *b);            \
    void zp_##F##_sqr(zp_##F##_t *r, const zp_##F##_t *a);                                  \
    void zp_##F##_inv(zp_##F##_t *r, const zp_##F##_t *a);      /* inv(0) = 0 */            \
    /* the same, variable time (safegcd, ff_inv.h: ~10x faster); public inputs only */       \
    void zp_##F##_inv_vartime(zp_##F##_t *r, const zp_##F##_t *a);                         \
    /* batch inverse of n elements in place; zeros stay zero; scratch: n elements */         \
    void zp_##F##_batch_inv(zp_##F##_t *a, size_t n, zp_##F##_t *scratch);                  \
    /* the same with the variable-time inversion; public inputs only */                      \
    void zp_##F##_batch_inv_vartime(zp_##F##_t *a, size_t n, zp_##F##_t *scratch);          \
    void zp_##F##_pow(zp_##F##_t *r, const zp_##F##_t *a, const uint64_t *e, size_t elimbs); \
    bool zp_##F##_sqrt(zp_##F##_t *r, const zp_##F##_t *a);     /* false: not a square */   \
    bool zp_##F##_is_square(const zp_##F##_t *a);                                           \
    bool zp_##F##_is_zero(const zp_##F##_t *a);                                             \
    bool zp_##F##_is_one(const zp_##F##_t *a);                                              \
    bool zp_##F##_eq(const zp_##F##_t *a, const zp_##F##_t *b);                             \
    void zp_##F##_set_u64(zp_##F##_t *r, uint64_t v);           /* Montgomery form of v */ \
    void zp_##F##_to_mont(zp_##F##_t *r, const zp_##F##_t *a);  /* a*R mod p (a < p) */     \
    void zp_##F##_from_mont(zp_##F##_t *r, const zp_##F##_t *a);/* a/R mod p */             \
    /* bytes hold the STANDARD-form integer; result in Montgomery form.                     \
     * Returns 0, or ZP_EFORMAT if the value is >= p (non-canonical). len must be 8*N. */    \
    int zp_##F##_from_bytes_le(zp_##F##_t *r, const uint8_t *b);                            \
    int zp_##F##_from_bytes_be(zp_##F##_t *r, const uint8_t *b);                            \
    void zp_##F##_to_bytes_le(uint8_t *b, const zp_##F##_t *a); /* standard form out */     \
    void zp_##F##_to_bytes_be(uint8_t *b, const zp_##F##_t *a);                             \
    /* true iff the plain integer (not Montgomery) a is < p */                               \
    bool zp_##F##_is_canonical(const zp_##F##_t *a);                                        \
    /* decimal string (optionally "0x" hex) of a standard integer < p -> Montgomery.         \
     * Returns 0 or ZP_EFORMAT (bad character, empty, >= p). */                              \
    int zp_##F##_from_dec(zp_##F##_t *r, const char *s);                                    \
    /* writes the decimal form of a (Montgomery in) with NUL; returns length;                \
     * cap >= 120 is always enough */                                                        \
    size_t zp_##F##_to_dec(char *buf, size_t cap, const zp_##F##_t *a);                     \
    /* uniformly random element (Montgomery form) from bytes of the caller's choice:          \
     * rejection sampling over 8*N random bytes drawn from rnd(ctx, buf, len). */            \
    void zp_##F##_random(zp_##F##_t *r, int (*rnd)(void *ctx, void *buf, size_t len), void *ctx);

ZP_FIELD_API(fr_bn254, 4)
ZP_FIELD_API(fq_bn254, 4)
ZP_FIELD_API(fr_bls12_381, 4)
ZP_FIELD_API(fq_bls12_381, 6)

/* Roots of unity for the NTT, exactly snarkjs's: w[k] = 5^((r-1)/2^k) mod r (Montgomery),
 * k = 0..S (S = 28 BN254, 32 BLS12-381). zp_fr_C_root(k) returns w[k]. */
enum { ZP_FR_BN254_TWO_ADICITY = 28, ZP_FR_BLS12_381_TWO_ADICITY = 32 };
const zp_fr_bn254_t *zp_fr_bn254_root(unsigned k);
const zp_fr_bls12_381_t *zp_fr_bls12_381_root(unsigned k);

#define ZP_TOWER_API(C)                                                                      \
    typedef struct { zp_fq_##C##_t c0, c1; } zp_fq2_##C##_t;                                 \
    typedef struct { zp_fq2_##C##_t c0, c1, c2; } zp_fq6_##C##_t;                            \
    typedef struct { zp_fq6_##C##_t c0, c1; } zp_fq12_##C##_t;                               \
    void zp_fq2_##C##_add(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b); \
    void zp_fq2_##C##_sub(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b); \
    void zp_fq2_##C##_neg(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a);                       \
    void zp_fq2_##C##_dbl(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a);                       \
    void zp_fq2_##C##_mul(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b); \
    void zp_fq2_##C##_sqr(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a);                       \
    void zp_fq2_##C##_mul_fq(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq_##C##_t *b); \
    void zp_fq2_##C##_mul_xi(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a); /* times xi */     \
    void zp_fq2_##C##_conj(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a);                      \
    void zp_fq2_##C##_inv(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a);                       \
    bool zp_fq2_##C##_sqrt(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a);                      \
    bool zp_fq2_##C##_is_zero(const zp_fq2_##C##_t *a);                                      \
    bool zp_fq2_##C##_eq(const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b);                  \
    void zp_fq2_##C##_frobenius(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, unsigned power); \
    void zp_fq6_##C##_add(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a, const zp_fq6_##C##_t *b); \
    void zp_fq6_##C##_sub(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a, const zp_fq6_##C##_t *b); \
    void zp_fq6_##C##_neg(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a);                       \
    void zp_fq6_##C##_mul(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a, const zp_fq6_##C##_t *b); \
    void zp_fq6_##C##_sqr(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a);                       \
    void zp_fq6_##C##_mul_v(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a);  /* times v */      \
    void zp_fq6_##C##_inv(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a);                       \
    void zp_fq6_##C##_frobenius(zp_fq6_##C##_t *r, const zp_fq6_##C##_t *a, unsigned power); \
    void zp_fq12_##C##_one(zp_fq12_##C##_t *r);                                              \
    bool zp_fq12_##C##_is_one(const zp_fq12_##C##_t *a);                                     \
    bool zp_fq12_##C##_eq(const zp_fq12_##C##_t *a, const zp_fq12_##C##_t *b);               \
    void zp_fq12_##C##_mul(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a, const zp_fq12_##C##_t *b); \
    void zp_fq12_##C##_sqr(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a);                    \
    void zp_fq12_##C##_inv(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a);                    \
    void zp_fq12_##C##_conj(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a);                   \
    void zp_fq12_##C##_frobenius(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a, unsigned power); \
    void zp_fq12_##C##_pow(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a, const uint64_t *e, size_t elimbs);

ZP_TOWER_API(bn254)
ZP_TOWER_API(bls12_381)

#endif
