/* shm.c - the shared-memory arena: create/open/check, the slot word state machine, fenced
 * writes, validated vector access, the payload checksum.
 *
 * Invariants: the handle keeps its own copy of the geometry validated at create/open time and
 * never re-reads it from the (untrusted, shared) header. Every descriptor field that is used to
 * form a pointer is read once and checked against the extent. The slot word changes only by
 * CAS and every change bumps the generation by one (see shm.h for the fencing protocol).
 * Tests: tests/test_shm.c */
#include "shm/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/util.h"

/* slot size classes as validated at create/open (never re-read from the shared header) */
typedef struct {
    uint32_t n_classes;
    uint32_t n[ZP_SHM_MAX_CLASSES], first[ZP_SHM_MAX_CLASSES];
    uint64_t bytes[ZP_SHM_MAX_CLASSES], off[ZP_SHM_MAX_CLASSES];   /* off: from data_off */
} classes_t;

struct zp_shm {
    uint8_t *base;
    size_t total;
    uint32_t n_slots;
    uint64_t slot_bytes, data_off, data_bytes, aux_off, aux_bytes, epoch;   /* slot_bytes: the largest */
    classes_t cl;
    _Atomic uint32_t hint;       /* next slot to try in zp_shm_slot_claim */
    bool huge;
};

static const char *const state_names[ZP_SLOT_NSTATES] = {
    "FREE", "SYNTH", "READY", "PROVING", "PROVED", "FINALIZING", "FAILED", "FINISHED",
};

static const size_t area_cap[ZP_SHM_NAREA] = {
    ZP_SHM_RESULT_BYTES, ZP_SHM_PROOF_BYTES, ZP_SHM_ERR_BYTES,
};

/* ---------------------------------------------------------------- names and paths */

int zp_shm_default_name(char *buf, size_t bufsize, const char *deploy)
{
    if (!deploy || !*deploy || strchr(deploy, '/'))
        return zp_err_set(-EINVAL, "shm: bad deployment name \"%s\"", deploy ? deploy : "(null)");
    int n = snprintf(buf, bufsize, "/zkpipe-%u-%s", (unsigned)getuid(), deploy);
    if (n < 0 || (size_t)n >= bufsize || n > ZP_SHM_NAME_MAX)
        return zp_err_set(-ENAMETOOLONG, "shm: name for deployment \"%s\" too long", deploy);
    return 0;
}

/* POSIX name: "/x" with no other '/'; hugetlb: file name, leading '/' optional. Builds the
 * path to open in out (for hugetlb: dir/name). */
static int make_path(char *out, size_t outsz, const char *name, const char *dir)
{
    if (!name)
        return zp_err_set(-EINVAL, "shm: no name");
    const char *bare = name[0] == '/' ? name + 1 : name;
    size_t n = strlen(bare);
    if (n == 0 || n > ZP_SHM_NAME_MAX || strchr(bare, '/') || strcmp(bare, ".") == 0 ||
        strcmp(bare, "..") == 0)
        return zp_err_set(-EINVAL, "shm: bad name \"%s\" (want \"/name\", no other '/', <= %d chars)",
                          name, ZP_SHM_NAME_MAX);
    int r;
    if (dir) {
        if (!*dir)
            return zp_err_set(-EINVAL, "shm: empty hugetlbfs directory");
        r = snprintf(out, outsz, "%s/%s", dir, bare);
    } else {
        if (name[0] != '/')
            return zp_err_set(-EINVAL, "shm: POSIX shm name \"%s\" must start with '/'", name);
        r = snprintf(out, outsz, "/%s", bare);
    }
    if (r < 0 || (size_t)r >= outsz)
        return zp_err_set(-ENAMETOOLONG, "shm: path for \"%s\" too long", name);
    return 0;
}

static int open_obj(const char *path, bool huge, int flags, mode_t mode)
{
    int fd = huge ? open(path, flags | O_CLOEXEC, mode) : shm_open(path, flags, mode);
    if (fd < 0)
        return -errno;
    return fd;
}

static void unlink_obj(const char *path, bool huge)
{
    if (huge)
        unlink(path);
    else
        shm_unlink(path);
}

int zp_shm_unlink(const char *name, const char *hugetlb_dir)
{
    char path[PATH_MAX];
    int r = make_path(path, sizeof path, name, hugetlb_dir);
    if (r < 0)
        return r;
    if ((hugetlb_dir ? unlink(path) : shm_unlink(path)) < 0) {
        r = -errno;
        return zp_err_set(r, "shm: unlink %s: %s", path, strerror(-r));
    }
    return 0;
}

/* ---------------------------------------------------------------- geometry */

static bool add_ok(uint64_t *r, uint64_t a, uint64_t b) { return !__builtin_add_overflow(a, b, r); }
static bool mul_ok(uint64_t *r, uint64_t a, uint64_t b) { return !__builtin_mul_overflow(a, b, r); }
static bool round_up(uint64_t *r, uint64_t v, uint64_t align)
{
    uint64_t t;
    if (!add_ok(&t, v, align - 1))
        return false;
    *r = t / align * align;
    return true;
}

typedef struct {
    uint32_t n_slots;
    uint64_t slot_bytes, data_off, data_bytes, aux_off, aux_bytes, total;
    classes_t cl;
} geom_t;

/* from a creation config or a header's class table: rounds sizes (round = true) or requires
 * them rounded; classes strictly ascending, at least one slot each, at most ZP_SHM_MAX_SLOTS
 * in all. false (why says why) if not */
static bool geom_make(geom_t *g, uint32_t n_classes, const uint32_t *n, const uint64_t *bytes, uint64_t aux_bytes,
                      bool round, const char **why)
{
    uint64_t table, pos = 0, total_slots = 0;
    memset(g, 0, sizeof *g);
    *why = "sizes overflow";
    if (n_classes == 0 || n_classes > ZP_SHM_MAX_CLASSES) { *why = "class count not in 1..16"; return false; }
    g->cl.n_classes = n_classes;
    for (uint32_t k = 0; k < n_classes; k++) {
        uint64_t b = bytes[k], sz;
        if (n[k] == 0 || b == 0) { *why = "a class with no slots or 0-byte extents"; return false; }
        if (round ? !round_up(&b, b, ZP_SHM_ALIGN) : b % ZP_SHM_ALIGN != 0) {
            *why = round ? "sizes overflow" : "an extent that is not a multiple of 2 MiB";
            return false;
        }
        if (k && b <= g->cl.bytes[k - 1]) { *why = "class extents not strictly ascending"; return false; }
        total_slots += n[k];
        if (total_slots > ZP_SHM_MAX_SLOTS) { *why = "more than 65536 slots"; return false; }
        g->cl.n[k] = n[k];
        g->cl.first[k] = (uint32_t)(total_slots - n[k]);
        g->cl.bytes[k] = b;
        g->cl.off[k] = pos;
        if (!mul_ok(&sz, n[k], b) || !add_ok(&pos, pos, sz)) return false;
    }
    g->n_slots = (uint32_t)total_slots;
    g->slot_bytes = g->cl.bytes[n_classes - 1];
    g->data_bytes = pos;
    if (!round_up(&g->aux_bytes, aux_bytes, ZP_SHM_ALIGN))
        return false;
    table = (uint64_t)g->n_slots * ZP_SHM_DESC_BYTES;
    if (!round_up(&g->data_off, ZP_SHM_HDR_BYTES + table, ZP_SHM_ALIGN) ||
        !add_ok(&g->aux_off, g->data_off, pos) || !add_ok(&g->total, g->aux_off, g->aux_bytes))
        return false;
    if (g->aux_bytes == 0)
        g->aux_off = 0;
    return g->total <= (uint64_t)SIZE_MAX && g->total <= (uint64_t)INT64_MAX;
}

/* validate an (untrusted) header copy against the object size; fills g */
static int geom_check(geom_t *g, const zp_shm_hdr_t *h, uint64_t obj_size, const char *path)
{
    if (h->magic != ZP_SHM_MAGIC)
        return zp_err_set(ZP_EFORMAT, "shm %s: bad magic %#" PRIx64 " (not a zkpipe arena, or not initialised yet)",
                          path, h->magic);
    if (h->version != ZP_SHM_VERSION)
        return zp_err_set(ZP_EVERSION, "shm %s: layout version %u, this build knows %u", path, h->version,
                          ZP_SHM_VERSION);
    if (h->hdr_bytes != ZP_SHM_HDR_BYTES || h->desc_bytes != ZP_SHM_DESC_BYTES || h->table_off != ZP_SHM_HDR_BYTES)
        return zp_err_set(ZP_EFORMAT, "shm %s: header %u / descriptor %u / table offset %" PRIu64
                          " bytes, expected %u / %u / %u", path, h->hdr_bytes, h->desc_bytes, h->table_off,
                          ZP_SHM_HDR_BYTES, ZP_SHM_DESC_BYTES, ZP_SHM_HDR_BYTES);
    if (h->epoch == 0)
        return zp_err_set(ZP_EFORMAT, "shm %s: epoch is 0", path);
    if (h->total_bytes != obj_size)
        return zp_err_set(ZP_EFORMAT, "shm %s: header says %" PRIu64 " bytes, object has %" PRIu64, path,
                          h->total_bytes, obj_size);
    if (h->n_slots == 0 || h->n_slots > ZP_SHM_MAX_SLOTS)
        return zp_err_set(ZP_EFORMAT, "shm %s: %u slots (1..%u)", path, h->n_slots, ZP_SHM_MAX_SLOTS);
    if (h->slot_bytes == 0 || h->slot_bytes % ZP_SHM_ALIGN || h->aux_bytes % ZP_SHM_ALIGN)
        return zp_err_set(ZP_EFORMAT, "shm %s: slot %" PRIu64 " / aux %" PRIu64 " bytes not multiples of 2 MiB",
                          path, h->slot_bytes, h->aux_bytes);
    geom_t e;
    uint32_t nc = h->n_classes, n[ZP_SHM_MAX_CLASSES];
    uint64_t bytes[ZP_SHM_MAX_CLASSES];
    const char *why;
    if (nc == 0 || nc > ZP_SHM_MAX_CLASSES)
        return zp_err_set(ZP_EFORMAT, "shm %s: %u slot classes (1..%u)", path, nc, ZP_SHM_MAX_CLASSES);
    for (uint32_t k = 0; k < nc; k++) { n[k] = h->classes[k].n_slots; bytes[k] = h->classes[k].slot_bytes; }
    if (!geom_make(&e, nc, n, bytes, h->aux_bytes, false, &why))
        return zp_err_set(ZP_EFORMAT, "shm %s: bad slot class table: %s", path, why);
    if (e.n_slots != h->n_slots || e.slot_bytes != h->slot_bytes)
        return zp_err_set(ZP_EFORMAT, "shm %s: slot classes hold %u slots up to %" PRIu64 " bytes, header says %u slots of %"
                          PRIu64, path, e.n_slots, e.slot_bytes, h->n_slots, h->slot_bytes);
    if (e.data_off != h->data_off || e.aux_off != h->aux_off || e.total != h->total_bytes)
        return zp_err_set(ZP_EFORMAT, "shm %s: inconsistent layout: data at %" PRIu64 " (expected %" PRIu64
                          "), aux at %" PRIu64 " (expected %" PRIu64 "), total %" PRIu64 " (expected %" PRIu64 ")",
                          path, h->data_off, e.data_off, h->aux_off, e.aux_off, h->total_bytes, e.total);
    *g = e;
    return 0;
}

static zp_shm_t *handle_new(uint8_t *base, const geom_t *g, uint64_t epoch, bool huge)
{
    zp_shm_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->base = base;
    a->total = (size_t)g->total;
    a->n_slots = g->n_slots;
    a->slot_bytes = g->slot_bytes;
    a->data_off = g->data_off;
    a->data_bytes = g->data_bytes;
    a->cl = g->cl;
    a->aux_off = g->aux_off;
    a->aux_bytes = g->aux_bytes;
    a->epoch = epoch;
    a->huge = huge;
    return a;
}

static void advise_nodump(const zp_shm_t *a)
{
    /* best effort: the vectors are large and worthless in a core dump */
    size_t len = a->total - (size_t)a->data_off;
    if (len && madvise(a->base + a->data_off, len, MADV_DONTDUMP) < 0)
        zp_log(ZP_LOG_DEBUG, "shm: madvise(MADV_DONTDUMP): %s", strerror(errno));
}

/* ---------------------------------------------------------------- create / open / close */

int zp_shm_create(zp_shm_t **ap, const zp_shm_cfg_t *cfg)
{
    char path[PATH_MAX];
    geom_t g = { 0 };
    uint64_t epoch = 0;
    int r, fd;
    *ap = NULL;
    if (!cfg)
        return zp_err_set(-EINVAL, "shm: no configuration");
    if ((r = make_path(path, sizeof path, cfg->name, cfg->hugetlb_dir)) < 0)
        return r;
    uint32_t nc = cfg->n_classes ? cfg->n_classes : 1, n[ZP_SHM_MAX_CLASSES];
    uint64_t bytes[ZP_SHM_MAX_CLASSES];
    const char *why;
    if (cfg->n_classes > ZP_SHM_MAX_CLASSES || (cfg->n_classes && !cfg->classes))
        return zp_err_set(-EINVAL, "shm %s: %u slot classes (1..%u)", path, cfg->n_classes, ZP_SHM_MAX_CLASSES);
    if (!cfg->n_classes && (cfg->n_slots == 0 || cfg->n_slots > ZP_SHM_MAX_SLOTS || cfg->slot_bytes == 0))
        return zp_err_set(-EINVAL, "shm %s: %u slots of %" PRIu64 " bytes (want 1..%u slots, > 0 bytes)", path,
                          cfg->n_slots, cfg->slot_bytes, ZP_SHM_MAX_SLOTS);
    for (uint32_t k = 0; k < nc; k++) {
        n[k] = cfg->n_classes ? cfg->classes[k].n_slots : cfg->n_slots;
        bytes[k] = cfg->n_classes ? cfg->classes[k].slot_bytes : cfg->slot_bytes;
    }
    if (!geom_make(&g, nc, n, bytes, cfg->aux_bytes, true, &why)) {
        bool big = !strcmp(why, "sizes overflow");
        return zp_err_set(big ? ZP_ETOOBIG : -EINVAL, "shm %s: %u slot class(es) (first: %u slots of %" PRIu64
                          " bytes): %s", path, nc, n[0], bytes[0], why);
    }
    while (epoch == 0)
        if ((r = zp_random_bytes(&epoch, sizeof epoch)) < 0)
            return zp_err_set(r, "shm %s: getrandom: %s", path, zp_strerror(r));
    bool huge = cfg->hugetlb_dir != NULL;
    fd = open_obj(path, huge, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return zp_err_set(fd, "shm: create %s: %s", path, strerror(-fd));
    if (ftruncate(fd, (off_t)g.total) < 0) {
        r = zp_err_set(-errno, "shm %s: ftruncate(%" PRIu64 "): %s", path, g.total, strerror(errno));
        goto out_unlink;
    }
    /* reserve the memory now: a full tmpfs/hugetlbfs must be an error here, not a SIGBUS later */
    r = posix_fallocate(fd, 0, (off_t)g.total);
    if (r != 0 && r != EOPNOTSUPP && r != EINVAL) {
        r = zp_err_set(-r, "shm %s: reserving %" PRIu64 " bytes: %s", path, g.total, strerror(r));
        goto out_unlink;
    }
    uint8_t *base = mmap(NULL, (size_t)g.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        r = zp_err_set(-errno, "shm %s: mmap(%" PRIu64 "): %s", path, g.total, strerror(errno));
        goto out_unlink;
    }
    close(fd);
    fd = -1;
    zp_shm_t *a = handle_new(base, &g, epoch, huge);
    if (!a) {
        r = zp_err_set(-ENOMEM, "shm %s: out of memory", path);
        munmap(base, (size_t)g.total);
        goto out_unlink;
    }
    zp_shm_hdr_t *h = (zp_shm_hdr_t *)base;
    memset(base, 0, (size_t)g.data_off);
    h->version = ZP_SHM_VERSION;
    h->hdr_bytes = ZP_SHM_HDR_BYTES;
    h->epoch = epoch;
    h->total_bytes = g.total;
    h->n_slots = g.n_slots;
    h->desc_bytes = ZP_SHM_DESC_BYTES;
    h->table_off = ZP_SHM_HDR_BYTES;
    h->data_off = g.data_off;
    h->slot_bytes = g.slot_bytes;
    h->n_classes = g.cl.n_classes;
    for (uint32_t k = 0; k < g.cl.n_classes; k++) {
        h->classes[k].slot_bytes = g.cl.bytes[k];
        h->classes[k].n_slots = g.cl.n[k];
    }
    h->aux_off = g.aux_off;
    h->aux_bytes = g.aux_bytes;
    h->created_wall_us = zp_wall_us();
    h->creator_pid = (uint32_t)getpid();
    h->flags = huge ? ZP_SHM_F_HUGETLB : 0;
    snprintf(h->name, sizeof h->name, "%s", cfg->name);
    for (uint32_t i = 0; i < g.n_slots; i++)
        atomic_store_explicit(&zp_shm_slot(a, i)->word, zp_shm_word(ZP_SLOT_FREE, 1), memory_order_relaxed);
    /* the magic last: an opener that sees it sees the initialised header and table */
    __atomic_store_n(&h->magic, ZP_SHM_MAGIC, __ATOMIC_RELEASE);
    advise_nodump(a);
    *ap = a;
    return 0;
out_unlink:
    if (fd >= 0)
        close(fd);
    unlink_obj(path, huge);
    return r;
}

int zp_shm_open(zp_shm_t **ap, const char *name, const char *hugetlb_dir, uint64_t expected_epoch)
{
    char path[PATH_MAX];
    zp_shm_hdr_t h;
    struct stat st;
    geom_t g = { 0 };
    int r, fd;
    *ap = NULL;
    if ((r = make_path(path, sizeof path, name, hugetlb_dir)) < 0)
        return r;
    bool huge = hugetlb_dir != NULL;
    fd = open_obj(path, huge, O_RDWR, 0);
    if (fd < 0)
        return zp_err_set(fd, "shm: open %s: %s", path, strerror(-fd));
    /* size first: never map or read past the end of a short object */
    if (fstat(fd, &st) < 0) {
        r = zp_err_set(-errno, "shm %s: fstat: %s", path, strerror(errno));
        goto out_close;
    }
    if (st.st_size < (off_t)ZP_SHM_HDR_BYTES) {
        r = zp_err_set(ZP_EFORMAT, "shm %s: object is %lld bytes, shorter than its %u-byte header", path,
                       (long long)st.st_size, ZP_SHM_HDR_BYTES);
        goto out_close;
    }
    ssize_t got = pread(fd, &h, sizeof h, 0);
    if (got != (ssize_t)sizeof h) {
        r = zp_err_set(got < 0 ? -errno : ZP_EFORMAT, "shm %s: reading the header: %s", path,
                       got < 0 ? strerror(errno) : "short read");
        goto out_close;
    }
    if ((r = geom_check(&g, &h, (uint64_t)st.st_size, path)) < 0)
        goto out_close;
    if (expected_epoch && h.epoch != expected_epoch) {
        r = zp_err_set(ZP_EMISMATCH, "shm %s: epoch %#" PRIx64 ", expected %#" PRIx64 " (arena was recreated)",
                       path, h.epoch, expected_epoch);
        goto out_close;
    }
    uint8_t *base = mmap(NULL, (size_t)g.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        r = zp_err_set(-errno, "shm %s: mmap(%" PRIu64 "): %s", path, g.total, strerror(errno));
        goto out_close;
    }
    close(fd);
    zp_shm_t *a = handle_new(base, &g, h.epoch, huge);
    if (!a) {
        munmap(base, (size_t)g.total);
        return zp_err_set(-ENOMEM, "shm %s: out of memory", path);
    }
    advise_nodump(a);
    *ap = a;
    return 0;
out_close:
    close(fd);
    return r;
}

void zp_shm_close(zp_shm_t **ap)
{
    if (!ap || !*ap)
        return;
    munmap((*ap)->base, (*ap)->total);
    free(*ap);
    *ap = NULL;
}

/* ---------------------------------------------------------------- accessors */

uint32_t zp_shm_n_slots(const zp_shm_t *a) { return a->n_slots; }
uint64_t zp_shm_slot_bytes(const zp_shm_t *a) { return a->slot_bytes; }
uint64_t zp_shm_epoch(const zp_shm_t *a) { return a->epoch; }
const zp_shm_hdr_t *zp_shm_header(const zp_shm_t *a) { return (const zp_shm_hdr_t *)a->base; }

void *zp_shm_base(const zp_shm_t *a, size_t *len)
{
    if (len)
        *len = a->total;
    return a->base;
}

void *zp_shm_data(const zp_shm_t *a, size_t *len)
{
    if (len)
        *len = (size_t)a->data_bytes;
    return a->base + a->data_off;
}

uint32_t zp_shm_n_classes(const zp_shm_t *a) { return a->cl.n_classes; }

bool zp_shm_class_get(const zp_shm_t *a, uint32_t k, zp_shm_class_t *c, uint32_t *first)
{
    if (!a || k >= a->cl.n_classes)
        return false;
    if (c)
        *c = (zp_shm_class_t){.n_slots = a->cl.n[k], .slot_bytes = a->cl.bytes[k]};
    if (first)
        *first = a->cl.first[k];
    return true;
}

uint32_t zp_shm_slot_class(const zp_shm_t *a, uint32_t idx)
{
    if (!a || idx >= a->n_slots)
        return a ? a->cl.n_classes : 0;
    uint32_t k = 0;
    while (k + 1 < a->cl.n_classes && idx >= a->cl.first[k + 1])
        k++;
    return k;
}

uint64_t zp_shm_slot_extent_bytes(const zp_shm_t *a, uint32_t idx)
{
    if (!a || idx >= a->n_slots)
        return 0;
    return a->cl.bytes[zp_shm_slot_class(a, idx)];
}

void *zp_shm_aux(const zp_shm_t *a, size_t *len)
{
    if (len)
        *len = (size_t)a->aux_bytes;
    return a->aux_bytes ? a->base + a->aux_off : NULL;
}

zp_shm_slot_t *zp_shm_slot(const zp_shm_t *a, uint32_t idx)
{
    if (!a || idx >= a->n_slots)
        return NULL;
    return (zp_shm_slot_t *)(a->base + ZP_SHM_HDR_BYTES + (size_t)idx * ZP_SHM_DESC_BYTES);
}

void *zp_shm_slot_extent(const zp_shm_t *a, uint32_t idx)
{
    if (!a || idx >= a->n_slots)
        return NULL;
    uint32_t k = zp_shm_slot_class(a, idx);
    return a->base + a->data_off + a->cl.off[k] + (size_t)(idx - a->cl.first[k]) * a->cl.bytes[k];
}

/* ---------------------------------------------------------------- slot word */

const char *zp_shm_state_name(unsigned state)
{
    return state < ZP_SLOT_NSTATES ? state_names[state] : "?";
}

bool zp_shm_transition_valid(unsigned from, unsigned to)
{
    if (from >= ZP_SLOT_NSTATES || to >= ZP_SLOT_NSTATES)
        return false;
    if (to == ZP_SLOT_FAILED)
        return from != ZP_SLOT_FREE && from != ZP_SLOT_FAILED && from != ZP_SLOT_FINISHED;
    switch (from) {
    case ZP_SLOT_FREE: return to == ZP_SLOT_SYNTH;
    case ZP_SLOT_SYNTH: return to == ZP_SLOT_READY;
    case ZP_SLOT_READY: return to == ZP_SLOT_PROVING;
    case ZP_SLOT_PROVING: return to == ZP_SLOT_PROVED;
    case ZP_SLOT_PROVED: return to == ZP_SLOT_FINALIZING;
    case ZP_SLOT_FINALIZING: return to == ZP_SLOT_FINISHED || to == ZP_SLOT_FREE;
    case ZP_SLOT_FINISHED: return to == ZP_SLOT_FREE;
    case ZP_SLOT_FAILED: return to == ZP_SLOT_FREE;
    default: return false;
    }
}

uint64_t zp_shm_slot_word_load(const zp_shm_t *a, uint32_t idx)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    return s ? atomic_load_explicit(&s->word, memory_order_acquire) : 0;
}

static int stale(uint32_t idx, unsigned state, uint64_t gen, uint64_t found)
{
    return zp_err_set(ZP_ESTALE, "slot %u: expected %s gen %" PRIu64 ", found %s gen %" PRIu64, idx,
                      zp_shm_state_name(state), gen, zp_shm_state_name(zp_shm_word_state(found)),
                      zp_shm_word_gen(found));
}

static int bad_idx(const zp_shm_t *a, uint32_t idx)
{
    return zp_err_set(-EINVAL, "slot %u out of range (%u slots)", idx, a ? a->n_slots : 0);
}

int zp_shm_slot_check(const zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s)
        return bad_idx(a, idx);
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
    return w == zp_shm_word(state, gen) ? 0 : stale(idx, state, gen, w);
}

/* CAS (state, gen) -> (new_state, gen + 1) without edge checks */
static int cas_word(zp_shm_slot_t *s, uint32_t idx, unsigned state, uint64_t gen, unsigned new_state,
                    uint64_t *new_gen)
{
    uint64_t expect = zp_shm_word(state, gen);
    uint64_t ng = (gen + 1) & ZP_SHM_GEN_MASK;
    if (!atomic_compare_exchange_strong_explicit(&s->word, &expect, zp_shm_word(new_state, ng),
                                                 memory_order_acq_rel, memory_order_acquire))
        return stale(idx, state, gen, expect);
    if (new_gen)
        *new_gen = ng;
    return 0;
}

static void clear_desc(zp_shm_slot_t *s)
{
    atomic_store_explicit(&s->owner_pid, 0, memory_order_relaxed);
    atomic_store_explicit(&s->owner_inc, 0, memory_order_relaxed);
    atomic_store_explicit(&s->lease_ns, 0, memory_order_relaxed);
    memset((uint8_t *)s + offsetof(zp_shm_slot_t, job_id), 0,
           sizeof *s - offsetof(zp_shm_slot_t, job_id));
    atomic_thread_fence(memory_order_release);
}

int zp_shm_slot_claim_at(zp_shm_t *a, uint32_t idx, uint64_t *gen)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s)
        return bad_idx(a, idx);
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
    for (;;) {
        if (zp_shm_word_state(w) != ZP_SLOT_FREE)
            return stale(idx, ZP_SLOT_FREE, zp_shm_word_gen(w), w);
        uint64_t ng = (zp_shm_word_gen(w) + 1) & ZP_SHM_GEN_MASK;
        if (atomic_compare_exchange_weak_explicit(&s->word, &w, zp_shm_word(ZP_SLOT_SYNTH, ng),
                                                  memory_order_acq_rel, memory_order_acquire)) {
            clear_desc(s);
            *gen = ng;
            return 0;
        }
    }
}

int zp_shm_slot_claim(zp_shm_t *a, uint32_t *idx, uint64_t *gen)
{
    uint32_t n = a->n_slots;
    uint32_t start = atomic_fetch_add_explicit(&a->hint, 1, memory_order_relaxed) % n;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (start + k) % n;
        if (zp_shm_word_state(zp_shm_slot_word_load(a, i)) != ZP_SLOT_FREE)
            continue;
        if (zp_shm_slot_claim_at(a, i, gen) == 0) {
            *idx = i;
            zp_err_clear();
            return 0;
        }
    }
    return zp_err_set(-EAGAIN, "shm: no free slot (%u slots)", n);
}

int zp_shm_slot_transition(zp_shm_t *a, uint32_t idx, unsigned expected_state, uint64_t expected_gen,
                           unsigned new_state, uint64_t *new_gen)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s)
        return bad_idx(a, idx);
    if (!zp_shm_transition_valid(expected_state, new_state))
        return zp_err_set(ZP_ESTATE, "slot %u: no transition %s -> %s", idx, zp_shm_state_name(expected_state),
                          zp_shm_state_name(new_state));
    return cas_word(s, idx, expected_state, expected_gen, new_state, new_gen);
}

int zp_shm_slot_reset(zp_shm_t *a, uint32_t idx, uint64_t expected_gen, unsigned new_state, uint64_t *new_gen)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s)
        return bad_idx(a, idx);
    if (new_state >= ZP_SLOT_NSTATES)
        return zp_err_set(-EINVAL, "slot %u: reset to invalid state %u", idx, new_state);
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
    for (;;) {
        if (zp_shm_word_gen(w) != expected_gen)
            return zp_err_set(ZP_ESTALE, "slot %u: reset expected gen %" PRIu64 ", found %s gen %" PRIu64, idx,
                              expected_gen, zp_shm_state_name(zp_shm_word_state(w)), zp_shm_word_gen(w));
        uint64_t ng = (expected_gen + 1) & ZP_SHM_GEN_MASK;
        if (atomic_compare_exchange_weak_explicit(&s->word, &w, zp_shm_word(new_state, ng), memory_order_acq_rel,
                                                  memory_order_acquire)) {
            /* the owner stays: it may still write until the broker knows it is gone
             * (zp_shm_slot_clear_owner; doc/slot-protocol.md, quarantine) */
            atomic_store_explicit(&s->lease_ns, 0, memory_order_release);
            if (new_gen)
                *new_gen = ng;
            return 0;
        }
    }
}

int zp_shm_slot_set_owner(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, uint64_t pid,
                          uint64_t incarnation, uint64_t lease_ns)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    int r;
    if ((r = zp_shm_slot_check(a, idx, state, gen)) < 0)
        return r;
    atomic_store_explicit(&s->owner_pid, pid, memory_order_relaxed);
    atomic_store_explicit(&s->owner_inc, incarnation, memory_order_relaxed);
    atomic_store_explicit(&s->lease_ns, lease_ns, memory_order_release);
    return zp_shm_slot_check(a, idx, state, gen);
}

void zp_shm_slot_clear_owner(zp_shm_t *a, uint32_t idx)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s)
        return;
    atomic_store_explicit(&s->owner_pid, 0, memory_order_relaxed);
    atomic_store_explicit(&s->owner_inc, 0, memory_order_relaxed);
    atomic_store_explicit(&s->lease_ns, 0, memory_order_release);
}

/* ---------------------------------------------------------------- vectors */

static bool layout_calc(uint64_t off[ZP_SHM_NVEC], uint64_t len[ZP_SHM_NVEC], uint64_t *end, uint32_t n_vars,
                        uint32_t domain_size, uint32_t scalar_bytes)
{
    uint64_t pos = 0;
    for (unsigned v = 0; v < ZP_SHM_NVEC; v++) {
        uint64_t cnt = v == ZP_SHM_VEC_W ? n_vars : domain_size;
        if (!round_up(&pos, pos, ZP_SHM_VEC_ALIGN))
            return false;
        off[v] = pos;
        len[v] = cnt * scalar_bytes;   /* < 2^64: both factors are 32-bit */
        if (!add_ok(&pos, pos, len[v]))
            return false;
    }
    *end = pos;
    return true;
}

uint64_t zp_shm_slot_bytes_for(uint32_t n_vars, uint32_t domain_size, uint32_t scalar_bytes)
{
    uint64_t off[ZP_SHM_NVEC], len[ZP_SHM_NVEC], end, r;
    if (!layout_calc(off, len, &end, n_vars, domain_size, scalar_bytes) || !round_up(&r, end, ZP_SHM_ALIGN))
        return 0;
    return r ? r : ZP_SHM_ALIGN;
}

int zp_shm_slot_layout(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, uint32_t n_vars,
                       uint32_t domain_size, uint32_t scalar_bytes)
{
    uint64_t off[ZP_SHM_NVEC], len[ZP_SHM_NVEC], end;
    int r;
    if ((r = zp_shm_slot_check(a, idx, state, gen)) < 0)
        return r;
    if (scalar_bytes == 0 || scalar_bytes % 8)
        return zp_err_set(-EINVAL, "slot %u: scalar size %u", idx, scalar_bytes);
    uint64_t ext = zp_shm_slot_extent_bytes(a, idx);
    if (!layout_calc(off, len, &end, n_vars, domain_size, scalar_bytes) || end > ext)
        return zp_err_set(ZP_ETOOBIG, "slot %u: %u vars and domain %u need %" PRIu64 " bytes, the slot has %" PRIu64
                          " (the arena's largest slots: %" PRIu64 ")", idx, n_vars, domain_size,
                          zp_shm_slot_bytes_for(n_vars, domain_size, scalar_bytes), ext, a->slot_bytes);
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    s->n_vars = n_vars;
    s->domain_size = domain_size;
    s->scalar_bytes = scalar_bytes;
    memcpy(s->vec_off, off, sizeof off);
    memcpy(s->vec_len, len, sizeof len);
    return 0;
}

/* read a shared u64 exactly once (the other side may change it under us) */
static uint64_t once64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static uint32_t once32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

void *zp_shm_slot_vec(const zp_shm_t *a, uint32_t idx, unsigned which, size_t *len)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s) {
        bad_idx(a, idx);
        return NULL;
    }
    if (which >= ZP_SHM_NVEC) {
        zp_err_set(-EINVAL, "slot %u: no vector %u", idx, which);
        return NULL;
    }
    uint64_t off = once64(&s->vec_off[which]), l = once64(&s->vec_len[which]);
    uint64_t ext = zp_shm_slot_extent_bytes(a, idx);
    if (off % 64 || l > ext || off > ext - l) {
        zp_err_set(ZP_EFORMAT, "slot %u: vector %u at offset %" PRIu64 " length %" PRIu64
                   " outside the %" PRIu64 "-byte extent (or misaligned)", idx, which, off, l, ext);
        return NULL;
    }
    if (len)
        *len = (size_t)l;
    return (uint8_t *)zp_shm_slot_extent(a, idx) + off;
}

/* ---------------------------------------------------------------- checksum */

#define CK1 UINT64_C(0x9E3779B97F4A7C15)
#define CK2 UINT64_C(0xD6E8FEB86659FD93)
#define CK3 UINT64_C(0xA0761D6478BD642F)

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t lane(uint64_t acc, uint64_t x) { return rotl64(acc + x * CK2, 29) * CK1; }

static inline uint64_t avalanche(uint64_t h)
{
    h ^= h >> 31;
    h *= CK3;
    h ^= h >> 29;
    h *= CK2;
    h ^= h >> 32;
    return h;
}

uint64_t zp_shm_checksum(const void *p, size_t n, uint64_t seed)
{
    const uint8_t *b = p;
    uint64_t h;
    size_t i = 0;
    if (n >= 32) {
        uint64_t v0 = seed + CK1 + CK2, v1 = seed + CK2, v2 = seed, v3 = seed - CK1;
        for (; i + 32 <= n; i += 32) {
            v0 = lane(v0, le64(b + i));
            v1 = lane(v1, le64(b + i + 8));
            v2 = lane(v2, le64(b + i + 16));
            v3 = lane(v3, le64(b + i + 24));
        }
        h = rotl64(v0, 1) + rotl64(v1, 7) + rotl64(v2, 12) + rotl64(v3, 18);
        h = (h ^ lane(0, v0)) * CK1 + CK3;
        h = (h ^ lane(0, v1)) * CK1 + CK3;
        h = (h ^ lane(0, v2)) * CK1 + CK3;
        h = (h ^ lane(0, v3)) * CK1 + CK3;
    } else {
        h = seed + CK3;
    }
    h += (uint64_t)n;
    for (; i + 8 <= n; i += 8)
        h = rotl64(h ^ lane(0, le64(b + i)), 27) * CK1 + CK2;
    if (i < n) {
        uint64_t t = 0;
        for (unsigned k = 0; i < n; i++, k += 8)
            t |= (uint64_t)b[i] << k;
        h = rotl64(h ^ (t * CK3), 23) * CK2 + CK1;
    }
    return avalanche(h);
}

/* ---------------------------------------------------------------- payload seal */

/* The payload checksum is chunked so that a pool can compute it in parallel, with a value that
 * does not depend on the pool: every vector in `mask` (in index order) is cut into
 * ZP_SHM_SUM_CHUNK-byte chunks; chunk i of vector v hashes with seed `seed + (v << 48) + i`;
 * the payload sum is zp_shm_checksum over the table of chunk sums (little-endian u64, vectors
 * in order) with seed `seed ^ mask`. The table is small (8 bytes per MiB: 128 KiB at 16 GiB). */
typedef struct {
    const uint8_t *p[ZP_SHM_NVEC];
    size_t len[ZP_SHM_NVEC], first[ZP_SHM_NVEC];   /* first: index of the vector's first chunk */
    unsigned vec[ZP_SHM_NVEC], nv;
    size_t n_chunks;
    uint64_t seed;
    uint64_t *sums;
} sum_job_t;

static void sum_chunks(void *arg, unsigned tid, unsigned nt)
{
    sum_job_t *j = arg;
    size_t lo, hi;
    zp_split(j->n_chunks, tid, nt, &lo, &hi);
    unsigned k = 0;
    for (size_t c = lo; c < hi; c++) {
        while (k + 1 < j->nv && c >= j->first[k + 1]) k++;
        size_t i = c - j->first[k], off = i * ZP_SHM_SUM_CHUNK;
        size_t n = j->len[k] - off < ZP_SHM_SUM_CHUNK ? j->len[k] - off : ZP_SHM_SUM_CHUNK;
        uint64_t h = zp_shm_checksum(j->p[k] + off, n, j->seed + ((uint64_t)j->vec[k] << 48) + i);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        h = __builtin_bswap64(h);
#endif
        j->sums[c] = h;
    }
}

static int payload_sum(const zp_shm_t *a, uint32_t idx, uint32_t mask, uint64_t seed, zp_pool_t *pool, uint64_t *sum,
                       const zp_shm_rs_t *rs)
{
    sum_job_t j = {.seed = seed};
    for (unsigned v = 0; v < ZP_SHM_NVEC; v++) {
        if (!(mask & ZP_SHM_VEC_MASK(v)))
            continue;
        size_t len;
        const void *p = zp_shm_slot_vec(a, idx, v, &len);
        if (!p)
            return ZP_EFORMAT;
        j.p[j.nv] = p;
        j.len[j.nv] = len;
        j.first[j.nv] = j.n_chunks;
        j.vec[j.nv++] = v;
        j.n_chunks += (len + ZP_SHM_SUM_CHUNK - 1) / ZP_SHM_SUM_CHUNK;
    }
    uint64_t small[512];
    j.sums = j.n_chunks <= sizeof small / sizeof small[0] ? small : malloc(j.n_chunks * sizeof *j.sums);
    if (!j.sums)
        return zp_err_set(-ENOMEM, "slot %u: payload checksum table of %zu chunks", idx, j.n_chunks);
    if (j.n_chunks)
        zp_pool_run(j.n_chunks > 1 ? pool : NULL, sum_chunks, &j);
    *sum = zp_shm_checksum(j.sums, j.n_chunks * sizeof *j.sums, seed ^ mask);
    if (j.sums != small)
        free(j.sums);
    if (mask & ZP_SHM_PAYLOAD_RS) {   /* the rs area (a copy), chained after the vectors' sum */
        uint64_t two[2] = {*sum, zp_shm_checksum(rs, sizeof *rs, seed ^ UINT64_C(0x7273000000000000))};
        *sum = zp_shm_checksum(two, sizeof two, seed ^ mask);
    }
    return 0;
}

int zp_shm_payload_seal_pool(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, uint32_t mask,
                             unsigned new_state, uint64_t *new_gen, zp_pool_t *pool)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    uint64_t sum;
    int r;
    if (!s)
        return bad_idx(a, idx);
    if (!(mask & ((1u << ZP_SHM_NVEC) - 1)) || (mask & ~ZP_SHM_PAYLOAD_VALID))
        return zp_err_set(-EINVAL, "slot %u: payload mask %#x", idx, mask);
    if (!zp_shm_transition_valid(state, new_state))
        return zp_err_set(ZP_ESTATE, "slot %u: no transition %s -> %s", idx, zp_shm_state_name(state),
                          zp_shm_state_name(new_state));
    if ((r = zp_shm_slot_check(a, idx, state, gen)) < 0)
        return r;
    uint64_t ng = (gen + 1) & ZP_SHM_GEN_MASK;
    zp_shm_rs_t rs;
    memcpy(&rs, &s->rs, sizeof rs);
    if ((r = payload_sum(a, idx, mask, ng, pool, &sum, &rs)) < 0)
        return r;
    __atomic_store_n(&s->payload_gen, 0, __ATOMIC_RELAXED);
    s->payload_sum = sum;
    s->payload_mask = mask;
    __atomic_store_n(&s->payload_gen, ng, __ATOMIC_RELEASE);
    return cas_word(s, idx, state, gen, new_state, new_gen);
}

int zp_shm_payload_seal(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, uint32_t mask,
                        unsigned new_state, uint64_t *new_gen)
{
    return zp_shm_payload_seal_pool(a, idx, state, gen, mask, new_state, new_gen, NULL);
}

int zp_shm_payload_verify_rs(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen, zp_pool_t *pool,
                             zp_shm_rs_t *rs_out, bool *has_rs)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    uint64_t sum;
    int r;
    if (has_rs)
        *has_rs = false;
    if (!s)
        return bad_idx(a, idx);
    if ((r = zp_shm_payload_stamp(a, idx, sealed_gen)) < 0)
        return r;
    uint32_t mask = once32(&s->payload_mask);
    uint64_t want = once64(&s->payload_sum);
    zp_shm_rs_t rs;
    memcpy(&rs, &s->rs, sizeof rs);
    if ((r = payload_sum(a, idx, mask, sealed_gen, pool, &sum, &rs)) < 0)
        return r;
    if (sum != want)
        return zp_err_set(ZP_EFORMAT, "slot %u: payload checksum %#" PRIx64 ", sealed %#" PRIx64
                          " (overwritten after the seal?)", idx, sum, want);
    if (__atomic_load_n(&s->payload_gen, __ATOMIC_ACQUIRE) != sealed_gen)
        return zp_err_set(ZP_ESTALE, "slot %u: payload resealed while verifying", idx);
    if (mask & ZP_SHM_PAYLOAD_RS) {
        if (rs_out)
            memcpy(rs_out, &rs, sizeof rs);
        if (has_rs)
            *has_rs = true;
    }
    return 0;
}

int zp_shm_payload_verify_pool(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen, zp_pool_t *pool)
{
    return zp_shm_payload_verify_rs(a, idx, sealed_gen, pool, NULL, NULL);
}

int zp_shm_slot_set_rs(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, const uint8_t r[32],
                       const uint8_t s[32])
{
    zp_shm_slot_t *d = zp_shm_slot(a, idx);
    int rc;
    if (!d)
        return bad_idx(a, idx);
    if ((rc = zp_shm_slot_check(a, idx, state, gen)) < 0)
        return rc;
    memcpy(d->rs.r, r, 32);
    memcpy(d->rs.s, s, 32);
    memset(d->rs.pad, 0, sizeof d->rs.pad);
    return zp_shm_slot_check(a, idx, state, gen);
}

int zp_shm_payload_verify(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen)
{
    return zp_shm_payload_verify_pool(a, idx, sealed_gen, NULL);
}

int zp_shm_payload_stamp(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s)
        return bad_idx(a, idx);
    uint64_t pg = __atomic_load_n(&s->payload_gen, __ATOMIC_ACQUIRE);
    if (pg != sealed_gen || sealed_gen == 0)
        return zp_err_set(ZP_ESTALE, "slot %u: payload sealed at gen %" PRIu64 ", expected %" PRIu64, idx, pg,
                          sealed_gen);
    uint32_t mask = once32(&s->payload_mask);
    if (!(mask & ((1u << ZP_SHM_NVEC) - 1)) || (mask & ~ZP_SHM_PAYLOAD_VALID))
        return zp_err_set(ZP_EFORMAT, "slot %u: payload mask %#x", idx, mask);
    for (unsigned v = 0; v < ZP_SHM_NVEC; v++)
        if ((mask & ZP_SHM_VEC_MASK(v)) && !zp_shm_slot_vec(a, idx, v, NULL))
            return ZP_EFORMAT;
    return 0;
}

/* ---------------------------------------------------------------- fenced areas */

static uint8_t *area_ptr(zp_shm_slot_t *s, zp_shm_area_t area)
{
    switch (area) {
    case ZP_SHM_AREA_RESULT: return s->result;
    case ZP_SHM_AREA_PROOF: return s->proof;
    case ZP_SHM_AREA_ERR: return (uint8_t *)s->err;
    default: return NULL;
    }
}

static uint64_t area_seed(uint64_t gen, zp_shm_area_t area) { return gen * CK1 ^ (uint64_t)area; }

int zp_shm_commit(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, unsigned new_state, zp_shm_area_t area,
                  const void *data, size_t len, uint64_t *new_gen)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    int r;
    if (!s)
        return bad_idx(a, idx);
    if ((unsigned)area >= ZP_SHM_NAREA)
        return zp_err_set(-EINVAL, "slot %u: no area %d", idx, (int)area);
    if (!zp_shm_transition_valid(state, new_state))
        return zp_err_set(ZP_ESTATE, "slot %u: no transition %s -> %s", idx, zp_shm_state_name(state),
                          zp_shm_state_name(new_state));
    if (area == ZP_SHM_AREA_ERR) {
        len = data ? strnlen(data, len) : 0;
        if (len > ZP_SHM_ERR_BYTES - 1)
            len = ZP_SHM_ERR_BYTES - 1;
    } else if (len > area_cap[area]) {
        return zp_err_set(ZP_ETOOBIG, "slot %u: %zu bytes for a %zu-byte area", idx, len, area_cap[area]);
    }
    /* fence 1: we hold the slot now */
    if ((r = zp_shm_slot_check(a, idx, state, gen)) < 0)
        return r;
    uint64_t ng = (gen + 1) & ZP_SHM_GEN_MASK;
    uint8_t *dst = area_ptr(s, area);
    __atomic_store_n(&s->area_gen[area], 0, __ATOMIC_RELAXED);
    atomic_thread_fence(memory_order_release);
    if (len)
        memcpy(dst, data, len);
    if (area == ZP_SHM_AREA_ERR)
        dst[len] = 0;
    s->area_len[area] = (uint32_t)len;
    s->area_sum[area] = zp_shm_checksum(data, len, area_seed(ng, area));
    __atomic_store_n(&s->area_gen[area], ng, __ATOMIC_RELEASE);
    /* fence 2: the CAS publishes the write; if it fails the write is void (wrong stamp for
     * whoever holds the slot now, who never learns ng from us) */
    if ((r = cas_word(s, idx, state, gen, new_state, new_gen)) < 0) {
        char why[200];
        snprintf(why, sizeof why, "%s", zp_err_msg());
        return zp_err_set(r, "%s; the write to area %d is void", why, (int)area);
    }
    return 0;
}

int zp_shm_slot_fail(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, const char *msg, uint64_t *new_gen)
{
    if (!msg)
        msg = "";
    return zp_shm_commit(a, idx, state, gen, ZP_SLOT_FAILED, ZP_SHM_AREA_ERR, msg, strlen(msg), new_gen);
}

int zp_shm_area_read(const zp_shm_t *a, uint32_t idx, zp_shm_area_t area, uint64_t commit_gen, void *out,
                     size_t cap, size_t *len)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s)
        return bad_idx(a, idx);
    if ((unsigned)area >= ZP_SHM_NAREA)
        return zp_err_set(-EINVAL, "slot %u: no area %d", idx, (int)area);
    uint64_t g = __atomic_load_n(&s->area_gen[area], __ATOMIC_ACQUIRE);
    if (g != commit_gen || commit_gen == 0)
        return zp_err_set(ZP_ESTALE, "slot %u: area %d stamped gen %" PRIu64 ", expected %" PRIu64, idx, (int)area,
                          g, commit_gen);
    uint32_t l = once32(&s->area_len[area]);
    uint64_t want = once64(&s->area_sum[area]);
    if (l > area_cap[area] || (area == ZP_SHM_AREA_ERR && l >= ZP_SHM_ERR_BYTES))
        return zp_err_set(ZP_EFORMAT, "slot %u: area %d length %u", idx, (int)area, l);
    if (l > cap)
        return zp_err_set(ZP_ETOOBIG, "slot %u: area %d holds %u bytes, buffer %zu", idx, (int)area, l, cap);
    memcpy(out, area_ptr(s, area), l);   /* copy first, then check the copy */
    if (zp_shm_checksum(out, l, area_seed(commit_gen, area)) != want)
        return zp_err_set(ZP_EFORMAT, "slot %u: area %d checksum mismatch (torn or stale write)", idx, (int)area);
    atomic_thread_fence(memory_order_acquire);
    if (__atomic_load_n(&s->area_gen[area], __ATOMIC_RELAXED) != commit_gen)
        return zp_err_set(ZP_ESTALE, "slot %u: area %d rewritten while reading", idx, (int)area);
    if (area == ZP_SHM_AREA_ERR && l < cap)
        ((char *)out)[l] = 0;
    if (len)
        *len = l;
    return 0;
}

uint64_t zp_shm_area_gen(const zp_shm_t *a, uint32_t idx, zp_shm_area_t area)
{
    zp_shm_slot_t *s = zp_shm_slot(a, idx);
    if (!s || (unsigned)area >= ZP_SHM_NAREA)
        return 0;
    return __atomic_load_n(&s->area_gen[area], __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------- stats */

void zp_shm_stats(const zp_shm_t *a, zp_shm_stats_t *st)
{
    memset(st, 0, sizeof *st);
    st->n_slots = a->n_slots;
    for (uint32_t i = 0; i < a->n_slots; i++) {
        unsigned s = zp_shm_word_state(zp_shm_slot_word_load(a, i));
        if (s < ZP_SLOT_NSTATES)
            st->by_state[s]++;
        else
            st->invalid++;
    }
}

/* ---- the finished proof ---- */
static int final_region(uint8_t **p, size_t *cap, const zp_shm_t *a, uint32_t idx)
{
    size_t hl;
    uint8_t *h = zp_shm_slot_vec(a, idx, ZP_SHM_VEC_H, &hl);   /* validates off + len <= extent */
    uint8_t *ext = zp_shm_slot_extent(a, idx);
    if (!h || !ext) return zp_err_set(ZP_EFORMAT, "slot %u: no valid h vector for the finished proof", idx);
    /* a zero-length (or cleared) h would put the text at offset 0: the witness (issue 8 defect 3) */
    if (hl == 0 || h == ext)
        return zp_err_set(ZP_EFORMAT, "slot %u: h vector of %zu bytes at offset %zu: no room for the finished proof",
                          idx, hl, (size_t)(h - ext));
    *p = h;
    *cap = (size_t)(zp_shm_slot_extent_bytes(a, idx) - (uint64_t)(h - ext));
    return 0;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

int zp_shm_final_commit(zp_shm_t *a, uint32_t idx, uint64_t gen, const char *proof_json, size_t pj_len,
                        const char *public_json, size_t pub_len, const uint8_t *bin, size_t bin_len,
                        uint64_t *new_gen)
{
    uint8_t *txt = NULL, rec[ZP_SHM_PROOF_BYTES];
    size_t cap = 0;
    int rc;
    if (pj_len > ZP_SHM_FINAL_TEXT_MAX || pub_len > ZP_SHM_FINAL_TEXT_MAX || bin_len > ZP_SHM_FINAL_BIN_MAX)
        return zp_err_set(ZP_ETOOBIG, "finished proof: %zu / %zu text bytes, %zu binary bytes", pj_len, pub_len,
                          bin_len);
    if ((rc = zp_shm_slot_check(a, idx, ZP_SLOT_FINALIZING, gen)) < 0) return rc;
    if ((rc = final_region(&txt, &cap, a, idx)) < 0) return rc;
    if (pj_len + pub_len > cap)
        return zp_err_set(ZP_ETOOBIG, "finished proof: %zu text bytes, %zu free in the slot", pj_len + pub_len, cap);
    memcpy(txt, proof_json, pj_len);
    memcpy(txt + pj_len, public_json, pub_len);
    put32(rec, ZP_SHM_FINAL_MAGIC);
    put32(rec + 4, (uint32_t)pj_len);
    put32(rec + 8, (uint32_t)pub_len);
    put32(rec + 12, (uint32_t)bin_len);
    uint64_t sum = zp_shm_checksum(txt, pj_len + pub_len, gen + 1);
    memcpy(rec + 16, &sum, 8);
    if (bin_len) memcpy(rec + ZP_SHM_FINAL_HDR, bin, bin_len);
    return zp_shm_commit(a, idx, ZP_SLOT_FINALIZING, gen, ZP_SLOT_FINISHED, ZP_SHM_AREA_PROOF, rec,
                         ZP_SHM_FINAL_HDR + bin_len, new_gen);
}

int zp_shm_final_read(char **proof_json, char **public_json, uint8_t *bin, size_t bin_cap, size_t *bin_len,
                      const zp_shm_t *a, uint32_t idx, uint64_t commit_gen)
{
    uint8_t rec[ZP_SHM_PROOF_BYTES], *txt = NULL;
    size_t rl = 0, cap = 0;
    int rc;
    *proof_json = *public_json = NULL;
    *bin_len = 0;
    if ((rc = zp_shm_area_read(a, idx, ZP_SHM_AREA_PROOF, commit_gen, rec, sizeof rec, &rl)) < 0) return rc;
    if (rl < ZP_SHM_FINAL_HDR || get32(rec) != ZP_SHM_FINAL_MAGIC)
        return zp_err_set(ZP_EFORMAT, "slot %u: proof area is not a finished-proof record", idx);
    uint32_t pl = get32(rec + 4), ul = get32(rec + 8), bl = get32(rec + 12);
    uint64_t sum;
    memcpy(&sum, rec + 16, 8);
    if (pl == 0 || ul == 0 || pl > ZP_SHM_FINAL_TEXT_MAX || ul > ZP_SHM_FINAL_TEXT_MAX ||
        (size_t)bl != rl - ZP_SHM_FINAL_HDR || bl > bin_cap)
        return zp_err_set(ZP_EFORMAT, "slot %u: finished-proof record with bad lengths (%u, %u, %u)", idx, pl, ul, bl);
    if ((rc = final_region(&txt, &cap, a, idx)) < 0) return rc;
    if ((size_t)pl + ul > cap) return zp_err_set(ZP_EFORMAT, "slot %u: finished-proof text beyond the extent", idx);
    /* copy once, then check the copy: it is what we hand out */
    char *pj = malloc((size_t)pl + ul + 1), *pu = malloc((size_t)ul + 1);
    if (!pj || !pu) { free(pj); free(pu); return zp_err_set(-ENOMEM, "finished proof"); }
    memcpy(pj, txt, (size_t)pl + ul);
    /* the slot must still be FINISHED at commit_gen after the copy: freed and reused meanwhile,
     * the text may be the next job's data, whatever its checksum says (issue 8 defect 3) */
    atomic_thread_fence(memory_order_acquire);
    if ((rc = zp_shm_slot_check(a, idx, ZP_SLOT_FINISHED, commit_gen)) < 0 ||
        zp_shm_area_gen(a, idx, ZP_SHM_AREA_PROOF) != commit_gen) {
        free(pj); free(pu);
        return zp_err_set(ZP_ESTALE, "slot %u: moved while its finished proof was read", idx);
    }
    bool ok = zp_shm_checksum(pj, (size_t)pl + ul, commit_gen) == sum && !memchr(pj, 0, (size_t)pl + ul);
    memcpy(pu, pj + pl, ul);
    pj[pl] = pu[ul] = 0;
    if (!ok) {
        free(pj); free(pu);
        return zp_err_set(ZP_EFORMAT, "slot %u: finished-proof text does not match its checksum", idx);
    }
    memcpy(bin, rec + ZP_SHM_FINAL_HDR, bl);
    *bin_len = bl;
    *proof_json = pj;
    *public_json = pu;
    return 0;
}
