/* test_cuda_exec.c - the executor of the CUDA backend (gpu-worker/cuda/cu_exec.c) on the
 * host-emulated device runtime (cu_hostemu.cu), against the CPU backend. No GPU needed.
 *   - prove_g1 / compute_h / msm_g1 == CPU on both curves; prove_g1 leaves h unwritten;
 *   - every window size c = 2..20 of the MSM;
 *   - batched MSM: the sort budget forced to one window a batch, and sized from a small
 *     emulated memory (several batches, automatically);
 *   - retry with a smaller budget: free memory over-reported, the first attempt runs out of
 *     memory, the retry succeeds;
 *   - non-resident bases: forced by the hook and chosen when memory is short;
 *   - the pool's cache is not used memory: after a large proof a second key is still judged
 *     resident and its twiddles (a plain cudaMalloc) still fit (defect 2 of issue 11);
 *   - faults: the k-th runtime call fails, for every k of a sequence that reaches every op
 *     (register, load_key, prove_g1 resident and streamed, compute_h, msm_g1, unregister):
 *     each device error comes back as ZP_EDEVICE (out-of-memory too, unless a retry absorbed
 *     it, and then the result is right); no stream-order violation, nothing pending, no
 *     leaked allocation after close;
 *   - registration in steps, re-registration a no-op; device specs (ordinal / UUID) parsed;
 *   - (issue 10 items 2, 4) staged proofs == unstaged == CPU; the stage-in of k+1 during the
 *     held compute of k (emulation hold): copies queued, none behind the compute, no wait; the
 *     compute waits for its set's events (read-after-write checker); a revoked set released;
 *     fault sweep over the staged sequence (two sets, one or two keys); two keys alternating
 *     stay resident (2 uploads), LRU eviction, a staged key never evicted, one-set fallback. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SEED 0x510e527fade682d1ULL
#include "tests/test_common.h"
#include "tests/test_cuda_common.h"

static zp_backend_t *cpu;

static zp_backend_t *emu_open(const zp_cu_emu_cfg_t *cfg, const zp_cu_hooks_t *hooks)
{
    zp_backend_t *be = NULL;
    int rc = zp_cuda_open_emulated(&be, NULL, cfg);
    if (rc) {
        fprintf(stderr, "emulated open: %s: %s\n", zp_strerror(rc), zp_err_msg());
        abort();
    }
    zp_cu_set_hooks(zp_cuda_cu(be), hooks);
    return be;
}

static zp_cu_emu_stats_t emu_stats(zp_backend_t *be)
{
    zp_cu_emu_stats_t st;
    CHECK(zp_cu_emu_stats(zp_cuda_cu(be), &st) == 0);
    return st;
}

/* no violation and nothing left pending: what every call must leave behind */
static int emu_clean(zp_backend_t *be, const char *what)
{
    zp_cu_emu_stats_t st = emu_stats(be);
    if (st.violations || st.pending) {
        fprintf(stderr, "%s: %lu stream-order violations (%s), %u streams pending\n", what, st.violations,
                st.first_violation, st.pending);
        return 0;
    }
    return 1;
}

/* prove_g1 on the emulated backend == CPU; returns the cuda stats */
static zp_cu_stats_t prove_case(zp_curve_id_t curve, unsigned lg, const zp_cu_emu_cfg_t *cfg, const zp_cu_hooks_t *hooks,
                                const char *what)
{
    synth_t *s = synth_new(curve, lg);
    zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM];
    zp_g16_times_t t;
    int kept = 0;
    CHECK(cpu_prove_ref(cpu, s, want) == 0);
    zp_backend_t *be = emu_open(cfg, hooks);
    int rc = cuda_prove(be, s, got, &kept, &t);
    if (rc) fprintf(stderr, "%s: prove_g1: %s: %s\n", what, zp_strerror(rc), zp_err_msg());
    CHECK(rc == 0);
    int ok = rc == 0;
    for (int m = 0; ok && m < ZP_G16_NMSM; m++) ok &= g1_eq(curve, &want[m], &got[m]);
    if (!ok) fprintf(stderr, "%s: prove_g1 differs from the CPU backend\n", what);
    CHECK(ok);
    CHECK(kept);   /* h is not copied back into the caller's (slot's) memory */
    CHECK(emu_clean(be, what));
    zp_cu_stats_t st;
    zp_cu_stats(zp_cuda_cu(be), &st);
    zp_backend_cuda.close(&be);
    synth_destroy(&s);
    return st;
}

static void test_equal(void)
{
    static const unsigned lgs[] = {1, 4, 9};
    for (int cv = 1; cv <= 2; cv++)
        for (size_t i = 0; i < sizeof lgs / sizeof *lgs; i++) {
            zp_cu_stats_t st = prove_case((zp_curve_id_t)cv, lgs[i], NULL, NULL, "prove");
            CHECK(st.resident == 1);
            synth_t *s = synth_new((zp_curve_id_t)cv, lgs[i]);
            zp_backend_t *be = emu_open(NULL, NULL);
            zp_g16_times_t t;
            int rc = -1;
            CHECK(h_equal(cpu, be, s, &rc, &t));
            CHECK(rc == 0);
            CHECK(emu_clean(be, "compute_h"));
            zp_backend_cuda.close(&be);
            synth_destroy(&s);
        }
    printf("  prove_g1, compute_h == CPU (2^1, 2^4, 2^9, both curves), h left unwritten by prove_g1\n");
}

static void msm_cmp(zp_backend_t *be, zp_curve_id_t curve, size_t n, const zp_cu_msm_tune_t *tune, int mode,
                    zp_cu_msm_out_t *mo)
{
    void *p = points_of(curve, n);
    zp_scalar_t *k = malloc((n ? n : 1) * sizeof *k);
    scalars_fill(k, n, modulus_of(curve), mode);
    zp_g1_any_t want, got;
    CHECK(zp_backend_cpu_test_ops()->msm_g1(cpu, curve, &want, p, k, n) == 0);
    int rc = zp_cu_msm_g1(zp_cuda_cu(be), curve, mo, p, k[0].l, n, tune);
    if (rc == 0) rc = zp_cuda_msm_combine(curve, &got, mo);
    if (rc) fprintf(stderr, "msm (c %u, pairs %zu): %s: %s\n", tune ? tune->c : 0, tune ? tune->max_pairs : 0,
                    zp_strerror(rc), zp_err_msg());
    CHECK(rc == 0);
    if (rc == 0 && !g1_eq(curve, &want, &got))
        fprintf(stderr, "msm curve %d n %zu c %u pairs %zu: differs from the CPU\n", curve, n, tune ? tune->c : 0,
                tune ? tune->max_pairs : 0);
    CHECK(rc == 0 && g1_eq(curve, &want, &got));
    free(k);
    free(p);
}

static void test_windows(void)
{
    zp_backend_t *be = emu_open(NULL, NULL);
    zp_cu_msm_out_t *mo = malloc(sizeof *mo);
    for (int cv = 1; cv <= 2; cv++)
        for (unsigned c = 2; c <= 20; c++) {
            zp_cu_msm_tune_t t = {c, 0, 0, 0, 0};
            msm_cmp(be, (zp_curve_id_t)cv, cv == 1 ? 50 : 23, &t, (int)(c % 3), mo);
            CHECK(mo->c == c);
        }
    CHECK(emu_clean(be, "windows"));
    zp_backend_cuda.close(&be);
    free(mo);
    printf("  every window size c = 2..20 == CPU (both curves)\n");
}

/* msm_g1 of 2000 points on an emulated device with room for the points, the scalars and 1/div
 * of one all-windows batch; mem_report_extra: free memory over-reported by this much */
static zp_cu_stats_t small_mem_msm(int cv, size_t div, size_t extra, int mode, zp_cu_msm_out_t *mo, const char *what)
{
    size_t n = 2000;
    zp_cu_msm_plan_t full;
    zp_cu_msm_tune_t t0 = {0, 0, 0, 0, 1024};
    CHECK(zp_cu_msm_plan(cv, n, &t0, &full) == 0);
    zp_cu_emu_cfg_t cfg = {0};
    cfg.mem_total = n * (cv == 1 ? 64 : 96) + n * 32 + full.bytes / div + ((size_t)256 << 10);
    cfg.mem_report_extra = extra;
    zp_backend_t *be = emu_open(&cfg, NULL);
    msm_cmp(be, (zp_curve_id_t)cv, n, NULL, mode, mo);
    zp_cu_stats_t st;
    zp_cu_stats(zp_cuda_cu(be), &st);
    CHECK(emu_clean(be, what));
    zp_backend_cuda.close(&be);
    return st;
}

static void test_batched(void)
{
    zp_cu_msm_out_t *mo = malloc(sizeof *mo);
    /* forced: one window a batch */
    zp_backend_t *be = emu_open(NULL, NULL);
    for (int cv = 1; cv <= 2; cv++) {
        zp_cu_msm_tune_t t = {5, 0, 0, 300, 0};
        msm_cmp(be, (zp_curve_id_t)cv, 300, &t, 0, mo);
        CHECK(mo->batches == mo->nwin && mo->nwin > 1);
        t.max_pairs = 3 * 300;
        msm_cmp(be, (zp_curve_id_t)cv, 300, &t, 2, mo);
        CHECK(mo->batches == (mo->nwin + 2) / 3);
    }
    zp_backend_cuda.close(&be);
    /* automatic: the budget from a small memory */
    for (int cv = 1; cv <= 2; cv++) {
        zp_cu_stats_t st = small_mem_msm(cv, 4, 0, 0, mo, "batched");
        if (mo->batches < 2) fprintf(stderr, "automatic budget: %u batch(es)\n", mo->batches);
        CHECK(mo->batches >= 2);
        CHECK(st.msm_retries == 0);   /* sized right the first time */
    }
    free(mo);
    printf("  batched MSM (forced 1 and 3 windows a batch; automatic from a small memory) == CPU\n");
}

static void test_retry(void)
{
    zp_cu_msm_out_t *mo = malloc(sizeof *mo);
    for (int cv = 1; cv <= 2; cv++) {
        /* free memory over-reported: the first budget is too big */
        zp_cu_stats_t st = small_mem_msm(cv, 3, (size_t)1 << 30, 1, mo, "retry");
        CHECK(st.msm_retries >= 1);
        CHECK(mo->batches >= 2);
    }
    /* the whole proof with the lie: every MSM retried down to what fits */
    zp_cu_emu_cfg_t cfg = {0};
    cfg.mem_total = (size_t)3 << 20;
    cfg.mem_report_extra = (size_t)1 << 30;
    zp_cu_stats_t st = prove_case(ZP_CURVE_BLS12_381, 11, &cfg, NULL, "prove with retries");
    CHECK(st.msm_retries >= 1);
    free(mo);
    printf("  retry with a smaller budget after out-of-memory == CPU (msm_g1 both curves, prove_g1 2^11: %lu retries)\n",
           st.msm_retries);
}

static void test_streamed(void)
{
    zp_cu_hooks_t h;
    memset(&h, 0, sizeof h);
    h.force_streamed = 1;
    for (int cv = 1; cv <= 2; cv++) {
        zp_cu_stats_t st = prove_case((zp_curve_id_t)cv, 8, NULL, &h, "streamed (hook)");
        CHECK(st.resident == 0);
    }
    /* chosen: the bases (4 x 2^10 points) do not fit next to the work, the work alone does */
    zp_cu_emu_cfg_t cfg = {0};
    cfg.mem_total = (size_t)1100 << 10;
    zp_cu_stats_t st = prove_case(ZP_CURVE_BN254, 10, &cfg, NULL, "streamed (memory)");
    CHECK(st.resident == 0);
    printf("  non-resident bases (forced; chosen in %zu KiB) == CPU\n", cfg.mem_total >> 10);
}

/* defect 2: after one large proof the pool holds its working memory; a second key must still
 * be judged by the memory the pool can give back, and a plain cudaMalloc must still succeed */
static void test_pool_trim(void)
{
    synth_t *a = synth_new(ZP_CURVE_BN254, 10), *b = synth_new(ZP_CURVE_BN254, 9);
    zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM];
    zp_g16_times_t t;
    /* measure: the peak of proof A alone */
    zp_backend_t *be = emu_open(NULL, NULL);
    CHECK(cuda_prove(be, a, got, NULL, &t) == 0);
    zp_cu_emu_stats_t st = emu_stats(be);
    zp_backend_cuda.close(&be);
    zp_cu_emu_cfg_t cfg = {0};
    cfg.mem_total = st.peak_bytes + st.peak_bytes / 2;
    be = emu_open(&cfg, NULL);
    CHECK(cuda_prove(be, a, got, NULL, &t) == 0);
    st = emu_stats(be);
    CHECK(st.pool_reserved > cfg.mem_total / 2);   /* the pool kept A's working memory */
    CHECK(cpu_prove_ref(cpu, b, want) == 0);
    int rc = cuda_prove(be, b, got, NULL, &t);
    if (rc) fprintf(stderr, "second key after a large proof: %s: %s\n", zp_strerror(rc), zp_err_msg());
    CHECK(rc == 0);
    zp_cu_stats_t cs;
    zp_cu_stats(zp_cuda_cu(be), &cs);
    if (!cs.resident) fprintf(stderr, "second key judged not to fit: the pool's cache counted as used\n");
    CHECK(cs.resident == 1);
    for (int m = 0; rc == 0 && m < ZP_G16_NMSM; m++) CHECK(g1_eq(ZP_CURVE_BN254, &want[m], &got[m]));
    CHECK(emu_clean(be, "pool trim"));
    zp_backend_cuda.close(&be);
    synth_destroy(&a);
    synth_destroy(&b);
    printf("  pool cache trimmed: second key resident after a large proof in %zu KiB\n", cfg.mem_total >> 10);
}

/* ---------------------------------------------------------------- faults */

enum { OP_OPEN, OP_REG, OP_LOAD, OP_PROVE, OP_H, OP_MSM, OP_UNREG, OP_N };
static const char *const op_names[OP_N] = {"open", "host_register", "load_key", "prove_g1", "compute_h", "msm_g1",
                                           "host_unregister"};

typedef struct {
    const synth_t *s;
    const zp_g1_any_t *want;      /* prove_g1 on the CPU */
    const zp_g1_any_t *want_msm;  /* msm_g1 over the key's A bases and w */
    const zp_scalar_t *h_want;
} fault_ref_t;

/* the sequence; returns the op that failed (OP_N: none) and its rc; results checked on success */
static int fault_run(const fault_ref_t *r, const zp_cu_emu_cfg_t *cfg, const zp_cu_hooks_t *hooks, int *rc_out,
                     zp_backend_t **bep, int *wrong)
{
    const synth_t *s = r->s;
    size_t n = s->key.domain_size;
    zp_curve_id_t curve = s->key.curve;
    int rc = zp_cuda_open_emulated(bep, NULL, cfg);
    *wrong = 0;
    if (rc) {
        *rc_out = rc;
        return OP_OPEN;
    }
    zp_backend_t *be = *bep;
    zp_cu_set_hooks(zp_cuda_cu(be), hooks);
    zp_scalar_t *v = malloc(6 * n * sizeof *v);
    zp_g1_any_t got[ZP_G16_NMSM], m1;
    zp_g16_times_t t;
    int op = OP_REG;
    if ((rc = zp_backend_cuda.host_register(be, v, 6 * n * sizeof *v))) goto out;
    op = OP_LOAD;
    if ((rc = zp_backend_cuda.load_key(be, &s->key))) goto out;
    op = OP_PROVE;
    memcpy(v, s->a, 2 * n * sizeof *v);
    if ((rc = zp_backend_cuda.prove_g1(be, &s->key, s->w, v, v + n, s->c, v + 2 * n, got, &t))) goto out;
    for (int m = 0; m < ZP_G16_NMSM; m++) *wrong |= !g1_eq(curve, &r->want[m], &got[m]);
    op = OP_H;
    memcpy(v, s->a, 2 * n * sizeof *v);
    if ((rc = zp_backend_cuda_test_ops()->compute_h(be, &s->key, v, v + n, s->c, v + 2 * n, &t))) goto out;
    *wrong |= memcmp(v + 2 * n, r->h_want, n * sizeof *v) != 0;
    op = OP_MSM;
    if ((rc = zp_backend_cuda_test_ops()->msm_g1(be, curve, &m1, s->key.a, s->w, s->key.n_vars))) goto out;
    *wrong |= !g1_eq(curve, r->want_msm, &m1);
    op = OP_UNREG;
    if ((rc = zp_backend_cuda.host_unregister(be, v))) goto out;
    op = OP_N;
out:
    free(v);
    *rc_out = rc;
    return op;
}

static void fault_sweep(zp_curve_id_t curve, unsigned lg, int oom, int streamed)
{
    synth_t *s = synth_new(curve, lg);
    size_t n = s->key.domain_size;
    zp_g1_any_t want[ZP_G16_NMSM], want_msm;
    zp_scalar_t *hv = malloc(3 * n * sizeof *hv);
    CHECK(cpu_prove_ref(cpu, s, want) == 0);
    CHECK(zp_backend_cpu_test_ops()->msm_g1(cpu, curve, &want_msm, s->key.a, s->w, s->key.n_vars) == 0);
    memcpy(hv, s->a, 2 * n * sizeof *hv);
    zp_g16_times_t t;
    CHECK(zp_backend_cpu_test_ops()->compute_h(cpu, &s->key, hv, hv + n, s->c, hv + 2 * n, &t) == 0);
    fault_ref_t ref = {s, want, &want_msm, hv + 2 * n};
    zp_cu_hooks_t hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.force_streamed = streamed;

    /* a clean run: how many runtime calls the sequence makes */
    zp_cu_emu_cfg_t cfg = {0};
    zp_backend_t *be = NULL;
    int rc, wrong;
    int op = fault_run(&ref, &cfg, &hooks, &rc, &be, &wrong);
    CHECK(op == OP_N && rc == 0 && !wrong);
    unsigned long total = emu_stats(be).calls;
    zp_backend_cuda.close(&be);

    unsigned long failed_in[OP_N + 1] = {0}, absorbed = 0, leaks0 = zp_cu_emu_leaks();
    for (unsigned long k = 1; k <= total; k++) {
        cfg.fail_at = k;
        cfg.fail_oom = oom;
        op = fault_run(&ref, &cfg, &hooks, &rc, &be, &wrong);
        failed_in[op]++;
        if (wrong) fprintf(stderr, "fault at call %lu: a wrong result without an error\n", k);
        CHECK(!wrong);
        if (op == OP_N) {
            /* only an out-of-memory can be absorbed (retried smaller, or bases streamed) */
            if (!oom) fprintf(stderr, "fault at call %lu: no op failed\n", k);
            CHECK(oom);
            absorbed++;
        } else if (rc != ZP_EDEVICE) {
            fprintf(stderr, "fault at call %lu: %s returned %s (%s), not ZP_EDEVICE\n", k, op_names[op],
                    zp_strerror(rc), zp_err_msg());
            CHECK(rc == ZP_EDEVICE);
        }
        if (be) {
            char what[64];
            snprintf(what, sizeof what, "fault at call %lu in %s", k, op < OP_N ? op_names[op] : "(absorbed)");
            CHECK(emu_clean(be, what));
            zp_backend_cuda.close(&be);
        }
        if (zp_cu_emu_leaks() != leaks0) {
            fprintf(stderr, "fault at call %lu in %s: device memory or registrations leaked\n", k,
                    op < OP_N ? op_names[op] : "(absorbed)");
            CHECK(0);
            leaks0 = zp_cu_emu_leaks();
        }
    }
    /* the sequence reached every op with a failure */
    for (int o = OP_REG; o < OP_N; o++) CHECK(failed_in[o] > 0);
    printf("  faults (%s, 2^%u, %s bases, %s): %lu calls, failed in register %lu, load_key %lu, prove_g1 %lu, "
           "compute_h %lu, msm_g1 %lu, unregister %lu, absorbed %lu: all ZP_EDEVICE, ordered, no leak\n",
           curve == ZP_CURVE_BN254 ? "bn254" : "bls12_381", lg, streamed ? "streamed" : "resident",
           oom ? "out-of-memory" : "device errors", total, failed_in[OP_REG], failed_in[OP_LOAD], failed_in[OP_PROVE],
           failed_in[OP_H], failed_in[OP_MSM], failed_in[OP_UNREG], absorbed);
    free(hv);
    synth_destroy(&s);
}

/* ---------------------------------------------------------------- staged proofs, keys */

/* the staged path of the ops table: stage_in into set, prove_staged, release_set */
static int staged_prove(zp_backend_t *be, unsigned set, const synth_t *s, zp_g1_any_t got[ZP_G16_NMSM])
{
    zp_g16_times_t t;
    int rc = zp_backend_cuda.stage_in(be, set, &s->key, s->w, s->a, s->b, s->c);
    if (rc) return rc;
    rc = zp_backend_cuda.prove_staged(be, set, &s->key, got, &t);
    int r2 = zp_backend_cuda.release_set(be, set);
    return rc ? rc : r2;
}

static int same_g1(zp_curve_id_t curve, const zp_g1_any_t *want, const zp_g1_any_t *got)
{
    int ok = 1;
    for (int m = 0; m < ZP_G16_NMSM; m++) ok &= g1_eq(curve, &want[m], &got[m]);
    return ok;
}

static zp_cu_stats_t cu_stats(zp_backend_t *be)
{
    zp_cu_stats_t st;
    zp_cu_stats(zp_cuda_cu(be), &st);
    return st;
}

/* staged == unstaged == CPU, both curves; the host vectors are read only */
static void test_staged_equal(void)
{
    static const unsigned lgs[] = {1, 4, 9};
    for (int cv = 1; cv <= 2; cv++)
        for (size_t i = 0; i < sizeof lgs / sizeof *lgs; i++) {
            synth_t *s = synth_new((zp_curve_id_t)cv, lgs[i]);
            size_t n = s->key.domain_size;
            zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM], un[ZP_G16_NMSM];
            zp_g16_times_t t;
            zp_scalar_t *keep = malloc(3 * n * sizeof *keep);
            memcpy(keep, s->a, 2 * n * sizeof *keep);
            memcpy(keep + 2 * n, s->c, n * sizeof *keep);
            CHECK(cpu_prove_ref(cpu, s, want) == 0);
            zp_backend_t *be = emu_open(NULL, NULL);
            CHECK(cuda_prove(be, s, un, NULL, &t) == 0);
            for (unsigned set = 0; set < 3; set++) {
                int rc = staged_prove(be, set, s, got);
                if (rc) fprintf(stderr, "staged 2^%u set %u: %s: %s\n", lgs[i], set, zp_strerror(rc), zp_err_msg());
                CHECK(rc == 0);
                CHECK(same_g1((zp_curve_id_t)cv, want, got));
                CHECK(same_g1((zp_curve_id_t)cv, un, got));
            }
            CHECK(!memcmp(keep, s->a, 2 * n * sizeof *keep) && !memcmp(keep + 2 * n, s->c, n * sizeof *keep));
            zp_cu_stats_t st = cu_stats(be);
            CHECK(st.staged == 3 && st.staged_deferred == 0 && st.sets_live == 0 && st.key_uploads == 1);
            CHECK(emu_clean(be, "staged"));
            zp_backend_cuda.close(&be);
            free(keep);
            synth_destroy(&s);
        }
    printf("  staged proofs (stage_in, prove_staged, release_set) == unstaged == CPU (2^1, 2^4, 2^9, both curves)\n");
}

typedef struct {
    zp_backend_t *be;
    unsigned set;
    const synth_t *s;
    zp_g1_any_t got[ZP_G16_NMSM];
    int rc;
} compute_arg_t;

static void *compute_thread(void *p)
{
    compute_arg_t *c = p;
    zp_g16_times_t t;
    c->rc = zp_backend_cuda.prove_staged(c->be, c->set, &c->s->key, c->got, &t);
    return NULL;
}

/* staging of k+1 overlaps the compute of k: the compute of k (work thread) is held inside its
 * first kernel on the emulated compute stream; the stage-in of k+1 (this thread) must return
 * meanwhile with its copies queued on the copy stream, none of them ordered behind the held
 * compute, no host wait for the compute stream, and its copies not waited for (pending); then
 * the compute of k+1 must wait for k+1's events (the checker's read-after-write rule) */
static void test_staged_overlap(void)
{
    for (int cv = 1; cv <= 2; cv++) {
        synth_t *s0 = synth_new((zp_curve_id_t)cv, 7), *s1 = synth_new((zp_curve_id_t)cv, 7);
        memcpy(&s1->key, &s0->key, sizeof s1->key);   /* one key, another partition's vectors */
        zp_g1_any_t w0[ZP_G16_NMSM], w1[ZP_G16_NMSM], got[ZP_G16_NMSM];
        CHECK(cpu_prove_ref(cpu, s0, w0) == 0);
        CHECK(cpu_prove_ref(cpu, s1, w1) == 0);
        zp_backend_t *be = emu_open(NULL, NULL);
        zp_cu_t *cu = zp_cuda_cu(be);
        CHECK(staged_prove(be, 0, s0, got) == 0);   /* key uploaded, twiddles built */
        CHECK(zp_backend_cuda.stage_in(be, 0, &s0->key, s0->w, s0->a, s0->b, s0->c) == 0);
        CHECK(zp_cu_emu_hold(cu, 0) == 0);
        compute_arg_t ca = {.be = be, .set = 0, .s = s0};
        pthread_t th;
        CHECK(pthread_create(&th, NULL, compute_thread, &ca) == 0);
        CHECK(zp_cu_emu_wait_held(cu) == 0);
        zp_cu_emu_stats_t before = emu_stats(be);
        int rc = zp_backend_cuda.stage_in(be, 1, &s1->key, s1->w, s1->a, s1->b, s1->c);
        zp_cu_emu_stats_t during = emu_stats(be);
        zp_cu_stats_t cs_during = cu_stats(be);
        CHECK(zp_cu_emu_release(cu) == 0);
        pthread_join(th, NULL);
        CHECK(rc == 0 && ca.rc == 0);
        CHECK(during.held == 1);
        unsigned long copies = during.h2d_calls[1] - before.h2d_calls[1];
        if (copies < 4 || during.hold_ops_behind || during.hold_syncs || during.pending != 1 || during.violations)
            fprintf(stderr, "overlap: %lu copies queued during the held compute, %lu ops behind it, %lu host waits for "
                    "it, %u streams pending, %lu violations (%s)\n", copies, during.hold_ops_behind,
                    during.hold_syncs, during.pending, during.violations, during.first_violation);
        CHECK(copies >= 4);                     /* a, b, c, w (and the coset tables) */
        CHECK(during.hold_ops_free >= copies);  /* ... free to run now */
        CHECK(during.hold_ops_behind == 0);     /* nothing serialized behind the compute */
        CHECK(during.hold_syncs == 0);          /* the stage-in never waited for the compute */
        CHECK(during.pending == 1);             /* ... nor for its own copies */
        CHECK(cs_during.sets_live == 2 && cs_during.staged_deferred == 0);   /* two device sets at once */
        CHECK(same_g1((zp_curve_id_t)cv, w0, ca.got));
        CHECK(zp_backend_cuda.release_set(be, 0) == 0);
        zp_g16_times_t t;
        CHECK(zp_backend_cuda.prove_staged(be, 1, &s1->key, got, &t) == 0);
        CHECK(zp_backend_cuda.release_set(be, 1) == 0);
        CHECK(same_g1((zp_curve_id_t)cv, w1, got));
        CHECK(emu_clean(be, "overlap"));   /* the computes waited for their sets' events */
        CHECK(cu_stats(be).sets_peak == 2 && cu_stats(be).key_uploads == 1);
        zp_backend_cuda.close(&be);
        memset(&s1->key, 0, sizeof s1->key);
        synth_destroy(&s0);
        synth_destroy(&s1);
    }
    printf("  stage-in of k+1 during the held compute of k: copies queued, none behind the compute, no wait; "
           "the compute of k+1 waits for its events (both curves)\n");
}

/* a revoked staged set: released without a compute (its copies waited for), nothing leaks */
static void test_staged_revoked(void)
{
    synth_t *s = synth_new(ZP_CURVE_BN254, 6);
    zp_backend_t *be = emu_open(NULL, NULL);
    unsigned long l0 = zp_cu_emu_leaks();
    CHECK(zp_backend_cuda.stage_in(be, 3, &s->key, s->w, s->a, s->b, s->c) == 0);
    CHECK(zp_backend_cuda.stage_in(be, 3, &s->key, s->w, s->a, s->b, s->c) == ZP_ESTATE);   /* in use */
    CHECK(emu_stats(be).pending == 1);
    CHECK(zp_backend_cuda.release_set(be, 3) == 0);
    CHECK(emu_clean(be, "revoked"));
    zp_cu_key_info_t ki[4];
    CHECK(zp_cu_keys(zp_cuda_cu(be), ki, 4) == 1 && ki[0].refs == 0 && ki[0].resident == 1);
    CHECK(emu_stats(be).live_allocs == 4);   /* the key's 4 bases only: the set's buffers are back */
    zp_backend_cuda.close(&be);
    CHECK(zp_cu_emu_leaks() == l0);
    synth_destroy(&s);
    printf("  a staged set released without its compute: copies waited for, key unreferenced, no leak\n");
}

/* the staged sequence for the fault sweep: set 0 through once (the twiddles built), then set 1
 * (second key) and set 0 staged together, computed, released. Steps 1..: stage 0, prove 0,
 * release 0, stage 1, stage 0, prove 1, release 1, prove 0, release 0, unregister. */
enum { SF_STEPS = 10 };
static int staged_fault_run(const synth_t *s, const synth_t *s2, const zp_g1_any_t *want, const zp_g1_any_t *want2,
                            const zp_cu_emu_cfg_t *cfg, zp_backend_t **bep, int *wrong, int *failed_op,
                            unsigned *pending_at_error)
{
    static const struct { char what; unsigned set; } steps[SF_STEPS] = {
        {'s', 0}, {'p', 0}, {'r', 0}, {'s', 1}, {'s', 0}, {'p', 1}, {'r', 1}, {'p', 0}, {'r', 0}, {'u', 0}};
    zp_g1_any_t got[ZP_G16_NMSM];
    zp_g16_times_t t;
    int rc = zp_cuda_open_emulated(bep, NULL, cfg), op = 0;
    *wrong = 0;
    *pending_at_error = 0;
    if (rc) return rc;
    zp_backend_t *be = *bep;
    size_t n = s->key.domain_size;
    void *reg = s->a;
    int staged[2] = {0, 0};
    if ((rc = zp_backend_cuda.host_register(be, reg, 2 * n * sizeof(zp_scalar_t)))) goto out;
    for (op = 1; op <= SF_STEPS; op++) {
        unsigned set = steps[op - 1].set;
        const synth_t *x = set ? s2 : s;
        switch (steps[op - 1].what) {
        case 's':
            rc = zp_backend_cuda.stage_in(be, set, &x->key, x->w, x->a, x->b, x->c);
            staged[set] = rc == 0;
            break;
        case 'p':
            if ((rc = zp_backend_cuda.prove_staged(be, set, &x->key, got, &t)) == 0)
                *wrong |= !same_g1(x->key.curve, set ? want2 : want, got);
            break;
        case 'r':
            rc = zp_backend_cuda.release_set(be, set);
            staged[set] = 0;
            break;
        default:
            rc = zp_backend_cuda.host_unregister(be, reg);
            reg = NULL;
            break;
        }
        if (rc) break;
    }
out:
    /* the failed call returned with both streams synchronized (nothing queued reads memory) */
    if (rc) *pending_at_error = emu_stats(be).pending;
    /* as the worker: every set that was staged is released, the arena unregistered */
    for (unsigned i = 0; i < 2; i++)
        if (staged[i]) (void)zp_backend_cuda.release_set(be, i);
    if (reg && op > 0) (void)zp_backend_cuda.host_unregister(be, reg);
    *failed_op = op;
    return rc;
}

static void staged_fault_sweep(zp_curve_id_t curve, int oom, int two_keys)
{
    synth_t *s = synth_new(curve, 5), *s2 = two_keys ? synth_new(curve, 4) : synth_new(curve, 5);
    if (!two_keys) memcpy(&s2->key, &s->key, sizeof s2->key);
    zp_g1_any_t want[ZP_G16_NMSM], want2[ZP_G16_NMSM];
    CHECK(cpu_prove_ref(cpu, s, want) == 0);
    CHECK(cpu_prove_ref(cpu, s2, want2) == 0);
    zp_cu_emu_cfg_t cfg = {0};
    zp_backend_t *be = NULL;
    int wrong, op;
    unsigned pend;
    CHECK(staged_fault_run(s, s2, want, want2, &cfg, &be, &wrong, &op, &pend) == 0 && op == SF_STEPS + 1 && !wrong);
    unsigned long total = emu_stats(be).calls, absorbed = 0, failed[SF_STEPS + 2] = {0};
    zp_backend_cuda.close(&be);
    unsigned long leaks0 = zp_cu_emu_leaks();
    for (unsigned long k = 1; k <= total; k++) {
        cfg.fail_at = k;
        cfg.fail_oom = oom;
        int rc = staged_fault_run(s, s2, want, want2, &cfg, &be, &wrong, &op, &pend);
        if (pend) fprintf(stderr, "staged fault at call %lu (op %d): returned with %u streams unsynchronized\n", k, op, pend);
        CHECK(pend == 0);
        if (wrong) fprintf(stderr, "staged fault at call %lu: a wrong result without an error\n", k);
        CHECK(!wrong);
        if (rc == 0) {
            if (!oom) fprintf(stderr, "staged fault at call %lu: nothing failed\n", k);
            CHECK(oom);
            absorbed++;
        } else {
            failed[op]++;
            if (rc != ZP_EDEVICE)
                fprintf(stderr, "staged fault at call %lu (op %d): %s (%s), not ZP_EDEVICE\n", k, op, zp_strerror(rc),
                        zp_err_msg());
            CHECK(rc == ZP_EDEVICE);
        }
        if (be) {
            char what[64];
            snprintf(what, sizeof what, "staged fault at call %lu (op %d)", k, op);
            CHECK(emu_clean(be, what));
            if (rc == 0 || !oom) CHECK(cu_stats(be).sets_live == 0);
            zp_backend_cuda.close(&be);
        }
        if (zp_cu_emu_leaks() != leaks0) {
            fprintf(stderr, "staged fault at call %lu (op %d): device memory or registrations leaked\n", k, op);
            CHECK(0);
            leaks0 = zp_cu_emu_leaks();
        }
    }
    /* every stage-in and every compute was hit */
    CHECK(failed[1] && failed[4] && failed[5] && failed[2] && failed[6] && failed[8]);
    printf("  staged faults (%s, %s, %s): %lu calls, failed in stage_in %lu + %lu + %lu, prove_staged %lu + %lu + %lu, "
           "absorbed %lu: all ZP_EDEVICE, synchronized, ordered, no leak\n", curve == ZP_CURVE_BN254 ? "bn254" : "bls12_381",
           two_keys ? "two keys" : "one key", oom ? "out-of-memory" : "device errors", total, failed[1], failed[4],
           failed[5], failed[2], failed[6], failed[8], absorbed);
    if (!two_keys) memset(&s2->key, 0, sizeof s2->key);
    synth_destroy(&s);
    synth_destroy(&s2);
}

/* keys loaded into an emulated device of mem bytes: the stats after */
static zp_cu_stats_t keys_loaded(size_t mem, synth_t *const *ks, unsigned nk)
{
    zp_cu_emu_cfg_t cfg = {0};
    cfg.mem_total = mem;
    zp_backend_t *be = emu_open(&cfg, NULL);
    for (unsigned i = 0; i < nk; i++) CHECK(zp_backend_cuda.load_key(be, &ks[i]->key) == 0);
    zp_cu_stats_t st = cu_stats(be);
    zp_backend_cuda.close(&be);
    return st;
}

/* the smallest memory (to 1 KiB) where loading ks leaves want resident keys, none evicted
 * and (two) both buffer sets allowed */
static size_t mem_for(synth_t *const *ks, unsigned nk, unsigned want, int two)
{
    size_t lo = 1 << 16, hi = (size_t)1 << 30;
    while (hi - lo > 1024) {
        size_t mid = lo + (hi - lo) / 2;
        zp_cu_stats_t st = keys_loaded(mid, ks, nk);
        if (st.keys_resident >= want && st.key_evictions == 0 && (!two || !st.one_set)) hi = mid;
        else lo = mid;
    }
    return hi;
}

/* two keys alternating stay resident (2 uploads, not one per switch); in a small device the
 * least recently used unreferenced key is evicted */
static void test_keys_alternate(void)
{
    /* one size: the smallest device for two is then set by the second key's room, which a third
     * key of the same size does not have without an eviction */
    synth_t *a = synth_new(ZP_CURVE_BN254, 7), *b = synth_new(ZP_CURVE_BN254, 7), *c = synth_new(ZP_CURVE_BN254, 7);
    synth_t *const ks[3] = {a, b, c};
    zp_g1_any_t wa[ZP_G16_NMSM], wb[ZP_G16_NMSM], wc[ZP_G16_NMSM], got[ZP_G16_NMSM];
    CHECK(cpu_prove_ref(cpu, a, wa) == 0);
    CHECK(cpu_prove_ref(cpu, b, wb) == 0);
    CHECK(cpu_prove_ref(cpu, c, wc) == 0);
    /* within budget: both resident, alternating costs nothing (8 KiB over the smallest such
     * device: the precision of the search, the pool's rounding) */
    size_t m2 = mem_for(ks, 2, 2, 1) + (8 << 10);
    zp_cu_emu_cfg_t cfg = {0};
    cfg.mem_total = m2;
    zp_backend_t *be = emu_open(&cfg, NULL);
    for (int r = 0; r < 3; r++) {
        CHECK(staged_prove(be, 0, a, got) == 0 && same_g1(ZP_CURVE_BN254, wa, got));
        CHECK(staged_prove(be, 1, b, got) == 0 && same_g1(ZP_CURVE_BN254, wb, got));
    }
    zp_cu_stats_t st = cu_stats(be);
    if (st.key_uploads != 2 || st.key_evictions || st.keys_resident != 2)
        fprintf(stderr, "alternating in %zu KiB: %lu uploads, %lu evictions, %u resident\n", m2 >> 10, st.key_uploads,
                st.key_evictions, st.keys_resident);
    CHECK(st.key_uploads == 2 && st.key_evictions == 0 && st.keys_resident == 2);
    /* what the worker's key listing asks (the heartbeat's "device" tier) */
    CHECK(zp_backend_cuda.key_resident(be, &a->key) == 1 && zp_backend_cuda.key_resident(be, &b->key) == 1);
    CHECK(zp_backend_cuda.key_resident(be, &c->key) == 0);
    /* a third key: the least recently used (b, after a was used again) goes, a stays */
    CHECK(staged_prove(be, 0, a, got) == 0);
    CHECK(staged_prove(be, 0, c, got) == 0 && same_g1(ZP_CURVE_BN254, wc, got));
    st = cu_stats(be);
    if (st.key_evictions != 1 || st.key_uploads != 3)
        fprintf(stderr, "third key: %lu evictions, %lu uploads, %u resident of %u\n", st.key_evictions, st.key_uploads,
                st.keys_resident, st.keys);
    CHECK(st.key_evictions == 1 && st.key_uploads == 3);
    CHECK(zp_backend_cuda.key_resident(be, &b->key) == 0 && zp_backend_cuda.key_resident(be, &c->key) == 1 &&
          zp_backend_cuda.key_resident(be, &a->key) == 1);   /* b went, as the listing then says */
    CHECK(staged_prove(be, 1, a, got) == 0 && same_g1(ZP_CURVE_BN254, wa, got));
    zp_cu_stats_t st2 = cu_stats(be);
    if (st2.key_uploads != 3) fprintf(stderr, "LRU: the recently used key was evicted (%lu uploads)\n", st2.key_uploads);
    CHECK(st2.key_uploads == 3);   /* a was still resident */
    CHECK(staged_prove(be, 1, b, got) == 0 && same_g1(ZP_CURVE_BN254, wb, got));
    CHECK(cu_stats(be).key_uploads == 4);
    CHECK(emu_clean(be, "keys alternate"));
    zp_backend_cuda.close(&be);
    printf("  two keys alternating in %zu KiB: 2 uploads, 0 evictions; a third key evicts the least recently used\n",
           m2 >> 10);
    synth_destroy(&a);
    synth_destroy(&b);
    synth_destroy(&c);
}

/* a key referenced by a staged set is never evicted: in a device with room for one key, the
 * second key of a staged pair is streamed instead; one buffer set when two do not fit */
static void test_keys_in_use(void)
{
    synth_t *a = synth_new(ZP_CURVE_BLS12_381, 6), *b = synth_new(ZP_CURVE_BLS12_381, 6);
    synth_t *const ks[1] = {a};
    zp_g1_any_t wa[ZP_G16_NMSM], wb[ZP_G16_NMSM], got[ZP_G16_NMSM];
    zp_g16_times_t t;
    CHECK(cpu_prove_ref(cpu, a, wa) == 0);
    CHECK(cpu_prove_ref(cpu, b, wb) == 0);
    size_t m1 = mem_for(ks, 1, 1, 1);
    zp_cu_emu_cfg_t cfg = {0};
    cfg.mem_total = m1;
    zp_backend_t *be = emu_open(&cfg, NULL);
    CHECK(zp_backend_cuda.stage_in(be, 0, &a->key, a->w, a->a, a->b, a->c) == 0);
    CHECK(zp_backend_cuda.stage_in(be, 1, &b->key, b->w, b->a, b->b, b->c) == 0);
    zp_cu_stats_t st = cu_stats(be);
    if (st.key_evictions) fprintf(stderr, "a key referenced by a staged set was evicted\n");
    CHECK(st.key_evictions == 0 && st.keys == 2 && st.keys_resident == 1);
    CHECK(zp_backend_cuda.prove_staged(be, 0, &a->key, got, &t) == 0 && same_g1(ZP_CURVE_BLS12_381, wa, got));
    CHECK(zp_backend_cuda.prove_staged(be, 1, &b->key, got, &t) == 0 && same_g1(ZP_CURVE_BLS12_381, wb, got));
    CHECK(zp_backend_cuda.release_set(be, 0) == 0 && zp_backend_cuda.release_set(be, 1) == 0);
    CHECK(emu_clean(be, "key in use"));
    zp_backend_cuda.close(&be);

    /* one buffer set: the smallest device where the key is resident at all */
    size_t m0 = mem_for(ks, 1, 1, 0);
    CHECK(m0 < m1);
    cfg.mem_total = m0;
    be = emu_open(&cfg, NULL);
    CHECK(zp_backend_cuda.stage_in(be, 0, &a->key, a->w, a->a, a->b, a->c) == 0);
    CHECK(zp_backend_cuda.stage_in(be, 1, &a->key, b->w, b->a, b->b, b->c) == 0);
    st = cu_stats(be);
    if (!st.one_set || st.staged != 1 || st.staged_deferred != 1)
        fprintf(stderr, "one set in %zu KiB: one_set %d, staged %lu, deferred %lu\n", m0 >> 10, st.one_set, st.staged,
                st.staged_deferred);
    CHECK(st.one_set == 1 && st.staged == 1 && st.staged_deferred == 1 && st.keys_resident == 1);
    CHECK(zp_backend_cuda.prove_staged(be, 0, &a->key, got, &t) == 0 && same_g1(ZP_CURVE_BLS12_381, wa, got));
    CHECK(zp_backend_cuda.release_set(be, 0) == 0);
    /* the deferred set will allocate at its compute: a new stage-in meanwhile is deferred too */
    CHECK(zp_backend_cuda.stage_in(be, 0, &a->key, a->w, a->a, a->b, a->c) == 0);
    CHECK(cu_stats(be).staged == 1 && cu_stats(be).staged_deferred == 2);
    int rc = zp_backend_cuda.prove_staged(be, 1, &a->key, got, &t);
    if (rc) fprintf(stderr, "deferred set in %zu KiB: %s: %s\n", m0 >> 10, zp_strerror(rc), zp_err_msg());
    synth_t ab = *b;   /* a's key over b's vectors (same sizes) */
    ab.key = a->key;
    zp_g1_any_t wab[ZP_G16_NMSM];
    CHECK(cpu_prove_ref(cpu, &ab, wab) == 0);
    CHECK(rc == 0 && same_g1(ZP_CURVE_BLS12_381, wab, got));
    CHECK(zp_backend_cuda.release_set(be, 1) == 0);
    CHECK(zp_backend_cuda.prove_staged(be, 0, &a->key, got, &t) == 0 && same_g1(ZP_CURVE_BLS12_381, wa, got));
    CHECK(zp_backend_cuda.release_set(be, 0) == 0);
    CHECK(emu_clean(be, "one set"));
    zp_backend_cuda.close(&be);
    printf("  a staged key is not evicted (the other key streamed, %zu KiB); one buffer set in %zu KiB\n", m1 >> 10,
           m0 >> 10);
    synth_destroy(&a);
    synth_destroy(&b);
}

static void test_register(void)
{
    zp_backend_t *be = emu_open(NULL, NULL);
    size_t len = (size_t)10 << 20, chunk = (size_t)1 << 20, done = 0;
    char *p = malloc(len);
    int steps = 0;
    while (done < len && steps < 100) {
        CHECK(zp_cuda_host_register_step(be, p, len, chunk, &done, (size_t)3 << 20) == 0);
        steps++;
    }
    CHECK(done == len && steps == 4);
    CHECK(zp_backend_cuda.host_register(be, p, len) == 0);        /* pinned at start: a no-op now */
    CHECK(zp_backend_cuda.host_register(be, p, len / 2) == -EINVAL);
    CHECK(zp_backend_cuda.host_unregister(be, p) == 0);
    CHECK(zp_backend_cuda.host_unregister(be, p) == -EINVAL);
    unsigned long l0 = zp_cu_emu_leaks();
    zp_backend_cuda.close(&be);
    CHECK(zp_cu_emu_leaks() == l0);   /* every chunk unregistered */
    free(p);
    printf("  host registration in steps of 3 MiB (1 MiB chunks), repeat is a no-op\n");
}

static void test_device_spec(void)
{
    int ord;
    unsigned char u[16];
    CHECK(zp_cu_parse_device("0", &ord, u) == 0 && ord == 0);
    CHECK(zp_cu_parse_device("13", &ord, u) == 0 && ord == 13);
    CHECK(zp_cu_parse_device("GPU-5e3f0c1a-9b2d-4c7e-8f10-a2b3c4d5e6f7", &ord, u) == 0 && ord == -1);
    CHECK(u[0] == 0x5e && u[1] == 0x3f && u[15] == 0xf7);
    CHECK(zp_cu_parse_device("5e3f0c1a9b2d4c7e8f10a2b3c4d5e6f7", &ord, u) == 0 && ord == -1 && u[0] == 0x5e);
    CHECK(zp_cu_parse_device("", &ord, u) == ZP_EFORMAT);
    CHECK(zp_cu_parse_device("GPU-5e3f", &ord, u) == ZP_EFORMAT);
    CHECK(zp_cu_parse_device("GPU-5e3f0c1a-9b2d-4c7e-8f10-a2b3c4d5e6f7aa", &ord, u) == ZP_EFORMAT);
    CHECK(zp_cu_parse_device("gpu0", &ord, u) == ZP_EFORMAT);
    CHECK(zp_cu_parse_device("-1", &ord, u) == ZP_EFORMAT);
    printf("  device specs: ordinals and UUIDs parsed, malformed ones refused\n");
}

int main(int argc, char **argv)
{
    zp_log_init("test_cuda_exec");
    if (!getenv("ZP_LOG")) zp_log_level = ZP_LOG_ERROR;   /* the sweeps log every injected fault */
    zp_backend_cfg_t cfg = {.threads = 1, .device = 0};
    CHECK(zp_backend_cpu.open(&cpu, &cfg) == 0);
    const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(name, call)                             \
    if (!only || !strcmp(only, name)) {             \
        call;                                       \
    }
    RUN("spec", test_device_spec());
    RUN("register", test_register());
    RUN("equal", test_equal());
    RUN("windows", test_windows());
    RUN("batched", test_batched());
    RUN("retry", test_retry());
    RUN("streamed", test_streamed());
    RUN("trim", test_pool_trim());
    RUN("staged", test_staged_equal());
    RUN("overlap", test_staged_overlap());
    RUN("revoked", test_staged_revoked());
    RUN("keys", test_keys_alternate());
    RUN("inuse", test_keys_in_use());
    RUN("sfaults", {
        zp_log_level = -1;
        staged_fault_sweep(ZP_CURVE_BN254, 0, 0);
        staged_fault_sweep(ZP_CURVE_BLS12_381, 0, 1);
        staged_fault_sweep(ZP_CURVE_BN254, 1, 1);
        zp_log_level = ZP_LOG_ERROR;
    });
    RUN("faults", {
        zp_log_level = -1;   /* thousands of injected errors: not one line each */
        fault_sweep(ZP_CURVE_BN254, 5, 0, 0);
        fault_sweep(ZP_CURVE_BLS12_381, 4, 0, 1);
        fault_sweep(ZP_CURVE_BN254, 5, 1, 0);
        fault_sweep(ZP_CURVE_BLS12_381, 4, 1, 1);
        zp_log_level = ZP_LOG_ERROR;
    });
    zp_backend_cpu.close(&cpu);
    if (fails) {
        printf("test_cuda_exec: %d failures\n", fails);
        return 1;
    }
    printf("test_cuda_exec: ok\n");
    return 0;
}
