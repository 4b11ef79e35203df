/* testkey.c - INSECURE test-only Groth16 keys from a known tau (testkey.h has the circuit, the
 * file contents and why). Curve-generic: every field and group operation goes through the
 * per-curve table of testkey_curves.c.
 *
 * Passes (each on the pool's threads):
 *   1. fixed-base tables for G1 and G2: tab[win][d] = d * 2^(w*win) * G, affine, window w from
 *      the number of multiplications (<= 16); a multiplication is then ceil(255/w) affine adds,
 *      batched over 1024 outputs so that one inversion serves a whole window step;
 *   2. Lagrange values L_c(tau) of the size-n domain and the H scalars
 *      L^(2n)_(2j+1)(tau) / delta (the ptau's tau^(2n-1) = 0 variant) in closed form
 *      x (A / (tau - x) - B), one batch inversion per 1024-element chunk;
 *   3. every point of the key: k * G from the table (scalars from the circuit's structure, see
 *      the sc_* functions), chunks converted to affine with one inversion, written straight
 *      into the mmap'd zkey;
 *   4. coefs, witnesses (the chain evaluated in order), r1cs, verification_key.json.
 * Files are written under a temporary name and renamed when complete (no half file under the
 * final name). Invariants: Fr values Montgomery unless named _std; point bytes as the zkey.
 * Tests: tests/test_testkey.c, tests/oracle/test_testkey.sh */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testkey_int.h"
#include "lib/fmt/bellman.h"

enum { TK_CHUNK = 1024, TK_MAX_PUBLIC = 1024, TK_MAX_POWER = 26, TK_MAX_WITNESS = 1000 };

typedef struct {
    const tk_curve_t *cv;
    const zp_testkey_cfg_t *cfg;
    zp_pool_t *pool;
    unsigned K, log_n;
    size_t n, M, nvars;
    zp_scalar_t tau, alpha, beta, delta, delta_inv, ab;   /* ab = alpha + beta */
    zp_scalar_t two, seven;
    zp_scalar_t *L;       /* n: L_c(tau) */
    zp_scalar_t *Hs;      /* n: H scalars, already divided by delta */
    zp_scalar_t *Sp;      /* K + 1: Sp[0] = sum_{c<M} L_c; Sp[j] = sum over c = j-1 mod K */
    /* bellman pass (write_bellman): point i of the current run is scalar b_inner(b_map[b_off + i]) */
    void (*b_inner)(const void *t, size_t i, zp_scalar_t *k);
    const uint32_t *b_map;
    size_t b_off;
} tk_t;

/* ---------------------------------------------------------------- deterministic stream */
typedef struct { uint64_t s; } tk_rng_t;

static uint64_t rng_u64(tk_rng_t *g)   /* splitmix64 */
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform non-zero value < r, Montgomery form */
static void rng_fr(const tk_curve_t *cv, tk_rng_t *g, zp_scalar_t *v)
{
    const uint64_t *r = cv->r;
    unsigned top = 63;
    while (top > 0 && !((r[3] >> top) & 1)) top--;
    uint64_t mask = top == 63 ? ~0ull : ((1ull << (top + 1)) - 1);
    zp_scalar_t s;
    do {
        for (int i = 0; i < 4; i++) s.l[i] = rng_u64(g);
        s.l[3] &= mask;
    } while (!cv->fr.is_canonical(&s) || cv->fr.is_zero(&s));
    cv->fr.to_mont(v, &s);
}

static void fr_pow(const tk_fr_t *f, zp_scalar_t *r, const zp_scalar_t *b, uint64_t e)
{
    zp_scalar_t acc, x = *b;
    f->set_u64(&acc, 1);
    for (; e; e >>= 1) {
        if (e & 1) f->mul(&acc, &acc, &x);
        f->mul(&x, &x, &x);
    }
    *r = acc;
}

/* ---------------------------------------------------------------- output files */
typedef struct { char tmp[4096], path[4096]; int fd; uint8_t *map; size_t len; } tk_file_t;

static int file_open(tk_file_t *f, const char *dir, const char *name, size_t len)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if ((size_t)snprintf(f->path, sizeof f->path, "%s/%s", dir, name) >= sizeof f->path ||
        (size_t)snprintf(f->tmp, sizeof f->tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid()) >= sizeof f->tmp)
        return zp_err_set(ZP_EFORMAT, "testkey: output directory path too long: %s", dir);
    f->fd = open(f->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0) return zp_err_set(-errno, "testkey: open(%s): %s", f->tmp, strerror(errno));
    int rc = 0;
    if (ftruncate(f->fd, (off_t)len) != 0) {
        rc = zp_err_set(-errno, "testkey: ftruncate(%s, %zu): %s", f->tmp, len, strerror(errno));
    } else {
        f->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            rc = zp_err_set(-errno, "testkey: mmap(%s, %zu bytes): %s", f->tmp, len, strerror(errno));
        }
    }
    if (rc) {
        close(f->fd);
        unlink(f->tmp);
        f->fd = -1;
        return rc;
    }
    f->len = len;
    return 0;
}

static void file_abort(tk_file_t *f)
{
    if (f->map) munmap(f->map, f->len);
    if (f->fd >= 0) {
        close(f->fd);
        unlink(f->tmp);
    }
    f->map = NULL;
    f->fd = -1;
}

static int file_commit(tk_file_t *f)
{
    int rc = 0;
    if (munmap(f->map, f->len) != 0) rc = zp_err_set(-errno, "testkey: munmap(%s): %s", f->tmp, strerror(errno));
    f->map = NULL;
    if (close(f->fd) != 0 && !rc) rc = zp_err_set(-errno, "testkey: close(%s): %s", f->tmp, strerror(errno));
    f->fd = -1;
    if (!rc && rename(f->tmp, f->path) != 0) rc = zp_err_set(-errno, "testkey: rename(%s): %s", f->path, strerror(errno));
    if (rc) unlink(f->tmp);
    return rc;
}

static int file_write_all(const char *dir, const char *name, const void *data, size_t len)
{
    tk_file_t f;
    int rc = file_open(&f, dir, name, len ? len : 1);
    if (rc) return rc;
    memcpy(f.map, data, len);
    if (!len && ftruncate(f.fd, 0) != 0) {
        rc = zp_err_set(-errno, "testkey: ftruncate(%s): %s", f.tmp, strerror(errno));
        file_abort(&f);
        return rc;
    }
    return file_commit(&f);
}

/* binfile container (snarkjs binfileutils): magic, u32 version, u32 nSections, then per
 * section u32 id, u64 size, payload. sec[i].off is set to the payload's file offset. */
typedef struct { uint32_t id; uint64_t size, off; } tk_sec_t;

static size_t bin_layout(tk_sec_t *s, unsigned ns)
{
    size_t pos = 12;
    for (unsigned i = 0; i < ns; i++) {
        s[i].off = pos + 12;
        pos += 12 + s[i].size;
    }
    return pos;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void bin_headers(uint8_t *m, const char *magic, uint32_t version, const tk_sec_t *s, unsigned ns)
{
    memcpy(m, magic, 4);
    put32(m + 4, version);
    put32(m + 8, ns);
    for (unsigned i = 0; i < ns; i++) {
        put32(m + s[i].off - 12, s[i].id);
        put64(m + s[i].off - 8, s[i].size);
    }
}

/* ---------------------------------------------------------------- fixed-base tables */
typedef struct { const tk_grp_t *g; unsigned w, nwin; uint8_t *tab; size_t row; } fb_t;

static void *fb_at(const fb_t *fb, unsigned win, size_t d) { return fb->tab + win * fb->row + d * fb->g->pa_size; }

typedef struct { fb_t *fb; const uint8_t *bases; atomic_int err; } fb_build_t;

static void fb_build_run(void *arg, unsigned tid, unsigned nt)
{
    fb_build_t *j = arg;
    const tk_grp_t *g = j->fb->g;
    size_t m = (size_t)1 << j->fb->w;
    uint8_t *jac = malloc(m * g->pj_size), *scr = malloc(m * g->fe_size);
    if (!jac || !scr) {
        atomic_store(&j->err, -ENOMEM);
        goto out;
    }
    for (unsigned win = tid; win < j->fb->nwin; win += nt) {
        const uint8_t *base = j->bases + win * g->pa_size;
        g->set_inf(jac);
        for (size_t d = 1; d < m; d++) g->add_affine(jac + d * g->pj_size, jac + (d - 1) * g->pj_size, base);
        g->batch_to_affine(fb_at(j->fb, win, 0), jac, m, scr);
    }
out:
    free(jac);
    free(scr);
}

static int fb_build(fb_t *fb, const tk_grp_t *g, size_t count, zp_pool_t *pool)
{
    unsigned w = 4;
    while (w < 16 && ((size_t)1 << (w + 4)) <= count) w++;   /* table ~ count / 16 points per window */
    memset(fb, 0, sizeof *fb);
    fb->g = g;
    fb->w = w;
    fb->nwin = (255 + w - 1) / w;
    fb->row = ((size_t)1 << w) * g->pa_size;
    fb->tab = aligned_alloc(64, fb->nwin * fb->row);
    uint8_t *bases = malloc(fb->nwin * g->pa_size), *jb = malloc(fb->nwin * g->pj_size + g->pj_size);
    uint8_t *scr = malloc(fb->nwin * g->fe_size);
    int rc = 0;
    if (!fb->tab || !bases || !jb || !scr) {
        rc = zp_err_set(-ENOMEM, "testkey: out of memory for a %u x 2^%u fixed-base table", fb->nwin, w);
        goto out;
    }
    zp_scalar_t one = {{1, 0, 0, 0}};
    uint8_t ga[256];
    g->mul_gen(ga, &one);
    g->from_affine(jb, ga);
    for (unsigned win = 1; win < fb->nwin; win++) {
        uint8_t *cur = jb + win * g->pj_size;
        memcpy(cur, cur - g->pj_size, g->pj_size);
        for (unsigned b = 0; b < w; b++) g->dbl(cur, cur);
    }
    g->batch_to_affine(bases, jb, fb->nwin, scr);
    fb_build_t j = {.fb = fb, .bases = bases};
    atomic_init(&j.err, 0);
    zp_pool_run(pool, fb_build_run, &j);
    if (atomic_load(&j.err)) rc = zp_err_set(-ENOMEM, "testkey: out of memory building the fixed-base table");
out:
    free(bases);
    free(jb);
    free(scr);
    if (rc) {
        free(fb->tab);
        fb->tab = NULL;
    }
    return rc;
}

/* out[i] = k_i * G for i < count, k_i from scalar(t, i) (Montgomery) */
typedef void (*tk_scalar_fn)(const tk_t *t, size_t i, zp_scalar_t *k);
typedef struct {
    const tk_t *t;
    const fb_t *fb;
    uint8_t *out;
    size_t count;
    tk_scalar_fn scalar;
    atomic_int err;
} fb_mul_t;

static void fb_mul_run(void *arg, unsigned tid, unsigned nt)
{
    fb_mul_t *j = arg;
    const tk_grp_t *g = j->fb->g;
    const tk_fr_t *f = &j->t->cv->fr;
    size_t lo, hi;
    zp_split(j->count, tid, nt, &lo, &hi);
    if (lo == hi) return;
    zp_scalar_t *ks = malloc(TK_CHUNK * sizeof *ks);
    uint8_t *aff = aligned_alloc(64, TK_CHUNK * g->pa_size);
    void *scr = aligned_alloc(64, (g->fb_scratch(TK_CHUNK) + 63) & ~(size_t)63);
    if (!ks || !aff || !scr) {
        atomic_store(&j->err, -ENOMEM);
        goto out;
    }
    for (size_t c0 = lo; c0 < hi; c0 += TK_CHUNK) {
        size_t m = hi - c0 < TK_CHUNK ? hi - c0 : TK_CHUNK;
        for (size_t i = 0; i < m; i++) {
            zp_scalar_t k;
            j->scalar(j->t, c0 + i, &k);
            f->from_mont(&ks[i], &k);
        }
        g->fb_chunk(aff, ks, m, j->fb->tab, j->fb->w, j->fb->nwin, scr);
        memcpy(j->out + c0 * g->pa_size, aff, m * g->pa_size);
    }
out:
    free(ks);
    free(aff);
    free(scr);
}

static int fb_mul(const tk_t *t, const fb_t *fb, uint8_t *out, size_t count, tk_scalar_fn scalar)
{
    fb_mul_t j = {.t = t, .fb = fb, .out = out, .count = count, .scalar = scalar};
    atomic_init(&j.err, 0);
    zp_pool_run(t->pool, fb_mul_run, &j);
    return atomic_load(&j.err) ? zp_err_set(-ENOMEM, "testkey: out of memory in a point pass") : 0;
}

/* ---------------------------------------------------------------- Lagrange values */
/* out[c] = x_c (A / (tau - x_c) - B), x_c = x0 step^c, c < n */
typedef struct {
    const tk_t *t;
    zp_scalar_t *out;
    size_t n;
    zp_scalar_t x0, step, A, B;
    atomic_int bad;
} lag_t;

static void lag_run(void *arg, unsigned tid, unsigned nt)
{
    lag_t *j = arg;
    const tk_fr_t *f = &j->t->cv->fr;
    size_t lo, hi;
    zp_split(j->n, tid, nt, &lo, &hi);
    zp_scalar_t den[TK_CHUNK], scr[TK_CHUNK], x;
    fr_pow(f, &x, &j->step, lo);
    f->mul(&x, &x, &j->x0);
    for (size_t c0 = lo; c0 < hi; c0 += TK_CHUNK) {
        size_t m = hi - c0 < TK_CHUNK ? hi - c0 : TK_CHUNK;
        for (size_t i = 0; i < m; i++) {
            j->out[c0 + i] = x;
            f->sub(&den[i], &j->t->tau, &x);
            if (f->is_zero(&den[i])) atomic_store(&j->bad, 1);
            f->mul(&x, &x, &j->step);
        }
        f->batch_inv(den, m, scr);
        for (size_t i = 0; i < m; i++) {
            zp_scalar_t v;
            f->mul(&v, &j->A, &den[i]);
            f->sub(&v, &v, &j->B);
            f->mul(&j->out[c0 + i], &j->out[c0 + i], &v);
        }
    }
}

static int lagrange(tk_t *t)
{
    const tk_fr_t *f = &t->cv->fr;
    zp_scalar_t one, tn, t2n, t2n1, inv, z;
    f->set_u64(&one, 1);
    /* L_c: x0 = 1, step = w_n, A = (tau^n - 1) / n, B = 0 */
    lag_t j = {.t = t, .out = t->L, .n = t->n, .x0 = one, .step = *f->root(t->log_n)};
    atomic_init(&j.bad, 0);
    fr_pow(f, &tn, &t->tau, t->n);
    f->sub(&z, &tn, &one);
    f->set_u64(&inv, t->n);
    f->inv(&inv, &inv);
    f->mul(&j.A, &z, &inv);
    memset(&j.B, 0, sizeof j.B);
    zp_pool_run(t->pool, lag_run, &j);
    /* H_j = L^(2n)_(2j+1)(tau) / delta with tau^(2n-1) dropped (ptau prepare phase2):
     * x = w_2n^(2j+1), A = (tau^(2n) - 1) / (2n delta), B = tau^(2n-1) / (2n delta) */
    lag_t h = {.t = t, .out = t->Hs, .n = t->n, .x0 = *f->root(t->log_n + 1), .step = *f->root(t->log_n)};
    atomic_init(&h.bad, 0);
    f->mul(&t2n, &tn, &tn);
    fr_pow(f, &t2n1, &t->tau, 2 * t->n - 1);
    f->set_u64(&inv, 2 * t->n);
    f->inv(&inv, &inv);
    f->mul(&inv, &inv, &t->delta_inv);
    f->sub(&z, &t2n, &one);
    f->mul(&h.A, &z, &inv);
    f->mul(&h.B, &t2n1, &inv);
    zp_pool_run(t->pool, lag_run, &h);
    if (atomic_load(&j.bad) || atomic_load(&h.bad))
        return zp_err_set(ZP_EFORMAT, "testkey: tau is a root of unity of the 2^%u domain: choose another tau",
                          t->log_n + 1);
    /* sums over the constraint rows */
    memset(t->Sp, 0, (t->K + 1) * sizeof *t->Sp);
    for (size_t c = 0; c < t->M; c++) {
        f->add(&t->Sp[0], &t->Sp[0], &t->L[c]);
        if (t->K) f->add(&t->Sp[1 + c % t->K], &t->Sp[1 + c % t->K], &t->L[c]);
    }
    return 0;
}

/* ---------------------------------------------------------------- the points' scalars
 * wire 0: A gets 2 at every row when K = 0 (q_i = one), B gets 7 at every row; wire j <= K:
 * A gets 2 at rows j-1 mod K; wire K+1+i (s_i): A and B get 1 at row i < M, C gets 1 at row
 * i-1. Public wires s <= K also get A += L_(M+s) (snarkjs's public-input rows). */
static void sc_a(const tk_t *t, size_t w, zp_scalar_t *k)
{
    const tk_fr_t *f = &t->cv->fr;
    if (w <= t->K) {
        if (w == 0 && t->K) memset(k, 0, sizeof *k);
        else f->mul(k, &t->two, &t->Sp[w]);
        f->add(k, k, &t->L[t->M + w]);
        return;
    }
    size_t i = w - t->K - 1;
    if (i < t->M) *k = t->L[i];
    else memset(k, 0, sizeof *k);
}

static void sc_b(const tk_t *t, size_t w, zp_scalar_t *k)
{
    if (w == 0) t->cv->fr.mul(k, &t->seven, &t->Sp[0]);
    else if (w <= t->K) memset(k, 0, sizeof *k);
    else sc_a(t, w, k);
}

static void sc_ic(const tk_t *t, size_t s, zp_scalar_t *k)   /* beta A + alpha B (C is empty) */
{
    const tk_fr_t *f = &t->cv->fr;
    zp_scalar_t a, b;
    sc_a(t, s, &a);
    sc_b(t, s, &b);
    f->mul(&a, &a, &t->beta);
    f->mul(&b, &b, &t->alpha);
    f->add(k, &a, &b);
}

static void sc_c(const tk_t *t, size_t i, zp_scalar_t *k)    /* wire K+1+i: (beta A + alpha B + C) / delta */
{
    const tk_fr_t *f = &t->cv->fr;
    memset(k, 0, sizeof *k);
    if (i < t->M) f->mul(k, &t->ab, &t->L[i]);
    if (i > 0) f->add(k, k, &t->L[i - 1]);
    f->mul(k, k, &t->delta_inv);
}

static void sc_h(const tk_t *t, size_t j, zp_scalar_t *k) { *k = t->Hs[j]; }

/* ---------------------------------------------------------------- coefficients */
/* constraint c's A and B terms: A = s_c*1 + q_c*2, B = s_c*1 + one*7 (r1cs and coefs order) */
static void constraint_terms(const tk_t *t, size_t c, uint32_t wire[4], uint32_t val[4])
{
    uint32_t s = (uint32_t)(t->K + 1 + c), q = t->K ? (uint32_t)(1 + c % t->K) : 0;
    wire[0] = s, val[0] = 1;
    wire[1] = q, val[1] = 2;
    wire[2] = s, val[2] = 1;
    wire[3] = 0, val[3] = 7;
}

typedef struct { const tk_t *t; uint8_t *p; zp_scalar_t enc[8]; } coefs_t;

static void coefs_run(void *arg, unsigned tid, unsigned nt)
{
    coefs_t *j = arg;
    size_t lo, hi;
    zp_split(j->t->M, tid, nt, &lo, &hi);
    for (size_t c = lo; c < hi; c++) {
        uint32_t wire[4], val[4];
        constraint_terms(j->t, c, wire, val);
        for (int e = 0; e < 4; e++) {
            uint8_t *p = j->p + (4 * c + e) * 44;
            put32(p, e < 2 ? 0 : 1);
            put32(p + 4, (uint32_t)c);
            put32(p + 8, wire[e]);
            memcpy(p + 12, &j->enc[val[e]], 32);
        }
    }
}

static void write_coefs(const tk_t *t, uint8_t *p)
{
    const tk_fr_t *f = &t->cv->fr;
    coefs_t j = {.t = t, .p = p + 4};
    for (uint64_t v = 0; v < 8; v++) {   /* the zkey stores coef * R^2 mod r: Montgomery(v) x R^2 */
        zp_scalar_t m;
        f->set_u64(&m, v);
        f->mul(&j.enc[v], &m, f->r2);
    }
    put32(p, (uint32_t)(4 * t->M + t->K + 1));
    zp_pool_run(t->pool, coefs_run, &j);
    for (size_t s = 0; s <= t->K; s++) {
        uint8_t *e = p + 4 + (4 * t->M + s) * 44;
        put32(e, 0);
        put32(e + 4, (uint32_t)(t->M + s));
        put32(e + 8, (uint32_t)s);
        memcpy(e + 12, &j.enc[1], 32);
    }
}

/* ---------------------------------------------------------------- the zkey */
enum { Z_HDR, Z_G16, Z_IC, Z_COEFS, Z_A, Z_B1, Z_B2, Z_C, Z_H, Z_CONTRIB, Z_N };

static int write_zkey(const tk_t *t, uint8_t *vk_pts, zp_testkey_times_t *tm)
{
    const tk_curve_t *cv = t->cv;
    const tk_fr_t *f = &cv->fr;
    size_t g1 = cv->g1->pa_size, g2 = cv->g2->pa_size, K = t->K;
    tk_sec_t s[Z_N] = {
        {1, 4, 0}, {2, 4 + cv->n8q + 4 + 32 + 12 + 3 * g1 + 3 * g2, 0}, {3, (K + 1) * g1, 0},
        {4, 4 + (4 * t->M + K + 1) * 44, 0}, {5, t->nvars * g1, 0}, {6, t->nvars * g1, 0},
        {7, t->nvars * g2, 0}, {8, (t->nvars - K - 1) * g1, 0}, {9, t->n * g1, 0}, {10, 64 + 4, 0},
    };
    size_t len = bin_layout(s, Z_N);
    tk_file_t file;
    int rc = file_open(&file, t->cfg->out_dir, "circuit.zkey", len);
    if (rc) return rc;
    uint8_t *m = file.map;
    bin_headers(m, "zkey", 1, s, Z_N);
    put32(m + s[Z_HDR].off, 1);   /* Groth16 */

    /* section 2: q, r, sizes, alpha1 beta1 beta2 gamma2 delta1 delta2 */
    uint8_t *h = m + s[Z_G16].off;
    put32(h, cv->n8q);
    memcpy(h + 4, cv->q, cv->n8q);
    h += 4 + cv->n8q;
    put32(h, 32);
    memcpy(h + 4, cv->r, 32);
    h += 36;
    put32(h, (uint32_t)t->nvars);
    put32(h + 4, (uint32_t)K);
    put32(h + 8, (uint32_t)t->n);
    h += 12;
    zp_scalar_t a_s, b_s, d_s, one_s = {{1, 0, 0, 0}};
    f->from_mont(&a_s, &t->alpha);
    f->from_mont(&b_s, &t->beta);
    f->from_mont(&d_s, &t->delta);
    /* computed in vk_pts (aligned), copied into the file (section 2 is not) */
    cv->g1->mul_gen(vk_pts, &a_s);
    cv->g1->mul_gen(vk_pts + g1, &b_s);
    cv->g2->mul_gen(vk_pts + 2 * g1, &b_s);
    cv->g2->mul_gen(vk_pts + 2 * g1 + g2, &one_s);
    cv->g1->mul_gen(vk_pts + 2 * g1 + 2 * g2, &d_s);
    cv->g2->mul_gen(vk_pts + 3 * g1 + 2 * g2, &d_s);
    memcpy(h, vk_pts, 3 * g1 + 3 * g2);

    write_coefs(t, m + s[Z_COEFS].off);
    uint64_t t0 = zp_now_ns();
    fb_t fb1, fb2;
    if ((rc = fb_build(&fb1, cv->g1, 3 * t->nvars, t->pool))) goto out_file;
    if ((rc = fb_build(&fb2, cv->g2, t->nvars, t->pool))) goto out_fb1;
    uint64_t t1 = zp_now_ns();
    tm->tables_ns = t1 - t0;
    if ((rc = fb_mul(t, &fb1, m + s[Z_IC].off, K + 1, sc_ic)) ||
        (rc = fb_mul(t, &fb1, m + s[Z_A].off, t->nvars, sc_a)) ||
        (rc = fb_mul(t, &fb1, m + s[Z_B1].off, K + 1, sc_b)) ||
        (rc = fb_mul(t, &fb2, m + s[Z_B2].off, t->nvars, sc_b)) ||
        (rc = fb_mul(t, &fb1, m + s[Z_C].off, t->nvars - K - 1, sc_c)) ||
        (rc = fb_mul(t, &fb1, m + s[Z_H].off, t->n, sc_h)))
        goto out_fb2;
    /* B1 of every s_i is A's point (both are L_i G): copied, not recomputed */
    memcpy(m + s[Z_B1].off + (K + 1) * g1, m + s[Z_A].off + (K + 1) * g1, (t->nvars - K - 1) * g1);
    tm->points_ns = zp_now_ns() - t1;
    memcpy(vk_pts + 3 * g1 + 3 * g2, m + s[Z_IC].off, (K + 1) * g1);
    /* section 10: circuit hash (not computed: zeros) and no contribution records */
    memset(m + s[Z_CONTRIB].off, 0, 68);
    tm->zkey_bytes = len;
out_fb2:
    free(fb2.tab);
out_fb1:
    free(fb1.tab);
out_file:
    if (rc) {
        file_abort(&file);
        return rc;
    }
    return file_commit(&file);
}

/* ---------------------------------------------------------------- witness, r1cs */
static int write_witness(const tk_t *t, tk_rng_t *g, const char *name)
{
    const tk_fr_t *f = &t->cv->fr;
    tk_sec_t s[2] = {{1, 4 + 32 + 4, 0}, {2, t->nvars * 32, 0}};
    size_t len = bin_layout(s, 2);
    tk_file_t file;
    int rc = file_open(&file, t->cfg->out_dir, name, len);
    if (rc) return rc;
    uint8_t *m = file.map;
    bin_headers(m, "wtns", 2, s, 2);
    put32(m + s[0].off, 32);
    memcpy(m + s[0].off + 4, t->cv->r, 32);
    put32(m + s[0].off + 36, (uint32_t)t->nvars);
    uint8_t *v = m + s[1].off;
    zp_scalar_t one, x, pub[TK_MAX_PUBLIC + 1], st;
    f->set_u64(&one, 1);
    pub[0] = one;
    for (unsigned j = 1; j <= t->K; j++) rng_fr(t->cv, g, &pub[j]);
    rng_fr(t->cv, g, &x);
    for (unsigned j = 0; j <= t->K; j++) {
        f->from_mont(&st, &pub[j]);
        memcpy(v + (size_t)j * 32, &st, 32);
    }
    for (size_t i = 0;; i++) {   /* s_0 = x; s_(i+1) = (s_i + 2 q_i)(s_i + 7) */
        f->from_mont(&st, &x);
        memcpy(v + (t->K + 1 + i) * 32, &st, 32);
        if (i == t->M) break;
        zp_scalar_t a, b;
        f->mul(&a, &t->two, &pub[t->K ? 1 + i % t->K : 0]);
        f->add(&a, &a, &x);
        f->add(&b, &x, &t->seven);
        f->mul(&x, &a, &b);
    }
    return file_commit(&file);
}

typedef struct { const tk_t *t; uint8_t *p; } r1cs_job_t;

static void r1cs_run(void *arg, unsigned tid, unsigned nt)
{
    r1cs_job_t *j = arg;
    size_t lo, hi;
    zp_split(j->t->M, tid, nt, &lo, &hi);
    for (size_t c = lo; c < hi; c++) {
        uint32_t wire[4], val[4];
        constraint_terms(j->t, c, wire, val);
        uint8_t *p = j->p + c * 192;   /* A: 2 terms, B: 2 terms, C: 1 term, 36 bytes a term */
        for (int lc = 0; lc < 2; lc++) {
            put32(p, 2);
            p += 4;
            for (int e = 2 * lc; e < 2 * lc + 2; e++, p += 36) {
                memset(p, 0, 36);
                put32(p, wire[e]);
                put32(p + 4, val[e]);
            }
        }
        put32(p, 1);
        memset(p + 4, 0, 36);
        put32(p + 4, (uint32_t)(j->t->K + 2 + c));   /* C = s_(c+1) */
        put32(p + 8, 1);
    }
}

static int write_r1cs(const tk_t *t)
{
    tk_sec_t s[3] = {{1, 64, 0}, {2, t->M * 192, 0}, {3, t->nvars * 8, 0}};
    size_t len = bin_layout(s, 3);
    tk_file_t file;
    int rc = file_open(&file, t->cfg->out_dir, "circuit.r1cs", len);
    if (rc) return rc;
    uint8_t *m = file.map, *h = m + s[0].off;
    bin_headers(m, "r1cs", 1, s, 3);
    put32(h, 32);
    memcpy(h + 4, t->cv->r, 32);
    put32(h + 36, (uint32_t)t->nvars);   /* wires */
    put32(h + 40, 0);                    /* public outputs */
    put32(h + 44, t->K);                 /* public inputs */
    put32(h + 48, 1);                    /* private inputs: x */
    put64(h + 52, t->nvars);             /* labels */
    put32(h + 60, (uint32_t)t->M);       /* constraints */
    r1cs_job_t j = {t, m + s[1].off};
    zp_pool_run(t->pool, r1cs_run, &j);
    for (size_t w = 0; w < t->nvars; w++) put64(m + s[2].off + w * 8, w);
    return file_commit(&file);
}

/* ---------------------------------------------------------------- JSON */
static void json_strs(zp_sbuf_t *b, int ind, char (*v)[128], size_t n)
{
    zp_sbuf_printf(b, "[\n");
    for (size_t i = 0; i < n; i++) zp_sbuf_printf(b, "%*s\"%s\"%s\n", ind + 1, "", v[i], i + 1 < n ? "," : "");
    zp_sbuf_printf(b, "%*s]", ind, "");
}

static void json_g2(zp_sbuf_t *b, const tk_curve_t *cv, const uint8_t *pa)
{
    char xyz[3][2][128];
    cv->g2_dec(xyz, pa);
    zp_sbuf_printf(b, "[\n");
    for (int i = 0; i < 3; i++) {
        zp_sbuf_printf(b, "  ");
        json_strs(b, 2, xyz[i], 2);
        zp_sbuf_printf(b, "%s\n", i < 2 ? "," : "");
    }
    zp_sbuf_printf(b, " ]");
}

/* verification_key.json exactly as `snarkjs zkey export verificationkey` writes it
 * (JSON.stringify(vk, null, 1)); pts: alpha1 beta1 beta2 gamma2 delta1 delta2 IC[K+1] */
static int write_vk(const tk_t *t, const uint8_t *pts)
{
    const tk_curve_t *cv = t->cv;
    size_t g1 = cv->g1->pa_size, g2 = cv->g2->pa_size;
    const uint8_t *alpha1 = pts, *beta2 = pts + 2 * g1, *gamma2 = beta2 + g2, *delta2 = pts + 3 * g1 + 2 * g2;
    const uint8_t *ic = pts + 3 * g1 + 3 * g2;
    zp_sbuf_t b = {0};
    char xyz[3][128], ab[12][128];
    zp_sbuf_printf(&b, "{\n \"protocol\": \"groth16\",\n \"curve\": \"%s\",\n \"nPublic\": %u,\n \"vk_alpha_1\": ",
                   cv->name, t->K);
    cv->g1_dec(xyz, alpha1);
    json_strs(&b, 1, xyz, 3);
    const char *g2name[3] = {"vk_beta_2", "vk_gamma_2", "vk_delta_2"};
    const uint8_t *g2pt[3] = {beta2, gamma2, delta2};
    for (int i = 0; i < 3; i++) {
        zp_sbuf_printf(&b, ",\n \"%s\": ", g2name[i]);
        json_g2(&b, cv, g2pt[i]);
    }
    cv->pairing_dec(ab, alpha1, beta2);
    zp_sbuf_printf(&b, ",\n \"vk_alphabeta_12\": [\n");
    for (int i = 0; i < 2; i++) {
        zp_sbuf_printf(&b, "  [\n");
        for (int k = 0; k < 3; k++) {
            zp_sbuf_printf(&b, "   ");
            json_strs(&b, 3, &ab[6 * i + 2 * k], 2);
            zp_sbuf_printf(&b, "%s\n", k < 2 ? "," : "");
        }
        zp_sbuf_printf(&b, "  ]%s\n", i < 1 ? "," : "");
    }
    zp_sbuf_printf(&b, " ],\n \"IC\": [\n");
    for (size_t s = 0; s <= t->K; s++) {
        cv->g1_dec(xyz, ic + s * g1);
        zp_sbuf_printf(&b, "  ");
        json_strs(&b, 2, xyz, 3);
        zp_sbuf_printf(&b, "%s\n", s < t->K ? "," : "");
    }
    zp_sbuf_printf(&b, " ]\n}");
    size_t len = b.n;
    char *text = zp_sbuf_take(&b);
    if (!text) return zp_err_set(-ENOMEM, "testkey: out of memory for verification_key.json");
    int rc = file_write_all(t->cfg->out_dir, "verification_key.json", text, len);
    free(text);
    return rc;
}

static int write_toxic(const tk_t *t, uint64_t seed)
{
    const tk_fr_t *f = &t->cv->fr;
    char v[4][128];
    f->to_dec(v[0], 128, &t->tau);
    f->to_dec(v[1], 128, &t->alpha);
    f->to_dec(v[2], 128, &t->beta);
    f->to_dec(v[3], 128, &t->delta);
    zp_sbuf_t b = {0};
    zp_sbuf_printf(&b,
                   "{\n \"WARNING\": \"INSECURE TEST KEY: this toxic waste is public, anyone can forge proofs "
                   "for this key. Never use it for anything but tests and benchmarks.\",\n \"curve\": \"%s\",\n"
                   " \"power\": %u,\n \"nPublic\": %u,\n \"seed\": \"%llu\",\n \"tau\": \"%s\",\n"
                   " \"alpha\": \"%s\",\n \"beta\": \"%s\",\n \"gamma\": \"1\",\n \"delta\": \"%s\"\n}\n",
                   t->cv->name, t->log_n, t->K, (unsigned long long)seed, v[0], v[1], v[2], v[3]);
    size_t len = b.n;
    char *text = zp_sbuf_take(&b);
    if (!text) return zp_err_set(-ENOMEM, "testkey: out of memory for toxic_waste.json");
    int rc = file_write_all(t->cfg->out_dir, "toxic_waste.json", text, len);
    free(text);
    return rc;
}


/* ---------------------------------------------------------------- bellman .params / .vk (issue 29)
 * bellman's generate_parameters for the same r1cs (see testkey.h): the zkey is written first,
 * then L is recomputed at bellman's omega and H as tau^i Z(tau) / delta. */
static void sc_bmap(const tk_t *t, size_t i, zp_scalar_t *k)
{
    size_t j = t->b_off + i;
    t->b_inner(t, t->b_map ? t->b_map[j] : j, k);
}
static void sc_h_any(const void *t, size_t j, zp_scalar_t *k) { sc_h(t, j, k); }
static void sc_a_any(const void *t, size_t j, zp_scalar_t *k) { sc_a(t, j, k); }
static void sc_b_any(const void *t, size_t j, zp_scalar_t *k) { sc_b(t, j, k); }
static void sc_ic_any(const void *t, size_t j, zp_scalar_t *k) { sc_ic(t, j, k); }   /* gamma = 1 */
static void sc_c_any(const void *t, size_t j, zp_scalar_t *k) { sc_c(t, j, k); }

/* count points k_i G into m as uncompressed zcash encodings, after a u32 BE count */
static int bel_section(tk_t *t, const fb_t *fb, bool g2, uint8_t *m, size_t count,
                       void (*fn)(const void *, size_t, zp_scalar_t *), const uint32_t *map)
{
    size_t pa = fb->g->pa_size, ub = g2 ? ZP_BLS_G2_UNCOMPRESSED : ZP_BLS_G1_UNCOMPRESSED, chunk = (size_t)1 << 18;
    m[0] = (uint8_t)(count >> 24), m[1] = (uint8_t)(count >> 16), m[2] = (uint8_t)(count >> 8), m[3] = (uint8_t)count;
    m += 4;
    uint8_t *buf = aligned_alloc(64, chunk * pa);
    if (!buf) return zp_err_set(-ENOMEM, "testkey: out of memory for the bellman points");
    t->b_inner = fn;
    t->b_map = map;
    int rc = 0;
    for (size_t off = 0; off < count && !rc; off += chunk) {
        size_t c = count - off < chunk ? count - off : chunk;
        t->b_off = off;
        if ((rc = fb_mul(t, fb, buf, c, sc_bmap))) break;
        for (size_t i = 0; i < c; i++) {
            if (g2) zp_bls_g2_to_uncompressed(m + (off + i) * ub, (const zp_g2a_bls12_381_t *)(buf + i * pa));
            else zp_bls_g1_to_uncompressed(m + (off + i) * ub, (const zp_g1a_bls12_381_t *)(buf + i * pa));
        }
    }
    free(buf);
    return rc;
}

/* the variables whose scalar is not zero (bellman drops identity points from a, b_g1, b_g2) */
static uint32_t *bel_nonzero(const tk_t *t, void (*fn)(const void *, size_t, zp_scalar_t *), size_t *n)
{
    uint32_t *map = malloc(t->nvars * sizeof *map);
    if (!map) return NULL;
    *n = 0;
    for (size_t w = 0; w < t->nvars; w++) {
        zp_scalar_t k;
        fn(t, w, &k);
        if (!t->cv->fr.is_zero(&k)) map[(*n)++] = (uint32_t)w;
    }
    return map;
}

static int write_bellman(tk_t *t)
{
    const tk_fr_t *f = &t->cv->fr;
    size_t n = t->n, K = t->K, naux = t->nvars - K - 1, na = 0, nb = 0;
    int rc = 0;
    fb_t fb1 = {0}, fb2 = {0};
    uint32_t *amap = NULL, *bmap = NULL;
    tk_file_t file = {.fd = -1};
    /* bellman's omega: 7^((r-1) >> 32) squared down to the 2^log_n domain; r odd, so (r-1) >> 32 = r >> 32 */
    zp_fr_bls12_381_t g7, w;
    uint64_t e[4];
    const uint64_t *r = zp_fr_bls12_381_modulus.l;
    for (int i = 0; i < 4; i++) e[i] = (r[i] >> 32) | (i < 3 ? r[i + 1] << 32 : 0);
    zp_fr_bls12_381_set_u64(&g7, 7);
    zp_fr_bls12_381_pow(&w, &g7, e, 4);
    for (unsigned i = t->log_n; i < 32; i++) zp_fr_bls12_381_sqr(&w, &w);
    zp_scalar_t one, tn, z, inv;
    f->set_u64(&one, 1);
    lag_t j = {.t = t, .out = t->L, .n = n, .x0 = one};
    memcpy(&j.step, &w, sizeof j.step);
    atomic_init(&j.bad, 0);
    fr_pow(f, &tn, &t->tau, n);
    f->sub(&z, &tn, &one);
    f->set_u64(&inv, n);
    f->inv(&inv, &inv);
    f->mul(&j.A, &z, &inv);
    memset(&j.B, 0, sizeof j.B);
    zp_pool_run(t->pool, lag_run, &j);
    if (atomic_load(&j.bad)) return zp_err_set(ZP_EFORMAT, "testkey: tau is in bellman's 2^%u domain: choose another tau", t->log_n);
    memset(t->Sp, 0, (K + 1) * sizeof *t->Sp);
    for (size_t c = 0; c < t->M; c++) {
        f->add(&t->Sp[0], &t->Sp[0], &t->L[c]);
        if (K) f->add(&t->Sp[1 + c % K], &t->Sp[1 + c % K], &t->L[c]);
    }
    /* h_i = tau^i (tau^n - 1) / delta, i < n - 1 */
    zp_scalar_t p;
    f->mul(&p, &z, &t->delta_inv);
    for (size_t i = 0; i + 1 < n; i++) {
        t->Hs[i] = p;
        f->mul(&p, &p, &t->tau);
    }
    if (!(amap = bel_nonzero(t, sc_a_any, &na)) || !(bmap = bel_nonzero(t, sc_b_any, &nb))) {
        rc = zp_err_set(-ENOMEM, "testkey: out of memory for the bellman density maps");
        goto out;
    }
    if ((rc = fb_build(&fb1, t->cv->g1, n, t->pool)) || (rc = fb_build(&fb2, t->cv->g2, nb, t->pool))) goto out;
    const size_t G1 = ZP_BLS_G1_UNCOMPRESSED, G2 = ZP_BLS_G2_UNCOMPRESSED;
    size_t vk_len = ZP_BVK_HEAD_BYTES + 4 + (K + 1) * G1;
    size_t len = vk_len + 4 + (n - 1) * G1 + 4 + naux * G1 + 4 + na * G1 + 4 + nb * G1 + 4 + nb * G2;
    if ((rc = file_open(&file, t->cfg->out_dir, "circuit.params", len))) goto out;
    uint8_t *m = file.map;
    /* verifying key: alpha_g1, beta_g1, beta_g2, gamma_g2 (= G2, gamma = 1), delta_g1, delta_g2 */
    zp_scalar_t ks[3];
    f->from_mont(&ks[0], &t->alpha);
    f->from_mont(&ks[1], &t->beta);
    f->from_mont(&ks[2], &t->delta);
    zp_g1a_bls12_381_t a1, b1, d1;
    zp_g2a_bls12_381_t b2, g2, d2;
    t->cv->g1->mul_gen(&a1, &ks[0]);
    t->cv->g1->mul_gen(&b1, &ks[1]);
    t->cv->g1->mul_gen(&d1, &ks[2]);
    t->cv->g2->mul_gen(&b2, &ks[1]);
    t->cv->g2->mul_gen(&d2, &ks[2]);
    zp_g2_bls12_381_generator(&g2);
    zp_bls_g1_to_uncompressed(m, &a1);
    zp_bls_g1_to_uncompressed(m + 96, &b1);
    zp_bls_g2_to_uncompressed(m + 192, &b2);
    zp_bls_g2_to_uncompressed(m + 384, &g2);
    zp_bls_g1_to_uncompressed(m + 576, &d1);
    zp_bls_g2_to_uncompressed(m + 672, &d2);
    m += ZP_BVK_HEAD_BYTES;
    if ((rc = bel_section(t, &fb1, false, m, K + 1, sc_ic_any, NULL))) goto out;
    m += 4 + (K + 1) * G1;
    if ((rc = bel_section(t, &fb1, false, m, n - 1, sc_h_any, NULL))) goto out;
    m += 4 + (n - 1) * G1;
    t->b_off = 0;
    if ((rc = bel_section(t, &fb1, false, m, naux, sc_c_any, NULL))) goto out;
    m += 4 + naux * G1;
    if ((rc = bel_section(t, &fb1, false, m, na, sc_a_any, amap))) goto out;
    m += 4 + na * G1;
    if ((rc = bel_section(t, &fb1, false, m, nb, sc_b_any, bmap))) goto out;
    m += 4 + nb * G1;
    if ((rc = bel_section(t, &fb2, true, m, nb, sc_b_any, bmap))) goto out;
    if ((rc = file_write_all(t->cfg->out_dir, "circuit.vk", file.map, vk_len))) goto out;
    rc = file_commit(&file);
out:
    if (rc && file.fd >= 0) file_abort(&file);
    free(fb1.tab);
    free(fb2.tab);
    free(amap);
    free(bmap);
    return rc;
}

/* ---------------------------------------------------------------- entry */
static int check_cfg(const zp_testkey_cfg_t *c, const tk_curve_t *cv)
{
    if (!c->insecure_known_tau)
        return zp_err_set(ZP_ESTATE, "testkey: refusing to write a key whose toxic waste (tau, alpha, beta, delta) "
                                     "is known: such a key is INSECURE (anyone can forge proofs). Set "
                                     "insecure_known_tau (--insecure-known-tau) to confirm this is for tests only");
    if (!cv) return zp_err_set(ZP_ECURVE, "testkey: curve must be bn128 or bls12381");
    if (c->power < 2 || c->power > TK_MAX_POWER || c->power + 1 > cv->two_adicity)
        return zp_err_set(ZP_ETOOBIG, "testkey: power %u out of range 2..%u", c->power, TK_MAX_POWER);
    if (c->n_public > TK_MAX_PUBLIC || (uint64_t)c->n_public + 2 > ((uint64_t)1 << c->power))
        return zp_err_set(ZP_ETOOBIG, "testkey: %u public inputs: at most %u and fewer than 2^%u - 1", c->n_public,
                          TK_MAX_PUBLIC, c->power);
    if (c->n_witness < 1 || c->n_witness > TK_MAX_WITNESS)
        return zp_err_set(ZP_ETOOBIG, "testkey: %u witnesses: 1..%u", c->n_witness, TK_MAX_WITNESS);
    if (!c->out_dir || !*c->out_dir) return zp_err_set(ZP_EFORMAT, "testkey: no output directory");
    const zp_scalar_t *v[4] = {&c->tau, &c->alpha, &c->beta, &c->delta};
    const bool has[4] = {c->has_tau, c->has_alpha, c->has_beta, c->has_delta};
    const char *nm[4] = {"tau", "alpha", "beta", "delta"};
    for (int i = 0; i < 4; i++)
        if (has[i] && (!cv->fr.is_canonical(v[i]) || cv->fr.is_zero(v[i])))
            return zp_err_set(ZP_EFORMAT, "testkey: %s must be in 1..r-1", nm[i]);
    return 0;
}

int zp_testkey_write(const zp_testkey_cfg_t *cfg, zp_pool_t *pool, zp_testkey_times_t *tm_out)
{
    uint64_t t_start = zp_now_ns();
    const tk_curve_t *cv = cfg->curve == ZP_CURVE_BN254 ? &tk_curve_bn254
                         : cfg->curve == ZP_CURVE_BLS12_381 ? &tk_curve_bls12_381 : NULL;
    int rc = check_cfg(cfg, cv);
    if (rc) return rc;
    const tk_fr_t *f = &cv->fr;
    zp_testkey_times_t tm;
    memset(&tm, 0, sizeof tm);
    tk_t t = {.cv = cv, .cfg = cfg, .pool = pool, .K = cfg->n_public, .log_n = cfg->power};
    t.n = (size_t)1 << cfg->power;
    t.M = t.n - t.K - 1;
    t.nvars = t.n + 1;
    uint64_t seed = cfg->seed;
    if (!cfg->has_seed && (rc = zp_random_bytes(&seed, sizeof seed))) return rc;
    tk_rng_t g = {seed};
    zp_scalar_t *draw[4] = {&t.tau, &t.alpha, &t.beta, &t.delta};
    const zp_scalar_t *given[4] = {&cfg->tau, &cfg->alpha, &cfg->beta, &cfg->delta};
    const bool has[4] = {cfg->has_tau, cfg->has_alpha, cfg->has_beta, cfg->has_delta};
    for (int i = 0; i < 4; i++) {
        rng_fr(cv, &g, draw[i]);   /* drawn even when given: the witnesses do not depend on it */
        if (has[i]) f->to_mont(draw[i], given[i]);
    }
    f->inv(&t.delta_inv, &t.delta);
    f->add(&t.ab, &t.alpha, &t.beta);
    f->set_u64(&t.two, 2);
    f->set_u64(&t.seven, 7);

    size_t g1 = cv->g1->pa_size, g2 = cv->g2->pa_size;
    t.L = aligned_alloc(64, t.n * sizeof *t.L);
    t.Hs = aligned_alloc(64, t.n * sizeof *t.Hs);
    t.Sp = calloc(t.K + 1, sizeof *t.Sp);
    uint8_t *vk_pts = malloc(3 * g1 + 3 * g2 + (t.K + 1) * g1);
    if (!t.L || !t.Hs || !t.Sp || !vk_pts) {
        rc = zp_err_set(-ENOMEM, "testkey: out of memory for 2 x %zu scalars", t.n);
        goto out;
    }
    uint64_t t0 = zp_now_ns();
    if ((rc = lagrange(&t))) goto out;
    tm.lagrange_ns = zp_now_ns() - t0;
    if ((rc = write_zkey(&t, vk_pts, &tm))) goto out;
    if ((rc = write_vk(&t, vk_pts))) goto out;
    t0 = zp_now_ns();
    for (unsigned i = 0; i < cfg->n_witness && !rc; i++) {
        tk_rng_t wg = {seed ^ (0x5eed0000ull + i) * 0x9e3779b97f4a7c15ull};
        char name[64];
        snprintf(name, sizeof name, "witness-%u.wtns", i);
        if (i == 0) {
            tk_rng_t w0 = wg;
            rc = write_witness(&t, &w0, "witness.wtns");
        }
        if (!rc && cfg->n_witness > 1) rc = write_witness(&t, &wg, name);
    }
    tm.witness_ns = zp_now_ns() - t0;
    if (rc) goto out;
    t0 = zp_now_ns();
    if (cfg->write_r1cs && (rc = write_r1cs(&t))) goto out;
    tm.r1cs_ns = zp_now_ns() - t0;
    if (!rc && cfg->write_bellman) {
        if (cfg->curve != ZP_CURVE_BLS12_381) {
            rc = zp_err_set(ZP_ECURVE, "testkey: bellman .params are BLS12-381 only");
            goto out;
        }
        if ((rc = write_bellman(&t))) goto out;
    }
    rc = write_toxic(&t, seed);
out:
    free(t.L);
    free(t.Hs);
    free(t.Sp);
    free(vk_pts);
    tm.total_ns = zp_now_ns() - t_start;
    if (tm_out) *tm_out = tm;
    return rc;
}
