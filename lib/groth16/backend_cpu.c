/* backend_cpu.c - the CPU backend (zp_backend_cpu): stage 2 of the prover on the host.
 * Production verbs in zp_backend_cpu (groth16.h); compute_h and msm_g1 on their own are test
 * and bench verbs, in zp_backend_cpu_test_ops() (backend_test.h).
 * compute_h: three inverse NTTs, coset shift by w[log_n+1], three forward NTTs,
 * h = a*b - c, from Montgomery (lib/ntt); prove_g1_from (the GPU worker: the slot's vectors stay
 * intact) runs the same with the inverse NTTs out of place (their bit reversal reads a, b, c
 * and writes the caller's work buffers: the copy is that pass, not a pass before the compute);
 * prove_g1 is prove_g1_from in place, and h != c is out of place too (no memmove of c).
 * msm_g1 / prove_g1: Pippenger MSMs (lib/msm); A and B1 (same scalars w) run as one multi-MSM. prove_g1_batch (same-circuit batching): n jobs
 * of one key, their h per job, then their MSMs: those over the witnesses (A+B1, C) with the
 * shared-read batched MSMs of lib/msm/msm_batch.h from 2^16 points, everything else per
 * job (measured: batch_pays_* and doc/batch.md); any mix can be forced for tests/benches.
 * The instance owns one thread pool (cfg.threads, 0 = all cores) used by every NTT and MSM,
 * one NTT domain per curve (built on first use for a log_n, rebuilt only when log_n changes;
 * bellman keys: one more at bellman's roots, kept the same way)
 * and one MSM scratch area grown to the largest size seen (load_key sizes it for the key, so
 * proofs do not allocate). It is the reference the CUDA backend is tested against.
 * Not thread-safe: one call at a time per instance.
 * Tests: tests/test_groth16.c, tests/test_stage_oop.c (out of place against in place) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../msm/msm.h"
#include "../msm/msm_batch.h"
#include "assignment.h"
#include "backend_test.h"
#include "groth16_int.h"

struct zp_backend {
    const zp_backend_ops_t *ops;
    zp_pool_t *pool;
    void *dom[3];              /* indexed by zp_curve_id_t */
    unsigned dom_log[3];
    zp_ntt_bls12_381_domain_t *bdom;   /* bellman's roots (a ZP_G16_CONV_BELLMAN key), kept like dom */
    void *scratch;
    size_t scratch_len;
    zp_scalar_t *gath;         /* a compacted key's gathered A / B1 scalars when the work buffers are too small */
    size_t gath_len;           /* in scalars */
};

static int cpu_open(zp_backend_t **be, const zp_backend_cfg_t *cfg)
{
    zp_backend_t *b = calloc(1, sizeof *b);
    if (!b) return zp_err_set(-ENOMEM, "cpu backend: out of memory");
    b->ops = &zp_backend_cpu;
    b->pool = zp_pool_new(cfg ? cfg->threads : 0);
    if (!b->pool) {
        free(b);
        return zp_err_set(-ENOMEM, "cpu backend: cannot start the thread pool");
    }
    *be = b;
    return 0;
}

static void cpu_close(zp_backend_t **be)
{
    if (!be || !*be) return;
    zp_backend_t *b = *be;
    for (int i = 0; i < 3; i++)
        if (b->dom[i]) g16_curve((zp_curve_id_t)i)->dom_free(b->dom[i]);
    if (b->bdom) zp_ntt_bls12_381_domain_close(b->bdom);
    free(b->bdom);
    free(b->scratch);
    free(b->gath);
    zp_pool_destroy(&b->pool);
    free(b);
    *be = NULL;
}

static int cpu_host_register(zp_backend_t *be, void *p, size_t len)
{
    (void)be; (void)p; (void)len;
    return 0;
}

static int cpu_host_unregister(zp_backend_t *be, void *p)
{
    (void)be; (void)p;
    return 0;
}

static int ensure_domain(zp_backend_t *be, const g16_curve_t *cv, unsigned log_n)
{
    int ci = (int)cv->id;
    if (be->dom[ci] && be->dom_log[ci] == log_n) return 0;
    if (be->dom[ci]) cv->dom_free(be->dom[ci]);
    be->dom[ci] = NULL;
    int rc = cv->dom_new(&be->dom[ci], log_n, be->pool);
    if (rc) return zp_err_set(rc, "cpu backend: NTT domain 2^%u: %s", log_n, zp_strerror(rc));
    be->dom_log[ci] = log_n;
    return 0;
}

/* bellman's domain for log_n (built on first use, rebuilt only when log_n changes) */
static int ensure_bdomain(zp_backend_t *be, unsigned log_n)
{
    if (be->bdom && be->bdom->log_n == log_n) return 0;
    if (!be->bdom && !(be->bdom = calloc(1, sizeof *be->bdom)))
        return zp_err_set(-ENOMEM, "cpu backend: bellman NTT domain: out of memory");
    zp_ntt_bls12_381_domain_close(be->bdom);
    int rc = zp_g16_bellman_domain_new(be->bdom, log_n, be->pool);
    if (rc) {
        free(be->bdom);
        be->bdom = NULL;
        return zp_err_set(rc, "cpu backend: bellman NTT domain 2^%u: %s", log_n, zp_strerror(rc));
    }
    return 0;
}

static int ensure_scratch(zp_backend_t *be, size_t len)
{
    if (len <= be->scratch_len) return 0;
    void *p = g16_alloc(len);
    if (!p) return zp_err_set(-ENOMEM, "cpu backend: cannot allocate %zu bytes of MSM scratch", len);
    free(be->scratch);
    be->scratch = p;
    be->scratch_len = len;
    return 0;
}

/* where a compacted key's gathered scalars go: A's into a and B1's into b (both dead once h
 * is computed, domain_size each) when they fit, else (more wires in A or B than the domain:
 * circuits with wide constraints) a buffer of the backend's, allocated by load_key */
static size_t gather_need(const zp_g16_key_t *k)
{
    return (size_t)(k->n_a > k->domain_size ? k->n_a : 0) + (size_t)(k->n_b > k->domain_size ? k->n_b : 0);
}

static int ensure_gath(zp_backend_t *be, size_t n)
{
    if (n <= be->gath_len) return 0;
    zp_scalar_t *p = g16_alloc(n * sizeof *p);
    if (!p) return zp_err_set(-ENOMEM, "cpu backend: cannot allocate %zu gathered scalars", n);
    free(be->gath);
    be->gath = p;
    be->gath_len = n;
    return 0;
}

/* (be->gath holds gather_need(k) scalars: ensure_gath first) */
static void gather_room(zp_backend_t *be, const zp_g16_key_t *k, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t **sa,
                        zp_scalar_t **sb)
{
    zp_scalar_t *g = be->gath;
    *sa = k->n_a <= k->domain_size ? a : g;
    if (*sa == g) g += k->n_a;
    *sb = k->n_b <= k->domain_size ? b : g;
}

void *g16_cpu_scratch(zp_backend_t *be, size_t len)
{
    return ensure_scratch(be, len) ? NULL : be->scratch;
}

static size_t key_msm_max(const zp_g16_key_t *k)
{
    return k->n_vars > k->domain_size ? k->n_vars : k->domain_size;
}

/* A and B1 are MSMs over the same scalars (w): one multi-MSM classifies w once and runs
 * both MSMs' tasks in one pool run (lib/msm: zp_msm_g1_<C>_multi) */
static size_t ab_scratch(zp_curve_id_t c, size_t n, unsigned nt)
{
    switch (c) {
    case ZP_CURVE_BN254: return zp_msm_g1_bn254_multi_scratch_size(n, 2, nt);
    case ZP_CURVE_BLS12_381: return zp_msm_g1_bls12_381_multi_scratch_size(n, 2, nt);
    default: return 0;
    }
}

/* A and B1 of a compacted key (bellman's a and b_g1, k->compact): their scalars gathered
 * from w into sa (n_a) and sb (n_b) on the pool, then one MSM each */
static void ab_msm_compact(zp_g1_any_t out[2], const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *sa,
                           zp_scalar_t *sb, void *scratch, zp_pool_t *pool)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    zp_g16_gather(sa, w, k->dens_a, k->pfx_a, k->n_vars, pool);
    zp_g16_gather(sb, w, k->dens_b, k->pfx_b, k->n_vars, pool);
    cv->msm_g1(&out[0], k->a, sa, k->n_a, scratch, pool);
    cv->msm_g1(&out[1], k->b1, sb, k->n_b, scratch, pool);
}

static void ab_msm(zp_g1_any_t out[2], const zp_g16_key_t *k, const zp_scalar_t *w, void *scratch,
                   zp_pool_t *pool)
{
    zp_g1_any_t r[2];
    if (k->curve == ZP_CURVE_BN254) {
        const zp_g1a_bn254_t *pts[2] = {k->a, k->b1};
        zp_g1_bn254_t o[2];
        zp_msm_g1_bn254_multi(o, pts, 2, w, k->n_vars, scratch, pool);
        r[0].bn254 = o[0];
        r[1].bn254 = o[1];
    } else {
        const zp_g1a_bls12_381_t *pts[2] = {k->a, k->b1};
        zp_g1_bls12_381_t o[2];
        zp_msm_g1_bls12_381_multi(o, pts, 2, w, k->n_vars, scratch, pool);
        r[0].bls12_381 = o[0];
        r[1].bls12_381 = o[1];
    }
    out[0] = r[0];
    out[1] = r[1];
}

static size_t key_scratch(const g16_curve_t *cv, const zp_g16_key_t *k, unsigned nt)
{
    size_t a = cv->msm_g1_scratch(key_msm_max(k), nt), b = ab_scratch(k->curve, k->n_vars, nt);
    return a > b ? a : b;
}

static int cpu_load_key(zp_backend_t *be, const zp_g16_key_t *k)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    int rc = k->conv == ZP_G16_CONV_BELLMAN ? ensure_bdomain(be, k->log_n) : ensure_domain(be, cv, k->log_n);
    if (rc) return rc;
    if (k->compact && (rc = ensure_gath(be, gather_need(k)))) return rc;
    return ensure_scratch(be, key_scratch(cv, k, zp_pool_size(be->pool)));
}

/* h from a_in, b_in, c into the work buffers a, b, h: the inverse NTTs' first pass (the bit
 * reversal) reads the sources and writes the work buffers, so nothing is copied before (a
 * source equal to its buffer: in place) */
static int cpu_compute_h_from(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *a_in,
                              const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b,
                              zp_scalar_t *h, zp_g16_times_t *t)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    int rc = k->conv == ZP_G16_CONV_BELLMAN ? ensure_bdomain(be, k->log_n) : ensure_domain(be, cv, k->log_n);
    if (rc) return rc;
    uint64_t t0 = zp_now_ns();
    if (k->conv == ZP_G16_CONV_BELLMAN) {
        /* a bellman key (issue 29 item 4): H as bellman computes it (coset with generator 7,
         * bellman's roots, n - 1 coefficients; h[n-1] = 0 meets the key's identity point). The
         * inverse NTTs read the sources (no copy before), the conversion writes h (none after) */
        typedef zp_fr_bls12_381_t fr;
        zp_g16_bellman_h_dom(be->bdom, (fr *)h, (const fr *)a_in, (const fr *)b_in, (const fr *)c, (fr *)a,
                             (fr *)b, (fr *)h, be->pool);
        memset(&h[k->domain_size - 1], 0, sizeof *h);
    } else {
        cv->compute_h_from(be->dom[cv->id], k->log_n, a_in, b_in, c, a, b, h, be->pool);
    }
    if (t) t->ntt_ns = zp_now_ns() - t0;
    return 0;
}

static int cpu_compute_h(zp_backend_t *be, const zp_g16_key_t *k, zp_scalar_t *a, zp_scalar_t *b,
                         const zp_scalar_t *c, zp_scalar_t *h, zp_g16_times_t *t)
{
    return cpu_compute_h_from(be, k, a, b, c, a, b, h, t);
}

static int cpu_msm_g1(zp_backend_t *be, zp_curve_id_t curve, zp_g1_any_t *out, const void *points,
                      const zp_scalar_t *scalars, size_t n)
{
    const g16_curve_t *cv = g16_curve(curve);
    if (!cv) return ZP_ECURVE;
    int rc = ensure_scratch(be, cv->msm_g1_scratch(n, zp_pool_size(be->pool)));
    if (rc) return rc;
    cv->msm_g1(out, points, scalars, n, be->scratch, be->pool);
    return 0;
}

/* prove_g1 (a_in == a, b_in == b) and prove_g1_from (a, b, h the caller's work buffers);
 * sum_ch (prove_g1_sum): C and H as one MSM, out[C] = C + H, out[H] = infinity; drop_ab: the
 * A and B1 point arrays' pages are given back after their MSM (their time split evenly: C's
 * and H's as A's and B1's) */
static int prove_g1_run(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a_in,
                        const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b,
                        zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t, bool sum_ch,
                        bool drop_ab)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    uint64_t t0 = zp_now_ns();
    zp_g16_times_t tt;
    memset(&tt, 0, sizeof tt);
    const size_t nc = (size_t)k->n_vars - k->n_public - 1;
    const unsigned nt = zp_pool_size(be->pool);
    size_t need = key_scratch(cv, k, nt), sum_need = sum_ch ? cv->msm_g1_sum2_scratch(nc, k->domain_size, nt) : 0;
    if (sum_need > need) need = sum_need;
    int rc = cpu_compute_h_from(be, k, a_in, b_in, c, a, b, h, &tt);
    if (!rc) rc = ensure_scratch(be, need);
    if (rc) return rc;
    /* a and b are dead now (clobbered, by the contract): their pages go back before the MSMs
     * touch their scratch (private memory: freed; a shm slot keeps its content) */
    /* a compacted key's A and B1 scalars (gathered from w) go into a and b where they fit,
     * else into memory of the backend's (grown once, kept) */
    zp_scalar_t *sa = a, *sb = b;
    if (k->compact) {
        if ((rc = ensure_gath(be, gather_need(k)))) return rc;
        gather_room(be, k, a, b, &sa, &sb);
    }
    if (!k->compact) {
        g16_drop_pages(a, (size_t)k->domain_size * sizeof *a);
        g16_drop_pages(b, (size_t)k->domain_size * sizeof *b);
    }
    zp_trace_mark("MSM scratch; drop a, b");
    const struct { const void *pts; const zp_scalar_t *s; size_t n; } job[ZP_G16_NMSM] = {
        [ZP_G16_A] = {k->a, w, k->n_vars},
        [ZP_G16_B1] = {k->b1, w, k->n_vars},
        [ZP_G16_C] = {k->c, w + k->n_public + 1, nc},
        [ZP_G16_H] = {k->h, h, k->domain_size},
    };
    /* A and B1 together; their time is split evenly between msm_ns[A] and msm_ns[B1] */
    uint64_t m0 = zp_now_ns();
    if (k->compact)
        ab_msm_compact(&out[ZP_G16_A], k, w, sa, sb, be->scratch, be->pool);
    else
        ab_msm(&out[ZP_G16_A], k, w, be->scratch, be->pool);
    tt.msm_ns[ZP_G16_A] = (zp_now_ns() - m0) / 2;
    tt.msm_ns[ZP_G16_B1] = tt.msm_ns[ZP_G16_A];
    zp_trace_mark("MSM A + B1 (G1, one multi-MSM over w)");
    if (drop_ab) {   /* before the C + H MSM's larger scratch is touched: not resident together */
        g16_drop_pages(k->a, zp_g16_key_n_a(k) * cv->g1a_size);
        g16_drop_pages(k->b1, zp_g16_key_n_b(k) * cv->g1a_size);
        zp_trace_mark("drop A, B1 point pages");
    }
    if (sum_ch) {
        m0 = zp_now_ns();
        cv->msm_g1_sum2(&out[ZP_G16_C], k->c, job[ZP_G16_C].s, nc, k->h, h, k->domain_size, be->scratch,
                        be->pool);
        if (k->curve == ZP_CURVE_BN254)
            zp_g1_bn254_set_inf(&out[ZP_G16_H].bn254);
        else
            zp_g1_bls12_381_set_inf(&out[ZP_G16_H].bls12_381);
        tt.msm_ns[ZP_G16_C] = (zp_now_ns() - m0) / 2;
        tt.msm_ns[ZP_G16_H] = tt.msm_ns[ZP_G16_C];
        zp_trace_mark("MSM C + H (G1, one MSM)");
    }
    for (int i = ZP_G16_C; i < ZP_G16_NMSM && !sum_ch; i++) {
        uint64_t m0 = zp_now_ns();
        cv->msm_g1(&out[i], job[i].pts, job[i].s, job[i].n, be->scratch, be->pool);
        tt.msm_ns[i] = zp_now_ns() - m0;
        zp_trace_mark(i == ZP_G16_C ? "MSM C (G1)" : "MSM H (G1)");
    }
    tt.total_ns = zp_now_ns() - t0;
    if (t) *t = tt;
    return 0;
}

static int cpu_prove_g1_from(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a_in,
                             const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b,
                             zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t)
{
    return prove_g1_run(be, k, w, a_in, b_in, c, a, b, h, out, t, false, false);
}

static int cpu_prove_g1_sum(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a,
                            zp_scalar_t *b, const zp_scalar_t *c, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM],
                            zp_g16_times_t *t, bool key_done)
{
    return prove_g1_run(be, k, w, a, b, c, a, b, h, out, t, true, key_done);
}

static int cpu_prove_g1(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a,
                        zp_scalar_t *b, const zp_scalar_t *c, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM],
                        zp_g16_times_t *t)
{
    return cpu_prove_g1_from(be, k, w, a, b, c, a, b, h, out, t);
}

/* ---- same-circuit batching (issue 10 item 5): prove_g1_batch ----
 * The jobs' h (NTTs) one job after another, then the MSMs over the key's bases with the jobs'
 * scalars, batched (lib/msm/msm_batch.h: each point read once for all jobs of a group):
 * A and B1 (2 bases, the witnesses), C (the witnesses past the public inputs), H (the h's).
 * Up to BATCH_GROUP jobs share one pass (scratch grows with the group: m bucket sets per
 * thread and, with the endomorphism, m * 2n halves). Results equal prove_g1 per job. */
enum { BATCH_GROUP = 4 };

/* Whether the shared-read MSMs pay for a group of m jobs over n points on the CPU, by the
 * kind of scalars. Measured (doc/batch.md; process CPU time, G1, m = 2 and 4, 1 and 2
 * threads, batched / separate; a loaded machine: single runs vary by up to 15%, so the
 * doubtful ones were rerun):
 *   witness-like (sparse: 0/1/small, same-circuit classes): 0.91-0.95 from 2^16 with m = 4
 *     (both curves, 1 and 2 threads, up to 2^20) and from 2^18 with m = 2 (0.95 at 2^19 and
 *     2^20); 0.98-1.02 at 2^16 with m = 2; 0.99-1.06 at 2^12-2^14. Not from fewer additions
 *     (there are as many); candidates: the shared pre-pass, the in-order point scan (not
 *     established);
 *   uniform (h): 1.00-1.06 at 2^12-2^16, 1.05-1.14 at 2^18-2^20: a loss (m bucket sets per
 *     thread, more cache misses on the buckets; the arithmetic, the same, bounds the CPU MSM).
 * So: A+B1 and C (over the witnesses) shared from 2^16 points, H per job. */
static bool batch_pays_witness(size_t n, unsigned m) { return m >= 2 && n >= ((size_t)1 << 16); }
static bool batch_pays_uniform(size_t n, unsigned m)
{
    (void)n;
    (void)m;
    return false;
}

/* the batched MSMs' scratch: those over the witnesses (sw), the one over h (sh) */
static size_t batch_scratch(const zp_g16_key_t *k, unsigned m, unsigned nt, bool sw, bool sh)
{
    const size_t nc = (size_t)k->n_vars - k->n_public - 1;
    const size_t ns[3] = {k->n_vars, nc, k->domain_size};
    const unsigned nb[3] = {2, 1, 1};
    size_t best = 0;
    for (int i = sw ? 0 : 2; i < (sh ? 3 : 2); i++) {
        size_t x = k->curve == ZP_CURVE_BN254 ? zp_msm_g1_bn254_batch_scratch_size(ns[i], nb[i], m, nt, NULL)
                                              : zp_msm_g1_bls12_381_batch_scratch_size(ns[i], nb[i], m, nt, NULL);
        best = x > best ? x : best;
    }
    return best;
}

/* out[j * nbases + b] for the m jobs' scalar vectors s[j] over the key arrays pts[b] */
static void batch_msm(zp_g1_any_t *out, const zp_g16_key_t *k, const void *const *pts, unsigned nbases,
                      const zp_scalar_t *const *s, unsigned m, size_t n, void *scratch, zp_pool_t *pool)
{
    if (k->curve == ZP_CURVE_BN254) {
        zp_g1_bn254_t o[BATCH_GROUP * 2];
        zp_msm_g1_bn254_batch(o, (const zp_g1a_bn254_t *const *)pts, nbases, s, m, n, scratch, pool, NULL);
        for (unsigned i = 0; i < m * nbases; i++) out[i].bn254 = o[i];
    } else {
        zp_g1_bls12_381_t o[BATCH_GROUP * 2];
        zp_msm_g1_bls12_381_batch(o, (const zp_g1a_bls12_381_t *const *)pts, nbases, s, m, n, scratch, pool, NULL);
        for (unsigned i = 0; i < m * nbases; i++) out[i].bls12_381 = o[i];
    }
}

/* the MSMs of jobs[0, m), m <= BATCH_GROUP, after their h: those over the witnesses (A+B1,
 * C) shared if sw, H shared if sh, the others per job as prove_g1 runs them; times added */
static void batch_group(zp_backend_t *be, const zp_g16_key_t *k, unsigned m, zp_g16_g1_job_t *jobs,
                        bool sw, bool sh, zp_g16_times_t *tt)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    const size_t nc = (size_t)k->n_vars - k->n_public - 1;
    const zp_scalar_t *w[BATCH_GROUP], *wc[BATCH_GROUP], *h[BATCH_GROUP];
    zp_g1_any_t o[BATCH_GROUP * 2];
    for (unsigned j = 0; j < m; j++) {
        w[j] = jobs[j].w;
        wc[j] = jobs[j].w + k->n_public + 1;
        h[j] = jobs[j].h;
    }
    const void *ab[2] = {k->a, k->b1}, *c[1] = {k->c}, *hp[1] = {k->h};
    uint64_t t0 = zp_now_ns();
    if (sw && !k->compact) {
        batch_msm(o, k, ab, 2, w, m, k->n_vars, be->scratch, be->pool);
        for (unsigned j = 0; j < m; j++) {
            jobs[j].out[ZP_G16_A] = o[2 * j];
            jobs[j].out[ZP_G16_B1] = o[2 * j + 1];
        }
    } else {
        for (unsigned j = 0; j < m; j++) {
            zp_scalar_t *sa, *sb;   /* a compacted key: per job, its scalars gathered (room ensured by the caller) */
            if (k->compact) {
                gather_room(be, k, jobs[j].a, jobs[j].b, &sa, &sb);
                ab_msm_compact(&jobs[j].out[ZP_G16_A], k, w[j], sa, sb, be->scratch, be->pool);
            } else {
                ab_msm(&jobs[j].out[ZP_G16_A], k, w[j], be->scratch, be->pool);
            }
        }
    }
    uint64_t t1 = zp_now_ns();
    if (sw) {
        batch_msm(o, k, c, 1, wc, m, nc, be->scratch, be->pool);
        for (unsigned j = 0; j < m; j++) jobs[j].out[ZP_G16_C] = o[j];
    } else {
        for (unsigned j = 0; j < m; j++) cv->msm_g1(&jobs[j].out[ZP_G16_C], k->c, wc[j], nc, be->scratch, be->pool);
    }
    uint64_t t2 = zp_now_ns();
    if (sh) {
        batch_msm(o, k, hp, 1, h, m, k->domain_size, be->scratch, be->pool);
        for (unsigned j = 0; j < m; j++) jobs[j].out[ZP_G16_H] = o[j];
    } else {
        for (unsigned j = 0; j < m; j++)
            cv->msm_g1(&jobs[j].out[ZP_G16_H], k->h, h[j], k->domain_size, be->scratch, be->pool);
    }
    uint64_t t3 = zp_now_ns();
    tt->msm_ns[ZP_G16_A] += (t1 - t0) / 2;
    tt->msm_ns[ZP_G16_B1] += (t1 - t0) / 2;
    tt->msm_ns[ZP_G16_C] += t2 - t1;
    tt->msm_ns[ZP_G16_H] += t3 - t2;
}

static int cpu_prove_g1_batch_mode(zp_backend_t *be, const zp_g16_key_t *k, unsigned n, zp_g16_g1_job_t *jobs,
                                   zp_g16_times_t *t, int mode)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    if (n > 0 && !jobs) return zp_err_set(-EINVAL, "cpu backend: prove_g1_batch: %u jobs, no job array", n);
    int rc0 = k->compact ? ensure_gath(be, gather_need(k)) : 0;
    if (rc0) return rc0;
    uint64_t t0 = zp_now_ns();
    zp_g16_times_t tt;
    memset(&tt, 0, sizeof tt);
    int rc = 0;
    for (unsigned j = 0; j < n; j++) {
        zp_g16_times_t tj;
        const unsigned m = n - j < BATCH_GROUP ? n - j : BATCH_GROUP;
        const bool auto_ = mode == ZP_G16_BATCH_AUTO;
        const bool sw = mode == ZP_G16_BATCH_SHARED || mode == ZP_G16_BATCH_SHARED_WITNESS ||
                        (auto_ && batch_pays_witness(k->n_vars, m));
        const bool sh = mode == ZP_G16_BATCH_SHARED || (auto_ && batch_pays_uniform(k->domain_size, m));
        if (m > 1 && (sw || sh)) {
            /* a group: its h's, then its MSMs (shared where they pay) */
            for (unsigned i = j; i < j + m; i++) {
                if ((rc = cpu_compute_h_from(be, k, zp_g16_job_a(&jobs[i]), zp_g16_job_b(&jobs[i]), jobs[i].c,
                                             jobs[i].a, jobs[i].b, jobs[i].h, &tj)))
                    return rc;
                tt.ntt_ns += tj.ntt_ns;
            }
            size_t a = key_scratch(cv, k, zp_pool_size(be->pool)), b = batch_scratch(k, m, zp_pool_size(be->pool), sw, sh);
            if ((rc = ensure_scratch(be, a > b ? a : b))) return rc;
            batch_group(be, k, m, jobs + j, sw, sh, &tt);
            j += m - 1;
            continue;
        }
        rc = cpu_prove_g1_from(be, k, jobs[j].w, zp_g16_job_a(&jobs[j]), zp_g16_job_b(&jobs[j]), jobs[j].c,
                               jobs[j].a, jobs[j].b, jobs[j].h, jobs[j].out, &tj);
        if (rc) return rc;
        tt.ntt_ns += tj.ntt_ns;
        for (int i = 0; i < ZP_G16_NMSM; i++) tt.msm_ns[i] += tj.msm_ns[i];
    }
    tt.total_ns = zp_now_ns() - t0;
    if (t) *t = tt;
    return 0;
}

static int cpu_prove_g1_batch(zp_backend_t *be, const zp_g16_key_t *k, unsigned n, zp_g16_g1_job_t *jobs,
                              zp_g16_times_t *t)
{
    return cpu_prove_g1_batch_mode(be, k, n, jobs, t, ZP_G16_BATCH_AUTO);
}

const zp_backend_ops_t zp_backend_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .host_register = cpu_host_register,
    .host_unregister = cpu_host_unregister,
    .load_key = cpu_load_key,
    .prove_g1 = cpu_prove_g1,
    .prove_g1_batch = cpu_prove_g1_batch,
    .prove_g1_from = cpu_prove_g1_from,
    .prove_g1_sum = cpu_prove_g1_sum,
};

/* the test and bench verbs (backend_test.h), off the production table */
static const zp_backend_test_ops_t cpu_test_ops = {
    .name = "cpu",
    .compute_h = cpu_compute_h,
    .msm_g1 = cpu_msm_g1,
    .prove_g1_batch_mode = cpu_prove_g1_batch_mode,
    .compute_h_from = cpu_compute_h_from,
};

const zp_backend_test_ops_t *zp_backend_cpu_test_ops(void)
{
    return &cpu_test_ops;
}
