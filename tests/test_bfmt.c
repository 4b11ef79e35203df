/* test_bfmt.c - lib/fmt/bellman.c: the bellman-made fixtures (tests/fixtures/bellman) open with
 * the counts of their README; writing what was read gives the same bytes back (encoder and
 * decoder agree with bellman's Parameters::write / VerifyingKey::write / Proof::write); a .params
 * works as a .vk; bytes after the last section are ignored; every reader error is provoked from
 * a good file patched in memory (truncations, counts that overflow or disagree with the size,
 * identity points, bad flags, coordinates >= p, points off the curve or outside the subgroup)
 * and names the file and the field. Fixtures: ZP_FIXTURES_DIR (compile time). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fmt/bellman.h"
#include "lib/util/util.h"
#include "test_slurp.h"

#ifndef ZP_FIXTURES_DIR
#define ZP_FIXTURES_DIR "tests/fixtures"
#endif

static int failures;
#define CHECK(c)                                                                                     \
    do {                                                                                             \
        if (!(c)) {                                                                                  \
            fprintf(stderr, "%s:%d: CHECK(%s) failed [%s]\n", __FILE__, __LINE__, #c, zp_err_msg()); \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

static char tmpdir[256];
static uint64_t rng_s = 0x29b3c1;
static uint64_t rnd_u64(void)
{
    uint64_t z = (rng_s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void path_of(char *out, size_t cap, const char *fix, const char *file)
{
    snprintf(out, cap, "%s/bellman/%s/%s", ZP_FIXTURES_DIR, fix, file);
}

/* an 8-aligned copy of len bytes (plus extra zero bytes) */
static uint8_t *dup8(const void *src, size_t len, size_t extra)
{
    uint8_t *p = aligned_alloc(8, (len + extra + 7) & ~(size_t)7);
    if (!p) abort();
    memcpy(p, src, len);
    memset(p + len, 0, extra);
    return p;
}

/* parses a patched copy; expects rc and every substring of subs (NULL-terminated) in the message */
static void expect_bad(const uint8_t *good, size_t len, size_t patch_off, const void *patch, size_t plen,
                       size_t new_len, unsigned flags, int rc_want, const char *const *subs, int line)
{
    uint8_t *b = dup8(good, len, 0);
    if (patch) memcpy(b + patch_off, patch, plen);
    zp_bkey_t k;
    int rc = zp_bkey_parse(&k, b, new_len, "bad.params", flags);
    if (rc != rc_want) {
        fprintf(stderr, "line %d: rc %d, want %d [%s]\n", line, rc, rc_want, zp_err_msg());
        failures++;
    } else {
        if (getenv("ZP_TEST_VERBOSE")) printf("  %d: %s\n", line, zp_err_msg());
        if (!strstr(zp_err_msg(), "bad.params")) {
            fprintf(stderr, "line %d: message lacks the file name: %s\n", line, zp_err_msg());
            failures++;
        }
        for (; subs && *subs; subs++)
            if (!strstr(zp_err_msg(), *subs)) {
                fprintf(stderr, "line %d: message lacks \"%s\": %s\n", line, *subs, zp_err_msg());
                failures++;
            }
    }
    if (!rc) zp_bkey_close(&k);
    free(b);
}
#define BAD(good, len, off, patch, plen, nlen, flags, want, ...)                                       \
    expect_bad(good, len, off, patch, plen, nlen, flags, want, (const char *const[]){__VA_ARGS__, NULL}, \
               __LINE__)

static void be32_put(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* counts from tests/fixtures/bellman/README.md */
typedef struct { const char *name; uint32_t ic, h, l, a, b; } fix_t;
static const fix_t fixtures[] = {
    {"chain300", 3, 511, 302, 302, 300},
    {"poseidon2", 2, 1023, 518, 245, 162},
};

static zp_bkey_view_t view_of(const zp_bkey_t *k)
{
    zp_bkey_view_t v = {k->alpha_g1, k->beta_g1, k->delta_g1, k->beta_g2, k->gamma_g2, k->delta_g2,
                        k->ic, k->h, k->l, k->a, k->b_g1, k->b_g2,
                        k->n_ic, k->n_h, k->n_l, k->n_a, k->n_b_g1, k->n_b_g2};
    return v;
}

static void test_fixture(const fix_t *fx)
{
    char pp[512], vp[512], prp[512], out[600];
    path_of(pp, sizeof pp, fx->name, "circuit.params");
    path_of(vp, sizeof vp, fx->name, "circuit.vk");
    path_of(prp, sizeof prp, fx->name, "proof_r5_s9.bin");
    zp_keyfmt_t kf = ZP_KEYFMT_UNKNOWN;
    CHECK(zp_key_format_of_file(&kf, pp) == 0 && kf == ZP_KEYFMT_BELLMAN);
    CHECK(zp_key_format_of_file(&kf, vp) == 0 && kf == ZP_KEYFMT_BELLMAN);

    zp_bkey_t k, v, pv;
    int rc = zp_bkey_open(&k, pp, 0);
    CHECK(rc == 0);
    if (rc) return;
    CHECK(k.has_params);
    CHECK(k.n_ic == fx->ic && k.n_h == fx->h && k.n_l == fx->l && k.n_a == fx->a);
    CHECK(k.n_b_g1 == fx->b && k.n_b_g2 == fx->b);
    CHECK(k.end == k.f.size);
    /* arrays 8-aligned, sections where the file says */
    for (int s = 0; s < ZP_BSEC_N; s++) {
        CHECK(((uintptr_t)k.sec[s].pts & 7) == 0);
        CHECK(k.sec[s].file_off == k.sec[s].count_off + 4);
    }
    CHECK(k.sec[ZP_BSEC_IC].count_off == ZP_BVK_HEAD_BYTES);
    CHECK(k.sec[ZP_BSEC_H].count_off == k.sec[ZP_BSEC_IC].file_off + 96ull * k.n_ic);
    CHECK(k.sec[ZP_BSEC_B_G2].file_off + 192ull * k.n_b_g2 == k.end);
    for (uint32_t i = 0; i < k.n_h; i++) CHECK(zp_g1a_bls12_381_on_curve(&k.h[i]) && !zp_g1a_bls12_381_is_inf(&k.h[i]));
    for (uint32_t i = 0; i < k.n_b_g2; i++) CHECK(zp_g2a_bls12_381_on_curve(&k.b_g2[i]));

    /* the .vk, and the .params read as a .vk, hold the same verifying key */
    CHECK(zp_bkey_open(&v, vp, 0) == ZP_EFORMAT && strstr(zp_err_msg(), "circuit.vk: h: truncated"));
    CHECK(zp_bkey_open(&v, vp, ZP_BKEY_VK_ONLY) == 0);
    CHECK(!v.has_params && v.n_ic == fx->ic && v.end == v.f.size);
    CHECK(zp_bkey_open(&pv, pp, ZP_BKEY_VK_ONLY) == 0);
    CHECK(!pv.has_params && pv.n_ic == fx->ic && pv.end < pv.f.size);
    CHECK(!memcmp(&v.alpha_g1, &k.alpha_g1, sizeof k.alpha_g1) && !memcmp(&v.delta_g2, &k.delta_g2, sizeof k.delta_g2));
    CHECK(!memcmp(&v.gamma_g2, &pv.gamma_g2, sizeof k.gamma_g2) && !memcmp(&v.beta_g1, &pv.beta_g1, sizeof k.beta_g1));
    CHECK(v.n_ic == k.n_ic && !memcmp(v.ic, k.ic, 96ull * k.n_ic) && !memcmp(pv.ic, k.ic, 96ull * k.n_ic));

    /* writing what was read gives the files back byte for byte */
    size_t plen, vlen, n2;
    char *pbytes = test_slurp(pp, &plen), *vbytes = test_slurp(vp, &vlen), *w;
    zp_bkey_view_t vw = view_of(&k);
    snprintf(out, sizeof out, "%s/rt.params", tmpdir);
    CHECK(zp_bkey_write(out, &vw, false) == 0);
    w = test_slurp(out, &n2);
    CHECK(w && n2 == plen && !memcmp(w, pbytes, plen));
    free(w);
    snprintf(out, sizeof out, "%s/rt.vk", tmpdir);
    CHECK(zp_bkey_write(out, &vw, true) == 0);
    w = test_slurp(out, &n2);
    CHECK(w && n2 == vlen && !memcmp(w, vbytes, vlen));
    free(w);
    unlink(out);
    snprintf(out, sizeof out, "%s/rt.params", tmpdir);
    unlink(out);

    /* trailing bytes (Zcash's MPC transcript) are ignored */
    uint8_t *tail = dup8(pbytes, plen, 5000);
    memset(tail + plen, 0xa5, 5000);
    zp_bkey_t t;
    CHECK(zp_bkey_parse(&t, tail, plen + 5000, "tail.params", 0) == 0);
    CHECK(t.end == plen && t.n_h == fx->h);
    if (t.end) CHECK(!memcmp(t.h, k.h, 96ull * k.n_h));
    free(tail);

    /* the 192-byte proof reads and writes back identically */
    size_t prlen;
    char *pr = test_slurp(prp, &prlen);
    CHECK(pr && prlen == ZP_BPROOF_SIZE);
    if (pr && prlen == ZP_BPROOF_SIZE) {
        zp_bproof_t proof;
        uint8_t back[192];
        CHECK(zp_bproof_read(&proof, (const uint8_t *)pr) == 0);
        zp_bproof_write(back, &proof);
        CHECK(!memcmp(back, pr, 192));
        uint8_t bad[192];
        memcpy(bad, pr, 192);
        memset(bad, 0, 48);
        bad[0] = 0xc0; /* compressed infinity for A: bellman refuses it */
        CHECK(zp_bproof_read(&proof, bad) == ZP_EFORMAT && strstr(zp_err_msg(), "proof A"));
        memcpy(bad, pr, 192);
        bad[47] ^= 1; /* another x: off the curve or a different point */
        zp_bproof_t p2;
        rc = zp_bproof_read(&p2, bad);
        CHECK(rc != 0 || memcmp(&p2.a, &proof.a, sizeof p2.a));
    }
    free(pr);
    free(pbytes);
    free(vbytes);
    zp_bkey_close(&pv);
    zp_bkey_close(&v);
    zp_bkey_close(&k);
}

/* an on-curve G1 point outside the subgroup: the first x >= 1 with x^3 + 4 a square */
static void g1_off_subgroup(zp_g1a_bls12_381_t *p)
{
    zp_fq_bls12_381_t four, t;
    zp_fq_bls12_381_set_u64(&four, 4);
    for (uint64_t x = 1;; x++) {
        zp_fq_bls12_381_set_u64(&p->x, x);
        zp_fq_bls12_381_sqr(&t, &p->x);
        zp_fq_bls12_381_mul(&t, &t, &p->x);
        zp_fq_bls12_381_add(&t, &t, &four);
        if (zp_fq_bls12_381_sqrt(&p->y, &t) && !zp_g1a_bls12_381_in_subgroup(p)) return;
    }
}

static void g2_off_subgroup(zp_g2a_bls12_381_t *p)
{
    zp_fq2_bls12_381_t b, t;
    memset(&b, 0, sizeof b);
    zp_fq_bls12_381_set_u64(&b.c0, 4);
    zp_fq_bls12_381_set_u64(&b.c1, 4);
    memset(p, 0, sizeof *p);
    for (uint64_t x = 1;; x++) {
        zp_fq_bls12_381_set_u64(&p->x.c0, x);
        zp_fq2_bls12_381_sqr(&t, &p->x);
        zp_fq2_bls12_381_mul(&t, &t, &p->x);
        zp_fq2_bls12_381_add(&t, &t, &b);
        if (zp_fq2_bls12_381_sqrt(&p->y, &t) && !zp_g2a_bls12_381_in_subgroup(p)) return;
    }
}


/* ---- subgroup checks against [r] P = 0 on points with a cofactor component of each small
 * prime order of the cofactors (h1 = 3 * 11^2 * 10177^2 * 859267^2 * 52437899^2; h2 has 13, 23,
 * 2713, 11953, 262069 and a large rest) ---- */
static const uint64_t R_LIMBS[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                                    0x73eda753299d7d48ull};
static const uint64_t H1_LIMBS[2] = {0x8c00aaab0000aaabull, 0x396c8c005555e156ull};
static const uint64_t H2_LIMBS[8] = {0xcf1c38e31c7238e5ull, 0x1616ec6e786f0c70ull, 0x21537e293a6691aeull,
                                     0xa628f1cb4d9e82efull, 0xa68a205b2e5a7ddfull, 0xcd91de4547085abaull,
                                     0x091d50792876a202ull, 0x05d543a95414e7f1ull};

/* q = a / d (little-endian limbs); the remainder */
static uint64_t div_small(uint64_t *q, const uint64_t *a, int n, uint64_t d)
{
    unsigned __int128 rem = 0;
    for (int i = n - 1; i >= 0; i--) {
        unsigned __int128 cur = rem << 64 | a[i];
        q[i] = (uint64_t)(cur / d);
        rem = cur % d;
    }
    return (uint64_t)rem;
}

/* [k] P for a multi-limb k, plain double-and-add */
#define MUL_BIG(G, r, p, k, n)                                                                 \
    do {                                                                                       \
        zp_##G##_bls12_381_t acc_, base_ = *(p);                                               \
        zp_##G##_bls12_381_set_inf(&acc_);                                                     \
        for (int i_ = 64 * (n) - 1; i_ >= 0; i_--) {                                           \
            zp_##G##_bls12_381_dbl(&acc_, &acc_);                                              \
            if ((k)[i_ / 64] >> (i_ % 64) & 1) zp_##G##_bls12_381_add(&acc_, &acc_, &base_);   \
        }                                                                                      \
        *(r) = acc_;                                                                           \
    } while (0)

/* an on-curve point with x = x0, x0 + 1, ... (first that is on the curve) */
static uint64_t g1_on_curve_from(zp_g1a_bls12_381_t *p, uint64_t x0)
{
    zp_fq_bls12_381_t four, t;
    zp_fq_bls12_381_set_u64(&four, 4);
    for (uint64_t x = x0;; x++) {
        zp_fq_bls12_381_set_u64(&p->x, x);
        zp_fq_bls12_381_sqr(&t, &p->x);
        zp_fq_bls12_381_mul(&t, &t, &p->x);
        zp_fq_bls12_381_add(&t, &t, &four);
        if (zp_fq_bls12_381_sqrt(&p->y, &t)) return x;
    }
}

static uint64_t g2_on_curve_from(zp_g2a_bls12_381_t *p, uint64_t x0)
{
    zp_fq2_bls12_381_t b, t;
    memset(&b, 0, sizeof b);
    zp_fq_bls12_381_set_u64(&b.c0, 4);
    zp_fq_bls12_381_set_u64(&b.c1, 4);
    memset(p, 0, sizeof *p);
    zp_fq_bls12_381_set_u64(&p->x.c1, 1);
    for (uint64_t x = x0;; x++) {
        zp_fq_bls12_381_set_u64(&p->x.c0, x);
        zp_fq2_bls12_381_sqr(&t, &p->x);
        zp_fq2_bls12_381_mul(&t, &t, &p->x);
        zp_fq2_bls12_381_add(&t, &t, &b);
        if (zp_fq2_bls12_381_sqrt(&p->y, &t)) return x;
    }
}

static void test_cofactor_orders(void)
{
    static const uint64_t q1[] = {3, 11, 10177, 859267, 52437899};
    static const uint64_t q2[] = {13, 23, 2713, 11953, 262069};
    int found1 = 0, found2 = 0;
    zp_g1a_bls12_381_t g;
    zp_g2a_bls12_381_t h;
    zp_g1_bls12_381_generator(&g);
    zp_g2_bls12_381_generator(&h);
    uint8_t enc[192];
    for (size_t qi = 0; qi < 5; qi++) {
        uint64_t hq[8];
        /* G1: T = [h1 / q^e] [r] Q is Q's q-part (0: try the next Q), multiplied by q down to order q */
        uint64_t ht[8];   /* hq = h / q^e, q^e exactly dividing h */
        memcpy(hq, H1_LIMBS, sizeof H1_LIMBS);
        while (div_small(ht, hq, 2, q1[qi]) == 0) memcpy(hq, ht, sizeof H1_LIMBS);
        CHECK(memcmp(hq, H1_LIMBS, sizeof H1_LIMBS) != 0);
        for (uint64_t x0 = 1; x0 < 200; x0++) {
            zp_g1a_bls12_381_t qa, ta, pa;
            zp_g1_bls12_381_t j, t, u;
            x0 = g1_on_curve_from(&qa, x0);
            zp_g1_bls12_381_from_affine(&j, &qa);
            MUL_BIG(g1, &t, &j, R_LIMBS, 4);
            MUL_BIG(g1, &t, &t, hq, 2);
            if (zp_g1_bls12_381_is_inf(&t)) continue;   /* no q-part in Q */
            uint64_t qq[1] = {q1[qi]};
            for (;;) {   /* down to order exactly q */
                MUL_BIG(g1, &u, &t, qq, 1);
                if (zp_g1_bls12_381_is_inf(&u)) break;
                t = u;
            }   /* order exactly q (q prime, T != 0) */
            zp_g1_bls12_381_to_affine(&ta, &t);
            /* P = [k] G + T: on the curve, outside the subgroup by T alone */
            zp_scalar_t k = {{rnd_u64(), rnd_u64(), rnd_u64(), rnd_u64() >> 2}};
            zp_g1_bls12_381_from_affine(&j, &g);
            zp_g1_bls12_381_mul(&j, &j, &k);
            zp_g1a_bls12_381_t ga;
            zp_g1_bls12_381_to_affine(&ga, &j);
            zp_g1_bls12_381_add(&j, &j, &t);
            zp_g1_bls12_381_to_affine(&pa, &j);
            CHECK(zp_g1a_bls12_381_on_curve(&pa) && zp_g1a_bls12_381_on_curve(&ta));
            CHECK(!zp_bls_g1_torsion_free(&pa) && !zp_g1a_bls12_381_in_subgroup(&pa));
            CHECK(!zp_bls_g1_torsion_free(&ta) && !zp_g1a_bls12_381_in_subgroup(&ta));
            CHECK(zp_bls_g1_torsion_free(&ga) && zp_g1a_bls12_381_in_subgroup(&ga));
            zp_g1a_bls12_381_t back;
            zp_bls_g1_to_uncompressed(enc, &pa);
            CHECK(zp_bls_g1_from_uncompressed(&back, enc, false) == 0);
            CHECK(zp_bls_g1_from_uncompressed(&back, enc, true) == ZP_EFORMAT && strstr(zp_err_msg(), "subgroup"));
            zp_bls_g1_to_uncompressed(enc, &ga);
            CHECK(zp_bls_g1_from_uncompressed(&back, enc, true) == 0);
            found1++;
            break;
        }
        /* G2: the same with h2 */
        memcpy(hq, H2_LIMBS, sizeof H2_LIMBS);
        while (div_small(ht, hq, 8, q2[qi]) == 0) memcpy(hq, ht, sizeof H2_LIMBS);
        CHECK(memcmp(hq, H2_LIMBS, sizeof H2_LIMBS) != 0);
        for (uint64_t x0 = 1; x0 < 200; x0++) {
            zp_g2a_bls12_381_t qa, ta, pa, ga;
            zp_g2_bls12_381_t j, t, u;
            x0 = g2_on_curve_from(&qa, x0);
            zp_g2_bls12_381_from_affine(&j, &qa);
            MUL_BIG(g2, &t, &j, R_LIMBS, 4);
            MUL_BIG(g2, &t, &t, hq, 8);
            if (zp_g2_bls12_381_is_inf(&t)) continue;   /* no q-part in Q */
            uint64_t qq[1] = {q2[qi]};
            for (;;) {   /* down to order exactly q */
                MUL_BIG(g2, &u, &t, qq, 1);
                if (zp_g2_bls12_381_is_inf(&u)) break;
                t = u;
            }
            zp_g2_bls12_381_to_affine(&ta, &t);
            zp_scalar_t k = {{rnd_u64(), rnd_u64(), rnd_u64(), rnd_u64() >> 2}};
            zp_g2_bls12_381_from_affine(&j, &h);
            zp_g2_bls12_381_mul(&j, &j, &k);
            zp_g2_bls12_381_to_affine(&ga, &j);
            zp_g2_bls12_381_add(&j, &j, &t);
            zp_g2_bls12_381_to_affine(&pa, &j);
            CHECK(zp_g2a_bls12_381_on_curve(&pa) && zp_g2a_bls12_381_on_curve(&ta));
            CHECK(!zp_bls_g2_torsion_free(&pa) && !zp_g2a_bls12_381_in_subgroup(&pa));
            CHECK(!zp_bls_g2_torsion_free(&ta) && !zp_g2a_bls12_381_in_subgroup(&ta));
            CHECK(zp_bls_g2_torsion_free(&ga) && zp_g2a_bls12_381_in_subgroup(&ga));
            zp_g2a_bls12_381_t back;
            zp_bls_g2_to_uncompressed(enc, &pa);
            CHECK(zp_bls_g2_from_uncompressed(&back, enc, false) == 0);
            CHECK(zp_bls_g2_from_uncompressed(&back, enc, true) == ZP_EFORMAT && strstr(zp_err_msg(), "subgroup"));
            found2++;
            break;
        }
    }
    CHECK(found1 == 5 && found2 == 5);
}


/* a .params with the chain300 key's points tiled to bigger counts (h 3000, l 302, a 2100,
 * b 2100), big enough for the pool path (chunks of 1024 points); malloc'd file image */
static uint8_t *tiled_params(size_t *len, const char *path)
{
    char pp[512];
    path_of(pp, sizeof pp, "chain300", "circuit.params");
    zp_bkey_t k;
    if (zp_bkey_open(&k, pp, 0)) return NULL;
    enum { NH = 3000, NA = 2100, NB = 2100 };
    zp_g1a_bls12_381_t *h = malloc(NH * sizeof *h), *a = malloc(NA * sizeof *a), *b1 = malloc(NB * sizeof *b1);
    zp_g2a_bls12_381_t *b2 = malloc(NB * sizeof *b2);
    for (uint32_t i = 0; i < NH; i++) h[i] = k.h[i % k.n_h];
    for (uint32_t i = 0; i < NA; i++) a[i] = k.a[(i * 7) % k.n_a];
    for (uint32_t i = 0; i < NB; i++) b1[i] = k.b_g1[i % k.n_b_g1], b2[i] = k.b_g2[(i * 3) % k.n_b_g2];
    zp_bkey_view_t v = view_of(&k);
    v.h = h, v.n_h = NH, v.a = a, v.n_a = NA, v.b_g1 = b1, v.n_b_g1 = NB, v.b_g2 = b2, v.n_b_g2 = NB;
    int rc = zp_bkey_write(path, &v, false);
    zp_bkey_close(&k);
    free(h), free(a), free(b1), free(b2);
    return rc ? NULL : (uint8_t *)test_slurp(path, len);
}

static int parse_threads(zp_bkey_t *k, const uint8_t *img, size_t len, unsigned threads, zp_pool_t *pool,
                         uint8_t **conv)
{
    *conv = dup8(img, len, 0);
    zp_bkey_opts_t o = {.threads = threads, .pool = pool};
    return zp_bkey_parse_opts(k, *conv, len, "big.params", &o);
}

/* the pool path converts exactly as one thread does, and names the same (smallest) bad point */
static void test_parallel(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/big.params", tmpdir);
    size_t len;
    uint8_t *img = tiled_params(&len, path);
    CHECK(img != NULL);
    if (!img) return;
    zp_pool_t *pool3 = zp_pool_new(3);
    zp_bkey_t k1, k3;
    uint8_t *c1, *c3;
    CHECK(parse_threads(&k1, img, len, 1, NULL, &c1) == 0);
    CHECK(parse_threads(&k3, img, len, 0, pool3, &c3) == 0);
    CHECK(k1.n_h == 3000 && k3.n_a == 2100 && k3.n_b_g2 == 2100 && k3.subgroup == ZP_BKEY_SG_CHECKED);
    CHECK(!memcmp(c1, c3, len));
    /* the file opened on a pool of its own: the same arrays */
    zp_bkey_t kf;
    zp_bkey_opts_t o2 = {.threads = 2};
    CHECK(zp_bkey_open_opts(&kf, path, &o2) == 0);
    CHECK(kf.f.size == len && !memcmp(kf.f.map, c1, len));
    zp_bkey_close(&kf);
    free(c1), free(c3);
    /* two bad points of one section in different chunks, the later one found first by
     * some thread: every thread count names the earlier */
    zp_g1a_bls12_381_t off1;
    uint8_t pt[192];
    g1_off_subgroup(&off1);
    zp_bls_g1_to_uncompressed(pt, &off1);
    uint8_t *bad = dup8(img, len, 0);
    uint64_t h0 = k1.sec[ZP_BSEC_H].file_off, a0 = k1.sec[ZP_BSEC_A].file_off;
    memcpy(bad + h0 + 96 * 2900, pt, 96);
    memset(bad + h0 + 96 * 1500, 0, 96);
    bad[h0 + 96 * 1500] = 0x40;
    memcpy(bad + a0 + 96 * 17, pt, 96);
    for (unsigned t = 1; t <= 4; t++) {
        zp_pool_t *p = t > 1 ? zp_pool_new(t) : NULL;
        zp_bkey_t kb;
        uint8_t *cb;
        int rc = parse_threads(&kb, bad, len, 1, p, &cb);
        CHECK(rc == ZP_EFORMAT && strstr(zp_err_msg(), "big.params: h[1500]") && strstr(zp_err_msg(), "point at infinity"));
        free(cb);
        memset(bad + h0 + 96 * 1500, 0, 96);   /* now h[2900] (subgroup) comes first */
        memcpy(bad + h0 + 96 * 1500, img + h0 + 96 * 1500, 96);
        rc = parse_threads(&kb, bad, len, 1, p, &cb);
        CHECK(rc == ZP_EFORMAT && strstr(zp_err_msg(), "h[2900]") && strstr(zp_err_msg(), "subgroup"));
        free(cb);
        memset(bad + h0 + 96 * 1500, 0, 96);
        bad[h0 + 96 * 1500] = 0x40;
        zp_pool_destroy(&p);
    }
    free(bad);
    zp_bkey_close(&k1);
    zp_bkey_close(&k3);
    zp_pool_destroy(&pool3);
    free(img);
    unlink(path);
}

static int count_records(const char *dir, char *one, size_t cap)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".check") && !strchr(e->d_name, 'X')) {
            n++;
            snprintf(one, cap, "%s/%s", dir, e->d_name);
        }
    closedir(d);
    return n;
}

/* the check record: written after a full check of a file older than 1 s, trusted while the
 * file's inode, size, times and vk block are the same, ignored in a dir others can write */
static void test_record(void)
{
    char path[600], rdir[600], rec[900];
    snprintf(path, sizeof path, "%s/rec.params", tmpdir);
    snprintf(rdir, sizeof rdir, "%s/keycheck", tmpdir);
    char pp[512];
    path_of(pp, sizeof pp, "chain300", "circuit.params");
    size_t len;
    uint8_t *img = (uint8_t *)test_slurp(pp, &len);
    FILE *cf = img ? fopen(path, "wb") : NULL;
    CHECK(cf && fwrite(img, 1, len, cf) == len);
    if (cf) fclose(cf);
    if (!img) return;
    zp_bkey_t k;
    zp_bkey_opts_t o = {.flags = ZP_BKEY_USE_RECORD, .threads = 2, .record_dir = rdir};
    /* just written: no record (a change within the same timestamp tick would go unseen) */
    CHECK(zp_bkey_open_opts(&k, path, &o) == 0);
    CHECK(k.subgroup == ZP_BKEY_SG_CHECKED && !k.record_written && strstr(k.record_note, "less than 1 s"));
    zp_bkey_close(&k);
    CHECK(count_records(rdir, rec, sizeof rec) == 0);
    struct timespec ts = {1, 100000000};
    nanosleep(&ts, NULL);
    CHECK(zp_bkey_open_opts(&k, path, &o) == 0);
    CHECK(k.subgroup == ZP_BKEY_SG_CHECKED && k.record_written && !k.record_note[0]);
    zp_bkey_close(&k);
    CHECK(count_records(rdir, rec, sizeof rec) == 1);
    struct stat st;
    CHECK(stat(rec, &st) == 0 && (st.st_mode & 077) == 0);
    /* next open: trusted; the arrays are the same */
    zp_bkey_t full;
    CHECK(zp_bkey_open(&full, path, 0) == 0);
    CHECK(zp_bkey_open_opts(&k, path, &o) == 0);
    CHECK(k.subgroup == ZP_BKEY_SG_RECORD && !k.record_written);
    CHECK(k.f.size == full.f.size && !memcmp(k.f.map, full.f.map, k.f.size));
    zp_bkey_close(&k);
    zp_bkey_close(&full);
    zp_bkey_opts_t ov = o;   /* a vk-only open is covered by the whole file's record */
    ov.flags |= ZP_BKEY_VK_ONLY;
    CHECK(zp_bkey_open_opts(&k, path, &ov) == 0 && k.subgroup == ZP_BKEY_SG_RECORD);
    zp_bkey_close(&k);
    zp_bkey_opts_t orc = o;   /* --recheck: checked fully, record written again */
    orc.flags |= ZP_BKEY_RECHECK;
    CHECK(zp_bkey_open_opts(&k, path, &orc) == 0 && k.subgroup == ZP_BKEY_SG_CHECKED && k.record_written);
    zp_bkey_close(&k);
    /* the env names the default dir */
    char edir[600], rec2[900];
    snprintf(edir, sizeof edir, "%s/envcheck", tmpdir);
    setenv("ZKPIPE_KEYCHECK_DIR", edir, 1);
    CHECK(zp_bkey_open(&k, path, ZP_BKEY_USE_RECORD) == 0 && k.record_written);
    zp_bkey_close(&k);
    CHECK(zp_bkey_open(&k, path, ZP_BKEY_USE_RECORD) == 0 && k.subgroup == ZP_BKEY_SG_RECORD);
    zp_bkey_close(&k);
    CHECK(count_records(edir, rec2, sizeof rec2) == 1);
    unlink(rec2);
    rmdir(edir);
    unsetenv("ZKPIPE_KEYCHECK_DIR");
    /* a record with other content (another file, a forged line): checked again */
    FILE *f = fopen(rec, "w");
    if (f) { fputs("zkpipe-bellman-check 1 scope=params dev=1 ino=2\n", f); fclose(f); }
    CHECK(zp_bkey_open_opts(&k, path, &o) == 0 && k.subgroup == ZP_BKEY_SG_CHECKED && strstr(k.record_note, "another file"));
    zp_bkey_close(&k);
    /* a dir others can write: neither read nor written */
    chmod(rdir, 0777);
    CHECK(zp_bkey_open_opts(&k, path, &o) == 0 && k.subgroup == ZP_BKEY_SG_CHECKED && !k.record_written &&
          strstr(k.record_note, "not writable by others"));
    zp_bkey_close(&k);
    chmod(rdir, 0700);
    CHECK(zp_bkey_open_opts(&k, path, &o) == 0 && k.subgroup == ZP_BKEY_SG_RECORD);
    zp_bkey_close(&k);
    /* the file changed in place (ctime moves): a point outside the subgroup is found */
    zp_g2a_bls12_381_t off2;
    uint8_t pt[192];
    g2_off_subgroup(&off2);
    zp_bls_g2_to_uncompressed(pt, &off2);
    CHECK(zp_bkey_open(&full, path, ZP_BKEY_NO_SUBGROUP) == 0);
    uint64_t at = full.sec[ZP_BSEC_B_G2].file_off + 192 * 200;
    zp_bkey_close(&full);
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0 && pwrite(fd, pt, 192, (off_t)at) == 192);
    if (fd >= 0) close(fd);
    CHECK(zp_bkey_open_opts(&k, path, &o) == ZP_EFORMAT && strstr(zp_err_msg(), "b_g2[200]") &&
          strstr(zp_err_msg(), "subgroup"));
    /* memory has no inode: the flag is ignored, the check runs */
    zp_bkey_opts_t om = o;
    uint8_t *m = dup8(img, len, 0);
    memcpy(m + at, pt, 192);
    CHECK(zp_bkey_parse_opts(&k, m, len, "mem.params", &om) == ZP_EFORMAT && strstr(zp_err_msg(), "b_g2[200]"));
    free(m);
    unlink(rec);
    rmdir(rdir);
    unlink(path);
    free(img);
}

static void test_bad(void)
{
    char pp[512];
    path_of(pp, sizeof pp, "chain300", "circuit.params");
    size_t len;
    uint8_t *good = (uint8_t *)test_slurp(pp, &len);
    CHECK(good != NULL);
    if (!good) return;
    zp_bkey_t k;
    uint8_t *cp = dup8(good, len, 0);
    CHECK(zp_bkey_parse(&k, cp, len, "good.params", 0) == 0);
    zp_bsec_t sec[ZP_BSEC_N];
    memcpy(sec, k.sec, sizeof sec);
    free(cp);
    uint8_t cnt[4], pt[192];

    /* truncations: inside the header, inside a count, inside each section's points */
    BAD(good, len, 0, NULL, 0, 0, 0, ZP_EFORMAT, "alpha_g1: truncated");
    BAD(good, len, 0, NULL, 0, 500, 0, ZP_EFORMAT, "gamma_g2: truncated");
    BAD(good, len, 0, NULL, 0, ZP_BVK_HEAD_BYTES - 1, 0, ZP_EFORMAT, "delta_g2: truncated");
    BAD(good, len, 0, NULL, 0, ZP_BVK_HEAD_BYTES + 2, 0, ZP_EFORMAT, "ic: truncated");
    for (int s = 0; s < ZP_BSEC_N; s++) {
        BAD(good, len, 0, NULL, 0, sec[s].count_off + 2, 0, ZP_EFORMAT, zp_bsec_name(s), "truncated");
        BAD(good, len, 0, NULL, 0, sec[s].file_off + 100, 0, ZP_EFORMAT, zp_bsec_name(s), "needs");
    }
    BAD(good, len, 0, NULL, 0, len - 1, 0, ZP_EFORMAT, "b_g2", "needs");
    /* a .vk-only read of a .params cut after its IC block succeeds */
    {
        uint8_t *b = dup8(good, len, 0);
        CHECK(zp_bkey_parse(&k, b, sec[ZP_BSEC_H].count_off, "vk.params", ZP_BKEY_VK_ONLY) == 0);
        free(b);
    }
    /* counts that overflow or disagree with the size: 2^32-1 points (64-bit products), one too many */
    be32_put(cnt, 0xffffffffu);
    for (int s = 0; s < ZP_BSEC_N; s++)
        BAD(good, len, sec[s].count_off, cnt, 4, len, 0, ZP_EFORMAT, zp_bsec_name(s), "count 4294967295");
    be32_put(cnt, sec[ZP_BSEC_B_G2].n + 1);
    BAD(good, len, sec[ZP_BSEC_B_G2].count_off, cnt, 4, len, 0, ZP_EFORMAT, "b_g2", "count 301 needs 57792 bytes");
    be32_put(cnt, sec[ZP_BSEC_L].n + 1); /* l runs into a's count: l[302] is garbage */
    BAD(good, len, sec[ZP_BSEC_L].count_off, cnt, 4, len, 0, ZP_EFORMAT, "l[302]");
    be32_put(cnt, sec[ZP_BSEC_H].n - 1); /* fewer h points: the rest then misreads as counts */
    BAD(good, len, sec[ZP_BSEC_H].count_off, cnt, 4, len, 0, ZP_EFORMAT, "bad.params");

    /* identity points: refused in every array, accepted in the six header points (as bellman) */
    memset(pt, 0, sizeof pt);
    pt[0] = 0x40;
    for (int s = 0; s < ZP_BSEC_N; s++)
        BAD(good, len, sec[s].file_off + (s == ZP_BSEC_B_G2 ? 192 : 96), pt, s == ZP_BSEC_B_G2 ? 192 : 96, len,
            0, ZP_EFORMAT, s == ZP_BSEC_IC ? "ic[1]" : zp_bsec_name(s), "point at infinity");
    {
        uint8_t *b = dup8(good, len, 0);
        memcpy(b, pt, 96); /* alpha_g1 = identity */
        CHECK(zp_bkey_parse(&k, b, len, "inf.params", 0) == 0 && zp_g1a_bls12_381_is_inf(&k.alpha_g1));
        free(b);
    }
    /* infinity flag with a non-zero coordinate; compression / sort flags in an uncompressed point */
    memcpy(pt, good + sec[ZP_BSEC_A].file_off, 96);
    pt[0] |= 0x40;
    BAD(good, len, sec[ZP_BSEC_A].file_off, pt, 96, len, 0, ZP_EFORMAT, "a[0]", "infinity flag");
    memcpy(pt, good + sec[ZP_BSEC_A].file_off, 96);
    pt[0] |= 0x80;
    BAD(good, len, sec[ZP_BSEC_A].file_off, pt, 96, len, 0, ZP_EFORMAT, "a[0]", "compression flag");
    memcpy(pt, good + 96, 96);
    pt[0] |= 0x20;
    BAD(good, len, 96, pt, 96, len, 0, ZP_EFORMAT, "beta_g1", "sort flag");
    /* coordinates >= p */
    memset(pt, 0xff, 96);
    pt[0] = 0x1f;
    BAD(good, len, sec[ZP_BSEC_L].file_off + 96 * 5, pt, 96, len, 0, ZP_EFORMAT, "l[5]", "x is not below");
    memcpy(pt, good + sec[ZP_BSEC_B_G2].file_off, 192);
    memset(pt + 96, 0xff, 48);
    pt[96] = 0x1f;
    BAD(good, len, sec[ZP_BSEC_B_G2].file_off, pt, 192, len, 0, ZP_EFORMAT, "b_g2[0]", "y.c1 is not below");
    /* flag-like top bits in y (found by fuzz_bellman): y >= 2^381 > p, refused, not masked */
    memcpy(pt, good + sec[ZP_BSEC_A].file_off + 96 * 7, 96);
    pt[48] |= 0x80;
    BAD(good, len, sec[ZP_BSEC_A].file_off + 96 * 7, pt, 96, len, 0, ZP_EFORMAT, "a[7]", "y is not below");
    memcpy(pt, good + sec[ZP_BSEC_B_G2].file_off, 192);
    pt[48] |= 0x20;
    BAD(good, len, sec[ZP_BSEC_B_G2].file_off, pt, 192, len, 0, ZP_EFORMAT, "b_g2[0]", "x.c0 is not below");
    /* off the curve */
    memcpy(pt, good + sec[ZP_BSEC_H].file_off + 96 * 7, 96);
    pt[95] ^= 1;
    BAD(good, len, sec[ZP_BSEC_H].file_off + 96 * 7, pt, 96, len, 0, ZP_EFORMAT, "h[7]", "not on the curve");
    memcpy(pt, good + 96 * 2, 192); /* beta_g2 */
    pt[191] ^= 1;
    BAD(good, len, 96 * 2, pt, 192, len, 0, ZP_EFORMAT, "beta_g2", "not on the curve");
    /* on the curve, outside the subgroup: refused at import, accepted with ZP_BKEY_NO_SUBGROUP */
    zp_g1a_bls12_381_t q1;
    zp_g2a_bls12_381_t q2;
    g1_off_subgroup(&q1);
    g2_off_subgroup(&q2);
    CHECK(zp_g1a_bls12_381_on_curve(&q1) && zp_g2a_bls12_381_on_curve(&q2));
    zp_bls_g1_to_uncompressed(pt, &q1);
    BAD(good, len, sec[ZP_BSEC_B_G1].file_off + 96 * 3, pt, 96, len, 0, ZP_EFORMAT, "b_g1[3]", "subgroup");
    BAD(good, len, sec[ZP_BSEC_IC].file_off, pt, 96, len, 0, ZP_EFORMAT, "ic[0]", "subgroup");
    BAD(good, len, 96 * 2 + 192 * 2, pt, 96, len, 0, ZP_EFORMAT, "delta_g1", "subgroup");
    BAD(good, len, sec[ZP_BSEC_B_G1].file_off + 96 * 3, pt, 96, len, ZP_BKEY_NO_SUBGROUP, 0, NULL);
    zp_bls_g2_to_uncompressed(pt, &q2);
    BAD(good, len, sec[ZP_BSEC_B_G2].file_off + 192 * 9, pt, 192, len, 0, ZP_EFORMAT, "b_g2[9]", "subgroup");
    BAD(good, len, 96 * 2 + 192, pt, 192, len, 0, ZP_EFORMAT, "gamma_g2", "subgroup");
    /* the endomorphism checks agree with [r] P = 0 on points in and out of the subgroups */
    for (int i = 0; i < 12; i++) {
        zp_scalar_t sc = {{rnd_u64(), rnd_u64(), rnd_u64(), rnd_u64() >> 2}};
        zp_g1a_bls12_381_t g, o1 = q1;
        zp_g1_bls12_381_t j;
        zp_g1_bls12_381_generator(&g);
        zp_g1_bls12_381_from_affine(&j, i & 1 ? &g : &q1);
        zp_g1_bls12_381_mul(&j, &j, &sc);
        zp_g1_bls12_381_to_affine(&o1, &j);
        CHECK(zp_bls_g1_torsion_free(&o1) == zp_g1a_bls12_381_in_subgroup(&o1));
        CHECK(zp_bls_g1_torsion_free(&o1) == (i & 1));
        zp_g2a_bls12_381_t h, o2;
        zp_g2_bls12_381_t j2;
        zp_g2_bls12_381_generator(&h);
        zp_g2_bls12_381_from_affine(&j2, i & 1 ? &h : &q2);
        zp_g2_bls12_381_mul(&j2, &j2, &sc);
        zp_g2_bls12_381_to_affine(&o2, &j2);
        CHECK(zp_bls_g2_torsion_free(&o2) == zp_g2a_bls12_381_in_subgroup(&o2));
        CHECK(zp_bls_g2_torsion_free(&o2) == (i & 1));
    }
    /* uncompressed round trip of those points */
    zp_g2a_bls12_381_t r2;
    CHECK(zp_bls_g2_from_uncompressed(&r2, pt, false) == 0 && !memcmp(&r2, &q2, sizeof r2));
    /* a buffer that is not 8-aligned is refused, not misread */
    uint8_t *b = dup8(good, len, 8);
    memmove(b + 4, b, len);
    CHECK(zp_bkey_parse(&k, b + 4, len, "odd.params", 0) == -EINVAL);
    free(b);
    /* files: missing, empty, a directory */
    char p2[600];
    snprintf(p2, sizeof p2, "%s/empty.params", tmpdir);
    FILE *f = fopen(p2, "wb");
    if (f) fclose(f);
    CHECK(zp_bkey_open(&k, p2, 0) == ZP_EFORMAT && strstr(zp_err_msg(), "empty.params") && strstr(zp_err_msg(), "truncated"));
    unlink(p2);
    CHECK(zp_bkey_open(&k, "/nonexistent/x.params", 0) == -ENOENT);
    CHECK(zp_bkey_open(&k, tmpdir, 0) == ZP_EFORMAT);
    free(good);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_bfmt.XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) test_fixture(&fixtures[i]);
    test_bad();
    test_cofactor_orders();
    test_parallel();
    test_record();
    rmdir(tmpdir);
    if (failures) fprintf(stderr, "test_bfmt: %d failures\n", failures);
    else printf("test_bfmt: ok\n");
    return failures != 0;
}
