/* backend_cuda.c - zp_backend_cuda: the ops table of lib/groth16 over the CUDA code of this
 * folder (cu_api.h), plus the host-side pieces around it that use lib/ff and lib/ec:
 *   - NTT power tables (w^i, g^i/n as two small tables each, the device expands them; a
 *     bellman key's (issue 29 item 4): bellman's w, 7^i/n and 7^-i (7^n - 1)^-1 / n);
 *   - the final 2^c-Horner combination of an MSM's window sums (Jacobian, lib/ec);
 *   - key checks (curve, sizes, two-adicity) before anything reaches the device.
 * Invariants: Fr values Montgomery in, h standard out (as zp_backend_cpu); points in the lib/ec
 * layouts. The backend owns the CUDA context (zp_cu_t) and the power tables of the last
 * domain. Tests: tests/test_cuda.c (GPU == CPU backend), tests/test_cuda_host.c. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/groth16/assignment.h"
#include "../../lib/groth16/backend_test.h"
#include "../../lib/ntt/ntt.h"
#include "backend_cuda.h"

/* the power tables of one domain; kept until close (a staged set's arguments point into them,
 * and there are at most ~30 domains a curve, each O(sqrt n)) */
typedef struct pow_tab {
    struct pow_tab *next;
    zp_curve_id_t curve;
    unsigned log_n, conv;
    zp_cu_pow_table_t tw, cs, ics;   /* ics: bellman only */
    void *mem;
} pow_tab_t;

struct zp_backend {
    zp_cu_t *cu;
    int device;
    pthread_mutex_t mu;     /* the tables (the staging and the work thread both look them up) */
    pow_tab_t *tabs;
    /* the window sums of one proof's 4 MSMs: the work thread's (prove_g1, prove_staged), kept
     * here so no proof allocates between two computes */
    zp_cu_msm_out_t mo[ZP_G16_NMSM];
};

/* ---------------------------------------------------------------- host helpers */

static unsigned ceil_log2(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n) k++;
    return k;
}

/* lo[j] = s * b^j (j < 2^k1), hi[j] = b^(j * 2^k1) (j < nhi) */
#define POW_TABLES_IMPL(C, CU)                                                                     \
    static void pow_tables_##C(zp_fr_##C##_t *lo, zp_fr_##C##_t *hi, unsigned k1, size_t nhi,  \
                               const zp_fr_##C##_t *b, const zp_fr_##C##_t *s)                 \
    {                                                                                            \
        zp_fr_##C##_t step;                                                                      \
        lo[0] = *s;                                                                              \
        for (size_t j = 1; j < ((size_t)1 << k1); j++) zp_fr_##C##_mul(&lo[j], &lo[j - 1], b); \
        step = *b;                                                                               \
        for (unsigned i = 0; i < k1; i++) zp_fr_##C##_sqr(&step, &step);                        \
        hi[0] = zp_fr_##C##_one;                                                                 \
        for (size_t j = 1; j < nhi; j++) zp_fr_##C##_mul(&hi[j], &hi[j - 1], &step);            \
    }                                                                                            \
    static int tables_##C(unsigned log_n, zp_cu_pow_table_t *tw, zp_cu_pow_table_t *cs, void **mem) \
    {                                                                                            \
        if (log_n + 1 > ZP_FR_##CU##_TWO_ADICITY || log_n > 31)                                   \
            return zp_err_set(ZP_ETOOBIG, "NTT domain 2^%u: at most 2^%u on this curve", log_n,  \
                              ZP_FR_##CU##_TWO_ADICITY - 1);                                      \
        size_t n = (size_t)1 << log_n, half = n / 2 ? n / 2 : 1;                                 \
        unsigned twk = (ceil_log2(half) + 1) / 2, csk = (ceil_log2(n) + 1) / 2;                  \
        size_t tw_lo = (size_t)1 << twk, tw_hi = (half + tw_lo - 1) / tw_lo;                     \
        size_t cs_lo = (size_t)1 << csk, cs_hi = (n + cs_lo - 1) / cs_lo;                        \
        zp_fr_##C##_t *m = malloc((tw_lo + tw_hi + cs_lo + cs_hi) * sizeof *m);                  \
        if (!m) return -ENOMEM;                                                                  \
        zp_fr_##C##_t ninv, nn;                                                                  \
        zp_fr_##C##_set_u64(&nn, (uint64_t)n);                                                   \
        zp_fr_##C##_inv(&ninv, &nn);                                                             \
        pow_tables_##C(m, m + tw_lo, twk, tw_hi, zp_fr_##C##_root(log_n), &zp_fr_##C##_one);     \
        pow_tables_##C(m + tw_lo + tw_hi, m + tw_lo + tw_hi + cs_lo, csk, cs_hi,                 \
                       zp_fr_##C##_root(log_n + 1), &ninv);                                      \
        tw->lo = m[0].l;                                                                         \
        tw->hi = m[tw_lo].l;                                                                     \
        tw->k1 = twk;                                                                            \
        tw->nhi = tw_hi;                                                                         \
        cs->lo = m[tw_lo + tw_hi].l;                                                             \
        cs->hi = m[tw_lo + tw_hi + cs_lo].l;                                                     \
        cs->k1 = csk;                                                                            \
        cs->nhi = cs_hi;                                                                         \
        *mem = m;                                                                                \
        return 0;                                                                                \
    }

POW_TABLES_IMPL(bn254, BN254)
POW_TABLES_IMPL(bls12_381, BLS12_381)

int zp_cuda_pow_tables(zp_curve_id_t curve, unsigned log_n, zp_cu_pow_table_t *tw, zp_cu_pow_table_t *cs,
                       void **mem)
{
    *mem = NULL;
    if (curve == ZP_CURVE_BN254) return tables_bn254(log_n, tw, cs, mem);
    if (curve == ZP_CURVE_BLS12_381) return tables_bls12_381(log_n, tw, cs, mem);
    return zp_err_set(ZP_ECURVE, "cuda backend: curve %d", (int)curve);
}

int zp_cuda_pow_tables_bellman(unsigned log_n, zp_cu_pow_table_t *tw, zp_cu_pow_table_t *cs, zp_cu_pow_table_t *ics,
                               void **mem)
{
    typedef zp_fr_bls12_381_t fr;
    *mem = NULL;
    if (log_n > 31) return zp_err_set(ZP_ETOOBIG, "NTT domain 2^%u: at most 2^31 on the cuda backend", log_n);
    fr w, nn, ninv, g, ginv, zinv, s;
    int rc = zp_ntt_bls12_381_root_bellman(&w, log_n);
    if (rc) return zp_err_set(rc, "cuda backend: no bellman 2^%u root of unity", log_n);
    size_t n = (size_t)1 << log_n, half = n / 2 ? n / 2 : 1;
    unsigned twk = (ceil_log2(half) + 1) / 2, csk = (ceil_log2(n) + 1) / 2;
    size_t tw_lo = (size_t)1 << twk, tw_hi = (half + tw_lo - 1) / tw_lo;
    size_t cs_lo = (size_t)1 << csk, cs_hi = (n + cs_lo - 1) / cs_lo;
    fr *m = malloc((tw_lo + tw_hi + 2 * (cs_lo + cs_hi)) * sizeof *m);
    if (!m) return -ENOMEM;
    zp_fr_bls12_381_set_u64(&nn, (uint64_t)n);
    zp_fr_bls12_381_inv(&ninv, &nn);
    zp_fr_bls12_381_set_u64(&g, ZP_NTT_BELLMAN_GENERATOR);
    zp_fr_bls12_381_inv(&ginv, &g);
    uint64_t e[1] = {n};   /* Z on the coset: (7 x)^n - 1 = 7^n - 1 */
    zp_fr_bls12_381_pow(&zinv, &g, e, 1);
    zp_fr_bls12_381_sub(&zinv, &zinv, &zp_fr_bls12_381_one);
    zp_fr_bls12_381_inv(&zinv, &zinv);
    zp_fr_bls12_381_mul(&s, &zinv, &ninv);
    fr *c = m + tw_lo + tw_hi, *ic = c + cs_lo + cs_hi;
    pow_tables_bls12_381(m, m + tw_lo, twk, tw_hi, &w, &zp_fr_bls12_381_one);
    pow_tables_bls12_381(c, c + cs_lo, csk, cs_hi, &g, &ninv);
    pow_tables_bls12_381(ic, ic + cs_lo, csk, cs_hi, &ginv, &s);
    *tw = (zp_cu_pow_table_t){.lo = m[0].l, .hi = m[tw_lo].l, .k1 = twk, .nhi = tw_hi};
    *cs = (zp_cu_pow_table_t){.lo = c[0].l, .hi = c[cs_lo].l, .k1 = csk, .nhi = cs_hi};
    *ics = (zp_cu_pow_table_t){.lo = ic[0].l, .hi = ic[cs_lo].l, .k1 = csk, .nhi = cs_hi};
    *mem = m;
    return 0;
}

#define COMBINE_IMPL(C)                                                                          \
    static void combine_##C(zp_g1_##C##_t *out, const zp_cu_msm_out_t *m)                        \
    {                                                                                            \
        zp_g1_##C##_set_inf(out);                                                                \
        for (unsigned w = m->nwin; w-- > 0;) {                                                   \
            for (unsigned i = 0; i < m->c; i++) zp_g1_##C##_dbl(out, out);                       \
            zp_g1_##C##_t p;                                                                     \
            memcpy(&p, m->win[w], sizeof p);                                                     \
            zp_g1_##C##_add(out, out, &p);                                                       \
        }                                                                                        \
    }
COMBINE_IMPL(bn254)
COMBINE_IMPL(bls12_381)

int zp_cuda_msm_combine(zp_curve_id_t curve, zp_g1_any_t *out, const zp_cu_msm_out_t *m)
{
    _Static_assert(sizeof(zp_g1_bls12_381_t) == ZP_CU_JAC_LIMBS * 8, "Jacobian layout");
    if (m->nwin > ZP_CU_MAX_WIN || m->c == 0 || m->c > 32)
        return zp_err_set(ZP_EDEVICE, "cuda msm: bad window layout (c %u, %u windows)", m->c, m->nwin);
    if (curve == ZP_CURVE_BN254)
        combine_bn254(&out->bn254, m);
    else if (curve == ZP_CURVE_BLS12_381)
        combine_bls12_381(&out->bls12_381, m);
    else
        return zp_err_set(ZP_ECURVE, "cuda backend: curve %d", (int)curve);
    return 0;
}

/* ---------------------------------------------------------------- ops */

/* device: ZP_CUDA_DEVICE (an ordinal or a UUID) when set, else cfg->device; emu: the host
 * emulation instead of a device */
static int open_with(zp_backend_t **bep, const zp_backend_cfg_t *cfg, const zp_cu_emu_cfg_t *emu)
{
    char desc[512], spec[32];
    *bep = NULL;
    zp_backend_t *be = calloc(1, sizeof *be);
    if (!be) return -ENOMEM;
    be->device = cfg ? cfg->device : 0;
    pthread_mutex_init(&be->mu, NULL);
    const char *env = getenv("ZP_CUDA_DEVICE");
    snprintf(spec, sizeof spec, "%d", be->device);
    int rc = emu ? zp_cu_open_emulated(&be->cu, emu, desc, sizeof desc)
                 : zp_cu_open(&be->cu, env && *env ? env : spec, desc, sizeof desc);
    if (rc) {
        pthread_mutex_destroy(&be->mu);
        free(be);
        return rc;
    }
    zp_log(ZP_LOG_INFO, "cuda backend: %s", desc);
    *bep = be;
    return 0;
}

static int be_open(zp_backend_t **bep, const zp_backend_cfg_t *cfg) { return open_with(bep, cfg, NULL); }

int zp_cuda_open_emulated(zp_backend_t **bep, const zp_backend_cfg_t *cfg, const zp_cu_emu_cfg_t *emu)
{
    zp_cu_emu_cfg_t none;
    memset(&none, 0, sizeof none);
    return open_with(bep, cfg, emu ? emu : &none);
}

zp_cu_t *zp_cuda_cu(zp_backend_t *be) { return be->cu; }

int zp_cuda_host_register_step(zp_backend_t *be, void *p, size_t len, size_t chunk, size_t *done, size_t max_bytes)
{
    return zp_cu_host_register_step(be->cu, p, len, chunk, done, max_bytes);
}

static void be_close(zp_backend_t **bep)
{
    zp_backend_t *be = *bep;
    if (!be) return;
    zp_cu_close(&be->cu);
    for (pow_tab_t *t = be->tabs, *nx; t; t = nx) {
        nx = t->next;
        free(t->mem);
        free(t);
    }
    pthread_mutex_destroy(&be->mu);
    free(be);
    *bep = NULL;
}

static int be_host_register(zp_backend_t *be, void *p, size_t len) { return zp_cu_host_register(be->cu, p, len); }
static int be_host_unregister(zp_backend_t *be, void *p) { return zp_cu_host_unregister(be->cu, p); }

static int check_key(const zp_g16_key_t *k)
{
    if (k->curve != ZP_CURVE_BN254 && k->curve != ZP_CURVE_BLS12_381)
        return zp_err_set(ZP_ECURVE, "cuda backend: curve %d", (int)k->curve);
    /* bellman's H (issue 29 item 4): its roots, coset 7, n - 1 coefficients (cu_api.h) */
    if (k->conv > ZP_G16_CONV_BELLMAN || (k->conv == ZP_G16_CONV_BELLMAN && k->curve != ZP_CURVE_BLS12_381))
        return zp_err_set(ZP_EFORMAT, "cuda backend: key conventions %u on curve %d", k->conv, (int)k->curve);
    if (k->log_n > 31 || k->domain_size != (uint32_t)1 << k->log_n)
        return zp_err_set(ZP_EFORMAT, "cuda backend: domain size %u is not 2^%u", k->domain_size, k->log_n);
    if (k->n_vars < k->n_public + 1)
        return zp_err_set(ZP_EFORMAT, "cuda backend: %u variables, %u public", k->n_vars, k->n_public);
    if (k->compact && (!k->dens_a || !k->dens_b || !k->pfx_a || !k->pfx_b || k->n_a > k->n_vars || k->n_b > k->n_vars))
        return zp_err_set(ZP_EFORMAT, "cuda backend: a compacted key without its bitmaps or with %u / %u points for %u "
                          "wires", k->n_a, k->n_b, k->n_vars);
    return 0;
}

/* the power tables of (curve, log_n, conventions), made once */
static int tables(zp_backend_t *be, zp_curve_id_t curve, unsigned log_n, unsigned conv, const pow_tab_t **out)
{
    int rc = 0;
    pthread_mutex_lock(&be->mu);
    pow_tab_t *t = be->tabs;
    while (t && (t->curve != curve || t->log_n != log_n || t->conv != conv)) t = t->next;
    if (!t) {
        if (!(t = calloc(1, sizeof *t))) {
            rc = -ENOMEM;
        } else if ((rc = conv ? zp_cuda_pow_tables_bellman(log_n, &t->tw, &t->cs, &t->ics, &t->mem)
                              : zp_cuda_pow_tables(curve, log_n, &t->tw, &t->cs, &t->mem))) {
            free(t);
            t = NULL;
        } else {
            t->curve = curve;
            t->log_n = log_n;
            t->conv = conv;
            t->next = be->tabs;
            be->tabs = t;
        }
    }
    pthread_mutex_unlock(&be->mu);
    *out = t;
    return rc;
}

/* identity of a key for "already uploaded": the array addresses, the sizes and a few bytes
 * of each array (a key closed and another loaded at the same address is still told apart) */
static uintptr_t key_id(const zp_g16_key_t *k, const void *const bases[4], const size_t counts[4])
{
    uint64_t h = 1469598103934665603ULL;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ULL)
    MIX(k->curve);
    MIX(k->log_n);
    size_t pb = zp_g1a_size(k->curve);
    for (int i = 0; i < 4; i++) {
        MIX((uintptr_t)bases[i]);
        MIX(counts[i]);
        if (!counts[i]) continue;
        const uint8_t *p = bases[i], *q = p + (counts[i] - 1) * pb;
        for (size_t j = 0; j < pb; j += 8) {
            uint64_t x, y;
            memcpy(&x, p + j, 8);
            memcpy(&y, q + j, 8);
            MIX(x);
            MIX(y);
        }
    }
#undef MIX
    return (uintptr_t)(h | 1);
}

/* k's G1 bases, their counts and identity */
static uintptr_t key_bases(const zp_g16_key_t *k, const void *bases[4], size_t counts[4])
{
    bases[0] = k->a; bases[1] = k->b1; bases[2] = k->c; bases[3] = k->h;
    counts[0] = zp_g16_key_n_a(k);   /* a compacted key's (bellman's) A and B1 as in the file */
    counts[1] = zp_g16_key_n_b(k);
    counts[2] = (size_t)k->n_vars - k->n_public - 1;
    counts[3] = k->domain_size;
    return key_id(k, bases, counts);
}

static int be_load_key(zp_backend_t *be, const zp_g16_key_t *k)
{
    int rc, resident = 0;
    const pow_tab_t *tab;
    if ((rc = check_key(k)) || (rc = tables(be, k->curve, k->log_n, k->conv, &tab))) return rc;
    const void *bases[4];
    size_t counts[4];
    uintptr_t id = key_bases(k, bases, counts);
    /* a compacted key's bitmaps and prefix counts are key data: on the device with it, once */
    zp_cu_prove_args_t dens = {.n_vars = k->n_vars, .compact = k->compact, .n_a = k->n_a, .n_b = k->n_b,
                               .dens_a = k->dens_a, .dens_b = k->dens_b, .pfx_a = k->pfx_a, .pfx_b = k->pfx_b};
    return zp_cu_load_bases_dens(be->cu, k->curve, id, k->log_n, bases, counts, &dens, &resident);
}

static int be_key_resident(zp_backend_t *be, const zp_g16_key_t *k)
{
    if (check_key(k)) return 0;
    const void *bases[4];
    size_t counts[4];
    uintptr_t id = key_bases(k, bases, counts);
    zp_cu_key_info_t ki[16];   /* more than the executor's table holds */
    unsigned n = zp_cu_keys(be->cu, ki, 16);
    if (n > 16) n = 16;
    for (unsigned i = 0; i < n; i++)
        if (ki[i].key_id == id) return ki[i].resident ? 1 : 0;
    return 0;
}

static void copy_times(zp_g16_times_t *t, const zp_cu_times_t *ct)
{
    if (!t) return;
    t->h2d_ns = ct->h2d_ns;
    t->ntt_ns = ct->ntt_ns;
    for (int i = 0; i < ZP_G16_NMSM; i++) t->msm_ns[i] = ct->msm_ns[i];
    t->d2h_ns = ct->d2h_ns;
    t->total_ns = ct->total_ns;
}

/* the executor's description of a proof of key k (bases and counts filled when w != NULL) */
static int proof_args(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a,
                      const zp_scalar_t *b, const zp_scalar_t *c, zp_scalar_t *h, zp_cu_prove_args_t *args,
                      const void *bases[4], size_t counts[4])
{
    int rc;
    const pow_tab_t *tab;
    if ((rc = check_key(k)) || (rc = tables(be, k->curve, k->log_n, k->conv, &tab))) return rc;
    *args = (zp_cu_prove_args_t){
        .curve = k->curve, .log_n = k->log_n, .n_vars = k->n_vars, .n_public = k->n_public, .conv = k->conv,
        .tw = tab->tw, .cs = tab->cs, .ics = tab->ics, .w = w ? w[0].l : NULL,
        .a = a[0].l, .b = b[0].l, .c = c[0].l, .h = h ? h[0].l : NULL,
        .key_id = w ? key_bases(k, bases, counts) : 0,
        .compact = k->compact, .n_a = k->n_a, .n_b = k->n_b, .dens_a = k->dens_a, .dens_b = k->dens_b,
        .pfx_a = k->pfx_a, .pfx_b = k->pfx_b,
    };
    return 0;
}

/* out[i] from the window sums in be->mo, after a successful proof (rc) */
static int combine_all(zp_backend_t *be, int rc, zp_curve_id_t curve, zp_g1_any_t *out)
{
    for (int i = 0; rc == 0 && i < ZP_G16_NMSM; i++) rc = zp_cuda_msm_combine(curve, &out[i], &be->mo[i]);
    return rc;
}

static int run_prove(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a,
                     zp_scalar_t *b, const zp_scalar_t *c, zp_scalar_t *h, zp_g1_any_t *out, zp_g16_times_t *t)
{
    const void *bases[4];
    size_t counts[4];
    zp_cu_prove_args_t args;
    int rc = proof_args(be, k, w, a, b, c, h, &args, bases, counts);
    if (rc) return rc;
    zp_cu_times_t ct;
    rc = zp_cu_prove(be->cu, &args, w ? be->mo : NULL, &ct);
    if (w) rc = combine_all(be, rc, k->curve, out);
    /* bellman: n - 1 coefficients, h[n-1] = 0 (as the CPU backend's; the key's H point there is
     * the identity, so the MSM does not depend on it) */
    if (!w && rc == 0 && k->conv == ZP_G16_CONV_BELLMAN) memset(&h[k->domain_size - 1], 0, sizeof *h);
    copy_times(t, &ct);
    return rc;
}

static int be_compute_h(zp_backend_t *be, const zp_g16_key_t *k, zp_scalar_t *a, zp_scalar_t *b,
                        const zp_scalar_t *c, zp_scalar_t *h, zp_g16_times_t *t)
{
    return run_prove(be, k, NULL, a, b, c, h, NULL, t);
}

static int be_msm_g1(zp_backend_t *be, zp_curve_id_t curve, zp_g1_any_t *out, const void *points,
                     const zp_scalar_t *scalars, size_t n)
{
    zp_cu_msm_out_t *m = malloc(sizeof *m);
    if (!m) return -ENOMEM;
    int rc = zp_cu_msm_g1(be->cu, curve, m, points, n ? scalars[0].l : NULL, n, NULL);
    if (rc == 0) rc = zp_cuda_msm_combine(curve, out, m);
    free(m);
    return rc;
}

static int be_prove_g1(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a,
                       zp_scalar_t *b, const zp_scalar_t *c, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM],
                       zp_g16_times_t *t)
{
    int rc = be_load_key(be, k);   /* a no-op when this key is already loaded */
    if (rc) return rc;
    return run_prove(be, k, w, a, b, c, h, out, t);
}

/* staged double buffering (groth16.h stage_in / prove_staged / release_set over cu_api.h) */
static int be_stage_in(zp_backend_t *be, unsigned set, const zp_g16_key_t *k, const zp_scalar_t *w,
                       const zp_scalar_t *a, const zp_scalar_t *b, const zp_scalar_t *c)
{
    const void *bases[4];
    size_t counts[4];
    zp_cu_prove_args_t args;
    int rc = proof_args(be, k, w, a, b, c, NULL, &args, bases, counts);
    return rc ? rc : zp_cu_stage_in(be->cu, set, &args, bases, counts);
}

static int be_prove_staged(zp_backend_t *be, unsigned set, const zp_g16_key_t *k, zp_g1_any_t out[ZP_G16_NMSM],
                           zp_g16_times_t *t)
{
    zp_cu_times_t ct;
    int rc = combine_all(be, zp_cu_prove_set(be->cu, set, be->mo, &ct), k->curve, out);
    copy_times(t, &ct);
    return rc;
}

static int be_release_set(zp_backend_t *be, unsigned set) { return zp_cu_release_set(be->cu, set); }

int zp_cuda_bench_h2d(zp_backend_t *be, size_t bytes, double *gbps_pageable, double *gbps_pinned)
{
    return zp_cu_bench_h2d(be->cu, bytes, gbps_pageable, gbps_pinned);
}

/* the ops table over an open function (the real device or the host emulation) */
#define CUDA_OPS(open_fn)                                                                                  \
    {.name = "cuda", .open = open_fn, .close = be_close, .host_register = be_host_register,               \
     .host_unregister = be_host_unregister, .load_key = be_load_key, .prove_g1 = be_prove_g1,             \
     .stage_in = be_stage_in, .prove_staged = be_prove_staged, .release_set = be_release_set,          \
     .key_resident = be_key_resident}

const zp_backend_ops_t zp_backend_cuda = CUDA_OPS(be_open);

/* tests only: the same backend on the host-emulated device (the worker takes it when
 * ZP_TEST_CUDA_EMULATE=1, so the ipc tests run the CUDA staging path without a GPU) */
static int be_open_emulated(zp_backend_t **bep, const zp_backend_cfg_t *cfg) { return zp_cuda_open_emulated(bep, cfg, NULL); }

const zp_backend_ops_t zp_backend_cuda_emulated = CUDA_OPS(be_open_emulated);

/* the test and bench verbs (lib/groth16/backend_test.h), off the production table */
static const zp_backend_test_ops_t cuda_test_ops = {
    .name = "cuda",
    .compute_h = be_compute_h,
    .msm_g1 = be_msm_g1,
};

const zp_backend_test_ops_t *zp_backend_cuda_test_ops(void)
{
    return &cuda_test_ops;
}
