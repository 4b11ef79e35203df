/* prove.c - the three stages in one call (zp_g16_prove) for the local `zkpipe prove`,
 * benchmarks and tests, plus small helpers (witness copy, scalar parsing). The process group
 * runs the same stage functions in separate processes instead.
 * Tests: tests/test_groth16.c */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "groth16_int.h"

int zp_g16_scalar_from_dec(zp_scalar_t *v, zp_curve_id_t c, const char *s)
{
    const g16_curve_t *cv = g16_curve(c);
    if (!cv) return ZP_ECURVE;
    return cv->scalar_from_dec(v, s);
}

int zp_g16_witness_load(zp_scalar_t **w, const zp_wtns_t *wt)
{
    const g16_curve_t *cv = g16_curve(wt->curve);
    if (!cv) return ZP_ECURVE;
    if (wt->n8 != sizeof(zp_scalar_t))
        return zp_err_set(ZP_EFORMAT, "witness: %u-byte values, 32 expected", wt->n8);
    zp_scalar_t *p = g16_alloc((size_t)wt->n_witness * sizeof *p);
    if (!p) return zp_err_set(-ENOMEM, "witness: out of memory for %u values", wt->n_witness);
    memcpy(p, wt->values, (size_t)wt->n_witness * sizeof *p);
    for (uint32_t i = 0; i < wt->n_witness; i++)
        if (!cv->fr_canonical(&p[i])) {
            free(p);
            return zp_err_set(ZP_EFORMAT, "witness value %u is not < r", i);
        }
    *w = p;
    return 0;
}

int zp_g16_witness_inplace(const zp_scalar_t **w, zp_scalar_t **copy, zp_wtns_t *wt)
{
    const g16_curve_t *cv = g16_curve(wt->curve);
    if (!cv) return ZP_ECURVE;
    *w = NULL;
    *copy = NULL;
    if (wt->n8 != sizeof(zp_scalar_t))
        return zp_err_set(ZP_EFORMAT, "witness: %u-byte values, 32 expected", wt->n8);
    int rc = zp_wtns_align_values(wt);
    if (rc) return rc;
    if ((uintptr_t)wt->values % 8) {             /* caller memory at an odd address: copy */
        if ((rc = zp_g16_witness_load(copy, wt))) return rc;
        *w = *copy;
        return 0;
    }
    const zp_scalar_t *p = (const zp_scalar_t *)(const void *)wt->values;
    for (uint32_t i = 0; i < wt->n_witness; i++)
        if (!cv->fr_canonical(&p[i])) return zp_err_set(ZP_EFORMAT, "witness value %u is not < r", i);
    *w = p;
    return 0;
}

/* once: the key to consume (== k) or NULL */
static int prove_run(zp_g16_proof_t *proof, const zp_g16_key_t *k, zp_g16_key_t *once, const zp_scalar_t *w,
                     const zp_r1cs_t *r1cs, const zp_scalar_t *r, const zp_scalar_t *s, const zp_backend_ops_t *ops,
                     zp_backend_t *be, zp_pool_t *pool, zp_g16_prove_times_t *t)
{
    if ((!k->coefs && !k->coefs_raw) || !k->a || !k->b1 || !k->c || !k->h)
        return zp_err_set(-EINVAL, "prove: the proving key was consumed by a one-shot proof (zp_g16_prove_once)");
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    uint64_t t0 = zp_now_ns();
    zp_g16_prove_times_t tt;
    memset(&tt, 0, sizeof tt);
    size_t n = k->domain_size;
    /* a, b, c; h is computed in c's place (prove_g1 allows h == c) */
    zp_scalar_t *buf = g16_alloc(3 * n * sizeof *buf);
    if (!buf) return zp_err_set(-ENOMEM, "prove: out of memory for 3 x %zu scalars", n);
    zp_scalar_t *a = buf, *b = buf + n, *c = buf + 2 * n;
    zp_g1_any_t part[ZP_G16_NMSM];
    zp_trace_mark("prove: a, b, c buffers");
    int rc = zp_g16_synth(k, w, r1cs, a, b, c, pool);
    tt.synth_ns = zp_now_ns() - t0;
    zp_trace_mark("synthesis: a, b, c");
    if (once) {                                  /* the coefficients are dead */
        if (once->coefs_raw) g16_drop_pages(once->coefs_raw, (size_t)once->n_coefs * G16_RAW_COEF);
        else g16_drop_pages(once->coefs, (size_t)once->n_coefs * sizeof *once->coefs);
        once->coefs = NULL;
        once->coefs_raw = NULL;
        zp_trace_mark("drop the decoded coefficients");
    }
    /* only pi_C's sum of C and H is needed: a backend with prove_g1_sum runs them as one
     * (part[C] = C + H, part[H] = infinity); a one-shot proof's key is done with A and B1 after
     * their MSM (the CPU backend gives their pages back before the larger C + H scratch) */
    if (!rc)
        rc = ops->prove_g1_sum ? ops->prove_g1_sum(be, k, w, a, b, c, c, part, &tt.g1, once != NULL)
                               : ops->prove_g1(be, k, w, a, b, c, c, part, &tt.g1);
    free(buf);   /* before the G2 MSM, so that its pages are back first */
    if (once) {                                  /* so are the G1 point arrays */
        size_t g1 = cv->g1a_size, nv = once->n_vars;
        g16_drop_pages(once->a, zp_g16_key_n_a(once) * g1);
        g16_drop_pages(once->b1, zp_g16_key_n_b(once) * g1);
        g16_drop_pages(once->c, (nv - once->n_public - 1) * g1);
        g16_drop_pages(once->h, (size_t)once->domain_size * g1);
        once->a = once->b1 = once->c = once->h = NULL;
    }
    zp_trace_mark("free a, b, c; drop G1 point pages");
    if (!rc) {
        /* the G2 MSM runs in the CPU backend's MSM scratch, whose pages the G1 MSMs touched
         * already: one scratch resident instead of two (finalize_ctx keeps a context's
         * scratch when it is large enough, and the backend owns it) */
        zp_g16_fin_ctx_t ctx;
        zp_g16_fin_ctx_init(&ctx);
        size_t need = cv->msm_g2_scratch(k->n_vars, zp_pool_size(pool));
        /* (a compacted key's finalize also gathers B's scalars into its scratch: its own) */
        void *shared = ops == &zp_backend_cpu && !k->compact ? g16_cpu_scratch(be, need) : NULL;
        if (shared) {
            ctx.scratch = shared;
            ctx.scratch_len = need;
        }
        zp_trace_mark("G2 MSM scratch");
        rc = zp_g16_finalize_ctx(&ctx, k, w, part, r, s, proof, pool, &tt.fin);
        if (!shared) zp_g16_fin_ctx_close(&ctx);
    }
    tt.total_ns = zp_now_ns() - t0;
    if (t) *t = tt;
    return rc;
}

int zp_g16_prove(zp_g16_proof_t *proof, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                 const zp_scalar_t *r, const zp_scalar_t *s, const zp_backend_ops_t *ops, zp_backend_t *be,
                 zp_pool_t *pool, zp_g16_prove_times_t *t)
{
    return prove_run(proof, k, NULL, w, r1cs, r, s, ops, be, pool, t);
}

int zp_g16_prove_once(zp_g16_proof_t *proof, zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                      const zp_scalar_t *r, const zp_scalar_t *s, const zp_backend_ops_t *ops, zp_backend_t *be,
                      zp_pool_t *pool, zp_g16_prove_times_t *t)
{
    return prove_run(proof, k, k, w, r1cs, r, s, ops, be, pool, t);
}
