/* g16_impl.h - the curve-dependent half of the Groth16 prover, written once.
 *
 * Included by g16_curves.c once per curve with ZC defined as the curve suffix (bn254 or
 * bls12_381) and ZC_UP as its upper-case form; defines static functions g16_<ZC>_* and the
 * table `const g16_curve_t g16_curve_<ZC>` (groth16_int.h).
 * Invariants: Fr buffers are zp_scalar_t (4 LE limbs), reinterpreted as zp_fr_<ZC>_t (same
 * layout); point arrays are the zkey's affine Montgomery bytes, (0,0) = infinity.
 * The algorithm follows shared/snarkjs-groth16.md §5 step by step.
 * Tests: tests/test_groth16.c */
#ifndef ZC
#error "define ZC before including g16_impl.h"
#endif

#define G16_CAT_(a, b) a##b
#define G16_CAT(a, b) G16_CAT_(a, b)
#define G16_CAT3(a, b, c) G16_CAT(G16_CAT(a, b), c)
#define G16_CAT4(a, b, c, d) G16_CAT(G16_CAT3(a, b, c), d)

#define FR_T G16_CAT3(zp_fr_, ZC, _t)
#define FQ_T G16_CAT3(zp_fq_, ZC, _t)
#define FQ2_T G16_CAT3(zp_fq2_, ZC, _t)
#define G1A_T G16_CAT3(zp_g1a_, ZC, _t)
#define G1_T G16_CAT3(zp_g1_, ZC, _t)
#define G2A_T G16_CAT3(zp_g2a_, ZC, _t)
#define G2_T G16_CAT3(zp_g2_, ZC, _t)
#define FR(f) G16_CAT4(zp_fr_, ZC, _, f)
#define FQ(f) G16_CAT4(zp_fq_, ZC, _, f)
#define FRI(f) G16_CAT4(zp_fr_, ZC, _, G16_CAT(f, _inl))   /* ff_inline.h fast path */
#define G1(f) G16_CAT4(zp_g1_, ZC, _, f)
#define G1A(f) G16_CAT4(zp_g1a_, ZC, _, f)
#define G2(f) G16_CAT4(zp_g2_, ZC, _, f)
#define G2A(f) G16_CAT4(zp_g2a_, ZC, _, f)
#define NTT(f) G16_CAT4(zp_ntt_, ZC, _, f)
#define NTT_DOM G16_CAT3(zp_ntt_, ZC, _domain_t)
#define MSM_G1 G16_CAT(zp_msm_g1_, ZC)
#define MSM_G2 G16_CAT(zp_msm_g2_, ZC)
#define PAIRING_CHECK G16_CAT3(zp_pairing_, ZC, _check)
#define L(f) G16_CAT4(g16_, ZC, _, f)
#define FRS(p) ((FR_T *)(p))
#define CFRS(p) ((const FR_T *)(p))

/* ---------------------------------------------------------------- point checks */
static bool L(fq_ok)(const FQ_T *x) { return FQ(is_canonical)(x); }

static size_t L(g1_check)(const void *pts, size_t n, bool subgroup, bool allow_inf)
{
    const G1A_T *p = pts;
    /* the bulk of a plain check (canonical, on the curve, or (0,0)) on the MSMs' vector path
     * where they have one (session 17); from: where the scalar loop goes on */
    size_t from = 0;
    if (!subgroup && allow_inf) {
        size_t bad = G16_CAT(MSM_G1, _check_v)(p, n, &from);
        if (bad < from) return bad;
    }
    for (size_t i = from; i < n; i++) {
        G1A_T q;   /* pts may sit at any alignment (a zkey section in place): copied out */
        memcpy(&q, (const uint8_t *)pts + i * sizeof q, sizeof q);
        if (!L(fq_ok)(&q.x) || !L(fq_ok)(&q.y)) return i;
        if (G1A(is_inf)(&q)) {
            if (!allow_inf) return i;
            continue;
        }
        if (!G1A(on_curve)(&q)) return i;
        if (subgroup && !G1A(in_subgroup)(&q)) return i;
    }
    return n;
}

static size_t L(g2_check)(const void *pts, size_t n, bool subgroup, bool allow_inf)
{
    const G2A_T *p = pts;
    /* the bulk of a plain check (canonical, on the curve, or (0,0)) on the MSMs' vector path
     * where they have one (session 17); from: where the scalar loop goes on */
    size_t from = 0;
    if (!subgroup && allow_inf) {
        size_t bad = G16_CAT(MSM_G2, _check_v)(p, n, &from);
        if (bad < from) return bad;
    }
    for (size_t i = from; i < n; i++) {
        G2A_T q;   /* pts may sit at any alignment (a zkey section in place): copied out */
        memcpy(&q, (const uint8_t *)pts + i * sizeof q, sizeof q);
        if (!L(fq_ok)(&q.x.c0) || !L(fq_ok)(&q.x.c1) || !L(fq_ok)(&q.y.c0) || !L(fq_ok)(&q.y.c1))
            return i;
        if (G2A(is_inf)(&q)) {
            if (!allow_inf) return i;
            continue;
        }
        if (!G2A(on_curve)(&q)) return i;
        if (subgroup && !G2A(in_subgroup)(&q)) return i;
    }
    return n;
}

static bool L(fr_canonical)(const zp_scalar_t *v) { return FR(is_canonical)(CFRS(v)); }

/* ---------------------------------------------------------------- synth */
static inline __attribute__((always_inline)) void L(synth_one)(FR_T *A, FR_T *B, const struct zp_g16_coef *e,
                                                               const zp_scalar_t *w, uint32_t rlo, uint32_t rhi)
{
    if (e->row < rlo || e->row >= rhi) return;
    FR_T t;
    FRI(mul)(&t, CFRS(&e->v), CFRS(&w[e->wire]));
    FR_T *x = (e->matrix ? B : A) + e->row;
    FRI(add)(x, x, &t);
}

static void L(synth_coefs)(const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a, zp_scalar_t *b,
                           size_t clo, size_t chi, uint32_t rlo, uint32_t rhi)
{
    FR_T *A = FRS(a), *B = FRS(b);
    if (k->coefs_raw) {                          /* the zkey's own entries (in-place load) */
        for (size_t i = clo; i < chi; i++) {
            struct zp_g16_coef e;
            g16_coef_at(k, i, &e);
            L(synth_one)(A, B, &e, w, rlo, rhi);
        }
        return;
    }
    for (size_t i = clo; i < chi; i++) L(synth_one)(A, B, &k->coefs[i], w, rlo, rhi);
}

static void L(mul_pw)(zp_scalar_t *c, const zp_scalar_t *a, const zp_scalar_t *b, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++) FRI(mul)(FRS(&c[i]), CFRS(&a[i]), CFRS(&b[i]));
}

static bool L(r1cs_c_matches)(const uint8_t *lc, uint32_t nterms, const zp_scalar_t *w, const zp_scalar_t *c)
{
    FR_T acc, t, coef;
    memset(&acc, 0, sizeof acc);
    for (uint32_t i = 0; i < nterms; i++, lc += 4 + sizeof(FR_T)) {
        uint32_t wire;
        memcpy(&wire, lc, 4);
        memcpy(&coef, lc + 4, sizeof coef);
        FRI(mul)(&t, &coef, CFRS(&w[wire]));     /* coef*w/R */
        FRI(add)(&acc, &acc, &t);
    }
    FR(mul)(&acc, &acc, &FR(r2));                /* sum coef*w (standard) */
    FR(mul)(&acc, &acc, &FR(r2));                /* Montgomery */
    return FR(eq)(&acc, CFRS(c));
}

/* ---------------------------------------------------------------- h = (a*b - c) on the coset */
static int L(dom_new)(void **dom, unsigned log_n, zp_pool_t *pool)
{
    NTT_DOM *d = calloc(1, sizeof *d);
    if (!d) return -ENOMEM;
    int rc = NTT(domain_init_pool)(d, log_n, pool);
    if (rc) {
        free(d);
        return rc;
    }
    *dom = d;
    return 0;
}

static void L(dom_free)(void *dom)
{
    if (!dom) return;
    NTT(domain_close)(dom);
    free(dom);
}

typedef struct { FR_T *a, *b, *h; size_t n; } L(join_t);

static void L(join_job)(void *arg, unsigned tid, unsigned nt)
{
    L(join_t) *j = arg;
    size_t lo, hi;
    zp_split(j->n, tid, nt, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        FR_T t;
        FRI(mul)(&t, &j->a[i], &j->b[i]);
        FRI(sub)(&t, &t, &j->h[i]);
        FR(from_mont)(&j->h[i], &t);
    }
}

/* (issue 10 item 1) out of place: the inverse NTTs read a_in, b_in, c (never written) and write
 * a, b, h (their first pass, the bit reversal, is the copy); a source equal to its destination
 * is transformed in place */
static void L(compute_h_from)(const void *dom, unsigned log_n, const zp_scalar_t *a_in, const zp_scalar_t *b_in,
                              const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *h, zp_pool_t *pool)
{
    const NTT_DOM *d = dom;
    size_t n = (size_t)1 << log_n;
    FR_T g;
    if (log_n + 1 <= G16_CAT3(ZP_FR_, ZC_UP, _TWO_ADICITY)) g = *FR(root)(log_n + 1);
    else FR(set_u64)(&g, 25);   /* snarkjs Fr.shift when the domain uses the largest root */
    FR_T *x[3] = {FRS(a), FRS(b), FRS(h)};
    const FR_T *src[3] = {CFRS(a_in), CFRS(b_in), CFRS(c)};
    static const char *const names[3][3] = {
        {"NTT inverse a", "coset shift a", "NTT forward a (coset)"},
        {"NTT inverse b", "coset shift b", "NTT forward b (coset)"},
        {"NTT inverse c", "coset shift c", "NTT forward c (coset)"},
    };
    for (int i = 0; i < 3; i++) {
        NTT(inverse_from)(d, x[i], src[i], pool);
        zp_trace_mark(names[i][0]);
        NTT(coset_shift)(x[i], n, &g, pool);
        zp_trace_mark(names[i][1]);
        NTT(forward)(d, x[i], pool);
        zp_trace_mark(names[i][2]);
    }
    L(join_t) j = {FRS(a), FRS(b), FRS(h), n};
    zp_pool_run(pool, L(join_job), &j);
    zp_trace_mark("h = a*b - c, from Montgomery");
}

static void L(compute_h)(const void *dom, unsigned log_n, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *h,
                         zp_pool_t *pool)
{
    L(compute_h_from)(dom, log_n, a, b, h, a, b, h, pool);
}

/* ---------------------------------------------------------------- MSM */
static size_t L(msm_g1_scratch)(size_t n, unsigned nt) { return G16_CAT(MSM_G1, _scratch_size)(n, nt); }
static size_t L(msm_g2_scratch)(size_t n, unsigned nt) { return G16_CAT(MSM_G2, _scratch_size)(n, nt); }

static void L(msm_g1)(zp_g1_any_t *out, const void *pts, const zp_scalar_t *s, size_t n, void *scratch,
                      zp_pool_t *pool)
{
    MSM_G1(&out->ZC, pts, s, n, scratch, pool);
}

static size_t L(msm_g1_sum2_scratch)(size_t n1, size_t n2, unsigned nt)
{
    return G16_CAT(MSM_G1, _sum2_scratch_size)(n1, n2, nt, NULL);
}

static void L(msm_g1_sum2)(zp_g1_any_t *out, const void *p1, const zp_scalar_t *s1, size_t n1, const void *p2,
                           const zp_scalar_t *s2, size_t n2, void *scratch, zp_pool_t *pool)
{
    G16_CAT(MSM_G1, _sum2_ex)(&out->ZC, p1, s1, n1, p2, s2, n2, scratch, pool, NULL);
}

static void L(msm_g2)(zp_g2_any_t *out, const void *pts, const zp_scalar_t *s, size_t n, void *scratch,
                      zp_pool_t *pool)
{
    MSM_G2(&out->ZC, pts, s, n, scratch, pool);
}

/* ---------------------------------------------------------------- assembly (snarkjs §5.5) */
static void L(assemble)(zp_g16_proof_t *p, const zp_g16_key_t *k, const zp_g1_any_t part[ZP_G16_NMSM],
                        const zp_g2_any_t *b2, const zp_scalar_t *r, const zp_scalar_t *s)
{
    G1_T d1, pa, b1, pc, t;
    G2_T d2, pb, t2;
    FR_T rm, rs;
    zp_scalar_t rs_s;

    FR(to_mont)(&rm, CFRS(r));
    FR(mul)(&rs, &rm, CFRS(s));                  /* r*s, standard form */
    memcpy(&rs_s, &rs, sizeof rs_s);
    G1(from_affine)(&d1, &k->delta1.ZC);
    G2(from_affine)(&d2, &k->delta2.ZC);
    /* pi_a = A' + alpha1 + r*delta1 */
    G1(add_affine)(&pa, &part[ZP_G16_A].ZC, &k->alpha1.ZC);
    G1(mul)(&t, &d1, r);
    G1(add)(&pa, &pa, &t);
    /* pi_b = B2' + beta2 + s*delta2 */
    G2(add_affine)(&pb, &b2->ZC, &k->beta2.ZC);
    G2(mul)(&t2, &d2, s);
    G2(add)(&pb, &pb, &t2);
    /* B1 = B1' + beta1 + s*delta1 */
    G1(add_affine)(&b1, &part[ZP_G16_B1].ZC, &k->beta1.ZC);
    G1(mul)(&t, &d1, s);
    G1(add)(&b1, &b1, &t);
    /* pi_c = C' + H + s*pi_a + r*B1 - (r*s)*delta1 */
    G1(add)(&pc, &part[ZP_G16_C].ZC, &part[ZP_G16_H].ZC);
    G1(mul)(&t, &pa, s);
    G1(add)(&pc, &pc, &t);
    G1(mul)(&t, &b1, r);
    G1(add)(&pc, &pc, &t);
    G1(mul)(&t, &d1, &rs_s);
    G1(neg)(&t, &t);
    G1(add)(&pc, &pc, &t);

    memset(p, 0, sizeof *p);
    p->curve = k->curve;
    G1(to_affine)(&p->a.ZC, &pa);
    G2(to_affine)(&p->b.ZC, &pb);
    G1(to_affine)(&p->c.ZC, &pc);
}

/* ---------------------------------------------------------------- verification */
static bool L(verify)(const zp_g16_vk_t *vk, const zp_scalar_t *pub, const zp_g16_proof_t *p)
{
    G1_T x, t;
    G1(from_affine)(&x, &vk->ic[0].ZC);
    size_t n = vk->n_public;
    void *scratch = NULL;
    G1A_T *ic = NULL;
    if (n > 16) {
        scratch = g16_alloc(L(msm_g1_scratch)(n, 1));
        ic = g16_alloc(n * sizeof *ic);
    }
    if (scratch && ic) {
        for (size_t i = 0; i < n; i++) ic[i] = vk->ic[i + 1].ZC;
        MSM_G1(&t, ic, pub, n, scratch, NULL);
        G1(add)(&x, &x, &t);
    } else {
        for (size_t i = 0; i < n; i++) {
            G1(from_affine)(&t, &vk->ic[i + 1].ZC);
            G1(mul)(&t, &t, &pub[i]);
            G1(add)(&x, &x, &t);
        }
    }
    free(scratch);
    free(ic);
    G1A_T P[4];
    G2A_T Q[4];
    G1A(neg)(&P[0], &p->a.ZC);
    Q[0] = p->b.ZC;
    P[1] = vk->alpha1.ZC;
    Q[1] = vk->beta2.ZC;
    G1(to_affine)(&P[2], &x);
    Q[2] = vk->gamma2.ZC;
    P[3] = p->c.ZC;
    Q[3] = vk->delta2.ZC;
    return PAIRING_CHECK(P, Q, 4);
}

/* ---------------------------------------------------------------- decimal / JSON */
static void L(fq_dec)(char *buf, const FQ_T *x) { FQ(to_dec)(buf, ZP_DEC_LEN, x); }

static void L(proof_to_json)(zp_proof_json_t *j, const zp_g16_proof_t *p)
{
    memset(j, 0, sizeof *j);
    j->curve = p->curve;
    if (!G1A(is_inf)(&p->a.ZC)) {
        L(fq_dec)(j->a[0], &p->a.ZC.x);
        L(fq_dec)(j->a[1], &p->a.ZC.y);
    }
    if (!G2A(is_inf)(&p->b.ZC)) {
        L(fq_dec)(j->b[0][0], &p->b.ZC.x.c0);
        L(fq_dec)(j->b[0][1], &p->b.ZC.x.c1);
        L(fq_dec)(j->b[1][0], &p->b.ZC.y.c0);
        L(fq_dec)(j->b[1][1], &p->b.ZC.y.c1);
    }
    if (!G1A(is_inf)(&p->c.ZC)) {
        L(fq_dec)(j->c[0], &p->c.ZC.x);
        L(fq_dec)(j->c[1], &p->c.ZC.y);
    }
}

static int L(fq_parse)(FQ_T *x, const char *s, const char *what)
{
    if (FQ(from_dec)(x, s) != 0)
        return zp_err_set(ZP_EFORMAT, "%s: '%.40s' is not a canonical decimal coordinate < q", what, s);
    return 0;
}

/* an empty x means the point at infinity (fmt's convention for z = "0") */
static int L(g1_parse)(G1A_T *pt, const char (*xy)[ZP_DEC_LEN], const char *what, bool subgroup)
{
    memset(pt, 0, sizeof *pt);
    if (!xy[0][0]) return 0;
    int rc;
    if ((rc = L(fq_parse)(&pt->x, xy[0], what)) || (rc = L(fq_parse)(&pt->y, xy[1], what))) return rc;
    if (G1A(is_inf)(pt) || !G1A(on_curve)(pt))
        return zp_err_set(ZP_EFORMAT, "%s is not a point of the curve", what);
    if (subgroup && !G1A(in_subgroup)(pt))
        return zp_err_set(ZP_EFORMAT, "%s is not in the prime-order subgroup", what);
    return 0;
}

static int L(g2_parse)(G2A_T *pt, const char (*xy)[2][ZP_DEC_LEN], const char *what)
{
    memset(pt, 0, sizeof *pt);
    if (!xy[0][0][0]) return 0;
    int rc;
    if ((rc = L(fq_parse)(&pt->x.c0, xy[0][0], what)) || (rc = L(fq_parse)(&pt->x.c1, xy[0][1], what)) ||
        (rc = L(fq_parse)(&pt->y.c0, xy[1][0], what)) || (rc = L(fq_parse)(&pt->y.c1, xy[1][1], what)))
        return rc;
    if (G2A(is_inf)(pt) || !G2A(on_curve)(pt))
        return zp_err_set(ZP_EFORMAT, "%s is not a point of the twist curve", what);
    if (!G2A(in_subgroup)(pt)) return zp_err_set(ZP_EFORMAT, "%s is not in the prime-order subgroup", what);
    return 0;
}

static int L(proof_from_json)(zp_g16_proof_t *p, const zp_proof_json_t *j)
{
    int rc;
    memset(p, 0, sizeof *p);
    p->curve = j->curve;
    if ((rc = L(g1_parse)(&p->a.ZC, j->a, "proof pi_a", true))) return rc;
    if ((rc = L(g2_parse)(&p->b.ZC, j->b, "proof pi_b"))) return rc;
    if ((rc = L(g1_parse)(&p->c.ZC, j->c, "proof pi_c", true))) return rc;
    return 0;
}

static int L(vk_from_json)(zp_g16_vk_t *vk, const zp_vk_json_t *j)
{
    int rc;
    memset(vk, 0, sizeof *vk);
    vk->curve = j->curve;
    vk->n_public = j->n_public;
    if ((rc = L(g1_parse)(&vk->alpha1.ZC, j->alpha1, "vk_alpha_1", true))) return rc;
    if ((rc = L(g2_parse)(&vk->beta2.ZC, j->beta2, "vk_beta_2"))) return rc;
    if ((rc = L(g2_parse)(&vk->gamma2.ZC, j->gamma2, "vk_gamma_2"))) return rc;
    if ((rc = L(g2_parse)(&vk->delta2.ZC, j->delta2, "vk_delta_2"))) return rc;
    if (G1A(is_inf)(&vk->alpha1.ZC) || G2A(is_inf)(&vk->beta2.ZC) || G2A(is_inf)(&vk->gamma2.ZC) ||
        G2A(is_inf)(&vk->delta2.ZC))
        return zp_err_set(ZP_EFORMAT, "verification key: alpha/beta/gamma/delta must not be infinity");
    vk->ic = calloc((size_t)j->n_public + 1, sizeof *vk->ic);
    if (!vk->ic) return zp_err_set(-ENOMEM, "verification key: out of memory for %u IC points", j->n_public + 1);
    for (size_t i = 0; i <= j->n_public; i++) {
        char what[32];
        snprintf(what, sizeof what, "vk IC[%zu]", i);
        if ((rc = L(g1_parse)(&vk->ic[i].ZC, j->ic[i], what, true))) {
            free(vk->ic);
            vk->ic = NULL;
            return rc;
        }
    }
    return 0;
}

static void L(scalar_to_dec)(char *buf, size_t cap, const zp_scalar_t *v)
{
    FR_T m;
    FR(to_mont)(&m, CFRS(v));
    FR(to_dec)(buf, cap, &m);
}

static int L(scalar_from_dec)(zp_scalar_t *v, const char *s)
{
    FR_T m;
    if (FR(from_dec)(&m, s) != 0)
        return zp_err_set(ZP_EFORMAT, "'%.40s' is not a canonical decimal scalar < r", s);
    FR(from_mont)(FRS(v), &m);
    return 0;
}

static int L(random_scalar)(zp_scalar_t *v)
{
    /* rejection sampling: top bits masked to the bit length of r */
    const FR_T *r = &FR(modulus);
    unsigned top = 63;
    while (top > 0 && !((r->l[3] >> top) & 1)) top--;
    uint64_t mask = top == 63 ? ~(uint64_t)0 : (((uint64_t)1 << (top + 1)) - 1);
    for (int tries = 0; tries < 1000; tries++) {
        int rc = zp_random_bytes(v->l, sizeof v->l);
        if (rc) return rc;
        v->l[3] &= mask;
        if (FR(is_canonical)(CFRS(v))) return 0;
    }
    return zp_err_set(ZP_EFORMAT, "random source keeps returning values >= r");
}

static void L(proof_to_bin)(uint8_t *out, const zp_g16_proof_t *p)
{
    size_t g1 = G16_CAT3(ZP_G1_, ZC_UP, _COMPRESSED);
    size_t g2 = G16_CAT3(ZP_G2_, ZC_UP, _COMPRESSED);
    G1A(compress)(out, &p->a.ZC);
    G2A(compress)(out + g1, &p->b.ZC);
    G1A(compress)(out + g1 + g2, &p->c.ZC);
}

static int L(proof_from_bin)(zp_g16_proof_t *p, const uint8_t *in)
{
    size_t g1 = G16_CAT3(ZP_G1_, ZC_UP, _COMPRESSED);
    size_t g2 = G16_CAT3(ZP_G2_, ZC_UP, _COMPRESSED);
    int rc;
    memset(p, 0, sizeof *p);
    p->curve = G16_CAT(ZP_CURVE_, ZC_UP);
    if ((rc = G1A(decompress)(&p->a.ZC, in))) return rc;
    if ((rc = G2A(decompress)(&p->b.ZC, in + g1))) return rc;
    if ((rc = G1A(decompress)(&p->c.ZC, in + g1 + g2))) return rc;
    return 0;
}

const g16_curve_t G16_CAT(g16_curve_, ZC) = {
    .id = G16_CAT(ZP_CURVE_, ZC_UP),
    .name = ZC_NAME,
    .g1a_size = sizeof(G1A_T),
    .g2a_size = sizeof(G2A_T),
    .g1c_size = G16_CAT3(ZP_G1_, ZC_UP, _COMPRESSED),
    .g2c_size = G16_CAT3(ZP_G2_, ZC_UP, _COMPRESSED),
    .two_adicity = G16_CAT3(ZP_FR_, ZC_UP, _TWO_ADICITY),
    .g1_check = L(g1_check),
    .g2_check = L(g2_check),
    .fr_canonical = L(fr_canonical),
    .synth_coefs = L(synth_coefs),
    .mul_pw = L(mul_pw),
    .r1cs_c_matches = L(r1cs_c_matches),
    .dom_new = L(dom_new),
    .dom_free = L(dom_free),
    .compute_h = L(compute_h),
    .compute_h_from = L(compute_h_from),
    .msm_g1_scratch = L(msm_g1_scratch),
    .msm_g1 = L(msm_g1),
    .msm_g1_sum2_scratch = L(msm_g1_sum2_scratch),
    .msm_g1_sum2 = L(msm_g1_sum2),
    .msm_g2_scratch = L(msm_g2_scratch),
    .msm_g2 = L(msm_g2),
    .assemble = L(assemble),
    .verify = L(verify),
    .proof_to_json = L(proof_to_json),
    .proof_from_json = L(proof_from_json),
    .vk_from_json = L(vk_from_json),
    .scalar_to_dec = L(scalar_to_dec),
    .scalar_from_dec = L(scalar_from_dec),
    .random_scalar = L(random_scalar),
    .proof_to_bin = L(proof_to_bin),
    .proof_from_bin = L(proof_from_bin),
};

#undef FR_T
#undef FQ_T
#undef FQ2_T
#undef G1A_T
#undef G1_T
#undef G2A_T
#undef G2_T
#undef FR
#undef FRI
#undef FQ
#undef G1
#undef G1A
#undef G2
#undef G2A
#undef NTT
#undef NTT_DOM
#undef MSM_G1
#undef MSM_G2
#undef PAIRING_CHECK
#undef L
#undef FRS
#undef CFRS
