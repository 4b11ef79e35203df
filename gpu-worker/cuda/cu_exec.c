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
   - staged proofs (issue 10 item 2): zp_cu_stage_in (the worker's staging thread) allocates a
 *     buffer set from the pool on the copy stream and queues its H2D there, with the set's own
 *     events; zp_cu_prove_set (the work thread) makes the compute stream wait for them. Memory
 *     model: the keys' bases + the working memory of one proof + one more staged set must fit
 *     for two sets; else one set (the stage-in is deferred to the compute, logged once);
 *   - a small table of keys (issue 10 item 4): resident while they fit next to the working
 *     memory of the proofs (both sets), least recently used unreferenced keys evicted for a new
 *     one; a key referenced by a staged or computing set is never evicted.
 * Threads: one lock (mu) guards the key table, the sets, the twiddle cache, registrations and
 * the statistics; it is never held across a kernel launch or a stream synchronization of the
 * compute stream, so a stage-in never waits for the compute; loads (uploads, evictions) are
 * serialized by load_mu. Every entry point binds the device to the calling thread.
 * Invariants: the pool trimmed before every non-pool allocation (cudaMalloc of bases and
 * twiddles); on an error both streams are synchronized before anything is freed or the call
 * returns (nothing queued still reads a buffer or host memory); every device error leaves as
 * ZP_EDEVICE (device out-of-memory included, with "out of device memory" in the message).
 * Tests: tests/test_cuda_exec.c (host emulation: fault injection at every runtime call, ordering
 * checker, budgets, batching, non-resident bases), tests/test_cuda.c (device). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cu_int.h"
#include "lib/util/util.h"

enum { MAX_REG = 64, MAX_TW = 4 };
static const size_t REG_CHUNK = (size_t)64 << 30;      /* one cudaHostRegister at most */

/* a key of the table: its bases resident (d[]) or streamed from the host (h[]) */
typedef struct {
    uintptr_t id;           /* 0: free entry */
    int curve;
    unsigned log_n;
    int resident, pending;  /* pending: the upload (event ZP_CU_EV_KEY0 + index) not yet waited for */
    void *d[4];
    const void *h[4];
    void *dd;               /* a compacted key's bitmaps and prefix counts (key data, resident or not) */
    size_t dwords;          /* their words (ceil(n_vars / 64)) */
    size_t counts[4], bytes;
    unsigned refs;          /* staged / computing sets and running unstaged proofs using it */
    int two_sets;           /* the memory model allows a second staged set next to it */
    uint64_t used;          /* LRU tick */
} cu_key_t;

/* a buffer set: one staged partition */
enum { SET_FREE, SET_STAGED, SET_DEFERRED, SET_DONE };
typedef struct {
    int state;
    int key;                /* index into keys (referenced) */
    zp_cu_prove_args_t args;
    void *a, *b, *c, *w, *cs;
    size_t bytes;
} cu_set_t;

struct zp_cu {
    const zp_cu_rt_ops_t *rt;
    void *r;
    zp_cu_devinfo_t info;
    zp_cu_hooks_t hooks;
    pthread_mutex_t mu, load_mu;
    zp_cu_stats_t st;
    struct { void *p; size_t len, chunk; } reg[MAX_REG];
    unsigned nreg;
    /* keys */
    cu_key_t keys[ZP_CU_MAX_KEYS];
    int cur;                /* the last loaded, -1 none */
    uint64_t tick;
    /* staged buffer sets */
    cu_set_t sets[ZP_CU_SET_SLOTS];
    int one_set_logged;
    /* twiddles w^i (i < n/2) by (curve, log_n, conventions: bellman's w differs) */
    struct { int curve; unsigned log_n, conv; uint64_t *d; uint64_t used; } tw[MAX_TW];
};

#define LOCK(cu) pthread_mutex_lock(&(cu)->mu)
#define UNLOCK(cu) pthread_mutex_unlock(&(cu)->mu)

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
    cu->cur = -1;
    pthread_mutex_init(&cu->mu, NULL);
    pthread_mutex_init(&cu->load_mu, NULL);
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

static int emu_only(zp_cu_t *cu, const char *what)
{
    if (strcmp(cu->rt->name, "host-emulation")) return zp_err_set(ZP_ESTATE, "%s on a %s runtime", what, cu->rt->name);
    return 0;
}

int zp_cu_emu_hold(zp_cu_t *cu, int stream)
{
    int rc = emu_only(cu, "emulation hold");
    return rc ? rc : zp_cu_rt_emu_hold(cu->r, stream);
}

int zp_cu_emu_wait_held(zp_cu_t *cu)
{
    int rc = emu_only(cu, "emulation hold");
    return rc ? rc : zp_cu_rt_emu_wait_held(cu->r);
}

int zp_cu_emu_release(zp_cu_t *cu)
{
    int rc = emu_only(cu, "emulation hold");
    return rc ? rc : zp_cu_rt_emu_release(cu->r);
}

void zp_cu_set_hooks(zp_cu_t *cu, const zp_cu_hooks_t *h)
{
    LOCK(cu);
    if (h)
        cu->hooks = *h;
    else
        memset(&cu->hooks, 0, sizeof cu->hooks);
    UNLOCK(cu);
}

void zp_cu_stats(const zp_cu_t *cu0, zp_cu_stats_t *st)
{
    zp_cu_t *cu = (zp_cu_t *)cu0;
    LOCK(cu);
    *st = cu->st;
    st->resident = cu->cur >= 0 && cu->keys[cu->cur].resident;
    st->keys = st->keys_resident = 0;
    st->keys_bytes = 0;
    for (int i = 0; i < ZP_CU_MAX_KEYS; i++) {
        if (!cu->keys[i].id) continue;
        st->keys++;
        if (cu->keys[i].resident) {
            st->keys_resident++;
            st->keys_bytes += cu->keys[i].bytes;
        }
    }
    st->sets_live = 0;
    for (int i = 0; i < ZP_CU_SET_SLOTS; i++) st->sets_live += cu->sets[i].state == SET_STAGED;
    UNLOCK(cu);
}

unsigned zp_cu_keys(zp_cu_t *cu, zp_cu_key_info_t *out, unsigned cap)
{
    unsigned n = 0;
    LOCK(cu);
    for (int i = 0; i < ZP_CU_MAX_KEYS; i++) {
        const cu_key_t *k = &cu->keys[i];
        if (!k->id) continue;
        if (n < cap)
            out[n] = (zp_cu_key_info_t){.key_id = k->id, .curve = k->curve, .log_n = k->log_n, .resident = k->resident,
                                        .refs = k->refs, .bytes = k->resident ? k->bytes : 0};
        n++;
    }
    UNLOCK(cu);
    return n;
}

static void sync_all(zp_cu_t *cu)
{
    (void)cu->rt->sync(cu->r, ZP_CU_S_COPY);
    (void)cu->rt->sync(cu->r, ZP_CU_S_COMP);
}

/* the device current on this thread (CUDA: per thread) */
static int bind(zp_cu_t *cu) { return cu->rt->bind ? cu->rt->bind(cu->r) : 0; }

/* a table entry's device memory back (the entry must be unreferenced; cudaFree synchronizes,
 * so an upload in flight has landed first) */
static void key_drop(zp_cu_t *cu, cu_key_t *k)
{
    for (int i = 0; i < 4; i++)
        if (k->d[i]) (void)cu->rt->dfree(cu->r, k->d[i]);
    if (k->dd) (void)cu->rt->dfree(cu->r, k->dd);
    memset(k, 0, sizeof *k);
}

void zp_cu_close(zp_cu_t **cup)
{
    zp_cu_t *cu = *cup;
    if (!cu) return;
    (void)bind(cu);
    sync_all(cu);
    for (unsigned i = 0; i < ZP_CU_SET_SLOTS; i++) (void)zp_cu_release_set(cu, i);
    while (cu->nreg) zp_cu_host_unregister(cu, cu->reg[cu->nreg - 1].p);
    for (int i = 0; i < ZP_CU_MAX_KEYS; i++)
        if (cu->keys[i].id) key_drop(cu, &cu->keys[i]);
    for (int i = 0; i < MAX_TW; i++)
        if (cu->tw[i].d) (void)cu->rt->dfree(cu->r, cu->tw[i].d);
    cu->rt->close(cu->r);
    pthread_mutex_destroy(&cu->mu);
    pthread_mutex_destroy(&cu->load_mu);
    free(cu);
    *cup = NULL;
}

/* ---------------------------------------------------------------- memory */

static int trim(zp_cu_t *cu)
{
    LOCK(cu);
    cu->st.pool_trims++;
    UNLOCK(cu);
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
    if ((rc = bind(cu)) || (rc = cu->rt->mem_info(cu->r, &fr, &tot)) || (rc = cu->rt->pool_usage(cu->r, &used, &res)))
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
            LOCK(cu);
            cu->st.msm_batches += out->batches;
            cu->st.last_max_pairs = out->max_pairs;
            UNLOCK(cu);
            return 0;
        }
        if (rc != -ENOMEM || t.max_pairs <= n || n == 0) return rc;
        int r2 = cu->rt->sync(cu->r, s);
        if (r2) return r2;
        LOCK(cu);
        cu->st.msm_retries++;
        UNLOCK(cu);
        zp_log(ZP_LOG_WARN, "cuda: MSM of %zu points out of device memory at %zu pairs a batch: retrying with %zu", n,
               t.max_pairs, t.max_pairs / 2 > n ? t.max_pairs / 2 : n);
        t.max_pairs = t.max_pairs / 2 > n ? t.max_pairs / 2 : n;
    }
}

/* the twiddle cache entry of (curve, log_n, conv), or -1 (mu held) */
static int tw_find(const zp_cu_t *cu, int curve, unsigned log_n, unsigned conv)
{
    for (int i = 0; i < MAX_TW; i++)
        if (cu->tw[i].d && cu->tw[i].curve == curve && cu->tw[i].log_n == log_n && cu->tw[i].conv == conv) return i;
    return -1;
}

/* a compacted key's bitmaps and prefix counts: key data, on the device with the key (cu_key_t
 * dd: bitmap A, bitmap B, counts A, counts B), uploaded once (key_dens), not with every w */
static size_t words_of(const zp_cu_prove_args_t *a) { return ((size_t)a->n_vars + 63) / 64; }
static size_t dens_dev_bytes(size_t words) { return 2 * words * 8 + 2 * (words + 1) * 4; }
static void dens_parts(const cu_key_t *k, uint64_t **da, uint64_t **db, uint32_t **pa, uint32_t **pb)
{
    *da = k->dd;
    *db = *da + k->dwords;
    *pa = (uint32_t *)(*db + k->dwords);
    *pb = *pa + k->dwords + 1;
}

/* the H2D of w into d_w on stream s */
static int w_h2d(zp_cu_t *cu, int s, const zp_cu_prove_args_t *a, void *d_w)
{
    size_t wb = (size_t)a->n_vars * FR;
    return wb ? cu->rt->h2d(cu->r, s, d_w, a->w, wb) : 0;
}

/* device bytes of one staged buffer set of 2^log_n: a, b, c, w and the coset tables */
static size_t set_bytes(unsigned log_n, size_t n_vars)
{
    size_t n = (size_t)1 << log_n;
    /* lo + hi tables, generous; twice for bellman's inverse coset tables (ics) */
    size_t cs = 4 * ((size_t)1 << ((log_n + 2) / 2)) * FR;
    return 3 * n * FR + cs + n_vars * FR;
}

/* peak device memory of a proof of 2^log_n besides the bases: the NTT phase (a, b, c, w,
 * coset tables: one buffer set) or the MSM phase (h, w, the largest MSM at its default budget,
 * the streamed bases buffer when not resident; a compacted key: the gathered A and B1 scalars,
 * |A| + |B| of them, live during A's MSM whether or not they fit in b and c's freed room),
 * plus the twiddles when they are not there yet.
 * A second staged set (double buffering) is set_bytes more. mu held. */
static size_t proof_work_bytes(zp_cu_t *cu, int curve, unsigned log_n, size_t max_points, size_t n_vars,
                               size_t gathered, int streamed)
{
    size_t n = (size_t)1 << log_n;
    size_t ntt = set_bytes(log_n, n_vars);
    zp_cu_msm_tune_t t = cu->hooks.tune;
    if (!t.par) t.par = cu->info.sms * cu->info.threads_per_sm;
    size_t msm = n * FR + n_vars * FR + gathered * FR + msm_bytes(cu, curve, max_points, &t, NULL) +
                 (streamed ? max_points * g1a_bytes(curve) : 0);
    size_t tw = tw_find(cu, curve, log_n, 0) >= 0 ? 0 : n / 2 * FR;   /* (either conventions': same size) */
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
    if ((rc = bind(cu))) return dev_rc(rc);
    LOCK(cu);
    int i = find_reg(cu, p);
    UNLOCK(cu);
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
        LOCK(cu);
        if (cu->nreg < MAX_REG) {
            cu->reg[cu->nreg].p = p;
            cu->reg[cu->nreg].len = len;
            cu->reg[cu->nreg].chunk = chunk;
            cu->nreg++;
        }
        UNLOCK(cu);
    }
    return 0;
}

int zp_cu_host_register(zp_cu_t *cu, void *p, size_t len)
{
    size_t done = 0;
    uint64_t t0 = zp_now_ns();
    LOCK(cu);
    int known = find_reg(cu, p) >= 0;
    UNLOCK(cu);
    int rc = zp_cu_host_register_step(cu, p, len, 0, &done, 0);
    if (rc == 0 && !known)
        zp_log(ZP_LOG_INFO, "cuda: registered %.2f GiB at %p in %.1f ms (pre-fault included)", (double)len / (1 << 30),
               p, (zp_now_ns() - t0) / 1e6);
    return rc;
}

int zp_cu_host_unregister(zp_cu_t *cu, void *p)
{
    int rc = bind(cu);
    if (rc) return dev_rc(rc);
    LOCK(cu);
    int i = find_reg(cu, p);
    if (i < 0) {
        UNLOCK(cu);
        return zp_err_set(-EINVAL, "host_unregister: %p was not registered", p);
    }
    size_t len = cu->reg[i].len, chunk = cu->reg[i].chunk;
    cu->reg[i] = cu->reg[--cu->nreg];
    UNLOCK(cu);
    sync_all(cu);    /* no copy from it may be in flight */
    return dev_rc(unregister_chunks(cu, p, len, chunk));
}

/* ---------------------------------------------------------------- keys */

/* the table entry of key_id, or -1 (mu held) */
static int key_find(const zp_cu_t *cu, uintptr_t id, int curve)
{
    for (int i = 0; i < ZP_CU_MAX_KEYS; i++)
        if (id && cu->keys[i].id == id && cu->keys[i].curve == curve) return i;
    return -1;
}

/* the least recently used unreferenced entry, or -1 (mu held) */
static int key_victim(const zp_cu_t *cu)
{
    int v = -1;
    for (int i = 0; i < ZP_CU_MAX_KEYS; i++) {
        const cu_key_t *k = &cu->keys[i];
        if (k->id && !k->refs && (v < 0 || k->used < cu->keys[v].used)) v = i;
    }
    return v;
}

/* evict entry v (unreferenced; load_mu held): out of the table under mu, so nobody finds it,
 * then its memory back */
static void key_evict(zp_cu_t *cu, int v)
{
    LOCK(cu);
    cu_key_t k = cu->keys[v];
    memset(&cu->keys[v], 0, sizeof cu->keys[v]);
    if (cu->cur == v) cu->cur = -1;
    cu->st.key_evictions++;
    UNLOCK(cu);
    zp_log(ZP_LOG_INFO, "cuda: key %#lx evicted from the device (%s, %.3f MiB; least recently used, unreferenced)",
           (unsigned long)k.id, k.resident ? "resident" : "streamed", (double)k.bytes / (1 << 20));
    key_drop(cu, &k);
}

/* memory the proofs and keys may use: device free + what our pool holds (all of it proof
 * working memory, which the model counts itself), after the pool's cache was given back */
static int model_avail(zp_cu_t *cu, size_t *avail)
{
    size_t fr = 0, tot = 0, used = 0, res = 0;
    int rc;
    if ((rc = trim(cu)) || (rc = cu->rt->mem_info(cu->r, &fr, &tot)) || (rc = cu->rt->pool_usage(cu->r, &used, &res)))
        return rc;
    *avail = fr + res;
    return 0;
}

/* find or add key_id; *slot = its entry (referenced when take_ref). A new key is resident when
 * its bases + the working memory of a proof + a second staged set fit (evicting least recently
 * used unreferenced keys as needed); else resident with one set if that fits; else streamed. */
/* a compacted key's bitmaps and prefix counts (a: the proof args that carry them, compact) onto
 * the device with key i, once: the copy stream records the key's event after them and the key is
 * pending again (the compute stream waits before its gather); freed with the key. load_mu held.
 * Returns 1 when it uploaded, 0 when nothing was to do, < 0 an error. */
static int key_dens(zp_cu_t *cu, int i, const zp_cu_prove_args_t *a)
{
    if (!a || !a->compact) return 0;
    size_t words = words_of(a), b = dens_dev_bytes(words);
    if (!a->dens_a || !a->dens_b || !a->pfx_a || !a->pfx_b)
        return zp_err_set(-EINVAL, "cuda: a compacted key without its bitmaps / prefix counts");
    LOCK(cu);
    void *have = cu->keys[i].dd;
    size_t hw = cu->keys[i].dwords;
    uintptr_t id = cu->keys[i].id;
    UNLOCK(cu);
    if (have)
        return hw == words ? 0
                           : zp_err_set(ZP_EMISMATCH, "cuda: key %#lx: bitmaps of %zu words on the device, the proof's "
                                        "%u wires need %zu", (unsigned long)id, hw, a->n_vars, words);
    void *d = NULL;
    int rc;
    if ((rc = cu->rt->dmalloc(cu->r, &d, b))) return rc;
    cu_key_t t = {.dd = d, .dwords = words};
    uint64_t *da, *db;
    uint32_t *pa, *pb;
    dens_parts(&t, &da, &db, &pa, &pb);
    if ((rc = cu->rt->h2d(cu->r, ZP_CU_S_COPY, da, a->dens_a, words * 8)) ||
        (rc = cu->rt->h2d(cu->r, ZP_CU_S_COPY, db, a->dens_b, words * 8)) ||
        (rc = cu->rt->h2d(cu->r, ZP_CU_S_COPY, pa, a->pfx_a, (words + 1) * 4)) ||
        (rc = cu->rt->h2d(cu->r, ZP_CU_S_COPY, pb, a->pfx_b, (words + 1) * 4)) ||
        (rc = cu->rt->record(cu->r, ZP_CU_S_COPY, ZP_CU_EV_KEY0 + i))) {
        sync_all(cu);   /* a copy in flight still writes it */
        (void)cu->rt->dfree(cu->r, d);
        return rc;
    }
    LOCK(cu);
    cu->keys[i].dd = d;
    cu->keys[i].dwords = words;
    cu->keys[i].bytes += b;
    cu->keys[i].pending = 1;
    UNLOCK(cu);
    return 1;
}

static int load_bases(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n, const void *const bases[4],
                      const size_t counts[4], const zp_cu_prove_args_t *cd, int take_ref, int *slot, int *resident)
{
    int rc = 0, i;
    if (!key_id) return zp_err_set(-EINVAL, "cuda load_bases: key id 0");
    if (curve != 1 && curve != 2) return zp_err_set(ZP_ECURVE, "cuda load_bases: curve %d", curve);
    pthread_mutex_lock(&cu->load_mu);
    LOCK(cu);
    if ((i = key_find(cu, key_id, curve)) >= 0) {
        cu_key_t *k = &cu->keys[i];
        k->used = ++cu->tick;
        k->refs += take_ref != 0;
        cu->cur = i;
        *slot = i;
        *resident = k->resident;
        UNLOCK(cu);
        rc = key_dens(cu, i, cd);
        if (rc < 0) {
            LOCK(cu);
            if (take_ref && cu->keys[i].refs) cu->keys[i].refs--;
            UNLOCK(cu);
        }
        pthread_mutex_unlock(&cu->load_mu);
        return rc < 0 ? rc : 0;
    }
    for (i = 0; i < ZP_CU_MAX_KEYS && cu->keys[i].id; i++) {}
    int forced = cu->hooks.force_streamed;
    UNLOCK(cu);
    if (i == ZP_CU_MAX_KEYS) {   /* table full: the least recently used unreferenced key goes */
        LOCK(cu);
        i = key_victim(cu);
        UNLOCK(cu);
        if (i < 0) {
            pthread_mutex_unlock(&cu->load_mu);
            return zp_err_set(ZP_ETOOBIG, "cuda: %d proving keys in use at once (the table holds %d)", ZP_CU_MAX_KEYS,
                              ZP_CU_MAX_KEYS);
        }
        key_evict(cu, i);
    }
    cu_key_t k;
    memset(&k, 0, sizeof k);
    k.id = key_id;
    k.curve = curve;
    k.log_n = log_n;
    size_t maxn = 0;
    for (int j = 0; j < 4; j++) {
        k.bytes += counts[j] * g1a_bytes(curve);
        maxn = counts[j] > maxn ? counts[j] : maxn;
        k.h[j] = bases[j];
        k.counts[j] = counts[j];
    }
    LOCK(cu);
    /* (a compacted key: counts[0] is |A|, not the wires; the bitmaps count with the key) */
    size_t nv = cd && cd->compact ? cd->n_vars : counts[0], gath = cd && cd->compact ? (size_t)cd->n_a + cd->n_b : 0;
    size_t dens_b = cd && cd->compact ? dens_dev_bytes(words_of(cd)) : 0;
    k.bytes += dens_b;   /* (for the model; key_dens adds them when they are there) */
    size_t work = proof_work_bytes(cu, curve, log_n, maxn, nv, gath, 0);
    size_t work_s = proof_work_bytes(cu, curve, log_n, maxn, nv, gath, 1);
    UNLOCK(cu);
    size_t setb = set_bytes(log_n, nv), margin = mem_margin(cu), avail = 0;
    /* the pool's cache is free memory to us: give it back before judging what fits */
    for (;;) {
        if ((rc = model_avail(cu, &avail))) goto out;
        if (forced) break;
        zp_log(ZP_LOG_DEBUG, "cuda: key %#lx: bases %zu + work %zu + set %zu + margin %zu bytes, %zu available",
               (unsigned long)key_id, k.bytes, work, setb, margin, avail);
        if (k.bytes + work + setb + margin <= avail) {
            k.resident = k.two_sets = 1;
            break;
        }
        LOCK(cu);
        int v = key_victim(cu);
        UNLOCK(cu);
        if (v >= 0) {   /* an unreferenced key makes room (both buffer sets next to this key) */
            key_evict(cu, v);
            continue;
        }
        if (k.bytes + work + margin <= avail) k.resident = 1;   /* resident, one buffer set */
        break;
    }
    if (!k.resident) {
        k.two_sets = work_s + setb + margin <= avail;
        zp_log(ZP_LOG_WARN, "cuda: key bases %.3f MiB + work %.3f MiB > %.3f MiB free%s: bases are copied per proof",
               (double)k.bytes / (1 << 20), (double)work / (1 << 20), (double)avail / (1 << 20),
               forced ? " (or forced by a test hook)" : "");
    } else if (!k.two_sets) {
        zp_log(ZP_LOG_WARN, "cuda: key bases %.3f MiB + work %.3f MiB + a second buffer set %.3f MiB > %.3f MiB free: "
               "one buffer set (the H2D of a partition waits for the previous compute)", (double)k.bytes / (1 << 20),
               (double)work / (1 << 20), (double)setb / (1 << 20), (double)avail / (1 << 20));
    }
    /* upload on the copy stream; the compute stream waits for ZP_CU_EV_KEY0 + i before any MSM */
    for (int j = 0; k.resident && j < 4; j++) {
        size_t b = counts[j] * g1a_bytes(curve);
        if ((rc = cu->rt->dmalloc(cu->r, &k.d[j], b ? b : 1)) == -ENOMEM) {
            /* memory went elsewhere since mem_info: copy per proof instead */
            zp_log(ZP_LOG_WARN, "cuda: key bases do not fit after all (%s): bases are copied per proof", zp_err_msg());
            for (int x = 0; x < 4; x++) {
                if (k.d[x]) (void)cu->rt->dfree(cu->r, k.d[x]);
                k.d[x] = NULL;
            }
            k.resident = 0;
            rc = 0;
            break;
        }
        if (rc) goto out;
        if (b && (rc = cu->rt->h2d(cu->r, ZP_CU_S_COPY, k.d[j], bases[j], b))) goto out;
    }
    if (k.resident) {
        if ((rc = cu->rt->record(cu->r, ZP_CU_S_COPY, ZP_CU_EV_KEY0 + i))) goto out;
        k.pending = 1;
        zp_log(ZP_LOG_INFO, "cuda: key %#lx bases resident, %.3f MiB (upload queued; %s)", (unsigned long)key_id,
               (double)k.bytes / (1 << 20), k.two_sets ? "two buffer sets fit" : "one buffer set");
    }
out:
    if (rc) {
        sync_all(cu);   /* an upload in flight still writes them */
        for (int x = 0; x < 4; x++)
            if (k.d[x]) (void)cu->rt->dfree(cu->r, k.d[x]);
    } else {
        LOCK(cu);
        k.refs = take_ref != 0;
        k.used = ++cu->tick;
        k.bytes -= dens_b;
        cu->keys[i] = k;
        cu->cur = i;
        cu->st.key_uploads += k.resident;
        cu->st.one_set = !k.two_sets;
        *slot = i;
        *resident = k.resident;
        UNLOCK(cu);
        if ((rc = key_dens(cu, i, cd)) < 0) {
            LOCK(cu);
            if (take_ref && cu->keys[i].refs) cu->keys[i].refs--;
            UNLOCK(cu);
        } else {
            rc = 0;
        }
    }
    pthread_mutex_unlock(&cu->load_mu);
    return rc;
}

int zp_cu_load_bases(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n, const void *const bases[4],
                     const size_t counts[4], int *resident)
{
    int slot, rc = bind(cu);
    return dev_rc(rc ? rc : load_bases(cu, curve, key_id, log_n, bases, counts, NULL, 0, &slot, resident));
}

int zp_cu_load_bases_dens(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n, const void *const bases[4],
                          const size_t counts[4], const zp_cu_prove_args_t *dens, int *resident)
{
    int slot, rc = bind(cu);
    return dev_rc(rc ? rc : load_bases(cu, curve, key_id, log_n, bases, counts, dens, 0, &slot, resident));
}

static void key_unref(zp_cu_t *cu, int i, int upload_done)
{
    LOCK(cu);
    if (cu->keys[i].refs) cu->keys[i].refs--;
    if (upload_done) cu->keys[i].pending = 0;
    UNLOCK(cu);
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
    if ((rc = check_msm(curve, n)) || (rc = bind(cu))) return rc;
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

/* the twiddle table w^i (i < n/2) for (curve, log_n, conv), built on the device from tw's two tables
 * (work thread: the only one that computes); a small cache, least recently used replaced */
static int ensure_twiddles(zp_cu_t *cu, int curve, unsigned log_n, unsigned conv, const zp_cu_pow_table_t *tw,
                           const uint64_t **d_tw)
{
    int rc, j = -1;
    LOCK(cu);
    int i = tw_find(cu, curve, log_n, conv);
    if (i >= 0) {
        cu->tw[i].used = ++cu->tick;
        *d_tw = cu->tw[i].d;
        UNLOCK(cu);
        return 0;
    }
    for (int x = 0; x < MAX_TW && j < 0; x++)
        if (!cu->tw[x].d) j = x;
    if (j < 0) {   /* full: the least recently used goes */
        j = 0;
        for (int x = 1; x < MAX_TW; x++)
            if (cu->tw[x].used < cu->tw[j].used) j = x;
    }
    uint64_t *old = cu->tw[j].d;
    memset(&cu->tw[j], 0, sizeof cu->tw[j]);
    UNLOCK(cu);
    if (old) (void)cu->rt->dfree(cu->r, old);
    uint64_t *d = NULL;
    size_t half = ((size_t)1 << log_n) / 2, nlo = (size_t)1 << tw->k1;
    void *dlo = NULL, *dhi = NULL;
    const int s = ZP_CU_S_COMP;
    /* a non-pool allocation: the pool's cache must not stand in its way */
    if ((rc = trim(cu)) || (rc = cu->rt->dmalloc(cu->r, (void **)&d, (half ? half : 1) * FR))) goto out;
    if ((rc = cu->rt->alloc(cu->r, s, &dlo, nlo * FR)) || (rc = cu->rt->alloc(cu->r, s, &dhi, tw->nhi * FR)) ||
        (rc = cu->rt->h2d(cu->r, s, dlo, tw->lo, nlo * FR)) || (rc = cu->rt->h2d(cu->r, s, dhi, tw->hi, tw->nhi * FR)) ||
        (rc = cu->rt->pow_table(cu->r, s, curve, d, half, (uint64_t *)dlo, (uint64_t *)dhi, tw->k1)))
        goto out;
    rc = cu->rt->sync(cu->r, s);
out:
    if (rc) sync_all(cu);
    (void)cu->rt->free(cu->r, s, dhi);
    (void)cu->rt->free(cu->r, s, dlo);
    if (rc) {
        if (d) (void)cu->rt->dfree(cu->r, d);
        return rc;
    }
    LOCK(cu);
    cu->tw[j].curve = curve;
    cu->tw[j].log_n = log_n;
    cu->tw[j].conv = conv;
    cu->tw[j].d = d;
    cu->tw[j].used = ++cu->tick;
    UNLOCK(cu);
    *d_tw = d;
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
    void *ga, *gb;   /* a compacted key: the gathered A / B1 scalars (MSM phase) */
} proof_bufs_t;

static void free_proof_bufs(zp_cu_t *cu, proof_bufs_t *d)
{
    void **all[] = {&d->gb, &d->ga, &d->base, &d->w, &d->cs, &d->c, &d->b, &d->a};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        (void)cu->rt->free(cu->r, ZP_CU_S_COMP, *all[i]);
        *all[i] = NULL;
    }
}

/* the 4 MSMs of a proof on the compute stream over key k's bases; h (the H scalars) is d->a;
 * ev_w: the event after w's copy; reserve: bytes the MSM budget leaves free (a staged set) */
static int prove_msms(zp_cu_t *cu, const zp_cu_prove_args_t *a, proof_bufs_t *d, const cu_key_t *k, int key_ev,
                      int key_pending, int ev_w, size_t reserve, zp_cu_msm_out_t out[4])
{
    const int sc = ZP_CU_S_COMP, curve = a->curve;
    size_t n = (size_t)1 << a->log_n;
    const uint64_t *sc_of[4] = {d->w, d->w, (const uint64_t *)d->w + 4 * ((size_t)a->n_public + 1), d->a};
    size_t n_of[4] = {a->n_vars, a->n_vars, (size_t)a->n_vars - a->n_public - 1, n};
    int rc;
    if ((rc = cu->rt->wait(cu->r, sc, ev_w))) return rc;
    if (key_pending && (rc = cu->rt->wait(cu->r, sc, key_ev))) return rc;
    if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_M0))) return rc;
    if (a->compact) {   /* A's and B1's scalars gathered from w on the device (b and c's memory is back) */
        uint64_t *da, *db;
        uint32_t *pa, *pb;
        if (!k->dd || k->dwords != words_of(a))
            return zp_err_set(ZP_ESTATE, "cuda prove: key %#lx: no bitmaps on the device for %u wires",
                              (unsigned long)k->id, a->n_vars);
        dens_parts(k, &da, &db, &pa, &pb);
        if ((rc = cu->rt->alloc(cu->r, sc, &d->ga, (a->n_a ? a->n_a : 1) * FR)) ||
            (rc = cu->rt->alloc(cu->r, sc, &d->gb, (a->n_b ? a->n_b : 1) * FR)) ||
            (rc = cu->rt->gather(cu->r, sc, curve, d->ga, d->w, da, pa, words_of(a))) ||
            (rc = cu->rt->gather(cu->r, sc, curve, d->gb, d->w, db, pb, words_of(a))))
            return rc;
        sc_of[0] = d->ga;
        sc_of[1] = d->gb;
        n_of[0] = a->n_a;
        n_of[1] = a->n_b;
    }
    size_t maxb = 0;
    for (int m = 0; m < 4; m++) {
        if (n_of[m] > k->counts[m])
            return zp_err_set(ZP_EMISMATCH, "cuda prove: MSM %d over %zu scalars, key has %zu bases", m, n_of[m],
                              k->counts[m]);
        maxb = n_of[m] > maxb ? n_of[m] : maxb;
    }
    if (!k->resident && (rc = cu->rt->alloc(cu->r, sc, &d->base, (maxb ? maxb : 1) * g1a_bytes(curve)))) return rc;
    for (int m = 0; m < 4; m++) {
        const void *bases = k->d[m];
        if (!k->resident) {   /* this MSM's bases now, into the one buffer (stream order reuses it) */
            size_t bb = n_of[m] * g1a_bytes(curve);
            if (bb && (rc = cu->rt->h2d(cu->r, sc, d->base, k->h[m], bb))) return rc;
            bases = d->base;
        }
        if ((rc = msm_budgeted(cu, sc, curve, &out[m], bases, sc_of[m], n_of[m], reserve))) return rc;
        if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_M1 + m))) return rc;
        if (m == 1 && a->compact) {   /* done with the gathered scalars: C's and H's MSMs get their memory */
            void **g[2] = {&d->ga, &d->gb};
            for (int x = 0; x < 2; x++) {
                rc = cu->rt->free(cu->r, sc, *g[x]);
                *g[x] = NULL;
                if (rc) return rc;
            }
        }
    }
    return 0;
}

/* the coset tables of a proof in one device buffer: cs lo, cs hi, then (bellman) ics lo, ics hi */
static size_t cs_bytes(const zp_cu_prove_args_t *a)
{
    size_t e = ((size_t)1 << a->cs.k1) + a->cs.nhi;
    if (a->conv) e += ((size_t)1 << a->ics.k1) + a->ics.nhi;
    return e * FR;
}

/* tab[0..3]: the device addresses of cs lo, cs hi, ics lo, ics hi in buffer d (ics: bellman) */
static void cs_parts(const zp_cu_prove_args_t *a, uint64_t *d, uint64_t *tab[4])
{
    tab[0] = d;
    tab[1] = tab[0] + 4 * ((size_t)1 << a->cs.k1);
    tab[2] = tab[1] + 4 * a->cs.nhi;
    tab[3] = tab[2] + 4 * ((size_t)1 << a->ics.k1);
}

/* the H2D of the coset tables into d on stream s */
static int cs_h2d(zp_cu_t *cu, int s, const zp_cu_prove_args_t *a, void *d)
{
    uint64_t *t[4];
    int rc;
    cs_parts(a, d, t);
    if ((rc = cu->rt->h2d(cu->r, s, t[0], a->cs.lo, ((size_t)1 << a->cs.k1) * FR)) ||
        (rc = cu->rt->h2d(cu->r, s, t[1], a->cs.hi, a->cs.nhi * FR)))
        return rc;
    if (a->conv && ((rc = cu->rt->h2d(cu->r, s, t[2], a->ics.lo, ((size_t)1 << a->ics.k1) * FR)) ||
                    (rc = cu->rt->h2d(cu->r, s, t[3], a->ics.hi, a->ics.nhi * FR))))
        return rc;
    return 0;
}

/* the NTT phase on the compute stream: a, b, c to the coset as each arrives (events ev_a + v),
 * h = join into d->a (bellman: then back from the coset to coefficients, cu_api.h); b, c and
 * the coset tables freed (the compute stream waited for them). The join leaves Montgomery form
 * (h standard); bellman's inverse transform after it is linear with Montgomery constants, so
 * its output is standard form too: the conversion commutes with it. */
static int prove_ntts(zp_cu_t *cu, const zp_cu_prove_args_t *a, proof_bufs_t *d, const uint64_t *d_tw, int ev_a)
{
    const int sc = ZP_CU_S_COMP;
    size_t n = (size_t)1 << a->log_n;
    uint64_t *t[4];
    cs_parts(a, d->cs, t);
    void *vec[3] = {d->a, d->b, d->c};
    int rc;
    for (int v = 0; v < 3; v++) {
        if ((rc = cu->rt->wait(cu->r, sc, ev_a + v))) return rc;
        if (v == 0 && (rc = cu->rt->record(cu->r, sc, ZP_CU_EV_NTT0))) return rc;
        if ((rc = cu->rt->coset(cu->r, sc, a->curve, vec[v], a->log_n, d_tw, t[0], t[1], a->cs.k1, 0))) return rc;
    }
    if ((rc = cu->rt->join(cu->r, sc, a->curve, d->a, d->b, d->c, n))) return rc;
    if (a->conv && (rc = cu->rt->coset(cu->r, sc, a->curve, d->a, a->log_n, d_tw, t[2], t[3], a->ics.k1, 1))) return rc;
    if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_NTT1))) return rc;
    void **done[] = {&d->b, &d->c, &d->cs};
    for (int i = 0; i < 3; i++) {
        rc = cu->rt->free(cu->r, sc, *done[i]);
        *done[i] = NULL;
        if (rc) return rc;
    }
    return 0;
}

/* the key a proof uses, referenced: key_id's entry (0 = the last loaded); -1 and an error */
static int key_take(zp_cu_t *cu, const zp_cu_prove_args_t *a, int *pending)
{
    LOCK(cu);
    int i = a->key_id ? key_find(cu, a->key_id, a->curve) : cu->cur;
    if (i >= 0 && cu->keys[i].curve != a->curve) i = -1;
    if (i >= 0) {
        cu->keys[i].refs++;
        *pending = cu->keys[i].pending;
    }
    UNLOCK(cu);
    if (i < 0) zp_err_set(ZP_ESTATE, "cuda prove: no key loaded for curve %d", a->curve);
    return i;
}

/* the unstaged proof (and a deferred set): H2D, NTTs, MSMs in one call; ki: the referenced key
 * (-1 for compute_h) */
static int prove_with(zp_cu_t *cu, const zp_cu_prove_args_t *a, int ki, int key_pending, zp_cu_msm_out_t out[4],
                      zp_cu_times_t *t)
{
    int rc;
    const int sc = ZP_CU_S_COMP, sx = ZP_CU_S_COPY;
    size_t n = (size_t)1 << a->log_n, vb = n * FR;
    int with_msm = a->w != NULL;
    proof_bufs_t d = {0};
    const uint64_t *d_tw = NULL;
    if ((rc = ensure_twiddles(cu, a->curve, a->log_n, a->conv, &a->tw, &d_tw))) goto out;

    /* buffers (stream-ordered on the compute stream; the copy stream waits for them) */
    if ((rc = cu->rt->alloc(cu->r, sc, &d.a, vb)) || (rc = cu->rt->alloc(cu->r, sc, &d.b, vb)) ||
        (rc = cu->rt->alloc(cu->r, sc, &d.c, vb)) || (rc = cu->rt->alloc(cu->r, sc, &d.cs, cs_bytes(a))) ||
        (with_msm && (rc = cu->rt->alloc(cu->r, sc, &d.w, (size_t)a->n_vars * FR))))
        goto out;
    if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_H2D0)) || (rc = cu->rt->wait(cu->r, sx, ZP_CU_EV_H2D0))) goto out;

    /* H2D on the copy stream, one event per vector */
    if ((rc = cs_h2d(cu, sx, a, d.cs)) || (rc = cu->rt->h2d(cu->r, sx, d.a, a->a, vb)) || (rc = cu->rt->record(cu->r, sx, ZP_CU_EV_A)) ||
        (rc = cu->rt->h2d(cu->r, sx, d.b, a->b, vb)) || (rc = cu->rt->record(cu->r, sx, ZP_CU_EV_B)) ||
        (rc = cu->rt->h2d(cu->r, sx, d.c, a->c, vb)) || (rc = cu->rt->record(cu->r, sx, ZP_CU_EV_C)))
        goto out;
    if (with_msm && (rc = w_h2d(cu, sx, a, d.w))) goto out;
    if ((rc = cu->rt->record(cu->r, sx, ZP_CU_EV_W))) goto out;

    if ((rc = prove_ntts(cu, a, &d, d_tw, ZP_CU_EV_A))) goto out;
    if (with_msm) {
        if ((rc = prove_msms(cu, a, &d, &cu->keys[ki], ZP_CU_EV_KEY0 + ki, key_pending, ZP_CU_EV_W, 0, out))) goto out;
    } else if ((rc = cu->rt->record(cu->r, sc, ZP_CU_EV_D2H0)) || (rc = cu->rt->d2h(cu->r, sc, a->h, d.a, vb)) ||
               (rc = cu->rt->record(cu->r, sc, ZP_CU_EV_D2H1))) {
        goto out;
    }
    if ((rc = cu->rt->sync(cu->r, sx)) || (rc = cu->rt->sync(cu->r, sc))) goto out;
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

static int prove(zp_cu_t *cu, const zp_cu_prove_args_t *a, zp_cu_msm_out_t out[4], zp_cu_times_t *t)
{
    int rc, ki = -1, pending = 0;
    if (a->curve != 1 && a->curve != 2) return zp_err_set(ZP_ECURVE, "cuda prove: curve %d", a->curve);
    if (a->conv > 1 || (a->conv && a->curve != 2))
        return zp_err_set(ZP_EFORMAT, "cuda prove: conventions %u on curve %d", a->conv, a->curve);
    if ((rc = bind(cu))) return rc;
    if (a->w && (ki = key_take(cu, a, &pending)) < 0) return ZP_ESTATE;
    if (ki >= 0 && a->compact) {   /* a key loaded without its bitmaps: they go up now, once */
        pthread_mutex_lock(&cu->load_mu);
        int up = key_dens(cu, ki, a);
        pthread_mutex_unlock(&cu->load_mu);
        if (up < 0) {
            key_unref(cu, ki, 0);
            return up;
        }
        if (up) {
            LOCK(cu);
            cu->keys[ki].bytes += dens_dev_bytes(words_of(a));
            UNLOCK(cu);
            pending = 1;
        }
    }
    rc = prove_with(cu, a, ki, pending, out, t);
    if (ki >= 0) key_unref(cu, ki, rc == 0);
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

/* ---------------------------------------------------------------- staged proofs */

static int set_ev(unsigned set, int e) { return ZP_CU_EV_SET0 + (int)set * ZP_CU_SET_NEV + e; }

static void set_bufs(cu_set_t *st, proof_bufs_t *d)
{
    *d = (proof_bufs_t){.a = st->a, .b = st->b, .c = st->c, .w = st->w, .cs = st->cs};
}

/* the stage-in's copies of set (buffers from the pool on the copy stream, then the H2D there,
 * one event per vector); nothing waits */
static int stage_copies(zp_cu_t *cu, unsigned set, cu_set_t *st)
{
    const zp_cu_prove_args_t *a = &st->args;
    const int sx = ZP_CU_S_COPY;
    size_t n = (size_t)1 << a->log_n, vb = n * FR, wb = (size_t)a->n_vars * FR;
    int rc;
    if ((rc = cu->rt->alloc(cu->r, sx, &st->a, vb)) || (rc = cu->rt->alloc(cu->r, sx, &st->b, vb)) ||
        (rc = cu->rt->alloc(cu->r, sx, &st->c, vb)) || (rc = cu->rt->alloc(cu->r, sx, &st->w, wb ? wb : FR)) ||
        (rc = cu->rt->alloc(cu->r, sx, &st->cs, cs_bytes(a))))
        return rc;
    if ((rc = cu->rt->record(cu->r, sx, set_ev(set, ZP_CU_SEV_H2D0))) || (rc = cs_h2d(cu, sx, a, st->cs)) ||
        (rc = cu->rt->h2d(cu->r, sx, st->a, a->a, vb)) || (rc = cu->rt->record(cu->r, sx, set_ev(set, ZP_CU_SEV_A))) ||
        (rc = cu->rt->h2d(cu->r, sx, st->b, a->b, vb)) || (rc = cu->rt->record(cu->r, sx, set_ev(set, ZP_CU_SEV_B))) ||
        (rc = cu->rt->h2d(cu->r, sx, st->c, a->c, vb)) || (rc = cu->rt->record(cu->r, sx, set_ev(set, ZP_CU_SEV_C))) ||
        (wb && (rc = w_h2d(cu, sx, a, st->w))) ||
        (rc = cu->rt->record(cu->r, sx, set_ev(set, ZP_CU_SEV_W))))
        return rc;
    return 0;
}

/* the set's device buffers back, on stream s (the caller ordered everything that used them) */
static void set_free_bufs(zp_cu_t *cu, int s, cu_set_t *st)
{
    void **all[] = {&st->cs, &st->w, &st->c, &st->b, &st->a};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        (void)cu->rt->free(cu->r, s, *all[i]);
        *all[i] = NULL;
    }
}

int zp_cu_stage_in(zp_cu_t *cu, unsigned set, const zp_cu_prove_args_t *args, const void *const bases[4],
                   const size_t counts[4])
{
    int rc, ki = -1, resident = 0;
    if (set >= ZP_CU_SET_SLOTS) return zp_err_set(-EINVAL, "cuda stage_in: buffer set %u (at most %d)", set, ZP_CU_SET_SLOTS);
    if (!args->w || !args->key_id) return zp_err_set(-EINVAL, "cuda stage_in: a proof (w) of a key (key_id) is needed");
    if (args->curve != 1 && args->curve != 2) return zp_err_set(ZP_ECURVE, "cuda stage_in: curve %d", args->curve);
    if (args->conv > 1 || (args->conv && args->curve != 2))
        return zp_err_set(ZP_EFORMAT, "cuda stage_in: conventions %u on curve %d", args->conv, args->curve);
    if ((rc = bind(cu))) return dev_rc(rc);
    LOCK(cu);
    int busy = cu->sets[set].state != SET_FREE;
    UNLOCK(cu);
    if (busy) return zp_err_set(ZP_ESTATE, "cuda stage_in: buffer set %u is in use", set);
    if ((rc = load_bases(cu, args->curve, args->key_id, args->log_n, bases, counts, args, 1, &ki, &resident)))
        return dev_rc(rc);
    cu_set_t *st = &cu->sets[set];
    LOCK(cu);
    /* sets that hold device memory or will at their compute (a deferred one allocates then) */
    unsigned live = 0;
    for (int i = 0; i < ZP_CU_SET_SLOTS; i++) live += cu->sets[i].state == SET_STAGED || cu->sets[i].state == SET_DEFERRED;
    int device = set < ZP_CU_MAX_SETS && (live == 0 || cu->keys[ki].two_sets);
    int log_it = !device && !cu->one_set_logged;
    cu->one_set_logged |= log_it;
    memset(st, 0, sizeof *st);
    st->state = device ? SET_STAGED : SET_DEFERRED;
    st->key = ki;
    st->args = *args;
    st->bytes = set_bytes(args->log_n, args->n_vars);
    if (device) {
        cu->st.staged++;
        if (live + 1 > cu->st.sets_peak) cu->st.sets_peak = live + 1;
    } else {
        cu->st.staged_deferred++;
    }
    UNLOCK(cu);
    if (log_it)
        zp_log(ZP_LOG_WARN, "cuda: %s: one device buffer set (the H2D of buffer set %u runs at its compute, after the "
               "previous one)", set >= ZP_CU_MAX_SETS ? "more buffer sets than events" : "a second buffer set does not fit",
               set);
    if (!device) return 0;
    if ((rc = stage_copies(cu, set, st)) == 0) return 0;
    if (rc == -ENOMEM) {   /* memory went to the running proof: this set's copies at its compute */
        zp_log(ZP_LOG_WARN, "cuda: stage-in of buffer set %u out of device memory (%s): deferred to its compute", set,
               zp_err_msg());
        set_free_bufs(cu, ZP_CU_S_COPY, st);
        LOCK(cu);
        st->state = SET_DEFERRED;
        cu->st.staged--;
        cu->st.staged_deferred++;
        UNLOCK(cu);
        return 0;
    }
    sync_all(cu);   /* queued copies still write the buffers and read the host vectors */
    set_free_bufs(cu, ZP_CU_S_COPY, st);
    LOCK(cu);
    st->state = SET_FREE;
    UNLOCK(cu);
    key_unref(cu, ki, 0);
    return dev_rc(rc);
}

/* compute of a staged set: the compute stream waits for the set's events */
static int prove_staged(zp_cu_t *cu, unsigned set, cu_set_t *st, int pending, size_t reserve, zp_cu_msm_out_t out[4],
                        zp_cu_times_t *t)
{
    const zp_cu_prove_args_t *a = &st->args;
    const uint64_t *d_tw = NULL;
    proof_bufs_t d;
    int rc;
    if ((rc = ensure_twiddles(cu, a->curve, a->log_n, a->conv, &a->tw, &d_tw))) return rc;
    set_bufs(st, &d);
    rc = prove_ntts(cu, a, &d, d_tw, set_ev(set, ZP_CU_SEV_A));
    st->b = d.b;
    st->c = d.c;
    st->cs = d.cs;
    if (rc) return rc;
    if ((rc = prove_msms(cu, a, &d, &cu->keys[st->key], ZP_CU_EV_KEY0 + st->key, pending, set_ev(set, ZP_CU_SEV_W),
                         reserve, out)))
        goto out;
    if ((rc = cu->rt->sync(cu->r, ZP_CU_S_COMP))) goto out;
    t->h2d_ns = ev_ns(cu, set_ev(set, ZP_CU_SEV_H2D0), set_ev(set, ZP_CU_SEV_W));
    t->ntt_ns = ev_ns(cu, ZP_CU_EV_NTT0, ZP_CU_EV_NTT1);
    for (int m = 0; m < 4; m++) t->msm_ns[m] = ev_ns(cu, ZP_CU_EV_M0 + m, ZP_CU_EV_M1 + m);
out:
    if (d.base) (void)cu->rt->free(cu->r, ZP_CU_S_COMP, d.base);
    if (d.ga) (void)cu->rt->free(cu->r, ZP_CU_S_COMP, d.ga);   /* (left by a failed MSM phase) */
    if (d.gb) (void)cu->rt->free(cu->r, ZP_CU_S_COMP, d.gb);
    return rc;
}

int zp_cu_prove_set(zp_cu_t *cu, unsigned set, zp_cu_msm_out_t out[4], zp_cu_times_t *t)
{
    uint64_t t0 = zp_now_ns();
    memset(t, 0, sizeof *t);
    if (set >= ZP_CU_SET_SLOTS) return zp_err_set(-EINVAL, "cuda prove_set: buffer set %u", set);
    int rc = bind(cu);
    if (rc) return dev_rc(rc);
    cu_set_t *st = &cu->sets[set];
    LOCK(cu);
    int state = st->state, ki = st->key, pending = ki >= 0 ? cu->keys[ki].pending : 0;
    /* the MSMs leave room for the next stage-in unless one is already allocated */
    size_t reserve = 0;
    if (state == SET_STAGED && cu->keys[ki].two_sets) {
        int other = 0;
        for (int i = 0; i < ZP_CU_SET_SLOTS; i++) other |= i != (int)set && cu->sets[i].state == SET_STAGED;
        reserve = other ? 0 : st->bytes;
    }
    UNLOCK(cu);
    if (state == SET_DEFERRED) {
        rc = prove_with(cu, &st->args, ki, pending, out, t);
    } else if (state == SET_STAGED) {
        rc = prove_staged(cu, set, st, pending, reserve, out, t);
        if (rc) sync_all(cu);   /* nothing is freed while queued work may still use it */
        set_free_bufs(cu, ZP_CU_S_COMP, st);
    } else {
        return zp_err_set(ZP_ESTATE, "cuda prove_set: buffer set %u holds no staged partition", set);
    }
    LOCK(cu);
    st->state = SET_DONE;
    if (rc == 0) cu->keys[ki].pending = 0;
    UNLOCK(cu);
    t->total_ns = zp_now_ns() - t0;
    return dev_rc(rc);
}

int zp_cu_release_set(zp_cu_t *cu, unsigned set)
{
    if (set >= ZP_CU_SET_SLOTS) return zp_err_set(-EINVAL, "cuda release_set: buffer set %u", set);
    cu_set_t *st = &cu->sets[set];
    LOCK(cu);
    int state = st->state, ki = st->key;
    UNLOCK(cu);
    if (state == SET_FREE) return 0;
    int rc = 0;
    if (state == SET_STAGED) {   /* never computed: its copies may still read the host vectors */
        if ((rc = bind(cu)) == 0) rc = cu->rt->sync(cu->r, ZP_CU_S_COPY);
        if (rc) sync_all(cu);
        set_free_bufs(cu, ZP_CU_S_COPY, st);
    }
    LOCK(cu);
    memset(st, 0, sizeof *st);
    st->state = SET_FREE;
    UNLOCK(cu);
    key_unref(cu, ki, 0);
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
    if ((rc = bind(cu)) || (rc = trim(cu)) || (rc = cu->rt->dmalloc(cu->r, &d, bytes))) goto out;
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
