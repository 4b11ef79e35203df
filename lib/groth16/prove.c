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

int zp_g16_prove(zp_g16_proof_t *proof, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                 const zp_scalar_t *r, const zp_scalar_t *s, const zp_backend_ops_t *ops, zp_backend_t *be,
                 zp_pool_t *pool, zp_g16_prove_times_t *t)
{
    uint64_t t0 = zp_now_ns();
    zp_g16_prove_times_t tt;
    memset(&tt, 0, sizeof tt);
    size_t n = k->domain_size;
    zp_scalar_t *buf = g16_alloc(4 * n * sizeof *buf);
    if (!buf) return zp_err_set(-ENOMEM, "prove: out of memory for 4 x %zu scalars", n);
    zp_scalar_t *a = buf, *b = buf + n, *c = buf + 2 * n, *h = buf + 3 * n;
    zp_g1_any_t part[ZP_G16_NMSM];
    int rc = zp_g16_synth(k, w, r1cs, a, b, c, pool);
    tt.synth_ns = zp_now_ns() - t0;
    if (!rc) rc = ops->prove_g1(be, k, w, a, b, c, h, part, &tt.g1);
    if (!rc) rc = zp_g16_finalize(k, w, part, r, s, proof, pool, &tt.fin);
    free(buf);
    tt.total_ns = zp_now_ns() - t0;
    if (t) *t = tt;
    return rc;
}
