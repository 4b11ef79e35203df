/* stage.h - the one runtime of the stage daemons (synth, gpu-worker, finalizer), postgres
 * background-worker style: a daemon fills a zp_stage_def_t (role, its own options, init,
 * work, fini) and calls zp_stage_run(&def, argc, argv) from main. The runtime owns the rest:
 *   - signals, first thing: SIGTERM/SIGINT set a stop flag (finish the running task, hand the
 *     queued ones back, exit 0), SIGHUP is logged and ignored, SIGPIPE is ignored (a closed
 *     stderr pipe must not kill a stage); a stop during init (key preload) exits 0 cleanly;
 *   - the shared options (--runtime-dir --arena --instance --credits --threads --heartbeat-ms
 *     --preload --no-key-store --help) plus the daemon's own (def->opts / def->opt);
 *   - the arena (zp_stage_arena: opened per epoch), the key cache (shm/keycache.h: key store
 *     + --preload before HELLO, so READY means the keys are loaded) and the thread pool;
 *   - HELLO (one function: stage.c hello_build), heartbeats, credits, one work thread that runs
 *     def->work() per assignment in arrival order, REVOKE/RESET, the service manager
 *     notifications (proto/notify.h);
 *   - results: a DONE or FAIL is never dropped: frames the socket does not take now (high-water
 *     mark: a stalled broker) wait in an ordered outbox and are resent as soon as it takes
 *     them; a stop waits (bounded) for the outbox to drain;
 *   - leases: an ASSIGN may carry a deadline (lease_deadline); a work thread still on a task
 *     past it is taken as hung: the stage stops heartbeating and exits ZP_STAGE_EXIT_LEASE so
 *     its supervisor restarts it (the broker requeues the partition on the same expiry);
 *   - failure classes: work() fails a task with zp_stage_fail()/zp_stage_fail_as(); every FAIL
 *     carries its zp_fail_class_t. A DEVICE failure is reported, then the stage stops taking
 *     work and exits ZP_STAGE_EXIT_DEVICE so its supervisor restarts it clean.
 * Threads: the caller's (main) thread runs init, the zmq_poll loop and fini; only it touches the
 * socket. The work thread owns the task it runs; work() must not keep pointers into a task
 * after it returns (paths are freed). Signals are blocked on the work thread.
 * The slot protocol the stages follow: doc/slot-protocol.md.
 * Tests: tests/ipc/stage_*.sh with the fake broker tests/ipc/stage_peer.c; tests/ipc/. */
#ifndef ZP_STAGE_H
#define ZP_STAGE_H
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/groth16/groth16.h"
#include "proto/proto.h"
#include "shm/keycache.h"
#include "shm/shm.h"

/* exit statuses besides 0 (clean stop), 1 (error) and 2 (usage) */
#define ZP_STAGE_EXIT_DEVICE 3      /* a device error: restart me clean */
#define ZP_STAGE_EXIT_LEASE 4       /* my work thread overran its lease: restart me */
#define ZP_STAGE_EXIT_REFUSED 5     /* the broker refused my HELLO (its reason logged): a deployment error */

typedef struct zp_stage_task {
    zp_msg_assign_t a;      /* strings point at the owned copies below */
    char *zkey, *r1cs, *wtns, *wasm;   /* wasm: "" or the synth's witness generator (ASSIGN key 15) */
    volatile int revoked;   /* set by the loop on REVOKE / stop (not RESET): may stop before work() */
    volatile int dropped;   /* set by the loop on RESET while the task is being staged: discarded unreported */
    struct zp_stage_task *next;
    /* staging (def->stage): the buffer set this task holds (0 .. s->stage_sets-1) from staging
     * until it is reported or dropped, and what stage() left for work() (priv) */
    unsigned set;
    bool staged;                /* def->stage succeeded: def->unstage must run */
    void *priv;
    /* result, filled by work() (zp_stage_fail* for a failure) */
    bool ok, payload_bad;
    bool unstarted, stopping;   /* set by the runtime only: handed back without running work() */
    uint8_t fail_class;         /* zp_fail_class_t */
    int code;
    uint64_t new_gen, t_start, t_end, dt[ZP_DT_N];
    uint64_t tm[ZP_TM_N];       /* absolute ns: staging start/end, compute start/end (DONE key 12);
                                   t_start..t_end: the work thread's part */
    char *proof_json, *public_json;   /* malloc'd by work() (finalizer), freed by the runtime */
    uint8_t proof_bin[ZP_MSG_BIN_MAX];
    size_t proof_bin_len;
    char msg[512];
    zp_keyent_t *key;           /* a key cache entry work() took for the task: the runtime releases
                                   it (zp_keycache_release) when the task ends */
    /* def->deferred (the runtime's, under its lock): not run / running / ended, its result and
     * message (zp_stage_deferred_wait hands them to work()); unqueued: dropped from the ready
     * queue while it ran (the staging thread then finishes the task) */
    uint8_t dstate;
    bool unqueued;
    int drc;
    char dmsg[400];
    /* def->launch (the runtime's): whether the task's compute was launched (or work() runs it
     * whole, or it is handed back without work()), and cancel asked (the work thread's); whether
     * that compute ended (under the runtime's lock: the done callback sets it) */
    uint8_t chain;
    bool computed, cancel_tried;
    void *rt;
} zp_stage_task_t;

enum { ZP_STAGE_DEFERRED_NONE = 0, ZP_STAGE_DEFERRED_RUNNING = 1, ZP_STAGE_DEFERRED_DONE = 2 };
enum { ZP_STAGE_CHAIN_NONE = 0, ZP_STAGE_CHAIN_LAUNCHED = 1, ZP_STAGE_CHAIN_SKIP = 2 };

#define ZP_PRELOAD_MAX 16

typedef struct zp_stage zp_stage_t;
typedef struct zp_stage_def {
    unsigned role;                  /* ZP_ROLE_* */
    const char *prog;               /* "zkpipe-synth": prefixes messages */
    const char *log_role;           /* "synth": zp_log_init */
    unsigned credits;               /* default --credits */
    unsigned caps;                  /* ZP_CAP_* announced in HELLO (init may change s->caps) */
    /* the daemon's own options: long options (terminated by a zero entry; codes must not be
     * 'r' 'a' 'i' 'c' 't' 'H' 'P' 'K' 'h', nor 2001, 2002: --key-budget, --key-store-budget),
     * their usage text, and the parser. opt returns -1 to go on, else the exit status (message
     * printed). */
    const struct option *opts;
    const char *usage_args, *usage_text;
    int (*opt)(zp_stage_t *s, int c, const char *arg);
    /* after options, signals, arena name, pool and key cache, before --preload and HELLO:
     * open what work() needs (the GPU worker's backend). -1 to go on, else the exit status. */
    int (*init)(zp_stage_t *s);
    /* run on the work thread: fill t->ok/new_gen/... or fail it with zp_stage_fail* */
    void (*work)(zp_stage_t *s, zp_stage_task_t *t);
    /* the arena was opened (a new epoch) / is about to be closed; may be NULL */
    void (*arena_opened)(zp_stage_t *s);
    void (*arena_closing)(zp_stage_t *s);
    /* arena_first: the runtime opens the arena (waiting for it to appear, signals honoured)
     * before HELLO and calls arena_opened there; a new epoch's arena is opened by the loop
     * thread while the work thread is idle, before any task of that epoch runs. prepare (may be
     * NULL): main thread, after the arena and --preload, before HELLO; -1 to go on, else the
     * exit status (the GPU worker pins the preloaded keys here). */
    bool arena_first;
    int (*prepare)(zp_stage_t *s);
    /* main thread, after the loop, after the key cache is gone; may be NULL */
    void (*fini)(zp_stage_t *s);
    /* Staging (opt-in; the GPU worker): a staging thread runs stage() for the next assigned task
     * while the work thread runs work() (or work_batch()) on the tasks already staged, so the
     * O(n) preparation of task k+1 (arena, key, slot check, payload verify, copies into the
     * task's buffer set t->set) overlaps the compute of task k. There are s->stage_sets buffer
     * sets (= the credits); a task holds one from staging until it is reported or dropped.
     * stage() fails a task with zp_stage_fail* (reported without work()); unstage() (may be
     * NULL) releases what a successful stage() took: after work(), or when the staged task is
     * dropped (REVOKE, RESET, stop; then on the loop thread). The staging thread uses
     * s->stage_pool, never s->pool (one zp_pool_run at a time per pool). stage() may call
     * zp_stage_arena: the runtime first waits until no task is staged or running when the
     * task's epoch is not the open arena's. work_batch (may be NULL): with s->batch > 1 the work
     * thread hands it up to s->batch consecutive staged tasks with the same zkey path. */
    void (*stage)(zp_stage_t *s, zp_stage_task_t *t);
    void (*unstage)(zp_stage_t *s, zp_stage_task_t *t);
    void (*work_batch)(zp_stage_t *s, zp_stage_task_t **t, unsigned n);
    /* Deferred check (opt-in, with stage; the GPU worker: the payload checksum): the staging
     * thread has deferred() run for a task right after stage() succeeded and the task went to the
     * work thread (on the runtime's "zp-verify" thread at the normal policy, the staging thread
     * asleep until it returns: a control thread does no O(n) work itself), so the O(n) check overlaps the task's own compute (starved: nothing was
     * staged ahead) or, staged ahead, the previous task's. It gates the task's result, not its
     * start: work() calls zp_stage_deferred_wait() before it commits anything and drops the
     * result on an error. Returns 0 or an error code with the message set (zp_err_set); it
     * must not touch the task's result fields (work() owns them) except dt[] entries of its
     * own (the GPU worker: dt[ZP_DT_VERIFY_IN]). The runtime keeps the task (and its buffer
     * set) until deferred() returned: it is unstaged, reported or dropped only after (a
     * REVOKE / RESET meanwhile is applied then). Runs on s->stage_pool. */
    int (*deferred)(zp_stage_t *s, zp_stage_task_t *t);
    /* Chained computes (opt-in, with stage, not with batching; the GPU worker, issue 10): the
     * work thread takes a staged task as soon as the task it runs has been launched and calls
     * launch() on it, which starts its compute asynchronously behind the running one (the
     * backend's compute thread, as a stream) and returns 1: done(arg) is then called, on any
     * thread, once that compute ended, and work() afterwards waits for it and commits; 0: not
     * launched, work() runs the task whole once the tasks before it are completed; < 0: t
     * failed (reported without work()). Two tasks at most are running (launched) at once. So
     * the device goes from one compute to the next without waiting on this thread to wake,
     * commit and hand over. */
    int (*launch)(zp_stage_t *s, zp_stage_task_t *t, void (*done)(void *arg), void *arg);
    /* with launch: a launched task was revoked (REVOKE, stop): take its compute back if it has
     * not begun (true: done is never called, the task is handed back unstarted without work());
     * false: it runs, work() follows as usual */
    bool (*cancel)(zp_stage_t *s, zp_stage_task_t *t);
    void *ctx;                      /* the daemon's state */
} zp_stage_def_t;

/* What the runtime hands init/work/fini. Options are read-only after parsing. */
struct zp_stage {
    const zp_stage_def_t *def;
    void *ctx;                      /* def->ctx */
    const char *rundir_opt, *arena_opt;
    unsigned instance, credits, threads, hb_ms;
    bool have_instance;             /* --instance was given */
    char *preload[ZP_PRELOAD_MAX];
    unsigned n_preload;
    bool no_key_store;
    uint64_t key_budget, key_store_budget;  /* --key-budget, --key-store-budget (0: none; doc/keys.md) */
    char rundir[512], endpoint[600];
    char arena_name[ZP_SHM_NAME_MAX + 1];
    zp_shm_t *arena;                /* work thread only (zp_stage_arena) */
    zp_keycache_t *kc;              /* thread-safe (keycache.h); the loop reports its keys */
    zp_pool_t *pool;
    char name[96];                  /* HELLO / status text; init may set it */
    unsigned caps;
    unsigned batch;                 /* def->work_batch: at most this many tasks per call (>= 1) */
    unsigned stage_sets;            /* def->stage: buffer sets (= credits), set before the loop */
    zp_pool_t *stage_pool;          /* def->stage: the staging thread's pool (same size as pool) */
    void *loop;                     /* the runtime's loop state (stage_loop.c), set before the threads */
};

/* Runs the stage; returns main's exit status. */
int zp_stage_run(const zp_stage_def_t *def, int argc, char **argv);

/* work thread: the arena of this epoch (re-opened when the epoch changed; arena_opened /
 * arena_closing called around it). Error with a message. */
int zp_stage_arena(zp_stage_t *s, uint64_t epoch);

/* Fail t: code, message "what: <strerror>: <detail>", class decided by zp_stage_fail_class
 * (zp_stage_fail) or given (zp_stage_fail_as). */
void zp_stage_fail(zp_stage_task_t *t, int code, const char *what);
void zp_stage_fail_as(zp_stage_task_t *t, int code, zp_fail_class_t cls, const char *what);
/* The class of an error about the job's own files and data: INPUT when it is deterministic
 * (malformed, mismatched or unsatisfying inputs, a missing or unreadable file), else
 * TRANSIENT. Device errors are classified by the backend wrapper (stage/backend.h). */
zp_fail_class_t zp_stage_fail_class(int code);

/* work thread, before a task's result is committed (def->deferred): wait until its deferred
 * check ended; its result: 0, or its error code with its message set on this thread
 * (zp_err_msg). 0 at once for a task without one. */
int zp_stage_deferred_wait(zp_stage_t *s, zp_stage_task_t *t);

/* test hook: ZP_TEST_HOLD_DIR=<dir>: before each task, wait while <dir>/hold-<role> exists */
void zp_stage_test_hold(unsigned role, volatile int *revoked);
/* the same for a named point inside a task: wait while <dir>/hold-<what> exists (the GPU
 * worker: "gpu-compute", between the compute's start stamp and the backend call) */
void zp_stage_test_hold_at(const char *what, volatile int *revoked);
#endif
