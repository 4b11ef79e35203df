/* synth.c - stage 1 of the prover: a = A·w, b = B·w from the zkey coefficients, c = a∘b
 * (snarkjs buildABC1), and with an r1cs the satisfaction check (C·w)_i == c_i for every
 * constraint i, done before any MSM so a bad witness costs no GPU time.
 * Threads split the domain rows: each thread zeroes, accumulates and multiplies its own rows
 * (no atomics). With snarkjs's coefficient order (rows non-decreasing, key->coefs_sorted) a
 * thread finds its coefficients by binary search; otherwise every thread scans all of them.
 * Witness values are standard form, a/b/c come out in Montgomery form.
 * Tests: tests/test_groth16.c */
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
        if (k->coefs[mid].row < row) lo = mid + 1;
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

typedef struct {
    const g16_curve_t *cv;
    const zp_r1cs_t *r1cs;
    const size_t *c_off;       /* offset of each constraint's C combination in the section */
    const zp_scalar_t *w, *c;
    atomic_uint_least32_t first_bad;
} check_job_t;

static void check_run(void *arg, unsigned tid, unsigned nt)
{
    check_job_t *j = arg;
    size_t lo, hi;
    zp_split(j->r1cs->n_constraints, tid, nt, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const uint8_t *lc = j->r1cs->constraints + j->c_off[i];
        uint32_t nterms;
        memcpy(&nterms, lc, 4);
        if (!j->cv->r1cs_c_matches(lc + 4, nterms, j->w, &j->c[i])) {
            uint_least32_t cur = atomic_load(&j->first_bad);
            while ((uint_least32_t)i < cur && !atomic_compare_exchange_weak(&j->first_bad, &cur, (uint_least32_t)i)) {
            }
            return;   /* the first failure of this range is its smallest */
        }
    }
}

/* offsets of the C combinations; ZP_EFORMAT if the section is not what fmt promised */
static int r1cs_c_offsets(size_t *off, const zp_r1cs_t *r)
{
    const char *name = r->f.path ? r->f.path : "r1cs";
    size_t pos = 0, len = r->constraints_len, term = 4 + (size_t)r->n8;
    for (uint32_t i = 0; i < r->n_constraints; i++) {
        for (int m = 0; m < 3; m++) {
            uint32_t nt;
            if (len - pos < 4) goto bad;
            memcpy(&nt, r->constraints + pos, 4);
            if (m == 2) off[i] = pos;
            if ((len - pos - 4) / term < nt) goto bad;
            pos += 4 + nt * term;
        }
        continue;
    bad:
        return zp_err_set(ZP_EFORMAT, "%s: constraint %u runs past the end of section 2", name, i);
    }
    return 0;
}

static int check_r1cs(const g16_curve_t *cv, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r,
                      const zp_scalar_t *c, zp_pool_t *pool)
{
    const char *name = r->f.path ? r->f.path : "r1cs";
    if (r->curve != k->curve || r->n8 != 32 || r->n_wires != k->n_vars || r->n_constraints > k->domain_size)
        return zp_err_set(ZP_EMISMATCH, "%s does not belong to the proving key (curve, %u wires vs nVars %u, "
                          "%u constraints vs domain %u)", name, r->n_wires, k->n_vars, r->n_constraints, k->domain_size);
    if (r->n_constraints == 0) return 0;
    size_t *off = malloc((size_t)r->n_constraints * sizeof *off);
    if (!off) return zp_err_set(-ENOMEM, "%s: out of memory for %u constraint offsets", name, r->n_constraints);
    int rc = r1cs_c_offsets(off, r);
    if (!rc) {
        check_job_t j = {.cv = cv, .r1cs = r, .c_off = off, .w = w, .c = c};
        atomic_init(&j.first_bad, UINT32_MAX);
        zp_pool_run(pool, check_run, &j);
        uint_least32_t bad = atomic_load(&j.first_bad);
        if (bad != UINT32_MAX)
            rc = zp_err_set(ZP_EUNSAT, "witness does not satisfy constraint %u of %u (C·w != A·w * B·w)",
                            (unsigned)bad, r->n_constraints);
    }
    free(off);
    return rc;
}

int zp_g16_synth(const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                 zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *c, zp_pool_t *pool)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    for (uint32_t i = 0; i < k->n_vars; i++)
        if (!cv->fr_canonical(&w[i])) return zp_err_set(ZP_EFORMAT, "witness value %u is not < r", i);
    synth_job_t j = {cv, k, w, a, b, c};
    zp_pool_run(pool, synth_run, &j);
    if (r1cs) return check_r1cs(cv, k, w, r1cs, c, pool);
    return 0;
}
