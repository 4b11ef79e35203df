/* test_synth_check.c - the synthesizer's O(n) passes on the pool (lib/groth16/synth.c):
 * for both curves, over INSECURE test keys (testkey.h: constraint i is
 * (s_i + 2 q_i)(s_i + 7) = s_{i+1}, so the first constraint a changed wire breaks is known
 * without our code), with pools of 1..5 threads and none:
 *   - a, b, c are byte-identical whatever the thread count;
 *   - an unsatisfied constraint is reported with the right index (one change, two changes:
 *     the smaller, changes at chunk boundaries and at the last constraint);
 *   - a witness value >= r is reported with its (smallest) index;
 *   - a reused zp_g16_synth_ctx builds its index once per r1cs, rebuilds it for another r1cs,
 *     and notices a tampered (stale) index instead of trusting it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/groth16/groth16.h"
#include "lib/groth16/testkey.h"
#define TEST_SEED 0x5e7c4ec4a11ULL
#include "test_common.h"

#define NPOOL 6   /* NULL, then 1..5 threads */

typedef struct {
    char dir[256];
    zp_zkey_t z;
    zp_g16_key_t k;
    zp_r1cs_t r1;
    zp_scalar_t *w;
    unsigned K, M;
    size_t n;
} key_t_;

static int key_make(key_t_ *x, zp_curve_id_t curve, unsigned power, unsigned K, zp_pool_t *pool)
{
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "/tmp/zp-synthcheck-%d-XXXXXX", (int)getpid());
    if (!mkdtemp(x->dir)) return -1;
    zp_testkey_cfg_t c = {.curve = curve, .power = power, .n_public = K, .n_witness = 1, .write_r1cs = true,
                          .insecure_known_tau = true, .out_dir = x->dir, .has_seed = true, .seed = 7 + power};
    char p[600];
    zp_wtns_t wt;
    if (zp_testkey_write(&c, pool, NULL)) { fprintf(stderr, "testkey: %s\n", zp_err_msg()); return -1; }
    snprintf(p, sizeof p, "%s/circuit.zkey", x->dir);
    if (zp_zkey_open(&x->z, p) || zp_g16_key_load_pool(&x->k, &x->z, NULL, 0, pool)) return -1;
    snprintf(p, sizeof p, "%s/circuit.r1cs", x->dir);
    if (zp_r1cs_open(&x->r1, p)) return -1;
    snprintf(p, sizeof p, "%s/witness.wtns", x->dir);
    if (zp_wtns_open(&wt, p)) return -1;
    int rc = zp_g16_witness_load(&x->w, &wt);
    zp_wtns_close(&wt);
    x->K = K;
    x->M = (1u << power) - K - 1;
    x->n = x->k.domain_size;
    return rc;
}

static void key_free(key_t_ *x)
{
    free(x->w);
    zp_r1cs_close(&x->r1);
    zp_g16_key_close(&x->k);
    zp_zkey_close(&x->z);
    test_rm_dir(x->dir);
}

static uint32_t wire_s(const key_t_ *x, unsigned i) { return 1 + x->K + i; }

/* synth on every pool: identical a/b/c (when it passes) and the same rc and message */
static void synth_all(key_t_ *x, zp_pool_t **pools, const zp_scalar_t *w, int want_rc, const char *want_msg)
{
    zp_scalar_t *ref = calloc(3 * x->n, sizeof *ref), *buf = calloc(3 * x->n, sizeof *buf);
    if (!ref || !buf) { CHECK(!"memory"); free(ref); free(buf); return; }
    for (int p = 0; p < NPOOL; p++) {
        zp_scalar_t *o = p ? buf : ref;
        memset(o, 0xa5, 3 * x->n * sizeof *o);
        int rc = zp_g16_synth(&x->k, w, &x->r1, o, o + x->n, o + 2 * x->n, pools[p]);
        CHECK(rc == want_rc);
        if (want_msg && !strstr(zp_err_msg(), want_msg)) {
            fprintf(stderr, "  %u threads: message '%s', want '%s'\n", zp_pool_size(pools[p]), zp_err_msg(), want_msg);
            fails++;
        }
        if (!want_rc && p) CHECK(!memcmp(ref, buf, 3 * x->n * sizeof *ref));
    }
    free(ref);
    free(buf);
}

static void bump(zp_scalar_t *v) { ((uint8_t *)v)[0] ^= 1; }   /* another value < r (r is odd) */

static void test_key(zp_curve_id_t curve, unsigned power, unsigned K, zp_pool_t **pools)
{
    key_t_ x;
    if (key_make(&x, curve, power, K, pools[NPOOL - 1]) < 0) { CHECK(!"key made"); key_free(&x); return; }
    CHECK(x.r1.n_constraints == x.M);
    size_t nv = x.k.n_vars;
    zp_scalar_t *w = malloc(nv * sizeof *w);
    if (!w) { key_free(&x); CHECK(!"memory"); return; }
    char msg[96];

    synth_all(&x, pools, x.w, 0, NULL);   /* satisfied: same a, b, c everywhere */

    /* s_j changed: constraint j - 1 (C = s_j) is the first broken (constraint j too); s_0: constraint 0 */
    size_t lo, hi;
    zp_split(x.M, 1, ZP_G16_SYNTH_CHUNKS < x.M ? ZP_G16_SYNTH_CHUNKS : x.M, &lo, &hi);   /* chunk 1 = [lo, hi) */
    unsigned js[] = {0, 1, 2, (unsigned)lo, (unsigned)lo + 1, (unsigned)hi, x.M / 2, x.M - 1, x.M};
    for (unsigned t = 0; t < sizeof js / sizeof js[0]; t++) {
        unsigned j = js[t];
        memcpy(w, x.w, nv * sizeof *w);
        bump(&w[wire_s(&x, j)]);
        unsigned want = j ? j - 1 : 0;
        snprintf(msg, sizeof msg, "constraint %u of %u ", want, x.M);
        synth_all(&x, pools, w, ZP_EUNSAT, msg);
    }
    /* two changes: the smaller index wins, whichever thread finds it first */
    memcpy(w, x.w, nv * sizeof *w);
    bump(&w[wire_s(&x, x.M - 3)]);
    bump(&w[wire_s(&x, x.M / 3)]);
    snprintf(msg, sizeof msg, "constraint %u of %u ", x.M / 3 - 1, x.M);
    synth_all(&x, pools, w, ZP_EUNSAT, msg);

    /* values >= r: the smallest index is named */
    memcpy(w, x.w, nv * sizeof *w);
    memset(&w[nv - 2], 0xff, sizeof *w);
    memset(&w[nv / 2 + 1], 0xff, sizeof *w);
    snprintf(msg, sizeof msg, "witness value %zu is not < r", nv / 2 + 1);
    synth_all(&x, pools, w, ZP_EFORMAT, msg);

    /* a reused context: one index build for many calls */
    zp_g16_synth_ctx_t ctx;
    zp_g16_synth_ctx_init(&ctx);
    zp_scalar_t *o = calloc(3 * x.n, sizeof *o);
    if (o) {
        for (int r = 0; r < 4; r++)
            CHECK(zp_g16_synth_ctx(&ctx, &x.k, x.w, &x.r1, o, o + x.n, o + 2 * x.n, pools[3]) == 0);
        CHECK(ctx.builds == 1);
        /* a stale index (a chunk moved by one term): noticed, rebuilt, the answer unchanged */
        unsigned c = ctx.n_chunks / 2;
        ctx.chunk_off[c] += 4 + x.r1.n8;
        memcpy(w, x.w, nv * sizeof *w);
        bump(&w[wire_s(&x, x.M - 1)]);
        CHECK(zp_g16_synth_ctx(&ctx, &x.k, w, &x.r1, o, o + x.n, o + 2 * x.n, pools[4]) == ZP_EUNSAT);
        snprintf(msg, sizeof msg, "constraint %u of %u ", x.M - 2, x.M);
        CHECK(strstr(zp_err_msg(), msg) != NULL);
        CHECK(ctx.builds == 2);
        ctx.chunk_first[c] += 1;   /* a stale count */
        CHECK(zp_g16_synth_ctx(&ctx, &x.k, x.w, &x.r1, o, o + x.n, o + 2 * x.n, pools[2]) == 0);
        CHECK(ctx.builds == 3);
        /* another r1cs (same file reopened: another object and mapping): rebuilt */
        zp_r1cs_t r2;
        char p[600];
        snprintf(p, sizeof p, "%s/circuit.r1cs", x.dir);
        if (zp_r1cs_open(&r2, p) == 0) {
            CHECK(zp_g16_synth_ctx(&ctx, &x.k, x.w, &r2, o, o + x.n, o + 2 * x.n, pools[1]) == 0);
            CHECK(ctx.builds == 4);
            zp_r1cs_close(&r2);
        } else CHECK(!"r1cs reopened");
    }
    free(o);
    free(w);
    key_free(&x);
}

int main(void)
{
    zp_pool_t *pools[NPOOL] = {NULL};
    for (int i = 1; i < NPOOL; i++) pools[i] = zp_pool_new((unsigned)i);
    for (int i = 1; i < NPOOL; i++) CHECK(pools[i] && zp_pool_size(pools[i]) == (unsigned)i);
    test_key(ZP_CURVE_BN254, 10, 1, pools);
    test_key(ZP_CURVE_BN254, 5, 3, pools);      /* fewer constraints than chunks */
    test_key(ZP_CURVE_BLS12_381, 9, 0, pools);
    for (int i = 1; i < NPOOL; i++) zp_pool_destroy(&pools[i]);
    if (fails) { fprintf(stderr, "synth_check: %d failure(s)\n", fails); return 1; }
    printf("synth_check: parallel == serial on both curves (1..5 threads)\n");
    return 0;
}
