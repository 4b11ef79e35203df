/* broker_int.h - the broker's private state: job table, per-stage queues, workers, counters.
 * One thread owns all of it (the zmq_poll loop in broker.c); nothing here is locked.
 * Files: broker.c (sockets, loop, message handlers), sched.c (queues, dispatch, DONE/FAIL,
 * requeue, failure classes), slots.c (slot holders, quarantine, leases), jobs.c (job table:
 * hashed lookups, live/finished lists, retention, submit, cancel), report.c (status text/JSON,
 * Chrome trace, await results and waiters), journal.c (SQLite write-ahead store), recover.c
 * (restart: journal + arena -> queues). sched.c, slots.c, jobs.c, recover.c, report.c and
 * journal.c never touch a socket: they send through brk_send and declare deaths through
 * brk_worker_dead (broker.c, or the model test's stand-ins: tests/test_model.c).
 * The slot protocol they implement: doc/slot-protocol.md. */
#ifndef ZP_BROKER_INT_H
#define ZP_BROKER_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zmq.h>

#include "lib/util/util.h"
#include "proto/proto.h"
#include "shm/shm.h"

#define BRK_MAX_WORKERS 256
#define BRK_MAX_INFLIGHT ZP_MSG_MAX_CREDITS
#define BRK_ID_MAX 256
#define BRK_BUSY_RING 512

typedef enum { PS_QUEUED = 0, PS_RUNNING = 1, PS_DONE = 2, PS_FAILED = 3, PS_CANCELED = 4 } brk_pstate_t;

struct brk_worker;
struct brk_job;

typedef struct brk_part {
    struct brk_job *job;
    uint32_t idx;
    char *wtns;
    brk_pstate_t state;
    unsigned stage;             /* stage queued at / running in (zp_role_t) */
    int32_t slot;               /* -1: none */
    uint64_t word_gen;          /* generation the broker expects in the slot word now */
    uint64_t payload_gen;       /* stamp of the synth's seal (0: none yet) */
    uint64_t result_gen;        /* stamp of the GPU's RESULT commit (0: none yet) */
    uint32_t attempt;           /* 1-based; charged failures only (doc/slot-protocol.md, classes) */
    uint32_t n_uncharged;       /* worker/device-class failures (deaths, leases): bounded by max_deaths */
    uint8_t n_verify_fail;      /* pairing-check failures of this partition's results */
    uint8_t n_input;            /* input-class failures that were confirmed on another try */
    uint8_t last_class;         /* zp_fail_class_t of the last failure (the fleet reports a final
                                   failure as input class only when it was one) */
    uint64_t not_before;        /* transient backoff: not dispatched before (monotonic ns) */
    uint64_t winc[ZP_NROLES];   /* incarnation of the worker that ran each stage (last attempt) */
    uint64_t avoid_inc;         /* prefer another worker than this one for the next try */
    struct brk_worker *worker;  /* while RUNNING */
    bool queued;
    /* monotonic ns */
    uint64_t t_submit, t_queued[ZP_NROLES], t_assign[ZP_NROLES], t_start[ZP_NROLES], t_end[ZP_NROLES],
        t_done[ZP_NROLES];
    uint32_t wpid[ZP_NROLES];   /* who ran each stage (last attempt) */
    uint64_t dt[ZP_NROLES][ZP_DT_N];
    uint64_t tm[ZP_NROLES][ZP_TM_N];   /* DONE key 12: staging start/end, compute start/end (absolute ns) */
    char *reasons;              /* collected failure reasons, "; "-separated */
    char *proof_json, *public_json;
    uint8_t proof_bin[ZP_MSG_BIN_MAX];
    size_t proof_bin_len;
    uint64_t adopt_deadline;    /* RUNNING with no worker after a broker restart: a worker's HELLO
                                   listing (slot, word_gen) adopts it before this (recover.c) */
    bool revoking;              /* slots: a REVOKE went to its synth to take the slot back for better
                                   work (sched.c, take_back); cleared when it is assigned again */
} brk_part_t;

typedef struct brk_job {
    uint64_t id, seq;
    char *request_id, *zkey, *r1cs;
    char *wasm;                 /* "" or circom's witness generator: parts' wtns are input.json (issue 28) */
    uint32_t priority;
    zp_job_state_t state;
    uint32_t n_parts, n_done, n_failed;
    brk_part_t *parts;          /* NULL once finished and compacted: results are in the journal */
    uint64_t t_submit, t_finish;
    uint64_t finish_wall_us;    /* retention clock (wall time survives restarts) */
    uint32_t domain;            /* learned from a sealed payload (lease scaling); 0: not yet */
    uint64_t zkey_hash;         /* keys: brk_job_key (0: not computed yet) */
    /* slots (slots.c, brk_job_size): the slot extent its circuit needs, from the zkey header
     * (0: unknown, the largest class), and the smallest slot class that holds it */
    uint64_t need_bytes;
    uint32_t cls;
    bool sized;
    struct brk_job *h_id, *h_rid;   /* hash chains (jobs.c) */
    struct brk_job *prev, *next;    /* b->live (running) or b->fin (finished, oldest first) */
} brk_job_t;

typedef struct { uint32_t slot; uint64_t gen; brk_part_t *part; } brk_inflight_t;
typedef struct { uint64_t s, e; } brk_interval_t;

/* ---- observability (metrics.c) ---- */
enum { BRK_IDLE_BUSY = 0, BRK_IDLE_STARVED = 1, BRK_IDLE_NO_CREDIT = 2, BRK_IDLE_HANDOFF = 3, BRK_IDLE_NCAUSE = 4 };
#define BRK_IDLE_BUCKETS 64     /* one-second buckets: the last minute and some */
#define BRK_HTTP_CONNS 8
typedef struct { uint64_t sec; uint64_t ns[BRK_IDLE_NCAUSE]; } brk_idle_bucket_t;
typedef struct {
    brk_idle_bucket_t b[BRK_IDLE_BUCKETS];
    uint64_t t_last;            /* last tick (monotonic ns); 0: not started */
    unsigned state;             /* BRK_IDLE_* seen at t_last */
    uint64_t run_start, last_end; /* current busy run; latest reported t_end in it */
    bool tail_ok;               /* the last live task of the run was reported (not canceled) */
} brk_idle_t;
/* ---- end observability ---- */

/* keys: a proving key a worker reported holding (HELLO / HEARTBEAT; doc/keys.md) */
#define BRK_KEY_NAME 160
typedef struct { uint64_t hash, bytes; uint32_t tier; char name[BRK_KEY_NAME]; } brk_key_t;

typedef struct brk_worker {
    bool used, alive;
    uint8_t id[BRK_ID_MAX];
    size_t id_len;
    uint32_t role, instance, pid, caps, credits;
    uint64_t pid_start;             /* pid's start time (/proc), read at its first slot hold; 0 unknown */
    uint64_t incarnation;
    char name[ZP_MSG_NAME_MAX + 1];
    uint64_t last_seen, first_seen;
    unsigned n_inflight;
    brk_inflight_t inflight[BRK_MAX_INFLIGHT];
    uint64_t n_done, n_fail;
    uint64_t n_class[ZP_NFAIL_CLASSES]; /* failures by class (deaths count as worker) */
    uint32_t fail_streak;       /* partitions failed in a row (not input class) */
    uint32_t n_trips;           /* times the circuit breaker took it out of rotation */
    uint64_t tripped_until;     /* out of rotation until (monotonic ns); 0: in rotation */
    brk_interval_t busy[BRK_BUSY_RING];
    unsigned busy_head, busy_n;
    brk_idle_t idle;            /* metrics.c */
    /* keys (sched.c brk_worker_keys): what it last reported; untrusted, routing only */
    bool keys_known;
    unsigned n_keys;
    brk_key_t keys[ZP_MSG_MAX_KEYS];
    uint64_t key_loads, key_evictions, key_budget;  /* as reported */
    uint64_t key_switches;      /* partitions assigned to it whose key it did not hold */
    uint64_t recent[ZP_MSG_MAX_KEYS];   /* keys of partitions it finished since its last report */
    unsigned n_recent;
} brk_worker_t;

typedef struct brk_waiter {
    uint8_t id[BRK_ID_MAX];
    size_t id_len;
    uint64_t job, deadline;
    struct brk_waiter *next;
} brk_waiter_t;

typedef struct {
    uint64_t malformed, oversized, stale, unknown_peer, assigns, requeued[ZP_NROLES], deaths[ZP_NROLES],
        parts_done, parts_failed, jobs_submitted;
    uint64_t hello_refused, fence_requests, fence_unsupervised;   /* ident.c */
    uint64_t fail_class[ZP_NFAIL_CLASSES];  /* failures reported or declared, by class */
    uint64_t leases_expired, quarantined, quarantine_released, breaker_trips, verify_redo;
    uint64_t jobs_evicted, waiters_refused;
    uint64_t key_affine, key_switches, key_first;   /* keys: assigns to a holder / a switch / no holder */
} brk_counters_t;

/* One per arena slot (slots.c; doc/slot-protocol.md "Holders and quarantine"). */
typedef struct brk_slot {
    brk_part_t *part;           /* the partition bound to the slot, or NULL */
    /* The holder: the process last assigned the slot. Until it reports (DONE/FAIL/hand-back)
     * or is known gone it may still write into the slot, so the slot is given to no one else:
     * held and no live assignment = quarantined. Mirrored in the descriptor's owner fields so a
     * restarted broker keeps the quarantine. */
    bool held;
    uint32_t h_role, h_instance, h_pid;
    uint64_t h_inc, h_gen, h_since;
    uint64_t h_start;               /* h_pid's start time when it got the slot (0: unknown) */
    uint64_t lease;             /* deadline of the live assignment (monotonic ns); 0: none */
} brk_slot_t;

struct brk_journal;

typedef struct brk {
    /* config */
    char rundir[512], endpoint[600], arena_name[ZP_SHM_NAME_MAX + 1];
    uint32_t n_slots, max_domain, max_vars, max_attempts, liveness;
    int heartbeat_ms;
    size_t max_frame;
    /* leases: base + per_m * domain / 2^20, per stage (ms) */
    uint32_t lease_base_ms[ZP_NROLES], lease_per_m_ms[ZP_NROLES];
    uint32_t lease_key_ms;      /* added to an assignment whose worker has not reported holding the
                                   job's key: its first import (--lease-ms 5th value) */
    uint32_t breaker_k, breaker_cooldown_ms;  /* circuit breaker: K failures in a row */
    uint32_t max_deaths;        /* uncharged (worker/device) failures before a partition fails */
    uint32_t retain_s, retain_jobs;           /* finished jobs kept (time, count) */
    uint32_t max_waiters, max_waiters_client; /* AWAITs waiting: overall, per client */
    uint64_t backoff_ns;        /* first transient retry delay (doubles per attempt, 100x cap) */
    bool key_affinity;          /* keys: route to workers holding the key (--key-affinity) */
    uint32_t key_switch_backlog;/* a busy worker switches keys when the key's backlog exceeds
                                   this many partitions per credit of its holders */
    /* runtime */
    void *ctx, *sock;
    bool zmq_adopted;            /* libzmq's threads given the loop's short slice (lib/util/rt.c) */
    zp_shm_t *arena;
    uint64_t epoch;
    brk_slot_t *slots;          /* n_slots */
    uint32_t n_quarantined;
    /* job table (jobs.c): hashed by id and by request id; running jobs on b->live, finished
     * ones on b->fin in finish order (retention evicts from the head) */
    brk_job_t **h_id, **h_rid;
    size_t h_cap, n_jobs, n_fin;
    brk_job_t *live, *fin_head, *fin_tail;
    uint64_t next_job_id;
    uint32_t jobs_by_state[4];  /* zp_job_state_t */
    brk_part_t **q[ZP_NROLES];  /* unordered; dispatch picks the best */
    size_t qn[ZP_NROLES], qcap[ZP_NROLES];
    uint32_t nq[ZP_NROLES][ZP_NPRIO];
    brk_worker_t workers[BRK_MAX_WORKERS];
    brk_waiter_t *waiters;
    uint32_t n_waiters;
    brk_counters_t c;
    uint64_t t_start;
    uint64_t job_seq;
    uint32_t claim_hint;
    struct { uint8_t id[BRK_ID_MAX]; size_t n; uint64_t t; } reset_sent[16]; /* recent RESETs to unknown peers */
    unsigned reset_head;
    struct brk_journal *jr;     /* write-ahead store (journal.c) */
    char jr_path[1024];
    uint64_t jr_errors;         /* failed journal writes (logged; STATUS shows them) */
    struct brk_mx *mx;          /* metrics.c: histograms, counters, HTTP endpoint */
    struct brk_http *http;      /* http.c: libmicrohttpd listeners */
    struct brk_ident *ident;    /* ident.c: supervisor channel, identity registry */
    /* ---- slots: size classes, reservations, taking slots back (slots.c, sched.c) ---- */
    uint32_t n_classes;         /* 0 until brk_classes_load (then the arena's classes) */
    struct { uint32_t n, first; uint64_t bytes; uint32_t domain, vars; } classes[ZP_SHM_MAX_CLASSES];
    bool classes_set;           /* --slot-classes given: classes[] (n, bytes, domain, vars) from it */
    uint32_t reserve[ZP_NPRIO]; /* --slot-reserve: free slots of each class held back for priority p */
    uint32_t preempt;           /* --preempt: partitions of priority <= this take back unstarted slots
                                   of worse ones; ZP_NPRIO: never */
    struct brk_circ *circ;      /* zkey -> size (brk_job_size), at most BRK_CIRC_MAX */
    uint32_t n_circ, circ_next;
    uint64_t n_taken_ready, n_taken_revoke, n_revoked_gpu, n_submit_too_big, n_spilled;
} brk_t;
#define BRK_CIRC_MAX 256

/* broker.c */
int brk_send(brk_t *b, const uint8_t *id, size_t id_len, uint8_t *buf, size_t len); /* frees buf */
/* w is gone (or must be fenced: kill_it): logs, fences, then brk_worker_lost */
void brk_worker_dead(brk_t *b, brk_worker_t *w, const char *why, bool kill_it);

/* ident.c: who a worker is (proto/identity.h); the broker never signals a process */
int brk_ident_init(brk_t *b);               /* reads ZP_SUPERVISOR_FD */
void brk_ident_close(brk_t *b);
int brk_ident_pollfd(const brk_t *b);       /* the supervisor channel, -1 none */
void brk_ident_service(brk_t *b);           /* drain the channel (REG / EXIT) */
void brk_ident_tick(brk_t *b);              /* declare workers the supervisor reaped dead (after a grace) */
/* may this HELLO (from a connection whose kernel pid is peer_pid, 0 unknown) be accepted?
 * 0: *pid is the verified pid, *reg the registry entry (-1 none); -1: refused, why says why */
int brk_ident_check(brk_t *b, const zp_msg_hello_t *m, uint32_t peer_pid, uint32_t *pid, int *reg,
                    char *why, size_t n);
void brk_ident_bind(brk_t *b, brk_worker_t *w, uint32_t peer_pid, int reg);
void brk_ident_forget(brk_t *b, brk_worker_t *w);
void brk_ident_fence(brk_t *b, brk_worker_t *w, const char *why);   /* ask the supervisor */
/* defaults of the configuration above (broker main and the model test) */
void brk_config_defaults(brk_t *b);
/* one option by its long name ("lease-ms", "max-deaths", "breaker", "retain-s", "retain-jobs",
 * "max-waiters", "key-affinity"); -EINVAL with a message */
int brk_config_set(brk_t *b, const char *name, const char *value);

/* slots.c: holders, quarantine and leases (doc/slot-protocol.md) */
/* requeue everything w held (worker class: not charged), keep its slots quarantined until
 * it is known gone, forget w */
void brk_worker_lost(brk_t *b, brk_worker_t *w, const char *why);
/* HELLO: reconcile the (slot, gen) pairs the worker lists with what we think it holds */
void brk_worker_held(brk_t *b, brk_worker_t *w, const zp_held_t *held, size_t n);
/* w is assigned slot s at gen: record the holder and its lease */
void brk_slot_hold(brk_t *b, uint32_t s, brk_worker_t *w, uint64_t gen, uint64_t lease);
/* why a slot holder's process is known to write no more (gone, exited, pid reused), or NULL */
const char *brk_pid_gone(uint32_t pid, uint64_t start);
/* w reported (DONE/FAIL, stale or not) on (slot, gen): if it is the holder, release it */
void brk_slot_reported(brk_t *b, const brk_worker_t *w, uint32_t s, uint64_t gen);
/* may dispatch give slot s to a new holder? (not held by anyone) */
bool brk_slot_usable(const brk_t *b, uint32_t s);
/* once per heartbeat tick: release quarantines whose holder is known gone, expire leases */
void brk_slots_tick(brk_t *b);
/* the lease for a stage of job j (ns from now) */
uint64_t brk_lease_ns(const brk_t *b, const brk_job_t *j, unsigned stage);
/* slot size classes (doc/slot-protocol.md "Slot classes"): --slot-classes SPEC, e.g.
 * "6x2^16,2x2^20/1500000,1x@/keys/big.zkey" (COUNT x DOMAIN[/VARS] or COUNT x @ZKEY) */
int brk_classes_parse(brk_t *b, const char *spec);
/* after the options: the classes the arena is to have (from --slot-classes, else one class of
 * n_slots x (max_vars, max_domain)); sets n_slots, max_domain, max_vars; *n of them in out */
int brk_classes_config(brk_t *b, zp_shm_class_t out[ZP_SHM_MAX_CLASSES], uint32_t *n);
/* does an existing arena have exactly these classes? */
bool brk_classes_match(const zp_shm_t *a, const zp_shm_class_t *c, uint32_t n);
/* take the classes from b->arena (the truth once it exists) */
void brk_classes_load(brk_t *b);
/* j's slot class from its zkey header (cached by path; an unreadable header: the largest
 * class, the synth reports the real error). ZP_EMISMATCH (the circuit and the arena do not
 * belong together) with a message naming the zkey, what it needs and the largest class if no
 * class holds it. */
int brk_job_size(brk_t *b, brk_job_t *j);
/* record a circuit's size for a zkey path without reading it (a key the caller has parsed) */
void brk_circuit_note(brk_t *b, const char *zkey, uint32_t n_vars, uint32_t domain);
/* ask p's synth to hand p's task back unstarted (REVOKE); the slot stays held until it reports */
void brk_revoke(brk_t *b, brk_part_t *p);
/* free the process-local slot tables (circuit cache) */
void brk_slots_close(brk_t *b);
/* STATUS: slot classes, the bound slots, priority settings and counters (report.c; JSON: a
 * ", \"slot_classes\": ..." member list; text: one line) */
void brk_slots_status(brk_t *b, zp_sbuf_t *s, bool json);

/* sched.c */
/* keys: a HELLO / HEARTBEAT's key list (absent: unchanged) */
void brk_worker_keys(brk_t *b, brk_worker_t *w, const zp_msg_keys_t *k);
uint64_t brk_key_hash(const char *s, size_t n);
uint64_t brk_job_key(brk_job_t *j);
/* does w hold key hash h? (what the broker believes: sched.c) */
bool brk_worker_holds(const brk_t *b, const brk_worker_t *w, uint64_t h);
/* w reported holding key h, or finished a partition of it since (in flight does not count: it
 * may still be importing it) */
bool brk_worker_loaded(const brk_worker_t *w, uint64_t h);
/* the (partition, worker) pair dispatch would take next for stage (key affinity for GPU and
 * final when on); false: nothing goes now. For tests (tests/test_keyroute.c) */
bool brk_key_pick(brk_t *b, unsigned stage, uint64_t now, brk_part_t **p, brk_worker_t **w);
/* w finished (DONE or FAIL) a partition of job j: its key stays believed until w's next report */
void brk_worker_key_done(brk_worker_t *w, brk_job_t *j);
int brk_q_push(brk_t *b, brk_part_t *p, unsigned stage);
void brk_q_remove(brk_t *b, brk_part_t *p);
void brk_dispatch(brk_t *b);
void brk_on_done(brk_t *b, brk_worker_t *w, const zp_msg_done_t *m);
void brk_on_fail(brk_t *b, brk_worker_t *w, const zp_msg_fail_t *m);
/* the part's current attempt failed at its stage: requeue (retryable) or fail it */
void brk_part_failed(brk_t *b, brk_part_t *p, bool retryable, bool redo_synth, const char *why);
/* the same; count_attempt = false: the work was handed back unstarted, no attempt was spent */
void brk_part_requeue(brk_t *b, brk_part_t *p, bool retryable, bool redo_synth, bool count_attempt, const char *why);
/* the part's failure of class cls (zp_fail_class_t) at its stage: the class policy */
void brk_part_fail_class(brk_t *b, brk_part_t *p, unsigned cls, bool redo_synth, const char *why);
void brk_release_slot(brk_t *b, brk_part_t *p);
/* running partitions per stage (O(slots)) */
void brk_running(const brk_t *b, unsigned out[ZP_NROLES]);

/* jobs.c */
int brk_submit(brk_t *b, const zp_msg_submit_t *m, brk_job_t **jp, bool *existed);
int brk_cancel(brk_t *b, brk_job_t *j, uint32_t *freed);
brk_job_t *brk_job_get(brk_t *b, uint64_t id);
brk_job_t *brk_job_by_request(brk_t *b, const char *rid, size_t len);
void brk_job_check_finished(brk_t *b, brk_job_t *j);
/* put a job into the table (journal load, submit); takes ownership */
int brk_job_insert(brk_t *b, brk_job_t *j);
void brk_job_free(brk_job_t *j);
/* evict finished jobs past retention (time, count): memory and journal */
void brk_jobs_retain(brk_t *b);
void brk_jobs_close(brk_t *b);    /* free the whole table */

/* journal writes from the scheduler: log and count a failure, return it */
int brk_journal_part(brk_t *b, const brk_part_t *p);
/* a partition's proof is done (strings malloc'd, owned by p now): journal it, then free its
 * slot if the finalizer left it FINISHED at p->word_gen, then check the job */
void brk_part_proved(brk_t *b, brk_part_t *p, char *proof_json, char *public_json, const uint8_t *bin, size_t bin_len);
int brk_journal_job(brk_t *b, const brk_job_t *j);

/* recover.c */
/* after brk_jr_load: reconcile unfinished partitions with the arena (arena_reused: it
 * survived the previous broker) and queue them */
int brk_recover(brk_t *b, bool arena_reused);
/* requeue recovered RUNNING partitions no worker adopted in time */
void brk_recover_expire(brk_t *b);
/* a HELLO lists (slot, gen) this worker holds: adopt the recovered partition there, if any */
brk_part_t *brk_recover_adopt(brk_t *b, brk_worker_t *w, uint32_t slot, uint64_t gen);

/* report.c */
char *brk_status_text(brk_t *b, bool json);
char *brk_trace_json(brk_t *b, uint32_t max_parts);
int brk_result_encode(brk_t *b, brk_job_t *j, bool timed_out, uint8_t **buf, size_t *len);
void brk_waiters_poll(brk_t *b, bool all_due);
/* queue an AWAIT (bounded per client and overall: ZP_ETOOBIG with a message when full) */
int brk_waiter_add(brk_t *b, const uint8_t *id, size_t id_len, uint64_t job, uint32_t timeout_ms);
/* the share of the window a worker was running something: the UNION of its task intervals
 * (a staged task's interval overlaps its predecessor's compute; a batch's tasks share one) */
double brk_busy_ratio(const brk_worker_t *w, uint64_t now, uint64_t window);
/* the length of the union of n intervals (sorted in place; e <= s counts nothing) */
uint64_t brk_union_ns(brk_interval_t *iv, unsigned n);

/* ---- observability (metrics.c) ---- */
int brk_mx_init(brk_t *b, const char *listen_addr);  /* listen_addr NULL/"": no HTTP endpoint */
void brk_mx_close(brk_t *b);
const char *brk_mx_listen_addr(const brk_t *b);      /* "ip:port" or NULL */
void brk_mx_tick(brk_t *b);                         /* once per loop turn: idle accounting */
void brk_mx_on_done(brk_t *b, brk_worker_t *w, const zp_msg_done_t *m);  /* before brk_on_done */
void brk_mx_on_fail(brk_t *b, brk_worker_t *w, const zp_msg_fail_t *m);  /* before brk_on_fail */
/* seconds per BRK_IDLE_* cause over the last `window` ns */
void brk_mx_idle(const brk_worker_t *w, uint64_t now, uint64_t window, double out[BRK_IDLE_NCAUSE]);
const char *brk_mx_cause_name(unsigned c);
char *brk_metrics_text(brk_t *b);                   /* Prometheus text exposition; malloc'd */
void brk_mx_http_count(brk_t *b, bool served);      /* http.c: one HTTP request answered / rejected */
/* per-stage rates over the recent window (metrics.c NOTES); returns the limiting stage
 * (ZP_ROLE_*) or -1 for none, *why says which case */
typedef struct { unsigned workers, tasks, queued, running; double mean_task_s, rate; } brk_stage_rate_t;
int brk_mx_stage_rates(const brk_t *b, uint64_t now, brk_stage_rate_t out[ZP_NROLES], const char **why);
void brk_mx_stage_rates_text(const brk_t *b, zp_sbuf_t *s);   /* report.c: the STATUS lines */
void brk_mx_stage_rates_json(const brk_t *b, zp_sbuf_t *s);   /* ", \"stages\": {...}" */
/* ---- end observability ---- */

/* ---- inline witnesses (inline.c, owner: client) ---- */
/* inline inputs (issue 28): input must be one well-formed JSON object of at most ZP_MSG_INPUT_MAX
 * bytes (ZP_EFORMAT / ZP_ETOOBIG, why says what and at which byte). brk_json_span: the length of
 * the JSON object at p (HTTP's "inputs" array) */
int brk_input_check(const uint8_t *data, size_t len, char *why, size_t why_n);
int brk_json_span(const char *p, size_t len, size_t *used, char *why, size_t why_n);
/* write m's inline witnesses to <state dir>/inline/ and point m->wtns[i] at them (the paths
 * live in *block, which the caller frees after brk_submit) */
int brk_inline_store(brk_t *b, zp_msg_submit_t *m, char **block);
/* every 2 s: remove inline witness files no RUNNING job needs */
void brk_inline_sweep(brk_t *b);

/* ---- HTTP (http.c, owner: client): the JSON API and GET /metrics on libmicrohttpd ---- */
struct brk_http;
/* any listener may be NULL/"" (off); max_body 0: default (16 MiB) */
int brk_http_init(brk_t *b, const char *metrics_listen, const char *api_listen, const char *token_file, size_t max_body,
                  const char *key_dir);
const char *brk_http_addr(const brk_t *b, bool api);   /* "ip:port" of that listener or NULL */
/* the listeners' epoll fds for zmq_poll (at most 2; lowers *timeout_ms), then MHD_run them */
int brk_http_pollitems(brk_t *b, zmq_pollitem_t *it, int *timeout_ms);
void brk_http_service(brk_t *b);
void brk_http_close(brk_t *b);
#endif
