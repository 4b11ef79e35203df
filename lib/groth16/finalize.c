/* finalize.c - stage 3 (G2 MSM, blinding, assembly, pairing self-check), verification, and
 * the proof/public encodings (snarkjs JSON via lib/fmt, compressed binary).
 * r and s are standard-form scalars < r; fresh ones come from getrandom (zp_random_bytes).
 * A proof leaves zp_g16_finalize only after it verified against the key's own verification
 * key: ZP_EVERIFY otherwise, and the output is zeroed.
 * zp_g16_finalize_ctx keeps the G2 MSM scratch in a caller's context between proofs;
 * zp_g16_finalize wraps it with a temporary one.
 * zp_g16_verify: 0 valid, ZP_EVERIFY invalid, ZP_EMISMATCH (wrong count / curve) or
 * ZP_EFORMAT (public value >= r) for bad input.
 * Tests: tests/test_groth16.c, tests/oracle/test_prove.sh */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "groth16_int.h"

int g16_blinding(zp_scalar_t *out, const g16_curve_t *cv, const zp_scalar_t *given, const char *name)
{
    if (!given) return cv->random_scalar(out);
    if (!cv->fr_canonical(given)) return zp_err_set(ZP_EFORMAT, "blinding %s is not < the group order", name);
    *out = *given;
    return 0;
}

void zp_g16_fin_ctx_init(zp_g16_fin_ctx_t *ctx)
{
    ctx->scratch = NULL;
    ctx->scratch_len = 0;
}

void zp_g16_fin_ctx_close(zp_g16_fin_ctx_t *ctx)
{
    if (!ctx) return;
    free(ctx->scratch);
    zp_g16_fin_ctx_init(ctx);
}

int zp_g16_finalize(const zp_g16_key_t *k, const zp_scalar_t *w, const zp_g1_any_t part[ZP_G16_NMSM],
                    const zp_scalar_t *r, const zp_scalar_t *s, zp_g16_proof_t *proof,
                    zp_pool_t *pool, zp_g16_fin_times_t *t)
{
    zp_g16_fin_ctx_t ctx;
    zp_g16_fin_ctx_init(&ctx);
    int rc = zp_g16_finalize_ctx(&ctx, k, w, part, r, s, proof, pool, t);
    zp_g16_fin_ctx_close(&ctx);
    return rc;
}

int zp_g16_finalize_ctx(zp_g16_fin_ctx_t *ctx, const zp_g16_key_t *k, const zp_scalar_t *w,
                        const zp_g1_any_t part[ZP_G16_NMSM], const zp_scalar_t *r, const zp_scalar_t *s,
                        zp_g16_proof_t *proof, zp_pool_t *pool, zp_g16_fin_times_t *t)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    uint64_t t0 = zp_now_ns();
    zp_g16_fin_times_t tt;
    memset(&tt, 0, sizeof tt);
    memset(proof, 0, sizeof *proof);
    zp_scalar_t rr, ss;
    int rc;
    if ((rc = g16_blinding(&rr, cv, r, "r")) || (rc = g16_blinding(&ss, cv, s, "s"))) return rc;
    zp_trace_mark("blinding r, s");

    /* pi_b' = sum w_i B2_i (G2); a compacted key (bellman's b_g2): over B's scalars, gathered
     * from w into the scratch's head */
    size_t nb = zp_g16_key_n_b(k), gb = k->compact ? (nb * sizeof(zp_scalar_t) + 63) & ~(size_t)63 : 0;
    size_t need = cv->msm_g2_scratch(nb, zp_pool_size(pool)) + gb;
    if (need > ctx->scratch_len || !ctx->scratch) {
        void *p = g16_alloc(need ? need : 64);
        if (!p) return zp_err_set(-ENOMEM, "finalize: out of memory for the G2 MSM scratch (%zu bytes)", need);
        free(ctx->scratch);
        ctx->scratch = p;
        ctx->scratch_len = need;
    }
    zp_g2_any_t b2;
    const zp_scalar_t *sb = w;
    if (k->compact) {
        zp_g16_gather(ctx->scratch, w, k->dens_b, k->pfx_b, k->n_vars, pool);
        sb = ctx->scratch;
    }
    cv->msm_g2(&b2, k->b2, sb, nb, (uint8_t *)ctx->scratch + gb, pool);
    uint64_t t1 = zp_now_ns();
    tt.msm_g2_ns = t1 - t0;
    zp_trace_mark("MSM B2 (G2)");

    cv->assemble(proof, k, part, &b2, &rr, &ss);
    uint64_t t2 = zp_now_ns();
    tt.assemble_ns = t2 - t1;
    zp_trace_mark("assemble pi_A, pi_B, pi_C");

    zp_g16_vk_t vk;
    if ((rc = zp_g16_vk_from_key(&vk, k))) {
        memset(proof, 0, sizeof *proof);
        return rc;
    }
    zp_trace_mark("verification key from the zkey");
    rc = zp_g16_verify(&vk, w + 1, k->n_public, proof);
    zp_g16_vk_free(&vk);
    zp_trace_mark("verify (pairing check)");
    tt.check_ns = zp_now_ns() - t2;
    tt.total_ns = zp_now_ns() - t0;
    if (t) *t = tt;
    if (rc) {
        memset(proof, 0, sizeof *proof);
        if (rc == ZP_EVERIFY)
            return zp_err_set(ZP_EVERIFY, "the assembled proof fails the pairing check against the key "
                              "(witness not satisfying, or corrupt key / partial results); no proof written");
        return rc;
    }
    return 0;
}

int zp_g16_verify(const zp_g16_vk_t *vk, const zp_scalar_t *pub, size_t npub, const zp_g16_proof_t *p)
{
    const g16_curve_t *cv = g16_curve(vk->curve);
    if (!cv) return ZP_ECURVE;
    if (p->curve != vk->curve)
        return zp_err_set(ZP_EMISMATCH, "proof is for %s, verification key for %s", zp_curve_name(p->curve),
                          zp_curve_name(vk->curve));
    if (npub != vk->n_public)
        return zp_err_set(ZP_EMISMATCH, "%zu public signals given, the verification key has %u", npub, vk->n_public);
    for (size_t i = 0; i < npub; i++)
        if (!cv->fr_canonical(&pub[i])) return zp_err_set(ZP_EFORMAT, "public signal %zu is not < r", i);
    if (!cv->verify(vk, pub, p)) return zp_err_set(ZP_EVERIFY, "pairing check failed: the proof is not valid");
    return 0;
}

int zp_g16_proof_to_json(zp_proof_json_t *j, const zp_g16_proof_t *p)
{
    const g16_curve_t *cv = g16_curve(p->curve);
    if (!cv) return ZP_ECURVE;
    cv->proof_to_json(j, p);
    return 0;
}

int zp_g16_proof_from_json(zp_g16_proof_t *p, const zp_proof_json_t *j)
{
    const g16_curve_t *cv = g16_curve(j->curve);
    if (!cv) return ZP_ECURVE;
    return cv->proof_from_json(p, j);
}

int zp_g16_public_to_json(char (*sig)[100], const zp_g16_key_t *k, const zp_scalar_t *w)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    for (uint32_t i = 1; i <= k->n_public; i++) {
        if (!cv->fr_canonical(&w[i])) return zp_err_set(ZP_EFORMAT, "public signal %u is not < r", i);
        cv->scalar_to_dec(sig[i - 1], 100, &w[i]);
    }
    return 0;
}

size_t zp_g16_proof_bin_size(zp_curve_id_t c)
{
    const g16_curve_t *cv = g16_curve(c);
    return cv ? 2 * cv->g1c_size + cv->g2c_size : 0;
}

int zp_g16_proof_to_bin(uint8_t *out, const zp_g16_proof_t *p)
{
    const g16_curve_t *cv = g16_curve(p->curve);
    if (!cv) return ZP_ECURVE;
    cv->proof_to_bin(out, p);
    return 0;
}

int zp_g16_proof_from_bin(zp_g16_proof_t *p, zp_curve_id_t c, const uint8_t *in)
{
    const g16_curve_t *cv = g16_curve(c);
    if (!cv) return ZP_ECURVE;
    return cv->proof_from_bin(p, in);
}
