/* cu_exec.c - the executor of the CUDA backend: everything between the zp_cu_* API of cu_api.h
 * and a device runtime (cu_int.h zp_cu_rt_ops_t: CUDA in cu_device.cu, or the host emulation
 * of cu_hostemu.cu, which runs this very code on the CPU for the tests).
 *
 * What it decides:
 *   - residency of a key's bases: after trimming the memory pool (its cache is free memory to
 *     us, not used), bases + the peak working memory of a proof (NTT vectors, witness, coset
 *     tables, twiddles, the MSM buffers at the default budget and their CUB scratch) must fit
 *     in free memory; otherwise the bases are copied per MSM into one buffer (non-resident);
 *   - the MSM sort budget: from free memory (device free + the pool's unused reserve) at the
 *     time of the MSM, retried with half the budget after an out-of-memory, down to one window
 *     per batch;
 *   - the order of a proof: H2D of a, b, c, w on the copy stream, an event per vector, the
 *     NTTs on the compute stream as each arrives, d_b / d_c freed once h is formed, h kept on
 *     the device for the H MSM (copied to the host only for compute_h).
 * Invariants: the pool trimmed before every non-pool allocation (cudaMalloc of bases and
 * twiddles); on an error both streams are synchronized before anything is freed or the call
 * returns (nothing queued still reads a buffer or host memory); every device error leaves as
 * ZP_EDEVICE (device out-of-memory included, with "out of device memory" in the message).
 * Tests: tests/test_cuda_exec.c (host emulation: fault injection at every runtime call, ordering
 * checker, budgets, batching, non-resident bases), tests/test_cuda.c (device). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cu_int.h"
#include "lib/util/util.h"

enum { MAX_REG = 64 };
static const size_t REG_CHUNK = (size_t)64 << 30;      /* one cudaHostRegister at most */

struct zp_cu {
    const zp_cu_rt_ops_t *rt;
    void *r;
    zp_cu_devinfo_t info;
    zp_cu_hooks_t hooks;
    zp_cu_stats_t st;
    struct { void *p; size_t len, chunk; } reg[MAX_REG];
    unsigned nreg;
    /* bases of the current key */
    int curve;
    uintptr_t key_id;
    int resident, bases_pending;
    void *d_bases[4];
    const void *h_bases[4];
    size_t counts[4];
    /* twiddles w^i (i < n/2) of the last (curve, log_n) */
    int tw_curve;
    unsigned tw_log_n;
    uint64_t *d_tw;
};

/* left free (fragmentation, the driver): 1/64 of the device, at most 256 MiB */
static size_t mem_margin(const zp_cu_t *cu)
{
    size_t m = cu->info.total_mem / 64;
    return m < ((size_t)256 << 20) ? m : ((size_t)256 << 20);
}

static size_t g1a_bytes(int curve) { return curve == 2 ? 96 : 64; }
static const size_t FR = 32;

/* the boundary: a device out-of-memory is a device error to the backend's callers */
static int dev_rc(int rc)
{
    if (rc != -ENOMEM) return rc;
    char m[256];
    snprintf(m, sizeof m, "%s", zp_err_msg());
    return zp_err_set(ZP_EDEVICE, "out of device memory: %s", m);
}

/* ---------------------------------------------------------------- open / close */

/* a context over the CUDA runtime (emu == NULL) or the host emulation */
static int cu_open_rt(zp_cu_t **cup, const char *spec, const zp_cu_emu_cfg_t *emu, char *desc, size_t desc_cap)
{
    const zp_cu_rt_ops_t *ops;
    void *r;
    zp_cu_devinfo_t info;
    *cup = NULL;
    int rc = emu ? zp_cu_rt_emu_open(&ops, &r, &info, emu, desc, desc_cap)
                 : zp_cu_rt_cuda_open(&ops, &r, &info, spec, desc, desc_cap);
    if (rc) return rc;
    zp_cu_t *cu = calloc(1, sizeof *cu);
    if (!cu) {
        ops->close(r);
        return -ENOMEM;
    }
    cu->rt = ops;
    cu->r = r;
    cu->info = info;
    *cup = cu;
    return 0;
}

int zp_cu_open(zp_cu_t **cup, const char *spec, char *desc, size_t desc_cap)
{
    return cu_open_rt(cup, spec, NULL, desc, desc_cap);
}

int zp_cu_open_emulated(zp_cu_t **cup, const zp_cu_emu_cfg_t *cfg, char *desc, size_t desc_cap)
{
    zp_cu_emu_cfg_t none;
    memset(&none, 0, sizeof none);
    return cu_open_rt(cup, NULL, cfg ? cfg : &none, desc, desc_cap);
}

int zp_cu_emu_stats(zp_cu_t *cu, zp_cu_emu_stats_t *st)
{
    memset(st, 0, sizeof *st);
    if (strcmp(cu->rt->name, "host-emulation"))
        return zp_err_set(ZP_ESTATE, "emulation statistics of a %s runtime", cu->rt->name);
    return zp_cu_rt_emu_stats(cu->r, st);
}

void zp_cu_set_hooks(zp_cu_t *cu, const zp_cu_hooks_t *h)
{
    if (h)
        cu->hooks = *h;
    else
        memset(&cu->hooks, 0, sizeof cu->hooks);
}

void zp_cu_stats(const zp_cu_t *cu, zp_cu_stats_t *st)
{
    *st = cu->st;
    st->resident = cu->resident;
}

static void sync_all(zp_cu_t *cu)
{
    (void)cu->rt->sync(cu->r, ZP_CU_S_COPY);
    (void)cu->rt->sync(cu->r, ZP_CU_S_COMP);
}

static void free_bases(zp_cu_t *cu)
{
    sync_all(cu);    /* an upload in flight still writes them */
    for (int i = 0; i < 4; i++) {
        if (cu->d_bases[i]) (void)cu->rt->dfree(cu->r, cu->d_bases[i]);
        cu->d_bases[i] = NULL;
        cu->h_bases[i] = NULL;
        cu->counts[i] = 0;
    }
    cu->key_id = 0;
    cu->curve = 0;
    cu->resident = 0;
    cu->bases_pending = 0;
}

void zp_cu_close(zp_cu_t **cup)
{
    zp_cu_t *cu = *cup;
    if (!cu) return;
    sync_all(cu);
    while (cu->nreg) zp_cu_host_unregister(cu, cu->reg[cu->nreg - 1].p);
    free_bases(cu);
    if (cu->d_tw) (void)cu->rt->dfree(cu->r, cu->d_tw);
    cu->rt->close(cu->r);
    free(cu);
    *cup = NULL;
}

/* ---------------------------------------------------------------- memory */

static int trim(zp_cu_t *cu)
{
    cu->st.pool_trims++;
    return cu->rt->pool_trim(cu->r);
}

/* what the pool can still hand out: device free memory plus the pool's unused reserve */
static int pool_avail(zp_cu_t *cu, size_t *avail)
{
    size_t fr = 0, tot = 0, used = 0, res = 0;
    int rc;
    if ((rc = cu->rt->mem_info(cu->r, &fr, &tot)) || (rc = cu->rt->pool_usage(cu->r, &used, &res))) return rc;
    *avail = fr + (res > used ? res - used : 0);
    return 0;
}

int zp_cu_mem_report(zp_cu_t *cu, char *buf, size_t cap)
{
    size_t fr = 0, tot = 0, used = 0, res = 0;
    int rc;
    if ((rc = cu->rt->mem_info(cu->r, &fr, &tot)) || (rc = cu->rt->pool_usage(cu->r, &used, &res)))
        return dev_rc(rc);
    snprintf(buf, cap, "pool used %.3f GiB reserved %.3f GiB, device free %.3f GiB of %.3f GiB",
             used / 1073741824.0, res / 1073741824.0, fr / 1073741824.0, tot / 1073741824.0);
    return 0;
}

/* bytes of one MSM over n points at budget max_pairs, CUB scratch included */
static size_t msm_bytes(zp_cu_t *cu, int curve, size_t n, const zp_cu_msm_tune_t *tune, size_t *max_pairs_out)
{
    zp_cu_msm_plan_t p;
    if (zp_cu_msm_plan(curve, n, tune, &p)) return SIZE_MAX;
    if (max_pairs_out) *max_pairs_out = p.max_pairs;
    return p.bytes + cu->rt->scratch_bytes(cu->r, (size_t)p.wb * n);
}

/* the tuning of an MSM over n points: the hooks', with the reduction's parallelism from the
 * device and max_pairs the largest budget (halving from one batch of all windows) whose
 * memory fits in avail; the minimum (one window a batch) when nothing fits */
static zp_cu_msm_tune_t msm_tune_for(zp_cu_t *cu, int curve, size_t n, size_t avail)
{
    zp_cu_msm_tune_t t = cu->hooks.tune;
    if (!t.par) t.par = cu->info.sms * cu->info.threads_per_sm;
    if (t.max_pairs || n == 0) return t;
    zp_cu_msm_plan_t p;
    if (zp_cu_msm_plan(curve, n, &t, &p)) return t;
    size_t pairs = (size_t)p.nwin * n;
    if (pairs > ((size_t)1 << 30)) pairs = (size_t)1 << 30;   /* the sort takes int counts */
    for (;;) {
        t.max_pairs = pairs;
        if (pairs <= n || msm_bytes(cu, curve, n, &t, NULL) <= avail) break;
        pairs /= 2;
    }
    if (t.max_pairs < n) t.max_pairs = n;
    return t;
}

/* an MSM on stream s sized to the memory available now, halving the budget after an
 * out-of-memory (the failed attempt's buffers are back in the pool once s is synchronized) */
static int msm_budgeted(zp_cu_t *cu, int s, int curve, zp_cu_msm_out_t *out, const void *pts, const uint64_t *sc,
                        size_t n, size_t reserve)
{
    size_t avail = 0;
    int rc = pool_avail(cu, &avail);
    if (rc) return rc;
    avail = avail > reserve + mem_margin(cu) ? avail - reserve - mem_margin(cu) : 0;
    zp_cu_msm_tune_t t = msm_tune_for(cu, curve, n, avail);
    for (;;) {
        rc = cu->rt->msm(cu->r, s, curve, out, pts, sc, n, &t);
        if (rc == 0) {
            cu->st.msm_batches += out->batches;
            cu->st.last_max_pairs = out->max_pairs;
            return 0;
        }
        if (rc != -ENOMEM || t.max_pairs <= n || n == 0) return rc;
        int r2 = cu->rt->sync(cu->r, s);
        if (r2) return r2;
        cu->st.msm_retries++;
        zp_log(ZP_LOG_WARN, "cuda: MSM of %zu points out of device memory at %zu pairs a batch: retrying with %zu", n,
               t.max_pairs, t.max_pairs / 2 > n ? t.max_pairs / 2 : n);
        t.max_pairs = t.max_pairs / 2 > n ? t.max_pairs / 2 : n;
    }
}

/* peak device memory of a proof of 2^log_n besides the bases: the NTT phase (a, b, c, w,
 * coset tables) or the MSM phase (h, w, the largest MSM at its default budget, the streamed
 * bases buffer when not resident), plus the twiddles when they are not there yet */
static size_t proof_work_bytes(zp_cu_t *cu, int curve, unsigned log_n, size_t max_points, size_t n_vars,
                               int streamed)
{
    size_t n = (size_t)1 << log_n;
    size_t cs = 2 * ((size_t)1 << ((log_n + 2) / 2)) * FR;        /* lo + hi tables, generous */
    size_t ntt = 3 * n * FR + cs + n_vars * FR;
    zp_cu_msm_tune_t t = cu->hooks.tune;
    if (!t.par) t.par = cu->info.sms * cu->info.threads_per_sm;
    size_t msm = n * FR + n_vars * FR + msm_bytes(cu, curve, max_points, &t, NULL) +
                 (streamed ? max_points * g1a_bytes(curve) : 0);
    size_t tw = cu->d_tw && cu->tw_curve == curve && cu->tw_log_n == log_n ? 0 : n / 2 * FR;
    return (ntt > msm ? ntt : msm) + tw;
}

/* ---------------------------------------------------------------- pinned memory */

static void prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, len, MADV_POPULATE_WRITE) == 0) return;
#endif
#ifdef MADV_POPULATE_READ
    if (madvise(p, len, MADV_POPULATE_READ) == 0) return;
#endif
    /* read one byte a page: maps the pages without changing what other processes write */
    long pg = sysconf(_SC_PAGESIZE);
    volatile const char *c = (volatile const char *)p;
    for (size_t off = 0; off < len; off += (size_t)(pg > 0 ? pg : 4096)) (void)c[off];
}

static int find_reg(const zp_cu_t *cu, const void *p)
{
    for (unsigned i = 0; i < cu->nreg; i++)
        if (cu->reg[i].p == p) return (int)i;
    return -1;
}

static int unregister_chunks(zp_cu_t *cu, void *p, size_t len, size_t chunk)
{
    int rc = 0;
    for (size_t off = 0; off < len; off += chunk) {
        int r = cu->rt->host_unregister(cu->r, (char *)p + off);
        if (r && !rc) rc = r;
    }
    return rc;
}

int zp_cu_host_register_step(zp_cu_t *cu, void *p, size_t len, size_t chunk, size_t *done, size_t max_bytes)
{
    int rc;
    if (!chunk || chunk > REG_CHUNK) chunk = REG_CHUNK;
    if (!p || !len) return zp_err_set(-EINVAL, "host_register: empty range");
    int i = find_reg(cu, p);
    if (i >= 0 && cu->reg[i].len == len) {   /* pinned already (at start): nothing to do */
        *done = len;
        return 0;
    }
    if (i >= 0) return zp_err_set(-EINVAL, "host_register: %p is registered with %zu bytes, not %zu", p, cu->reg[i].len, len);
    if (cu->nreg == MAX_REG) return zp_err_set(ZP_ETOOBIG, "host_register: more than %d ranges", MAX_REG);
    if (*done % chunk || *done > len) return zp_err_set(-EINVAL, "host_register: step at %zu of %zu", *done, len);
    size_t stop = max_bytes && len - *done > max_bytes ? *done + max_bytes : len;
    while (*done < stop) {
        size_t n = len - *done < chunk ? len - *done : chunk;
        prefault((char *)p + *done, n);
        if ((rc = cu->rt->host_register(cu->r, (char *)p + *done, n))) {
            if (*done) unregister_chunks(cu, p, *done, chunk);
            *done = 0;
            return dev_rc(rc);
        }
        *done += n;
    }
    if (*done == len) {
        cu->reg[cu->nreg].p = p;
        cu->reg[cu->nreg].len = len;
        cu->reg[cu->nreg].chunk = chunk;
        cu->nreg++;
    }
    return 0;
}

int zp_cu_host_register(zp_cu_t *cu, void *p, size_t len)
{
    size_t done = 0;
    uint64_t t0 = zp_now_ns();
    int known = find_reg(cu, p) >= 0;
    int rc = zp_cu_host_register_step(cu, p, len, 0, &done, 0);
    if (rc == 0 && !known)
        zp_log(ZP_LOG_INFO, "cuda: registered %.2f GiB at %p in %.1f ms (pre-fault included)", (double)len / (1 << 30),
               p, (zp_now_ns() - t0) / 1e6);
    return rc;
}

int zp_cu_host_unregister(zp_cu_t *cu, void *p)
{
    int i = find_reg(cu, p);
    if (i < 0) return zp_err_set(-EINVAL, "host_unregister: %p was not registered", p);
    size_t len = cu->reg[i].len, chunk = cu->reg[i].chunk;
    cu->reg[i] = cu->reg[--cu->nreg];
    sync_all(cu);    /* no copy from it may be in flight */
    return dev_rc(unregister_chunks(cu, p, len, chunk));
}

/* ---------------------------------------------------------------- bases */

static int load_bases(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n, const void *const bases[4],
                      const size_t counts[4], int *resident)
{
    int rc;
    if (cu->key_id == key_id && cu->curve == curve && key_id != 0) {
        *resident = cu->resident;
        return 0;
    }
    free_bases(cu);
    size_t total = 0, maxn = 0;
    for (int i = 0; i < 4; i++) {
        total += counts[i] * g1a_bytes(curve);
        maxn = counts[i] > maxn ? counts[i] : maxn;
    }
    /* the pool's cache is free memory to us: give it back before judging what fits */
    size_t freeb = 0, totalb = 0;
    if ((rc = trim(cu)) || (rc = cu->rt->mem_info(cu->r, &freeb, &totalb))) return rc;
    size_t work = proof_work_bytes(cu, curve, log_n, maxn, counts[0], 0);
    size_t need = total + work + mem_margin(cu);
    cu->curve = curve;
    cu->key_id = key_id;
    for (int i = 0; i < 4; i++) {
        cu->h_bases[i] = bases[i];
        cu->counts[i] = counts[i];
    }
    *resident = 0;
    if (cu->hooks.force_streamed || need > freeb) {
        zp_log(ZP_LOG_WARN, "cuda: key bases %.2f GiB + work %.2f GiB > %.2f GiB free%s: bases are copied per proof",
               (double)total / (1 << 30), (double)work / (1 << 30), (double)freeb / (1 << 30),
               cu->hooks.force_streamed ? " (or forced by a test hook)" : "");
        return 0;
    }
    /* upload on the copy stream; the compute stream waits for ZP_CU_EV_BASES before any MSM */
    for (int i = 0; i < 4; i++) {
        size_t b = counts[i] * g1a_bytes(curve);
        if ((rc = cu->rt->dmalloc(cu->r, &cu->d_bases[i], b ? b : 1)) == -ENOMEM) {
            /* memory went elsewhere since mem_info: copy per proof instead */
            zp_log(ZP_LOG_WARN, "cuda: key bases do not fit after all (%s): bases are copied per proof", zp_err_msg());
            free_bases(cu);
            cu->curve = curve;
            cu->key_id = key_id;
            for (int j = 0; j < 4; j++) {
                cu->h_bases[j] = bases[j];
                cu->counts[j] = counts[j];
            }
            return 0;
        }
        if (rc) goto fail;
        if (b && (rc = cu->rt->h2d(cu->r, ZP_CU_S_COPY, cu->d_bases[i], bases[i], b))) goto fail;
    }
    if ((rc = cu->rt->record(cu->r, ZP_CU_S_COPY, ZP_CU_EV_BASES))) goto fail;
    cu->resident = 1;
    cu->bases_pending = 1;
    *resident = 1;
    zp_log(ZP_LOG_INFO, "cuda: key bases resident, %.2f GiB (upload queued)", (double)total / (1 << 30));
    return 0;
fail:
    free_bases(cu);
    return rc;
}

int zp_cu_load_bases(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n, const void *const bases[4],
                     const size_t counts[4], int *resident)
{
    return dev_rc(load_bases(cu, curve, key_id, log_n, bases, counts, resident));
}

/* ---------------------------------------------------------------- MSM, NTT, proof */

static int check_msm(int curve, size_t n)
{
    if (curve != 1 && curve != 2) return zp_err_set(ZP_ECURVE, "cuda msm: curve %d", curve);
    if (n >= 0x80000000u) return zp_err_set(ZP_ETOOBIG, "msm: %zu points, at most 2^31 - 1", n);
    return 0;
}

static int msm_g1(zp_cu_t *cu, int curve, zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars, size_t n)
{
    int rc;
    void *dp = NULL, *ds = NULL;
    const int s = ZP_CU_S_COMP;
    size_t pb = n * g1a_bytes(curve), sb = n * FR;
    if ((rc = check_msm(curve, n))) return rc;
    if ((rc = cu->rt->alloc(cu->r, s, &dp, pb)) || (rc = cu->rt->alloc(cu->r, s, &ds, sb))) goto out;
    if (n && ((rc = cu->rt->h2d(cu->r, s, dp, points, pb)) || (rc = cu->rt->h2d(cu->r, s, ds, scalars, sb)))) goto out;
    if ((rc = msm_budgeted(cu, s, curve, out, dp, (const uint64_t *)ds, n, 0))) goto out;
    rc = cu->rt->sync(cu->r, s);
out:
    if (rc) sync_all(cu);
    (void)cu->rt->free(cu->r, s, ds);
    (void)cu->rt->free(cu->r, s, dp);
    return rc;
}

int zp_cu_msm_g1(zp_cu_t *cu, int curve, zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars, size_t n,
                 const zp_cu_msm_tune_t *tune)
{
    zp_cu_msm_tune_t saved = cu->hooks.tune;
    if (tune) cu->hooks.tune = *tune;
    int rc = msm_g1(cu, curve, out, points, scalars, n);
    cu->hooks.tune = saved;
    return dev_rc(rc);
}

/* the twiddle table w^i (i < n/2) for (curve, log_n), built on the device from tw's two tables */
static int ensure_twiddles(zp_cu_t *cu, int curve, unsigned log_n, const zp_cu_pow_table_t *tw)
{
    int rc;
    if (cu->d_tw && cu->tw_curve == curve && cu->tw_log_n == log_n) return 0;
    if (cu->d_tw) (void)cu->rt->dfree(cu->r, cu->d_tw);
    cu->d_tw = NULL;
    size_t half = ((size_t)1 << log_n) / 2, nlo = (size_t)1 << tw->k1;
    void *dlo = NULL, *dhi = NULL;
    const int s = ZP_CU_S_COMP;
    /* a non-pool allocation: the pool's cache must not stand in its way */
    if ((rc = trim(cu)) || (rc = cu->rt->dmalloc(cu->r, (void **)&cu->d_tw, (half ? half : 1) * FR))) goto out;
    if ((rc = cu->rt->alloc(cu->r, s, &dlo, nlo * FR)) || (rc = cu->rt->alloc(cu->r, s, &dhi, tw->nhi * FR)) ||
        (rc = cu->rt->h2d(cu->r, s, dlo, tw->lo, nlo * FR)) || (rc = cu->rt->h2d(cu->r, s, dhi, tw->hi, tw->nhi * FR)) ||
        (rc = cu->rt->pow_table(cu->r, s, curve, cu->d_tw, half, (uint64_t *)dlo, (uint64_t *)dhi, tw->k1)))
        goto out;
    rc = cu->rt->sync(cu->r, s);
out:
    if (rc) sync_all(cu);
    (void)cu->rt->free(cu->r, s, dhi);
    (void)cu->rt->free(cu->r, s, dlo);
    if (rc) {
        if (cu->d_tw) (void)cu->rt->dfree(cu->r, cu->d_tw);
        cu->d_tw = NULL;
        return rc;
    }
    cu->tw_curve = curve;
    cu->tw_log_n = log_n;
    return 0;
}

static uint64_t ev_ns(zp_cu_t *cu, int e0, int e1)
{
    float ms = 0;
    if (cu->rt->elapsed_ms(cu->r, e0, e1, &ms)) return 0;
    return (uint64_t)(ms * 1e6);
}

typedef struct {
    void *a, *b, *c, *w, *cs, *base;
} proof_bufs_t;

static void free_proof_bufs(zp_cu_t *cu, proof_bufs_t *d)
{
    void **all[] = {&d->base, &d->w, &d->cs, &d->c, &d->b, &d->a};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        (void)cu->rt->free(cu->r, ZP_CU_S_COMP, *all[i]);
        *all[i] = NULL;
    }
}

/* the 4 MSMs of a proof on the compute stream; h (the H scalars) is d->a */
static int prove_msms(zp_cu_t *cu, const zp_cu_prove_args_t *a, proof_bufs_t *d, zp_cu_msm_out_t out[4])
{
    const int sc = ZP_CU_S_COMP, curve = a->curve;
    size_t n = (size_t)1 << a->log_n;
    const uint64_t *sc_of[4] = {d->w, d->w, (const uint64_t *)d->w + 4 * ((size_t)a->n_public + 1), d->a};
    size_t n_of[4] = {a->n_vars, a->n_vars, (size_t)a->n_vars - a->n_public - 1, n};
    int rc;
    if ((rc = cu->rt->wait(cu->r, sc, ZP_CU_EV_W))) return rc;
    if (cu->bases_pending && (rc = cu->rt->wait(cu->r, sc, ZP_CU_EV_BASES))) return rc;
    if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_M0))) return rc;
    size_t maxb = 0;
    for (int m = 0; m < 4; m++) {
        if (n_of[m] > cu->counts[m])
            return zp_err_set(ZP_EMISMATCH, "cuda prove: MSM %d over %zu scalars, key has %zu bases", m, n_of[m],
                              cu->counts[m]);
        maxb = n_of[m] > maxb ? n_of[m] : maxb;
    }
    if (!cu->resident && (rc = cu->rt->alloc(cu->r, sc, &d->base, (maxb ? maxb : 1) * g1a_bytes(curve)))) return rc;
    for (int m = 0; m < 4; m++) {
        const void *bases = cu->d_bases[m];
        if (!cu->resident) {   /* this MSM's bases now, into the one buffer (stream order reuses it) */
            size_t bb = n_of[m] * g1a_bytes(curve);
            if (bb && (rc = cu->rt->h2d(cu->r, sc, d->base, cu->h_bases[m], bb))) return rc;
            bases = d->base;
        }
        if ((rc = msm_budgeted(cu, sc, curve, &out[m], bases, sc_of[m], n_of[m], 0))) return rc;
        if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_M1 + m))) return rc;
    }
    return 0;
}

static int prove(zp_cu_t *cu, const zp_cu_prove_args_t *a, zp_cu_msm_out_t out[4], zp_cu_times_t *t)
{
    int rc, curve = a->curve;
    const int sc = ZP_CU_S_COMP, sx = ZP_CU_S_COPY;
    size_t n = (size_t)1 << a->log_n, vb = n * FR, ncs_lo = (size_t)1 << a->cs.k1;
    int with_msm = a->w != NULL;
    proof_bufs_t d = {0};
    uint64_t *d_cs_lo, *d_cs_hi;
    if (curve != 1 && curve != 2) return zp_err_set(ZP_ECURVE, "cuda prove: curve %d", curve);
    if (with_msm && (cu->curve != curve || !cu->key_id))
        return zp_err_set(ZP_ESTATE, "cuda prove: no key loaded for curve %d", curve);
    if ((rc = ensure_twiddles(cu, curve, a->log_n, &a->tw))) goto out;

    /* buffers (stream-ordered on the compute stream; the copy stream waits for them) */
    if ((rc = cu->rt->alloc(cu->r, sc, &d.a, vb)) || (rc = cu->rt->alloc(cu->r, sc, &d.b, vb)) ||
        (rc = cu->rt->alloc(cu->r, sc, &d.c, vb)) || (rc = cu->rt->alloc(cu->r, sc, &d.cs, (ncs_lo + a->cs.nhi) * FR)) ||
        (with_msm && (rc = cu->rt->alloc(cu->r, sc, &d.w, (size_t)a->n_vars * FR))))
        goto out;
    d_cs_lo = d.cs;
    d_cs_hi = d_cs_lo + 4 * ncs_lo;
    if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_H2D0)) || (rc = cu->rt->wait(cu->r, sx, ZP_CU_EV_H2D0))) goto out;

    /* H2D on the copy stream, one event per vector */
    if ((rc = cu->rt->h2d(cu->r, sx, d_cs_lo, a->cs.lo, ncs_lo * FR)) ||
        (rc = cu->rt->h2d(cu->r, sx, d_cs_hi, a->cs.hi, a->cs.nhi * FR)) ||
        (rc = cu->rt->h2d(cu->r, sx, d.a, a->a, vb)) || (rc = cu->rt->record(cu->r, sx, ZP_CU_EV_A)) ||
        (rc = cu->rt->h2d(cu->r, sx, d.b, a->b, vb)) || (rc = cu->rt->record(cu->r, sx, ZP_CU_EV_B)) ||
        (rc = cu->rt->h2d(cu->r, sx, d.c, a->c, vb)) || (rc = cu->rt->record(cu->r, sx, ZP_CU_EV_C)))
        goto out;
    if (with_msm && (rc = cu->rt->h2d(cu->r, sx, d.w, a->w, (size_t)a->n_vars * FR))) goto out;
    if ((rc = cu->rt->record(cu->r, sx, ZP_CU_EV_W))) goto out;

    /* NTTs on the compute stream as each vector arrives */
    void *vec[3] = {d.a, d.b, d.c};
    for (int v = 0; v < 3; v++) {
        if ((rc = cu->rt->wait(cu->r, sc, ZP_CU_EV_A + v))) goto out;
        if (v == 0 && (rc = cu->rt->record(cu->r, sc, ZP_CU_EV_NTT0))) goto out;
        if ((rc = cu->rt->coset(cu->r, sc, curve, vec[v], a->log_n, cu->d_tw, d_cs_lo, d_cs_hi, a->cs.k1))) goto out;
    }
    if ((rc = cu->rt->join(cu->r, sc, curve, d.a, d.b, d.c, n)) || (rc = cu->rt->record(cu->r, sc, ZP_CU_EV_NTT1)))
        goto out;
    /* h is formed (in d.a): b, c and the coset tables are done with (stream order: the compute
     * stream waited for their copies) */
    void **done[] = {&d.b, &d.c, &d.cs};
    for (int i = 0; i < 3; i++) {
        rc = cu->rt->free(cu->r, sc, *done[i]);
        *done[i] = NULL;
        if (rc) goto out;
    }
    if (with_msm) {
        if ((rc = prove_msms(cu, a, &d, out))) goto out;
    } else if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_D2H0)) || (rc = cu->rt->d2h(cu->r, sc, a->h, d.a, vb)) ||
               (rc = cu->rt->record(cu->r, sc, ZP_CU_EV_D2H1))) {
        goto out;
    }
    if ((rc = cu->rt->sync(cu->r, sx)) || (rc = cu->rt->sync(cu->r, sc))) goto out;
    cu->bases_pending = 0;
    t->h2d_ns = ev_ns(cu, ZP_CU_EV_H2D0, ZP_CU_EV_W);
    t->ntt_ns = ev_ns(cu, ZP_CU_EV_NTT0, ZP_CU_EV_NTT1);
    if (!with_msm) t->d2h_ns = ev_ns(cu, ZP_CU_EV_D2H0, ZP_CU_EV_D2H1);
    if (with_msm)
        for (int m = 0; m < 4; m++) t->msm_ns[m] = ev_ns(cu, ZP_CU_EV_M0 + m, ZP_CU_EV_M1 + m);
out:
    /* nothing is freed, and the caller's host memory is not let go, while queued work may
     * still read it: both streams first */
    if (rc) sync_all(cu);
    free_proof_bufs(cu, &d);
    return rc;
}

int zp_cu_prove(zp_cu_t *cu, const zp_cu_prove_args_t *a, zp_cu_msm_out_t out[4], zp_cu_times_t *t)
{
    uint64_t t0 = zp_now_ns();
    memset(t, 0, sizeof *t);
    int rc = prove(cu, a, out, t);
    t->total_ns = zp_now_ns() - t0;
    return dev_rc(rc);
}

/* ---------------------------------------------------------------- H2D benchmark */

static int time_h2d(zp_cu_t *cu, void *dst, const void *src, size_t bytes, double *gbps)
{
    int rc;
    const int s = ZP_CU_S_COPY;
    float ms = 0;
    /* one warm-up copy, then the timed one */
    if ((rc = cu->rt->h2d(cu->r, s, dst, src, bytes)) || (rc = cu->rt->record(cu->r, s, ZP_CU_EV_T0)) ||
        (rc = cu->rt->h2d(cu->r, s, dst, src, bytes)) || (rc = cu->rt->record(cu->r, s, ZP_CU_EV_T1)) ||
        (rc = cu->rt->sync(cu->r, s)) || (rc = cu->rt->elapsed_ms(cu->r, ZP_CU_EV_T0, ZP_CU_EV_T1, &ms)))
        return rc;
    *gbps = ms > 0 ? (double)bytes / (ms * 1e6) : 0;
    return 0;
}

int zp_cu_bench_h2d(zp_cu_t *cu, size_t bytes, double *gbps_pageable, double *gbps_pinned)
{
    int rc;
    void *d = NULL;
    char *h = malloc(bytes);
    if (!h) return -ENOMEM;
    memset(h, 1, bytes);
    *gbps_pageable = *gbps_pinned = 0;
    if ((rc = trim(cu)) || (rc = cu->rt->dmalloc(cu->r, &d, bytes))) goto out;
    if ((rc = time_h2d(cu, d, h, bytes, gbps_pageable))) goto out;
    if ((rc = zp_cu_host_register(cu, h, bytes))) goto out;
    rc = time_h2d(cu, d, h, bytes, gbps_pinned);
    int rc2 = zp_cu_host_unregister(cu, h);
    if (!rc) rc = rc2;
out:
    if (rc) sync_all(cu);
    if (d) (void)cu->rt->dfree(cu->r, d);
    free(h);
    return dev_rc(rc);
}
