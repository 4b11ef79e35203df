/* c2.c - libzkpipe_c2 (zkpipe_c2.h): supraseal-c2's C interface. In-process mode on the CPU
 * backend through the issue-29 bellman prover (lib/groth16/assignment.h); group mode through a
 * running `zkpipe up` (libzkpipe-client): each circuit becomes a pre-synthesized partition, a
 * vectors file in /dev/shm (lib/fmt/vecs.h) that the group's synthesizer copies into a slot. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c2/zkpipe_c2.h"
#include "client/zkpipe-client.h"
#include "lib/fmt/bellman.h"
#include "lib/fmt/vecs.h"
#include "lib/groth16/assignment.h"
#include "lib/util/util.h"

#define C2_API __attribute__((visibility("default")))

static_assert(sizeof(Assignment) == sizeof(zp_g16_assignment_t), "Assignment = zp_g16_assignment_t");
static_assert(offsetof(Assignment, a) == offsetof(zp_g16_assignment_t, a), "Assignment.a");
static_assert(offsetof(Assignment, aux_assignment_size) == offsetof(zp_g16_assignment_t, aux_assignment_size), "aux");
static_assert(sizeof(fr_t) == sizeof(zp_fr_bls12_381_t), "fr_t");
static_assert(sizeof(zkpipe_c2_g1_affine_t) == sizeof(zp_g1a_bls12_381_t), "G1 affine");
static_assert(sizeof(zkpipe_c2_g2_affine_t) == sizeof(zp_g2a_bls12_381_t), "G2 affine");
static_assert(offsetof(zp_g2a_bls12_381_t, y) == offsetof(zkpipe_c2_g2_affine_t, y_c0), "G2 y");
static_assert(offsetof(zp_fq2_bls12_381_t, c1) == sizeof(fp_t), "Fp2 c0 then c1");
static_assert(sizeof(groth16_proof) == 384, "groth16_proof: 384 bytes");
static_assert(sizeof(RustError) == 16 && sizeof(SRS) == sizeof(void *), "RustError, SRS");

/* ---- RustError ---- */
static RustError c2_ok(void) { return (RustError){0, NULL}; }

static RustError __attribute__((format(printf, 2, 3))) c2_err(int code, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return (RustError){code ? code : EINVAL, strdup(buf)};
}

/* a zkpipe error: positive errno-like code, message "<what>: <zp_strerror>: <detail>" */
static RustError c2_zp_err(int ret, const char *what)
{
    const char *d = zp_err_msg();
    return c2_err(ret < 0 ? -ret : ret, "%s: %s%s%s", what, zp_strerror(ret), d && *d ? ": " : "", d ? d : "");
}

/* ---- mode ---- */
typedef enum { C2_INPROCESS, C2_GROUP, C2_AUTO } c2_mode_t;

/* the broker's socket exists where libzkpipe-client looks ($ZP_RUNTIME_DIR, else
 * $XDG_RUNTIME_DIR/zkpipe, else /tmp/zkpipe-<uid>; zkpipe-client.h): auto's cheap first test */
static bool c2_group_socket(void)
{
    char p[600];
    const char *e;
    if ((e = getenv("ZP_RUNTIME_DIR")) && *e) snprintf(p, sizeof p, "%s/broker.sock", e);
    else if ((e = getenv("XDG_RUNTIME_DIR")) && *e) snprintf(p, sizeof p, "%s/zkpipe/broker.sock", e);
    else snprintf(p, sizeof p, "/tmp/zkpipe-%u/broker.sock", (unsigned)getuid());
    struct stat st;
    return stat(p, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* ZKPIPE_C2_MODE; auto is returned as is (c2_auto_group decides where it matters) */
static int c2_mode(c2_mode_t *m, RustError *e)
{
    const char *v = getenv("ZKPIPE_C2_MODE");
    if (!v || !*v || !strcmp(v, "auto")) *m = C2_AUTO;
    else if (!strcmp(v, "inprocess")) *m = C2_INPROCESS;
    else if (!strcmp(v, "group")) *m = C2_GROUP;
    else {
        *e = c2_err(EINVAL, "ZKPIPE_C2_MODE=%.64s: unknown mode (group, inprocess or auto)", v);
        return -1;
    }
    return 0;
}

/* group mode: a client of the broker libzkpipe-client finds ($ZP_RUNTIME_DIR, ...), connected;
 * a RustError naming the runtime directory when no group answers */
static zp_client_t *c2_client_ms(RustError *e, const char *what, int probe_ms)
{
    zp_client_t *c = zp_client_new(NULL);
    if (!c) {
        *e = c2_err(ENOMEM, "%s: out of memory", what);
        return NULL;
    }
    const char *t = getenv("ZKPIPE_C2_TIMEOUT_MS");
    long ms = t ? strtol(t, NULL, 10) : 0;
    if (probe_ms > 0) zp_client_set_timeout(c, probe_ms);
    else if (ms > 0 && ms < 86400000) zp_client_set_timeout(c, (int)ms);
    int rc = zp_client_connect(c);
    if (rc != ZP_CLIENT_OK) {
        *e = c2_err(rc == ZP_CLIENT_UNREACHABLE ? ECONNREFUSED : EIO,
                    "%s: ZKPIPE_C2_MODE=group: no zkpipe group answers: %s (start one with `zkpipe up`, or use "
                    "ZKPIPE_C2_MODE=inprocess)", what, zp_client_errmsg(c));
        zp_client_destroy(&c);
    }
    return c;
}

static zp_client_t *c2_client(RustError *e, const char *what) { return c2_client_ms(e, what, 0); }

/* auto: the group when one answers (its socket is there and a connect succeeds within 2 s),
 * else in-process */
static bool c2_auto_group(void)
{
    if (!c2_group_socket()) return false;
    RustError e;
    zp_client_t *c = c2_client_ms(&e, "auto", 2000);
    if (!c) {
        free(e.message);
        return false;
    }
    zp_client_destroy(&c);
    return true;
}

/* ---- SRS: refcounted opened keys, a registry of live ones, a cache by path ---- */
/* Handles given out (SRS.ptr, the pending pointer) are ids from one counter, never reused and
 * never dereferenced: a stale handle cannot alias a newer object at the same address. */
static atomic_uintptr_t c2_next_id = 0x2c0001;
static uintptr_t c2_new_id(void) { return atomic_fetch_add(&c2_next_id, 2); }

typedef struct c2_srs {
    struct c2_srs *next;   /* registry of live keys */
    uintptr_t id;          /* SRS.ptr */
    unsigned refs;         /* handles + the cache's own reference */
    bool cached;
    bool group;            /* created in group mode: its proofs go through the group */
    char *path;
    char *gpath;           /* group: the absolute path jobs name */
    zp_bkey_t bk;
    zp_g16_bkey_t k;
} c2_srs_t;

static pthread_mutex_t srs_mu = PTHREAD_MUTEX_INITIALIZER;
static c2_srs_t *srs_live;

/* the live key of handle h (srs_mu held), or NULL */
static c2_srs_t *srs_find(const void *h)
{
    for (c2_srs_t *p = srs_live; p; p = p->next)
        if (p->id == (uintptr_t)h) return p;
    return NULL;
}

/* called with srs_mu held */
static void srs_unref_locked(c2_srs_t *s)
{
    if (--s->refs) return;
    for (c2_srs_t **pp = &srs_live; *pp; pp = &(*pp)->next)
        if (*pp == s) { *pp = s->next; break; }
    zp_bkey_close(&s->bk);
    free(s->path);
    free(s->gpath);
    free(s);
}

/* group mode: the caller needs the verifying key and the sections' counts only (the group
 * holds the key): the verifying-key block is read (ZP_BKEY_VK_ONLY: points checked), the
 * counts of h, l, a, b_g1, b_g2 are read where Parameters::write puts them (a big-endian u32
 * before each section's uncompressed points), each section checked to lie inside the file.
 * The points themselves are not read here: a 2^27 .params stays on disk (the group's import
 * checks them). */
static int c2_open_counts(zp_bkey_t *bk, const char *path)
{
    int r = zp_bkey_open(bk, path, ZP_BKEY_VK_ONLY);
    if (r) return r;
    FILE *f = fopen(path, "rb");
    if (!f) {
        r = zp_err_set(-errno, "%s: %s", path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(fileno(f), &st) < 0) {
        r = zp_err_set(-errno, "%s: %s", path, strerror(errno));
        goto fail;
    }
    uint64_t off = bk->end, size = (uint64_t)st.st_size;
    static const char *names[] = {"h", "l", "a", "b_g1", "b_g2"};
    uint32_t *dst[] = {&bk->n_h, &bk->n_l, &bk->n_a, &bk->n_b_g1, &bk->n_b_g2};
    for (int i = 0; i < 5; i++) {
        uint8_t be[4];
        if (off + 4 > size || fseeko(f, (off_t)off, SEEK_SET) || fread(be, 1, 4, f) != 4) {
            r = zp_err_set(ZP_EFORMAT, "%s: %s: truncated: no count at offset %llu (%llu bytes)", path, names[i],
                           (unsigned long long)off, (unsigned long long)size);
            goto fail;
        }
        uint32_t n = (uint32_t)be[0] << 24 | (uint32_t)be[1] << 16 | (uint32_t)be[2] << 8 | be[3];
        uint64_t end = off + 4 + (uint64_t)n * (i == 4 ? 192 : 96);
        if (end > size) {
            r = zp_err_set(ZP_EFORMAT, "%s: %s: count %u needs %llu bytes, the file has %llu", path, names[i], n,
                           (unsigned long long)end, (unsigned long long)size);
            goto fail;
        }
        *dst[i] = n;
        off = end;
    }
    fclose(f);
    return 0;
fail:
    if (f) fclose(f);
    zp_bkey_close(bk);
    return r;
}

C2_API RustError create_SRS(SRS *ret, const char *path, bool cache)
{
    RustError e;
    c2_mode_t m;
    if (!ret) return c2_err(EINVAL, "create_SRS: ret is NULL");
    ret->ptr = NULL;
    if (!path) return c2_err(EINVAL, "create_SRS: path is NULL");
    if (c2_mode(&m, &e)) return e;
    if (m == C2_AUTO) m = c2_auto_group() ? C2_GROUP : C2_INPROCESS;
    if (m == C2_GROUP) {   /* the group must answer now; the key is imported with the first job */
        zp_client_t *c = c2_client(&e, "create_SRS");
        if (!c) return e;
        zp_client_destroy(&c);
    }
    bool group = m == C2_GROUP;
    if (cache) {
        pthread_mutex_lock(&srs_mu);
        for (c2_srs_t *p = srs_live; p; p = p->next)
            if (p->cached && p->group == group && !strcmp(p->path, path)) {
                p->refs++;
                ret->ptr = (const void *)p->id;
                pthread_mutex_unlock(&srs_mu);
                return c2_ok();
            }
        pthread_mutex_unlock(&srs_mu);
    }
    zp_keyfmt_t fmt;
    int r = zp_key_format_of_file(&fmt, path);
    if (r) return c2_zp_err(r, "create_SRS: cannot read the parameters file");
    if (fmt != ZP_KEYFMT_BELLMAN)
        return c2_err(EINVAL, "create_SRS: %.512s: not a bellman parameters file (%s)", path,
                      fmt == ZP_KEYFMT_ZKEY ? "a snarkjs zkey" : "unknown format");
    c2_srs_t *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return c2_err(ENOMEM, "create_SRS: out of memory");
    }
    r = group ? c2_open_counts(&s->bk, path) : zp_bkey_open(&s->bk, path, ZP_BKEY_USE_RECORD);
    if (r) {
        free(s->path);
        free(s);
        return c2_zp_err(r, "create_SRS: cannot open the parameters file");
    }
    zp_g16_bkey_from_fmt(&s->k, &s->bk);
    s->refs = 1;
    s->group = group;
    if (group) {   /* the broker and the synthesizers open the key by its absolute path */
        char abs[4096];
        if (!realpath(path, abs) || !(s->gpath = strdup(abs))) {
            zp_bkey_close(&s->bk);
            free(s->path);
            free(s);
            return c2_err(ENOMEM, "create_SRS: %.512s: cannot make the path absolute", path);
        }
    }
    pthread_mutex_lock(&srs_mu);
    if (cache) {
        /* another thread may have opened the same path meanwhile: keep the first */
        for (c2_srs_t *p = srs_live; p; p = p->next)
            if (p->cached && p->group == group && !strcmp(p->path, path)) {
                p->refs++;
                ret->ptr = (const void *)p->id;
                pthread_mutex_unlock(&srs_mu);
                zp_bkey_close(&s->bk);
                free(s->path);
                free(s->gpath);
                free(s);
                return c2_ok();
            }
        s->cached = true;
        s->refs++;   /* the cache's reference */
    }
    s->id = c2_new_id();
    s->next = srs_live;
    srs_live = s;
    ret->ptr = (const void *)s->id;
    pthread_mutex_unlock(&srs_mu);
    return c2_ok();
}

C2_API void evict_SRS(const SRS *srs)
{
    if (!srs || !srs->ptr) return;
    pthread_mutex_lock(&srs_mu);
    c2_srs_t *s = srs_find(srs->ptr);
    if (s && s->cached) {
        s->cached = false;
        srs_unref_locked(s);
    }
    pthread_mutex_unlock(&srs_mu);
}

C2_API void drop_SRS(const SRS *srs)
{
    if (!srs || !srs->ptr) return;
    pthread_mutex_lock(&srs_mu);
    c2_srs_t *s = srs_find(srs->ptr);
    if (s) srs_unref_locked(s);
    else fprintf(stderr, "libzkpipe_c2: drop_SRS: %p is not a live SRS (dropped twice?): ignored\n", srs->ptr);
    pthread_mutex_unlock(&srs_mu);
}

C2_API SRS clone_SRS(const SRS *srs)
{
    SRS out = {NULL};
    if (!srs || !srs->ptr) return out;
    pthread_mutex_lock(&srs_mu);
    c2_srs_t *s = srs_find(srs->ptr);
    if (s) {
        s->refs++;
        out.ptr = (const void *)s->id;
    }
    pthread_mutex_unlock(&srs_mu);
    return out;
}

/* ---- a, b, c handed out by the library (zkpipe_c2_alloc_abc): start takes them by reference ---- */
typedef struct c2_abc {
    struct c2_abc *next;   /* registry of live blocks */
    size_t n;
    unsigned refs;         /* the caller's + one per pending proof using it */
    zp_fr_bls12_381_t *base;
    zp_vecs_t *v;          /* group mode: the block is a, b, c of this vectors file (/dev/shm) */
    bool used;             /* group mode: submitted once (its file is that partition's) */
} c2_abc_t;

static atomic_uint c2_file_seq;

/* vectors files of this user's callers that died before finalize (kill -9): their pid no
 * longer exists. Once per process, at the first file made. (A pid reused since is taken as
 * alive: its files stay, the safe side.) */
static void c2_sweep_dead(void)
{
    static atomic_bool done;
    if (atomic_exchange(&done, true)) return;
    DIR *d = opendir("/dev/shm");
    if (!d) return;
    char pre[64];
    int pl = snprintf(pre, sizeof pre, "zkpipe-c2-%u-", (unsigned)getuid());
    struct dirent *de;
    while ((de = readdir(d))) {
        unsigned long pid, seq;
        char tail[8];
        if (strncmp(de->d_name, pre, (size_t)pl) ||
            sscanf(de->d_name + pl, "%lu-%lu.%7s", &pid, &seq, tail) != 3 || strcmp(tail, "vecs") || pid == 0 ||
            pid > 4194304 || (pid_t)pid == getpid())
            continue;
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
            char p[600];
            snprintf(p, sizeof p, "/dev/shm/%s", de->d_name);
            unlink(p);
        }
    }
    closedir(d);
}

/* /dev/shm/zkpipe-c2-<uid>-<pid>-<seq>.vecs: a name nobody else makes */
static void c2_vecs_path(char *out, size_t cap)
{
    c2_sweep_dead();
    snprintf(out, cap, "/dev/shm/zkpipe-c2-%u-%d-%u.vecs", (unsigned)getuid(), (int)getpid(),
             atomic_fetch_add(&c2_file_seq, 1));
}

static pthread_mutex_t abc_mu = PTHREAD_MUTEX_INITIALIZER;
static c2_abc_t *abc_live;
static atomic_size_t abc_copied;   /* bytes of a, b, c copied by start, since load */

static void abc_unref_locked(c2_abc_t *b)
{
    if (--b->refs) return;
    for (c2_abc_t **pp = &abc_live; *pp; pp = &(*pp)->next)
        if (*pp == b) { *pp = b->next; break; }
    if (b->v) {
        unlink(b->v->path);
        zp_vecs_close(b->v);
        free(b->v);
    } else {
        free(b->base);
    }
    free(b);
}

C2_API RustError zkpipe_c2_alloc_abc(size_t n, fr_t **a, fr_t **b, fr_t **c)
{
    if (!a || !b || !c) return c2_err(EINVAL, "zkpipe_c2_alloc_abc: a, b or c is NULL");
    *a = *b = *c = NULL;
    if (n == 0 || n > ((size_t)1 << 32)) return c2_err(EINVAL, "zkpipe_c2_alloc_abc: n = %zu (1 .. 2^32)", n);
    RustError e;
    c2_mode_t m;
    if (c2_mode(&m, &e)) return e;
    c2_abc_t *blk = calloc(1, sizeof *blk);
    void *mem = NULL;
    if (!blk) return c2_err(ENOMEM, "zkpipe_c2_alloc_abc: out of memory");
    if (m == C2_AUTO) m = c2_group_socket() ? C2_GROUP : C2_INPROCESS;   /* a file serves in-process too */
    if (m == C2_GROUP) {   /* a, b, c inside the vectors file the group's synthesizer will map */
        char path[128];
        c2_vecs_path(path, sizeof path);
        if (!(blk->v = calloc(1, sizeof *blk->v))) {
            free(blk);
            return c2_err(ENOMEM, "zkpipe_c2_alloc_abc: out of memory");
        }
        /* room for w up to 2 n values reserved: w is written at start without moving a, b, c */
        int r = zp_vecs_create(blk->v, path, ZP_CURVE_BLS12_381, n, 2 * (uint64_t)n + 64);
        if (r) {
            free(blk->v);
            free(blk);
            return c2_zp_err(r, "zkpipe_c2_alloc_abc: shared memory for a, b, c");
        }
        mem = blk->v->a;
    } else if (posix_memalign(&mem, 64, 3 * n * sizeof(zp_fr_bls12_381_t))) {
        free(blk);
        return c2_err(ENOMEM, "zkpipe_c2_alloc_abc: %zu bytes", 3 * n * sizeof(zp_fr_bls12_381_t));
    }
    blk->n = n;
    blk->refs = 1;
    blk->base = mem;
    pthread_mutex_lock(&abc_mu);
    blk->next = abc_live;
    abc_live = blk;
    pthread_mutex_unlock(&abc_mu);
    *a = (fr_t *)blk->base;
    *b = (fr_t *)(blk->base + n);
    *c = (fr_t *)(blk->base + 2 * n);
    return c2_ok();
}

C2_API void zkpipe_c2_free_abc(fr_t *a)
{
    if (!a) return;
    pthread_mutex_lock(&abc_mu);
    for (c2_abc_t *p = abc_live; p; p = p->next)
        if ((void *)p->base == (void *)a) {
            abc_unref_locked(p);
            break;
        }
    pthread_mutex_unlock(&abc_mu);
}

C2_API size_t zkpipe_c2_bytes_copied(void) { return atomic_load(&abc_copied); }

/* the live block whose a, b, c these are (abc_size of them fit), with one more reference */
static c2_abc_t *abc_take(const Assignment *as, bool group)
{
    c2_abc_t *r = NULL;
    pthread_mutex_lock(&abc_mu);
    for (c2_abc_t *p = abc_live; p; p = p->next)
        if ((const void *)as->a == (void *)p->base && (const void *)as->b == (void *)(p->base + p->n) &&
            (const void *)as->c == (void *)(p->base + 2 * p->n) && as->abc_size <= p->n &&
            (!group || (p->v && !p->used))) {   /* group: a file is one partition's, once */
            p->refs++;
            if (group) p->used = true;
            r = p;
            break;
        }
    pthread_mutex_unlock(&abc_mu);
    return r;
}

/* ---- pending proofs ---- */
typedef struct c2_pending {
    struct c2_pending *next;   /* registry of live handles */
    uintptr_t id;              /* the handle given out */
    size_t n;
    c2_srs_t *srs;             /* one reference held */
    zp_g16_assignment_t *as;   /* n; a, b, c point into abc */
    zp_fr_bls12_381_t *abc;    /* the copies of a, b, c */
    c2_abc_t **blk;            /* n: the library's own a, b, c block taken by reference, or NULL */
    zp_scalar_t *r, *s;        /* standard form */
    zp_g16_proof_t *out;
    pthread_t th;
    bool th_started;
    /* group mode: one job, partition i = vectors file path[i] (unlinked at the end unless it is
     * a block's own file, which the block's last reference unlinks) */
    bool group;
    zp_client_t *cl;
    uint64_t job;
    char (*vpath)[512];
    bool *vown;
    atomic_bool abandon;
    int ret;                   /* 0 or the first failure */
    size_t failed;             /* its circuit */
    char msg[512];
} c2_pending_t;

static pthread_mutex_t pend_mu = PTHREAD_MUTEX_INITIALIZER;
static c2_pending_t *pend_live;

/* unlinks the pending proof of handle h if live and returns it (the caller then owns it) */
static c2_pending_t *pend_take(const void *h)
{
    c2_pending_t *found = NULL;
    pthread_mutex_lock(&pend_mu);
    for (c2_pending_t **pp = &pend_live; *pp; pp = &(*pp)->next)
        if ((*pp)->id == (uintptr_t)h) {
            found = *pp;
            *pp = found->next;
            break;
        }
    pthread_mutex_unlock(&pend_mu);
    return found;
}

static void pend_free(c2_pending_t *p)
{
    if (p->vpath)
        for (size_t i = 0; i < p->n; i++)
            if (p->vown[i] && p->vpath[i][0]) unlink(p->vpath[i]);
    free(p->vpath);
    free(p->vown);
    if (p->cl) zp_client_destroy(&p->cl);
    if (p->srs) {
        pthread_mutex_lock(&srs_mu);
        srs_unref_locked(p->srs);
        pthread_mutex_unlock(&srs_mu);
    }
    if (p->blk) {
        pthread_mutex_lock(&abc_mu);
        for (size_t i = 0; i < p->n; i++)
            if (p->blk[i]) abc_unref_locked(p->blk[i]);
        pthread_mutex_unlock(&abc_mu);
    }
    free(p->blk);
    free(p->as);
    free(p->abc);
    free(p->r);
    free(p->s);
    free(p->out);
    free(p);
}

static unsigned c2_threads(void)
{
    const char *v = getenv("ZKPIPE_C2_THREADS");
    long t = v ? strtol(v, NULL, 10) : 0;
    return t > 0 && t <= 1024 ? (unsigned)t : 0;
}

static void *c2_prove_thread(void *arg)
{
    c2_pending_t *p = arg;
    zp_pool_t *pool = zp_pool_new(c2_threads());
    for (size_t i = 0; i < p->n && !atomic_load(&p->abandon); i++) {
        int r = zp_g16_bellman_prove(&p->out[i], &p->srs->k, &p->as[i], &p->r[i], &p->s[i], pool, NULL);
        if (r) {
            p->ret = r;
            p->failed = i;
            snprintf(p->msg, sizeof p->msg, "%s: %s", zp_strerror(r), zp_err_msg());
            break;
        }
    }
    zp_pool_destroy(&pool);
    return NULL;
}

static bool bits_ok(const uint64_t *d, size_t bit_len) { return d || bit_len == 0; }

/* the checks the prover does not make (pointers, counts against the pointers' presence);
 * the key-dependent ones (|L|, |A|, |B|, |IC|, |H|, bit lengths, popcounts) are
 * zp_g16_bellman_check's */
static int check_one(RustError *e, const Assignment *a, size_t i, const c2_srs_t *s)
{
    const char *f = NULL;
    if (!bits_ok(a->a_aux_density, a->a_aux_bit_len)) f = "a_aux_density";
    else if (!bits_ok(a->b_inp_density, a->b_inp_bit_len)) f = "b_inp_density";
    else if (!bits_ok(a->b_aux_density, a->b_aux_bit_len)) f = "b_aux_density";
    else if (!a->a && a->abc_size) f = "a";
    else if (!a->b && a->abc_size) f = "b";
    else if (!a->c && a->abc_size) f = "c";
    else if (!a->inp_assignment_data && a->inp_assignment_size) f = "inp_assignment_data";
    else if (!a->aux_assignment_data && a->aux_assignment_size) f = "aux_assignment_data";
    if (f) {
        *e = c2_err(EINVAL, "provers[%zu].%s is NULL", i, f);
        return -1;
    }
    if (a->abc_size == 0 || a->inp_assignment_size == 0) {
        *e = c2_err(EINVAL, "provers[%zu].%s is 0", i, a->abc_size == 0 ? "abc_size" : "inp_assignment_size");
        return -1;
    }
    if (a->abc_size > ((size_t)1 << 32) || a->aux_assignment_size > ((size_t)1 << 40)) {
        *e = c2_err(EINVAL, "provers[%zu]: abc_size %zu / aux_assignment_size %zu out of range", i, a->abc_size,
                    a->aux_assignment_size);
        return -1;
    }
    int r = zp_g16_bellman_check(&s->k, (const zp_g16_assignment_t *)a);
    if (r) {
        *e = c2_zp_err(r, "provers[] against the SRS");
        char *m = e->message;
        if (m) {
            char buf[1100];
            snprintf(buf, sizeof buf, "provers[%zu]: %s", i, m);
            free(m);
            e->message = strdup(buf);
        }
        return -1;
    }
    return 0;
}

static int scalar_in(RustError *e, zp_scalar_t *out, const fr_t *in, const char *name, size_t i)
{
    zp_fr_bls12_381_t m;
    memcpy(&m, in, sizeof m);
    if (!zp_fr_bls12_381_is_canonical(&m)) {
        *e = c2_err(EINVAL, "%s[%zu] is not a canonical fr_t (Montgomery limbs >= r)", name, i);
        return -1;
    }
    zp_fr_bls12_381_t st;
    zp_fr_bls12_381_from_mont(&st, &m);
    memcpy(out, &st, sizeof *out);
    return 0;
}


/* ---- group mode: circuits as pre-synthesized partitions of one job ---- */
/* w = inputs ++ aux in standard form, the densities and the caller's r, s (standard form: the
 * group's finalizer blinds with them, ZP_VECS_F_RS) into v (a, b, c already there) */
static int c2_vecs_fill(zp_vecs_t *v, const Assignment *as, const zp_scalar_t *r, const zp_scalar_t *s)
{
    uint64_t n_w = as->inp_assignment_size + as->aux_assignment_size;
    int r_ = zp_vecs_set_w(v, n_w, as->inp_assignment_size, as->abc_size);
    if (r_) return r_;
    zp_fr_bls12_381_t *w = (zp_fr_bls12_381_t *)v->w;
    const zp_fr_bls12_381_t *in = (const zp_fr_bls12_381_t *)as->inp_assignment_data,
                            *aux = (const zp_fr_bls12_381_t *)as->aux_assignment_data;
    for (size_t i = 0; i < as->inp_assignment_size; i++) zp_fr_bls12_381_from_mont(&w[i], &in[i]);
    for (size_t i = 0; i < as->aux_assignment_size; i++) zp_fr_bls12_381_from_mont(&w[as->inp_assignment_size + i], &aux[i]);
    const uint64_t *bm[3] = {as->a_aux_density, as->b_inp_density, as->b_aux_density};
    const uint64_t bits[3] = {as->a_aux_bit_len, as->b_inp_bit_len, as->b_aux_bit_len};
    if ((r_ = zp_vecs_set_density(v, bm, bits))) return r_;
    return zp_vecs_set_rs(v, r->l, s->l);
}

/* the vectors file of circuit i: the caller's block (zero copy) or a new file with a copy of
 * a, b, c; *copied += bytes of a, b, c copied */
static int c2_group_part(RustError *e, c2_pending_t *p, size_t i, const Assignment *as, size_t *copied)
{
    int r;
    if (p->blk[i]) {   /* zkpipe_c2_alloc_abc's file: a, b, c are where synthesis wrote them */
        snprintf(p->vpath[i], sizeof p->vpath[i], "%s", p->blk[i]->v->path);
        p->vown[i] = false;
        if ((r = c2_vecs_fill(p->blk[i]->v, as, &p->r[i], &p->s[i]))) goto fail;
        return 0;
    }
    zp_vecs_t v;
    c2_vecs_path(p->vpath[i], sizeof p->vpath[i]);
    if ((r = zp_vecs_create(&v, p->vpath[i], ZP_CURVE_BLS12_381, as->abc_size,
                            as->inp_assignment_size + as->aux_assignment_size))) {
        p->vpath[i][0] = 0;
        goto fail;
    }
    p->vown[i] = true;
    size_t nb = as->abc_size * sizeof(fr_t);
    memcpy(v.a, as->a, nb);
    memcpy(v.b, as->b, nb);
    memcpy(v.c, as->c, nb);
    *copied += 3 * nb;
    r = c2_vecs_fill(&v, as, &p->r[i], &p->s[i]);
    zp_vecs_close(&v);
    if (r) goto fail;
    return 0;
fail:
    *e = c2_zp_err(r, "generate_groth16_proofs: the vectors file in shared memory");
    return -1;
}


/* path may be reused for d: a regular file of this user that nobody else may write, holding
 * exactly d (another local user can make a file of that name in /dev/shm first) */
static bool c2_density_reusable(const char *path, const zp_g16_bdensity_t *d, size_t wi, size_t wa)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022)) return false;
    zp_g16_bdensity_t f;
    uint64_t *mem = NULL;
    if (zp_g16_bdensity_read(&f, &mem, path) != 0) {
        zp_err_clear();
        return false;
    }
    bool same = f.n_inp == d->n_inp && f.n_aux == d->n_aux && f.abc_size == d->abc_size &&
                !memcmp(f.a_aux, d->a_aux, wa * 8) && !memcmp(f.b_inp, d->b_inp, wi * 8) &&
                !memcmp(f.b_aux, d->b_aux, wa * 8);
    free(mem);
    return same;
}

/* bellman's densities of the circuit, for the group's import of the .params (its A and B
 * queries are compacted by them; the import expands them once): issue 29's density file
 * (zp_g16_bdensity_write: "ZPBDENS1", n_inp, n_aux, abc_size, the a_aux, b_inp, b_aux words)
 * named in the job's r1cs field, at a path that depends only on its content, so every job of
 * one circuit names the same file and the group imports the key once. Written once (tmp +
 * rename); kept (small: bits / 8 bytes) for later jobs and other processes of this user. */
static int c2_density_file(RustError *e, char *out, size_t cap, const Assignment *as)
{
    size_t wi = (as->inp_assignment_size + 63) / 64, wa = (as->aux_assignment_size + 63) / 64;
    uint64_t *m = calloc(wi + 2 * wa + 1, sizeof *m);
    if (!m) {
        *e = c2_err(ENOMEM, "generate_groth16_proofs: out of memory");
        return -1;
    }
    /* copies with the bits past each length cleared (the file's rule) */
    uint64_t *ma = m, *mi = m + wa, *mb = m + wa + wi;
    memcpy(ma, as->a_aux_density, wa * 8);
    memcpy(mi, as->b_inp_density, wi * 8);
    memcpy(mb, as->b_aux_density, wa * 8);
    if (as->aux_assignment_size % 64) {
        uint64_t keep = (1ull << (as->aux_assignment_size % 64)) - 1;
        ma[wa - 1] &= keep;
        mb[wa - 1] &= keep;
    }
    if (as->inp_assignment_size % 64) mi[wi - 1] &= (1ull << (as->inp_assignment_size % 64)) - 1;
    zp_g16_bdensity_t d = {.a_aux = ma, .b_inp = mi, .b_aux = mb, .n_inp = as->inp_assignment_size,
                           .n_aux = as->aux_assignment_size, .abc_size = as->abc_size};
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a over the sizes and the words */
    const uint64_t hdr[3] = {d.n_inp, d.n_aux, d.abc_size};
    for (int i = 0; i < 3; i++) h = (h ^ hdr[i]) * 0x100000001b3ull;
    for (size_t k = 0; k < wi + 2 * wa; k++) h = (h ^ m[k]) * 0x100000001b3ull;
    snprintf(out, cap, "/dev/shm/zkpipe-c2-%u-%016llx.dens", (unsigned)getuid(), (unsigned long long)h);
    int rc = 0;
    if (!c2_density_reusable(out, &d, wi, wa)) {
        /* a fresh file under a name nobody can have made (mkstemp: O_EXCL, 0600), renamed over
         * the shared name; when that name is someone else's (sticky /dev/shm: rename refused)
         * or holds other bits, this job names its own file instead */
        char tmp[600];
        snprintf(tmp, sizeof tmp, "%s.XXXXXX", out);
        int fd = mkstemp(tmp);
        if (fd < 0) rc = zp_err_set(-errno, "%s: %s", tmp, strerror(errno));
        else {
            close(fd);
            rc = zp_g16_bdensity_write(tmp, &d);
        }
        if (!rc && rename(tmp, out) != 0) {
            if (strlen(tmp) < cap) snprintf(out, cap, "%s", tmp);   /* keep the private one */
            else rc = zp_err_set(-errno, "%s: rename: %s", out, strerror(errno));
        }
        if (rc) {
            if (fd >= 0) unlink(tmp);
            *e = c2_zp_err(rc, "generate_groth16_proofs: the density file");
        }
    }
    free(m);
    return rc ? -1 : 0;
}

/* one SRS, one circuit: every circuit's densities are the first one's */
static int c2_same_density(RustError *e, const Assignment *a, const Assignment *b, size_t i)
{
    const uint64_t *da[3] = {a->a_aux_density, a->b_inp_density, a->b_aux_density};
    const uint64_t *db[3] = {b->a_aux_density, b->b_inp_density, b->b_aux_density};
    const size_t la[3] = {a->a_aux_bit_len, a->b_inp_bit_len, a->b_aux_bit_len};
    const char *nm[3] = {"a_aux_density", "b_inp_density", "b_aux_density"};
    for (int k = 0; k < 3; k++) {
        size_t full = la[k] / 64, rest = la[k] % 64;
        bool same = !memcmp(da[k], db[k], full * 8) &&
                    (!rest || ((da[k][full] ^ db[k][full]) & ((1ull << rest) - 1)) == 0);
        if (!same) {
            *e = c2_err(EINVAL, "provers[%zu].%s differs from provers[0]'s: a group job proves one circuit (one "
                                "density) per batch", i, nm[k]);
            return -1;
        }
    }
    return 0;
}
/* every circuit into a vectors file, one job submitted */
static int c2_group_start(RustError *e, c2_pending_t *p, const Assignment provers[])
{
    size_t copied = 0;
    p->vpath = calloc(p->n, sizeof *p->vpath);
    p->vown = calloc(p->n, sizeof *p->vown);
    if (!p->vpath || !p->vown) {
        *e = c2_err(ENOMEM, "generate_groth16_proofs: out of memory");
        return -1;
    }
    for (size_t i = 1; i < p->n; i++)
        if (c2_same_density(e, &provers[0], &provers[i], i)) return -1;
    char dens[256];
    if (c2_density_file(e, dens, sizeof dens, &provers[0])) return -1;
    for (size_t i = 0; i < p->n; i++)
        if (c2_group_part(e, p, i, &provers[i], &copied)) return -1;
    atomic_fetch_add(&abc_copied, copied);
    if (!(p->cl = c2_client(e, "generate_groth16_proofs"))) return -1;
    zp_client_job_t *j = zp_client_job_new(p->srs->gpath);
    if (!j) {
        *e = c2_err(ENOMEM, "generate_groth16_proofs: out of memory");
        return -1;
    }
    char rid[96];
    snprintf(rid, sizeof rid, "c2-%d-%llx-%llx", (int)getpid(), (unsigned long long)zp_now_ns(),
             (unsigned long long)p->id);
    int rc = zp_client_job_set_request_id(j, rid);
    if (rc == ZP_CLIENT_OK) rc = zp_client_job_set_r1cs(j, dens);
    for (size_t i = 0; rc == ZP_CLIENT_OK && i < p->n; i++) rc = zp_client_job_add_vectors(j, p->vpath[i]);
    if (rc != ZP_CLIENT_OK) {
        *e = c2_err(EINVAL, "generate_groth16_proofs: job: %s", zp_client_job_errmsg(j));
        zp_client_job_free(&j);
        return -1;
    }
    rc = zp_client_submit(p->cl, j, &p->job, NULL);
    zp_client_job_free(&j);
    if (rc != ZP_CLIENT_OK) {
        *e = c2_err(rc == ZP_CLIENT_UNREACHABLE ? ECONNREFUSED : EINVAL, "generate_groth16_proofs: the group %s: %s",
                    rc == ZP_CLIENT_UNREACHABLE ? "does not answer" : "refused the job", zp_client_errmsg(p->cl));
        return -1;
    }
    return 0;
}

/* the job's proofs (bellman's 192-byte form from the finalizer), pairing-checked here against
 * the SRS's verifying key, into supraseal's layout (blst affine, Montgomery) */
static RustError c2_group_finalize(c2_pending_t *p, groth16_proof proofs[])
{
    zp_client_result_t *res = NULL;
    RustError e = c2_ok();
    const char *t = getenv("ZKPIPE_C2_TIMEOUT_MS");
    long ms = t ? strtol(t, NULL, 10) : -1;
    int rc = zp_client_await(p->cl, p->job, ms > 0 ? ms : -1, &res);
    if (rc != ZP_CLIENT_OK) {
        const char *why = NULL;
        uint32_t bad = 0;
        for (uint32_t i = 0; res && i < zp_client_result_parts(res); i++)
            if ((why = zp_client_result_error(res, i))) { bad = i; break; }
        e = c2_err(rc == ZP_CLIENT_UNREACHABLE ? ECONNREFUSED : EIO, "generate_groth16_proofs: group job %llu: %s%s%s",
                   (unsigned long long)p->job, zp_client_strerror(rc), why ? ": " : "", why ? why : zp_client_errmsg(p->cl));
        if (why) {
            char *m = e.message;
            e = c2_err(e.code, "%s (circuit %u)", m, bad);
            free(m);
        }
        zp_client_result_free(&res);
        return e;
    }
    zp_g16_vk_t vk;
    int r = zp_g16_vk_from_bkey(&vk, &p->srs->k);
    if (r) {
        zp_client_result_free(&res);
        return c2_zp_err(r, "generate_groth16_proofs: the SRS's verifying key");
    }
    for (size_t i = 0; i < p->n && !e.code; i++) {
        size_t len = 0;
        const uint8_t *bin = zp_client_result_proof_bin(res, (uint32_t)i, &len);
        zp_g16_proof_t pr;
        if (!bin || len != 192) {
            e = c2_err(EPROTO, "generate_groth16_proofs: group job %llu: circuit %zu: a %zu-byte proof (192 expected)",
                       (unsigned long long)p->job, i, len);
            break;
        }
        if ((r = zp_g16_proof_from_bin(&pr, ZP_CURVE_BLS12_381, bin))) {
            e = c2_zp_err(r, "generate_groth16_proofs: the group's proof");
            break;
        }
        const Assignment *as = (const Assignment *)&p->as[i];
        size_t npub = as->inp_assignment_size - 1;
        zp_scalar_t *pub = calloc(npub ? npub : 1, sizeof *pub);
        if (!pub) {
            e = c2_err(ENOMEM, "generate_groth16_proofs: out of memory");
            break;
        }
        for (size_t k = 0; k < npub; k++)
            zp_fr_bls12_381_from_mont((zp_fr_bls12_381_t *)&pub[k], (const zp_fr_bls12_381_t *)&as->inp_assignment_data[k + 1]);
        r = zp_g16_verify(&vk, pub, npub, &pr);
        free(pub);
        if (r) {
            e = c2_zp_err(r, "generate_groth16_proofs: the group's proof does not pairing-check");
            break;
        }
        memcpy(&proofs[i].a, &pr.a.bls12_381, sizeof proofs[i].a);
        memcpy(&proofs[i].b, &pr.b.bls12_381, sizeof proofs[i].b);
        memcpy(&proofs[i].c, &pr.c.bls12_381, sizeof proofs[i].c);
    }
    zp_g16_vk_free(&vk);
    zp_client_result_free(&res);
    return e;
}

C2_API RustError generate_groth16_proofs_start_c(const Assignment provers[], size_t n, const fr_t r_s[],
                                                 const fr_t s_s[], SRS *srs, void *gpu_mtx, int gpu_index,
                                                 void **pending_out)
{
    RustError e;
    c2_mode_t m;
    (void)gpu_mtx;   /* accepted and ignored: in-process there is no card to share */
    if (pending_out) *pending_out = NULL;
    if (!pending_out) return c2_err(EINVAL, "generate_groth16_proofs_start_c: pending_out is NULL");
    if (!provers) return c2_err(EINVAL, "generate_groth16_proofs: provers is NULL");
    if (n == 0) return c2_err(EINVAL, "generate_groth16_proofs: num_circuits is 0");
    if (n > (1u << 20)) return c2_err(EINVAL, "generate_groth16_proofs: num_circuits %zu is too large", n);
    if (!r_s) return c2_err(EINVAL, "generate_groth16_proofs: r_s is NULL");
    if (!s_s) return c2_err(EINVAL, "generate_groth16_proofs: s_s is NULL");
    if (!srs || !srs->ptr) return c2_err(EINVAL, "generate_groth16_proofs: srs is NULL");
    if (gpu_index < -1) return c2_err(EINVAL, "generate_groth16_proofs: gpu_index %d (>= 0 or -1)", gpu_index);
    if (c2_mode(&m, &e)) return e;

    c2_pending_t *p = calloc(1, sizeof *p);
    if (!p) return c2_err(ENOMEM, "generate_groth16_proofs: out of memory");
    pthread_mutex_lock(&srs_mu);
    c2_srs_t *s = srs_find(srs->ptr);
    if (s) {
        s->refs++;
        p->srs = s;
    }
    pthread_mutex_unlock(&srs_mu);
    if (!p->srs) {
        free(p);
        return c2_err(EINVAL, "generate_groth16_proofs: srs %p is not a live SRS (dropped?)", srs->ptr);
    }
    p->n = n;
    p->as = calloc(n, sizeof *p->as);
    p->r = calloc(n, sizeof *p->r);
    p->s = calloc(n, sizeof *p->s);
    p->out = calloc(n, sizeof *p->out);
    p->blk = calloc(n, sizeof *p->blk);
    if (!p->as || !p->r || !p->s || !p->out || !p->blk) {
        e = c2_err(ENOMEM, "generate_groth16_proofs: out of memory");
        goto fail;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (check_one(&e, &provers[i], i, p->srs)) goto fail;
        if (scalar_in(&e, &p->r[i], &r_s[i], "r_s", i) || scalar_in(&e, &p->s[i], &s_s[i], "s_s", i)) goto fail;
        memcpy(&p->as[i], &provers[i], sizeof p->as[i]);
        if (!(p->blk[i] = abc_take(&provers[i], p->srs->group))) total += provers[i].abc_size;
    }
    if (p->srs->group) {   /* the job is in the group: nothing runs here until finalize */
        p->group = true;
        p->id = c2_new_id();
        if (c2_group_start(&e, p, provers)) goto fail;
        goto live;
    }
    /* the hand-off: a, b, c are copied so the caller may free them on return, except the
     * library's own blocks (zkpipe_c2_alloc_abc), held by reference instead */
    p->abc = total ? malloc(total * 3 * sizeof *p->abc) : NULL;
    if (total && !p->abc) {
        e = c2_err(ENOMEM, "generate_groth16_proofs: out of memory for a, b, c (%zu elements)", total * 3);
        goto fail;
    }
    zp_fr_bls12_381_t *w = p->abc;
    for (size_t i = 0; i < n; i++) {
        size_t k = provers[i].abc_size;
        if (p->blk[i]) continue;
        memcpy(w, provers[i].a, k * sizeof *w);
        memcpy(w + k, provers[i].b, k * sizeof *w);
        memcpy(w + 2 * k, provers[i].c, k * sizeof *w);
        p->as[i].a = w;
        p->as[i].b = w + k;
        p->as[i].c = w + 2 * k;
        w += 3 * k;
    }
    atomic_fetch_add(&abc_copied, total * 3 * sizeof *p->abc);
    atomic_init(&p->abandon, false);
    int r = pthread_create(&p->th, NULL, c2_prove_thread, p);
    if (r) {
        e = c2_err(r, "generate_groth16_proofs: cannot start the proving thread: %s", strerror(r));
        goto fail;
    }
    p->th_started = true;
    p->id = c2_new_id();
live:
    pthread_mutex_lock(&pend_mu);
    p->next = pend_live;
    pend_live = p;
    pthread_mutex_unlock(&pend_mu);
    *pending_out = (void *)p->id;
    return c2_ok();
fail:
    pend_free(p);
    return e;
}

C2_API RustError finalize_groth16_proof_c(void *pending, groth16_proof proofs[])
{
    if (!pending) return c2_err(EINVAL, "finalize_groth16_proof_c: pending is NULL");
    if (!proofs) return c2_err(EINVAL, "finalize_groth16_proof_c: proofs is NULL (the handle stays live)");
    c2_pending_t *p = pend_take(pending);
    if (!p)
        return c2_err(EINVAL, "finalize_groth16_proof_c: %p is not a live pending proof (already finalized, "
                              "destroyed, or never started)", pending);
    RustError e = c2_ok();
    if (p->group) {
        e = c2_group_finalize(p, proofs);
        pend_free(p);
        return e;
    }
    pthread_join(p->th, NULL);
    if (p->ret)
        e = c2_err(p->ret < 0 ? -p->ret : p->ret, "generate_groth16_proofs: circuit %zu: %s", p->failed, p->msg);
    else
        for (size_t i = 0; i < p->n; i++) {
            memcpy(&proofs[i].a, &p->out[i].a.bls12_381, sizeof proofs[i].a);
            memcpy(&proofs[i].b, &p->out[i].b.bls12_381, sizeof proofs[i].b);
            memcpy(&proofs[i].c, &p->out[i].c.bls12_381, sizeof proofs[i].c);
        }
    pend_free(p);
    return e;
}

C2_API void destroy_pending_proof(void *pending)
{
    c2_pending_t *p = pending ? pend_take(pending) : NULL;
    if (!p) return;
    atomic_store(&p->abandon, true);
    if (p->group) {   /* the group stops proving it; its files go */
        uint32_t freed = 0;
        zp_client_cancel(p->cl, p->job, &freed);
    }
    if (p->th_started) pthread_join(p->th, NULL);
    pend_free(p);
}

C2_API RustError generate_groth16_proofs_c(const Assignment provers[], size_t n, const fr_t r_s[], const fr_t s_s[],
                                           groth16_proof proofs[], SRS *srs, void *gpu_mtx, int gpu_index)
{
    if (!proofs) return c2_err(EINVAL, "generate_groth16_proofs: proofs is NULL");
    void *pending = NULL;
    RustError e = generate_groth16_proofs_start_c(provers, n, r_s, s_s, srs, gpu_mtx, gpu_index, &pending);
    if (e.code) return e;
    return finalize_groth16_proof_c(pending, proofs);
}

C2_API void *create_gpu_mutex(void)
{
    pthread_mutex_t *m = malloc(sizeof *m);
    if (m) pthread_mutex_init(m, NULL);
    return m;
}

C2_API void destroy_gpu_mutex(void *mtx)
{
    if (!mtx) return;
    pthread_mutex_destroy(mtx);
    free(mtx);
}
