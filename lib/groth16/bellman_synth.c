/* bellman_synth.c - bellman's ProvingAssignment from circom's r1cs + wtns (assignment.h).
 * Output in supraseal-c2's Assignment layout (Montgomery fr, u64 density words) in one
 * 64-byte aligned block owned by zp_g16_assign_buf_t. Variables: wire 0 = input 0 (ONE),
 * wires 1..nPublic = inputs 1..nPublic, wire w > nPublic = aux w - nPublic - 1.
 * The r1cs section was validated by lib/fmt at open (wire ids < nWires, coefficients < r,
 * lengths); the walk below re-checks the lengths as it goes anyway (ZP_EFORMAT, never a read
 * past the section). Tests: tests/test_bellman_prove.c (equal to bellman's dump/, byte for byte). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "groth16_int.h"

typedef zp_fr_bls12_381_t fr_t;

/* threads evaluating different constraints may set bits of one word: atomic OR */
static inline void bit_set(uint64_t *d, size_t i)
{
    __atomic_fetch_or(&d[i / 64], (uint64_t)1 << (i % 64), __ATOMIC_RELAXED);
}

static size_t popcount_words(const uint64_t *d, size_t bits)
{
    size_t n = 0;
    for (size_t i = 0; i < (bits + 63) / 64; i++) n += (size_t)__builtin_popcountll(d[i]);
    return n;
}

/* one linear combination at *pos: value into *out, density bits for inputs (din) and aux (dax) */
static int eval_lc(fr_t *out, const zp_r1cs_t *r, size_t *pos, const fr_t *wv, uint32_t n_inputs,
                   uint64_t *din, uint64_t *dax, size_t ci, const char *which)
{
    const char *name = r->f.path ? r->f.path : "r1cs";
    size_t len = r->constraints_len, term = 4 + (size_t)r->n8;
    const uint8_t *p = r->constraints;
    uint32_t nt;
    if (len - *pos < 4) return zp_err_set(ZP_EFORMAT, "%s: constraint %zu %s runs past section 2", name, ci, which);
    memcpy(&nt, p + *pos, 4);
    *pos += 4;
    if ((len - *pos) / term < nt)
        return zp_err_set(ZP_EFORMAT, "%s: constraint %zu %s: %u terms run past section 2", name, ci, which, nt);
    fr_t acc = {{0}};
    for (uint32_t t = 0; t < nt; t++, *pos += term) {
        uint32_t wire;
        memcpy(&wire, p + *pos, 4);
        if (wire >= r->n_wires)
            return zp_err_set(ZP_EFORMAT, "%s: constraint %zu %s term %u: wire %u >= nWires %u", name, ci, which, t,
                              wire, r->n_wires);
        fr_t coef, v;
        if (zp_fr_bls12_381_from_bytes_le(&coef, p + *pos + 4))
            return zp_err_set(ZP_EFORMAT, "%s: constraint %zu %s term %u: coefficient >= r", name, ci, which, t);
        zp_fr_bls12_381_mul(&v, &coef, &wv[wire]);
        zp_fr_bls12_381_add(&acc, &acc, &v);
        if (wire < n_inputs) { if (din) bit_set(din, wire); }
        else if (dax) bit_set(dax, wire - n_inputs);
    }
    *out = acc;
    return 0;
}

/* the constraints in chunks on the pool: chunk q is constraints [first[q], first[q+1]) starting
 * at byte off[q] of section 2 (found by one serial scan of the term counts). A chunk that
 * fails only records it (messages are per thread); the caller then runs the serial walk,
 * which finds the first failure and says what it is. */
enum { SYN_CHUNKS = 256 };
typedef struct {
    const zp_r1cs_t *r;
    const fr_t *wv;
    fr_t *a, *b, *c;
    uint64_t *d_a_aux, *d_b_inp, *d_b_aux;
    uint32_t n_inp;
    unsigned nch;
    size_t first[SYN_CHUNKS + 1], off[SYN_CHUNKS + 1];
    int failed;
} syn_job_t;

static int eval_range(const syn_job_t *j, size_t lo, size_t hi, size_t pos)
{
    for (size_t i = lo; i < hi; i++) {
        int rc;
        if ((rc = eval_lc(&j->a[i], j->r, &pos, j->wv, j->n_inp, NULL, j->d_a_aux, i, "A")) ||
            (rc = eval_lc(&j->b[i], j->r, &pos, j->wv, j->n_inp, j->d_b_inp, j->d_b_aux, i, "B")) ||
            (rc = eval_lc(&j->c[i], j->r, &pos, j->wv, j->n_inp, NULL, NULL, i, "C")))
            return rc;
        fr_t ab;
        zp_fr_bls12_381_mul(&ab, &j->a[i], &j->b[i]);
        if (!zp_fr_bls12_381_eq(&ab, &j->c[i]))
            return zp_err_set(ZP_EUNSAT, "%s: constraint %zu is not satisfied by the witness (A.w * B.w != C.w)",
                              j->r->f.path ? j->r->f.path : "r1cs", i);
    }
    return 0;
}

static void syn_job(void *arg, unsigned tid, unsigned n)
{
    syn_job_t *j = arg;
    for (unsigned q = tid; q < j->nch; q += n)
        if (eval_range(j, j->first[q], j->first[q + 1], j->off[q])) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
}

/* chunk starts by the term counts alone; false if section 2 ends early (the serial walk says where) */
static bool syn_index(syn_job_t *j, unsigned nch)
{
    const zp_r1cs_t *r = j->r;
    size_t term = 4 + (size_t)r->n8, len = r->constraints_len, pos = 0, nc = r->n_constraints;
    j->nch = nch;
    for (unsigned q = 0; q < nch; q++) {
        j->first[q] = nc * q / nch;
        size_t next = nc * (q + 1) / nch;
        j->off[q] = pos;
        for (size_t i = j->first[q]; i < next; i++)
            for (int m = 0; m < 3; m++) {
                uint32_t nt;
                if (len - pos < 4) return false;
                memcpy(&nt, r->constraints + pos, 4);
                if ((len - pos - 4) / term < nt) return false;
                pos += 4 + (size_t)nt * term;
            }
    }
    j->first[nch] = nc;
    j->off[nch] = pos;
    return true;
}

int zp_g16_assign_from_r1cs(zp_g16_assign_buf_t *out, const zp_r1cs_t *r, const zp_wtns_t *wt, zp_pool_t *pool)
{
    memset(out, 0, sizeof *out);
    const char *rn = r->f.path ? r->f.path : "r1cs", *wn = wt->f.path ? wt->f.path : "wtns";
    if (r->curve != ZP_CURVE_BLS12_381 || r->n8 != 32)
        return zp_err_set(ZP_ECURVE, "%s: bellman's conventions are on BLS12-381; this r1cs is over %s", rn,
                          zp_curve_name(r->curve));
    if (wt->curve != ZP_CURVE_BLS12_381 || wt->n8 != 32)
        return zp_err_set(ZP_ECURVE, "%s: the witness is over %s, not BLS12-381", wn, zp_curve_name(wt->curve));
    if (wt->n_witness != r->n_wires)
        return zp_err_set(ZP_EMISMATCH, "%s: %u witness values, %s has %u wires", wn, wt->n_witness, rn, r->n_wires);
    uint64_t npub = (uint64_t)r->n_pub_out + r->n_pub_in;
    if (npub + 1 > r->n_wires)
        return zp_err_set(ZP_EFORMAT, "%s: %llu public signals + ONE exceed the %u wires", rn, (unsigned long long)npub,
                          r->n_wires);
    size_t n_inp = (size_t)npub + 1, n_aux = r->n_wires - n_inp;
    size_t n_abc = (size_t)r->n_constraints + n_inp;
    size_t w_inp = (n_inp + 63) / 64, w_aux = (n_aux + 63) / 64;
    size_t fr_count = 3 * n_abc + r->n_wires;  /* a, b, c, inputs ++ aux (contiguous: the witness) */
    size_t bytes = fr_count * sizeof(fr_t) + (w_inp + 2 * w_aux) * 8;
    uint8_t *mem = g16_alloc(bytes);
    if (!mem) return zp_err_set(-ENOMEM, "bellman synthesis: %zu bytes for a, b, c and the assignment", bytes);
    memset(mem, 0, bytes);
    fr_t *a = (fr_t *)mem, *b = a + n_abc, *c = b + n_abc, *wv = c + n_abc;
    uint64_t *d_a_aux = (uint64_t *)(wv + r->n_wires), *d_b_inp = d_a_aux + w_aux, *d_b_aux = d_b_inp + w_inp;
    int rc;
    for (uint32_t i = 0; i < r->n_wires; i++)
        if (zp_fr_bls12_381_from_bytes_le(&wv[i], wt->values + (size_t)i * 32)) {
            rc = zp_err_set(ZP_EFORMAT, "%s: witness value %u is not < r", wn, i);
            goto out_free;
        }
    if (!zp_fr_bls12_381_is_one(&wv[0])) {
        rc = zp_err_set(ZP_EFORMAT, "%s: witness value 0 (the constant ONE) is not 1", wn);
        goto out_free;
    }
    syn_job_t j = {.r = r, .wv = wv, .a = a, .b = b, .c = c, .d_a_aux = d_a_aux, .d_b_inp = d_b_inp,
                   .d_b_aux = d_b_aux, .n_inp = (uint32_t)n_inp};
    unsigned nch = zp_pool_size(pool) > 1 ? SYN_CHUNKS : 1;
    if (nch > r->n_constraints) nch = r->n_constraints ? r->n_constraints : 1;
    if (!syn_index(&j, nch)) j.failed = 1;
    else zp_pool_run(nch > 1 ? pool : NULL, syn_job, &j);
    if (j.failed) {   /* the serial walk finds the first failure and says what it is */
        memset(d_a_aux, 0, (w_inp + 2 * w_aux) * 8);
        if ((rc = eval_range(&j, 0, r->n_constraints, 0)) == 0)
            rc = zp_err_set(ZP_EFORMAT, "%s: section 2 read differently twice", rn);
        goto out_free;
    }
    /* create_proof's input constraints: input_i * 0 = 0 (a = input value, b = c = 0) */
    for (size_t i = 0; i < n_inp; i++) a[r->n_constraints + i] = wv[i];

    zp_g16_assignment_t *v = &out->v;
    v->a_aux_density = d_a_aux;
    v->a_aux_bit_len = n_aux;
    v->a_aux_popcount = popcount_words(d_a_aux, n_aux);
    v->b_inp_density = d_b_inp;
    v->b_inp_bit_len = n_inp;
    v->b_inp_popcount = popcount_words(d_b_inp, n_inp);
    v->b_aux_density = d_b_aux;
    v->b_aux_bit_len = n_aux;
    v->b_aux_popcount = popcount_words(d_b_aux, n_aux);
    v->a = a;
    v->b = b;
    v->c = c;
    v->abc_size = n_abc;
    v->inp_assignment_data = wv;
    v->inp_assignment_size = n_inp;
    v->aux_assignment_data = wv + n_inp;
    v->aux_assignment_size = n_aux;
    out->mem = mem;
    out->mem_len = bytes;
    return 0;
out_free:
    free(mem);
    return rc;
}

void zp_g16_assign_free(zp_g16_assign_buf_t *a)
{
    if (!a) return;
    free(a->mem);
    memset(a, 0, sizeof *a);
}
