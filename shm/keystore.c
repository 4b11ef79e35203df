/* keystore.c - proving keys in named POSIX shared memory, the "hot" tier (see keystore.h for
 * the layout and the create/publish/recover protocol).
 *
 * Invariants: an object's header and data never change after its state word is READY (release
 * store by the creator, the last write); readers copy the header with pread (never through a
 * mapping that could be short), validate every field against fstat and the layout rules, and
 * only then mmap the object PROT_READ and bind the key view (zp_g16_key_bind: offsets, counts,
 * coefficient indices). Only a process holding flock(LOCK_EX) on an object's inode, having
 * checked it is still linked, unlinks it, so two recoverers never unlink a fresh object.
 * Integrity: the header is fully checksummed. Data: the creator stores one checksum per 1 MiB
 * chunk; an opener checks the table's checksum, the first and last chunks and 32 random ones
 * (ZP_KEYSTORE_VERIFY=full or opt.full_verify: all). Why a sample: the points were validated
 * by the creator, a bad point cannot make a stage read or write out of bounds (only the
 * coefficient indices can, and zp_g16_key_bind re-checks all of them on every open), and a
 * wrong point yields a proof that the finalizer's pairing self-check refuses; a full pass over
 * a 50 GB key costs seconds per process start, which the hot tier exists to avoid. The sample
 * catches a truncated or half-written fill and a stale layout; the header checksum catches any
 * header change. Tests: tests/test_keystore.c, tests/ipc/keystore_hot.sh */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "shm/keystore.h"
#include "shm/shm.h"

#define PAGE 4096u
#define SAMPLE 32u
#define STALE_INIT_NS 2000000000ull   /* an object still uninitialised after 2 s with its lock free */

static uint64_t data_off_for(uint64_t n_chunks) { return PAGE + ((n_chunks * 8 + PAGE - 1) / PAGE) * PAGE; }

static uint64_t hdr_checksum(const zp_keystore_hdr_t *h)
{
    zp_keystore_hdr_t c;
    memcpy(&c, h, sizeof c);
    atomic_store_explicit(&c.state, 0, memory_order_relaxed);
    c.creator_pid = 0;
    c.hdr_sum = 0;
    return zp_shm_checksum(&c, sizeof c, ZP_KEYSTORE_MAGIC);
}

static int file_ids(const char *path, uint64_t id[4], char rp[PATH_MAX])
{
    struct stat st;
    if (stat(path, &st) < 0) return zp_err_set(-errno, "%s: stat: %s", path, strerror(errno));
    if (!realpath(path, rp)) return zp_err_set(-errno, "%s: realpath: %s", path, strerror(errno));
    id[0] = (uint64_t)st.st_dev; id[1] = (uint64_t)st.st_ino; id[2] = (uint64_t)st.st_size;
    id[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    return 0;
}

int zp_keystore_name_r1cs(char *buf, size_t n, const char *prefix, const char *path, const char *r1cs)
{
    char rp[PATH_MAX];
    uint64_t fid[4];
    int rc;
    if (!prefix || prefix[0] != '/' || strchr(prefix + 1, '/'))
        return zp_err_set(-EINVAL, "keystore prefix '%s': must be '/name'", prefix ? prefix : "(null)");
    if ((rc = file_ids(path, fid, rp)) < 0) return rc;
    uint64_t id[6] = {ZP_KEYSTORE_VERSION, fid[0], fid[1], fid[2], fid[3], sizeof(zp_keystore_hdr_t)};
    uint64_t h = zp_shm_checksum(rp, strlen(rp), zp_shm_checksum(id, sizeof id, ZP_KEYSTORE_MAGIC));
    if (r1cs) {   /* a bellman key's expansion depends on its circuit: both files name the object */
        if ((rc = file_ids(r1cs, fid, rp)) < 0) return rc;
        h = zp_shm_checksum(rp, strlen(rp), zp_shm_checksum(fid, sizeof fid, h ^ 0x62656c6c6d616e));
    }
    int len = snprintf(buf, n, "%s-key-%016llx", prefix, (unsigned long long)h);
    if (len < 0 || (size_t)len >= n || len >= ZP_KEYSTORE_NAME_MAX)
        return zp_err_set(ZP_ETOOBIG, "keystore prefix '%s' too long", prefix);
    return 0;
}

int zp_keystore_name(char *buf, size_t n, const char *prefix, const char *path)
{
    return zp_keystore_name_r1cs(buf, n, prefix, path, NULL);
}

/* ---- checksums over chunks (on a pool) ---- */
typedef struct {
    const uint8_t *data;
    size_t len;
    uint64_t *sums;          /* fill: written */
    const uint8_t *table;    /* verify: expected (unaligned u64s) */
    const uint64_t *idx;     /* chunks to do (NULL = all n) */
    size_t n;
    atomic_size_t bad;       /* verify: first bad chunk index, SIZE_MAX if none */
} sum_job_t;

static uint64_t chunk_sum(const uint8_t *data, size_t len, uint64_t i)
{
    size_t off = (size_t)i * ZP_KEYSTORE_CHUNK, n = len - off < ZP_KEYSTORE_CHUNK ? len - off : ZP_KEYSTORE_CHUNK;
    return zp_shm_checksum(data + off, n, i + 1);
}

static void sum_run(void *arg, unsigned tid, unsigned nt)
{
    sum_job_t *j = arg;
    size_t lo, hi;
    zp_split(j->n, tid, nt, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        uint64_t i = j->idx ? j->idx[k] : k;
        uint64_t s = chunk_sum(j->data, j->len, i);
        if (j->sums) { j->sums[i] = s; continue; }
        uint64_t want;
        memcpy(&want, j->table + i * 8, 8);
        if (want != s) {
            size_t cur = atomic_load(&j->bad);
            while (i < cur && !atomic_compare_exchange_weak(&j->bad, &cur, (size_t)i)) {
            }
        }
    }
}

/* ---- open an existing object ---- */
static int read_hdr(int fd, zp_keystore_hdr_t *h, struct stat *st)
{
    if (fstat(fd, st) < 0) return zp_err_set(-errno, "keystore: fstat: %s", strerror(errno));
    memset(h, 0, sizeof *h);
    if ((uint64_t)st->st_size < sizeof *h) return 0;   /* being created (or short): state 0 */
    ssize_t r = pread(fd, h, sizeof *h, 0);
    if (r < 0) return zp_err_set(-errno, "keystore: pread: %s", strerror(errno));
    if ((size_t)r != sizeof *h) memset(h, 0, sizeof *h);
    return 0;
}

static uint32_t hdr_state(const zp_keystore_hdr_t *h) { return atomic_load_explicit(&h->state, memory_order_acquire); }

/* h READY: every field checked; the object mapped and the key bound. ZP_EFORMAT otherwise. */
static int open_ready(zp_keystore_key_t *ks, int fd, const char *name, const zp_keystore_hdr_t *h,
                      const struct stat *st, bool full)
{
    uint64_t t0 = zp_now_ns();
    size_t g1 = zp_g1a_size((zp_curve_id_t)h->curve);
    if (h->magic != ZP_KEYSTORE_MAGIC) return zp_err_set(ZP_EFORMAT, "%s: bad magic", name);
    if (h->version != ZP_KEYSTORE_VERSION) return zp_err_set(ZP_EVERSION, "%s: layout version %u, want %u", name, h->version, ZP_KEYSTORE_VERSION);
    if (h->hdr_sum != hdr_checksum(h)) return zp_err_set(ZP_EFORMAT, "%s: header checksum mismatch", name);
    if (!g1) return zp_err_set(ZP_EFORMAT, "%s: unknown curve %u", name, h->curve);
    if (h->total_bytes != (uint64_t)st->st_size)
        return zp_err_set(ZP_EFORMAT, "%s: object is %lld bytes, header says %llu", name, (long long)st->st_size,
                          (unsigned long long)h->total_bytes);
    if (h->chunk_shift != 20 || !h->data_len || h->n_chunks != (h->data_len + ZP_KEYSTORE_CHUNK - 1) / ZP_KEYSTORE_CHUNK ||
        h->n_chunks > (uint64_t)1 << 40 || h->data_off != data_off_for(h->n_chunks) ||
        h->data_len > h->total_bytes || h->data_off != h->total_bytes - h->data_len || h->total_bytes > SIZE_MAX)
        return zp_err_set(ZP_EFORMAT, "%s: inconsistent layout (data %llu + %llu, %llu chunks, total %llu)", name,
                          (unsigned long long)h->data_off, (unsigned long long)h->data_len,
                          (unsigned long long)h->n_chunks, (unsigned long long)h->total_bytes);
    size_t len = (size_t)h->total_bytes;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return zp_err_set(-errno, "%s: mmap %zu bytes: %s", name, len, strerror(errno));
    const uint8_t *table = (const uint8_t *)map + PAGE, *data = (const uint8_t *)map + h->data_off;
    int rc;
    if (zp_shm_checksum(table, h->n_chunks * 8, ZP_KEYSTORE_MAGIC) != h->table_sum) {
        rc = zp_err_set(ZP_EFORMAT, "%s: checksum table corrupt", name);
        goto out_unmap;
    }
    size_t nsamp = full || h->n_chunks <= SAMPLE + 2 ? (size_t)h->n_chunks : SAMPLE + 2;
    uint64_t *idx = NULL, sidx[SAMPLE + 2];
    if (nsamp < h->n_chunks) {
        uint64_t x = zp_now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
        sidx[0] = 0;
        sidx[1] = h->n_chunks - 1;
        for (unsigned i = 2; i < SAMPLE + 2; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            sidx[i] = x % h->n_chunks;
        }
        idx = sidx;
    }
    sum_job_t j = {.data = data, .len = (size_t)h->data_len, .table = table, .idx = idx, .n = nsamp};
    atomic_init(&j.bad, SIZE_MAX);
    sum_run(&j, 0, 1);
    size_t bad = atomic_load(&j.bad);
    if (bad != SIZE_MAX) {
        rc = zp_err_set(ZP_EFORMAT, "%s: data chunk %zu checksum mismatch", name, bad);
        goto out_unmap;
    }
    zp_g16_key_t *k = &ks->key;
    memset(k, 0, sizeof *k);
    k->curve = (zp_curve_id_t)h->curve;
    k->n_vars = h->n_vars;
    k->n_public = h->n_public;
    k->domain_size = h->domain_size;
    k->log_n = h->log_n;
    k->n_coefs = h->n_coefs;
    k->conv = h->conv;   /* untrusted: zp_g16_key_bind checks it */
    k->compact = h->compact;   /* so are these, and the bitmaps and prefix counts they describe */
    k->n_a = h->n_a;
    k->n_b = h->n_b;
    memcpy(&k->alpha1, h->alpha1, sizeof k->alpha1);
    memcpy(&k->beta1, h->beta1, sizeof k->beta1);
    memcpy(&k->delta1, h->delta1, sizeof k->delta1);
    memcpy(&k->beta2, h->beta2, sizeof k->beta2);
    memcpy(&k->gamma2, h->gamma2, sizeof k->gamma2);
    memcpy(&k->delta2, h->delta2, sizeof k->delta2);
    if ((rc = zp_g16_key_bind(k, &h->offs, (uint8_t *)map + h->data_off, (size_t)h->data_len)) < 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", zp_err_msg());
        zp_err_set(rc, "%s: %s", name, msg);
        memset(k, 0, sizeof *k);
        goto out_unmap;
    }
    ks->map = map;
    ks->map_len = len;
    ks->data = (uint8_t *)map + h->data_off;
    ks->data_len = (size_t)h->data_len;
    ks->fill_ns = h->fill_ns;
    ks->load_ns = zp_now_ns() - t0;
    snprintf(ks->name, sizeof ks->name, "%s", name);
    return 0;
out_unmap:
    munmap(map, len);
    return rc;
}

static bool env_full(void)
{
    const char *e = getenv("ZP_KEYSTORE_VERIFY");
    return e && !strcmp(e, "full");
}

static void touch(int fd)
{
    struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    futimens(fd, ts);   /* the LRU clock; best effort (a read-only mount keeps the old time) */
}

/* keep a reference to fd's open file (its LOCK_SH lives as long as ks) and stamp the LRU clock */
static void hold(zp_keystore_key_t *ks, int fd)
{
    int d = dup(fd);
    if (d < 0) return;   /* no lock kept: an evictor may unlink it; the mapping stays valid */
    ks->fd = d;
    ks->fd_ok = true;
    touch(fd);
}

/* LOCK_SH on a READY object: blocks only while an evictor checks it. false: it was unlinked
 * meanwhile (the caller retries by name) */
static bool lock_shared(int fd)
{
    struct stat st;
    while (flock(fd, LOCK_SH) < 0)
        if (errno != EINTR) return true;   /* no locks on this file system: nothing to protect */
    return fstat(fd, &st) == 0 && st.st_nlink > 0;
}

int zp_keystore_open_name(zp_keystore_key_t *ks, const char *name, bool full_verify)
{
    memset(ks, 0, sizeof *ks);
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0) return zp_err_set(-errno, "%s: shm_open: %s", name, strerror(errno));
    zp_keystore_hdr_t h;
    struct stat st;
    if (!lock_shared(fd)) { close(fd); return zp_err_set(-ENOENT, "%s: evicted", name); }
    int rc = read_hdr(fd, &h, &st);
    if (!rc && hdr_state(&h) != ZP_KEYSTORE_READY) rc = zp_err_set(-EAGAIN, "%s: not ready (state %u)", name, hdr_state(&h));
    if (!rc) rc = open_ready(ks, fd, name, &h, &st, full_verify || env_full());
    if (!rc) ks->hot = true;
    if (!rc) hold(ks, fd);
    close(fd);
    return rc;
}

void zp_keystore_release(zp_keystore_key_t *ks)
{
    if (!ks) return;
    if (ks->map) munmap(ks->map, ks->map_len);
    if (ks->fd_ok) { touch(ks->fd); close(ks->fd); }   /* drops our LOCK_SH */
    memset(ks, 0, sizeof *ks);
}

/* ---- create ---- */
static int fill(zp_keystore_key_t *ks, int fd, const char *name, const char *prefix, const zp_keystore_src_t *src,
                const struct stat *zst, zp_pool_t *pool, uint64_t budget)
{
    const char *path = src->path;
    uint64_t t0 = zp_now_ns();
    void *map = MAP_FAILED;
    size_t total = 0;
    int rc;
    if (flock(fd, LOCK_EX) < 0) { rc = zp_err_set(-errno, "%s: flock: %s", name, strerror(errno)); goto out_unlink; }
    size_t dlen = 0;
    if ((rc = src->prepare(src->ctx, &dlen)) < 0) goto out_unlink;
    uint64_t nch = (dlen + ZP_KEYSTORE_CHUNK - 1) / ZP_KEYSTORE_CHUNK, doff = data_off_for(nch);
    total = (size_t)(doff + dlen);
    if (budget) {
        int64_t over = zp_keystore_enforce(prefix, budget, total, name);
        if (over > 0)
            zp_log(ZP_LOG_WARN, "key store %s: %zu MiB for %s puts it %lld MiB over its budget of %llu MiB (the "
                   "other keys are in use): filling anyway", prefix, total >> 20, path,
                   (long long)(over >> 20), (unsigned long long)(budget >> 20));
    }
    if (ftruncate(fd, (off_t)total) < 0) { rc = zp_err_set(-errno, "%s: ftruncate %zu: %s", name, total, strerror(errno)); goto out_unlink; }
    /* reserve the pages now: on a full /dev/shm this is ENOSPC here, not a SIGBUS mid-fill */
    if ((rc = posix_fallocate(fd, 0, (off_t)total)) != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
        rc = zp_err_set(-rc, "%s: reserving %zu MiB in shared memory: %s", name, total >> 20, strerror(rc));
        goto out_unlink;
    }
    map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) { rc = zp_err_set(-errno, "%s: mmap %zu: %s", name, total, strerror(errno)); goto out_unlink; }
    zp_keystore_hdr_t *h = map;
    h->magic = ZP_KEYSTORE_MAGIC;
    h->version = ZP_KEYSTORE_VERSION;
    h->creator_pid = (int32_t)getpid();
    atomic_store_explicit(&h->state, ZP_KEYSTORE_FILLING, memory_order_release);

    uint8_t *data = (uint8_t *)map + doff;
    zp_g16_key_t k;
    if ((rc = src->fill(src->ctx, &k, data, dlen, pool)) < 0) goto out_unlink;
    uint64_t *sums = (uint64_t *)((uint8_t *)map + PAGE);
    sum_job_t j = {.data = data, .len = dlen, .sums = sums, .n = nch};
    atomic_init(&j.bad, SIZE_MAX);
    zp_pool_run(pool, sum_run, &j);
    h->curve = (uint32_t)k.curve;
    h->n_vars = k.n_vars;
    h->n_public = k.n_public;
    h->domain_size = k.domain_size;
    h->log_n = k.log_n;
    h->n_coefs = k.n_coefs;
    h->conv = k.conv;
    h->compact = k.compact;
    h->n_a = k.n_a;
    h->n_b = k.n_b;
    h->chunk_shift = 20;
    h->total_bytes = total;
    h->data_off = doff;
    h->data_len = dlen;
    h->n_chunks = nch;
    zp_g16_key_offsets(&h->offs, &k, data);
    h->file_dev = (uint64_t)zst->st_dev;
    h->file_ino = (uint64_t)zst->st_ino;
    h->file_size = (uint64_t)zst->st_size;
    h->file_mtime_ns = (uint64_t)zst->st_mtim.tv_sec * 1000000000u + (uint64_t)zst->st_mtim.tv_nsec;
    if (src->r1cs) {
        char rp[PATH_MAX];
        uint64_t rid[4];
        if ((rc = file_ids(src->r1cs, rid, rp)) < 0) goto out_unlink;
        h->r1cs_dev = rid[0]; h->r1cs_ino = rid[1]; h->r1cs_size = rid[2]; h->r1cs_mtime_ns = rid[3];
    }
    memcpy(h->alpha1, &k.alpha1, sizeof h->alpha1);
    memcpy(h->beta1, &k.beta1, sizeof h->beta1);
    memcpy(h->delta1, &k.delta1, sizeof h->delta1);
    memcpy(h->beta2, &k.beta2, sizeof h->beta2);
    memcpy(h->gamma2, &k.gamma2, sizeof h->gamma2);
    memcpy(h->delta2, &k.delta2, sizeof h->delta2);
    h->table_sum = zp_shm_checksum(sums, nch * 8, ZP_KEYSTORE_MAGIC);
    h->fill_ns = zp_now_ns() - t0;
    char rp[PATH_MAX];
    const char *zp_ = realpath(path, rp) ? rp : path;
    size_t pl = strlen(zp_) < sizeof h->path ? strlen(zp_) : sizeof h->path - 1;   /* a listing label only */
    memcpy(h->path, zp_, pl);
    h->hdr_sum = hdr_checksum(h);
    zp_g16_key_close(&k);   /* not owned: forgets */
    const char *slow = getenv("ZP_TEST_KEYSTORE_FILL_MS");   /* test hook: a long fill */
    if (slow) {
        struct timespec ts = {atoi(slow) / 1000, (long)(atoi(slow) % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    atomic_store_explicit(&h->state, ZP_KEYSTORE_READY, memory_order_release);
    munmap(map, total);
    flock(fd, LOCK_SH);   /* from the creator's lock to a user's (not atomic: an evictor may win; harmless) */

    /* from here on the object is public: open it as any reader does */
    zp_keystore_hdr_t hc;
    struct stat st;
    if ((rc = read_hdr(fd, &hc, &st)) < 0) return rc;
    if ((rc = open_ready(ks, fd, name, &hc, &st, false)) < 0) return rc;
    ks->hot = false;
    ks->load_ns = zp_now_ns() - t0;
    hold(ks, fd);
    return 0;
out_unlink:
    /* our own half-built object: nobody can use it */
    if (map != MAP_FAILED) munmap(map, total);
    shm_unlink(name);
    return rc;
}

/* caller holds LOCK_EX on fd: unlink the name if it still refers to fd's inode */
static void unlink_locked(int fd, const char *name)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_nlink > 0) shm_unlink(name);
}

static uint64_t real_ns(const struct timespec *t) { return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec; }

static int zkey_prepare(void *ctx, size_t *bytes)
{
    const zp_zkey_t *z = ctx;
    *bytes = zp_g16_key_bytes(z);
    if (!*bytes) return zp_err_set(ZP_EFORMAT, "%s: zkey sizes inconsistent or curve unsupported", z->f.path ? z->f.path : "zkey");
    return 0;
}

static int zkey_fill(void *ctx, zp_g16_key_t *k, void *mem, size_t len, zp_pool_t *pool)
{
    return zp_g16_key_load_pool(k, ctx, mem, len, pool);
}

int zp_keystore_get(zp_keystore_key_t *ks, const char *prefix, const zp_zkey_t *z, const char *path,
                    const zp_keystore_opt_t *opt)
{
    zp_keystore_src_t src = {.path = path, .conv = 0, .curve = (uint32_t)z->curve, .n_vars = z->n_vars,
                             .n_public = z->n_public, .domain_size = z->domain_size, .n_coefs = z->n_coefs,
                             .prepare = zkey_prepare, .fill = zkey_fill, .ctx = (void *)(uintptr_t)z};
    return zp_keystore_get_src(ks, prefix, &src, opt);
}

int zp_keystore_get_src(zp_keystore_key_t *ks, const char *prefix, const zp_keystore_src_t *src,
                        const zp_keystore_opt_t *opt)
{
    char name[ZP_KEYSTORE_NAME_MAX];
    struct stat zst;
    int rc;
    const char *path = src->path;
    memset(ks, 0, sizeof *ks);
    if ((rc = zp_keystore_name_r1cs(name, sizeof name, prefix, path, src->r1cs)) < 0) return rc;
    if (stat(path, &zst) < 0) return zp_err_set(-errno, "%s: stat: %s", path, strerror(errno));
    int wait_ms = opt && opt->wait_ms > 0 ? opt->wait_ms : 600000;
    bool full = (opt && opt->full_verify) || env_full();
    uint64_t t_start = zp_now_ns(), deadline = t_start + (uint64_t)wait_ms * 1000000u;
    unsigned rebuilds = 0;
    for (;;) {
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0) {
            rc = fill(ks, fd, name, prefix, src, &zst, opt ? opt->pool : NULL, opt ? opt->budget : 0);
            close(fd);
            return rc;
        }
        if (errno != EEXIST) return zp_err_set(-errno, "%s: shm_open: %s", name, strerror(errno));
        if ((fd = shm_open(name, O_RDONLY, 0)) < 0) {
            if (errno == ENOENT) continue;   /* unlinked meanwhile: try to create it */
            return zp_err_set(-errno, "%s: shm_open: %s", name, strerror(errno));
        }
        zp_keystore_hdr_t h;
        struct stat st;
        if ((rc = read_hdr(fd, &h, &st)) < 0) { close(fd); return rc; }
        uint32_t state = hdr_state(&h);
        if (state == ZP_KEYSTORE_READY) {
            if (!lock_shared(fd)) { close(fd); continue; }   /* evicted meanwhile: create it again */
            rc = open_ready(ks, fd, name, &h, &st, full);
            if (!rc && ((uint32_t)ks->key.curve != src->curve || ks->key.n_vars != src->n_vars ||
                        ks->key.n_public != src->n_public || ks->key.domain_size != src->domain_size ||
                        (src->n_coefs != UINT32_MAX && ks->key.n_coefs != src->n_coefs) || ks->key.conv != src->conv ||
                        h.file_ino != (uint64_t)zst.st_ino || h.file_size != (uint64_t)zst.st_size)) {
                zp_keystore_release(ks);
                rc = zp_err_set(ZP_EFORMAT, "%s: holds a different key than %s", name, path);
            }
            if (!rc) {
                ks->hot = true;
                ks->load_ns = zp_now_ns() - t_start;   /* waits for a creator included */
                hold(ks, fd);
                close(fd);
                return 0;
            }
            flock(fd, LOCK_UN);
            /* only a bad object is rebuilt; our own failure (mmap, memory) leaves it alone */
            if ((rc != ZP_EFORMAT && rc != ZP_EVERSION) || ++rebuilds > 3) { close(fd); return rc; }
            zp_log(ZP_LOG_WARN, "key %s: shm object %s unusable (%s): rebuilding", path, name, zp_err_msg());
            if (flock(fd, LOCK_EX | LOCK_NB) == 0) unlink_locked(fd, name);
            close(fd);
            continue;
        }
        /* not ready: a live creator holds the lock */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if ((rc = read_hdr(fd, &h, &st)) < 0) { close(fd); return rc; }
            state = hdr_state(&h);
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (state == ZP_KEYSTORE_FILLING ||
                (state != ZP_KEYSTORE_READY && real_ns(&now) > real_ns(&st.st_mtim) + STALE_INIT_NS)) {
                bool dead = h.creator_pid > 0 && kill(h.creator_pid, 0) < 0 && errno == ESRCH;
                zp_log(ZP_LOG_WARN, "key %s: shm object %s left unfinished by pid %d (%s): rebuilding", path, name,
                       (int)h.creator_pid, dead ? "dead" : "lock released");
                unlink_locked(fd, name);
                close(fd);
                if (++rebuilds > 3) return zp_err_set(ZP_ESTATE, "%s: rebuilt %u times", name, rebuilds - 1);
                continue;
            }
            flock(fd, LOCK_UN);
        }
        close(fd);
        if (zp_now_ns() > deadline)
            return zp_err_set(ZP_ETIMEDOUT, "%s: another process (pid %d) is still filling it after %d ms", name,
                              (int)h.creator_pid, wait_ms);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

/* "<prefix>-key-<16 hex>" entries of /dev/shm (without the leading '/'): false if d_name is not one */
static bool is_key_object(const char *d_name, const char *want, size_t wl)
{
    return strlen(d_name) == wl + 16 && !strncmp(d_name, want, wl) && strspn(d_name + wl, "0123456789abcdef") == 16;
}

/* *d: /dev/shm opened for the objects of prefix; want[*wl] = "<prefix without '/'>-key-" */
static int objects_dir(const char *prefix, char want[ZP_KEYSTORE_NAME_MAX], size_t *wl, DIR **d)
{
    if (!prefix || prefix[0] != '/' || strchr(prefix + 1, '/'))
        return zp_err_set(-EINVAL, "keystore prefix '%s': must be '/name'", prefix ? prefix : "(null)");
    int n = snprintf(want, ZP_KEYSTORE_NAME_MAX, "%s-key-", prefix + 1);
    if (n < 0 || n >= ZP_KEYSTORE_NAME_MAX) return zp_err_set(ZP_ETOOBIG, "keystore prefix too long");
    *wl = (size_t)n;
    if (!(*d = opendir("/dev/shm"))) return zp_err_set(-errno, "/dev/shm: %s", strerror(errno));
    return 0;
}

int zp_keystore_unlink_all(const char *prefix)
{
    char want[ZP_KEYSTORE_NAME_MAX];
    size_t wl;
    DIR *d;
    int rc = objects_dir(prefix, want, &wl, &d);
    if (rc < 0) return rc;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_key_object(e->d_name, want, wl)) continue;
        char nm[sizeof e->d_name + 2];
        snprintf(nm, sizeof nm, "/%s", e->d_name);
        if (shm_unlink(nm) == 0) n++;
    }
    closedir(d);
    return n;
}

/* ---- budget, listing, eviction ---- */

/* the pids holding a lock on (dev, ino), from /proc/locks */
static unsigned lock_holders(dev_t dev, ino_t ino, int32_t *pids, unsigned max)
{
    FILE *f = fopen("/proc/locks", "r");
    if (!f) return 0;
    char line[256];
    unsigned n = 0;
    while (fgets(line, sizeof line, f)) {
        char type[16], adv[16], mode[16];
        int pid;
        unsigned maj, mnr;
        unsigned long long i;
        if (strstr(line, "->")) continue;   /* a waiter, not a holder */
        if (sscanf(line, "%*d: %15s %15s %15s %d %x:%x:%llu", type, adv, mode, &pid, &maj, &mnr, &i) != 7) continue;
        if (strcmp(type, "FLOCK") || i != (unsigned long long)ino || maj != major(dev) || mnr != minor(dev)) continue;
        bool dup = false;
        for (unsigned k = 0; k < n; k++) dup |= pids[k] == pid;
        if (!dup && n < max) pids[n++] = pid;
    }
    fclose(f);
    return n;
}

static int info_fill(zp_keystore_info_t *in, const char *name)
{
    memset(in, 0, sizeof *in);
    if (strlen(name) >= sizeof in->name) return -ENAMETOOLONG;
    memcpy(in->name, name, strlen(name) + 1);
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0) return -errno;
    zp_keystore_hdr_t h;
    struct stat st;
    if (read_hdr(fd, &h, &st) < 0) { close(fd); return -EIO; }
    in->bytes = (uint64_t)st.st_size;
    in->last_use_ns = real_ns(&st.st_atim);
    in->state = hdr_state(&h);
    in->valid = in->state == ZP_KEYSTORE_READY && h.magic == ZP_KEYSTORE_MAGIC && h.version == ZP_KEYSTORE_VERSION &&
                h.hdr_sum == hdr_checksum(&h);
    if (in->valid) {
        h.path[sizeof h.path - 1] = 0;
        snprintf(in->path, sizeof in->path, "%s", h.path);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) flock(fd, LOCK_UN);
    else in->in_use = true;
    in->n_holders = lock_holders(st.st_dev, st.st_ino, in->holders, ZP_KEYSTORE_MAX_HOLDERS);
    close(fd);
    return 0;
}

static int by_use(const void *a, const void *b)
{
    const zp_keystore_info_t *x = a, *y = b;
    return x->last_use_ns < y->last_use_ns ? -1 : x->last_use_ns > y->last_use_ns;
}

int zp_keystore_list(const char *prefix, zp_keystore_info_t **out, size_t *np)
{
    *out = NULL;
    *np = 0;
    char want[ZP_KEYSTORE_NAME_MAX];
    size_t wl;
    DIR *d;
    int rc = objects_dir(prefix, want, &wl, &d);
    if (rc < 0) return rc;
    zp_keystore_info_t *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_key_object(e->d_name, want, wl)) continue;
        if (n == cap) {
            zp_keystore_info_t *nv = realloc(v, (cap = cap ? cap * 2 : 8) * sizeof *v);
            if (!nv) { free(v); closedir(d); return zp_err_set(-ENOMEM, "key store listing"); }
            v = nv;
        }
        char nm[ZP_KEYSTORE_NAME_MAX + 2];
        snprintf(nm, sizeof nm, "/%s", e->d_name);
        if (info_fill(&v[n], nm) == 0) n++;   /* gone meanwhile: not listed */
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, by_use);
    *out = v;
    *np = n;
    return 0;
}

int zp_keystore_evict(const char *name, bool force)
{
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0) return zp_err_set(-errno, "%s: %s", name, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if (!force) {
            struct stat st;
            int32_t pids[ZP_KEYSTORE_MAX_HOLDERS];
            unsigned k = fstat(fd, &st) == 0 ? lock_holders(st.st_dev, st.st_ino, pids, ZP_KEYSTORE_MAX_HOLDERS) : 0;
            char who[200] = "";
            for (unsigned i = 0, o = 0; i < k && o < sizeof who - 12; i++)
                o += (unsigned)snprintf(who + o, sizeof who - o, "%s%d", i ? ", " : "", (int)pids[i]);
            close(fd);
            return zp_err_set(-EBUSY, "%s is in use (held by pid %s): not evicted (--force unlinks it anyway; its "
                              "users keep their mapping)", name, k ? who : "?");
        }
        if (shm_unlink(name) < 0) { int e = errno; close(fd); return zp_err_set(-e, "%s: unlink: %s", name, strerror(e)); }
        close(fd);
        return 0;
    }
    unlink_locked(fd, name);
    close(fd);
    return 0;
}

int64_t zp_keystore_enforce(const char *prefix, uint64_t budget, uint64_t need, const char *keep)
{
    zp_keystore_info_t *v;
    size_t n;
    if (!budget || zp_keystore_list(prefix, &v, &n) < 0) return 0;
    uint64_t total = need;
    for (size_t i = 0; i < n; i++)
        if (!keep || strcmp(v[i].name, keep)) total += v[i].bytes;
    for (size_t i = 0; i < n && total > budget; i++) {   /* least recently used first */
        if ((keep && !strcmp(v[i].name, keep)) || v[i].in_use) continue;
        int fd = shm_open(v[i].name, O_RDONLY, 0);
        if (fd < 0) { total -= v[i].bytes; continue; }   /* gone already */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            unlink_locked(fd, v[i].name);
            total -= v[i].bytes;
            zp_log(ZP_LOG_INFO, "key store %s: evicted %s (%s, %llu MiB, least recently used) to stay within %llu MiB",
                   prefix, v[i].name, v[i].path[0] ? v[i].path : "?", (unsigned long long)(v[i].bytes >> 20),
                   (unsigned long long)(budget >> 20));
        }
        close(fd);
    }
    free(v);
    return total > budget ? (int64_t)(total - budget) : 0;
}

/* (added, issue 10 slots) the size of a store object holding a key block of key_bytes: header
 * page, chunk checksum table, the block (doc/memory.md; tests/test_shm_memory.c) */
uint64_t zp_keystore_object_bytes(uint64_t key_bytes)
{
    return data_off_for((key_bytes + ZP_KEYSTORE_CHUNK - 1) / ZP_KEYSTORE_CHUNK) + key_bytes;
}
