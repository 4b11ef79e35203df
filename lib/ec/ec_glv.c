/* ec_glv.c - the GLV endomorphism of G1 and G2 of BN254 and BLS12-381 and the scalar split
 * it is used with (ec.h: zp_glv_<C>_split, zp_<G>a_<C>_endo).
 *
 * phi(x, y) = (beta x, y), beta a cube root of unity in Fq (on G2 the same map on the twist,
 * beta in Fq acting on both Fq2 coordinates of x), acts on the group of order r as
 * multiplication by lambda, a cube root of unity mod r; lambda is the same for G1 and G2
 * (each group has its own beta). A scalar k is split as k = k1 + k2 lambda (mod r) with
 * |k1|, |k2| < 2^127: Babai rounding in a short basis of {(a, b): a + b lambda = 0 mod r},
 * in fixed point, in 64-bit limbs, products mod 2^256 (the halves are small, so their
 * two's complement is exact). All constants come from lib/ec/gen_glv.py, which derives them
 * and writes ec_glv_consts.h. Halves are below 2^126 on BN254 and 2^127 on BLS12-381 (the
 * bound gen_glv.py proves). Scalars below that bound and scalars whose negation mod r is
 * below it (witness values such as -1) are not split: k2 = 0.
 * Scalars are standard form (any 256-bit value; reduced mod r first); beta is Montgomery.
 * The same lattice split in 4 dimensions serves the GLS endomorphism psi of G2 (eigenvalue mu,
 * k = k0 + k1 mu + k2 mu^2 + k3 mu^3 with |k_i| < 2^64 / 2^63; constants from
 * lib/ec/gen_gls.py, ec_gls_consts.h).
 * Tests: tests/test_ec.c (phi == lambda and psi == mu on random points, the parts recombine to
 * k, bounds). */
#include <string.h>

#include "lib/ec/ec.h"
#include "lib/ec/ec_glv_consts.h"
#include "lib/ec/ec_gls_consts.h"

/* A lattice split in dim (2 or 4) dimensions: k = sum_i (-1)^(neg bit i) k_i e^i mod r, e the
 * endomorphism's eigenvalue, |k_i| < 2^bits. Babai rounding in fixed point: |c_j| =
 * (k g_j + 2^319) >> 320 (g_j: 5 limbs), k_i = k [i = 0] + sum_j |c_j| m[j dim + i] (mod
 * 2^256, signed); the constants (gen_glv.py, gen_gls.py) fold the signs of c_j into m. */
typedef struct {
    unsigned dim, bits;
    uint64_t g[4][5];
    zp_scalar_t m[16];
} lat_basis_t;

static const lat_basis_t glv_bn254 = {2, GLV_BN254_BITS, {GLV_BN254_G1, GLV_BN254_G2},
                                      {GLV_BN254_M11, GLV_BN254_M21, GLV_BN254_M12, GLV_BN254_M22}};
static const lat_basis_t glv_bls12_381 = {2, GLV_BLS12_381_BITS, {GLV_BLS12_381_G1, GLV_BLS12_381_G2},
                                          {GLV_BLS12_381_M11, GLV_BLS12_381_M21, GLV_BLS12_381_M12,
                                           GLV_BLS12_381_M22}};
static const lat_basis_t gls_bn254 = {4, GLS_BN254_BITS, GLS_BN254_G, GLS_BN254_M};
static const lat_basis_t gls_bls12_381 = {4, GLS_BLS12_381_BITS, GLS_BLS12_381_G, GLS_BLS12_381_M};
const zp_scalar_t zp_glv_bn254_lambda = GLV_BN254_LAMBDA;
const zp_scalar_t zp_glv_bls12_381_lambda = GLV_BLS12_381_LAMBDA;
const unsigned zp_glv_bn254_bits = GLV_BN254_BITS;
const unsigned zp_glv_bls12_381_bits = GLV_BLS12_381_BITS;
const zp_scalar_t zp_gls_bn254_mu = GLS_BN254_MU;
const zp_scalar_t zp_gls_bls12_381_mu = GLS_BLS12_381_MU;
const unsigned zp_gls_bn254_bits = GLS_BN254_BITS;
const unsigned zp_gls_bls12_381_bits = GLS_BLS12_381_BITS;
static const zp_fq_bn254_t beta_g1_bn254 = GLV_BN254_BETA_G1;
static const zp_fq_bn254_t beta_g2_bn254 = GLV_BN254_BETA_G2;
static const zp_fq_bls12_381_t beta_g1_bls12_381 = GLV_BLS12_381_BETA_G1;
static const zp_fq_bls12_381_t beta_g2_bls12_381 = GLV_BLS12_381_BETA_G2;
static const zp_fq2_bn254_t psi_cx_bn254 = GLS_BN254_PSI_CX, psi_cy_bn254 = GLS_BN254_PSI_CY;
static const zp_fq2_bls12_381_t psi_cx_bls12_381 = GLS_BLS12_381_PSI_CX,
                                psi_cy_bls12_381 = GLS_BLS12_381_PSI_CY;
static const zp_fq_bn254_t psi2_a_bn254 = GLS_BN254_PSI2_A;
static const zp_fq_bls12_381_t psi2_a_bls12_381 = GLS_BLS12_381_PSI2_A;

typedef unsigned __int128 u128;

/* c = (k g + 2^319) >> 320 (c < 2^256: g < 2^320) for g of gl limbs, a constant
 * where inlined so the loops unroll (with gl found at run time the split pre-pass was 4.6% of
 * a G1 BN254 2^16 MSM's samples, 2.9% unrolled) */
static inline __attribute__((always_inline)) void glv_round_n(uint64_t c[4], const zp_scalar_t *k,
                                                             const uint64_t g[5], const int gl)
{
    uint64_t t[9] = {0};
    for (int i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < gl; j++) {
            u128 p = (u128)k->l[i] * g[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)p;
            carry = (uint64_t)(p >> 64);
        }
        t[i + gl] = carry;
    }
    u128 s = (u128)t[4] + ((uint64_t)1 << 63);    /* + 2^319 */
    uint64_t cy = (uint64_t)(s >> 64);
    for (int j = 0; j < 4; j++) {
        s = (u128)t[5 + j] + cy;
        c[j] = (uint64_t)s;
        cy = (uint64_t)(s >> 64);
    }
}

static void glv_round(uint64_t c[4], const zp_scalar_t *k, const uint64_t g[5])
{
    if (g[4])
        glv_round_n(c, k, g, 5);
    else                                          /* GLV: g < 2^256 */
        glv_round_n(c, k, g, 4);
}

/* acc += c m (mod 2^256) */
static void glv_madd(zp_scalar_t *acc, const uint64_t c[4], const zp_scalar_t *m)
{
    uint64_t t[4];
    memcpy(t, acc->l, sizeof t);
    for (int i = 0; i < 4; i++) {
        if (!c[i]) continue;                      /* GLV: c < 2^128 */
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

/* k < 2^bits (bits < 256) */
static bool glv_short(const zp_scalar_t *k, unsigned bits)
{
    for (unsigned i = (bits + 63) / 64; i < 4; i++)
        if (k->l[i]) return false;
    return bits % 64 == 0 || !(k->l[bits / 64] >> (bits % 64));
}

/* kp[0..dim): the parts; neg bit i: part i is negated */
static void lat_split(zp_scalar_t *kp, unsigned *neg, const zp_scalar_t *kin, const lat_basis_t *B,
                      const zp_scalar_t *r)
{
    zp_scalar_t k = *kin;
    while (glv_ge(&k, r)) glv_sub(&k, &k, r);
    memset(kp, 0, B->dim * sizeof *kp);
    *neg = 0;
    if (glv_short(&k, B->bits)) {                 /* short: k = k + 0 e + ... */
        kp[0] = k;
        return;
    }
    glv_sub(&kp[0], r, &k);                       /* -k mod r short: k = -(r - k) */
    if (glv_short(&kp[0], B->bits)) {
        *neg = 1;
        return;
    }
    kp[0] = k;
    for (unsigned j = 0; j < B->dim; j++) {
        uint64_t c[4];
        glv_round(c, &k, B->g[j]);
        for (unsigned i = 0; i < B->dim; i++) glv_madd(&kp[i], c, &B->m[j * B->dim + i]);
    }
    for (unsigned i = 0; i < B->dim; i++)
        if (glv_abs(&kp[i])) *neg |= 1u << i;
}

#define GLV_SPLIT(C)                                                                           \
    void zp_glv_##C##_split(zp_scalar_t *k1, zp_scalar_t *k2, unsigned *neg, const zp_scalar_t *k) \
    {                                                                                          \
        zp_scalar_t kp[2];                                                                     \
        lat_split(kp, neg, k, &glv_##C, (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus); \
        *k1 = kp[0];                                                                           \
        *k2 = kp[1];                                                                           \
    }                                                                                          \
    void zp_gls_##C##_split(zp_scalar_t kp[4], unsigned *neg, const zp_scalar_t *k)            \
    {                                                                                          \
        lat_split(kp, neg, k, &gls_##C, (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus); \
    }
GLV_SPLIT(bn254)
GLV_SPLIT(bls12_381)

/* psi(x, y) = (conj(x) cx, conj(y) cy) on affine and Jacobian points (Z -> conj(Z));
 * infinity maps to itself */
#define GLS_PSI(C)                                                                             \
    static void psi_xy_##C(zp_fq2_##C##_t *rx, zp_fq2_##C##_t *ry, const zp_fq2_##C##_t *x,    \
                           const zp_fq2_##C##_t *y)                                            \
    {                                                                                          \
        zp_fq2_##C##_t t;                                                                      \
        zp_fq2_##C##_conj(&t, x);                                                              \
        zp_fq2_##C##_mul(rx, &t, &psi_cx_##C);                                                 \
        zp_fq2_##C##_conj(&t, y);                                                              \
        zp_fq2_##C##_mul(ry, &t, &psi_cy_##C);                                                 \
    }                                                                                          \
    void zp_g2a_##C##_psi(zp_g2a_##C##_t *r, const zp_g2a_##C##_t *p)                          \
    {                                                                                          \
        psi_xy_##C(&r->x, &r->y, &p->x, &p->y);                                                \
    }                                                                                          \
    void zp_g2_##C##_psi(zp_g2_##C##_t *r, const zp_g2_##C##_t *p)                             \
    {                                                                                          \
        psi_xy_##C(&r->x, &r->y, &p->x, &p->y);                                                \
        zp_fq2_##C##_conj(&r->z, &p->z);                                                       \
    }                                                                                          \
    const zp_fq_##C##_t *zp_g2_##C##_psi2_a(void) { return &psi2_a_##C; }
GLS_PSI(bn254)
GLS_PSI(bls12_381)

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
