/* test_ntt.c - NTT (lib/ntt) on both curves: roots of unity, forward/inverse against a naive
 * O(n^2) DFT, round trips up to 2^16, coset transforms against direct polynomial evaluation,
 * every schedule path (tiny blocks and tiles) and thread counts 1..3 giving identical bytes,
 * table contents and size (zp_ntt_<C>_domain_bytes).
 * Prints the time of 2^16 and 2^20 transforms (informational only, never asserted).
 * The curve-specific part below the #else is included twice (self-include, TC = curve). */
#ifndef TC
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ff/ff.h"
#include "lib/ntt/ntt.h"
#include "lib/ntt/ntt_int.h"
#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); exit(1); } } while (0)
#define CAT3_(a, b, c) a##b##c
#define XCAT3(a, b, c) CAT3_(a, b, c)
#define STR_(a) #a
#define XSTR(a) STR_(a)

/* deterministic generator (splitmix64) so failures reproduce */
static int det_rnd(void *ctx, void *buf, size_t len)
{
    uint64_t *s = ctx;
    unsigned char *b = buf;
    for (size_t i = 0; i < len; i++) {
        if (i % 8 == 0) {
            uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            memcpy(b + i, &z, len - i < 8 ? len - i : 8);
        }
    }
    return 0;
}

static uint64_t seed = 12345;
static zp_pool_t *pools[4];  /* pools[t] has t threads (pools[0] unused) */

#define TC bn254
#define TC_S ZP_FR_BN254_TWO_ADICITY
#include "test_ntt.c"
#undef TC
#undef TC_S
#define TC bls12_381
#define TC_S ZP_FR_BLS12_381_TWO_ADICITY
#include "test_ntt.c"
#undef TC
#undef TC_S

int main(void)
{
    for (unsigned t = 1; t <= 3; t++) CHECK((pools[t] = zp_pool_new(t)) != NULL);
    /* every test on the default path (vector where the CPU has AVX-512 IFMA), then, where
     * that was the vector path, on the scalar one */
    bool vec = zp_ntt_vector();
    test_bn254();
    test_bls12_381();
    if (vec) {
        zp_ntt_set_vector(false);
        test_bn254();
        test_bls12_381();
        zp_ntt_set_vector(true);
    }
    zp_pool_t *all = zp_pool_new(0);
    CHECK(all != NULL);
    bench_bn254(all);
    bench_bls12_381(all);
    zp_pool_destroy(&all);
    for (unsigned t = 1; t <= 3; t++) zp_pool_destroy(&pools[t]);
    printf("ntt: ok\n");
    return 0;
}

#else /* ---- per-curve part ---- */
#define FT XCAT3(zp_fr_, TC, _t)
#define FN(x) XCAT3(zp_fr_, TC, _##x)
#define NN(x) XCAT3(zp_ntt_, TC, _##x)
#define DT XCAT3(zp_ntt_, TC, _domain_t)
#define TN(x) XCAT3(x, _, TC)

static FT *TN(rand_vec)(size_t n)
{
    FT *v = malloc((n ? n : 1) * sizeof(FT));
    CHECK(v);
    for (size_t i = 0; i < n; i++) FN(random)(&v[i], det_rnd, &seed);
    return v;
}

static bool TN(vec_eq)(const FT *a, const FT *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!FN(eq)(&a[i], &b[i])) return false;
    return true;
}

/* X_j = sum_k x_k w^(jk), computed independently of the library tables */
static void TN(naive_dft)(FT *out, const FT *x, size_t n, const FT *w)
{
    FT wj = FN(one);
    for (size_t j = 0; j < n; j++) {
        FT acc, p = FN(one), t;
        memset(&acc, 0, sizeof acc);
        for (size_t k = 0; k < n; k++) {
            FN(mul)(&t, &x[k], &p);
            FN(add)(&acc, &acc, &t);
            FN(mul)(&p, &p, &wj);
        }
        out[j] = acc;
        FN(mul)(&wj, &wj, w);
    }
}

static void TN(test_roots)(void)
{
    FT one = FN(one), minus1, t;
    FN(neg)(&minus1, &one);
    CHECK(FN(eq)(FN(root)(0), &one));
    CHECK(FN(eq)(FN(root)(1), &minus1));
    for (unsigned k = 0; k <= TC_S; k++) {
        t = *FN(root)(k);
        for (unsigned i = 0; i < k; i++) {
            if (i + 1 == k) CHECK(FN(eq)(&t, &minus1)); /* primitive: w^(2^(k-1)) = -1 */
            FN(sqr)(&t, &t);
        }
        CHECK(FN(eq)(&t, &one));
        if (k < TC_S) {
            FN(sqr)(&t, FN(root)(k + 1));
            CHECK(FN(eq)(&t, FN(root)(k)));
        }
    }
    DT d;
    CHECK(NN(domain_init)(&d, TC_S + 1) == ZP_ETOOBIG);
    for (unsigned L = 0; L <= 12; L++) {
        CHECK(NN(domain_init)(&d, L) == 0);
        CHECK(d.n == ((size_t)1 << L));
        FT nn;
        FN(set_u64)(&nn, d.n);
        FN(mul)(&nn, &nn, &d.n_inv);
        CHECK(FN(eq)(&nn, &one));
        size_t half = d.n / 2;
        if (L > 0) CHECK(FN(eq)(&d.roots[half], &minus1)); /* the inverse's mirror entry */
        for (size_t k = 0; k < half; k++) {
            /* w^-k = -roots[n/2 - k], what the inverse transform reads */
            FN(mul)(&t, &d.roots[k], &d.roots[half - k]);
            CHECK(FN(eq)(&t, &minus1));
            FN(mul)(&t, &d.roots[k], FN(root)(L));
            CHECK(FN(eq)(&t, &d.roots[k + 1]));
        }
        /* memory: n/2 + 1 roots, plus 2^(blk-1) + 1 phase-1 twiddles when n > 2^blk */
        size_t want = L ? (half + 1) * sizeof(FT) : 0;
        CHECK(NN(domain_bytes)(&d) == want);
        NN(domain_close)(&d);
        CHECK(d.roots == NULL && NN(domain_bytes)(&d) == 0);
        if (L >= 2) {
            unsigned blk = L - 1;  /* forces the separate phase-1 table */
            CHECK(NN(domain_init_tuned)(&d, L, NULL, blk, 1) == 0);
            size_t bh = (size_t)1 << (blk - 1);
            CHECK(d.tw != NULL);
            for (size_t q = 0; q <= bh; q++) CHECK(FN(eq)(&d.tw[q], &d.roots[q << 1]));
            CHECK(NN(domain_bytes)(&d) == (half + 1 + bh + 1) * sizeof(FT));
            NN(domain_close)(&d);
        }
    }
    /* the default schedule at 2^20: 2^19 + 1 roots and 2^12 + 1 phase-1 twiddles, i.e.
     * about half of the former n/2 + n/2 (+ 2 x 2^12) elements */
    CHECK(NN(domain_init)(&d, 20) == 0);
    CHECK(NN(domain_bytes)(&d) == (((size_t)1 << 19) + 1 + ((size_t)1 << (ZP_NTT_BLK_LOG - 1)) + 1) * sizeof(FT));
    CHECK(NN(domain_bytes)(&d) < ((size_t)1 << 20) * sizeof(FT) / 2 + ((size_t)1 << ZP_NTT_BLK_LOG) * sizeof(FT));
    NN(domain_close)(&d);
    NN(domain_close)(&d); /* twice: harmless */
}

/* forward and inverse against the naive DFT, for the default and tiny schedules */
static void TN(test_naive)(void)
{
    static const unsigned sched[][2] = {{ZP_NTT_BLK_LOG, ZP_NTT_TILE_LOG - 4}, {1, 1}, {1, 2}, {2, 1}, {2, 3}, {3, 2}, {3, 7}};
    for (unsigned L = 0; L <= 8; L++) {
        size_t n = (size_t)1 << L;
        FT *x = TN(rand_vec)(n), *ref = TN(rand_vec)(n), *y = TN(rand_vec)(n);
        FT winv;
        TN(naive_dft)(ref, x, n, FN(root)(L));
        FN(inv)(&winv, FN(root)(L));
        for (size_t s = 0; s < sizeof sched / sizeof sched[0]; s++) {
            DT d;
            CHECK(NN(domain_init_tuned)(&d, L, NULL, sched[s][0], sched[s][1]) == 0);
            memcpy(y, x, n * sizeof(FT));
            NN(forward)(&d, y, pools[2]);
            CHECK(TN(vec_eq)(y, ref, n));
            NN(inverse)(&d, y, pools[3]);
            CHECK(TN(vec_eq)(y, x, n));
            NN(domain_close)(&d);
        }
        /* inverse against the naive DFT with w^-1 and 1/n */
        DT d;
        CHECK(NN(domain_init)(&d, L) == 0);
        TN(naive_dft)(ref, x, n, &winv);
        for (size_t i = 0; i < n; i++) FN(mul)(&ref[i], &ref[i], &d.n_inv);
        memcpy(y, x, n * sizeof(FT));
        NN(inverse)(&d, y, NULL);
        CHECK(TN(vec_eq)(y, ref, n));
        NN(domain_close)(&d);
        free(x);
        free(ref);
        free(y);
    }
}

/* coset NTT: forward(coset_shift(c, g)) evaluates c(X) at g w^j (snarkjs: g = w[L+1]) */
static void TN(test_coset)(void)
{
    for (unsigned L = 0; L <= 8; L++) {
        size_t n = (size_t)1 << L;
        FT *c = TN(rand_vec)(n), *y = TN(rand_vec)(n);
        const FT *g = FN(root)(L + 1), *w = FN(root)(L);
        DT d;
        CHECK(NN(domain_init)(&d, L) == 0);
        memcpy(y, c, n * sizeof(FT));
        NN(coset_shift)(y, n, g, pools[2]);
        NN(forward)(&d, y, pools[2]);
        FT pt = *g;
        for (size_t j = 0; j < n; j++) {
            FT acc;
            memset(&acc, 0, sizeof acc);
            for (size_t k = n; k-- > 0;) { /* Horner */
                FN(mul)(&acc, &acc, &pt);
                FN(add)(&acc, &acc, &c[k]);
            }
            CHECK(FN(eq)(&acc, &y[j]));
            FN(mul)(&pt, &pt, w);
        }
        NN(domain_close)(&d);
        free(c);
        free(y);
    }
    /* a long coset shift split over threads equals the sequential one */
    size_t n = 100003;
    FT *a = TN(rand_vec)(n), *b = malloc(n * sizeof(FT));
    CHECK(b);
    memcpy(b, a, n * sizeof(FT));
    NN(coset_shift)(a, n, FN(root)(9), NULL);
    NN(coset_shift)(b, n, FN(root)(9), pools[3]);
    CHECK(TN(vec_eq)(a, b, n));
    free(a);
    free(b);
}

/* round trips up to 2^16; thread counts 1..3 and schedules give identical bytes */
static void TN(test_roundtrip)(void)
{
    for (unsigned L = 0; L <= 16; L++) {
        size_t n = (size_t)1 << L;
        FT *x = TN(rand_vec)(n), *y = malloc(n * sizeof(FT));
        CHECK(y);
        DT d;
        CHECK(NN(domain_init)(&d, L) == 0);
        memcpy(y, x, n * sizeof(FT));
        NN(forward)(&d, y, pools[2]);
        if (L >= 1) CHECK(!TN(vec_eq)(x, y, n));
        NN(inverse)(&d, y, pools[2]);
        CHECK(TN(vec_eq)(x, y, n));
        NN(domain_close)(&d);
        free(x);
        free(y);
    }
    static const unsigned sched[][2] = {{ZP_NTT_BLK_LOG, ZP_NTT_TILE_LOG - 4}, {3, 2}, {5, 1}, {12, 1}, {1, 7}};
    for (unsigned L = 12; L <= 15; L++) {
        size_t n = (size_t)1 << L;
        FT *x = TN(rand_vec)(n), *ref = malloc(n * sizeof(FT)), *y = malloc(n * sizeof(FT));
        CHECK(ref && y);
        for (size_t s = 0; s < sizeof sched / sizeof sched[0]; s++) {
            DT d;
            CHECK(NN(domain_init_tuned)(&d, L, pools[2], sched[s][0], sched[s][1]) == 0);
            for (unsigned t = 1; t <= 3; t++) {
                memcpy(y, x, n * sizeof(FT));
                NN(forward)(&d, y, pools[t]);
                if (s == 0 && t == 1) memcpy(ref, y, n * sizeof(FT));
                else CHECK(memcmp(ref, y, n * sizeof(FT)) == 0);
                NN(inverse)(&d, y, pools[t]);
                CHECK(memcmp(x, y, n * sizeof(FT)) == 0);
            }
            NN(domain_close)(&d);
        }
        /* spot-check one output of the large transform against a direct sum */
        size_t j = 12345 % n;
        FT acc, p = FN(one), wj, t;
        memset(&acc, 0, sizeof acc);
        FN(pow)(&wj, FN(root)(L), (const uint64_t[]){j}, 1);
        for (size_t k = 0; k < n; k++) {
            FN(mul)(&t, &x[k], &p);
            FN(add)(&acc, &acc, &t);
            FN(mul)(&p, &p, &wj);
        }
        CHECK(FN(eq)(&acc, &ref[j]));
        free(x);
        free(ref);
        free(y);
    }
}

/* (session 17) the vector butterflies give the scalar path's bytes: every schedule (tiny blocks
 * and tiles: stages with half-spans 1..4 stay scalar, 8 up vector), edge values (0, 1, p - 1,
 * p - 2 as raw words) among random ones, forward and inverse, coset shift around them */
static void TN(test_paths)(void)
{
    bool had = zp_ntt_vector();
    if (!zp_ntt_set_vector(true)) {
        zp_ntt_set_vector(had);
        printf("ntt %s: no AVX-512 IFMA here: vector path not tested\n", XSTR(TC));
        return;
    }
    static const unsigned sched[][2] = {{ZP_NTT_BLK_LOG, ZP_NTT_TILE_LOG - 4}, {1, 1}, {3, 2}, {4, 3}, {5, 1}, {12, 1}, {1, 7}};
    const FT *p = &FN(modulus);
    for (unsigned L = 1; L <= 14; L += (L < 6 ? 1 : 4)) {
        size_t n = (size_t)1 << L;
        FT *x = TN(rand_vec)(n), *v = malloc(n * sizeof(FT)), *s = malloc(n * sizeof(FT));
        CHECK(v && s);
        for (size_t i = 0; i < n; i += 5) {
            memset(&x[i], 0, sizeof x[i]);
            if (i % 4 == 1) x[i].l[0] = 1;
            if (i % 4 >= 2) {
                x[i] = *p;
                x[i].l[0] -= i % 4 == 2 ? 1 : 2;   /* p - 1, p - 2 (p is odd: no borrow) */
            }
        }
        for (size_t si = 0; si < sizeof sched / sizeof sched[0]; si++) {
            DT d;
            CHECK(NN(domain_init_tuned)(&d, L, pools[2], sched[si][0], sched[si][1]) == 0);
            for (int inv = 0; inv < 2; inv++) {
                memcpy(v, x, n * sizeof(FT));
                memcpy(s, x, n * sizeof(FT));
                zp_ntt_set_vector(true);
                if (inv) NN(inverse)(&d, v, pools[2]);
                else NN(forward)(&d, v, pools[2]);
                zp_ntt_set_vector(false);
                if (inv) NN(inverse)(&d, s, pools[2]);
                else NN(forward)(&d, s, pools[2]);
                if (memcmp(v, s, n * sizeof(FT))) {
                    fprintf(stderr, "ntt %s 2^%u schedule %u/%u %s: vector and scalar differ\n", XSTR(TC), L,
                            sched[si][0], sched[si][1], inv ? "inverse" : "forward");
                    exit(1);
                }
            }
            NN(domain_close)(&d);
        }
        free(x);
        free(v);
        free(s);
    }
    /* the coset shift (x[k] *= g^k): vector and scalar, one thread and three (slices start
     * at odd k), a length that leaves a tail */
    size_t n = 100003;
    FT *a = TN(rand_vec)(n), *b = malloc(n * sizeof(FT)), *c = malloc(n * sizeof(FT));
    CHECK(b && c);
    memcpy(b, a, n * sizeof(FT));
    memcpy(c, a, n * sizeof(FT));
    zp_ntt_set_vector(true);
    NN(coset_shift)(a, n, FN(root)(9), NULL);
    NN(coset_shift)(b, n, FN(root)(9), pools[3]);
    zp_ntt_set_vector(false);
    NN(coset_shift)(c, n, FN(root)(9), pools[2]);
    if (memcmp(a, c, n * sizeof(FT)) || memcmp(b, c, n * sizeof(FT))) {
        fprintf(stderr, "ntt %s: vector and scalar coset shifts differ\n", XSTR(TC));
        exit(1);
    }
    free(a);
    free(b);
    free(c);
    zp_ntt_set_vector(had);
    printf("ntt %s: vector and scalar butterflies and coset shifts agree (2^1..2^14, 7 schedules, edge values)\n", XSTR(TC));
}

static void TN(test)(void)
{
    TN(test_paths)();
    TN(test_roots)();
    TN(test_naive)();
    TN(test_coset)();
    TN(test_roundtrip)();
    printf("ntt %s: roots, naive DFT 2^0..2^8, coset, round trips to 2^16, threads 1..3: ok\n", XSTR(TC));
}

static void TN(bench)(zp_pool_t *all)
{
    static const unsigned sizes[] = {16, 20};
    for (size_t i = 0; i < 2; i++) {
        unsigned L = sizes[i];
        size_t n = (size_t)1 << L;
        FT *x = TN(rand_vec)(n);
        DT d;
        CHECK(NN(domain_init_pool)(&d, L, all) == 0);
        uint64_t t0 = zp_now_ns();
        NN(forward)(&d, x, NULL);
        uint64_t t1 = zp_now_ns();
        NN(forward)(&d, x, all);
        uint64_t t2 = zp_now_ns();
        NN(inverse)(&d, x, all);
        uint64_t t3 = zp_now_ns();
        printf("ntt %s 2^%u: forward %.1f ms (1 thread), %.1f ms (%u threads); inverse %.1f ms\n",
               XSTR(TC), L, (t1 - t0) / 1e6, (t2 - t1) / 1e6, zp_pool_size(all), (t3 - t2) / 1e6);
        NN(domain_close)(&d);
        free(x);
    }
}

#undef FT
#undef FN
#undef NN
#undef DT
#undef TN
#endif
