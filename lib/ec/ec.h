/* ec.h - G1 and G2 of BN254 and BLS12-381.
 *
 * Forms:
 *   affine  zp_<G>a_<C>_t {x, y}: coordinates in Montgomery form; byte-identical to the
 *           zkey/ptau encoding. The all-zero point (0,0) is the point at infinity (snarkjs
 *           convention; (0,0) is on neither curve).
 *   jacobian zp_<G>_<C>_t {x, y, z}: (X/Z^2, Y/Z^3); z == 0 is infinity.
 * Curves: y^2 = x^3 + b; BN254 b = 3 (G1), 3/(9+u) (G2); BLS12-381 b = 4 (G1), 4(1+u) (G2).
 * Groups G in {g1, g2}, curves C in {bn254, bls12_381}; each gets the API below, written once
 * as a template (ec_impl.h) and instantiated per group and curve.
 * Scalars for mul are zp_scalar_t in STANDARD form (any 256-bit value; not reduced first).
 * Tests: tests/test_ec.c */
#ifndef ZP_EC_H
#define ZP_EC_H
#include "../ff/ff.h"

#define ZP_GROUP_API(G, C, FQ)                                                                \
    typedef struct { zp_##FQ##_##C##_t x, y; } zp_##G##a_##C##_t;                             \
    typedef struct { zp_##FQ##_##C##_t x, y, z; } zp_##G##_##C##_t;                           \
    void zp_##G##_##C##_generator(zp_##G##a_##C##_t *r);                                      \
    void zp_##G##_##C##_set_inf(zp_##G##_##C##_t *r);                                         \
    bool zp_##G##_##C##_is_inf(const zp_##G##_##C##_t *p);                                    \
    bool zp_##G##a_##C##_is_inf(const zp_##G##a_##C##_t *p);                                  \
    void zp_##G##_##C##_from_affine(zp_##G##_##C##_t *r, const zp_##G##a_##C##_t *a);         \
    void zp_##G##_##C##_to_affine(zp_##G##a_##C##_t *r, const zp_##G##_##C##_t *p);           \
    /* n points to affine with one inversion; scratch: n field elements; r must not overlap p */ \
    void zp_##G##_##C##_batch_to_affine(zp_##G##a_##C##_t *r, const zp_##G##_##C##_t *p, size_t n, zp_##FQ##_##C##_t *scratch); \
    void zp_##G##_##C##_add(zp_##G##_##C##_t *r, const zp_##G##_##C##_t *a, const zp_##G##_##C##_t *b); \
    void zp_##G##_##C##_add_affine(zp_##G##_##C##_t *r, const zp_##G##_##C##_t *a, const zp_##G##a_##C##_t *b); \
    void zp_##G##_##C##_dbl(zp_##G##_##C##_t *r, const zp_##G##_##C##_t *a);                  \
    void zp_##G##_##C##_neg(zp_##G##_##C##_t *r, const zp_##G##_##C##_t *a);                  \
    void zp_##G##a_##C##_neg(zp_##G##a_##C##_t *r, const zp_##G##a_##C##_t *a);               \
    void zp_##G##_##C##_mul(zp_##G##_##C##_t *r, const zp_##G##_##C##_t *p, const zp_scalar_t *k); \
    bool zp_##G##_##C##_eq(const zp_##G##_##C##_t *a, const zp_##G##_##C##_t *b);             \
    bool zp_##G##a_##C##_on_curve(const zp_##G##a_##C##_t *p);     /* infinity: true */      \
    bool zp_##G##a_##C##_in_subgroup(const zp_##G##a_##C##_t *p);  /* on curve and r*P = 0 */ \
    bool zp_##G##_##C##_on_curve(const zp_##G##_##C##_t *p);

ZP_GROUP_API(g1, bn254, fq)
ZP_GROUP_API(g2, bn254, fq2)
ZP_GROUP_API(g1, bls12_381, fq)
ZP_GROUP_API(g2, bls12_381, fq2)

/* GLV (ec_glv.c; constants derived by lib/ec/gen_glv.py). phi(x, y) = (beta x, y), beta a cube
 * root of unity in Fq (on G2 it multiplies both Fq2 coordinates of x), is multiplication by
 * zp_glv_<C>_lambda (standard form, the same for G1 and G2) on the group of order r.
 * zp_<G>_<C>_endo_beta: that group's beta (Montgomery form).
 * zp_glv_<C>_split: k (any 256-bit value) = (-1)^(neg&1) k1 + (-1)^(neg>>1) k2 lambda mod r,
 * k1, k2 < 2^zp_glv_<C>_bits (126 on BN254, 127 on BLS12-381; ZP_GLV_BITS = 128 bounds both);
 * k2 = 0 when k mod r or -k mod r is below that bound (k1 is that value). */
#define ZP_GLV_BITS 128
#define ZP_GLV_API(C, FQ)                                                                     \
    extern const zp_scalar_t zp_glv_##C##_lambda;                                             \
    extern const unsigned zp_glv_##C##_bits;                                                  \
    void zp_glv_##C##_split(zp_scalar_t *k1, zp_scalar_t *k2, unsigned *neg, const zp_scalar_t *k); \
    void zp_g1a_##C##_endo(zp_g1a_##C##_t *r, const zp_g1a_##C##_t *p);                      \
    void zp_g1_##C##_endo(zp_g1_##C##_t *r, const zp_g1_##C##_t *p);                         \
    void zp_g2a_##C##_endo(zp_g2a_##C##_t *r, const zp_g2a_##C##_t *p);                      \
    void zp_g2_##C##_endo(zp_g2_##C##_t *r, const zp_g2_##C##_t *p);                         \
    const zp_##FQ##_##C##_t *zp_g1_##C##_endo_beta(void);                                     \
    const zp_##FQ##_##C##_t *zp_g2_##C##_endo_beta(void);
ZP_GLV_API(bn254, fq)
ZP_GLV_API(bls12_381, fq)

/* GLS on G2 (ec_glv.c; constants derived by lib/ec/gen_gls.py). psi = untwist o Frobenius o
 * twist, psi(x, y) = (conj(x) cx, conj(y) cy), is multiplication by zp_gls_<C>_mu = p mod r
 * on G2 (BLS12-381: the seed x mod r; BN254: 6 u^2); psi^2(x, y) = (a x, -y) with a =
 * *zp_g2_<C>_psi2_a() (a cube root of unity in Fq, Montgomery form).
 * zp_gls_<C>_split: k (any 256-bit value) = sum_i (-1)^(neg bit i) kp[i] mu^i mod r, i < 4,
 * kp[i] < 2^zp_gls_<C>_bits (64 on BN254, 63 on BLS12-381); kp[1..3] = 0 when k mod r or
 * -k mod r is below that bound (kp[0] is that value). (added) */
#define ZP_GLS_BITS_MAX 64
#define ZP_GLS_API(C)                                                                         \
    extern const zp_scalar_t zp_gls_##C##_mu;                                                 \
    extern const unsigned zp_gls_##C##_bits;                                                  \
    void zp_gls_##C##_split(zp_scalar_t kp[4], unsigned *neg, const zp_scalar_t *k);          \
    void zp_g2a_##C##_psi(zp_g2a_##C##_t *r, const zp_g2a_##C##_t *p);                       \
    void zp_g2_##C##_psi(zp_g2_##C##_t *r, const zp_g2_##C##_t *p);                          \
    const zp_fq_##C##_t *zp_g2_##C##_psi2_a(void);
ZP_GLS_API(bn254)
ZP_GLS_API(bls12_381)

/* Compressed encodings.
 * BLS12-381: zcash/bellperson (Filecoin): big-endian x, 48 bytes G1, 96 bytes G2 (x.c1 then
 *   x.c0); byte 0 bits: 0x80 compressed, 0x40 infinity, 0x20 y is the lexicographically larger.
 * BN254: gnark's: big-endian x, 32 bytes G1, 64 bytes G2 (x.c1 then x.c0); top two bits of byte 0:
 *   0b10 y smallest, 0b11 y largest, 0b01 infinity.
 * decompress checks canonical x, on-curve and subgroup; errors are ZP_EFORMAT with detail. */
enum {
    ZP_G1_BN254_COMPRESSED = 32, ZP_G2_BN254_COMPRESSED = 64,
    ZP_G1_BLS12_381_COMPRESSED = 48, ZP_G2_BLS12_381_COMPRESSED = 96,
};
void zp_g1a_bn254_compress(uint8_t *out, const zp_g1a_bn254_t *p);
int zp_g1a_bn254_decompress(zp_g1a_bn254_t *r, const uint8_t *in);
void zp_g2a_bn254_compress(uint8_t *out, const zp_g2a_bn254_t *p);
int zp_g2a_bn254_decompress(zp_g2a_bn254_t *r, const uint8_t *in);
void zp_g1a_bls12_381_compress(uint8_t *out, const zp_g1a_bls12_381_t *p);
int zp_g1a_bls12_381_decompress(zp_g1a_bls12_381_t *r, const uint8_t *in);
void zp_g2a_bls12_381_compress(uint8_t *out, const zp_g2a_bls12_381_t *p);
int zp_g2a_bls12_381_decompress(zp_g2a_bls12_381_t *r, const uint8_t *in);
#endif
