/* test_stage_oop.c - issue 10 item 1: the private copies of the GPU worker's CPU backend folded
 * into the compute. The out-of-place transforms and provers give exactly what the old in-place
 * ones gave on copies, and never write their sources; both curves:
 *   - zp_ntt_<C>_forward_from / inverse_from == memcpy + forward / inverse, byte for byte, for
 *     log_n 0..14 (the plain and the tiled bit reversal, the serial and the pooled paths) and
 *     every schedule path (tiny blocks and tiles, as test_ntt runs them), 1-3 threads; the
 *     source untouched; dst == src is in place;
 *   - the CPU backend's compute_h_from (test verb) == compute_h on copies, h bit for bit, for
 *     domains 2^1..2^13; c, a_in, b_in untouched;
 *   - prove_g1_from (production op) == prove_g1 on copies: the same 4 points, for every fixture
 *     in tests/fixtures (both curves), sources untouched; prove_g1_batch with a_in / b_in ==
 *     prove_g1 per job (the worker's --batch path).
 * The curve-specific NTT part below the #else is included twice (self-include, TC = curve). */
#ifndef TC
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ff/ff.h"
#include "lib/fmt/fmt.h"
#include "lib/groth16/backend_test.h"
#include "lib/groth16/groth16.h"
#include "lib/ntt/ntt.h"
#include "lib/ntt/ntt_int.h"
#include "lib/util/util.h"

#define TEST_SEED 424242
#include "tests/test_common.h"   /* the seeded generator (rnd_cb); CHECK redefined with the case's name */
#undef CHECK
#define CHECK(c)                                                                                        \
    do {                                                                                                \
        if (!(c)) {                                                                                     \
            fprintf(stderr, "%s:%d: [%s] CHECK(%s) failed (%s)\n", __FILE__, __LINE__, cur, #c, zp_err_msg()); \
            fails++;                                                                                 \
        }                                                                                               \
    } while (0)
static char cur[160] = "";
#define CAT3_(a, b, c) a##b##c
#define XCAT3(a, b, c) CAT3_(a, b, c)
#define STR_(a) #a
#define XSTR(a) STR_(a)

static zp_pool_t *pools[4];   /* pools[t]: t threads; pools[0] = NULL (the caller only) */

#define TC bn254
#include "test_stage_oop.c"
#undef TC
#define TC bls12_381
#include "test_stage_oop.c"
#undef TC

/* ---- the CPU backend: compute_h_from against compute_h on copies (a key of one domain size:
 * compute_h reads only the curve, log_n and domain_size) */
static void random_vec(zp_curve_id_t c, zp_scalar_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (c == ZP_CURVE_BN254) zp_fr_bn254_random((zp_fr_bn254_t *)&v[i], rnd_cb, NULL);
        else zp_fr_bls12_381_random((zp_fr_bls12_381_t *)&v[i], rnd_cb, NULL);
    }
}

static void test_compute_h(zp_curve_id_t curve)
{
    const zp_backend_test_ops_t *to = zp_backend_cpu_test_ops();
    zp_backend_cfg_t cfg = {.threads = 2};
    zp_backend_t *be = NULL;
    CHECK(to->compute_h_from != NULL);
    CHECK(zp_backend_cpu.open(&be, &cfg) == 0);
    if (!be || !to->compute_h_from) return;
    for (unsigned L = 1; L <= 13; L++) {
        size_t n = (size_t)1 << L, nb = n * sizeof(zp_scalar_t);
        snprintf(cur, sizeof cur, "compute_h_from %s 2^%u", curve == ZP_CURVE_BN254 ? "bn254" : "bls12_381", L);
        zp_g16_key_t k = {.curve = curve, .log_n = L, .domain_size = (uint32_t)n};
        zp_scalar_t *src = malloc(3 * nb), *keep = malloc(3 * nb), *cp = malloc(3 * nb), *h0 = malloc(nb),
                    *wk = malloc(3 * nb);
        CHECK(src && keep && cp && h0 && wk);
        if (!src || !keep || !cp || !h0 || !wk) return;
        random_vec(curve, src, 3 * n);
        memcpy(keep, src, 3 * nb);
        /* the old way: copies of a, b (clobbered), h computed from c */
        memcpy(cp, src, 3 * nb);
        CHECK(to->compute_h(be, &k, cp, cp + n, cp + 2 * n, h0, NULL) == 0);
        /* out of place: the sources are read only */
        memset(wk, 0x5a, 3 * nb);
        CHECK(to->compute_h_from(be, &k, src, src + n, src + 2 * n, wk, wk + n, wk + 2 * n, NULL) == 0);
        CHECK(memcmp(wk + 2 * n, h0, nb) == 0);
        CHECK(memcmp(src, keep, 3 * nb) == 0);
        /* h in c's place (prove_g1's default, zp_g16_prove): the same h */
        memcpy(cp, src, 3 * nb);
        CHECK(to->compute_h(be, &k, cp, cp + n, cp + 2 * n, cp + 2 * n, NULL) == 0);
        CHECK(memcmp(cp + 2 * n, h0, nb) == 0);
        free(src); free(keep); free(cp); free(h0); free(wk);
    }
    zp_backend_cpu.close(&be);
}

/* ---- prove_g1_from against prove_g1 on copies, over a fixture's real key and witness */
static bool g1_eq(zp_curve_id_t c, const zp_g1_any_t *x, const zp_g1_any_t *y)
{
    return c == ZP_CURVE_BN254 ? zp_g1_bn254_eq(&x->bn254, &y->bn254) : zp_g1_bls12_381_eq(&x->bls12_381, &y->bls12_381);
}

static void test_fixture(const char *dir, const char *name)
{
    char p[1200];
    zp_zkey_t z;
    zp_wtns_t wt;
    zp_g16_key_t k;
    zp_backend_t *be = NULL;
    zp_scalar_t *w = NULL;
    zp_backend_cfg_t cfg = {.threads = 2};
    snprintf(cur, sizeof cur, "prove_g1_from %s", name);
    snprintf(p, sizeof p, "%s/circuit.zkey", dir);
    if (zp_zkey_open(&z, p) != 0) { CHECK(!"zkey"); return; }
    CHECK(zp_g16_key_load(&k, &z) == 0);
    snprintf(p, sizeof p, "%s/witness.wtns", dir);
    CHECK(zp_wtns_open(&wt, p) == 0);
    CHECK(zp_g16_witness_load(&w, &wt) == 0);
    zp_wtns_close(&wt);
    CHECK(zp_backend_cpu.open(&be, &cfg) == 0 && zp_backend_cpu.load_key(be, &k) == 0);
    CHECK(zp_backend_cpu.prove_g1_from != NULL);
    size_t n = k.domain_size, nb = n * sizeof(zp_scalar_t);
    zp_scalar_t *v = malloc(3 * nb), *keep = malloc(3 * nb), *cp = malloc(4 * nb), *wk = malloc(3 * nb);
    zp_pool_t *pool = zp_pool_new(2);
    if (w && be && v && keep && cp && wk && pool && zp_backend_cpu.prove_g1_from &&
        zp_g16_synth(&k, w, NULL, v, v + n, v + 2 * n, pool) == 0) {
        memcpy(keep, v, 3 * nb);
        zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM];
        memcpy(cp, v, 3 * nb);   /* the old way: private copies of a, b; h into its own buffer */
        CHECK(zp_backend_cpu.prove_g1(be, &k, w, cp, cp + n, cp + 2 * n, cp + 3 * n, want, NULL) == 0);
        memset(wk, 0xa5, 3 * nb);
        memset(got, 0, sizeof got);
        CHECK(zp_backend_cpu.prove_g1_from(be, &k, w, v, v + n, v + 2 * n, wk, wk + n, wk + 2 * n, got, NULL) == 0);
        for (int i = 0; i < ZP_G16_NMSM; i++) CHECK(g1_eq(k.curve, &got[i], &want[i]));
        CHECK(memcmp(v, keep, 3 * nb) == 0);
        /* the h the H MSM read is the old h, bit for bit */
        CHECK(memcmp(wk + 2 * n, cp + 3 * n, nb) == 0);
        /* --batch: two jobs reading the same intact vectors through a_in / b_in */
        zp_scalar_t *wk2 = malloc(3 * nb);
        CHECK(wk2 != NULL);
        if (wk2) {
            zp_g16_g1_job_t jobs[2];
            for (int j = 0; j < 2; j++) {
                zp_scalar_t *x = j ? wk2 : wk;
                jobs[j] = (zp_g16_g1_job_t){.w = w, .a = x, .b = x + n, .c = v + 2 * n, .h = x + 2 * n,
                                            .a_in = v, .b_in = v + n};
            }
            CHECK(zp_backend_cpu.prove_g1_batch(be, &k, 2, jobs, NULL) == 0);
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < ZP_G16_NMSM; i++) CHECK(g1_eq(k.curve, &jobs[j].out[i], &want[i]));
            CHECK(memcmp(v, keep, 3 * nb) == 0);
            free(wk2);
        }
    } else {
        CHECK(!"setup");
    }
    printf("%-28s %s (domain %zu)\n", cur, "done", n);
    zp_pool_destroy(&pool);
    free(v); free(keep); free(cp); free(wk); free(w);
    if (be) zp_backend_cpu.close(&be);
    zp_g16_key_close(&k);
    zp_zkey_close(&z);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void)
{
    for (unsigned t = 1; t <= 3; t++) CHECK((pools[t] = zp_pool_new(t)) != NULL);
    test_ntt_bn254();
    test_ntt_bls12_381();
    test_compute_h(ZP_CURVE_BN254);
    test_compute_h(ZP_CURVE_BLS12_381);
    const char *root = getenv("ZP_FIXTURES") ? getenv("ZP_FIXTURES") : ZP_FIXTURES_DIR;
    DIR *d = opendir(root);
    char *names[256];
    int nn = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && nn < 256) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s/circuit.zkey", root, e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(p, "rb") : NULL;
        if (f) { fclose(f); names[nn++] = strdup(e->d_name); }
    }
    if (d) closedir(d);
    snprintf(cur, sizeof cur, "fixtures");
    CHECK(nn > 0);   /* the repository's own fixtures: both curves */
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    for (int i = 0; i < nn; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", root, names[i]);
        test_fixture(p, names[i]);
        free(names[i]);
    }
    for (unsigned t = 1; t <= 3; t++) zp_pool_destroy(&pools[t]);
    if (fails) {
        fprintf(stderr, "stage_oop: %d check(s) FAILED\n", fails);
        return 1;
    }
    printf("stage_oop: ok (ntt, compute_h, %d fixtures)\n", nn);
    return 0;
}

#else /* ---- per-curve part: the out-of-place NTTs ---- */
#define FT XCAT3(zp_fr_, TC, _t)
#define FN(x) XCAT3(zp_fr_, TC, _##x)
#define NN(x) XCAT3(zp_ntt_, TC, _##x)
#define DT XCAT3(zp_ntt_, TC, _domain_t)
#define TN(x) XCAT3(x, _, TC)

/* one domain: forward_from / inverse_from against memcpy + in place, on pool */
static void TN(check_domain)(const DT *d, zp_pool_t *pool, const char *what)
{
    size_t n = d->n, nb = n * sizeof(FT);
    FT *src = malloc(nb), *keep = malloc(nb), *a = malloc(nb), *b = malloc(nb);
    CHECK(src && keep && a && b);
    if (!src || !keep || !a || !b) return;
    for (size_t i = 0; i < n; i++) FN(random)(&src[i], rnd_cb, NULL);
    memcpy(keep, src, nb);
    for (int inv = 0; inv < 2; inv++) {
        snprintf(cur, sizeof cur, "%s %s 2^%u %s %u thread(s)", XSTR(TC), inv ? "inverse_from" : "forward_from",
                 d->log_n, what, zp_pool_size(pool));
        memcpy(a, src, nb);
        if (inv) NN(inverse)(d, a, pool);
        else NN(forward)(d, a, pool);
        memset(b, 0x33, nb);
        if (inv) NN(inverse_from)(d, b, src, pool);
        else NN(forward_from)(d, b, src, pool);
        CHECK(memcmp(a, b, nb) == 0);
        CHECK(memcmp(src, keep, nb) == 0);
        /* dst == src: in place */
        memcpy(b, src, nb);
        if (inv) NN(inverse_from)(d, b, b, pool);
        else NN(forward_from)(d, b, b, pool);
        CHECK(memcmp(a, b, nb) == 0);
    }
    free(src); free(keep); free(a); free(b);
}

static void TN(test_ntt)(void)
{
    for (unsigned L = 0; L <= 14; L++) {
        DT d;
        CHECK(NN(domain_init)(&d, L) == 0);
        TN(check_domain)(&d, NULL, "default schedule");
        TN(check_domain)(&d, pools[2], "default schedule");
        NN(domain_close)(&d);
    }
    /* tiny blocks and tiles: every phase-1 / phase-2 path on small transforms */
    for (unsigned L = 9; L <= 13; L += 2)
        for (unsigned blk = 1; blk <= 4; blk++)
            for (unsigned tk = 1; tk <= 3; tk++) {
                DT d;
                CHECK(NN(domain_init_tuned)(&d, L, NULL, blk, tk) == 0);
                for (unsigned t = 1; t <= 3; t++) TN(check_domain)(&d, pools[t], "tuned schedule");
                NN(domain_close)(&d);
            }
}

#undef FT
#undef FN
#undef NN
#undef DT
#undef TN
#endif
