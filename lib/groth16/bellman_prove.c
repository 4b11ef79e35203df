/* bellman_prove.c - the Groth16 prover with bellman's conventions (assignment.h) on BLS12-381, and
 * the table of per-convention operations (snarkjs's beside bellman's).
 * Reads an Assignment (supraseal-c2 layout: Montgomery fr) and a bellman key view (affine
 * Montgomery points); writes nothing but the proof. Order of work as bellman's create_proof:
 *   H: a, b, c padded to n = 2^k >= abc_size; iNTT; coset NTT (x_i *= 7^i, NTT); a*b - c;
 *      times (7^n - 1)^-1; iNTT; x_i *= 7^-i; the first n - 1 coefficients (standard form)
 *      against the n - 1 first H points (roots: zp_ntt_bls12_381_root_bellman).
 *   A over inputs ++ aux[a_aux density], B (G1 and G2) over inp[b_inp] ++ aux[b_aux], the
 *      j-th set bit pairing with the j-th point after the inputs' part; L over aux; L and H
 *      in one MSM (only C needs their sum).
 *   A = alpha + a + r delta1; B = beta2 + b + s delta2; B1 = beta1 + b1 + s delta1;
 *   C = L + H + s A + r B1 - r s delta1 (the unique C the verifier accepts for that A and B,
 *      so any order of the additions gives bellman's bytes).
 * Every proof is pairing-checked against the key's own verifying key before it is returned.
 * Memory: 3 n scalars (a, b, c work buffers; the compacted MSM scalars reuse b and c once H is
 * computed, when they fit) + one MSM scratch, freed before return; finalize: |B| scalars + the
 * G2 MSM scratch. Tests: tests/test_bellman_prove.c */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "groth16_int.h"
#include "lib/msm/msm.h"
#include "lib/ntt/ntt.h"

typedef zp_fr_bls12_381_t fr_t;

static inline bool bit_get(const uint64_t *d, size_t i) { return (d[i / 64] >> (i % 64)) & 1; }

static size_t popcount_bits(const uint64_t *d, size_t bits)
{
    size_t n = 0, full = bits / 64;
    for (size_t i = 0; i < full; i++) n += (size_t)__builtin_popcountll(d[i]);
    if (bits % 64) n += (size_t)__builtin_popcountll(d[full] & (((uint64_t)1 << (bits % 64)) - 1));
    return n;
}

int zp_g16_bellman_check(const zp_g16_bkey_t *k, const zp_g16_assignment_t *as)
{
    if (!k || !as) return zp_err_set(-EINVAL, "bellman prover: NULL key or assignment");
    size_t ni = as->inp_assignment_size, na = as->aux_assignment_size;
    if (ni == 0 || !as->inp_assignment_data)
        return zp_err_set(ZP_EFORMAT, "assignment: inp_assignment_size is 0 (ONE is always an input)");
    if ((na && !as->aux_assignment_data) || !as->a || !as->b || !as->c)
        return zp_err_set(ZP_EFORMAT, "assignment: NULL a, b, c or aux_assignment_data");
    if (as->abc_size < ni)
        return zp_err_set(ZP_EFORMAT, "assignment: abc_size %zu < inputs %zu (each input has its constraint)",
                          as->abc_size, ni);
    if (as->a_aux_bit_len != na || as->b_aux_bit_len != na)
        return zp_err_set(ZP_EMISMATCH, "assignment: a_aux_bit_len %zu / b_aux_bit_len %zu != aux_assignment_size %zu",
                          as->a_aux_bit_len, as->b_aux_bit_len, na);
    if (as->b_inp_bit_len != ni)
        return zp_err_set(ZP_EMISMATCH, "assignment: b_inp_bit_len %zu != inp_assignment_size %zu", as->b_inp_bit_len, ni);
    if ((na && (!as->a_aux_density || !as->b_aux_density)) || !as->b_inp_density)
        return zp_err_set(ZP_EFORMAT, "assignment: NULL density bitmap");
    size_t pa = popcount_bits(as->a_aux_density, na), pbi = popcount_bits(as->b_inp_density, ni),
           pba = popcount_bits(as->b_aux_density, na);
    if (pa != as->a_aux_popcount || pbi != as->b_inp_popcount || pba != as->b_aux_popcount)
        return zp_err_set(ZP_EFORMAT, "assignment: popcounts a_aux %zu b_inp %zu b_aux %zu, the bitmaps have %zu %zu %zu",
                          as->a_aux_popcount, as->b_inp_popcount, as->b_aux_popcount, pa, pbi, pba);
    if (k->n_ic != ni)
        return zp_err_set(ZP_EMISMATCH, "key: %zu IC points, the assignment has %zu inputs", k->n_ic, ni);
    if (k->n_l != na)
        return zp_err_set(ZP_EMISMATCH, "key: |L| = %zu, the assignment has %zu aux variables", k->n_l, na);
    if (k->n_a != ni + pa)
        return zp_err_set(ZP_EMISMATCH, "key: |A| = %zu, inputs %zu + a_aux popcount %zu = %zu", k->n_a, ni, pa, ni + pa);
    if (k->n_b_g1 != pbi + pba || k->n_b_g2 != pbi + pba)
        return zp_err_set(ZP_EMISMATCH, "key: |B_g1| = %zu, |B_g2| = %zu, b_inp %zu + b_aux %zu popcounts = %zu",
                          k->n_b_g1, k->n_b_g2, pbi, pba, pbi + pba);
    unsigned log_n = 0;
    while (((size_t)1 << log_n) < as->abc_size) log_n++;
    if (log_n > ZP_FR_BLS12_381_TWO_ADICITY)
        return zp_err_set(ZP_ETOOBIG, "assignment: %zu constraints exceed BLS12-381's 2^32 domain", as->abc_size);
    if (k->n_h < ((size_t)1 << log_n) - 1)
        return zp_err_set(ZP_EMISMATCH, "key: |H| = %zu, the domain 2^%u needs %zu", k->n_h, log_n,
                          ((size_t)1 << log_n) - 1);
    return 0;
}

void zp_g16_bkey_from_fmt(zp_g16_bkey_t *k, const zp_bkey_t *b)
{
    memset(k, 0, sizeof *k);
    k->alpha_g1 = b->alpha_g1;
    k->beta_g1 = b->beta_g1;
    k->delta_g1 = b->delta_g1;
    k->beta_g2 = b->beta_g2;
    k->gamma_g2 = b->gamma_g2;
    k->delta_g2 = b->delta_g2;
    k->ic = b->ic;
    k->h = b->h;
    k->l = b->l;
    k->a = b->a;
    k->b_g1 = b->b_g1;
    k->b_g2 = b->b_g2;
    k->n_ic = b->n_ic;
    k->n_h = b->n_h;
    k->n_l = b->n_l;
    k->n_a = b->n_a;
    k->n_b_g1 = b->n_b_g1;
    k->n_b_g2 = b->n_b_g2;
}

int zp_g16_vk_from_bkey(zp_g16_vk_t *vk, const zp_g16_bkey_t *k)
{
    memset(vk, 0, sizeof *vk);
    if (k->n_ic == 0) return zp_err_set(ZP_EFORMAT, "verifying key: no IC point");
    vk->ic = malloc(k->n_ic * sizeof *vk->ic);
    if (!vk->ic) return zp_err_set(-ENOMEM, "verifying key: %zu IC points", k->n_ic);
    for (size_t i = 0; i < k->n_ic; i++) vk->ic[i].bls12_381 = k->ic[i];
    vk->curve = ZP_CURVE_BLS12_381;
    vk->n_public = (uint32_t)(k->n_ic - 1);
    vk->alpha1.bls12_381 = k->alpha_g1;
    vk->beta2.bls12_381 = k->beta_g2;
    vk->gamma2.bls12_381 = k->gamma_g2;
    vk->delta2.bls12_381 = k->delta_g2;
    return 0;
}

/* ------------------------------------------------------------------ H */
typedef struct { fr_t *a; const fr_t *b, *c; fr_t zinv; size_t n; } pw_job_t;

static void pw_job(void *arg, unsigned tid, unsigned nt)
{
    pw_job_t *j = arg;
    size_t lo = j->n * tid / nt, hi = j->n * (tid + 1) / nt;
    for (size_t i = lo; i < hi; i++) {
        fr_t t;
        zp_fr_bls12_381_mul(&t, &j->a[i], &j->b[i]);
        zp_fr_bls12_381_sub(&t, &t, &j->c[i]);
        zp_fr_bls12_381_mul(&j->a[i], &t, &j->zinv);
    }
}

typedef struct { fr_t *h; const fr_t *a; size_t n; } std_job_t;

static void std_job(void *arg, unsigned tid, unsigned nt)
{
    std_job_t *j = arg;
    size_t lo = j->n * tid / nt, hi = j->n * (tid + 1) / nt;
    for (size_t i = lo; i < hi; i++) zp_fr_bls12_381_from_mont(&j->h[i], &j->a[i]);
}

int zp_g16_bellman_domain_new(zp_ntt_bls12_381_domain_t *d, unsigned log_n, zp_pool_t *pool)
{
    fr_t w;
    int rc = zp_g16_conv_bellman.root(&w, log_n);   /* the convention's roots (table below) */
    if (rc) return zp_err_set(rc, "bellman prover: no 2^%u root of unity", log_n);
    return zp_ntt_bls12_381_domain_init_root(d, log_n, pool, &w);
}

/* h[0..n-1) (standard form) from a_in, b_in, c_in (n Montgomery each) over d (bellman's roots,
 * zp_g16_bellman_domain_new): the inverse NTTs' bit reversal reads the sources and writes the
 * work buffers a, b, c (a source equal to its buffer: in place), the result is converted from
 * Montgomery into h on the pool (h may be a or c; no copy) */
int zp_g16_bellman_h_dom(const zp_ntt_bls12_381_domain_t *d, fr_t *h, const fr_t *a_in, const fr_t *b_in,
                         const fr_t *c_in, fr_t *a, fr_t *b, fr_t *c, zp_pool_t *pool)
{
    size_t n = d->n;
    fr_t g, ginv, zinv;
    zp_fr_bls12_381_set_u64(&g, ZP_NTT_BELLMAN_GENERATOR);
    zp_fr_bls12_381_inv(&ginv, &g);
    const fr_t *src[3] = {a_in, b_in, c_in};
    fr_t *v[3] = {a, b, c};
    for (int m = 0; m < 3; m++) {
        zp_ntt_bls12_381_inverse_from(d, v[m], src[m], pool);
        zp_ntt_bls12_381_coset_shift(v[m], n, &g, pool);
        zp_ntt_bls12_381_forward(d, v[m], pool);
    }
    /* Z on the coset: (g x)^n - 1 = g^n - 1 for every x of the domain */
    uint64_t e[1] = {n};
    zp_fr_bls12_381_pow(&zinv, &g, e, 1);
    zp_fr_bls12_381_sub(&zinv, &zinv, &zp_fr_bls12_381_one);
    zp_fr_bls12_381_inv(&zinv, &zinv);
    /* (a b - c) / Z, then coset iNTT; the Montgomery->standard step comes after the transform */
    pw_job_t pj = {a, b, c, zinv, n};
    zp_pool_run(n >= 4096 ? pool : NULL, pw_job, &pj);
    zp_ntt_bls12_381_inverse(d, a, pool);
    zp_ntt_bls12_381_coset_shift(a, n, &ginv, pool);
    std_job_t sj = {h, a, n - 1};
    zp_pool_run(n >= 4096 ? pool : NULL, std_job, &sj);
    return 0;
}

/* h (n - 1 standard-form coefficients, in a[0..n-1)) from a, b, c (n Montgomery each, clobbered) */
int zp_g16_bellman_h(fr_t *a, fr_t *b, fr_t *c, unsigned log_n, zp_pool_t *pool)
{
    zp_ntt_bls12_381_domain_t d;
    int rc = zp_g16_bellman_domain_new(&d, log_n, pool);
    if (rc) return rc;
    rc = zp_g16_bellman_h_dom(&d, a, a, b, c, a, b, c, pool);
    zp_ntt_bls12_381_domain_close(&d);
    return rc;
}

/* ------------------------------------------------------------------ the prover */
static void to_std(zp_scalar_t *out, const fr_t *in) { zp_fr_bls12_381_from_mont((fr_t *)out, in); }

static const zp_msm_opts_t no_endo = {.no_endo = true};

/* k + r (r the group order): the same multiple of a subgroup point, as a full-length scalar */
static void add_order(zp_scalar_t *v)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (unsigned __int128)v->l[i] + zp_fr_bls12_381_modulus.l[i];
        v->l[i] = (uint64_t)c;
        c >>= 64;
    }
}

int zp_g16_bellman_prove(zp_g16_proof_t *proof, const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                         const zp_scalar_t *r, const zp_scalar_t *s, zp_pool_t *pool, zp_g16_bprove_times_t *t)
{
    return zp_g16_bellman_prove_ex(proof, k, as, r, s, 0, pool, t);
}

/* the compacted MSM scalars (standard form): A = inputs ++ aux[a density] (nA), B = inp[b_inp]
 * ++ aux[b_aux] (nB), L = aux; any of them NULL = not wanted. Threads take ranges of aux
 * (multiples of 64 variables) whose output offsets come from the bitmaps' popcounts. */
enum { COMPACT_MAX_T = 64 };
typedef struct {
    const zp_g16_assignment_t *as;
    unsigned flags, nt;
    zp_scalar_t *sA, *sB, *sL;
    size_t lo[COMPACT_MAX_T + 1], oa[COMPACT_MAX_T], ob[COMPACT_MAX_T];
} compact_job_t;

static void compact_one(zp_scalar_t *v, const fr_t *x, unsigned flags)
{
    to_std(v, x);
    if (flags & ZP_G16_BPROVE_NO_SPLIT) add_order(v);
}

static void compact_job(void *arg, unsigned tid, unsigned n)
{
    compact_job_t *j = arg;
    const zp_g16_assignment_t *as = j->as;
    for (unsigned q = tid; q < j->nt; q += n) {
        size_t ja = j->oa[q], jb = j->ob[q];
        for (size_t i = j->lo[q]; i < j->lo[q + 1]; i++) {
            bool ia = j->sA && bit_get(as->a_aux_density, i), ib = j->sB && bit_get(as->b_aux_density, i);
            if (!ia && !ib && !j->sL) continue;
            zp_scalar_t v;
            compact_one(&v, &as->aux_assignment_data[i], j->flags);
            if (j->sL) j->sL[i] = v;
            if (ia) j->sA[ja++] = v;
            if (ib) j->sB[jb++] = v;
        }
    }
}

static void compact(const zp_g16_assignment_t *as, unsigned flags, zp_scalar_t *sA, zp_scalar_t *sB, zp_scalar_t *sL,
                    zp_pool_t *pool)
{
    size_t ni = as->inp_assignment_size, na = as->aux_assignment_size, ja = 0, jb = 0;
    for (size_t i = 0; i < ni; i++) {
        zp_scalar_t v;
        compact_one(&v, &as->inp_assignment_data[i], flags);
        if (sA) sA[ja++] = v;
        if (sB && bit_get(as->b_inp_density, i)) sB[jb++] = v;
    }
    compact_job_t j = {.as = as, .flags = flags, .sA = sA, .sB = sB, .sL = sL};
    size_t words = (na + 63) / 64;
    /* (from a few words up, so that the fixtures' small circuits take this path too) */
    unsigned nt = zp_pool_size(pool) > 1 ? 4 * zp_pool_size(pool) : 1;
    if (nt > COMPACT_MAX_T) nt = COMPACT_MAX_T;
    if (nt > words) nt = words ? (unsigned)words : 1;
    j.nt = nt;
    for (unsigned q = 0; q <= nt; q++) {
        size_t w = words * q / nt;
        j.lo[q] = w * 64 < na ? w * 64 : na;
    }
    for (unsigned q = 0; q < nt; q++) {
        j.oa[q] = ja;
        j.ob[q] = jb;
        size_t w0 = j.lo[q] / 64, w1 = (j.lo[q + 1] + 63) / 64;
        for (size_t w = w0; w < w1; w++) {   /* bits past na are zero in a bitmap of na bits: masked */
            uint64_t mask = (w + 1) * 64 <= na ? ~0ull : (((uint64_t)1 << (na % 64)) - 1);
            if (sA) ja += (size_t)__builtin_popcountll(as->a_aux_density[w] & mask);
            if (sB) jb += (size_t)__builtin_popcountll(as->b_aux_density[w] & mask);
        }
    }
    zp_pool_run(nt > 1 ? pool : NULL, compact_job, &j);
}

static unsigned domain_log(size_t m)
{
    unsigned log_n = 0;
    while (((size_t)1 << log_n) < m) log_n++;
    return log_n;
}

int zp_g16_bellman_prove_g1(zp_g1_any_t part[ZP_G16_NMSM], const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                            unsigned flags, zp_pool_t *pool, zp_g16_bprove_times_t *t)
{
    uint64_t t0 = zp_now_ns();
    int rc = zp_g16_bellman_check(k, as);
    if (rc) return rc;
    size_t na = as->aux_assignment_size;
    unsigned log_n = domain_log(as->abc_size);
    size_t n = (size_t)1 << log_n, nh = zp_g16_conv_bellman.h_len(n), nA = k->n_a, nB = k->n_b_g1;
    unsigned nt = zp_pool_size(pool);
    const zp_msm_opts_t *mo = (flags & (ZP_G16_BPROVE_NO_ENDO | ZP_G16_BPROVE_NO_SPLIT)) ? &no_endo : NULL;
    size_t scr = zp_msm_g1_bls12_381_ex_scratch_size(nA > nB ? nA : nB, 1, nt, mo);
    size_t s2 = zp_msm_g1_bls12_381_sum2_scratch_size(na, nh, nt, mo);
    if (s2 > scr) scr = s2;
    /* work: a, b, c (n each). Once H is in a, b and c are dead: the scalars of A and B (nA + nB)
     * go there, then those of L (na), whenever each fits in 2n (Filecoin's circuits: aux ~
     * constraints, |B| ~ aux / 4); otherwise they get room of their own after c. */
    size_t nscal = nA + nB > na ? nA + nB : na;   /* A and B, later L over them */
    bool in_bc = nscal <= 2 * n;
    size_t nwork = 3 * n + (in_bc ? 0 : nscal);
    fr_t *work = g16_alloc(nwork * sizeof(fr_t));
    void *scratch = g16_alloc(scr ? scr : 64);
    if (!work || !scratch) {
        rc = zp_err_set(-ENOMEM, "bellman prover: %zu + %zu bytes of work memory", nwork * sizeof(fr_t), scr);
        goto out;
    }
    fr_t *a = work, *b = a + n, *c = b + n;
    zp_scalar_t *sA = (zp_scalar_t *)(in_bc ? b : c + n), *sB = sA + nA, *sL = sA;
    size_t m = as->abc_size;
    memcpy(a, as->a, m * sizeof(fr_t));
    memcpy(b, as->b, m * sizeof(fr_t));
    memcpy(c, as->c, m * sizeof(fr_t));
    memset(a + m, 0, (n - m) * sizeof(fr_t));
    memset(b + m, 0, (n - m) * sizeof(fr_t));
    memset(c + m, 0, (n - m) * sizeof(fr_t));
    uint64_t t1 = zp_now_ns();
    if ((rc = zp_g16_bellman_h(a, b, c, log_n, pool))) goto out;
    uint64_t t2 = zp_now_ns();
    compact(as, flags, sA, sB, NULL, pool);   /* b and c are dead now */
    uint64_t t2b = zp_now_ns();
    t1 += t2b - t2;   /* prep = the copies and the compactions */
    t2 = t2b;
    const zp_g1a_bls12_381_t *pa1[1] = {k->a}, *pb1[1] = {k->b_g1};
    zp_msm_g1_bls12_381_multi_ex(&part[ZP_G16_A].bls12_381, pa1, 1, sA, nA, scratch, pool, mo);
    uint64_t t3 = zp_now_ns();
    zp_msm_g1_bls12_381_multi_ex(&part[ZP_G16_B1].bls12_381, pb1, 1, sB, nB, scratch, pool, mo);
    uint64_t t4 = zp_now_ns();
    compact(as, flags, NULL, NULL, sL, pool);   /* over A's and B's scalars, done with */
    uint64_t t4b = zp_now_ns();
    zp_msm_g1_bls12_381_sum2_ex(&part[ZP_G16_C].bls12_381, k->l, sL, na, k->h, (const zp_scalar_t *)a, nh, scratch,
                                pool, mo);
    zp_g1_bls12_381_set_inf(&part[ZP_G16_H].bls12_381);
    uint64_t t5 = zp_now_ns();
    if (t) {
        t->prep_ns = t1 - t0 + (t4b - t4);
        t->ntt_ns = t2 - t1;
        t->msm_a_ns = t3 - t2;
        t->msm_b1_ns = t4 - t3;
        t->msm_lh_ns = t5 - t4b;
    }
out:
    free(work);
    free(scratch);
    return rc;
}

int zp_g16_bellman_finalize(zp_g16_proof_t *proof, const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                            const zp_g1_any_t part[ZP_G16_NMSM], const zp_scalar_t *r, const zp_scalar_t *s,
                            unsigned flags, zp_pool_t *pool, zp_g16_bprove_times_t *t)
{
    const g16_curve_t *cv = &g16_curve_bls12_381;
    memset(proof, 0, sizeof *proof);
    int rc = zp_g16_bellman_check(k, as);
    if (rc) return rc;
    zp_scalar_t rr, ss;
    if ((rc = g16_blinding(&rr, cv, r, "r")) || (rc = g16_blinding(&ss, cv, s, "s"))) return rc;
    uint64_t t0 = zp_now_ns();
    size_t ni = as->inp_assignment_size, nB = k->n_b_g2;
    const zp_msm_opts_t *mo = (flags & (ZP_G16_BPROVE_NO_ENDO | ZP_G16_BPROVE_NO_SPLIT)) ? &no_endo : NULL;
    size_t scr = zp_msm_g2_bls12_381_ex_scratch_size(nB, 1, zp_pool_size(pool), mo);
    zp_scalar_t *sB = g16_alloc((nB ? nB : 1) * sizeof *sB);
    void *scratch = g16_alloc(scr ? scr : 64);
    zp_scalar_t *pub = g16_alloc(ni * sizeof *pub);
    if (!sB || !scratch || !pub) {
        rc = zp_err_set(-ENOMEM, "bellman finalize: %zu + %zu bytes", nB * sizeof *sB, scr);
        goto out;
    }
    compact(as, flags, NULL, sB, NULL, pool);
    zp_g2_bls12_381_t pB2;
    const zp_g2a_bls12_381_t *pb2[1] = {k->b_g2};
    zp_msm_g2_bls12_381_multi_ex(&pB2, pb2, 1, sB, nB, scratch, pool, mo);
    uint64_t t1 = zp_now_ns();

    /* A = alpha + a + r delta; B = beta2 + b + s delta2; B1 = beta1 + b1 + s delta1;
     * C = (L + H) + s A + r B1 - r s delta1 */
    zp_g1_bls12_381_t A, B1, C, x, u;
    zp_g2_bls12_381_t B, y;
    zp_g1_bls12_381_from_affine(&x, &k->delta_g1);
    zp_g1_bls12_381_mul(&A, &x, &rr);
    zp_g1_bls12_381_add_affine(&A, &A, &k->alpha_g1);
    zp_g1_bls12_381_add(&A, &A, &part[ZP_G16_A].bls12_381);
    zp_g1_bls12_381_mul(&B1, &x, &ss);
    zp_g1_bls12_381_add_affine(&B1, &B1, &k->beta_g1);
    zp_g1_bls12_381_add(&B1, &B1, &part[ZP_G16_B1].bls12_381);
    zp_g2_bls12_381_from_affine(&y, &k->delta_g2);
    zp_g2_bls12_381_mul(&B, &y, &ss);
    zp_g2_bls12_381_add_affine(&B, &B, &k->beta_g2);
    zp_g2_bls12_381_add(&B, &B, &pB2);
    fr_t rm, sm, rsm;
    zp_fr_bls12_381_to_mont(&rm, (const fr_t *)&rr);
    zp_fr_bls12_381_to_mont(&sm, (const fr_t *)&ss);
    zp_fr_bls12_381_mul(&rsm, &rm, &sm);
    zp_scalar_t rs;
    to_std(&rs, &rsm);
    zp_g1_bls12_381_mul(&u, &x, &rs);
    zp_g1_bls12_381_neg(&C, &u);
    zp_g1_bls12_381_add(&C, &C, &part[ZP_G16_C].bls12_381);
    zp_g1_bls12_381_add(&C, &C, &part[ZP_G16_H].bls12_381);
    zp_g1_bls12_381_mul(&u, &A, &ss);
    zp_g1_bls12_381_add(&C, &C, &u);
    zp_g1_bls12_381_mul(&u, &B1, &rr);
    zp_g1_bls12_381_add(&C, &C, &u);
    proof->curve = ZP_CURVE_BLS12_381;
    zp_g1_bls12_381_to_affine(&proof->a.bls12_381, &A);
    zp_g2_bls12_381_to_affine(&proof->b.bls12_381, &B);
    zp_g1_bls12_381_to_affine(&proof->c.bls12_381, &C);
    uint64_t t2 = zp_now_ns();

    /* the pairing check: public inputs are inputs 1.. (standard form) */
    zp_g16_vk_t vk;
    if ((rc = zp_g16_vk_from_bkey(&vk, k))) goto out;
    for (size_t i = 1; i < ni; i++) to_std(&pub[i - 1], &as->inp_assignment_data[i]);
    rc = zp_g16_verify(&vk, pub, ni - 1, proof);
    zp_g16_vk_free(&vk);
    if (rc == ZP_EVERIFY)
        rc = zp_err_set(ZP_EVERIFY, "the assembled proof fails the pairing check against the key's verifying key "
                        "(assignment not satisfying, or key and assignment of different circuits); no proof released");
    if (t) {
        t->msm_b2_ns = t1 - t0;
        t->assemble_ns = t2 - t1;
        t->check_ns = zp_now_ns() - t2;
    }
out:
    if (rc) memset(proof, 0, sizeof *proof);
    free(sB);
    free(scratch);
    free(pub);
    return rc;
}

int zp_g16_bellman_prove_ex(zp_g16_proof_t *proof, const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                            const zp_scalar_t *r, const zp_scalar_t *s, unsigned flags, zp_pool_t *pool,
                            zp_g16_bprove_times_t *t)
{
    uint64_t t0 = zp_now_ns();
    zp_g16_bprove_times_t tt;
    memset(&tt, 0, sizeof tt);
    memset(proof, 0, sizeof *proof);
    zp_g1_any_t part[ZP_G16_NMSM];
    int rc = zp_g16_bellman_prove_g1(part, k, as, flags, pool, &tt);
    if (!rc) rc = zp_g16_bellman_finalize(proof, k, as, part, r, s, flags, pool, &tt);
    tt.total_ns = zp_now_ns() - t0;
    if (t) *t = tt;
    return rc;
}

/* ------------------------------------------------------------------ conventions table */
static size_t h_len_snarkjs(size_t n) { return n; }
static size_t h_len_bellman(size_t n) { return n ? n - 1 : 0; }
static int root_snarkjs(fr_t *w, unsigned log_n)
{
    const fr_t *r = zp_fr_bls12_381_root(log_n);
    if (!r) return -EINVAL;
    *w = *r;
    return 0;
}

static int encode_json_only(uint8_t *out, size_t cap, size_t *len, const zp_g16_proof_t *p)
{
    /* snarkjs's proof is proof.json (lib/fmt); its binary form is the same compressed A|B|C */
    size_t nb = zp_g16_proof_bin_size(p->curve);
    if (!nb || cap < nb) return zp_err_set(-EINVAL, "proof encoding: %zu bytes of room, %zu needed", cap, nb);
    *len = nb;
    return zp_g16_proof_to_bin(out, p);
}

static int encode_bellman(uint8_t *out, size_t cap, size_t *len, const zp_g16_proof_t *p)
{
    /* Proof::write: A (48) | B (96) | C (48), zcash compressed encoding */
    if (p->curve != ZP_CURVE_BLS12_381) return zp_err_set(ZP_ECURVE, "bellman proofs are on BLS12-381");
    return encode_json_only(out, cap, len, p);
}

const zp_g16_conv_t zp_g16_conv_snarkjs = {
    .id = ZP_G16_CONV_SNARKJS, .name = "snarkjs", .root = root_snarkjs, .h_len = h_len_snarkjs,
    .h_coefficients = false, .compact_queries = false, .input_constraints = true, .proof_encode = encode_json_only,
};
const zp_g16_conv_t zp_g16_conv_bellman = {
    .id = ZP_G16_CONV_BELLMAN, .name = "bellman", .root = zp_ntt_bls12_381_root_bellman, .h_len = h_len_bellman,
    .h_coefficients = true, .compact_queries = true, .input_constraints = true, .proof_encode = encode_bellman,
};

const zp_g16_conv_t *zp_g16_conv(zp_g16_conv_id_t id)
{
    switch (id) {
    case ZP_G16_CONV_SNARKJS: return &zp_g16_conv_snarkjs;
    case ZP_G16_CONV_BELLMAN: return &zp_g16_conv_bellman;
    }
    return NULL;
}
