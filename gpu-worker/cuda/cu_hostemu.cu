/* cu_hostemu.cu - host emulation of the CUDA backend: the very templates of cu_field.cuh,
 * cu_curve.cuh, cu_msm.cuh and cu_ntt.cuh, run on the CPU by an executor whose "kernel launch"
 * is a loop over the thread index, whose sort is a stable counting sort and whose scans are
 * serial. Two uses:
 *   - the arithmetic entry points (zp_cu_host_*): tests/test_cuda_host.c compares them with
 *     lib/ff, lib/ec, lib/msm and lib/ntt;
 *   - an emulated device runtime (zp_cu_rt_emu_open, cu_int.h) under the executor of
 *     cu_exec.c, so the executor runs unchanged on the CPU: device memory is malloc'd with a
 *     capacity and a stream-ordered pool that keeps its cache until trimmed (as the CUDA pool
 *     with release threshold = max); the fail_at-th runtime call fails (out-of-memory, or a
 *     sticky device error that poisons every later call, as a CUDA context); and a checker
 *     follows stream order (per-stream op counters, events, host syncs) and counts a
 *     violation when a buffer is freed on one stream while another stream's queued work may
 *     still use it, when a stream uses memory that is not allocated, and (stats.pending)
 *     when a call returns with host-visible copies not synchronized.
 * It holds no kernels, so it runs on any machine nvcc can build for. What it cannot cover is
 * the CUDA runtime itself (launch geometry, CUB, real concurrency): tests/test_cuda.c. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_api.h"
#include "cu_int.h"
#include "cu_msm.cuh"
#include "cu_ntt.cuh"

extern "C" {
#include "lib/util/util.h"
}

namespace {

struct exec_host {
    template <class F> int for_n(size_t n, const F &f)
    {
        for (size_t i = 0; i < n; i++) f(i);
        return 0;
    }
    int alloc(void **p, size_t bytes)
    {
        *p = malloc(bytes ? bytes : 1);
        if (!*p) return zp_err_set(-12, "host emulation: malloc(%zu) failed", bytes);
        /* poison, so that reads of never-written memory show up as wrong results */
        memset(*p, 0xa5, bytes);
        return 0;
    }
    void free(void *p) { ::free(p); }
    int memset0(void *p, size_t bytes)
    {
        memset(p, 0, bytes);
        return 0;
    }
    int to_host(void *dst, const void *src, size_t bytes)
    {
        memcpy(dst, src, bytes);
        return 0;
    }
    /* stable sort of (key, val) by the low key_bits of key; result in either buffer pair */
    int sort_pairs(uint32_t **ko, uint32_t **vo, uint32_t *k, uint32_t *k2, uint32_t *v, uint32_t *v2,
                   size_t m, unsigned key_bits)
    {
        size_t nk = (size_t)1 << key_bits;
        size_t *cnt = (size_t *)calloc(nk + 1, sizeof(size_t));
        if (!cnt) return zp_err_set(-12, "host emulation: calloc failed");
        for (size_t i = 0; i < m; i++) cnt[(k[i] & (nk - 1)) + 1]++;
        for (size_t i = 1; i <= nk; i++) cnt[i] += cnt[i - 1];
        for (size_t i = 0; i < m; i++) {
            size_t at = cnt[k[i] & (nk - 1)]++;
            k2[at] = k[i];
            v2[at] = v[i];
        }
        ::free(cnt);
        *ko = k2;
        *vo = v2;
        return 0;
    }
    int scan_excl(uint32_t *out, const uint32_t *in, size_t n, uint32_t *total)
    {
        uint32_t s = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t x = in[i];
            out[i] = s;
            s += x;
        }
        *total = n ? out[n - 1] : 0;
        return 0;
    }
    int max_u32(uint32_t *out, const uint32_t *in, size_t n)
    {
        uint32_t m = 0;
        for (size_t i = 0; i < n; i++) m = in[i] > m ? in[i] : m;
        *out = m;
        return 0;
    }
};

template <class P> void fp_op(int op, uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    zpcu::fp<P> x, y, z;
    memcpy(x.l, a, sizeof x.l);
    if (b)
        memcpy(y.l, b, sizeof y.l);
    else
        y = zpcu::fp<P>::zero();
    switch (op) {
    case ZP_CU_OP_ADD: zpcu::fp_add(z, x, y); break;
    case ZP_CU_OP_SUB: zpcu::fp_sub(z, x, y); break;
    case ZP_CU_OP_NEG: zpcu::fp_neg(z, x); break;
    case ZP_CU_OP_DBL: zpcu::fp_dbl(z, x); break;
    case ZP_CU_OP_MUL: zpcu::fp_mul(z, x, y); break;
    case ZP_CU_OP_SQR: zpcu::fp_sqr(z, x); break;
    case ZP_CU_OP_TO_MONT: zpcu::fp_to_mont(z, x); break;
    case ZP_CU_OP_FROM_MONT: zpcu::fp_from_mont(z, x); break;
    default: z = zpcu::fp<P>::zero(); break;
    }
    memcpy(r, z.l, sizeof z.l);
}

template <class C> void g1_op(int op, uint64_t *r_jac, const void *p_aff, size_t k, uint32_t k32)
{
    typedef zpcu::g1_affine<C> A;
    typedef zpcu::g1_xyzz<C> X;
    const A *p = (const A *)p_aff;
    X acc, acc2, t;
    acc.set_inf();
    acc2.set_inf();
    switch (op) {
    case ZP_CU_G1_SUM_FULL:
        for (size_t i = 0; i < k / 2; i++) zpcu::xyzz_add_affine<C>(acc, p[i]);
        for (size_t i = k / 2; i < k; i++) zpcu::xyzz_add_affine<C>(acc2, p[i]);
        zpcu::xyzz_add<C>(acc, acc2);
        break;
    case ZP_CU_G1_SUM_SIGNED:
        for (size_t i = 0; i < k; i++) zpcu::xyzz_add_affine_signed<C>(acc, p[i], (i & 1) != 0);
        break;
    default:
        for (size_t i = 0; i < k; i++) zpcu::xyzz_add_affine<C>(acc, p[i]);
        if (op == ZP_CU_G1_DBL) zpcu::xyzz_dbl<C>(acc, acc);
        if (op == ZP_CU_G1_MUL_SMALL) {
            zpcu::xyzz_mul_small<C>(t, acc, k32);
            acc = t;
        }
        break;
    }
    zpcu::g1_jac<C> j;
    zpcu::xyzz_to_jac<C>(j, acc);
    memcpy(r_jac, &j, sizeof j);
}

zpcu::msm_tune to_tune(const zp_cu_msm_tune_t *tune)
{
    zpcu::msm_tune t = {0, 0, 0, 0, 0};
    if (tune) {
        t.c = tune->c;
        t.task = tune->task;
        t.groups = tune->groups;
        t.max_pairs = tune->max_pairs;
        t.par = tune->par;
    }
    return t;
}

template <class C, class E>
int host_msm(E &ex, zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars, size_t n,
             const zp_cu_msm_tune_t *tune)
{
    zpcu::msm_tune t = to_tune(tune);
    static_assert(sizeof(zpcu::g1_jac<C>) <= sizeof out->win[0], "window slot too small");
    zpcu::g1_jac<C> *win = (zpcu::g1_jac<C> *)calloc(ZP_CU_MAX_WIN, sizeof *win);
    if (!win) return zp_err_set(-12, "host emulation: calloc failed");
    out->max_pairs = zpcu::msm_make_plan(n, C::R_BITS, sizeof(zpcu::g1_xyzz<C>), sizeof(zpcu::g1_jac<C>), t).max_pairs;
    int rc = zpcu::msm_run<C>(ex, win, &out->c, &out->batches, (const zpcu::g1_affine<C> *)points, scalars, n, t);
    if (rc == 0) {
        out->nwin = zpcu::msm_windows(C::R_BITS, out->c);
        for (unsigned w = 0; w < out->nwin; w++) memcpy(out->win[w], &win[w], sizeof win[w]);
    }
    free(win);
    return rc;
}

template <class C>
int host_compute_h(unsigned log_n, const zp_cu_pow_table_t *tw, const zp_cu_pow_table_t *cs,
                   uint64_t *a, uint64_t *b, const uint64_t *c, uint64_t *h)
{
    typedef typename C::fr F;
    exec_host ex;
    size_t n = (size_t)1 << log_n;
    F *twt = (F *)malloc((n / 2 + 1) * sizeof(F));
    F *cc = (F *)malloc(n * sizeof(F));
    if (!twt || !cc) {
        free(twt);
        free(cc);
        return zp_err_set(-12, "host emulation: malloc failed");
    }
    memcpy(cc, c, n * sizeof(F));
    zpcu::pow_table_fn<F> pt = {twt, (const F *)tw->lo, (const F *)tw->hi, tw->k1};
    ex.for_n(n / 2, pt);
    F *vec[3] = {(F *)a, (F *)b, cc};
    for (int v = 0; v < 3; v++)
        zpcu::ntt_to_coset<C>(ex, vec[v], log_n, twt, (const F *)cs->lo, (const F *)cs->hi, cs->k1);
    zpcu::join_fn<F> jf = {(F *)a, (const F *)b, cc};
    ex.for_n(n, jf);
    memcpy(h, a, n * sizeof(F));
    free(twt);
    free(cc);
    return 0;
}

} /* namespace */

extern "C" void zp_cu_host_fp(int field, int op, uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    switch (field) {
    case ZP_CU_FR_BN254: fp_op<zpcu::fr_bn254_params>(op, r, a, b); break;
    case ZP_CU_FQ_BN254: fp_op<zpcu::fq_bn254_params>(op, r, a, b); break;
    case ZP_CU_FR_BLS12_381: fp_op<zpcu::fr_bls12_381_params>(op, r, a, b); break;
    case ZP_CU_FQ_BLS12_381: fp_op<zpcu::fq_bls12_381_params>(op, r, a, b); break;
    default: break;
    }
}

extern "C" void zp_cu_host_g1(int curve, int op, uint64_t *r_jac, const void *p_aff, size_t k, uint32_t k32)
{
    if (curve == zpcu::bn254::ID)
        g1_op<zpcu::bn254>(op, r_jac, p_aff, k, k32);
    else if (curve == zpcu::bls12_381::ID)
        g1_op<zpcu::bls12_381>(op, r_jac, p_aff, k, k32);
}

extern "C" int zp_cu_host_msm(int curve, zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars,
                              size_t n, const zp_cu_msm_tune_t *tune)
{
    exec_host ex;
    if (n >= 0x80000000u) return zp_err_set(ZP_ETOOBIG, "msm: %zu points, at most 2^31 - 1", n);
    if (curve == zpcu::bn254::ID) return host_msm<zpcu::bn254>(ex, out, points, scalars, n, tune);
    if (curve == zpcu::bls12_381::ID) return host_msm<zpcu::bls12_381>(ex, out, points, scalars, n, tune);
    return zp_err_set(ZP_ECURVE, "msm: curve %d", curve);
}

extern "C" int zp_cu_host_compute_h(int curve, unsigned log_n, const zp_cu_pow_table_t *tw,
                                    const zp_cu_pow_table_t *cs, uint64_t *a, uint64_t *b,
                                    const uint64_t *c, uint64_t *h)
{
    if (curve == zpcu::bn254::ID) return host_compute_h<zpcu::bn254>(log_n, tw, cs, a, b, c, h);
    if (curve == zpcu::bls12_381::ID) return host_compute_h<zpcu::bls12_381>(log_n, tw, cs, a, b, c, h);
    return zp_err_set(ZP_ECURVE, "compute_h: curve %d", curve);
}

extern "C" int zp_cu_msm_plan(int curve, size_t n, const zp_cu_msm_tune_t *tune, zp_cu_msm_plan_t *plan)
{
    zpcu::msm_tune t = to_tune(tune);
    zpcu::msm_plan p;
    if (curve == zpcu::bn254::ID)
        p = zpcu::msm_make_plan(n, zpcu::bn254::R_BITS, sizeof(zpcu::g1_xyzz<zpcu::bn254>),
                                sizeof(zpcu::g1_jac<zpcu::bn254>), t);
    else if (curve == zpcu::bls12_381::ID)
        p = zpcu::msm_make_plan(n, zpcu::bls12_381::R_BITS, sizeof(zpcu::g1_xyzz<zpcu::bls12_381>),
                                sizeof(zpcu::g1_jac<zpcu::bls12_381>), t);
    else
        return zp_err_set(ZP_ECURVE, "msm plan: curve %d", curve);
    plan->c = p.c;
    plan->nwin = p.nwin;
    plan->wb = p.wb;
    plan->groups = p.groups;
    plan->task = p.s;
    plan->max_pairs = p.max_pairs;
    plan->bytes = p.bytes;
    return 0;
}

/* ================================================================ the emulated device runtime */

namespace {

enum { NS = ZP_CU_NSTREAM };

struct emu_buf {
    char *p;
    size_t bytes;
    int pool;
    unsigned long last_use[NS], last_write[NS];
};

struct emu {
    zp_cu_emu_cfg_t cfg;
    unsigned long calls;
    int poisoned;
    emu_buf *b;
    size_t nb, capb;
    size_t dm_used, pool_used, pool_reserved, peak;
    unsigned long cnt[NS], seen[NS][NS], host_seen[NS], host_op[NS];
    struct {
        int valid, s;
        unsigned long count, seen[NS];
        uint64_t t_ns;
    } ev[ZP_CU_NEV];
    struct { void *p; size_t len; } reg[64];
    unsigned nreg;
    unsigned long violations;
    char first[200];
    /* threads: one lock around every runtime call; the test hold (zp_cu_emu_hold) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int hold_armed, hold_s, held, held_s;
    unsigned long held_at, hold_free, hold_behind, hold_syncs, h2d_calls[NS];
};

unsigned long g_emu_leaked;

void violation(emu *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void violation(emu *e, const char *fmt, ...)
{
    char m[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (!e->violations++) snprintf(e->first, sizeof e->first, "%s", m);
    zp_log(ZP_LOG_ERROR, "host emulation: stream-order violation: %s", m);
}

/* every runtime call passes here: the injected fault, or the poisoned context */
int fault(emu *e, int allocates, const char *what)
{
    e->calls++;
    if (e->poisoned)
        return zp_err_set(ZP_EDEVICE, "%s: emulated device: context dead after an earlier device error (call %lu)", what,
                          e->calls);
    if (e->cfg.fail_at && e->calls == e->cfg.fail_at) {
        if (e->cfg.fail_oom && allocates)
            return zp_err_set(-ENOMEM, "%s: emulated device: injected out-of-memory (call %lu)", what, e->calls);
        e->poisoned = 1;
        return zp_err_set(ZP_EDEVICE, "%s: emulated device: injected device error (call %lu)", what, e->calls);
    }
    return 0;
}

emu_buf *find(emu *e, const void *p)
{
    for (size_t i = 0; i < e->nb; i++)
        if ((const char *)p >= e->b[i].p && (const char *)p < e->b[i].p + (e->b[i].bytes ? e->b[i].bytes : 1))
            return &e->b[i];
    return NULL;
}

/* stream s accesses device memory p as its op number at: it must be ordered after every
 * write to p on another stream (read after write), and a copy into p (writes == 2) after every
 * use of p on another stream (write after read); kernels count as writers (writes == 1) */
void access(emu *e, int s, const void *p, const char *what, int writes, unsigned long at)
{
    if (!p) return;
    emu_buf *b = find(e, p);
    if (!b) {
        violation(e, "%s on stream %d uses %p, which is not allocated device memory", what, s, p);
        return;
    }
    for (int x = 0; x < NS; x++) {
        if (x == s) continue;
        if (b->last_write[x] > e->seen[s][x])
            violation(e, "%s on stream %d uses %p (%zu bytes), written on stream %d by work it does not wait for", what, s,
                      p, b->bytes, x);
        else if (writes == 2 && b->last_use[x] > e->seen[s][x])
            violation(e, "%s on stream %d overwrites %p (%zu bytes) while stream %d may still use it", what, s, p, b->bytes,
                      x);
    }
    b->last_use[s] = at;
    if (writes) b->last_write[s] = at;
}

/* a kernel's operand, used by the launch that follows (its op number is the next one) */
void use(emu *e, int s, const void *p, const char *what) { access(e, s, p, what, 1, e->cnt[s] + 1); }

void op(emu *e, int s)
{
    e->cnt[s]++;
    if (e->held) {   /* another thread's work while a kernel is held: free to run, or behind it? */
        if (s == e->held_s || e->seen[s][e->held_s] >= e->held_at)
            e->hold_behind++;
        else
            e->hold_free++;
    }
}

/* host waits for stream s: later work anywhere is ordered after all of s so far */
void host_sync(emu *e, int s)
{
    if (e->held && (s == e->held_s || e->seen[s][e->held_s] >= e->held_at)) e->hold_syncs++;
    e->host_seen[s] = e->cnt[s];
    for (int t = 0; t < NS; t++) {
        if (e->seen[t][s] < e->cnt[s]) e->seen[t][s] = e->cnt[s];
        for (int y = 0; y < NS; y++)
            if (e->seen[t][y] < e->seen[s][y]) e->seen[t][y] = e->seen[s][y];
    }
    for (int y = 0; y < NS; y++)
        if (e->host_seen[y] < e->seen[s][y]) e->host_seen[y] = e->seen[s][y];
}

void device_sync(emu *e)
{
    for (int s = 0; s < NS; s++) host_sync(e, s);
}

int new_buf(emu *e, int s, void **p, size_t bytes, int pool)
{
    if (e->nb == e->capb) {
        size_t nc = e->capb ? 2 * e->capb : 64;
        emu_buf *nbuf = (emu_buf *)realloc(e->b, nc * sizeof *nbuf);
        if (!nbuf) return zp_err_set(-ENOMEM, "host emulation: realloc");
        e->b = nbuf;
        e->capb = nc;
    }
    char *m = (char *)malloc(bytes ? bytes : 1);
    if (!m) return zp_err_set(-ENOMEM, "host emulation: malloc(%zu) failed", bytes);
    memset(m, 0xa5, bytes);   /* poison: reads of never-written memory give wrong results */
    emu_buf *b = &e->b[e->nb++];
    memset(b, 0, sizeof *b);
    b->p = m;
    b->bytes = bytes;
    b->pool = pool;
    if (s >= 0) b->last_use[s] = e->cnt[s];
    size_t live = e->dm_used + e->pool_used;
    if (live > e->peak) e->peak = live;
    *p = m;
    return 0;
}

void drop_buf(emu *e, emu_buf *b)
{
    if (b->pool)
        e->pool_used -= b->bytes;
    else
        e->dm_used -= b->bytes;
    free(b->p);
    *b = e->b[--e->nb];
}

/* ---- the ops ---- */

void emu_close(void *rp)
{
    emu *e = (emu *)rp;
    if (!e) return;
    if (e->nb) {
        size_t bytes = 0;
        for (size_t i = 0; i < e->nb; i++) bytes += e->b[i].bytes;
        zp_log(ZP_LOG_ERROR, "host emulation: closed with %zu device allocations (%zu bytes) live", e->nb, bytes);
        g_emu_leaked += e->nb;
    }
    while (e->nb) drop_buf(e, &e->b[e->nb - 1]);
    if (e->nreg) {
        zp_log(ZP_LOG_ERROR, "host emulation: closed with %u host ranges registered", e->nreg);
        g_emu_leaked += e->nreg;
    }
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e->b);
    free(e);
}

int emu_mem_info(void *rp, size_t *fr, size_t *tot)
{
    emu *e = (emu *)rp;
    int rc = fault(e, 0, "cudaMemGetInfo");
    if (rc) return rc;
    *tot = e->cfg.mem_total;
    *fr = e->cfg.mem_total - e->dm_used - e->pool_reserved + e->cfg.mem_report_extra;
    return 0;
}

int emu_pool_usage(void *rp, size_t *used, size_t *reserved)
{
    emu *e = (emu *)rp;
    int rc = fault(e, 0, "cudaMemPoolGetAttribute");
    if (rc) return rc;
    *used = e->pool_used;
    *reserved = e->pool_reserved;
    return 0;
}

int emu_pool_trim(void *rp)
{
    emu *e = (emu *)rp;
    int rc = fault(e, 0, "cudaMemPoolTrimTo");
    if (rc) return rc;
    device_sync(e);
    e->pool_reserved = e->pool_used;
    return 0;
}

int emu_dmalloc(void *rp, void **p, size_t bytes)
{
    emu *e = (emu *)rp;
    *p = NULL;
    int rc = fault(e, 1, "cudaMalloc");
    if (rc) return rc;
    if (e->dm_used + e->pool_reserved + bytes > e->cfg.mem_total)
        return zp_err_set(-ENOMEM, "cudaMalloc(%zu): emulated device: out of memory (%zu in use, %zu held by the pool, %zu total)",
                          bytes, e->dm_used, e->pool_reserved, e->cfg.mem_total);
    if ((rc = new_buf(e, -1, p, bytes, 0))) return rc;
    e->dm_used += bytes;
    return 0;
}

int emu_dfree(void *rp, void *p)
{
    emu *e = (emu *)rp;
    if (!p) return 0;
    device_sync(e);   /* cudaFree synchronizes the device */
    int rc = fault(e, 0, "cudaFree");
    emu_buf *b = find(e, p);
    if (!b || b->p != p || b->pool) {
        violation(e, "cudaFree(%p): not a cudaMalloc allocation", p);
        return rc;
    }
    drop_buf(e, b);
    return rc;
}

int emu_alloc(void *rp, int s, void **p, size_t bytes)
{
    emu *e = (emu *)rp;
    *p = NULL;
    int rc = fault(e, 1, "cudaMallocAsync");
    if (rc) return rc;
    if (e->pool_used + bytes > e->pool_reserved) {
        size_t grow = e->pool_used + bytes - e->pool_reserved;
        if (e->dm_used + e->pool_reserved + grow > e->cfg.mem_total)
            return zp_err_set(-ENOMEM, "cudaMallocAsync(%zu): emulated device: out of memory (pool %zu used / %zu reserved, "
                              "%zu outside it, %zu total)", bytes, e->pool_used, e->pool_reserved, e->dm_used,
                              e->cfg.mem_total);
        e->pool_reserved += grow;
    }
    if ((rc = new_buf(e, s, p, bytes, 1))) return rc;
    e->pool_used += bytes;
    op(e, s);
    return 0;
}

int emu_free(void *rp, int s, void *p)
{
    emu *e = (emu *)rp;
    if (!p) return 0;
    int rc = fault(e, 0, "cudaFreeAsync");
    emu_buf *b = find(e, p);
    if (!b || b->p != p || !b->pool) {
        violation(e, "cudaFreeAsync(%p) on stream %d: not a pool allocation", p, s);
        return rc;
    }
    for (int x = 0; x < NS; x++)
        if (x != s && b->last_use[x] > e->seen[s][x])   /* dead context or not: sync, then free */
            violation(e, "buffer %p (%zu bytes) freed on stream %d while stream %d may still use it", p, b->bytes, s, x);
    drop_buf(e, b);
    return rc;
}

/* one async copy between host memory h and device memory d (to_dev: H2D) */
int emu_copy(emu *e, int s, char *d, char *h, size_t bytes, int to_dev)
{
    const char *what = to_dev ? "H2D" : "D2H";
    int rc = fault(e, 0, to_dev ? "cudaMemcpyAsync(H2D)" : "cudaMemcpyAsync(D2H)");
    if (rc) return rc;
    emu_buf *b = find(e, d);
    if (!b || d + bytes > b->p + b->bytes) {
        violation(e, "%s of %zu bytes on stream %d at %p: outside any allocation", what, bytes, s, (void *)d);
        return zp_err_set(ZP_EDEVICE, "emulated device: %s out of bounds", what);
    }
    op(e, s);
    access(e, s, d, what, to_dev ? 2 : 0, e->cnt[s]);
    if (to_dev) e->h2d_calls[s]++;
    if (to_dev)
        memcpy(d, h, bytes);
    else
        memcpy(h, d, bytes);
    e->host_op[s] = e->cnt[s];
    return 0;
}

int emu_h2d(void *rp, int s, void *d, const void *h, size_t bytes)
{
    return emu_copy((emu *)rp, s, (char *)d, (char *)h, bytes, 1);
}

int emu_d2h(void *rp, int s, void *h, const void *d, size_t bytes)
{
    return emu_copy((emu *)rp, s, (char *)d, (char *)h, bytes, 0);
}

int emu_record(void *rp, int s, int ev)
{
    emu *e = (emu *)rp;
    int rc = fault(e, 0, "cudaEventRecord");
    if (rc) return rc;
    e->ev[ev].valid = 1;
    e->ev[ev].s = s;
    e->ev[ev].count = e->cnt[s];
    for (int y = 0; y < NS; y++) e->ev[ev].seen[y] = e->seen[s][y];
    e->ev[ev].t_ns = zp_now_ns();
    return 0;
}

int emu_wait(void *rp, int s, int ev)
{
    emu *e = (emu *)rp;
    int rc = fault(e, 0, "cudaStreamWaitEvent");
    if (rc || !e->ev[ev].valid) return rc;   /* a never-recorded event: no-op, as CUDA */
    int x = e->ev[ev].s;
    if (e->seen[s][x] < e->ev[ev].count) e->seen[s][x] = e->ev[ev].count;
    for (int y = 0; y < NS; y++)
        if (e->seen[s][y] < e->ev[ev].seen[y]) e->seen[s][y] = e->ev[ev].seen[y];
    return 0;
}

int emu_sync(void *rp, int s)
{
    emu *e = (emu *)rp;
    host_sync(e, s);   /* also when failing: a dead context runs nothing more */
    return fault(e, 0, "cudaStreamSynchronize");
}

int emu_elapsed(void *rp, int e0, int e1, float *ms)
{
    emu *e = (emu *)rp;
    *ms = 0;
    int rc = fault(e, 0, "cudaEventElapsedTime");
    if (rc) return rc;
    if (e->ev[e0].valid && e->ev[e1].valid && e->ev[e1].t_ns >= e->ev[e0].t_ns)
        *ms = (float)((e->ev[e1].t_ns - e->ev[e0].t_ns) / 1e6);
    return 0;
}

int emu_host_register(void *rp, void *p, size_t len)
{
    emu *e = (emu *)rp;
    int rc = fault(e, 0, "cudaHostRegister");
    if (rc) return rc;
    if (e->nreg == 64) return zp_err_set(ZP_EDEVICE, "cudaHostRegister: emulated device: too many ranges");
    e->reg[e->nreg].p = p;
    e->reg[e->nreg].len = len;
    e->nreg++;
    return 0;
}

int emu_host_unregister(void *rp, void *p)
{
    emu *e = (emu *)rp;
    int rc = fault(e, 0, "cudaHostUnregister");
    for (unsigned i = 0; i < e->nreg; i++)
        if (e->reg[i].p == p) {
            e->reg[i] = e->reg[--e->nreg];
            return rc;
        }
    return rc ? rc : zp_err_set(ZP_EDEVICE, "cudaHostUnregister(%p): emulated device: not registered", p);
}

size_t emu_scratch(void *rp, size_t pairs)
{
    (void)rp;
    (void)pairs;
    return 0;   /* the emulated sort's scratch is host memory */
}

/* the executor of cu_msm.cuh / cu_ntt.cuh over the emulated device: every launch, allocation
 * and host sync is a runtime call (so faults can hit each), memory is the emulated pool */
struct exec_emu : exec_host {
    emu *e;
    int s;
    template <class F> int for_n(size_t n, const F &f)
    {
        int rc = fault(e, 0, "kernel launch");
        if (rc) return rc;
        op(e, s);
        return exec_host::for_n(n, f);
    }
    int alloc(void **p, size_t bytes) { return emu_alloc(e, s, p, bytes); }
    void free(void *p) { (void)emu_free(e, s, p); }
    int memset0(void *p, size_t bytes)
    {
        int rc = fault(e, 0, "cudaMemsetAsync");
        if (rc) return rc;
        op(e, s);
        use(e, s, p, "memset");
        return exec_host::memset0(p, bytes);
    }
    int to_host(void *dst, const void *src, size_t bytes)
    {
        int rc = emu_d2h(e, s, dst, src, bytes);
        return rc ? rc : emu_sync(e, s);
    }
    int sort_pairs(uint32_t **ko, uint32_t **vo, uint32_t *k, uint32_t *k2, uint32_t *v, uint32_t *v2, size_t m,
                   unsigned key_bits)
    {
        int rc = fault(e, 0, "cub::DeviceRadixSort");
        if (rc) return rc;
        op(e, s);
        use(e, s, k, "sort");
        use(e, s, k2, "sort");
        return exec_host::sort_pairs(ko, vo, k, k2, v, v2, m, key_bits);
    }
    int scan_excl(uint32_t *out, const uint32_t *in, size_t n, uint32_t *total)
    {
        int rc = fault(e, 0, "cub::DeviceScan");
        if (rc) return rc;
        op(e, s);
        use(e, s, out, "scan");
        if ((rc = exec_host::scan_excl(out, in, n, total))) return rc;
        return emu_sync(e, s);   /* the device scan reads its total back */
    }
    int max_u32(uint32_t *out, const uint32_t *in, size_t n)
    {
        int rc = fault(e, 0, "cub::DeviceReduce");
        if (rc) return rc;
        op(e, s);
        use(e, s, in, "max");
        if ((rc = exec_host::max_u32(out, in, n))) return rc;
        return emu_sync(e, s);
    }
};

int emu_msm(void *rp, int s, int curve, zp_cu_msm_out_t *out, const void *pts, const uint64_t *sc, size_t n,
            const zp_cu_msm_tune_t *tune)
{
    emu *e = (emu *)rp;
    exec_emu ex;
    ex.e = e;
    ex.s = s;
    if (n >= 0x80000000u) return zp_err_set(ZP_ETOOBIG, "msm: %zu points, at most 2^31 - 1", n);
    if (n) {
        use(e, s, pts, "msm points");
        use(e, s, sc, "msm scalars");
    }
    if (curve == zpcu::bn254::ID) return host_msm<zpcu::bn254>(ex, out, pts, sc, n, tune);
    if (curve == zpcu::bls12_381::ID) return host_msm<zpcu::bls12_381>(ex, out, pts, sc, n, tune);
    return zp_err_set(ZP_ECURVE, "msm: curve %d", curve);
}

template <class C>
int emu_pow_table_c(exec_emu &ex, uint64_t *out, size_t count, const uint64_t *lo, const uint64_t *hi, unsigned k1)
{
    typedef typename C::fr F;
    zpcu::pow_table_fn<F> f = {(F *)out, (const F *)lo, (const F *)hi, k1};
    return ex.for_n(count, f);
}

int emu_pow_table(void *rp, int s, int curve, uint64_t *out, size_t count, const uint64_t *lo, const uint64_t *hi,
                  unsigned k1)
{
    exec_emu ex;
    ex.e = (emu *)rp;
    ex.s = s;
    use(ex.e, s, out, "pow_table");
    use(ex.e, s, lo, "pow_table");
    use(ex.e, s, hi, "pow_table");
    if (curve == zpcu::bn254::ID) return emu_pow_table_c<zpcu::bn254>(ex, out, count, lo, hi, k1);
    if (curve == zpcu::bls12_381::ID) return emu_pow_table_c<zpcu::bls12_381>(ex, out, count, lo, hi, k1);
    return zp_err_set(ZP_ECURVE, "pow_table: curve %d", curve);
}

int emu_coset(void *rp, int s, int curve, uint64_t *x, unsigned log_n, const uint64_t *tw, const uint64_t *lo,
              const uint64_t *hi, unsigned k1, int inverse)
{
    exec_emu ex;
    ex.e = (emu *)rp;
    ex.s = s;
    use(ex.e, s, x, "coset");
    use(ex.e, s, tw, "coset");
    use(ex.e, s, lo, "coset");
    use(ex.e, s, hi, "coset");
    if (curve == zpcu::bn254::ID) {
        typedef zpcu::bn254::fr F;
        if (inverse) return zpcu::ntt_inv_scaled<zpcu::bn254>(ex, (F *)x, log_n, (const F *)tw, (const F *)lo, (const F *)hi, k1);
        return zpcu::ntt_to_coset<zpcu::bn254>(ex, (F *)x, log_n, (const F *)tw, (const F *)lo, (const F *)hi, k1);
    }
    if (curve == zpcu::bls12_381::ID) {
        typedef zpcu::bls12_381::fr F;
        if (inverse)
            return zpcu::ntt_inv_scaled<zpcu::bls12_381>(ex, (F *)x, log_n, (const F *)tw, (const F *)lo, (const F *)hi, k1);
        return zpcu::ntt_to_coset<zpcu::bls12_381>(ex, (F *)x, log_n, (const F *)tw, (const F *)lo, (const F *)hi, k1);
    }
    return zp_err_set(ZP_ECURVE, "coset: curve %d", curve);
}

template <class C> int emu_join_c(exec_emu &ex, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n)
{
    typedef typename C::fr F;
    zpcu::join_fn<F> f = {(F *)a, (const F *)b, (const F *)c};
    return ex.for_n(n, f);
}

int emu_join(void *rp, int s, int curve, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n)
{
    exec_emu ex;
    ex.e = (emu *)rp;
    ex.s = s;
    use(ex.e, s, a, "join");
    use(ex.e, s, b, "join");
    use(ex.e, s, c, "join");
    if (curve == zpcu::bn254::ID) return emu_join_c<zpcu::bn254>(ex, a, b, c, n);
    if (curve == zpcu::bls12_381::ID) return emu_join_c<zpcu::bls12_381>(ex, a, b, c, n);
    return zp_err_set(ZP_ECURVE, "join: curve %d", curve);
}

int emu_gather(void *rp, int s, int curve, uint64_t *out, const uint64_t *w, const uint64_t *dens, const uint32_t *pfx,
               size_t words)
{
    exec_emu ex;
    ex.e = (emu *)rp;
    ex.s = s;
    use(ex.e, s, out, "gather");
    use(ex.e, s, w, "gather");
    use(ex.e, s, dens, "gather");
    use(ex.e, s, pfx, "gather");
    if (curve != zpcu::bn254::ID && curve != zpcu::bls12_381::ID) return zp_err_set(ZP_ECURVE, "gather: curve %d", curve);
    zpcu::gather_fn f = {out, w, dens, pfx};
    return ex.for_n(words, f);
}

/* ---- the table: one lock around every call (the executor calls from several threads) ---- */

struct emu_lock {
    emu *e;
    explicit emu_lock(void *rp) : e((emu *)rp) { pthread_mutex_lock(&e->mu); }
    ~emu_lock() { pthread_mutex_unlock(&e->mu); }
};

/* a kernel about to run on stream s: the armed test hold blocks it here (lock released) */
void hold_point(emu *e, int s)
{
    if (!e->hold_armed || e->hold_s != s) return;
    e->hold_armed = 0;
    op(e, s);   /* the held kernel is queued: work ordered after this is behind it */
    e->held_at = e->cnt[s];
    e->held_s = s;
    e->held = 1;
    pthread_cond_broadcast(&e->cv);
    while (e->held) pthread_cond_wait(&e->cv, &e->mu);
}

#define EMU_LOCKED(ret, name, params, args) \
    ret L_##name params                     \
    {                                       \
        emu_lock l_(rp);                    \
        return name args;                   \
    }
EMU_LOCKED(int, emu_mem_info, (void *rp, size_t *fr, size_t *tot), (rp, fr, tot))
EMU_LOCKED(int, emu_pool_usage, (void *rp, size_t *used, size_t *reserved), (rp, used, reserved))
EMU_LOCKED(int, emu_pool_trim, (void *rp), (rp))
EMU_LOCKED(int, emu_dmalloc, (void *rp, void **p, size_t bytes), (rp, p, bytes))
EMU_LOCKED(int, emu_dfree, (void *rp, void *p), (rp, p))
EMU_LOCKED(int, emu_alloc, (void *rp, int s, void **p, size_t bytes), (rp, s, p, bytes))
EMU_LOCKED(int, emu_free, (void *rp, int s, void *p), (rp, s, p))
EMU_LOCKED(int, emu_h2d, (void *rp, int s, void *d, const void *h, size_t bytes), (rp, s, d, h, bytes))
EMU_LOCKED(int, emu_d2h, (void *rp, int s, void *h, const void *d, size_t bytes), (rp, s, h, d, bytes))
EMU_LOCKED(int, emu_record, (void *rp, int s, int ev), (rp, s, ev))
EMU_LOCKED(int, emu_wait, (void *rp, int s, int ev), (rp, s, ev))
EMU_LOCKED(int, emu_sync, (void *rp, int s), (rp, s))
EMU_LOCKED(int, emu_elapsed, (void *rp, int e0, int e1, float *ms), (rp, e0, e1, ms))
EMU_LOCKED(int, emu_host_register, (void *rp, void *p, size_t len), (rp, p, len))
EMU_LOCKED(int, emu_host_unregister, (void *rp, void *p), (rp, p))

int L_emu_msm(void *rp, int s, int curve, zp_cu_msm_out_t *out, const void *pts, const uint64_t *sc, size_t n,
              const zp_cu_msm_tune_t *tune)
{
    emu_lock l_(rp);
    hold_point(l_.e, s);
    return emu_msm(rp, s, curve, out, pts, sc, n, tune);
}

int L_emu_pow_table(void *rp, int s, int curve, uint64_t *out, size_t count, const uint64_t *lo, const uint64_t *hi,
                    unsigned k1)
{
    emu_lock l_(rp);
    hold_point(l_.e, s);
    return emu_pow_table(rp, s, curve, out, count, lo, hi, k1);
}

int L_emu_coset(void *rp, int s, int curve, uint64_t *x, unsigned log_n, const uint64_t *tw, const uint64_t *lo,
                const uint64_t *hi, unsigned k1, int inverse)
{
    emu_lock l_(rp);
    hold_point(l_.e, s);
    return emu_coset(rp, s, curve, x, log_n, tw, lo, hi, k1, inverse);
}

int L_emu_join(void *rp, int s, int curve, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n)
{
    emu_lock l_(rp);
    hold_point(l_.e, s);
    return emu_join(rp, s, curve, a, b, c, n);
}

int L_emu_gather(void *rp, int s, int curve, uint64_t *out, const uint64_t *w, const uint64_t *dens, const uint32_t *pfx,
                 size_t words)
{
    emu_lock l_(rp);
    hold_point(l_.e, s);
    return emu_gather(rp, s, curve, out, w, dens, pfx, words);
}

int emu_bind(void *rp)
{
    (void)rp;
    return 0;   /* one emulated device: nothing to make current (not a counted call) */
}

const zp_cu_rt_ops_t emu_ops = {
    "host-emulation", emu_close, L_emu_mem_info, L_emu_pool_usage, L_emu_pool_trim, L_emu_dmalloc, L_emu_dfree,
    L_emu_alloc, L_emu_free, L_emu_h2d, L_emu_d2h, L_emu_record, L_emu_wait, L_emu_sync, L_emu_elapsed,
    L_emu_host_register, L_emu_host_unregister, emu_scratch, L_emu_msm, L_emu_pow_table, L_emu_coset, L_emu_join,
    emu_bind, L_emu_gather,
};

} /* namespace */

extern "C" int zp_cu_rt_emu_open(const zp_cu_rt_ops_t **ops, void **rtp, zp_cu_devinfo_t *info,
                                 const zp_cu_emu_cfg_t *cfg, char *desc, size_t desc_cap)
{
    emu *e = (emu *)calloc(1, sizeof *e);
    if (!e) return -ENOMEM;
    if (cfg) e->cfg = *cfg;
    if (!e->cfg.mem_total) e->cfg.mem_total = (size_t)1 << 30;
    if (!e->cfg.sms) e->cfg.sms = 4;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    info->total_mem = e->cfg.mem_total;
    info->sms = e->cfg.sms;
    info->threads_per_sm = 256;
    if (desc && desc_cap)
        snprintf(desc, desc_cap, "host-emulated CUDA device: %.3f GiB, %u SMs (no GPU: the executor on the CPU)",
                 (double)e->cfg.mem_total / (1 << 30), e->cfg.sms);
    *ops = &emu_ops;
    *rtp = e;
    return 0;
}

extern "C" int zp_cu_rt_emu_stats(void *rp, zp_cu_emu_stats_t *st)
{
    emu *e = (emu *)rp;
    emu_lock l_(rp);
    memset(st, 0, sizeof *st);
    st->held = e->held;
    st->hold_ops_free = e->hold_free;
    st->hold_ops_behind = e->hold_behind;
    st->hold_syncs = e->hold_syncs;
    for (int s = 0; s < NS && s < ZP_CU_NSTREAMS_API; s++) st->h2d_calls[s] = e->h2d_calls[s];
    st->calls = e->calls;
    st->violations = e->violations;
    snprintf(st->first_violation, sizeof st->first_violation, "%s", e->first);
    for (size_t i = 0; i < e->nb; i++) st->live_bytes += e->b[i].bytes;
    st->live_allocs = e->nb;
    st->peak_bytes = e->peak;
    st->pool_reserved = e->pool_reserved;
    for (int s = 0; s < NS; s++)
        if (e->host_op[s] > e->host_seen[s]) st->pending++;
    st->poisoned = e->poisoned;
    return 0;
}

extern "C" unsigned long zp_cu_emu_leaks(void) { return g_emu_leaked; }

extern "C" int zp_cu_rt_emu_hold(void *rp, int s)
{
    emu *e = (emu *)rp;
    if (s < 0 || s >= NS) return zp_err_set(-EINVAL, "emulated hold: stream %d", s);
    emu_lock l_(rp);
    e->hold_armed = 1;
    e->hold_s = s;
    e->hold_free = e->hold_behind = e->hold_syncs = 0;
    return 0;
}

extern "C" int zp_cu_rt_emu_wait_held(void *rp)
{
    emu *e = (emu *)rp;
    emu_lock l_(rp);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 300;   /* a safety net for a broken test, not a timing */
    while (!e->held)
        if (pthread_cond_timedwait(&e->cv, &e->mu, &dl) == ETIMEDOUT)
            return zp_err_set(ZP_ETIMEDOUT, "emulated hold: no kernel reached the hold in 300 s");
    return 0;
}

extern "C" int zp_cu_rt_emu_release(void *rp)
{
    emu *e = (emu *)rp;
    emu_lock l_(rp);
    e->held = 0;
    e->hold_armed = 0;
    pthread_cond_broadcast(&e->cv);
    return 0;
}
