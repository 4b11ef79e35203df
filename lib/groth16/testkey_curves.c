/* testkey_curves.c - the per-curve operation tables of the test key generator (testkey_int.h):
 * thin wrappers over ff/ec/pairing, written once as a macro and instantiated for BN254 and
 * BLS12-381. Nothing here allocates or fails. Tests: tests/test_testkey.c */
#include <string.h>

#include "testkey_int.h"
#include "../ec/ec.h"
#include "../pairing/pairing.h"

/* bits [pos, pos + w) of a 256-bit scalar (pos < 256, w <= 16) */
static inline unsigned tk_bits_at(const zp_scalar_t *k, unsigned pos, unsigned w)
{
    unsigned limb = pos / 64, sh = pos % 64;
    uint64_t v = k->l[limb] >> sh;
    if (sh + w > 64 && limb + 1 < 4) v |= k->l[limb + 1] << (64 - sh);
    return (unsigned)(v & ((1ull << w) - 1));
}

#define TK_GROUP(G, C, FE)                                                                      \
    static void tk_##G##_##C##_set_inf(void *r) { zp_##G##_##C##_set_inf(r); }                 \
    static void tk_##G##_##C##_from_affine(void *r, const void *a) { zp_##G##_##C##_from_affine(r, a); } \
    static void tk_##G##_##C##_add_affine(void *r, const void *a, const void *b)                \
    {                                                                                           \
        zp_##G##_##C##_add_affine(r, a, b);                                                     \
    }                                                                                           \
    static void tk_##G##_##C##_dbl(void *r, const void *a) { zp_##G##_##C##_dbl(r, a); }       \
    static void tk_##G##_##C##_batch_to_affine(void *r, const void *p, size_t n, void *s)       \
    {                                                                                           \
        zp_##G##_##C##_batch_to_affine(r, p, n, s);                                             \
    }                                                                                           \
    static void tk_##G##_##C##_mul_gen(void *ra, const zp_scalar_t *k)                          \
    {                                                                                           \
        zp_##G##a_##C##_t g;                                                                    \
        zp_##G##_##C##_t j;                                                                     \
        zp_##G##_##C##_generator(&g);                                                           \
        zp_##G##_##C##_from_affine(&j, &g);                                                     \
        zp_##G##_##C##_mul(&j, &j, k);                                                          \
        zp_##G##_##C##_to_affine(ra, &j);                                                       \
    }                                                                                           \
    static size_t tk_##G##_##C##_fb_scratch(size_t m)                                           \
    {                                                                                           \
        return m * (2 * sizeof(zp_##FE##_##C##_t) + sizeof(size_t) + 1) + 64;                  \
    }                                                                                           \
    static void tk_##G##_##C##_fb_chunk(void *outv, const zp_scalar_t *k, size_t m, const void *tabv, \
                                        unsigned w, unsigned nwin, void *scr)                   \
    {                                                                                           \
        typedef zp_##G##a_##C##_t pa_t;                                                         \
        typedef zp_##FE##_##C##_t fe_t;                                                         \
        pa_t *acc = outv;                                                                       \
        const pa_t *tab = tabv;                                                                 \
        fe_t *den = scr, *pre = den + m;                                                        \
        size_t *idx = (size_t *)(void *)(pre + m);                                              \
        uint8_t *inf = (uint8_t *)(idx + m);                                                    \
        memset(inf, 1, m);                                                                      \
        for (unsigned win = 0; win < nwin; win++) {                                             \
            const pa_t *row = tab + ((size_t)win << w);                                         \
            size_t cnt = 0;                                                                     \
            for (size_t i = 0; i < m; i++) {                                                    \
                unsigned d = tk_bits_at(&k[i], win * w, w);                                     \
                if (!d) continue;                                                               \
                const pa_t *p = &row[d];                                                        \
                if (inf[i]) {                                                                   \
                    acc[i] = *p;                                                                \
                    inf[i] = 0;                                                                 \
                    continue;                                                                   \
                }                                                                               \
                zp_##FE##_##C##_sub(&den[cnt], &p->x, &acc[i].x);                               \
                if (zp_##FE##_##C##_is_zero(&den[cnt])) {   /* P + P or P - P: Jacobian */      \
                    zp_##G##_##C##_t j;                                                         \
                    zp_##G##_##C##_from_affine(&j, &acc[i]);                                    \
                    zp_##G##_##C##_add_affine(&j, &j, p);                                       \
                    zp_##G##_##C##_to_affine(&acc[i], &j);                                      \
                    inf[i] = zp_##G##_##C##_is_inf(&j);                                         \
                    continue;                                                                   \
                }                                                                               \
                if (cnt) zp_##FE##_##C##_mul(&pre[cnt], &pre[cnt - 1], &den[cnt]);              \
                else pre[0] = den[0];                                                           \
                idx[cnt++] = i;                                                                 \
            }                                                                                   \
            if (!cnt) continue;                                                                 \
            fe_t iv, di, lam, t;                                                                \
            zp_##FE##_##C##_inv(&iv, &pre[cnt - 1]);                                            \
            for (size_t c = cnt; c-- > 0;) {                                                    \
                size_t i = idx[c];                                                              \
                if (c) {                                                                        \
                    zp_##FE##_##C##_mul(&di, &iv, &pre[c - 1]);                                 \
                    zp_##FE##_##C##_mul(&iv, &iv, &den[c]);                                     \
                } else {                                                                        \
                    di = iv;                                                                    \
                }                                                                               \
                const pa_t *p = &row[tk_bits_at(&k[i], win * w, w)];                            \
                zp_##FE##_##C##_sub(&lam, &p->y, &acc[i].y);                                    \
                zp_##FE##_##C##_mul(&lam, &lam, &di);                                           \
                zp_##FE##_##C##_sqr(&t, &lam);                                                  \
                zp_##FE##_##C##_sub(&t, &t, &acc[i].x);                                         \
                zp_##FE##_##C##_sub(&t, &t, &p->x);             /* x3 = lam^2 - x1 - x2 */      \
                zp_##FE##_##C##_sub(&di, &acc[i].x, &t);                                        \
                zp_##FE##_##C##_mul(&di, &di, &lam);                                            \
                zp_##FE##_##C##_sub(&acc[i].y, &di, &acc[i].y); /* y3 = lam (x1 - x3) - y1 */   \
                acc[i].x = t;                                                                   \
            }                                                                                   \
        }                                                                                       \
        for (size_t i = 0; i < m; i++)                                                          \
            if (inf[i]) memset(&acc[i], 0, sizeof acc[i]);                                      \
    }                                                                                           \
    static const tk_grp_t tk_##G##_##C = {                                                      \
        .pa_size = sizeof(zp_##G##a_##C##_t), .pj_size = sizeof(zp_##G##_##C##_t),              \
        .fe_size = sizeof(zp_##FE##_##C##_t), .set_inf = tk_##G##_##C##_set_inf,                \
        .from_affine = tk_##G##_##C##_from_affine, .add_affine = tk_##G##_##C##_add_affine,     \
        .dbl = tk_##G##_##C##_dbl, .batch_to_affine = tk_##G##_##C##_batch_to_affine,           \
        .mul_gen = tk_##G##_##C##_mul_gen, .fb_chunk = tk_##G##_##C##_fb_chunk,                 \
        .fb_scratch = tk_##G##_##C##_fb_scratch,                                                      \
    };

#define TK_FR(C)                                                                                \
    static void tk_fr_##C##_add(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b)     \
    {                                                                                           \
        zp_fr_##C##_add((void *)r, (const void *)a, (const void *)b);                           \
    }                                                                                           \
    static void tk_fr_##C##_sub(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b)     \
    {                                                                                           \
        zp_fr_##C##_sub((void *)r, (const void *)a, (const void *)b);                           \
    }                                                                                           \
    static void tk_fr_##C##_mul(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b)     \
    {                                                                                           \
        zp_fr_##C##_mul((void *)r, (const void *)a, (const void *)b);                           \
    }                                                                                           \
    static void tk_fr_##C##_inv(zp_scalar_t *r, const zp_scalar_t *a) { zp_fr_##C##_inv((void *)r, (const void *)a); } \
    static void tk_fr_##C##_batch_inv(zp_scalar_t *a, size_t n, zp_scalar_t *s)                 \
    {                                                                                           \
        zp_fr_##C##_batch_inv((void *)a, n, (void *)s);                                         \
    }                                                                                           \
    static void tk_fr_##C##_set_u64(zp_scalar_t *r, uint64_t v) { zp_fr_##C##_set_u64((void *)r, v); } \
    static void tk_fr_##C##_to_mont(zp_scalar_t *r, const zp_scalar_t *a)                       \
    {                                                                                           \
        zp_fr_##C##_to_mont((void *)r, (const void *)a);                                        \
    }                                                                                           \
    static void tk_fr_##C##_from_mont(zp_scalar_t *r, const zp_scalar_t *a)                     \
    {                                                                                           \
        zp_fr_##C##_from_mont((void *)r, (const void *)a);                                      \
    }                                                                                           \
    static bool tk_fr_##C##_is_zero(const zp_scalar_t *a) { return zp_fr_##C##_is_zero((const void *)a); } \
    static bool tk_fr_##C##_is_canonical(const zp_scalar_t *a) { return zp_fr_##C##_is_canonical((const void *)a); } \
    static void tk_fr_##C##_to_dec(char *b, size_t cap, const zp_scalar_t *a) { zp_fr_##C##_to_dec(b, cap, (const void *)a); } \
    static const zp_scalar_t *tk_fr_##C##_root(unsigned k) { return (const void *)zp_fr_##C##_root(k); }

/* coordinates: Montgomery in; the point at infinity is (0, 1, 0) as snarkjs writes it */
#define TK_DEC(C)                                                                               \
    static void tk_##C##_g1_dec(char (*xyz)[128], const void *pa)                               \
    {                                                                                           \
        const zp_g1a_##C##_t *p = pa;                                                           \
        if (zp_g1a_##C##_is_inf(p)) {                                                           \
            strcpy(xyz[0], "0"), strcpy(xyz[1], "1"), strcpy(xyz[2], "0");                      \
            return;                                                                             \
        }                                                                                       \
        zp_fq_##C##_to_dec(xyz[0], 128, &p->x);                                                 \
        zp_fq_##C##_to_dec(xyz[1], 128, &p->y);                                                 \
        strcpy(xyz[2], "1");                                                                    \
    }                                                                                           \
    static void tk_##C##_g2_dec(char (*xyz)[2][128], const void *pa)                            \
    {                                                                                           \
        const zp_g2a_##C##_t *p = pa;                                                           \
        if (zp_g2a_##C##_is_inf(p)) {                                                           \
            strcpy(xyz[0][0], "0"), strcpy(xyz[0][1], "0"), strcpy(xyz[1][0], "1");             \
            strcpy(xyz[1][1], "0"), strcpy(xyz[2][0], "0"), strcpy(xyz[2][1], "0");             \
            return;                                                                             \
        }                                                                                       \
        zp_fq_##C##_to_dec(xyz[0][0], 128, &p->x.c0);                                           \
        zp_fq_##C##_to_dec(xyz[0][1], 128, &p->x.c1);                                           \
        zp_fq_##C##_to_dec(xyz[1][0], 128, &p->y.c0);                                           \
        zp_fq_##C##_to_dec(xyz[1][1], 128, &p->y.c1);                                           \
        strcpy(xyz[2][0], "1"), strcpy(xyz[2][1], "0");                                         \
    }                                                                                           \
    static void tk_##C##_pairing_dec(char (*v)[128], const void *g1a, const void *g2a)          \
    {                                                                                           \
        zp_fq12_##C##_t f;                                                                      \
        zp_pairing_##C(&f, g1a, g2a);                                                           \
        const zp_fq_##C##_t *e = (const zp_fq_##C##_t *)(const void *)&f;                       \
        for (int i = 0; i < 12; i++) zp_fq_##C##_to_dec(v[i], 128, &e[i]);                      \
    }

#define TK_CURVE(C, NAME, N8Q, ID, ADIC)                                                        \
    TK_GROUP(g1, C, fq)                                                                         \
    TK_GROUP(g2, C, fq2)                                                                        \
    TK_FR(C)                                                                                    \
    TK_DEC(C)                                                                                   \
    const tk_curve_t tk_curve_##C = {                                                           \
        .id = ID, .name = NAME, .two_adicity = ADIC, .n8q = N8Q,                                \
        .q = &zp_fq_##C##_modulus, .r = &zp_fr_##C##_modulus,                                   \
        .fr = {tk_fr_##C##_add, tk_fr_##C##_sub, tk_fr_##C##_mul, tk_fr_##C##_inv,             \
               tk_fr_##C##_batch_inv, tk_fr_##C##_set_u64, tk_fr_##C##_to_mont,                 \
               tk_fr_##C##_from_mont, tk_fr_##C##_is_zero, tk_fr_##C##_is_canonical,            \
               tk_fr_##C##_to_dec, tk_fr_##C##_root, (const zp_scalar_t *)(const void *)&zp_fr_##C##_r2}, \
        .g1 = &tk_g1_##C, .g2 = &tk_g2_##C, .g1_dec = tk_##C##_g1_dec, .g2_dec = tk_##C##_g2_dec, \
        .pairing_dec = tk_##C##_pairing_dec,                                                    \
    };

TK_CURVE(bn254, "bn128", 32, ZP_CURVE_BN254, ZP_FR_BN254_TWO_ADICITY)
TK_CURVE(bls12_381, "bls12381", 48, ZP_CURVE_BLS12_381, ZP_FR_BLS12_381_TWO_ADICITY)
