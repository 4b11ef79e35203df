/* keycache.h - the per-process caches of proving keys and r1cs files that the stage daemons
 * use (synth, gpu-worker, finalizer), beside the shared-memory key store they sit on.
 *
 * Keyed by path; an entry is reloaded when the file's (device, inode, size, mtime) changed.
 * References: every successful zp_keycache_key hands out one reference to its entry, which the
 * caller drops with zp_keycache_release when its task is done with the entry. An entry in use
 * (refs > 0) is never evicted nor freed: a changed file detaches it (new lookups get a fresh
 * entry) and it is freed on its last release.
 * Budget (zp_keycache_set_budget, the stages' --key-budget BYTES): the bytes of key memory this
 * process holds (its mappings of the shared store's objects, or private copies) are kept under
 * the budget by evicting the least recently used unreferenced entries after each load and each
 * release; when every other entry is in use the process goes over the budget (a warning) rather
 * than refuse the task. 0 = no limit (the old behaviour: loaded once per process).
 * Tiers (doc/keys.md): hot = mapped here (and, in the GPU worker, pinned and uploaded: the
 * user/backend_tag fields); an evicted key stays in the shared store until the store's own
 * budget evicts it, then in the page cache (warm), then only on disk (cold).
 * Every entry owns a copy of its path: nothing in an entry (nor in its opened zkey/r1cs, whose
 * messages name the file) points at the caller's string, which may be freed right after the
 * call (a stage task's paths are freed when the task ends).
 * Hot tier: with a store set (zp_keycache_set_store), a proving key comes from the deployment's
 * shared-memory key store (keystore.h): created and filled by the first process that needs it,
 * mapped read-only by the others and by restarted processes, which skip parsing and checking
 * the zkey. Without a store (or if the store fails, e.g. /dev/shm too small: a warning) the key
 * is loaded into private memory.
 * Thread-safe: one mutex guards the tables; a key's load runs outside it (other lookups of the
 * same path wait for it, lookups of other keys and releases do not), so a staging thread may
 * look up task k+1's key while the work thread computes with task k's entry. The release
 * callback runs on the thread whose load or release evicted the entry, outside the mutex.
 * Tests: tests/test_keycache.c. */
#ifndef ZP_KEYCACHE_H
#define ZP_KEYCACHE_H
#include <stdbool.h>
#include <stdint.h>

#include "lib/groth16/groth16.h"
#include "shm/keystore.h"

typedef struct zp_keycache zp_keycache_t;
typedef struct zp_keyent {
    char *path;                     /* owned copy */
    char *r1cs;                     /* (added, issue 29) a bellman key: the circuit it was laid out with
                                       (owned); NULL: a zkey. zkey then holds the header fields only
                                       (curve, n_vars, n_public, domain_size, log_n, n_coefs; no mapping) */
    uint64_t r1cs_id[4];            /* that r1cs's device, inode, size, mtime when loaded */
    zp_zkey_t zkey;                 /* kept open (mmap): zp_check_wtns_zkey needs it; its path is ours */
    zp_g16_key_t key;
    void *backend_tag;              /* set by the user (e.g. the backend it was uploaded to) */
    uint64_t file_id[4];            /* device, inode, size, mtime (ns) when loaded */
    /* hot tier: key.* point into ks->data (PROT_READ); NULL: private memory */
    zp_keystore_key_t *ks;
    bool hot;                       /* found READY in the store (not parsed by this process) */
    uint64_t load_ns;
    void *user;                     /* free for the user (e.g. a host registration; atomic if another thread reads it) */
    /* the cache's own (under its mutex) */
    unsigned refs;                  /* references handed out and not released */
    uint64_t last_use;              /* LRU clock of the cache */
    uint64_t bytes;                 /* key memory held (0: header only) */
    bool loading, detached;         /* a load runs outside the mutex; detached: file changed */
    struct zp_keyent *next_detached;/* detached entries still in use (freed on release/destroy) */
} zp_keyent_t;

/* tier bits of a listed entry (HEARTBEAT/HELLO carry them: proto.h ZP_MSG_MAX_KEYS) */
enum { ZP_KEYTIER_SHM = 1, ZP_KEYTIER_PINNED = 2, ZP_KEYTIER_DEVICE = 4, ZP_KEYTIER_PRIVATE = 8 };
typedef struct {
    char *path;                     /* malloc'd */
    uint64_t bytes;
    uint32_t tier;                  /* ZP_KEYTIER_* */
    unsigned refs;
} zp_keycache_info_t;
typedef struct {
    uint64_t loads;                 /* key memory brought in (store map, fill or parse) */
    uint64_t evictions;             /* entries evicted for the budget */
    uint64_t bytes, budget, store_budget;
    unsigned n_keys;                /* entries holding key memory */
} zp_keycache_stats_t;

zp_keycache_t *zp_keycache_new(void);
void zp_keycache_destroy(zp_keycache_t **kcp);
/* load (or find) the key; with_key = false: only the zkey header (no point copies) */
int zp_keycache_key(zp_keycache_t *kc, const char *path, bool with_key, zp_keyent_t **out);
/* (added, issue 29 item 4) the same for a job's key and r1cs: a zkey ignores r1cs; a bellman
 * .params (recognised from the file) is laid out with that r1cs in the stages' key shape
 * (keystore.h zp_keystore_get_bellman; always with its point arrays), one entry per (params,
 * r1cs). A .params without an r1cs: ZP_EFORMAT naming the file. */
int zp_keycache_key_r1cs(zp_keycache_t *kc, const char *path, const char *r1cs, bool with_key, zp_keyent_t **out);
/* drop the reference zp_keycache_key handed out (call when the task that used the entry is
 * done with it): an entry in use is never evicted. NULL e: nothing. */
void zp_keycache_release(zp_keycache_t *kc, zp_keyent_t *e);
/* bytes: key memory this process may hold (0: no limit); store_bytes: what the shared store's
 * objects may take when this process fills one (0: no limit; keystore.h budget) */
void zp_keycache_set_budget(zp_keycache_t *kc, uint64_t bytes, uint64_t store_bytes);
/* the entries holding key memory, most recently used first (*out malloc'd: list_free) */
int zp_keycache_list(zp_keycache_t *kc, zp_keycache_info_t **out, size_t *n);
void zp_keycache_list_free(zp_keycache_info_t *v, size_t n);
void zp_keycache_stats(zp_keycache_t *kc, zp_keycache_stats_t *st);
/* "123", "64M", "2G", "1.5T" (powers of 1024) -> bytes; -1 with a message naming what */
int zp_parse_bytes(const char *what, const char *s, uint64_t *out);
int zp_keycache_r1cs(zp_keycache_t *kc, const char *path, const zp_r1cs_t **out);
/* Use the key store whose objects are named after prefix (the arena's shm name); NULL: no
 * store. pool: for fills (may be NULL). */
int zp_keycache_set_store(zp_keycache_t *kc, const char *prefix, zp_pool_t *pool);
/* called with each entry just before its key memory goes away (file changed, destroy): e.g.
 * to host_unregister e->ks->data. */
void zp_keycache_set_release(zp_keycache_t *kc, void (*fn)(void *ctx, zp_keyent_t *e), void *ctx);
/* the tiers a stage adds to a listed entry (the GPU worker: ZP_KEYTIER_PINNED, _DEVICE, from
 * its backend); zp_keycache_list calls fn under the cache's mutex for each listed entry (its
 * key memory is valid then), so fn must not call into the cache. Without one, an entry lists
 * as SHM or PRIVATE only. The fields fn reads that another thread writes (e.g. e->user) must be
 * written and read atomically. */
typedef uint32_t (*zp_keycache_tier_fn)(void *ctx, const zp_keyent_t *e);
void zp_keycache_set_tier_fn(zp_keycache_t *kc, zp_keycache_tier_fn fn, void *ctx);
/* load one key with its point arrays (a --preload); the error names the path. spec is a key
 * path, or PARAMS:R1CS for a bellman .params and its circuit (split at the last ':' only when
 * spec itself is not a file, so a key path with a colon still works) */
int zp_keycache_preload(zp_keycache_t *kc, const char *spec);
/* the key a --preload spec names (as preload parses it; see zp_keycache_key_r1cs) */
int zp_keycache_key_spec(zp_keycache_t *kc, const char *spec, bool with_key, zp_keyent_t **out);
#endif
