/* test_ec.c - unit tests of lib/ec: group law, scalar multiplication, subgroup checks,
 * batch conversion and the compressed encodings, for G1/G2 of BN254 and BLS12-381.
 * The generic checks are one macro instantiated per group; known answers follow.
 * Random values come from a fixed-seed generator so failures reproduce. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ec/ec.h"
#include "lib/util/util.h"

#define TEST_SEED 0x9e3779b97f4a7c15ULL
#include "tests/test_common.h"

/* random scalar < 2^bits */
static void rnd_scalar(zp_scalar_t *k, unsigned bits)
{
    for (int i = 0; i < 4; i++) k->l[i] = rnd64();
    for (unsigned i = 0; i < 4; i++) {
        if (bits >= 64 * (i + 1)) continue;
        k->l[i] = bits <= 64 * i ? 0 : k->l[i] & ((1ULL << (bits - 64 * i)) - 1);
    }
}

/* 256-bit a + b, a - 1 (no wrap in the tests that use them) */
static void sc_add(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (unsigned __int128)a->l[i] + b->l[i];
        r->l[i] = (uint64_t)c;
        c >>= 64;
    }
}
static void sc_sub1(zp_scalar_t *r, const zp_scalar_t *a)
{
    *r = *a;
    for (int i = 0; i < 4 && r->l[i]-- == 0; i++) {
    }
}
static void sc_set(zp_scalar_t *r, uint64_t v)
{
    memset(r, 0, sizeof *r);
    r->l[0] = v;
}

/* The generic checks for one group. FQ: the coordinate field; FR: the scalar field. */
#define EC_GROUP_TESTS(G, C, FQ, FR, NB)                                                       \
    static void test_##G##_##C(void)                                                           \
    {                                                                                          \
        typedef zp_##G##_##C##_t P;                                                            \
        typedef zp_##G##a_##C##_t PA;                                                          \
        PA ga, ta;                                                                             \
        P g, t, u, v, w, inf;                                                                  \
        zp_scalar_t k, k2, k3;                                                                 \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        zp_##G##_##C##_generator(&ga);                                                         \
        CHECK(zp_##G##a_##C##_on_curve(&ga));                                                  \
        CHECK(zp_##G##a_##C##_in_subgroup(&ga));                                               \
        CHECK(!zp_##G##a_##C##_is_inf(&ga));                                                   \
        zp_##G##_##C##_from_affine(&g, &ga);                                                   \
        CHECK(zp_##G##_##C##_on_curve(&g));                                                    \
        zp_##G##_##C##_set_inf(&inf);                                                          \
        CHECK(zp_##G##_##C##_is_inf(&inf) && zp_##G##_##C##_on_curve(&inf));                   \
        memset(&ta, 0, sizeof ta);                                                             \
        CHECK(zp_##G##a_##C##_is_inf(&ta) && zp_##G##a_##C##_on_curve(&ta));                   \
        CHECK(zp_##G##a_##C##_in_subgroup(&ta));                                               \
        /* r G = inf, (r-1) G = -G, (r+1) G = G, 0 G = inf, 1 G = G */                         \
        zp_##G##_##C##_mul(&t, &g, r);                                                         \
        CHECK(zp_##G##_##C##_is_inf(&t));                                                      \
        sc_sub1(&k, r);                                                                        \
        zp_##G##_##C##_mul(&t, &g, &k);                                                        \
        zp_##G##_##C##_neg(&u, &g);                                                            \
        CHECK(zp_##G##_##C##_eq(&t, &u));                                                      \
        sc_set(&k2, 2);                                                                        \
        sc_add(&k, r, &k2);                                                                    \
        sc_sub1(&k, &k);                                                                       \
        zp_##G##_##C##_mul(&t, &g, &k);                                                        \
        CHECK(zp_##G##_##C##_eq(&t, &g));                                                      \
        sc_set(&k, 0);                                                                         \
        zp_##G##_##C##_mul(&t, &g, &k);                                                        \
        CHECK(zp_##G##_##C##_is_inf(&t));                                                      \
        sc_set(&k, 1);                                                                         \
        zp_##G##_##C##_mul(&t, &g, &k);                                                        \
        CHECK(zp_##G##_##C##_eq(&t, &g));                                                      \
        /* 2G = G + G = dbl G = 2*G; 3G = 2G + G (affine) */                                   \
        zp_##G##_##C##_add(&t, &g, &g);                                                        \
        zp_##G##_##C##_dbl(&u, &g);                                                            \
        CHECK(zp_##G##_##C##_eq(&t, &u));                                                      \
        zp_##G##_##C##_mul(&v, &g, &k2);                                                       \
        CHECK(zp_##G##_##C##_eq(&t, &v));                                                      \
        CHECK(!zp_##G##_##C##_eq(&t, &g));                                                     \
        zp_##G##_##C##_add_affine(&w, &t, &ga);                                                \
        sc_set(&k3, 3);                                                                        \
        zp_##G##_##C##_mul(&v, &g, &k3);                                                       \
        CHECK(zp_##G##_##C##_eq(&w, &v) && zp_##G##_##C##_on_curve(&w));                       \
        /* P + (-P) = inf in both additions; inf neutral */                                    \
        zp_##G##_##C##_neg(&u, &w);                                                            \
        zp_##G##_##C##_add(&t, &w, &u);                                                        \
        CHECK(zp_##G##_##C##_is_inf(&t));                                                      \
        zp_##G##a_##C##_neg(&ta, &ga);                                                         \
        zp_##G##_##C##_add_affine(&t, &g, &ta);                                                \
        CHECK(zp_##G##_##C##_is_inf(&t));                                                      \
        zp_##G##_##C##_add_affine(&t, &g, &ga);                                                \
        zp_##G##_##C##_dbl(&u, &g);                                                            \
        CHECK(zp_##G##_##C##_eq(&t, &u));                                                      \
        zp_##G##_##C##_add(&t, &w, &inf);                                                      \
        CHECK(zp_##G##_##C##_eq(&t, &w));                                                      \
        zp_##G##_##C##_add(&t, &inf, &w);                                                      \
        CHECK(zp_##G##_##C##_eq(&t, &w));                                                      \
        zp_##G##_##C##_add_affine(&t, &inf, &ga);                                              \
        CHECK(zp_##G##_##C##_eq(&t, &g));                                                      \
        memset(&ta, 0, sizeof ta);                                                             \
        zp_##G##_##C##_add_affine(&t, &w, &ta);                                                \
        CHECK(zp_##G##_##C##_eq(&t, &w));                                                      \
        zp_##G##_##C##_dbl(&t, &inf);                                                          \
        CHECK(zp_##G##_##C##_is_inf(&t));                                                      \
        zp_##G##_##C##_to_affine(&ta, &inf);                                                   \
        CHECK(zp_##G##a_##C##_is_inf(&ta));                                                    \
        /* random law properties */                                                            \
        for (int it = 0; it < 8; it++) {                                                       \
            P a, b, c, s1, s2;                                                                 \
            PA aa, ba;                                                                         \
            rnd_scalar(&k, 255);                                                               \
            rnd_scalar(&k2, 255);                                                              \
            rnd_scalar(&k3, 256);                                                              \
            zp_##G##_##C##_mul(&a, &g, &k);                                                    \
            zp_##G##_##C##_mul(&b, &g, &k2);                                                   \
            zp_##G##_##C##_mul(&c, &g, &k3);                                                   \
            CHECK(zp_##G##_##C##_on_curve(&a) && zp_##G##_##C##_on_curve(&c));                 \
            /* (k + k2) G = kG + k2G */                                                        \
            sc_add(&k3, &k, &k2);                                                              \
            zp_##G##_##C##_mul(&s1, &g, &k3);                                                  \
            zp_##G##_##C##_add(&s2, &a, &b);                                                   \
            CHECK(zp_##G##_##C##_eq(&s1, &s2));                                                \
            /* commutativity, associativity, mixed = full */                                   \
            zp_##G##_##C##_add(&s1, &b, &a);                                                   \
            CHECK(zp_##G##_##C##_eq(&s1, &s2));                                                \
            zp_##G##_##C##_add(&s1, &s2, &c);                                                  \
            zp_##G##_##C##_add(&t, &b, &c);                                                    \
            zp_##G##_##C##_add(&s2, &a, &t);                                                   \
            CHECK(zp_##G##_##C##_eq(&s1, &s2));                                                \
            zp_##G##_##C##_to_affine(&ba, &b);                                                 \
            zp_##G##_##C##_add_affine(&s1, &a, &ba);                                           \
            zp_##G##_##C##_add(&s2, &a, &b);                                                   \
            CHECK(zp_##G##_##C##_eq(&s1, &s2));                                                \
            zp_##G##_##C##_from_affine(&t, &ba);                                               \
            CHECK(zp_##G##_##C##_eq(&t, &b));                                                  \
            /* a + a via add equals dbl; a - a = inf on non-normalised z */                    \
            zp_##G##_##C##_add(&s1, &a, &a);                                                   \
            zp_##G##_##C##_dbl(&s2, &a);                                                       \
            CHECK(zp_##G##_##C##_eq(&s1, &s2));                                                \
            zp_##G##_##C##_to_affine(&aa, &a);                                                 \
            zp_##G##_##C##_add_affine(&s1, &a, &aa);                                           \
            CHECK(zp_##G##_##C##_eq(&s1, &s2));                                                \
            zp_##G##a_##C##_neg(&aa, &aa);                                                     \
            zp_##G##_##C##_add_affine(&s1, &a, &aa);                                           \
            CHECK(zp_##G##_##C##_is_inf(&s1));                                                 \
            /* y (x G) = (x y mod r) G */                                                     \
            {                                                                                  \
                zp_##FR##_t x, y, z;                                                           \
                zp_##FR##_random(&x, rnd_cb, NULL);                                            \
                zp_##FR##_random(&y, rnd_cb, NULL);                                            \
                zp_##FR##_mul(&z, &x, &y);                                                     \
                zp_##FR##_from_mont(&x, &x);                                                   \
                zp_##FR##_from_mont(&y, &y);                                                   \
                zp_##FR##_from_mont(&z, &z);                                                   \
                memcpy(&k, &x, sizeof k);                                                      \
                memcpy(&k2, &y, sizeof k2);                                                    \
                memcpy(&k3, &z, sizeof k3);                                                    \
                zp_##G##_##C##_mul(&s1, &g, &k);                                               \
                zp_##G##_##C##_mul(&s1, &s1, &k2);                                             \
                zp_##G##_##C##_mul(&s2, &g, &k3);                                              \
                CHECK(zp_##G##_##C##_eq(&s1, &s2));                                            \
                CHECK(!zp_##G##_##C##_is_inf(&s1));                                            \
            }                                                                                  \
        }                                                                                      \
        /* batch_to_affine with infinities mixed in */                                         \
        {                                                                                      \
            enum { BN = 9 };                                                                   \
            P in[BN];                                                                          \
            PA out[BN], one;                                                                   \
            zp_##FQ##_t scr[BN];                                                               \
            for (int i = 0; i < BN; i++) {                                                     \
                rnd_scalar(&k, 200);                                                           \
                if (i % 4 == 1) sc_set(&k, 0);                                                 \
                zp_##G##_##C##_mul(&in[i], &g, &k);                                            \
            }                                                                                  \
            zp_##G##_##C##_batch_to_affine(out, in, BN, scr);                                  \
            for (int i = 0; i < BN; i++) {                                                     \
                zp_##G##_##C##_to_affine(&one, &in[i]);                                        \
                CHECK(!memcmp(&one, &out[i], sizeof one));                                     \
                CHECK(zp_##G##a_##C##_in_subgroup(&out[i]));                                   \
                CHECK(zp_##G##a_##C##_is_inf(&out[i]) == (i % 4 == 1));                        \
            }                                                                                  \
            zp_##G##_##C##_batch_to_affine(out, in, 0, scr);                                   \
        }                                                                                      \
        /* compression round trips: random points, their negatives, infinity */                \
        for (int it = 0; it < 6; it++) {                                                       \
            uint8_t buf[NB];                                                                   \
            PA back;                                                                           \
            rnd_scalar(&k, 250);                                                               \
            if (it == 0) sc_set(&k, 0);                                                        \
            zp_##G##_##C##_mul(&t, &g, &k);                                                    \
            zp_##G##_##C##_to_affine(&ta, &t);                                                 \
            if (it & 1) zp_##G##a_##C##_neg(&ta, &ta);                                         \
            zp_##G##a_##C##_compress(buf, &ta);                                                \
            memset(&back, 0x5a, sizeof back);                                                  \
            CHECK(zp_##G##a_##C##_decompress(&back, buf) == 0);                                \
            CHECK(!memcmp(&back, &ta, sizeof ta));                                             \
            if (it == 0) continue;                                                             \
            /* flipping the sign flag gives -P */                                              \
            buf[0] ^= (uint8_t)(C##_LARGE ^ C##_SMALL);                                        \
            CHECK(zp_##G##a_##C##_decompress(&back, buf) == 0);                                \
            zp_##G##a_##C##_neg(&ta, &ta);                                                     \
            CHECK(!memcmp(&back, &ta, sizeof ta));                                             \
            /* uncompressed / invalid flags */                                                 \
            buf[0] &= 0x3f;                                                                    \
            CHECK(zp_##G##a_##C##_decompress(&back, buf) == ZP_EFORMAT);                       \
        }                                                                                      \
        /* rejections: x >= q, infinity with x set, x not on the curve, not in the subgroup */ \
        {                                                                                      \
            uint8_t buf[NB];                                                                   \
            PA back, bad;                                                                      \
            zp_##G##a_##C##_compress(buf, &ga);                                                \
            size_t nq = sizeof(zp_fq_##C##_t);                                                 \
            for (size_t i = 0; i < nq; i++) /* top coordinate := q (big-endian) */             \
                buf[i] = (uint8_t)(zp_fq_##C##_modulus.l[(nq - 1 - i) / 8] >>                  \
                                   (8 * ((nq - 1 - i) % 8)));                                  \
            buf[0] |= C##_SMALL;                                                               \
            CHECK(zp_##G##a_##C##_decompress(&back, buf) == ZP_EFORMAT);                       \
            memset(buf, 0, NB);                                                                \
            buf[0] = C##_INF;                                                                  \
            CHECK(zp_##G##a_##C##_decompress(&back, buf) == 0 && zp_##G##a_##C##_is_inf(&back)); \
            buf[NB - 1] = 1;                                                                   \
            CHECK(zp_##G##a_##C##_decompress(&back, buf) == ZP_EFORMAT);                       \
            /* find x with x^3 + b a non-square (not on curve) and x with a point outside     \
             * the subgroup: walk x = k * x0 for small k */                                    \
            int found_off = 0, found_nonsub = 0;                                               \
            for (uint64_t i = 1; i < 200 && !(found_off && found_nonsub); i++) {               \
                memset(&bad, 0, sizeof bad);                                                   \
                zp_fq_##C##_set_u64((zp_fq_##C##_t *)(void *)&bad.x, i);                       \
                zp_##FQ##_t y2;                                                                \
                zp_##FQ##_sqr(&y2, &bad.x);                                                    \
                zp_##FQ##_mul(&y2, &y2, &bad.x);                                               \
                {                                                                              \
                    zp_##FQ##_t gb, t3;                                                        \
                    zp_##FQ##_sqr(&gb, &ga.y);                                                 \
                    zp_##FQ##_sqr(&t3, &ga.x);                                                 \
                    zp_##FQ##_mul(&t3, &t3, &ga.x);                                            \
                    zp_##FQ##_sub(&gb, &gb, &t3); /* b = y^2 - x^3 */                          \
                    zp_##FQ##_add(&y2, &y2, &gb);                                              \
                }                                                                              \
                zp_##G##a_##C##_compress(buf, &bad); /* encodes x (y = 0: small) */            \
                if (!zp_##FQ##_sqrt(&bad.y, &y2)) {                                            \
                    CHECK(zp_##G##a_##C##_decompress(&back, buf) == ZP_EFORMAT);               \
                    CHECK(!zp_##G##a_##C##_on_curve(&bad));                                    \
                    found_off = 1;                                                             \
                } else {                                                                       \
                    CHECK(zp_##G##a_##C##_on_curve(&bad));                                     \
                    bool sub = zp_##G##a_##C##_in_subgroup(&bad);                              \
                    int rc = zp_##G##a_##C##_decompress(&back, buf);                           \
                    CHECK(sub ? rc == 0 : rc == ZP_EFORMAT);                                   \
                    if (!sub) found_nonsub = 1;                                                \
                }                                                                              \
            }                                                                                  \
            CHECK(found_off);                                                                  \
            CHECK(found_nonsub == !C##_##G##_COFACTOR1);                                         \
        }                                                                                      \
    }

/* flag bytes per curve, from ec.h */
enum { bn254_SMALL = 0x80, bn254_LARGE = 0xc0, bn254_INF = 0x40 };
enum { bls12_381_SMALL = 0x80, bls12_381_LARGE = 0xa0, bls12_381_INF = 0xc0 };
enum { bn254_g1_COFACTOR1 = 1, bn254_g2_COFACTOR1 = 0, bls12_381_g1_COFACTOR1 = 0,
       bls12_381_g2_COFACTOR1 = 0 };

EC_GROUP_TESTS(g1, bn254, fq_bn254, fr_bn254, ZP_G1_BN254_COMPRESSED)
EC_GROUP_TESTS(g2, bn254, fq2_bn254, fr_bn254, ZP_G2_BN254_COMPRESSED)
EC_GROUP_TESTS(g1, bls12_381, fq_bls12_381, fr_bls12_381, ZP_G1_BLS12_381_COMPRESSED)
EC_GROUP_TESTS(g2, bls12_381, fq2_bls12_381, fr_bls12_381, ZP_G2_BLS12_381_COMPRESSED)

/* the split tests' common edge scalars: 0, 1, 2, r-1, r-2, r, r+1, 2^256-1, ev, ev+1, ev-1
 * (ev the endomorphism's eigenvalue); returns their count (11) */
static int edge_scalars(zp_scalar_t *e, const zp_scalar_t *r, const zp_scalar_t *ev)
{
    zp_scalar_t one = {{1, 0, 0, 0}};
    int ne = 0;
    sc_set(&e[ne++], 0);
    sc_set(&e[ne++], 1);
    sc_set(&e[ne++], 2);
    sc_sub1(&e[ne], r), ne++;
    sc_sub1(&e[ne], &e[ne - 1]), ne++;
    e[ne++] = *r;
    sc_add(&e[ne], r, &one), ne++;
    memset(&e[ne], 0xff, sizeof e[ne]), ne++;
    e[ne++] = *ev;
    sc_add(&e[ne], ev, &one), ne++;
    sc_sub1(&e[ne], ev), ne++;
    return ne;
}

/* GLV (ec_glv.c): phi acts as lambda on random points of both groups (affine and Jacobian),
 * phi has order 3, and the split recombines exactly with halves below 2^128, on random
 * scalars (reduced and not), edge scalars and scalars around the decomposition bounds. */
/* phi(kG) == lambda kG (affine and Jacobian), phi(kG) in the subgroup, phi^2 + phi + 1 = 0 */
#define GLV_ENDO_CHECK(G, C)                                                                   \
    static void glv_check_endo_##G##_##C(const zp_scalar_t *k)                                 \
    {                                                                                          \
        zp_##G##a_##C##_t ga, pa, qa;                                                          \
        zp_##G##_##C##_t g, p, q, t;                                                           \
        zp_##G##_##C##_generator(&ga);                                                         \
        zp_##G##_##C##_from_affine(&g, &ga);                                                   \
        zp_##G##_##C##_mul(&p, &g, k);                                                         \
        zp_##G##_##C##_to_affine(&pa, &p);                                                     \
        zp_##G##_##C##_mul(&q, &p, &zp_glv_##C##_lambda);                                      \
        zp_##G##a_##C##_endo(&qa, &pa);                                                        \
        CHECK(zp_##G##a_##C##_in_subgroup(&qa));                                               \
        zp_##G##_##C##_from_affine(&t, &qa);                                                   \
        CHECK(zp_##G##_##C##_eq(&t, &q));                                                      \
        zp_##G##_##C##_endo(&t, &p);                                                           \
        CHECK(zp_##G##_##C##_eq(&t, &q));                                                      \
        zp_##G##_##C##_endo(&t, &t);                                                           \
        zp_##G##_##C##_add(&t, &t, &q);                                                        \
        zp_##G##_##C##_add(&t, &t, &p);                                                        \
        CHECK(zp_##G##_##C##_is_inf(&t));                                                      \
    }
GLV_ENDO_CHECK(g1, bn254)
GLV_ENDO_CHECK(g2, bn254)
GLV_ENDO_CHECK(g1, bls12_381)
GLV_ENDO_CHECK(g2, bls12_381)

/* Fr element (Montgomery) of a 256-bit value reduced mod r */
#define GLV_TESTS(C)                                                                           \
    static void fr_of_##C(zp_fr_##C##_t *f, const zp_scalar_t *k)                              \
    {                                                                                          \
        zp_fr_##C##_t t, two64;                                                                \
        zp_fr_##C##_set_u64(&two64, 1ULL << 32);                                               \
        zp_fr_##C##_mul(&two64, &two64, &two64);                                               \
        memset(f, 0, sizeof *f);                                                               \
        for (int i = 3; i >= 0; i--) {                                                         \
            zp_fr_##C##_mul(f, f, &two64);                                                     \
            zp_fr_##C##_set_u64(&t, k->l[i]);                                                  \
            zp_fr_##C##_add(f, f, &t);                                                         \
        }                                                                                      \
    }                                                                                          \
    static void glv_check_split_##C(const zp_scalar_t *k)                                      \
    {                                                                                          \
        zp_scalar_t k1, k2;                                                                    \
        unsigned neg;                                                                          \
        zp_glv_##C##_split(&k1, &k2, &neg, k);                                                 \
        CHECK(neg < 4);                                                                        \
        CHECK(k1.l[2] == 0 && k1.l[3] == 0 && k2.l[2] == 0 && k2.l[3] == 0); /* < 2^128 */     \
        if (zp_glv_##C##_bits < 128) /* and below the curve's own bound */                     \
            CHECK(!(k1.l[1] >> (zp_glv_##C##_bits - 64)) && !(k2.l[1] >> (zp_glv_##C##_bits - 64))); \
        zp_fr_##C##_t f, f1, f2, lam;                                                          \
        fr_of_##C(&f, k);                                                                      \
        fr_of_##C(&f1, &k1);                                                                   \
        fr_of_##C(&f2, &k2);                                                                   \
        fr_of_##C(&lam, &zp_glv_##C##_lambda);                                                 \
        if (neg & 1) zp_fr_##C##_neg(&f1, &f1);                                                \
        if (neg & 2) zp_fr_##C##_neg(&f2, &f2);                                                \
        zp_fr_##C##_mul(&f2, &f2, &lam);                                                       \
        zp_fr_##C##_add(&f1, &f1, &f2);                                                        \
        CHECK(zp_fr_##C##_eq(&f1, &f));                                                        \
    }                                                                                          \
    static void test_glv_##C(void)                                                             \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        const zp_scalar_t *lam = &zp_glv_##C##_lambda;                                         \
        /* lambda^2 + lambda + 1 = 0 mod r */                                                  \
        {                                                                                      \
            zp_fr_##C##_t l, l2, one;                                                          \
            fr_of_##C(&l, lam);                                                                \
            zp_fr_##C##_sqr(&l2, &l);                                                          \
            zp_fr_##C##_add(&l2, &l2, &l);                                                     \
            zp_fr_##C##_set_u64(&one, 1);                                                      \
            zp_fr_##C##_add(&l2, &l2, &one);                                                   \
            CHECK(zp_fr_##C##_is_zero(&l2) && !zp_fr_##C##_is_one(&l));                        \
        }                                                                                      \
        for (int it = 0; it < 4; it++) {                                                       \
            zp_scalar_t k;                                                                     \
            rnd_scalar(&k, 250);                                                               \
            glv_check_endo_g1_##C(&k);                                                         \
            glv_check_endo_g2_##C(&k);                                                         \
            zp_g2a_##C##_t ha;                                                                 \
            zp_g2_##C##_t h, u, v, w;                                                          \
            zp_g2_##C##_generator(&ha);                                                        \
            zp_g2_##C##_from_affine(&h, &ha);                                                  \
            zp_g2_##C##_mul(&u, &h, &k);                                                       \
            /* the split through the points: k G = +-k1 G +- k2 phi(G) */                      \
            zp_scalar_t k1, k2;                                                                \
            unsigned neg;                                                                      \
            zp_glv_##C##_split(&k1, &k2, &neg, &k);                                            \
            zp_g2_##C##_mul(&v, &h, &k1);                                                      \
            if (neg & 1) zp_g2_##C##_neg(&v, &v);                                              \
            zp_g2_##C##_endo(&w, &h);                                                          \
            zp_g2_##C##_mul(&w, &w, &k2);                                                      \
            if (neg & 2) zp_g2_##C##_neg(&w, &w);                                              \
            zp_g2_##C##_add(&v, &v, &w);                                                       \
            CHECK(zp_g2_##C##_eq(&v, &u));                                                     \
        }                                                                                      \
        /* edges: 0, 1, 2, r-1, r-2, r, r+1, 2^256-1, lambda, lambda +- 1, 2^128 +- 1,         \
         * r - 2^128 +- 1, r/2 */                                                              \
        zp_scalar_t e[20], one = {{1, 0, 0, 0}};                                               \
        int ne = edge_scalars(e, r, lam);                                                      \
        e[ne] = (zp_scalar_t){{0, 0, 1, 0}}, ne++;                                             \
        e[ne] = (zp_scalar_t){{~0ULL, ~0ULL, 0, 0}}, ne++;                                     \
        e[ne] = (zp_scalar_t){{~0ULL, ~0ULL >> 1, 0, 0}}, ne++; /* 2^127 - 1, 2^127 */          \
        e[ne] = (zp_scalar_t){{0, 1ULL << 63, 0, 0}}, ne++;                                    \
        { /* r - 2^127 and r - 2^127 + 1 */                                                    \
            zp_scalar_t t = *r, h = {{0, 1ULL << 63, 0, 0}};                                   \
            for (int i = 0; i < 4; i++) h.l[i] = ~h.l[i];                                      \
            sc_add(&t, &t, &h); /* r + (2^256 - 2^127 - 1) = r - 2^127 - 1 (mod 2^256) */       \
            sc_add(&t, &t, &one);                                                              \
            e[ne++] = t;                                                                       \
            sc_add(&e[ne], &t, &one), ne++;                                                    \
        }                                                                                      \
        { /* r - 2^128 and r - 2^128 + 1 (the first scalar whose negation is short) */         \
            zp_scalar_t t = *r;                                                                \
            t.l[2] -= 1; /* r's limb 2 is nonzero for both curves */                           \
            e[ne++] = t;                                                                       \
            sc_add(&e[ne], &t, &one), ne++;                                                    \
        }                                                                                      \
        e[ne] = *r;                                                                            \
        for (int i = 0; i < 4; i++) e[ne].l[i] = (r->l[i] >> 1) | (i < 3 ? r->l[i + 1] << 63 : 0); \
        ne++;                                                                                  \
        for (int i = 0; i < ne; i++) glv_check_split_##C(&e[i]);                               \
        {                                                                                      \
            zp_scalar_t k1, k2;                                                                \
            unsigned neg;                                                                      \
            zp_glv_##C##_split(&k1, &k2, &neg, &e[3]); /* r - 1 = -1 */                        \
            CHECK(neg == 1 && k1.l[0] == 1 && k1.l[1] == 0 && k2.l[0] == 0 && k2.l[1] == 0);   \
            zp_glv_##C##_split(&k1, &k2, &neg, &e[6]); /* r + 1 = 1 */                         \
            CHECK(neg == 0 && k1.l[0] == 1 && k2.l[0] == 0);                                   \
        }                                                                                      \
        /* random: below r, full 256-bit, and lattice points near the rounding boundaries */   \
        for (int it = 0; it < 20000; it++) {                                                   \
            zp_scalar_t k;                                                                     \
            rnd_scalar(&k, it % 3 == 0 ? 256 : 252);                                           \
            glv_check_split_##C(&k);                                                           \
            k.l[0] ^= 1;                                                                       \
            k.l[it % 4] += it;                                                                 \
            glv_check_split_##C(&k);                                                           \
        }                                                                                      \
    }
GLV_TESTS(bn254)
GLV_TESTS(bls12_381)

/* GLS (ec_glv.c, ec_gls_consts.h from gen_gls.py): psi acts as mu on random points of G2
 * (affine and Jacobian), mu is the expected value (BLS12-381: the seed x mod r; BN254: 6 u^2),
 * psi^2 = (a x, -y), and the 4-dimensional split recombines exactly with parts below
 * 2^zp_gls_<C>_bits, in Fr and through the points, on random, edge and near-bound scalars. */
static const uint64_t gls_bn254_u = 4965661367192848881ULL;       /* BN254's u */
static const uint64_t gls_bls12_381_absx = 0xd201000000010000ULL;  /* BLS12-381's x = -this */
#define GLS_TESTS(C)                                                                           \
    static bool gls_short_##C(const zp_scalar_t *k)                                            \
    {                                                                                          \
        unsigned b = zp_gls_##C##_bits;                                                        \
        for (unsigned i = (b + 63) / 64; i < 4; i++)                                           \
            if (k->l[i]) return false;                                                         \
        return b % 64 == 0 || !(k->l[b / 64] >> (b % 64));                                     \
    }                                                                                          \
    static void gls_check_split_##C(const zp_scalar_t *k)                                      \
    {                                                                                          \
        zp_scalar_t kp[4];                                                                     \
        unsigned neg;                                                                          \
        zp_gls_##C##_split(kp, &neg, k);                                                       \
        CHECK(neg < 16);                                                                       \
        zp_fr_##C##_t f, acc, mu, pw, t;                                                       \
        fr_of_##C(&f, k);                                                                      \
        fr_of_##C(&mu, &zp_gls_##C##_mu);                                                      \
        memset(&acc, 0, sizeof acc);                                                           \
        zp_fr_##C##_set_u64(&pw, 1);                                                           \
        for (int i = 0; i < 4; i++) {                                                          \
            CHECK(gls_short_##C(&kp[i]));                                                      \
            fr_of_##C(&t, &kp[i]);                                                             \
            if (neg >> i & 1) zp_fr_##C##_neg(&t, &t);                                         \
            zp_fr_##C##_mul(&t, &t, &pw);                                                      \
            zp_fr_##C##_add(&acc, &acc, &t);                                                   \
            zp_fr_##C##_mul(&pw, &pw, &mu);                                                    \
        }                                                                                      \
        CHECK(zp_fr_##C##_eq(&acc, &f));                                                       \
    }                                                                                          \
    static void test_gls_##C(void)                                                             \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        const zp_scalar_t *mu = &zp_gls_##C##_mu;                                              \
        zp_fr_##C##_t fmu, want;                                                               \
        fr_of_##C(&fmu, mu);                                                                   \
        if (!strcmp(#C, "bn254")) { /* mu = 6 u^2 */                                           \
            zp_fr_##C##_set_u64(&want, gls_bn254_u);                                           \
            zp_fr_##C##_sqr(&want, &want);                                                     \
            zp_fr_##C##_t six;                                                                 \
            zp_fr_##C##_set_u64(&six, 6);                                                      \
            zp_fr_##C##_mul(&want, &want, &six);                                               \
        } else { /* mu = x = -|x| mod r */                                                     \
            zp_fr_##C##_set_u64(&want, gls_bls12_381_absx);                                    \
            zp_fr_##C##_neg(&want, &want);                                                     \
        }                                                                                      \
        CHECK(zp_fr_##C##_eq(&fmu, &want));                                                    \
        zp_g2a_##C##_t ga, pa, qa, sa;                                                         \
        zp_g2_##C##_t g, p, q, t;                                                              \
        zp_g2_##C##_generator(&ga);                                                            \
        zp_g2_##C##_from_affine(&g, &ga);                                                      \
        for (int it = 0; it < 4; it++) {                                                       \
            zp_scalar_t k;                                                                     \
            rnd_scalar(&k, 250);                                                               \
            zp_g2_##C##_mul(&p, &g, &k);                                                       \
            zp_g2_##C##_to_affine(&pa, &p);                                                    \
            zp_g2_##C##_mul(&q, &p, mu);                                                       \
            zp_g2a_##C##_psi(&qa, &pa);                                                        \
            CHECK(zp_g2a_##C##_in_subgroup(&qa));                                              \
            zp_g2_##C##_from_affine(&t, &qa);                                                  \
            CHECK(zp_g2_##C##_eq(&t, &q));                                                     \
            zp_g2_##C##_psi(&t, &p);                                                           \
            CHECK(zp_g2_##C##_eq(&t, &q));                                                     \
            zp_g2a_##C##_psi(&sa, &qa); /* psi^2 = (a x, -y) */                                \
            zp_fq_##C##_mul(&qa.x.c0, &pa.x.c0, zp_g2_##C##_psi2_a());                         \
            zp_fq_##C##_mul(&qa.x.c1, &pa.x.c1, zp_g2_##C##_psi2_a());                         \
            zp_fq2_##C##_neg(&qa.y, &pa.y);                                                    \
            CHECK(!memcmp(&sa, &qa, sizeof sa));                                               \
            /* the split through the points: k P = sum +-k_i psi^i(P) */                       \
            zp_scalar_t kp[4];                                                                 \
            unsigned neg;                                                                      \
            zp_gls_##C##_split(kp, &neg, &k);                                                  \
            zp_g2_##C##_t acc, pi = g, u;                                                      \
            zp_g2_##C##_set_inf(&acc);                                                         \
            for (int i = 0; i < 4; i++) {                                                      \
                zp_g2_##C##_mul(&u, &pi, &kp[i]);                                              \
                if (neg >> i & 1) zp_g2_##C##_neg(&u, &u);                                     \
                zp_g2_##C##_add(&acc, &acc, &u);                                               \
                zp_g2_##C##_psi(&pi, &pi);                                                     \
            }                                                                                  \
            CHECK(zp_g2_##C##_eq(&acc, &p));                                                   \
        }                                                                                      \
        /* edges: 0, 1, 2, r-1, r-2, r, r+1, 2^256-1, mu, mu +- 1, mu^2, mu^3, r/2, and the    \
         * short-scalar bound: 2^b - 1, 2^b, 2^b + 1, r - 2^b, r - 2^b +- 1 (b = bits) */      \
        zp_scalar_t e[32], one = {{1, 0, 0, 0}};                                               \
        int ne = edge_scalars(e, r, mu);                                                       \
        {                                                                                      \
            zp_fr_##C##_t m2 = fmu;                                                            \
            for (int j = 0; j < 2; j++) { /* mu^2, mu^3 as standard integers */                \
                zp_fr_##C##_mul(&m2, &m2, &fmu);                                               \
                zp_fr_##C##_from_mont(&m2, &m2);                                                 \
                memcpy(&e[ne], &m2, sizeof e[ne]);                                             \
                zp_fr_##C##_to_mont(&m2, &m2);                                                 \
                ne++;                                                                          \
            }                                                                                  \
        }                                                                                      \
        e[ne] = *r;                                                                            \
        for (int i = 0; i < 4; i++) e[ne].l[i] = (r->l[i] >> 1) | (i < 3 ? r->l[i + 1] << 63 : 0); \
        ne++;                                                                                  \
        const unsigned b = zp_gls_##C##_bits;                                                  \
        zp_scalar_t tb = {{0, 0, 0, 0}};                                                       \
        tb.l[b / 64] = 1ULL << (b % 64); /* 2^b */                                            \
        const int nb0 = ne;                                                                    \
        sc_sub1(&e[ne++], &tb);                                                                \
        e[ne++] = tb;                                                                          \
        sc_add(&e[ne], &tb, &one), ne++;                                                       \
        { /* r - 2^b - 1, r - 2^b, r - 2^b + 1 */                                              \
            zp_scalar_t nt = tb;                                                               \
            for (int i = 0; i < 4; i++) nt.l[i] = ~nt.l[i];                                    \
            sc_add(&nt, &nt, r); /* r - 2^b - 1 */                                             \
            e[ne++] = nt;                                                                      \
            sc_add(&e[ne], &nt, &one), ne++;                                                   \
            sc_add(&e[ne], &e[ne - 1], &one), ne++;                                            \
        }                                                                                      \
        for (int i = 0; i < ne; i++) gls_check_split_##C(&e[i]);                               \
        {                                                                                      \
            zp_scalar_t kp[4];                                                                 \
            unsigned neg;                                                                      \
            zp_gls_##C##_split(kp, &neg, &e[3]); /* r - 1 = -1: (1, 0, 0, 0), negated */       \
            CHECK(neg == 1 && kp[0].l[0] == 1 && !kp[1].l[0] && !kp[2].l[0] && !kp[3].l[0]);   \
            zp_gls_##C##_split(kp, &neg, &e[nb0]); /* 2^b - 1: short, not split */             \
            CHECK(neg == 0 && !memcmp(&kp[0], &e[nb0], sizeof kp[0]) && !kp[1].l[0] && !kp[1].l[1]); \
            zp_gls_##C##_split(kp, &neg, &e[nb0 + 4]); /* r - 2^b: -(2^b), split */            \
            CHECK(kp[1].l[0] | kp[2].l[0] | kp[3].l[0] | kp[1].l[1] | kp[2].l[1] | kp[3].l[1]); \
            zp_gls_##C##_split(kp, &neg, &e[nb0 + 5]); /* r - 2^b + 1: -(2^b - 1), not split */ \
            CHECK(neg == 1 && !memcmp(&kp[0], &e[nb0], sizeof kp[0]));                         \
        }                                                                                      \
        for (int it = 0; it < 20000; it++) {                                                   \
            zp_scalar_t k;                                                                     \
            rnd_scalar(&k, it % 3 == 0 ? 256 : 252);                                           \
            gls_check_split_##C(&k);                                                           \
            k.l[0] ^= 1;                                                                       \
            k.l[it % 4] += it;                                                                 \
            gls_check_split_##C(&k);                                                           \
            rnd_scalar(&k, 64 + it % 130); /* 64..193 bits: around the short bound */          \
            gls_check_split_##C(&k);                                                           \
        }                                                                                      \
    }
GLS_TESTS(bn254)
GLS_TESTS(bls12_381)

static int hex2bin(uint8_t *out, const char *hex, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* Known answers: the curve constants of the twists, multiples of the BN254 generator, the
 * zcash encodings of the BLS12-381 generators and gnark's of (1, 2). */
static void test_known(void)
{
    /* G2 b' from the generator: BN254 b' (9+u) = 3, BLS12-381 b' = 4 (1+u) */
    {
        zp_g2a_bn254_t g;
        zp_fq2_bn254_t b, t;
        zp_g2_bn254_generator(&g);
        zp_fq2_bn254_sqr(&b, &g.y);
        zp_fq2_bn254_sqr(&t, &g.x);
        zp_fq2_bn254_mul(&t, &t, &g.x);
        zp_fq2_bn254_sub(&b, &b, &t);
        zp_fq2_bn254_mul_xi(&b, &b);
        zp_fq2_bn254_t three;
        memset(&three, 0, sizeof three);
        zp_fq_bn254_set_u64(&three.c0, 3);
        CHECK(zp_fq2_bn254_eq(&b, &three));
    }
    {
        zp_g2a_bls12_381_t g;
        zp_fq2_bls12_381_t b, t, four;
        zp_g2_bls12_381_generator(&g);
        zp_fq2_bls12_381_sqr(&b, &g.y);
        zp_fq2_bls12_381_sqr(&t, &g.x);
        zp_fq2_bls12_381_mul(&t, &t, &g.x);
        zp_fq2_bls12_381_sub(&b, &b, &t);
        zp_fq_bls12_381_set_u64(&four.c0, 4);
        zp_fq_bls12_381_set_u64(&four.c1, 4);
        CHECK(zp_fq2_bls12_381_eq(&b, &four));
        zp_g1a_bls12_381_t g1;
        zp_fq_bls12_381_t b1, t1, f1;
        zp_g1_bls12_381_generator(&g1);
        zp_fq_bls12_381_sqr(&b1, &g1.y);
        zp_fq_bls12_381_sqr(&t1, &g1.x);
        zp_fq_bls12_381_mul(&t1, &t1, &g1.x);
        zp_fq_bls12_381_sub(&b1, &b1, &t1);
        zp_fq_bls12_381_set_u64(&f1, 4);
        CHECK(zp_fq_bls12_381_eq(&b1, &f1));
    }
    /* BN254: 2G and 3G */
    {
        zp_g1a_bn254_t ga, e;
        zp_g1_bn254_t g, t;
        zp_g1_bn254_generator(&ga);
        zp_g1_bn254_from_affine(&g, &ga);
        zp_g1_bn254_dbl(&t, &g);
        zp_g1_bn254_to_affine(&e, &t);
        zp_fq_bn254_t x, y;
        CHECK(zp_fq_bn254_from_dec(&x, "1368015179489954701390400359078579693043519447331113978918064868415326638035") == 0);
        CHECK(zp_fq_bn254_from_dec(&y, "9918110051302171585080402603319702774565515993150576347155970296011118125764") == 0);
        CHECK(zp_fq_bn254_eq(&e.x, &x) && zp_fq_bn254_eq(&e.y, &y));
        zp_g1_bn254_add_affine(&t, &t, &ga);
        zp_g1_bn254_to_affine(&e, &t);
        CHECK(zp_fq_bn254_from_dec(&x, "3353031288059533942658390886683067124040920775575537747144343083137631628272") == 0);
        CHECK(zp_fq_bn254_from_dec(&y, "19321533766552368860946552437480515441416830039777911637913418824951667761761") == 0);
        CHECK(zp_fq_bn254_eq(&e.x, &x) && zp_fq_bn254_eq(&e.y, &y));
        uint8_t buf[32], want[32] = {0x80};
        want[31] = 1;
        zp_g1a_bn254_compress(buf, &ga);
        CHECK(!memcmp(buf, want, 32));
        zp_g1a_bn254_neg(&ga, &ga);
        zp_g1a_bn254_compress(buf, &ga);
        want[0] = 0xc0;
        CHECK(!memcmp(buf, want, 32));
    }
    {
        uint8_t want1[48], want2[96], buf[96];
        hex2bin(want1, "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb", 48);
        hex2bin(want2, "93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
                       "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8", 96);
        zp_g1a_bls12_381_t g1, b1;
        zp_g2a_bls12_381_t g2, b2;
        zp_g1_bls12_381_generator(&g1);
        zp_g2_bls12_381_generator(&g2);
        zp_g1a_bls12_381_compress(buf, &g1);
        CHECK(!memcmp(buf, want1, 48));
        zp_g2a_bls12_381_compress(buf, &g2);
        CHECK(!memcmp(buf, want2, 96));
        CHECK(zp_g1a_bls12_381_decompress(&b1, want1) == 0 && !memcmp(&b1, &g1, sizeof g1));
        CHECK(zp_g2a_bls12_381_decompress(&b2, want2) == 0 && !memcmp(&b2, &g2, sizeof g2));
        /* infinity: 0xc0 0...; 0xe0 (sorted infinity) and 0x40 (uncompressed) are rejected */
        memset(buf, 0, 48);
        buf[0] = 0xc0;
        CHECK(zp_g1a_bls12_381_decompress(&b1, buf) == 0 && zp_g1a_bls12_381_is_inf(&b1));
        buf[0] = 0xe0;
        CHECK(zp_g1a_bls12_381_decompress(&b1, buf) == ZP_EFORMAT);
        buf[0] = 0x40;
        CHECK(zp_g1a_bls12_381_decompress(&b1, buf) == ZP_EFORMAT);
        memcpy(buf, want1, 48);
        buf[0] &= 0x7f; /* compression bit missing */
        CHECK(zp_g1a_bls12_381_decompress(&b1, buf) == ZP_EFORMAT);
    }
}

int main(void)
{
    test_g1_bn254();
    test_g2_bn254();
    test_g1_bls12_381();
    test_g2_bls12_381();
    test_known();
    test_glv_bn254();
    test_glv_bls12_381();
    test_gls_bn254();
    test_gls_bls12_381();
    if (fails) {
        fprintf(stderr, "test_ec: %d checks failed\n", fails);
        return 1;
    }
    printf("test_ec: ok\n");
    return 0;
}
