/* keystore.h - the "hot" tier of proving keys: one named POSIX shared-memory object per
 * (zkey file, layout version), filled once by the first process that needs the key and then
 * mapped read-only by every stage process, so that a restarted process rebuilds its key view
 * from offsets instead of re-parsing and re-checking the zkey.
 *
 * Name: "<prefix>-key-<16 hex>", prefix = the deployment's arena name ("/zkpipe-<user>-<name>"),
 * hex = hash of (realpath, size, mtime, inode, device) of the zkey and ZP_KEYSTORE_VERSION; a
 * changed zkey file gets a new name. Layout of an object (offsets from its start; no pointers):
 *   [0, 4096)            zp_keystore_hdr_t (state word, counts, header points, array offsets,
 *                        header checksum)
 *   [4096, data_off)     n_chunks u64 checksums, one per ZP_KEYSTORE_CHUNK bytes of data
 *   [data_off, +data_len) the key block exactly as zp_g16_key_load_into writes it
 * Protocol: the creator shm_open(O_CREAT|O_EXCL)s the final name, takes flock(LOCK_EX) on it,
 * writes the header with state FILLING and its pid, fills and checks the key (the normal
 * zp_g16_key_load path), writes the checksums and the header checksum, and publishes with a
 * release store of state = READY; then drops the lock. Openers wait (bounded) for READY; a
 * FILLING object whose lock is free has a dead creator and is unlinked and rebuilt; so is a
 * READY object that fails validation. Every header field is untrusted: sizes and offsets are
 * checked against fstat before mmap and before use; a short object is an error, not a SIGBUS.
 * A healthy object is unlinked only by zp_keystore_unlink_all() (the deployment owner on a
 * clean shutdown, tests), by the store budget (opt.budget: least recently used objects no
 * process holds, before a fill) and by zp_keystore_evict (`zkpipe keys evict`). Every user
 * holds flock(LOCK_SH) on the object while it maps it (doc/keys.md).
 * Deployment: /dev/shm must hold every key (the fill reserves its pages first: a full /dev/shm
 * is ENOSPC, and the key cache then falls back to private memory). Test hook:
 * ZP_TEST_KEYSTORE_FILL_MS=<ms> makes a creator pause before publishing READY.
 * Tests: tests/test_keystore.c, tests/ipc/keystore_hot.sh */
#ifndef ZP_KEYSTORE_H
#define ZP_KEYSTORE_H
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/groth16/groth16.h"

#define ZP_KEYSTORE_MAGIC 0x3130594b504b5aULL   /* "ZKPKY01" */
#define ZP_KEYSTORE_VERSION 4u   /* 2: the zkey path in the header; users hold LOCK_SH; 3: conv + r1cs identity;
                                  * 4: compacted A / B (bellman keys as in the file: counts, bitmaps, prefixes) */
#define ZP_KEYSTORE_HDR_BYTES 4096u
#define ZP_KEYSTORE_CHUNK ((size_t)1 << 20)      /* data checksum granularity */
#define ZP_KEYSTORE_NAME_MAX 240
#define ZP_KEYSTORE_PATH_MAX 1024

enum { ZP_KEYSTORE_FILLING = 1, ZP_KEYSTORE_READY = 2 };

/* the header (page 0). All fields but state are written before READY and never after. */
typedef struct zp_keystore_hdr {
    uint64_t magic;
    uint32_t version;
    _Atomic uint32_t state;         /* 0 (being created) | FILLING | READY */
    int32_t creator_pid;
    uint32_t curve;
    uint32_t n_vars, n_public, domain_size, log_n, n_coefs, chunk_shift;
    uint64_t total_bytes;           /* the object's size */
    uint64_t data_off, data_len;    /* the key block */
    uint64_t n_chunks;              /* ceil(data_len / chunk) checksums at ZP_KEYSTORE_HDR_BYTES */
    zp_g16_key_offs_t offs;         /* from data_off */
    uint64_t file_dev, file_ino, file_size, file_mtime_ns;
    uint8_t alpha1[sizeof(zp_g1a_any_t)], beta1[sizeof(zp_g1a_any_t)], delta1[sizeof(zp_g1a_any_t)];
    uint8_t beta2[sizeof(zp_g2a_any_t)], gamma2[sizeof(zp_g2a_any_t)], delta2[sizeof(zp_g2a_any_t)];
    uint64_t table_sum;             /* zp_shm_checksum of the chunk checksum table */
    uint64_t fill_ns;               /* how long the creator took */
    char path[ZP_KEYSTORE_PATH_MAX];/* realpath of the zkey (NUL-terminated; for listings only) */
    uint32_t conv;                  /* (v3) the key's conventions (zp_g16_conv_id_t): validated by zp_g16_key_bind */
    uint32_t pad0;
    uint64_t r1cs_dev, r1cs_ino, r1cs_size, r1cs_mtime_ns; /* (v3) a bellman key: the circuit it was laid out with */
    uint32_t compact, n_a, n_b;     /* (v4) zp_g16_key_t's: A / B1 / B2 compacted (offs.dens_* / pfx_*), untrusted: bind checks */
    uint32_t pad1;
    uint64_t hdr_sum;               /* zp_shm_checksum of this struct with state/creator_pid/hdr_sum = 0 */
} zp_keystore_hdr_t;
static_assert(sizeof(zp_keystore_hdr_t) <= ZP_KEYSTORE_HDR_BYTES, "keystore header fits page 0");
static_assert(offsetof(zp_keystore_hdr_t, state) == 12, "keystore hdr.state");
static_assert(offsetof(zp_keystore_hdr_t, offs) == 80, "keystore hdr.offs");

/* one process's view of a key in the store */
typedef struct zp_keystore_key {
    zp_g16_key_t key;               /* arrays point into the read-only mapping */
    void *map; size_t map_len;      /* the whole object, PROT_READ */
    void *data; size_t data_len;    /* the key block inside it (register this with a backend) */
    bool hot;                       /* true: found READY; false: this process filled it */
    uint64_t load_ns, fill_ns;      /* this call's time; the creator's fill time */
    char name[ZP_KEYSTORE_NAME_MAX];
    int fd;                         /* the object, holding LOCK_SH while mapped (fd_ok) */
    bool fd_ok;
} zp_keystore_key_t;

typedef struct {
    int wait_ms;         /* how long to wait for a live creator (0 = 600000: a Filecoin-size fill) */
    zp_pool_t *pool;     /* for the fill (may be NULL) */
    bool full_verify;    /* check every data chunk's checksum on open (default: a sample;
                            also with env ZP_KEYSTORE_VERIFY=full) */
    uint64_t budget;     /* bytes the store's objects may take (0: no limit): before a fill,
                            least recently used objects no process holds are unlinked */
} zp_keystore_opt_t;

/* "<prefix>-key-<16 hex>" for the zkey at path (stat + realpath). */
int zp_keystore_name(char *buf, size_t n, const char *prefix, const char *path);
/* Open the key of zkey z (opened from path) from the store, creating and filling it if
 * absent. opt may be NULL. ZP_ETIMEDOUT if another live creator does not finish in time. */
int zp_keystore_get(zp_keystore_key_t *ks, const char *prefix, const zp_zkey_t *z, const char *path,
                    const zp_keystore_opt_t *opt);
/* (added, issue 29 item 4) any key source: what the object must hold (checked when it is found
 * READY), and how the creator fills it. prepare: the key block's size (the heavy parse may run
 * here: only a creator calls it); fill: the key into [mem, mem+len) (zp_g16_key_load_into's
 * contract: k's arrays inside mem, not owned). n_coefs UINT32_MAX: not compared. r1cs: the
 * circuit a bellman key is laid out with (its identity joins the object's name and header). */
typedef struct zp_keystore_src {
    const char *path, *r1cs;
    uint32_t conv, curve, n_vars, n_public, domain_size, n_coefs;
    int (*prepare)(void *ctx, size_t *bytes);
    int (*fill)(void *ctx, zp_g16_key_t *k, void *mem, size_t len, zp_pool_t *pool);
    void *ctx;
} zp_keystore_src_t;
int zp_keystore_get_src(zp_keystore_key_t *ks, const char *prefix, const zp_keystore_src_t *src,
                        const zp_keystore_opt_t *opt);
/* the name of (key file, r1cs) (r1cs NULL: zp_keystore_name) */
int zp_keystore_name_r1cs(char *buf, size_t n, const char *prefix, const char *path, const char *r1cs);

/* A bellman .params + its circuit's r1cs in the store (keystore_bellman.c): laid out in the
 * stages' key shape, A / B compacted as in the file (assignment.h zp_g16_key_from_bellman, conv = bellman) by the first process
 * that needs it; the others map it. The .params is parsed (every bellman check, subgroup
 * included) only by that creator. Errors name the file and the field. r1cs may name a density
 * file instead (assignment.h zp_g16_bdensity_*: the three bitmaps): the key has no
 * coefficients then (pre-synthesized vector jobs only). */
int zp_keystore_get_bellman(zp_keystore_key_t *ks, const char *prefix, const char *params, const char *r1cs,
                            const zp_keystore_opt_t *opt);
/* the same into private memory (no store): k owns it (zp_g16_key_close) */
int zp_key_load_bellman_private(zp_g16_key_t *k, const char *params, const char *r1cs, zp_pool_t *pool);

/* Open an existing READY object by name only (no zkey): -ENOENT if absent, ZP_EAGAIN-like
 * -EAGAIN if not READY, ZP_EFORMAT if it fails validation (nothing is unlinked). */
int zp_keystore_open_name(zp_keystore_key_t *ks, const char *name, bool full_verify);
void zp_keystore_release(zp_keystore_key_t *ks);
/* Unlink every "<prefix>-key-*" object (mappings stay valid until released). Returns how many
 * were unlinked, or < 0. For the broker / `zkpipe up` on a clean shutdown, and tests. */
int zp_keystore_unlink_all(const char *prefix);

/* ---- budget, listing, eviction (keys tiers: doc/keys.md) ----
 * Every process that maps an object holds flock(LOCK_SH) on it until zp_keystore_release
 * (which also stamps the object's atime: the store's LRU clock). An object is "in use" while
 * any process holds it; in-use objects are never unlinked except by evict(force). */
#define ZP_KEYSTORE_MAX_HOLDERS 16
typedef struct {
    char name[ZP_KEYSTORE_NAME_MAX];
    char path[ZP_KEYSTORE_PATH_MAX];   /* "" if the header is not READY/valid */
    uint32_t state;                    /* 0 | FILLING | READY (header word, unvalidated) */
    bool valid;                        /* READY and the header checksum matches */
    uint64_t bytes;                    /* the object's size (fstat) */
    uint64_t last_use_ns;              /* atime, CLOCK_REALTIME ns */
    bool in_use;                       /* some process holds a lock on it */
    unsigned n_holders;                /* pids from /proc/locks (at most ZP_KEYSTORE_MAX_HOLDERS) */
    int32_t holders[ZP_KEYSTORE_MAX_HOLDERS];
} zp_keystore_info_t;
/* every "<prefix>-key-*" object, least recently used first; *out malloc'd (free it) */
int zp_keystore_list(const char *prefix, zp_keystore_info_t **out, size_t *n);
/* unlink one object by name: -EBUSY (naming the holders) if in use and !force. Mappings stay
 * valid; the memory goes when the last holder releases it. */
int zp_keystore_evict(const char *name, bool force);
/* unlink least recently used objects nobody holds until the store's bytes + need <= budget
 * (keep: a name never unlinked, may be NULL). Returns the bytes still over budget (0: fits). */
int64_t zp_keystore_enforce(const char *prefix, uint64_t budget, uint64_t need, const char *keep);
/* (added) bytes of a store object for a key block of key_bytes (zp_g16_key_bytes): the header
 * page, the chunk checksum table and the block (doc/memory.md) */
uint64_t zp_keystore_object_bytes(uint64_t key_bytes);
#endif
