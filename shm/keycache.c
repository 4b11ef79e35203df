/* keycache.c - per-process caches of proving keys and r1cs files for the stage daemons
 * (see keycache.h). Each entry owns its path: the zkey/r1cs are opened with the entry's copy,
 * so their error messages never name a freed string (issue 9 item 1: the caller's path used
 * to be kept by the opened zkey, and a later mismatch on a cached key printed freed memory).
 * References, the budget's LRU eviction and the locking: keycache.h; the tiers: doc/keys.md.
 * Tests: tests/test_keycache.c; the hot tier also tests/ipc/keystore_hot.sh, the budget and
 * key affinity tests/ipc/keys_affinity.sh. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/fmt/bellman.h"
#include "lib/groth16/assignment.h"
#include "lib/util/util.h"
#include "shm/keycache.h"

#define KC_MAX 64
typedef struct { char *path; zp_r1cs_t r; uint64_t file_id[4]; } r1ent_t;
struct zp_keycache {
    pthread_mutex_t mu;
    pthread_cond_t cv;              /* a load finished */
    zp_keyent_t *k[KC_MAX];
    zp_keyent_t *detached;          /* list: file changed while in use */
    r1ent_t *r[KC_MAX];
    unsigned nk, nr;
    /* hot tier (keystore.h): use_store false = none */
    char prefix[ZP_KEYSTORE_NAME_MAX];
    bool use_store;
    zp_pool_t *pool;
    void (*on_release)(void *ctx, zp_keyent_t *e);
    void *on_release_ctx;
    zp_keycache_tier_fn tier_fn;
    void *tier_ctx;
    uint64_t budget, store_budget, clock, loads, evictions;
};

zp_keycache_t *zp_keycache_new(void)
{
    zp_keycache_t *kc = calloc(1, sizeof(zp_keycache_t));
    if (!kc) return NULL;
    pthread_mutex_init(&kc->mu, NULL);
    pthread_cond_init(&kc->cv, NULL);
    return kc;
}

int zp_keycache_set_store(zp_keycache_t *kc, const char *prefix, zp_pool_t *pool)
{
    kc->use_store = false;
    if (!prefix) return 0;
    if (strlen(prefix) >= sizeof kc->prefix) return zp_err_set(ZP_ETOOBIG, "key store prefix too long");
    snprintf(kc->prefix, sizeof kc->prefix, "%s", prefix);
    kc->use_store = true;
    kc->pool = pool;
    return 0;
}

void zp_keycache_set_release(zp_keycache_t *kc, void (*fn)(void *ctx, zp_keyent_t *e), void *ctx)
{
    pthread_mutex_lock(&kc->mu);
    kc->on_release = fn;
    kc->on_release_ctx = ctx;
    pthread_mutex_unlock(&kc->mu);
}

void zp_keycache_set_tier_fn(zp_keycache_t *kc, zp_keycache_tier_fn fn, void *ctx)
{
    pthread_mutex_lock(&kc->mu);
    kc->tier_fn = fn;
    kc->tier_ctx = ctx;
    pthread_mutex_unlock(&kc->mu);
}

void zp_keycache_set_budget(zp_keycache_t *kc, uint64_t bytes, uint64_t store_bytes)
{
    pthread_mutex_lock(&kc->mu);
    kc->budget = bytes;
    kc->store_budget = store_bytes;
    pthread_mutex_unlock(&kc->mu);
}

/* outside the mutex: the entry is no longer reachable from the tables */
static void keyent_free(zp_keycache_t *kc, zp_keyent_t *e)
{
    if (!e) return;
    if (kc->on_release && e->key.mem) kc->on_release(kc->on_release_ctx, e);
    zp_g16_key_close(&e->key);   /* a store view is not owned: only forgotten */
    if (e->ks) { zp_keystore_release(e->ks); free(e->ks); }
    zp_zkey_close(&e->zkey);
    free(e->path);
    free(e->r1cs);
    free(e);
}

static void r1_drop(zp_keycache_t *kc, unsigned i)
{
    zp_r1cs_close(&kc->r[i]->r);
    free(kc->r[i]->path);
    free(kc->r[i]);
    kc->r[i] = kc->r[--kc->nr];
}

void zp_keycache_destroy(zp_keycache_t **kcp)
{
    zp_keycache_t *kc = kcp ? *kcp : NULL;
    if (!kc) return;
    for (unsigned i = 0; i < kc->nk; i++) {
        if (kc->k[i]->refs)
            zp_log(ZP_LOG_WARN, "key %s: %u reference(s) not released at exit", kc->k[i]->path, kc->k[i]->refs);
        keyent_free(kc, kc->k[i]);
    }
    while (kc->detached) {
        zp_keyent_t *e = kc->detached;
        kc->detached = e->next_detached;
        zp_log(ZP_LOG_WARN, "key %s (an older version of the file): %u reference(s) not released at exit", e->path, e->refs);
        keyent_free(kc, e);
    }
    while (kc->nr) r1_drop(kc, kc->nr - 1);
    pthread_cond_destroy(&kc->cv);
    pthread_mutex_destroy(&kc->mu);
    free(kc);
    *kcp = NULL;
}

static int file_id(const char *path, uint64_t id[4])
{
    struct stat st;
    if (stat(path, &st) < 0) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    id[0] = st.st_dev; id[1] = st.st_ino; id[2] = (uint64_t)st.st_size;
    id[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    return 0;
}

/* the point arrays of e: from the store (hot, or filled by us) or parsed into private memory.
 * Runs outside the mutex (e->loading keeps others off e); reads only settings fixed at init. */
static int keyent_load(zp_keycache_t *kc, zp_keyent_t *e, uint64_t store_budget)
{
    uint64_t t0 = zp_now_ns();
    int rc;
    if (kc->use_store) {
        zp_keystore_key_t *ks = calloc(1, sizeof *ks);
        if (!ks) return zp_err_set(-ENOMEM, "key store entry");
        zp_keystore_opt_t opt = {.pool = kc->pool, .budget = store_budget};
        rc = zp_keystore_get(ks, kc->prefix, &e->zkey, e->path, &opt);
        if (rc == 0) {
            e->ks = ks;
            e->key = ks->key;
            e->hot = ks->hot;
            e->bytes = ks->map_len;
            e->load_ns = zp_now_ns() - t0;
            if (ks->hot)
                zp_log(ZP_LOG_INFO, "key %s: hot (shm) in %.1f ms (%s, %zu MiB; filled by its creator in %.1f ms)", e->path,
                       e->load_ns / 1e6, ks->name, ks->data_len >> 20, ks->fill_ns / 1e6);
            else
                zp_log(ZP_LOG_INFO, "key %s: cold: parsed in %.1f ms (into shm %s, %zu MiB)", e->path, e->load_ns / 1e6,
                       ks->name, ks->data_len >> 20);
            return 0;
        }
        free(ks);
        /* a bad zkey is bad everywhere: report it; anything else: fall back to private memory */
        if (rc == ZP_EFORMAT && !strstr(zp_err_msg(), kc->prefix)) return rc;
        zp_log(ZP_LOG_WARN, "key %s: shared-memory key store unusable (%s %s): loading into private memory", e->path,
               zp_strerror(rc), zp_err_msg());
        t0 = zp_now_ns();
    }
    if ((rc = zp_g16_key_load_pool(&e->key, &e->zkey, NULL, 0, kc->pool)) < 0) return rc;
    e->hot = false;
    e->bytes = e->key.mem_len ? e->key.mem_len : zp_g16_key_bytes(&e->zkey);
    e->load_ns = zp_now_ns() - t0;
    zp_log(ZP_LOG_INFO, "key %s: cold: parsed in %.1f ms (private memory)", e->path, e->load_ns / 1e6);
    return 0;
}

/* a bellman entry (e->r1cs set): the (compacted) key from the store, or into private memory;
 * e->zkey gets the header fields the stages read (wtns check, listings) */
static int keyent_load_bellman(zp_keycache_t *kc, zp_keyent_t *e, uint64_t store_budget)
{
    uint64_t t0 = zp_now_ns();
    int rc = 0;
    bool done = false;
    if (kc->use_store) {
        zp_keystore_key_t *ks = calloc(1, sizeof *ks);
        if (!ks) return zp_err_set(-ENOMEM, "key store entry");
        zp_keystore_opt_t opt = {.pool = kc->pool, .budget = store_budget};
        rc = zp_keystore_get_bellman(ks, kc->prefix, e->path, e->r1cs, &opt);
        if (rc == 0) {
            e->ks = ks;
            e->key = ks->key;
            e->hot = ks->hot;
            e->bytes = ks->map_len;
            done = true;
            zp_log(ZP_LOG_INFO, "key %s (bellman, circuit %s): %s in %.1f ms (%s, %zu MiB, compacted)", e->path, e->r1cs,
                   ks->hot ? "hot (shm)" : "cold: read into the store", (zp_now_ns() - t0) / 1e6, ks->name,
                   ks->data_len >> 20);
        } else {
            free(ks);
            if ((rc == ZP_EFORMAT || rc == ZP_EMISMATCH || rc == ZP_ECURVE) && !strstr(zp_err_msg(), kc->prefix)) return rc;
            zp_log(ZP_LOG_WARN, "key %s: shared-memory key store unusable (%s %s): loading into private memory", e->path,
                   zp_strerror(rc), zp_err_msg());
        }
    }
    if (!done) {
        if ((rc = zp_key_load_bellman_private(&e->key, e->path, e->r1cs, kc->pool)) < 0) return rc;
        e->hot = false;
        e->bytes = e->key.mem_len;
        zp_log(ZP_LOG_INFO, "key %s (bellman, circuit %s): read in %.1f ms (private memory, compacted)", e->path,
               e->r1cs, (zp_now_ns() - t0) / 1e6);
    }
    e->load_ns = zp_now_ns() - t0;
    memset(&e->zkey, 0, sizeof e->zkey);
    e->zkey.f.path = e->path;
    e->zkey.curve = e->key.curve;
    e->zkey.n8q = 48;
    e->zkey.n8r = 32;
    e->zkey.n_vars = e->key.n_vars;
    e->zkey.n_public = e->key.n_public;
    e->zkey.domain_size = e->key.domain_size;
    e->zkey.log_n = e->key.log_n;
    e->zkey.n_coefs = e->key.n_coefs;
    return 0;
}

/* mutex held: take entry i out of the key table */
static void k_unlink(zp_keycache_t *kc, unsigned i) { kc->k[i] = kc->k[--kc->nk]; }

/* mutex held: evict least recently used unreferenced entries (never keep) until the key
 * memory fits the budget; the victims go to *vic (freed by the caller outside the mutex) */
static void enforce(zp_keycache_t *kc, const zp_keyent_t *keep, zp_keyent_t **vic, unsigned *nv)
{
    if (!kc->budget) return;
    uint64_t total = 0;
    for (unsigned i = 0; i < kc->nk; i++) total += kc->k[i]->bytes;
    while (total > kc->budget) {
        int lru = -1;
        for (unsigned i = 0; i < kc->nk; i++) {
            const zp_keyent_t *e = kc->k[i];
            if (e == keep || e->refs || e->loading || !e->bytes) continue;
            if (lru < 0 || e->last_use < kc->k[lru]->last_use) lru = (int)i;
        }
        if (lru < 0) {
            zp_log(ZP_LOG_WARN, "keys: %.1f MiB held, over the budget of %.1f MiB: every other key is in use",
                   total / 1048576.0, kc->budget / 1048576.0);
            return;
        }
        zp_keyent_t *e = kc->k[lru];
        zp_log(ZP_LOG_INFO, "key %s: evicted (%.1f MiB, least recently used; budget %.1f MiB, %.1f MiB held)", e->path,
               e->bytes / 1048576.0, kc->budget / 1048576.0, total / 1048576.0);
        total -= e->bytes;
        kc->evictions++;
        k_unlink(kc, (unsigned)lru);
        vic[(*nv)++] = e;
    }
}

static void free_victims(zp_keycache_t *kc, zp_keyent_t **vic, unsigned nv)
{
    for (unsigned i = 0; i < nv; i++) keyent_free(kc, vic[i]);
}

/* mutex held: path's live entry (index), -1 if none. A stale one (file changed) is taken out
 * of the table: freed now (into *vic) when unreferenced, else on its last release. */
static int k_find(zp_keycache_t *kc, const char *path, const char *r1cs, const uint64_t id[4], const uint64_t rid[4],
                  zp_keyent_t **vic, unsigned *nv)
{
    for (unsigned i = 0; i < kc->nk; i++) {
        zp_keyent_t *e = kc->k[i];
        if (strcmp(e->path, path)) continue;
        if (e->r1cs && (!r1cs || strcmp(e->r1cs, r1cs))) continue;   /* a bellman key of another circuit */
        if (e->loading || (!memcmp(e->file_id, id, sizeof e->file_id) &&
                           (!e->r1cs || !memcmp(e->r1cs_id, rid, sizeof e->r1cs_id))))
            return (int)i;
        zp_log(ZP_LOG_INFO, "key %s: the file changed: reloading", path);
        k_unlink(kc, i);
        e->detached = true;
        if (!e->refs) vic[(*nv)++] = e;
        else { e->next_detached = kc->detached; kc->detached = e; }
        return -1;
    }
    return -1;
}

int zp_keycache_key(zp_keycache_t *kc, const char *path, bool with_key, zp_keyent_t **out)
{
    return zp_keycache_key_r1cs(kc, path, NULL, with_key, out);
}

int zp_keycache_key_r1cs(zp_keycache_t *kc, const char *path, const char *r1cs, bool with_key, zp_keyent_t **out)
{
    uint64_t id[4] = {0}, rid[4] = {0};
    if (r1cs && !*r1cs) r1cs = NULL;
    int rc = file_id(path, id);
    if (rc < 0) return rc;
    const char *r1cs_bad = NULL;   /* given but unreadable: matters only for a bellman key (refused below) */
    char r1cs_why[256] = "";
    if (r1cs && (rc = file_id(r1cs, rid)) < 0) {
        snprintf(r1cs_why, sizeof r1cs_why, "%s", zp_err_msg());
        r1cs_bad = r1cs;
        r1cs = NULL;
        zp_err_clear();
    }
    zp_keyent_t *vic[KC_MAX + 1], *e;
    unsigned nv = 0;
    pthread_mutex_lock(&kc->mu);
    int i;
    for (;;) {
        i = k_find(kc, path, r1cs, id, rid, vic, &nv);
        if (i < 0 || !kc->k[i]->loading) break;
        pthread_cond_wait(&kc->cv, &kc->mu);   /* another thread loads it: wait, then look again */
    }
    bool fresh = i < 0;
    if (fresh) {
        if (kc->nk == KC_MAX) enforce(kc, NULL, vic, &nv);
        if (kc->nk == KC_MAX) {
            pthread_mutex_unlock(&kc->mu);
            free_victims(kc, vic, nv);
            return zp_err_set(ZP_ETOOBIG, "more than %d proving keys in one process", KC_MAX);
        }
        if (!(e = calloc(1, sizeof *e)) || !(e->path = strdup(path))) {
            pthread_mutex_unlock(&kc->mu);
            free(e);
            free_victims(kc, vic, nv);
            return -ENOMEM;
        }
        memcpy(e->file_id, id, sizeof e->file_id);
        kc->k[kc->nk++] = e;
    } else {
        e = kc->k[i];
    }
    e->refs++;
    e->last_use = ++kc->clock;
    bool need = with_key && !e->key.mem;
    uint64_t store_budget = kc->store_budget;
    if (fresh || need) e->loading = true;
    pthread_mutex_unlock(&kc->mu);
    free_victims(kc, vic, nv);
    nv = 0;
    if (!fresh && !need) { *out = e; return 0; }

    zp_rt_pause();   /* a load is O(key): never at a real-time thread's policy (lib/util/rt.c) */
    zp_keyfmt_t kf = ZP_KEYFMT_UNKNOWN;
    /* a file that cannot be read is that error (EINTR from a stop signal while a FIFO's open
     * blocks included: opening it a second time would block again, past the signal) */
    int sniff = fresh ? zp_key_format_of_file(&kf, e->path) : 0;
    bool bellman = fresh ? (sniff == 0 && kf == ZP_KEYFMT_BELLMAN) : e->r1cs != NULL;
    bool opened = false;
    if (sniff < 0) {
        rc = sniff;
        need = false;
    } else if (fresh && bellman) {   /* issue 29: a .params, laid out with the job's r1cs (always with its points) */
        if (r1cs_bad)
            rc = zp_err_set(-ENOENT, "%s: the circuit of bellman key %s cannot be read: %s", r1cs_bad, e->path, r1cs_why);
        else if (!r1cs)
            rc = zp_err_set(ZP_EFORMAT, "%s: a bellman .params key needs its circuit's r1cs (submit --r1cs "
                            "circuit.r1cs): the stages' coefficients and density bitmaps come from it", e->path);
        else if (!(e->r1cs = strdup(r1cs)))
            rc = -ENOMEM;
        else {
            memcpy(e->r1cs_id, rid, sizeof e->r1cs_id);
            rc = keyent_load_bellman(kc, e, store_budget);
        }
        need = rc == 0;
    } else {
        zp_err_clear();
        rc = fresh ? zp_zkey_open(&e->zkey, e->path) : 0;
        opened = fresh && rc == 0;
        if (rc == 0 && need) rc = keyent_load(kc, e, store_budget);
    }
    zp_rt_resume();

    pthread_mutex_lock(&kc->mu);
    e->loading = false;
    pthread_cond_broadcast(&kc->cv);
    if (rc < 0) {
        e->refs--;
        if (fresh) {   /* nobody else can have it: it was loading */
            for (unsigned k = 0; k < kc->nk; k++)
                if (kc->k[k] == e) { k_unlink(kc, k); break; }
        }
        pthread_mutex_unlock(&kc->mu);
        if (fresh) {
            if (opened) zp_zkey_close(&e->zkey);
            free(e->path);
            free(e->r1cs);
            free(e);
        }
        return rc;
    }
    if (need) kc->loads++;
    enforce(kc, e, vic, &nv);
    pthread_mutex_unlock(&kc->mu);
    free_victims(kc, vic, nv);
    if (fresh)
        zp_log(ZP_LOG_INFO, "loaded %s: %s, %u vars, domain %u%s", e->path, zp_curve_name(e->zkey.curve), e->zkey.n_vars,
               e->zkey.domain_size, with_key ? (e->ks ? " (proving key in shared memory)" : " (proving key in memory)") : "");
    *out = e;
    return 0;
}

void zp_keycache_release(zp_keycache_t *kc, zp_keyent_t *e)
{
    if (!kc || !e) return;
    zp_keyent_t *vic[KC_MAX + 1];
    unsigned nv = 0;
    pthread_mutex_lock(&kc->mu);
    if (!e->refs) {
        zp_log(ZP_LOG_ERROR, "key %s: released more often than looked up (ignored)", e->path);
    } else if (--e->refs == 0 && e->detached) {
        vic[nv++] = e;   /* its file changed while it was in use: its last user is done */
        for (zp_keyent_t **pp = &kc->detached; *pp; pp = &(*pp)->next_detached)
            if (*pp == e) { *pp = e->next_detached; break; }
    } else if (!e->refs) {
        enforce(kc, NULL, vic, &nv);   /* it may be evictable now */
    }
    pthread_mutex_unlock(&kc->mu);
    free_victims(kc, vic, nv);
}

int zp_keycache_key_spec(zp_keycache_t *kc, const char *spec, bool with_key, zp_keyent_t **out)
{
    struct stat st;
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || !colon[1] || stat(spec, &st) == 0) return zp_keycache_key_r1cs(kc, spec, NULL, with_key, out);
    size_t n = (size_t)(colon - spec);
    char *params = strndup(spec, n);
    if (!params) return zp_err_set(-ENOMEM, "%s", spec);
    int rc = zp_keycache_key_r1cs(kc, params, colon + 1, with_key, out);
    free(params);
    return rc;
}

int zp_keycache_preload(zp_keycache_t *kc, const char *spec)
{
    zp_keyent_t *e;
    int rc = zp_keycache_key_spec(kc, spec, true, &e);
    if (rc < 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", zp_err_msg()[0] ? zp_err_msg() : zp_strerror(rc));
        return zp_err_set(rc, "--preload %s: %s", spec, msg);
    }
    zp_keycache_release(kc, e);   /* loaded; evictable by the budget like any other */
    return 0;
}

int zp_keycache_r1cs(zp_keycache_t *kc, const char *path, const zp_r1cs_t **out)
{
    uint64_t id[4] = {0};
    int rc = file_id(path, id);
    if (rc < 0) return rc;
    pthread_mutex_lock(&kc->mu);   /* r1cs files: synth only; opened under the mutex */
    for (unsigned i = 0; i < kc->nr; i++) {
        if (strcmp(kc->r[i]->path, path)) continue;
        if (!memcmp(kc->r[i]->file_id, id, sizeof id)) {
            *out = &kc->r[i]->r;
            pthread_mutex_unlock(&kc->mu);
            return 0;
        }
        r1_drop(kc, i);
        break;
    }
    if (kc->nr == KC_MAX) {
        pthread_mutex_unlock(&kc->mu);
        return zp_err_set(ZP_ETOOBIG, "more than %d r1cs files in one process", KC_MAX);
    }
    r1ent_t *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) { free(e); pthread_mutex_unlock(&kc->mu); return -ENOMEM; }
    if ((rc = zp_r1cs_open(&e->r, e->path)) < 0) {
        free(e->path);
        free(e);
        pthread_mutex_unlock(&kc->mu);
        return rc;
    }
    memcpy(e->file_id, id, sizeof e->file_id);
    kc->r[kc->nr++] = e;
    *out = &e->r;
    pthread_mutex_unlock(&kc->mu);
    return 0;
}

int zp_keycache_list(zp_keycache_t *kc, zp_keycache_info_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&kc->mu);
    zp_keyent_t *order[KC_MAX];
    unsigned m = 0;
    for (unsigned i = 0; i < kc->nk; i++)
        if (kc->k[i]->bytes && !kc->k[i]->loading) order[m++] = kc->k[i];
    for (unsigned i = 1; i < m; i++)   /* most recently used first (insertion sort: m <= 64) */
        for (unsigned j = i; j > 0 && order[j]->last_use > order[j - 1]->last_use; j--) {
            zp_keyent_t *t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    zp_keycache_info_t *v = m ? calloc(m, sizeof *v) : NULL;
    if (m && !v) { pthread_mutex_unlock(&kc->mu); return -ENOMEM; }
    for (unsigned i = 0; i < m; i++) {
        const zp_keyent_t *e = order[i];
        v[i].path = strdup(e->path);
        v[i].bytes = e->bytes;
        /* pinned / on the device: the stage's to say (its backend knows; the entry's user and
         * backend_tag only say what was once done, not what still holds) */
        v[i].tier = (e->ks ? ZP_KEYTIER_SHM : ZP_KEYTIER_PRIVATE) |
                    (kc->tier_fn ? kc->tier_fn(kc->tier_ctx, e) & (ZP_KEYTIER_PINNED | ZP_KEYTIER_DEVICE) : 0);
        v[i].refs = e->refs;
        if (!v[i].path) { pthread_mutex_unlock(&kc->mu); zp_keycache_list_free(v, i); return -ENOMEM; }
    }
    pthread_mutex_unlock(&kc->mu);
    *out = v;
    *n = m;
    return 0;
}

void zp_keycache_list_free(zp_keycache_info_t *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i].path);
    free(v);
}

void zp_keycache_stats(zp_keycache_t *kc, zp_keycache_stats_t *st)
{
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&kc->mu);
    st->loads = kc->loads;
    st->evictions = kc->evictions;
    st->budget = kc->budget;
    st->store_budget = kc->store_budget;
    for (unsigned i = 0; i < kc->nk; i++)
        if (kc->k[i]->bytes) { st->bytes += kc->k[i]->bytes; st->n_keys++; }
    pthread_mutex_unlock(&kc->mu);
}

int zp_parse_bytes(const char *what, const char *s, uint64_t *out)
{
    char *e;
    errno = 0;
    double v = s && *s != '-' ? strtod(s, &e) : -1;
    if (!s || errno || e == s || !(v >= 0)) goto bad;
    double mul = 1;
    switch (*e) {
    case 0: break;
    case 'k': case 'K': mul = 1024.0; e++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; e++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; e++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; e++; break;
    default: goto bad;
    }
    if (*e == 'i' && e[1] == 'B') e += 2;
    else if (*e == 'B') e++;
    if (*e || v * mul > 9.0e18) goto bad;
    *out = (uint64_t)(v * mul + 0.5);
    return 0;
bad:
    return zp_err_set(-EINVAL, "%s '%s': expected bytes (a number with an optional K, M, G or T suffix, powers of 1024)",
                      what, s ? s : "");
}
