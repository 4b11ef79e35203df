/* peer.h - the DEALER side of the control plane: runtime directory, broker endpoint, a
 * request/reply client, and the stage-worker harness that synth, gpu-worker and finalizer
 * share (HELLO, heartbeats, credits, a work thread, DONE/FAIL, REVOKE/RESET, clean stop).
 *
 * Harness threads: the caller's thread runs the zmq_poll loop (socket + an eventfd from the
 * work thread) with a timeout shorter than the heartbeat interval; one work thread takes
 * assignments in arrival order and calls def->work(). The loop keeps answering heartbeats
 * however long work() runs. Only the loop thread touches the socket.
 * Tests: tests/ipc/. */
#ifndef ZP_PEER_H
#define ZP_PEER_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/proto.h"

/* Runtime directory: override, else $ZP_RUNTIME_DIR, else $XDG_RUNTIME_DIR/zkpipe, else
 * /tmp/zkpipe-<uid>. create: mkdir 0700 if missing; an existing directory must be owned by us
 * and not group/other writable (else -EPERM with a message). */
int zp_runtime_dir(char *buf, size_t n, const char *override, bool create);
/* "ipc://<rundir>/broker.sock" */
int zp_broker_endpoint(char *buf, size_t n, const char *rundir);

typedef struct zp_peer {
    void *ctx, *sock;
    size_t max_frame;
    void *rx;              /* zmq_msg_t of the last received frame (frames point into it) */
} zp_peer_t;

/* DEALER connected to endpoint; max_frame bounds what we accept (0 = ZP_FRAME_MAX_LIMIT) */
int zp_peer_open(zp_peer_t *p, const char *endpoint, size_t max_frame);
void zp_peer_close(zp_peer_t *p);
/* send and free buf (always freed) */
int zp_peer_send(zp_peer_t *p, uint8_t *buf, size_t len);
/* receive one frame within timeout_ms (-1 = forever): 0, -EAGAIN on timeout, -EINTR,
 * ZP_EPROTO/ZP_ETOOBIG on a malformed frame. The frame stays valid until the next recv/close. */
int zp_peer_recv(zp_peer_t *p, zp_frame_t *f, int timeout_ms, uint64_t cmd_mask);
/* send a request, wait for one reply; ZP_ETIMEDOUT (broker not answering) with a message.
 * An ERROR reply is decoded and returned as its code with the message in zp_err_msg(). */
int zp_peer_call(zp_peer_t *p, uint8_t *req, size_t len, zp_frame_t *rep, int timeout_ms);

/* ---- stage-worker harness ---- */
typedef struct zp_stage_task {
    zp_msg_assign_t a;      /* strings point at the owned copies below */
    char *zkey, *r1cs, *wtns;
    volatile int revoked;   /* set by the loop on REVOKE / stop (not RESET): may stop before work() */
    struct zp_stage_task *next;
    /* result, filled by work() */
    bool ok, retryable, payload_bad;
    bool unstarted, stopping;   /* set by the harness only: handed back without running work() */
    int code;
    uint64_t new_gen, t_start, t_end, dt[ZP_DT_N];
    char *proof_json, *public_json;   /* malloc'd by work() (finalizer), freed by the harness */
    uint8_t proof_bin[ZP_MSG_BIN_MAX];
    size_t proof_bin_len;
    char msg[512];
} zp_stage_task_t;

typedef struct zp_stage_def {
    unsigned role, instance, credits, caps;
    const char *name;               /* free text for HELLO / status */
    const char *endpoint;
    int heartbeat_ms;               /* default 500 */
    void *ctx;
    /* run on the work thread: fill t->ok/new_gen/... or t->ok = false + code/msg/retryable */
    void (*work)(void *ctx, zp_stage_task_t *t);
    void (*set_title)(const char *title);   /* main thread; may be NULL */
    volatile sig_atomic_t *stop;    /* set by SIGTERM/SIGINT: finish the running task, hand back the rest */
} zp_stage_def_t;

/* Random non-zero incarnation for this process start. */
uint64_t zp_incarnation_new(void);
/* Runs until *stop is set (then finishes the running task, hands back queued ones with FAIL
 * retryable + unstarted + stopping, and returns 0) or a fatal error (< 0). */
int zp_stage_main(const zp_stage_def_t *def);

/* test hook: ZP_TEST_HOLD_DIR=<dir>: before each task, wait while <dir>/hold-<role> exists */
void zp_stage_test_hold(unsigned role, volatile int *revoked);

/* ---- per-process caches of proving keys and r1cs files (stage workers) ----
 * Keyed by path; an entry is reloaded when the file's (device, inode, size, mtime) changed.
 * Entries live until zp_keycache_destroy: the proving key is loaded once per process.
 * Hot tier: with a store set (zp_keycache_set_store), a proving key comes from the
 * deployment's shared-memory key store (shm/keystore.h): created and filled by the first
 * process that needs it, mapped read-only by the others and by restarted processes, which
 * skip parsing and checking the zkey. Without a store (or if the store fails, e.g. /dev/shm
 * too small: a warning) the key is loaded into private memory as before. The store's
 * functions are passed in so that proto does not link shm. */
#include "lib/groth16/groth16.h"
#include "shm/keystore.h"
typedef struct zp_keycache zp_keycache_t;
typedef struct zp_keyent {
    char *path;
    zp_zkey_t zkey;                 /* kept open (mmap): zp_check_wtns_zkey needs it */
    zp_g16_key_t key;
    void *backend_tag;              /* set by the user (e.g. the backend it was uploaded to) */
    uint64_t dev, ino, size, mtime_ns;
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
int zp_keycache_r1cs(zp_keycache_t *kc, const char *path, const zp_r1cs_t **out);
/* Use the key store at prefix (the arena's shm name): pass zp_keystore_get and
 * zp_keystore_release. prefix NULL: no store. pool: for fills (may be NULL). */
int zp_keycache_set_store(zp_keycache_t *kc, const char *prefix,
                          int (*get)(zp_keystore_key_t *, const char *, const zp_zkey_t *, const char *,
                                     const zp_keystore_opt_t *),
                          void (*release)(zp_keystore_key_t *), zp_pool_t *pool);
/* called with each entry just before its key memory goes away (file changed, destroy): e.g.
 * to host_unregister e->ks->data. */
void zp_keycache_set_release(zp_keycache_t *kc, void (*fn)(void *ctx, zp_keyent_t *e), void *ctx);
/* --preload: load each key (with the point arrays) now; logs and returns the first error */
int zp_keycache_preload(zp_keycache_t *kc, char *const *paths, unsigned n);
/* the stage daemons' shared options: --preload ZKEY (repeatable, up to ZP_PRELOAD_MAX) and
 * --no-key-store; getopt_long codes 'P' and 'K'. Returns true if c was one of them. */
#define ZP_PRELOAD_MAX 16
typedef struct { char *paths[ZP_PRELOAD_MAX]; unsigned n; bool no_store, too_many; } zp_keyopts_t;
#define ZP_KEYOPTS_LONG {"preload", 1, 0, 'P'}, {"no-key-store", 0, 0, 'K'}
#define ZP_KEYOPTS_USAGE "  --preload ZKEY:  load this proving key before taking work (repeatable; READY = key hot)\n" \
                         "  --no-key-store:  keep proving keys in private memory (no shared-memory hot tier)\n"
bool zp_keyopts_parse(zp_keyopts_t *o, int c, char *arg);

/* The command line every stage daemon without extra options shares (synth, finalizer):
 * --runtime-dir DIR --arena NAME --instance N --credits N --threads N --heartbeat-ms MS,
 * the key options above, --help. Set prog and the defaults (credits, arena, hb) first. */
typedef struct {
    const char *prog;               /* "zkpipe-synth": prefixes error messages */
    const char *rundir_opt, *arena;
    unsigned instance, credits, threads, hb;
    zp_keyopts_t ko;
    char rundir[512], endpoint[600];
} zp_stage_opts_t;
/* Parses argv and resolves rundir/endpoint. Returns -1 to go on, else the exit status
 * (0 after --help, 2 on a usage error, 1 on a bad runtime directory; the message printed). */
int zp_stage_opts_parse(zp_stage_opts_t *o, int argc, char **argv, void (*usage)(FILE *f));
/* kc and pool for a stage: the key store at arena_name (unless --no-key-store; get/release
 * are zp_keystore_get/zp_keystore_release) and --preload done (before HELLO: READY means the
 * keys are loaded). Returns -1 to go on, else the exit status (message printed; nothing left
 * allocated). */
int zp_stage_keys_setup(const zp_stage_opts_t *o, const char *arena_name, zp_keycache_t **kc, zp_pool_t **pool,
                        int (*get)(zp_keystore_key_t *, const char *, const zp_zkey_t *, const char *,
                                   const zp_keystore_opt_t *),
                        void (*release)(zp_keystore_key_t *));
#endif
