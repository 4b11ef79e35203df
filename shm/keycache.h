/* keycache.h - the per-process caches of proving keys and r1cs files that the stage daemons
 * use (synth, gpu-worker, finalizer), beside the shared-memory key store they sit on.
 *
 * Keyed by path; an entry is reloaded when the file's (device, inode, size, mtime) changed.
 * Entries live until zp_keycache_destroy: the proving key is loaded once per process.
 * Every entry owns a copy of its path: nothing in an entry (nor in its opened zkey/r1cs, whose
 * messages name the file) points at the caller's string, which may be freed right after the
 * call (a stage task's paths are freed when the task ends).
 * Hot tier: with a store set (zp_keycache_set_store), a proving key comes from the deployment's
 * shared-memory key store (keystore.h): created and filled by the first process that needs it,
 * mapped read-only by the others and by restarted processes, which skip parsing and checking
 * the zkey. Without a store (or if the store fails, e.g. /dev/shm too small: a warning) the key
 * is loaded into private memory.
 * Not thread-safe: one caller at a time (the stage's work thread, or its init).
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
    zp_zkey_t zkey;                 /* kept open (mmap): zp_check_wtns_zkey needs it; its path is ours */
    zp_g16_key_t key;
    void *backend_tag;              /* set by the user (e.g. the backend it was uploaded to) */
    uint64_t file_id[4];            /* device, inode, size, mtime (ns) when loaded */
    /* hot tier: key.* point into ks->data (PROT_READ); NULL: private memory */
    zp_keystore_key_t *ks;
    bool hot;                       /* found READY in the store (not parsed by this process) */
    uint64_t load_ns;
    void *user;                     /* free for the user (e.g. a host registration) */
} zp_keyent_t;

zp_keycache_t *zp_keycache_new(void);
void zp_keycache_destroy(zp_keycache_t **kcp);
/* load (or find) the key; with_key = false: only the zkey header (no point copies) */
int zp_keycache_key(zp_keycache_t *kc, const char *path, bool with_key, zp_keyent_t **out);
/* drop the reference zp_keycache_key handed out (call when the task that used the entry is
 * done with it): an entry in use is never evicted. Today entries live until destroy. */
void zp_keycache_release(zp_keycache_t *kc, zp_keyent_t *e);
int zp_keycache_r1cs(zp_keycache_t *kc, const char *path, const zp_r1cs_t **out);
/* Use the key store whose objects are named after prefix (the arena's shm name); NULL: no
 * store. pool: for fills (may be NULL). */
int zp_keycache_set_store(zp_keycache_t *kc, const char *prefix, zp_pool_t *pool);
/* called with each entry just before its key memory goes away (file changed, destroy): e.g.
 * to host_unregister e->ks->data. */
void zp_keycache_set_release(zp_keycache_t *kc, void (*fn)(void *ctx, zp_keyent_t *e), void *ctx);
/* load one key with its point arrays (a --preload); the error names the path */
int zp_keycache_preload(zp_keycache_t *kc, const char *path);
#endif
