/* bellman_key.c - a bellman key (.params) + its circuit turned into the process group's key
 * shape (zp_g16_key_t, conv = ZP_G16_CONV_BELLMAN), so the stages' dense MSMs over the witness
 * give exactly bellman's sums (issue 29 item 4; doc/filecoin.md "In the process group").
 *
 * Expansion (one block in key.c's layout: IC | A | B1 | C | H | B2 | coefs, 64-aligned):
 *   A, B1, B2: one point per wire. bellman's a holds inputs (all of them: every input has its
 *     `x * 0 = 0` constraint) then the aux wires whose A density bit is set; b_g1/b_g2 hold the
 *     inputs whose B bit is set then the aux wires whose B bit is set. A wire without its bit
 *     gets the identity ((0,0)), so sum_w A[w] w[w] equals bellman's compacted MSM.
 *   C: bellman's L (one point per aux wire). H: bellman's n - 1 points then the identity (the
 *     domain's n-th coefficient, which bellman drops). IC: bellman's ic.
 *   coefs: the r1cs's A and B terms per constraint in order (matrix 0 then 1, value coef * R^2
 *     as a zkey holds it), then row nConstraints + i: A, wire i, 1 for each input i (bellman's
 *     input constraints) - what zp_g16_synth needs; none without an r1cs (pre-synthesized
 *     vector jobs only).
 * Densities: from the r1cs exactly as bellman_synth.c sets them (A over aux; B over inputs
 * and aux; a bit per appearance, whatever the coefficient), or given by the caller (three
 * bitmaps: libzkpipe_c2's Assignment). Every count is checked against the key (|A| = inputs +
 * A aux popcount, |B| = B popcounts, |L| = aux, |IC| = inputs, |H| >= domain - 1): ZP_EMISMATCH
 * naming the field. Points are copied as the reader converted and checked them.
 * Tests: tests/test_bellman_key.c (sums against zp_g16_bellman_prove_g1, bind checks),
 * tests/ipc/bellman_submit.sh (the group's proofs == `zkpipe prove`'s). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "groth16_int.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

typedef zp_fr_bls12_381_t fr_t;

static inline bool bit_get(const uint64_t *d, size_t i) { return (d[i / 64] >> (i % 64)) & 1; }
static inline void bit_set(uint64_t *d, size_t i) { d[i / 64] |= (uint64_t)1 << (i % 64); }

static size_t popcount_bits(const uint64_t *d, size_t bits)
{
    size_t n = 0;
    for (size_t i = 0; i < bits / 64; i++) n += (size_t)__builtin_popcountll(d[i]);
    if (bits % 64) n += (size_t)__builtin_popcountll(d[bits / 64] & (((uint64_t)1 << (bits % 64)) - 1));
    return n;
}

static const char *r1name(const zp_r1cs_t *r) { return r->f.path ? r->f.path : "r1cs"; }

/* one pass over section 2: densities (when d_*) and the A/B term count (when nterms) */
static int walk_r1cs(const zp_r1cs_t *r, uint32_t n_inp, uint64_t *d_a_aux, uint64_t *d_b_inp, uint64_t *d_b_aux,
                     size_t *nterms, struct zp_g16_coef *out)
{
    size_t len = r->constraints_len, term = 4 + (size_t)r->n8, pos = 0, cnt = 0;
    const uint8_t *p = r->constraints;
    for (uint32_t ci = 0; ci < r->n_constraints; ci++)
        for (uint32_t m = 0; m < 3; m++) {
            uint32_t nt;
            if (len - pos < 4) return zp_err_set(ZP_EFORMAT, "%s: constraint %u runs past section 2", r1name(r), ci);
            memcpy(&nt, p + pos, 4);
            pos += 4;
            if ((len - pos) / term < nt)
                return zp_err_set(ZP_EFORMAT, "%s: constraint %u: %u terms run past section 2", r1name(r), ci, nt);
            for (uint32_t t = 0; t < nt; t++, pos += term) {
                if (m == 2) continue;
                uint32_t wire;
                memcpy(&wire, p + pos, 4);
                if (wire >= r->n_wires)
                    return zp_err_set(ZP_EFORMAT, "%s: constraint %u term %u: wire %u >= nWires %u", r1name(r), ci, t,
                                      wire, r->n_wires);
                if (d_a_aux) {
                    if (m == 0) { if (wire >= n_inp) bit_set(d_a_aux, wire - n_inp); }
                    else if (wire < n_inp) bit_set(d_b_inp, wire);
                    else bit_set(d_b_aux, wire - n_inp);
                }
                if (out) {
                    struct zp_g16_coef *c = &out[cnt];
                    fr_t v;
                    if (zp_fr_bls12_381_from_bytes_le(&v, p + pos + 4))
                        return zp_err_set(ZP_EFORMAT, "%s: constraint %u term %u: coefficient >= r", r1name(r), ci, t);
                    fr_t v2;
                    zp_fr_bls12_381_to_mont(&v2, &v);   /* coef * R^2: the zkey's form (synth.c) */
                    c->matrix = m;
                    c->row = ci;
                    c->wire = wire;
                    c->pad = 0;
                    memcpy(&c->v, &v2, sizeof c->v);
                }
                cnt++;
            }
        }
    if (nterms) *nterms = cnt;
    return 0;
}

static int r1cs_shape(const zp_r1cs_t *r, size_t *n_inp)
{
    if (r->curve != ZP_CURVE_BLS12_381 || r->n8 != 32)
        return zp_err_set(ZP_ECURVE, "%s: bellman's conventions are on BLS12-381; this r1cs is over %s", r1name(r),
                          zp_curve_name(r->curve));
    uint64_t npub = (uint64_t)r->n_pub_out + r->n_pub_in;
    if (npub + 1 > r->n_wires)
        return zp_err_set(ZP_EFORMAT, "%s: %llu public signals + ONE exceed the %u wires", r1name(r),
                          (unsigned long long)npub, r->n_wires);
    *n_inp = (size_t)npub + 1;
    return 0;
}

int zp_g16_bellman_density(zp_g16_bdensity_t *d, uint64_t **mem, const zp_r1cs_t *r)
{
    memset(d, 0, sizeof *d);
    *mem = NULL;
    size_t n_inp = 0;
    int rc = r1cs_shape(r, &n_inp);
    if (rc) return rc;
    size_t n_aux = r->n_wires - n_inp, w_inp = (n_inp + 63) / 64, w_aux = (n_aux + 63) / 64;
    uint64_t *m = calloc(w_inp + 2 * w_aux + 1, 8);
    if (!m) return zp_err_set(-ENOMEM, "bellman densities: %zu words", w_inp + 2 * w_aux);
    uint64_t *a_aux = m, *b_inp = a_aux + w_aux, *b_aux = b_inp + w_inp;
    if ((rc = walk_r1cs(r, (uint32_t)n_inp, a_aux, b_inp, b_aux, NULL, NULL))) {
        free(m);
        return rc;
    }
    d->a_aux = a_aux;
    d->b_inp = b_inp;
    d->b_aux = b_aux;
    d->n_inp = n_inp;
    d->n_aux = n_aux;
    d->abc_size = (size_t)r->n_constraints + n_inp;
    *mem = m;
    return 0;
}

/* the compacted key's layout, every count checked against bk and d */
typedef struct { size_t n_vars, n_public, domain, log_n, n_coefs, n_hroom, words, off[11], bytes; } bshape_t;
enum { O_IC, O_A, O_B1, O_C, O_H, O_B2, O_COEFS, O_DA, O_DB, O_PA, O_PB, O_N };

static int shape(bshape_t *s, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d, const zp_r1cs_t *r1cs,
                 const char *name)
{
    memset(s, 0, sizeof *s);
    if (!d || !d->a_aux || !d->b_inp || !d->b_aux)
        return zp_err_set(-EINVAL, "%s: bellman key: no density bitmaps", name);
    if (!d->n_inp || d->n_inp > UINT32_MAX || d->n_aux > UINT32_MAX - d->n_inp)
        return zp_err_set(ZP_EFORMAT, "%s: %zu inputs + %zu aux variables out of range", name, d->n_inp, d->n_aux);
    if (bk->n_ic != d->n_inp)
        return zp_err_set(ZP_EMISMATCH, "%s: ic has %zu points, the circuit has %zu inputs (ONE included)", name,
                          bk->n_ic, d->n_inp);
    if (bk->n_l != d->n_aux)
        return zp_err_set(ZP_EMISMATCH, "%s: l has %zu points, the circuit has %zu aux variables", name, bk->n_l,
                          d->n_aux);
    size_t pa = popcount_bits(d->a_aux, d->n_aux), pbi = popcount_bits(d->b_inp, d->n_inp),
           pba = popcount_bits(d->b_aux, d->n_aux);
    if (bk->n_a != d->n_inp + pa)
        return zp_err_set(ZP_EMISMATCH, "%s: a has %zu points, the circuit's A density wants %zu (inputs %zu + aux %zu)",
                          name, bk->n_a, d->n_inp + pa, d->n_inp, pa);
    if (bk->n_b_g1 != pbi + pba)
        return zp_err_set(ZP_EMISMATCH, "%s: b_g1 has %zu points, the circuit's B density wants %zu (inputs %zu + aux %zu)",
                          name, bk->n_b_g1, pbi + pba, pbi, pba);
    if (bk->n_b_g2 != pbi + pba)
        return zp_err_set(ZP_EMISMATCH, "%s: b_g2 has %zu points, the circuit's B density wants %zu (inputs %zu + aux %zu)",
                          name, bk->n_b_g2, pbi + pba, pbi, pba);
    if (d->abc_size < d->n_inp || d->abc_size > ((size_t)1 << 32))
        return zp_err_set(ZP_EFORMAT, "%s: %zu constraints (inputs' included) out of range", name, d->abc_size);
    unsigned log_n = 0;
    while (((size_t)1 << log_n) < d->abc_size) log_n++;
    if (log_n > 31) return zp_err_set(ZP_ETOOBIG, "%s: a domain of 2^%u", name, log_n);
    size_t n = (size_t)1 << log_n;
    if (bk->n_h < n - 1)
        return zp_err_set(ZP_EMISMATCH, "%s: h has %zu points, the circuit's domain of %zu needs %zu", name, bk->n_h, n,
                          n - 1);
    s->n_vars = d->n_inp + d->n_aux;
    s->n_public = d->n_inp - 1;
    s->domain = n;
    s->log_n = log_n;
    s->n_hroom = bk->n_h + 1 > n ? bk->n_h + 1 : n;   /* the file's h whole (the reader writes it) + the identity */
    s->words = (s->n_vars + 63) / 64;
    if (r1cs) {
        size_t nt;
        int rc = walk_r1cs(r1cs, (uint32_t)d->n_inp, NULL, NULL, NULL, &nt, NULL);
        if (rc) return rc;
        if (nt + d->n_inp > UINT32_MAX) return zp_err_set(ZP_ETOOBIG, "%s: %zu coefficients", r1name(r1cs), nt);
        s->n_coefs = nt + d->n_inp;
    }
    const size_t g1 = sizeof(zp_g1a_bls12_381_t), g2 = sizeof(zp_g2a_bls12_381_t);
    size_t len[O_N] = {
        [O_IC] = d->n_inp * g1, [O_A] = bk->n_a * g1, [O_B1] = bk->n_b_g1 * g1, [O_C] = d->n_aux * g1,
        [O_H] = s->n_hroom * g1, [O_B2] = bk->n_b_g2 * g2, [O_COEFS] = s->n_coefs * sizeof(struct zp_g16_coef),
        [O_DA] = s->words * 8, [O_DB] = s->words * 8, [O_PA] = (s->words + 1) * 4, [O_PB] = (s->words + 1) * 4,
    };
    size_t pos = 0;
    for (int i = 0; i < O_N; i++) {
        s->off[i] = pos;
        pos += ALIGN64(len[i]);
    }
    s->bytes = pos + 64;   /* + 64: room to align caller memory */
    return 0;
}

int zp_g16_key_bellman_bytes(size_t *bytes, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d,
                             const zp_r1cs_t *r1cs, const char *name)
{
    bshape_t s;
    int rc = shape(&s, bk, d, r1cs, name ? name : "bellman key");
    *bytes = rc ? 0 : s.bytes;
    return rc;
}

/* nbits of src (bits past nbits ignored) ORed into dst from bit dst_off on (dst zeroed, with
 * room for dst_off + nbits bits) */
static void bits_put(uint64_t *dst, size_t dst_off, const uint64_t *src, size_t nbits)
{
    for (size_t i = 0; i < (nbits + 63) / 64; i++) {
        uint64_t v = src[i];
        if ((i + 1) * 64 > nbits) v &= ((uint64_t)1 << (nbits % 64)) - 1;
        size_t p = dst_off + 64 * i, q = p / 64, sh = p % 64;
        dst[q] |= v << sh;
        if (sh && (v >> (64 - sh))) dst[q + 1] |= v >> (64 - sh);
    }
}

static void prefix_counts(uint32_t *pfx, const uint64_t *d, size_t words)
{
    uint32_t run = 0;
    for (size_t i = 0; i < words; i++) {
        pfx[i] = run;
        run += (uint32_t)__builtin_popcountll(d[i]);
    }
    pfx[words] = run;
}

/* out[j] = w[j-th set wire] over words [lo, hi) of each thread's share */
typedef struct { zp_scalar_t *out; const zp_scalar_t *w; const uint64_t *d; const uint32_t *pfx; size_t words; } gather_t;

static void gather_run(void *arg, unsigned tid, unsigned nt)
{
    gather_t *g = arg;
    size_t lo, hi;
    zp_split(g->words, tid, nt, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        zp_scalar_t *o = g->out + g->pfx[i];
        for (uint64_t v = g->d[i]; v; v &= v - 1) *o++ = g->w[i * 64 + (size_t)__builtin_ctzll(v)];
    }
}

void zp_g16_gather(zp_scalar_t *out, const zp_scalar_t *w, const uint64_t *dens, const uint32_t *pfx,
                   size_t n_vars, zp_pool_t *pool)
{
    gather_t g = {out, w, dens, pfx, (n_vars + 63) / 64};
    zp_pool_run(g.words >= 1024 ? pool : NULL, gather_run, &g);
}

/* the verifying key's six header points of bk into k */
static void key_header_points(zp_g16_key_t *k, const zp_g16_bkey_t *bk)
{
    k->alpha1.bls12_381 = bk->alpha_g1;
    k->beta1.bls12_381 = bk->beta_g1;
    k->delta1.bls12_381 = bk->delta_g1;
    k->beta2.bls12_381 = bk->beta_g2;
    k->gamma2.bls12_381 = bk->gamma_g2;
    k->delta2.bls12_381 = bk->delta_g2;
}


/* k set up over mem in the compacted layout: counts, header points, the arrays' places, the
 * wire-level density bitmaps with their prefix counts and the coefficients written; the point
 * arrays left for the caller (copied from bk, or converted straight from the file into
 * them). into[] (optional): the places in the file's section order ic, h, l, a, b_g1, b_g2;
 * cap[]: their room in points. */
static int place(zp_g16_key_t *k, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d, const zp_r1cs_t *r1cs,
                 void *mem, size_t len, const char *name, bshape_t *s, void *into[6], uint64_t cap[6])
{
    int rc = shape(s, bk, d, r1cs, name);
    if (rc) return rc;
    uint8_t *base = mem ? (uint8_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63) : NULL;
    if (!mem || len < s->bytes)
        return zp_err_set(ZP_ETOOBIG, "%s: the key needs %zu bytes, %zu given", name, s->bytes, len);
    if (r1cs) {
        size_t ni = 0;
        if ((rc = r1cs_shape(r1cs, &ni))) return rc;
        if (ni != d->n_inp || (size_t)r1cs->n_wires != d->n_inp + d->n_aux)
            return zp_err_set(ZP_EMISMATCH, "%s: %zu inputs / %u wires, the densities say %zu / %zu", r1name(r1cs), ni,
                              r1cs->n_wires, d->n_inp, d->n_inp + d->n_aux);
    }
    memset(k, 0, sizeof *k);
    k->curve = ZP_CURVE_BLS12_381;
    k->conv = ZP_G16_CONV_BELLMAN;
    k->n_vars = (uint32_t)s->n_vars;
    k->n_public = (uint32_t)s->n_public;
    k->domain_size = (uint32_t)s->domain;
    k->log_n = (uint32_t)s->log_n;
    k->n_coefs = (uint32_t)s->n_coefs;
    k->compact = 1;
    k->n_a = (uint32_t)bk->n_a;
    k->n_b = (uint32_t)bk->n_b_g1;
    key_header_points(k, bk);
    k->ic = base + s->off[O_IC];
    k->a = base + s->off[O_A];
    k->b1 = base + s->off[O_B1];
    k->c = base + s->off[O_C];
    k->h = base + s->off[O_H];
    k->b2 = base + s->off[O_B2];
    struct zp_g16_coef *co = (void *)(base + s->off[O_COEFS]);
    uint64_t *da = (void *)(base + s->off[O_DA]), *db = (void *)(base + s->off[O_DB]);
    uint32_t *pa = (void *)(base + s->off[O_PA]), *pb = (void *)(base + s->off[O_PB]);
    /* A: every input (its `x * 0 = 0` constraint), then the aux wires of A's density; B: the
     * inputs and aux wires of B's densities (bellman's a, b_g1, b_g2 orders) */
    memset(da, 0, s->words * 8);
    memset(db, 0, s->words * 8);
    for (size_t i = 0; i < d->n_inp; i++) da[i / 64] |= (uint64_t)1 << (i % 64);
    bits_put(da, d->n_inp, d->a_aux, d->n_aux);
    bits_put(db, 0, d->b_inp, d->n_inp);
    bits_put(db, d->n_inp, d->b_aux, d->n_aux);
    prefix_counts(pa, da, s->words);
    prefix_counts(pb, db, s->words);
    k->dens_a = da;
    k->dens_b = db;
    k->pfx_a = pa;
    k->pfx_b = pb;
    if (r1cs) {
        if ((rc = walk_r1cs(r1cs, (uint32_t)d->n_inp, NULL, NULL, NULL, NULL, co))) {
            memset(k, 0, sizeof *k);
            return rc;
        }
        size_t nt = s->n_coefs - d->n_inp;
        for (size_t i = 0; i < d->n_inp; i++) {   /* input constraints: row nConstraints + i, A = input i */
            struct zp_g16_coef *e = &co[nt + i];
            fr_t one;
            zp_fr_bls12_381_to_mont(&one, &zp_fr_bls12_381_one);   /* 1 * R^2 */
            e->matrix = 0;
            e->row = (uint32_t)(r1cs->n_constraints + i);
            e->wire = (uint32_t)i;
            e->pad = 0;
            memcpy(&e->v, &one, sizeof e->v);
        }
    }
    k->coefs = co;
    k->coefs_sorted = 1;
    k->mem = mem;
    k->mem_len = len;
    k->mem_owned = 0;
    if (into) {
        void *pl[6] = {k->ic, k->h, k->c, k->a, k->b1, k->b2};
        uint64_t room[6] = {d->n_inp, s->n_hroom, d->n_aux, bk->n_a, bk->n_b_g1, bk->n_b_g2};
        memcpy(into, pl, sizeof pl);
        memcpy(cap, room, sizeof room);
    }
    return 0;
}

int zp_g16_key_bellman_place(zp_g16_key_t *k, const zp_g16_bkey_t *counts, const zp_g16_bdensity_t *d,
                             const zp_r1cs_t *r1cs, void *mem, size_t len, const char *name, void *into[6],
                             uint64_t cap[6])
{
    bshape_t s;
    return place(k, counts, d, r1cs, mem, len, name ? name : "bellman key", &s, into, cap);
}

int zp_g16_key_bellman_finish(zp_g16_key_t *k, const zp_g16_bkey_t *bk, const char *name)
{
    if (!name) name = "bellman key";
    if (bk->n_ic != k->n_public + 1u || bk->n_a != k->n_a || bk->n_b_g1 != k->n_b || bk->n_b_g2 != k->n_b ||
        bk->n_l != (size_t)k->n_vars - k->n_public - 1 || bk->n_h + 1 < k->domain_size)
        return zp_err_set(ZP_EMISMATCH, "%s: its counts changed since the key was laid out (the file changed?)", name);
    if ((bk->ic && bk->ic != k->ic) || (bk->h && bk->h != k->h) || (bk->l && bk->l != k->c) || (bk->a && bk->a != k->a) ||
        (bk->b_g1 && bk->b_g1 != k->b1) || (bk->b_g2 && bk->b_g2 != k->b2))
        return zp_err_set(-EINVAL, "%s: the points were not read into the key's places", name);
    key_header_points(k, bk);
    /* the identity at n - 1: bellman keeps n - 1 coefficients (h[n-1] = 0 meets it) */
    memset((zp_g1a_bls12_381_t *)k->h + (k->domain_size - 1), 0, sizeof(zp_g1a_bls12_381_t));
    return 0;
}

int zp_g16_key_from_bellman(zp_g16_key_t *k, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d,
                            const zp_r1cs_t *r1cs, void *mem, size_t len, zp_pool_t *pool, const char *name)
{
    (void)pool;
    if (!name) name = "bellman key";
    bshape_t s;
    int rc = place(k, bk, d, r1cs, mem, len, name, &s, NULL, NULL);
    if (rc) return rc;
    memcpy(k->ic, bk->ic, bk->n_ic * sizeof *bk->ic);
    memcpy(k->c, bk->l, bk->n_l * sizeof *bk->l);
    memcpy(k->h, bk->h, (s.domain - 1) * sizeof *bk->h);
    memcpy(k->a, bk->a, bk->n_a * sizeof *bk->a);
    memcpy(k->b1, bk->b_g1, bk->n_b_g1 * sizeof *bk->b_g1);
    memcpy(k->b2, bk->b_g2, bk->n_b_g2 * sizeof *bk->b_g2);
    memset((zp_g1a_bls12_381_t *)k->h + (s.domain - 1), 0, sizeof(zp_g1a_bls12_381_t));
    return 0;
}

int zp_g16_key_load_bellman(zp_g16_key_t *k, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d,
                            const zp_r1cs_t *r1cs, zp_pool_t *pool, const char *name)
{
    size_t len;
    int rc = zp_g16_key_bellman_bytes(&len, bk, d, r1cs, name);
    if (rc) return rc;
    void *mem = g16_alloc(len);
    if (!mem) return zp_err_set(-ENOMEM, "%s: the key: cannot allocate %zu bytes", name ? name : "bellman key", len);
    if ((rc = zp_g16_key_from_bellman(k, bk, d, r1cs, mem, len, pool, name))) {
        free(mem);
        return rc;
    }
    k->mem_owned = 1;
    return 0;
}

/* ---- the density file (a key imported without its r1cs: vector jobs of libzkpipe_c2) ----
 * Little-endian: "ZPBDENS1", u64 n_inp, u64 n_aux, u64 abc_size, then the words of a_aux
 * (ceil(n_aux/64)), b_inp (ceil(n_inp/64)), b_aux (ceil(n_aux/64)); nothing after. Bits past a
 * bitmap's length are 0. Untrusted on read: sizes against the file, every rule checked. */
static const char bdens_magic[8] = {'Z', 'P', 'B', 'D', 'E', 'N', 'S', '1'};

bool zp_g16_bdensity_sniff(const char *path)
{
    char m[8];
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    bool ok = fread(m, 1, 8, f) == 8 && !memcmp(m, bdens_magic, 8);
    fclose(f);
    return ok;
}

int zp_g16_bdensity_write(const char *path, const zp_g16_bdensity_t *d)
{
    FILE *f = fopen(path, "wb");
    if (!f) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    uint64_t hdr[3] = {d->n_inp, d->n_aux, d->abc_size};
    size_t wi = (d->n_inp + 63) / 64, wa = (d->n_aux + 63) / 64;
    bool ok = fwrite(bdens_magic, 1, 8, f) == 8 && fwrite(hdr, 8, 3, f) == 3 && fwrite(d->a_aux, 8, wa, f) == wa &&
              fwrite(d->b_inp, 8, wi, f) == wi && fwrite(d->b_aux, 8, wa, f) == wa;
    if (fclose(f) != 0) ok = false;
    return ok ? 0 : zp_err_set(-EIO, "%s: write failed", path);
}

static bool tail_clear(const uint64_t *d, size_t bits)
{
    return bits % 64 == 0 || !(d[bits / 64] >> (bits % 64));
}

int zp_g16_bdensity_read(zp_g16_bdensity_t *d, uint64_t **mem, const char *path)
{
    memset(d, 0, sizeof *d);
    *mem = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    char m[8];
    uint64_t hdr[3];
    int rc = 0;
    uint64_t *w = NULL;
    if (fread(m, 1, 8, f) != 8 || memcmp(m, bdens_magic, 8)) {
        rc = zp_err_set(ZP_EFORMAT, "%s: not a density file (magic ZPBDENS1)", path);
        goto out;
    }
    if (fread(hdr, 8, 3, f) != 3) { rc = zp_err_set(ZP_EFORMAT, "%s: header truncated", path); goto out; }
    if (hdr[0] == 0 || hdr[0] > UINT32_MAX || hdr[1] > UINT32_MAX || hdr[0] + hdr[1] > UINT32_MAX ||
        hdr[2] < hdr[0] || hdr[2] > ((uint64_t)1 << 31)) {
        rc = zp_err_set(ZP_EFORMAT, "%s: n_inp %llu, n_aux %llu, abc_size %llu out of range", path,
                        (unsigned long long)hdr[0], (unsigned long long)hdr[1], (unsigned long long)hdr[2]);
        goto out;
    }
    size_t wi = (size_t)(hdr[0] + 63) / 64, wa = (size_t)(hdr[1] + 63) / 64, nw = wi + 2 * wa;
    if (fseek(f, 0, SEEK_END) != 0 || ftell(f) != (long)(32 + 8 * nw)) {
        rc = zp_err_set(ZP_EFORMAT, "%s: %ld bytes, the header wants %zu", path, ftell(f), 32 + 8 * nw);
        goto out;
    }
    fseek(f, 32, SEEK_SET);
    if (!(w = calloc(nw + 1, 8))) { rc = zp_err_set(-ENOMEM, "%s: %zu words", path, nw); goto out; }
    if (fread(w, 8, nw, f) != nw) { rc = zp_err_set(ZP_EFORMAT, "%s: bitmaps truncated", path); goto out; }
    d->a_aux = w;
    d->b_inp = w + wa;
    d->b_aux = w + wa + wi;
    d->n_inp = (size_t)hdr[0];
    d->n_aux = (size_t)hdr[1];
    d->abc_size = (size_t)hdr[2];
    if (!tail_clear(d->a_aux, d->n_aux) || !tail_clear(d->b_inp, d->n_inp) || !tail_clear(d->b_aux, d->n_aux)) {
        rc = zp_err_set(ZP_EFORMAT, "%s: bits set past a bitmap's length", path);
        goto out;
    }
    *mem = w;
    w = NULL;
out:
    if (rc) memset(d, 0, sizeof *d);
    free(w);
    fclose(f);
    return rc;
}
