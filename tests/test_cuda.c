/* test_cuda.c - the CUDA backend against the CPU backend, on a device (suite cuda; exits 77 =
 * skipped when no CUDA device can be opened) or, with --emulate, on the host-emulated device
 * runtime (what `scripts/gpu-check --dry-run` runs where no device is).
 *   test_cuda [--emulate] [STEP [ARGS]]   (no STEP: ladder 10 16 20 22 up to ZP_CUDA_TEST_MAX_LOG
 *                                          (default 22), then hooks, staged; what the cuda suite runs)
 * Steps (scripts/gpu-check runs each under its own timeout and log):
 *   info          the start-up banner and the memory report
 *   ladder LG     GPU == CPU at 2^LG on both curves: msm_g1 (mixed scalars; binary-witness
 *                 scalars too from 2^20), compute_h, and prove_g1 (up to 2^20); a bellman-
 *                 convention key's compute_h and prove_g1 (BLS12-381, up to 2^20; issue 29)
 *   hooks         the paths only big inputs reach, forced small: batched MSM (one window a
 *                 batch), window sizes 2 and 20, non-resident bases, read-only registration
 *   staged LG     (added) double buffering: two keys (2^LG, 2^(LG-1)) alternating, the next
 *                 partition staged (stage_in) while one computes (prove_staged, another thread);
 *                 GPU == CPU, alternating keys not re-uploaded; BENCH: staged vs unstaged time
 *   big LG...     MSM on both curves and compute_h (bn254) at 2^LG, timed, with the pool and
 *                 cudaMemGetInfo after each (skipped when the inputs would not fit)
 *   h2d [GIB]     H2D bandwidth pageable vs registered; time to register GIB GiB (default 32,
 *                 capped by MemAvailable); a copy across two registered chunks
 * Numbers are printed (BENCH lines), never asserted. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TEST_SEED 0x3c6ef372fe94f82bULL
#include "tests/test_common.h"
#include "tests/test_cuda_common.h"
#include "lib/groth16/assignment.h"

static zp_backend_t *cpu, *gpu;
static int emulated;

static void mem_report(const char *after)
{
    char m[256];
    if (zp_cu_mem_report(zp_cuda_cu(gpu), m, sizeof m) == 0) printf("  memory after %s: %s\n", after, m);
}

static void report_rc(const char *what, int rc)
{
    if (rc) fprintf(stderr, "%s: %s: %s\n", what, zp_strerror(rc), zp_err_msg());
}

/* msm_g1 over n points / scalars of mode, GPU == CPU; tune (may be NULL) through the hooks */
static int msm_check(zp_curve_id_t curve, size_t n, int mode, const zp_cu_msm_tune_t *tune, const void *pts_in)
{
    void *p = pts_in ? (void *)pts_in : points_of(curve, n);
    zp_scalar_t *k = malloc((n ? n : 1) * sizeof *k);
    scalars_fill(k, n, modulus_of(curve), mode);
    zp_g1_any_t want, got;
    uint64_t t0 = zp_now_ns();
    CHECK(zp_backend_cpu_test_ops()->msm_g1(cpu, curve, &want, p, k, n) == 0);
    uint64_t t1 = zp_now_ns();
    zp_cu_hooks_t h;
    memset(&h, 0, sizeof h);
    if (tune) h.tune = *tune;
    zp_cu_set_hooks(zp_cuda_cu(gpu), &h);
    int rc = zp_backend_cuda_test_ops()->msm_g1(gpu, curve, &got, p, k, n);
    uint64_t t2 = zp_now_ns();
    zp_cu_set_hooks(zp_cuda_cu(gpu), NULL);
    report_rc("cuda msm_g1", rc);
    int ok = rc == 0 && g1_eq(curve, &want, &got);
    CHECK(ok);
    printf("  msm %s n %zu mode %d%s: %s (cpu %.1f ms, cuda incl. H2D %.1f ms)\n", zp_curve_name(curve), n, mode,
           tune ? " (tuned)" : "", ok ? "equal" : "DIFFERENT", (t1 - t0) / 1e6, (t2 - t1) / 1e6);
    free(k);
    if (!pts_in) free(p);
    return ok;
}

static int prove_check(zp_curve_id_t curve, unsigned lg, int streamed)
{
    synth_t *s = synth_new(curve, lg);
    zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM];
    zp_g16_times_t t;
    int kept = 0;
    zp_cu_hooks_t h;
    memset(&h, 0, sizeof h);
    h.force_streamed = streamed;
    zp_cu_set_hooks(zp_cuda_cu(gpu), &h);
    CHECK(cpu_prove_ref(cpu, s, want) == 0);
    int rc = cuda_prove(gpu, s, got, &kept, &t);
    zp_cu_set_hooks(zp_cuda_cu(gpu), NULL);
    report_rc("cuda prove_g1", rc);
    int ok = rc == 0 && kept;
    for (int m = 0; ok && m < ZP_G16_NMSM; m++) ok &= g1_eq(curve, &want[m], &got[m]);
    CHECK(ok);
    zp_cu_stats_t st;
    zp_cu_stats(zp_cuda_cu(gpu), &st);
    printf("  prove_g1 %s 2^%u (%s bases): %s (h2d %.2f, ntt %.2f, msm A %.2f B1 %.2f C %.2f H %.2f, total %.2f ms)\n",
           zp_curve_name(curve), lg, st.resident ? "resident" : "streamed", ok ? "equal" : "DIFFERENT", t.h2d_ns / 1e6,
           t.ntt_ns / 1e6, t.msm_ns[0] / 1e6, t.msm_ns[1] / 1e6, t.msm_ns[2] / 1e6, t.msm_ns[3] / 1e6, t.total_ns / 1e6);
    synth_destroy(&s);
    return ok;
}

static int h_check(zp_curve_id_t curve, unsigned lg)
{
    synth_t *s = synth_new(curve, lg);
    zp_g16_times_t t;
    int rc = 0;
    int ok = h_equal(cpu, gpu, s, &rc, &t);
    report_rc("cuda compute_h", rc);
    CHECK(ok);
    printf("  compute_h %s 2^%u: %s (h2d %.2f ms, ntt+h %.2f ms, d2h %.2f ms)\n", zp_curve_name(curve), lg,
           ok ? "equal" : "DIFFERENT", t.h2d_ns / 1e6, t.ntt_ns / 1e6, t.d2h_ns / 1e6);
    synth_destroy(&s);
    return ok;
}

/* a bellman-convention key (issue 29 item 4): H by bellman's roots and coset 7, the expanded
 * key's identity as H's last point; compute_h and prove_g1 == CPU */
static int bellman_check(unsigned lg)
{
    synth_t *s = synth_new(ZP_CURVE_BLS12_381, lg);
    s->key.conv = ZP_G16_CONV_BELLMAN;
    memset((zp_g1a_bls12_381_t *)s->pts[3] + (s->key.domain_size - 1), 0, sizeof(zp_g1a_bls12_381_t));
    zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM];
    zp_g16_times_t t;
    int rc = 0, kept = 0;
    int ok = h_equal(cpu, gpu, s, &rc, &t);
    report_rc("cuda compute_h (bellman)", rc);
    CHECK(cpu_prove_ref(cpu, s, want) == 0);
    rc = cuda_prove(gpu, s, got, &kept, &t);
    report_rc("cuda prove_g1 (bellman)", rc);
    ok &= rc == 0 && kept;
    for (int m = 0; ok && m < ZP_G16_NMSM; m++) ok &= g1_eq(ZP_CURVE_BLS12_381, &want[m], &got[m]);
    CHECK(ok);
    printf("  bellman key bls12_381 2^%u: compute_h, prove_g1 %s (ntt %.2f ms, total %.2f ms)\n", lg,
           ok ? "equal" : "DIFFERENT", t.ntt_ns / 1e6, t.total_ns / 1e6);
    synth_destroy(&s);
    return ok;
}

static void step_ladder(unsigned lg)
{
    size_t n = (size_t)1 << lg;
    for (int cv = 1; cv <= 2; cv++) {
        zp_curve_id_t c = (zp_curve_id_t)cv;
        msm_check(c, n, 0, NULL, NULL);
        if (lg >= 20) msm_check(c, n, 1, NULL, NULL);
        h_check(c, lg);
        if (lg <= 20) prove_check(c, lg, 0);
    }
    if (lg <= 20) bellman_check(lg);
    char what[32];
    snprintf(what, sizeof what, "ladder 2^%u", lg);
    mem_report(what);
}

static void step_hooks(unsigned lg)
{
    size_t n = (size_t)1 << lg;
    for (int cv = 1; cv <= 2; cv++) {
        zp_curve_id_t c = (zp_curve_id_t)cv;
        zp_cu_msm_tune_t one = {0, 0, 0, n, 0};   /* one window a batch */
        msm_check(c, n, 0, &one, NULL);
        /* c = 20: 2^19 buckets a window; the emulation loops over them on one CPU thread, so there
         * it stops at 14 (tests/test_cuda_exec.c covers 2..20 emulated at a smaller n) */
        zp_cu_msm_tune_t c2 = {2, 0, 0, 0, 0}, c20 = {emulated ? 14 : 20, 0, 0, 0, 0};
        msm_check(c, n / 4, 2, &c2, NULL);
        msm_check(c, n / 4, 0, &c20, NULL);
        prove_check(c, lg, 1);
    }
    /* read-only registration: points in a PROT_READ mapping (as the key store's) */
    size_t np = n, bytes = np * 96;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    if (m != MAP_FAILED) {
        void *p = points_of(ZP_CURVE_BLS12_381, np);
        memcpy(m, p, bytes);
        free(p);
        CHECK(mprotect(m, bytes, PROT_READ) == 0);
        int rc = zp_backend_cuda.host_register(gpu, m, bytes);
        report_rc("host_register of a read-only mapping", rc);
        CHECK(rc == 0);
        msm_check(ZP_CURVE_BLS12_381, np, 0, NULL, m);
        if (rc == 0) CHECK(zp_backend_cuda.host_unregister(gpu, m) == 0);
        munmap(m, bytes);
        printf("  read-only registration: %s\n", rc == 0 ? "ok" : "FAILED");
    }
    mem_report("hooks");
}

/* staged double buffering on the device (issue 10 items 2, 4): two keys (2^lg and 2^(lg-1))
 * alternating over rounds; the stage-in of the next partition (this thread) runs while the
 * previous one computes (a second thread); GPU == CPU, and both keys stay resident (2 uploads)
 * when they fit. Prints the staged pipeline's time next to the same proofs unstaged. */
typedef struct {
    const synth_t *s;
    unsigned set;
    zp_g1_any_t got[ZP_G16_NMSM];
    int rc;
} staged_job_t;

static void *staged_compute(void *p)
{
    staged_job_t *j = p;
    zp_g16_times_t t;
    j->rc = zp_backend_cuda.prove_staged(gpu, j->set, &j->s->key, j->got, &t);
    return NULL;
}

static void step_staged(unsigned lg)
{
    enum { ROUNDS = 3 };
    for (int cv = 1; cv <= 2; cv++) {
        zp_curve_id_t c = (zp_curve_id_t)cv;
        synth_t *k[2] = {synth_new(c, lg), synth_new(c, lg > 2 ? lg - 1 : lg)};
        zp_g1_any_t want[2][ZP_G16_NMSM], got[ZP_G16_NMSM];
        for (int i = 0; i < 2; i++) CHECK(cpu_prove_ref(cpu, k[i], want[i]) == 0);
        zp_cu_stats_t s0;
        zp_cu_stats(zp_cuda_cu(gpu), &s0);
        /* unstaged, for the comparison (and the twiddles, the keys) */
        uint64_t t0 = zp_now_ns();
        zp_g16_times_t t;
        for (int r = 0; r < 2 * ROUNDS; r++) {
            int rc = cuda_prove(gpu, k[r & 1], got, NULL, &t);
            report_rc("cuda prove_g1", rc);
            CHECK(rc == 0);
        }
        uint64_t t1 = zp_now_ns();
        /* staged: partition r + 1 staged while r computes */
        int ok = 1, rc = zp_backend_cuda.stage_in(gpu, 0, &k[0]->key, k[0]->w, k[0]->a, k[0]->b, k[0]->c);
        report_rc("cuda stage_in", rc);
        ok &= rc == 0;
        for (int r = 0; ok && r < 2 * ROUNDS; r++) {
            staged_job_t j = {.s = k[r & 1], .set = (unsigned)(r & 1)};
            pthread_t th;
            CHECK(pthread_create(&th, NULL, staged_compute, &j) == 0);
            int rs = 0;
            if (r + 1 < 2 * ROUNDS) {
                const synth_t *nx = k[(r + 1) & 1];
                rs = zp_backend_cuda.stage_in(gpu, (unsigned)((r + 1) & 1), &nx->key, nx->w, nx->a, nx->b, nx->c);
                report_rc("cuda stage_in", rs);
            }
            pthread_join(th, NULL);
            report_rc("cuda prove_staged", j.rc);
            ok &= j.rc == 0 && rs == 0;
            for (int m = 0; j.rc == 0 && m < ZP_G16_NMSM; m++) ok &= g1_eq(c, &want[r & 1][m], &j.got[m]);
            CHECK(zp_backend_cuda.release_set(gpu, (unsigned)(r & 1)) == 0);
            if (rs) break;
        }
        for (unsigned set = 0; !ok && set < 2; set++) (void)zp_backend_cuda.release_set(gpu, set);   /* no-op if free */
        uint64_t t2 = zp_now_ns();
        CHECK(ok);
        zp_cu_stats_t s1;
        zp_cu_stats(zp_cuda_cu(gpu), &s1);
        unsigned long up = s1.key_uploads - s0.key_uploads;
        if (s1.keys_resident >= 2) CHECK(up <= 2);   /* alternating keys are not re-uploaded */
        printf("  staged %s 2^%u / 2^%u x %d rounds: %s; key uploads %lu, evictions %lu, resident %u, staged %lu, "
               "deferred %lu, sets peak %u\n", zp_curve_name(c), k[0]->key.log_n, k[1]->key.log_n, ROUNDS,
               ok ? "equal" : "DIFFERENT", up, s1.key_evictions - s0.key_evictions, s1.keys_resident,
               s1.staged - s0.staged, s1.staged_deferred - s0.staged_deferred, s1.sets_peak);
        printf("BENCH staged %s 2^%u: unstaged %.2f ms, staged pipeline %.2f ms (%d proofs)\n", zp_curve_name(c), lg,
               (t1 - t0) / 1e6, (t2 - t1) / 1e6, 2 * ROUNDS);
        synth_destroy(&k[0]);
        synth_destroy(&k[1]);
    }
    mem_report("staged");
}

static size_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb << 10;
}

static void step_big(unsigned lg)
{
    size_t n = (size_t)1 << lg;
    for (int cv = 1; cv <= 2; cv++) {
        zp_curve_id_t c = (zp_curve_id_t)cv;
        size_t need_host = n * ((cv == 1 ? 64 : 96) + 32);
        if (need_host * 2 > mem_available()) {
            printf("BENCH cuda msm_g1 %s 2^%u: skipped (host memory: %zu MiB needed)\n", zp_curve_name(c), lg,
                   need_host >> 20);
            continue;
        }
        void *p = points_of(c, n);
        zp_scalar_t *k = malloc(n * sizeof *k);
        scalars_fill(k, n, modulus_of(c), 2);
        zp_g1_any_t got;
        double best = 1e30;
        int rc = 0;
        for (int rep = 0; rep < 2 && rc == 0; rep++) {
            uint64_t t0 = zp_now_ns();
            rc = zp_backend_cuda_test_ops()->msm_g1(gpu, c, &got, p, k, n);
            double ms = (zp_now_ns() - t0) / 1e6;
            best = ms < best ? ms : best;
        }
        report_rc("cuda msm_g1", rc);
        zp_cu_stats_t st;
        zp_cu_stats(zp_cuda_cu(gpu), &st);
        if (rc == 0)
            printf("BENCH cuda msm_g1 %s 2^%u: %.2f ms (best of 2, incl. H2D of points+scalars; budget %zu pairs, "
                   "%lu retries so far)\n", zp_curve_name(c), lg, best, st.last_max_pairs, st.msm_retries);
        else
            printf("BENCH cuda msm_g1 %s 2^%u: FAILED\n", zp_curve_name(c), lg);
        CHECK(rc == 0);
        free(k);
        free(p);
        char what[48];
        snprintf(what, sizeof what, "msm %s 2^%u", zp_curve_name(c), lg);
        mem_report(what);
    }
    /* the NTT round trip (compute_h: 3 forward + 3 inverse-coset transforms and the join) */
    size_t vb = 4 * n * 32;
    if (vb * 2 > mem_available()) {
        printf("BENCH cuda compute_h bn254 2^%u: skipped (host memory)\n", lg);
        return;
    }
    zp_scalar_t *v = calloc(4 * n, sizeof *v);
    zp_g16_key_t key;
    memset(&key, 0, sizeof key);
    key.curve = ZP_CURVE_BN254;
    key.n_vars = 1;
    key.domain_size = (uint32_t)n;
    key.log_n = lg;
    zp_g16_times_t t;
    int rc = v ? zp_backend_cuda_test_ops()->compute_h(gpu, &key, v, v + n, v + 2 * n, v + 3 * n, &t) : -1;
    report_rc("cuda compute_h", rc);
    CHECK(rc == 0);
    if (rc == 0)
        printf("BENCH cuda compute_h bn254 2^%u: %.2f ms kernels, h2d %.2f ms, d2h %.2f ms, total %.2f ms\n", lg,
               t.ntt_ns / 1e6, t.h2d_ns / 1e6, t.d2h_ns / 1e6, t.total_ns / 1e6);
    free(v);
    char what[48];
    snprintf(what, sizeof what, "compute_h 2^%u", lg);
    mem_report(what);
}

static void step_h2d(size_t gib)
{
    double pg = 0, pn = 0;
    size_t bench = emulated ? ((size_t)16 << 20) : ((size_t)1 << 30);
    int rc = zp_cuda_bench_h2d(gpu, bench, &pg, &pn);
    report_rc("bench_h2d", rc);
    CHECK(rc == 0);
    printf("BENCH H2D %zu MiB: pageable %.1f GB/s, registered %.1f GB/s\n", bench >> 20, pg, pn);
    size_t want = gib << 30, avail = mem_available();
    if (want > avail / 2) want = avail / 2 & ~(((size_t)1 << 30) - 1);
    if (want < ((size_t)1 << 30)) want = (size_t)1 << 30;
    char *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        printf("BENCH register: mmap of %zu GiB failed\n", want >> 30);
        return;
    }
    /* registered in 1 GiB chunks, as the worker may at start */
    size_t done = 0, chunk = (size_t)1 << 30;
    uint64_t t0 = zp_now_ns();
    rc = zp_cuda_host_register_step(gpu, p, want, chunk, &done, 0);
    uint64_t t1 = zp_now_ns();
    report_rc("register", rc);
    CHECK(rc == 0);
    printf("BENCH register %zu GiB in 1 GiB chunks (pre-fault included): %.1f ms\n", want >> 30, (t1 - t0) / 1e6);
    if (rc == 0) {
        t0 = zp_now_ns();
        CHECK(zp_backend_cuda.host_unregister(gpu, p) == 0);
        printf("BENCH unregister %zu GiB: %.1f ms\n", want >> 30, (zp_now_ns() - t0) / 1e6);
    }
    munmap(p, want);
}

static int open_gpu(void)
{
    zp_backend_cfg_t cfg = {.threads = 0, .device = 0};
    if (emulated) {
        zp_cu_emu_cfg_t e;
        memset(&e, 0, sizeof e);
        e.mem_total = (size_t)4 << 30;
        return zp_cuda_open_emulated(&gpu, &cfg, &e);
    }
    return zp_backend_cuda.open(&gpu, &cfg);
}

int main(int argc, char **argv)
{
    zp_log_init("test_cuda");
    int a = 1;
    if (a < argc && !strcmp(argv[a], "--emulate")) {
        emulated = 1;
        a++;
    }
    const char *step = a < argc ? argv[a++] : "all";
    int rc = open_gpu();
    if (rc) {
        printf("test_cuda: skipped: %s: %s\n", zp_strerror(rc), zp_err_msg());
        return rc == ZP_ENODEV ? 77 : 1;
    }
    zp_backend_cfg_t cfg = {.threads = 0, .device = 0};
    CHECK(zp_backend_cpu.open(&cpu, &cfg) == 0);
    printf("test_cuda %s on %s\n", step, emulated ? "the host-emulated device" : "the device");
    if (!strcmp(step, "info")) {
        mem_report("open");
    } else if (!strcmp(step, "ladder")) {
        for (; a < argc; a++) step_ladder((unsigned)atoi(argv[a]));
    } else if (!strcmp(step, "hooks")) {
        step_hooks(a < argc ? (unsigned)atoi(argv[a]) : 12);
    } else if (!strcmp(step, "staged")) {
        step_staged(a < argc ? (unsigned)atoi(argv[a]) : 12);
    } else if (!strcmp(step, "big")) {
        for (; a < argc; a++) step_big((unsigned)atoi(argv[a]));
    } else if (!strcmp(step, "h2d")) {
        step_h2d(a < argc ? (size_t)atoi(argv[a]) : 32);
    } else if (!strcmp(step, "all")) {
        unsigned max_log = 22;
        const char *ml = getenv("ZP_CUDA_TEST_MAX_LOG");
        if (ml) max_log = (unsigned)atoi(ml);
        static const unsigned sizes[] = {10, 16, 20, 22};
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max_log; i++) step_ladder(sizes[i]);
        step_hooks(max_log < 12 ? max_log : 12);
        step_staged(max_log < 16 ? max_log : 16);
    } else {
        fprintf(stderr, "test_cuda: unknown step %s (info, ladder LG..., hooks [LG], staged [LG], big LG..., h2d [GIB])\n", step);
        fails++;
    }
    zp_backend_cuda.close(&gpu);
    zp_backend_cpu.close(&cpu);
    if (emulated && zp_cu_emu_leaks()) {
        printf("test_cuda: the emulated device was closed with %lu allocations or registrations live\n", zp_cu_emu_leaks());
        fails++;
    }
    if (fails) {
        printf("test_cuda %s: %d failures\n", step, fails);
        return 1;
    }
    printf("test_cuda %s: ok\n", step);
    return 0;
}
