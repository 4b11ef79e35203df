/* keycache.c - per-process caches of proving keys and r1cs files for the stage daemons
 * (see keycache.h). Each entry owns its path: the zkey/r1cs are opened with the entry's copy,
 * so their error messages never name a freed string (issue 9 item 1: the caller's path used
 * to be kept by the opened zkey, and a later mismatch on a cached key printed freed memory).
 * Tests: tests/test_keycache.c; the hot tier also tests/ipc/keystore_hot.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/util/util.h"
#include "shm/keycache.h"

#define KC_MAX 64
typedef struct { char *path; zp_r1cs_t r; uint64_t file_id[4]; } r1ent_t;
struct zp_keycache {
    zp_keyent_t *k[KC_MAX];
    r1ent_t *r[KC_MAX];
    unsigned nk, nr;
    /* hot tier (keystore.h): use_store false = none */
    char prefix[ZP_KEYSTORE_NAME_MAX];
    bool use_store;
    zp_pool_t *pool;
    void (*on_release)(void *ctx, zp_keyent_t *e);
    void *on_release_ctx;
};

zp_keycache_t *zp_keycache_new(void) { return calloc(1, sizeof(zp_keycache_t)); }

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
    kc->on_release = fn;
    kc->on_release_ctx = ctx;
}

static void keyent_free(zp_keycache_t *kc, zp_keyent_t *e)
{
    if (!e) return;
    if (kc->on_release && e->key.mem) kc->on_release(kc->on_release_ctx, e);
    zp_g16_key_close(&e->key);   /* a store view is not owned: only forgotten */
    if (e->ks) { zp_keystore_release(e->ks); free(e->ks); }
    zp_zkey_close(&e->zkey);
    free(e->path);
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
    for (unsigned i = 0; i < kc->nk; i++) keyent_free(kc, kc->k[i]);
    while (kc->nr) r1_drop(kc, kc->nr - 1);
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

/* the point arrays of e: from the store (hot, or filled by us) or parsed into private memory */
static int keyent_load(zp_keycache_t *kc, zp_keyent_t *e)
{
    uint64_t t0 = zp_now_ns();
    int rc;
    if (kc->use_store) {
        zp_keystore_key_t *ks = calloc(1, sizeof *ks);
        if (!ks) return zp_err_set(-ENOMEM, "key store entry");
        zp_keystore_opt_t opt = {.pool = kc->pool};
        rc = zp_keystore_get(ks, kc->prefix, &e->zkey, e->path, &opt);
        if (rc == 0) {
            e->ks = ks;
            e->key = ks->key;
            e->hot = ks->hot;
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
    e->load_ns = zp_now_ns() - t0;
    zp_log(ZP_LOG_INFO, "key %s: cold: parsed in %.1f ms (private memory)", e->path, e->load_ns / 1e6);
    return 0;
}

/* the index of path's entry (keys, or r1cs files when r1) if its file is unchanged; -1 when
 * there is none, or when the file changed: the stale entry is dropped (a backend must notice
 * the new key pointer) and the caller loads the file again */
static int lookup(zp_keycache_t *kc, bool r1, const char *path, const uint64_t id[4])
{
    for (unsigned i = 0, n = r1 ? kc->nr : kc->nk; i < n; i++) {
        if (strcmp(r1 ? kc->r[i]->path : kc->k[i]->path, path)) continue;
        if (!memcmp(r1 ? kc->r[i]->file_id : kc->k[i]->file_id, id, 4 * sizeof id[0])) return (int)i;
        if (r1) r1_drop(kc, i);
        else { keyent_free(kc, kc->k[i]); kc->k[i] = kc->k[--kc->nk]; }
        return -1;
    }
    return -1;
}

int zp_keycache_key(zp_keycache_t *kc, const char *path, bool with_key, zp_keyent_t **out)
{
    uint64_t id[4] = {0};
    int rc = file_id(path, id);
    if (rc < 0) return rc;
    int i = lookup(kc, false, path, id);
    if (i >= 0) {
        zp_keyent_t *e = kc->k[i];
        if (with_key && !e->key.mem && (rc = keyent_load(kc, e)) < 0) return rc;
        *out = e;
        return 0;
    }
    if (kc->nk == KC_MAX) return zp_err_set(ZP_ETOOBIG, "more than %d proving keys in one process", KC_MAX);
    zp_keyent_t *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) { free(e); return -ENOMEM; }
    if ((rc = zp_zkey_open(&e->zkey, e->path)) < 0) { free(e->path); free(e); return rc; }
    if (with_key && (rc = keyent_load(kc, e)) < 0) { zp_zkey_close(&e->zkey); free(e->path); free(e); return rc; }
    memcpy(e->file_id, id, sizeof e->file_id);
    kc->k[kc->nk++] = e;
    zp_log(ZP_LOG_INFO, "loaded %s: %s, %u vars, domain %u%s", e->path, zp_curve_name(e->zkey.curve), e->zkey.n_vars,
           e->zkey.domain_size, with_key ? (e->ks ? " (proving key in shared memory)" : " (proving key in memory)") : "");
    *out = e;
    return 0;
}

int zp_keycache_preload(zp_keycache_t *kc, const char *path)
{
    zp_keyent_t *e;
    int rc = zp_keycache_key(kc, path, true, &e);
    if (rc < 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", zp_err_msg()[0] ? zp_err_msg() : zp_strerror(rc));
        return zp_err_set(rc, "--preload %s: %s", path, msg);
    }
    return 0;
}

int zp_keycache_r1cs(zp_keycache_t *kc, const char *path, const zp_r1cs_t **out)
{
    uint64_t id[4] = {0};
    int rc = file_id(path, id);
    if (rc < 0) return rc;
    int i = lookup(kc, true, path, id);
    if (i >= 0) { *out = &kc->r[i]->r; return 0; }
    if (kc->nr == KC_MAX) return zp_err_set(ZP_ETOOBIG, "more than %d r1cs files in one process", KC_MAX);
    r1ent_t *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) { free(e); return -ENOMEM; }
    if ((rc = zp_r1cs_open(&e->r, e->path)) < 0) { free(e->path); free(e); return rc; }
    memcpy(e->file_id, id, sizeof e->file_id);
    kc->r[kc->nr++] = e;
    *out = &e->r;
    return 0;
}

void zp_keycache_release(zp_keycache_t *kc, zp_keyent_t *e)
{
    (void)kc;
    (void)e;   /* entries are kept until zp_keycache_destroy: nothing to drop yet */
}
