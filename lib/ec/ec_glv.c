/* ec_glv.c - the GLV endomorphism of G1 and G2 of BN254 and BLS12-381 and the scalar split
 * it is used with (ec.h: zp_glv_<C>_split, zp_<G>a_<C>_endo).
 *
 * phi(x, y) = (beta x, y), beta a cube root of unity in Fq (on G2 the same map on the twist,
 * beta in Fq acting on both Fq2 coordinates of x), acts on the group of order r as
 * multiplication by lambda, a cube root of unity mod r; lambda is the same for G1 and G2
 * (each group has its own beta). A scalar k is split as k = k1 + k2 lambda (mod r) with
 * |k1|, |k2| < 2^128: Babai rounding in a short basis of {(a, b): a + b lambda = 0 mod r},
 * in fixed point, in 64-bit limbs, products mod 2^256 (the halves are small, so their
 * two's complement is exact). All constants come from lib/ec/gen_glv.py, which derives them
 * and writes ec_glv_consts.h. Halves are below 2^127 on BN254 and 2^128 on BLS12-381 (the
 * bound gen_glv.py proves). Scalars below that bound and scalars whose negation mod r is
 * below it (witness values such as -1) are not split: k2 = 0.
 * Scalars are standard form (any 256-bit value; reduced mod r first); beta is Montgomery.
 * Tests: tests/test_ec.c (phi == lambda on random points, k1 + k2 lambda == k, bounds). */
#include <string.h>

#include "lib/ec/ec.h"
#include "lib/ec/ec_glv_consts.h"

typedef struct {
    zp_scalar_t g1, g2, m11, m12, m21, m22;
    unsigned bits;   /* the split's bound: halves < 2^bits (127 on BN254, 128 on BLS12-381) */
} glv_basis_t;

static const glv_basis_t glv_bn254 = {GLV_BN254_G1, GLV_BN254_G2, GLV_BN254_M11, GLV_BN254_M12,
                                      GLV_BN254_M21, GLV_BN254_M22, GLV_BN254_BITS};
static const glv_basis_t glv_bls12_381 = {GLV_BLS12_381_G1, GLV_BLS12_381_G2, GLV_BLS12_381_M11,
                                          GLV_BLS12_381_M12, GLV_BLS12_381_M21, GLV_BLS12_381_M22,
                                          GLV_BLS12_381_BITS};
const zp_scalar_t zp_glv_bn254_lambda = GLV_BN254_LAMBDA;
const zp_scalar_t zp_glv_bls12_381_lambda = GLV_BLS12_381_LAMBDA;
const unsigned zp_glv_bn254_bits = GLV_BN254_BITS;
const unsigned zp_glv_bls12_381_bits = GLV_BLS12_381_BITS;
static const zp_fq_bn254_t beta_g1_bn254 = GLV_BN254_BETA_G1;
static const zp_fq_bn254_t beta_g2_bn254 = GLV_BN254_BETA_G2;
static const zp_fq_bls12_381_t beta_g1_bls12_381 = GLV_BLS12_381_BETA_G1;
static const zp_fq_bls12_381_t beta_g2_bls12_381 = GLV_BLS12_381_BETA_G2;

typedef unsigned __int128 u128;

/* c = (k g + 2^255) >> 256 (g < 2^192, so c < 2^192) */
static void glv_round(uint64_t c[3], const zp_scalar_t *k, const zp_scalar_t *g)
{
    uint64_t t[7] = {0};
    for (int i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 3; j++) {
            u128 p = (u128)k->l[i] * g->l[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)p;
            carry = (uint64_t)(p >> 64);
        }
        t[i + 3] = carry;
    }
    u128 s = (u128)t[3] + ((uint64_t)1 << 63);    /* + 2^255 */
    uint64_t cy = (uint64_t)(s >> 64);
    for (int j = 0; j < 3; j++) {
        s = (u128)t[4 + j] + cy;
        c[j] = (uint64_t)s;
        cy = (uint64_t)(s >> 64);
    }
}

/* acc += c m (mod 2^256) */
static void glv_madd(zp_scalar_t *acc, const uint64_t c[3], const zp_scalar_t *m)
{
    uint64_t t[4];
    memcpy(t, acc->l, sizeof t);
    for (int i = 0; i < 3; i++) {
        uint64_t carry = 0;
        for (int j = 0; i + j < 4; j++) {
            u128 p = (u128)c[i] * m->l[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)p;
            carry = (uint64_t)(p >> 64);
        }
    }
    memcpy(acc->l, t, sizeof t);
}

static bool glv_ge(const zp_scalar_t *a, const zp_scalar_t *b)
{
    for (int i = 3; i >= 0; i--)
        if (a->l[i] != b->l[i]) return a->l[i] > b->l[i];
    return true;
}

/* r = a - b (mod 2^256) */
static void glv_sub(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b)
{
    uint64_t br = 0;
    for (int i = 0; i < 4; i++) {
        u128 d = (u128)a->l[i] - b->l[i] - br;
        r->l[i] = (uint64_t)d;
        br = (uint64_t)(d >> 64) & 1;
    }
}

/* |v| of a two's complement 256-bit value; true if it was negative */
static bool glv_abs(zp_scalar_t *v)
{
    if (!(v->l[3] >> 63)) return false;
    zp_scalar_t z = {{0, 0, 0, 0}};
    glv_sub(v, &z, v);
    return true;
}

/* k < 2^bits (bits 127 or 128) */
static bool glv_short(const zp_scalar_t *k, unsigned bits)
{
    return k->l[2] == 0 && k->l[3] == 0 && (bits >= 128 || !(k->l[1] >> (bits - 64)));
}

static void glv_split(zp_scalar_t *k1, zp_scalar_t *k2, unsigned *neg, const zp_scalar_t *kin,
                      const glv_basis_t *B, const zp_scalar_t *r)
{
    zp_scalar_t k = *kin;
    while (glv_ge(&k, r)) glv_sub(&k, &k, r);
    memset(k2, 0, sizeof *k2);
    *neg = 0;
    if (glv_short(&k, B->bits)) {                 /* short: k = k + 0 lambda */
        *k1 = k;
        return;
    }
    glv_sub(k1, r, &k);                           /* -k mod r short: k = -(r - k) */
    if (glv_short(k1, B->bits)) {
        *neg = 1;
        return;
    }
    uint64_t c1[3], c2[3];
    glv_round(c1, &k, &B->g1);
    glv_round(c2, &k, &B->g2);
    *k1 = k;
    glv_madd(k1, c1, &B->m11);
    glv_madd(k1, c2, &B->m12);
    glv_madd(k2, c1, &B->m21);
    glv_madd(k2, c2, &B->m22);
    *neg = (glv_abs(k1) ? 1u : 0u) | (glv_abs(k2) ? 2u : 0u);
}

void zp_glv_bn254_split(zp_scalar_t *k1, zp_scalar_t *k2, unsigned *neg, const zp_scalar_t *k)
{
    glv_split(k1, k2, neg, k, &glv_bn254, (const zp_scalar_t *)(const void *)&zp_fr_bn254_modulus);
}

void zp_glv_bls12_381_split(zp_scalar_t *k1, zp_scalar_t *k2, unsigned *neg, const zp_scalar_t *k)
{
    glv_split(k1, k2, neg, k, &glv_bls12_381,
              (const zp_scalar_t *)(const void *)&zp_fr_bls12_381_modulus);
}

/* phi on affine and Jacobian points (infinity maps to itself: beta 0 = 0, z stays 0) */
#define GLV_ENDO_G1(C)                                                                         \
    void zp_g1a_##C##_endo(zp_g1a_##C##_t *r, const zp_g1a_##C##_t *p)                         \
    {                                                                                          \
        zp_fq_##C##_mul(&r->x, &p->x, &beta_g1_##C);                                           \
        r->y = p->y;                                                                           \
    }                                                                                          \
    void zp_g1_##C##_endo(zp_g1_##C##_t *r, const zp_g1_##C##_t *p)                            \
    {                                                                                          \
        zp_fq_##C##_mul(&r->x, &p->x, &beta_g1_##C);                                           \
        r->y = p->y;                                                                           \
        r->z = p->z;                                                                           \
    }                                                                                          \
    const zp_fq_##C##_t *zp_g1_##C##_endo_beta(void) { return &beta_g1_##C; }
#define GLV_ENDO_G2(C)                                                                         \
    void zp_g2a_##C##_endo(zp_g2a_##C##_t *r, const zp_g2a_##C##_t *p)                         \
    {                                                                                          \
        zp_fq_##C##_mul(&r->x.c0, &p->x.c0, &beta_g2_##C);                                     \
        zp_fq_##C##_mul(&r->x.c1, &p->x.c1, &beta_g2_##C);                                     \
        r->y = p->y;                                                                           \
    }                                                                                          \
    void zp_g2_##C##_endo(zp_g2_##C##_t *r, const zp_g2_##C##_t *p)                            \
    {                                                                                          \
        zp_fq_##C##_mul(&r->x.c0, &p->x.c0, &beta_g2_##C);                                     \
        zp_fq_##C##_mul(&r->x.c1, &p->x.c1, &beta_g2_##C);                                     \
        r->y = p->y;                                                                           \
        r->z = p->z;                                                                           \
    }                                                                                          \
    const zp_fq_##C##_t *zp_g2_##C##_endo_beta(void) { return &beta_g2_##C; }
GLV_ENDO_G1(bn254)
GLV_ENDO_G2(bn254)
GLV_ENDO_G1(bls12_381)
GLV_ENDO_G2(bls12_381)
