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
 *   - registration in steps, re-registration a no-op; device specs (ordinal / UUID) parsed. */
#include <errno.h>
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
