/* synth.c - stage 1 of the prover: a = A·w, b = B·w from the zkey coefficients, c = a∘b
 * (snarkjs buildABC1), and with an r1cs the satisfaction check (C·w)_i == c_i for every
 * constraint i, done before any MSM so a bad witness costs no GPU time.
 * Every O(n) pass runs on the pool: the witness range check (w_i < r), the synthesis (threads
 * split the domain rows: each thread zeroes, accumulates and multiplies its own rows, no
 * atomics; with snarkjs's coefficient order, rows non-decreasing, key->coefs_sorted, a thread
 * finds its coefficients by binary search, otherwise every thread scans all of them) and the
 * r1cs check (threads take ranges of ZP_G16_SYNTH_CHUNKS constraint chunks). A failure
 * reports the smallest failing index whatever the thread count (each range's first failure is
 * its smallest; an atomic minimum over the ranges).
 * No heap allocation: the r1cs chunk index (where each chunk starts in section 2) lives in the
 * caller's zp_g16_synth_ctx_t (fixed size), built by one scan the first time an r1cs is seen
 * and re-checked while it is used (a chunk must parse to exactly its recorded end and count,
 * inside the section), so an index left from another r1cs is noticed and rebuilt, never trusted.
 * Witness values are standard form, a/b/c come out in Montgomery form.
 * Tests: tests/test_groth16.c, tests/test_synth_check.c (parallel == serial) */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "groth16_int.h"

typedef struct {
    const g16_curve_t *cv;
    const zp_g16_key_t *k;
    const zp_scalar_t *w;
    zp_scalar_t *a, *b, *c;
} synth_job_t;

static size_t lower_bound_row(const zp_g16_key_t *k, uint32_t row)
{
    size_t lo = 0, hi = k->n_coefs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g16_coef_row(k, mid) < row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void synth_run(void *arg, unsigned tid, unsigned nt)
{
    synth_job_t *j = arg;
    size_t lo, hi;
    zp_split(j->k->domain_size, tid, nt, &lo, &hi);
    if (lo == hi) return;
    memset(j->a + lo, 0, (hi - lo) * sizeof *j->a);
    memset(j->b + lo, 0, (hi - lo) * sizeof *j->b);
    size_t clo = 0, chi = j->k->n_coefs;
    if (j->k->coefs_sorted) {
        clo = lower_bound_row(j->k, (uint32_t)lo);
        chi = lower_bound_row(j->k, (uint32_t)hi);
    }
    j->cv->synth_coefs(j->k, j->w, j->a, j->b, clo, chi, (uint32_t)lo, (uint32_t)hi);
    j->cv->mul_pw(j->c, j->a, j->b, lo, hi);
}

/* lower *m to v (an atomic minimum) */
static void atomic_min32(atomic_uint_least32_t *m, uint_least32_t v)
{
    uint_least32_t cur = atomic_load(m);
    while (v < cur && !atomic_compare_exchange_weak(m, &cur, v)) {
    }
}

/* ---------------------------------------------------------------- w_i < r, in parallel */
typedef struct {
    const g16_curve_t *cv;
    const zp_scalar_t *w;
} canon_job_t;

static bool w_not_canonical(const void *arg, size_t i)
{
    const canon_job_t *j = arg;
    return !j->cv->fr_canonical(&j->w[i]);
}

/* ---------------------------------------------------------------- the r1cs chunk index */
void zp_g16_synth_ctx_init(zp_g16_synth_ctx_t *ctx) { memset(ctx, 0, sizeof *ctx); }

/* constraint i's three combinations start at pos; the offset of its C combination, and pos
 * moved past it; false when it runs past len */
static bool parse_constraint(const uint8_t *cons, size_t len, size_t term, size_t *pos, size_t *c_off)
{
    for (int m = 0; m < 3; m++) {
        uint32_t nt;
        if (len - *pos < 4) return false;
        memcpy(&nt, cons + *pos, 4);
        if ((len - *pos - 4) / term < nt) return false;
        if (m == 2) *c_off = *pos;
        *pos += 4 + (size_t)nt * term;
    }
    return true;
}

static bool index_matches(const zp_g16_synth_ctx_t *x, const zp_r1cs_t *r)
{
    return x->n_chunks && x->r1cs == r && x->cons == r->constraints && x->cons_len == r->constraints_len &&
           x->n_cons == r->n_constraints;
}

/* one scan of section 2: where each chunk starts; ZP_EFORMAT if the section is not what fmt promised */
static int index_build(zp_g16_synth_ctx_t *x, const zp_r1cs_t *r)
{
    const char *name = r->f.path ? r->f.path : "r1cs";
    unsigned nc = r->n_constraints < ZP_G16_SYNTH_CHUNKS ? r->n_constraints : ZP_G16_SYNTH_CHUNKS;
    size_t pos = 0, term = 4 + (size_t)r->n8, coff;
    x->n_chunks = 0;
    for (unsigned c = 0; c < nc; c++) {
        size_t lo, hi;
        zp_split(r->n_constraints, c, nc, &lo, &hi);
        x->chunk_first[c] = (uint32_t)lo;
        x->chunk_off[c] = pos;
        for (size_t i = lo; i < hi; i++)
            if (!parse_constraint(r->constraints, r->constraints_len, term, &pos, &coff))
                return zp_err_set(ZP_EFORMAT, "%s: constraint %zu runs past the end of section 2", name, i);
    }
    x->chunk_first[nc] = r->n_constraints;
    x->chunk_off[nc] = pos;
    x->r1cs = r;
    x->cons = r->constraints;
    x->cons_len = r->constraints_len;
    x->n_cons = r->n_constraints;
    x->n_chunks = nc;
    x->builds++;
    return 0;
}

typedef struct {
    const g16_curve_t *cv;
    const zp_r1cs_t *r1cs;
    const zp_g16_synth_ctx_t *x;
    const zp_scalar_t *w, *c;
    atomic_uint_least32_t first_bad;
    atomic_bool stale;          /* a chunk did not parse to its recorded end: rebuild the index */
} check_job_t;

static void check_run(void *arg, unsigned tid, unsigned nt)
{
    check_job_t *j = arg;
    const zp_g16_synth_ctx_t *x = j->x;
    size_t clo, chi, term = 4 + (size_t)j->r1cs->n8, len = j->r1cs->constraints_len;
    zp_split(x->n_chunks, tid, nt, &clo, &chi);
    for (size_t ch = clo; ch < chi; ch++) {
        size_t pos = x->chunk_off[ch], coff = 0;
        uint32_t i = x->chunk_first[ch], end = x->chunk_first[ch + 1];
        if (pos > len || end < i) { atomic_store(&j->stale, true); return; }
        /* chunks after a known failure need no look (every chunk before the smallest failure
         * is checked in full, so that failure's index is right) */
        if (i >= atomic_load(&j->first_bad)) return;
        bool failed = false;
        for (; i < end; i++) {
            if (!parse_constraint(j->r1cs->constraints, len, term, &pos, &coff)) { atomic_store(&j->stale, true); return; }
            if (failed) continue;   /* only parse on: the chunk must still end where recorded */
            const uint8_t *lc = j->r1cs->constraints + coff;
            uint32_t nterms;
            memcpy(&nterms, lc, 4);
            if (!j->cv->r1cs_c_matches(lc + 4, nterms, j->w, &j->c[i])) {
                atomic_min32(&j->first_bad, i);   /* the first failure of a chunk is its smallest */
                failed = true;
            }
        }
        if (pos != x->chunk_off[ch + 1]) { atomic_store(&j->stale, true); return; }
        if (failed) return;
    }
}

static int check_r1cs(zp_g16_synth_ctx_t *x, const g16_curve_t *cv, const zp_g16_key_t *k, const zp_scalar_t *w,
                      const zp_r1cs_t *r, const zp_scalar_t *c, zp_pool_t *pool)
{
    const char *name = r->f.path ? r->f.path : "r1cs";
    if (r->curve != k->curve || r->n8 != 32 || r->n_wires != k->n_vars || r->n_constraints > k->domain_size)
        return zp_err_set(ZP_EMISMATCH, "%s does not belong to the proving key (curve, %u wires vs nVars %u, "
                          "%u constraints vs domain %u)", name, r->n_wires, k->n_vars, r->n_constraints, k->domain_size);
    if (r->n_constraints == 0) return 0;
    int rc;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!index_matches(x, r) && (rc = index_build(x, r)) < 0) return rc;
        check_job_t j = {.cv = cv, .r1cs = r, .x = x, .w = w, .c = c};
        atomic_init(&j.first_bad, UINT32_MAX);
        atomic_init(&j.stale, false);
        zp_pool_run(pool, check_run, &j);
        if (atomic_load(&j.stale)) { x->n_chunks = 0; continue; }   /* the index was another r1cs's */
        uint_least32_t bad = atomic_load(&j.first_bad);
        if (bad != UINT32_MAX)
            return zp_err_set(ZP_EUNSAT, "witness does not satisfy constraint %u of %u (C·w != A·w * B·w)",
                              (unsigned)bad, r->n_constraints);
        return 0;
    }
    return zp_err_set(ZP_EFORMAT, "%s: section 2 does not parse the same way twice (changed while mapped?)", name);
}

int zp_g16_synth_ctx(zp_g16_synth_ctx_t *ctx, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                     zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *c, zp_pool_t *pool)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    canon_job_t cj = {.cv = cv, .w = w};
    size_t bad = zp_pool_first(pool, k->n_vars, w_not_canonical, &cj);
    if (bad < k->n_vars) return zp_err_set(ZP_EFORMAT, "witness value %zu is not < r", bad);
    synth_job_t j = {cv, k, w, a, b, c};
    zp_pool_run(pool, synth_run, &j);
    if (r1cs) return check_r1cs(ctx, cv, k, w, r1cs, c, pool);
    return 0;
}

int zp_g16_synth(const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                 zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *c, zp_pool_t *pool)
{
    zp_g16_synth_ctx_t ctx;   /* a few KiB on the stack: the index of this one call */
    zp_g16_synth_ctx_init(&ctx);
    return zp_g16_synth_ctx(&ctx, k, w, r1cs, a, b, c, pool);
}
