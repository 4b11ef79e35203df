/* test_model.c - a deterministic, seeded model test of the slot protocol (doc/slot-protocol.md).
 *
 * The real broker scheduler, slot holders/quarantine/leases, job table, journal (SQLite, in a
 * private directory) and restart recovery (libzpbrk: sched.c slots.c jobs.c journal.c
 * recover.c report.c) are driven in one process by simulated stages. The stages do the real
 * shared-memory work on a real arena (layout, vector writes in chunks, seal, fenced commits,
 * the finished-proof record) one small step at a time. Only the transport is simulated:
 * brk_send delivers frames (encoded and decoded by the real codec) to the simulated stage,
 * brk_worker_dead records the fencing request and calls the real brk_worker_lost, and HELLO
 * is registered the way broker.c's on_hello does it. Every simulated process is backed by a
 * real sleeping child process, so "is its pid gone" is answered by the kernel as in production.
 *
 * Random interleavings (seeded, deterministic: time-based things - backoff, adoption grace,
 * breaker cool-down, leases - only move when a "time passes" / "lease expiry" step says so) of:
 * submit, cancel, dispatch, work steps, reports, kill -9, a death declared while the process
 * keeps running (stale writes from old holders), unreachable workers, hung work + lease
 * expiry, retention and broker restarts. Invariants after every step:
 *   - no slot may be written by two holders: at most one live simulated task per slot;
 *   - no partition finished twice, none lost after it was proved (across restarts too);
 *   - every proof the broker accepts is the right one for its partition;
 * and at the end (after a drain without faults): every job finished, every good partition
 * proved, every bad one failed with a reason that says so, every slot FREE, none held.
 * Also scripted regression scenarios (issue 8 defects 1, 2, 4, 6, 7, 8) and a bench mode:
 *   test_model --bench N      N partitions through the broker: its memory and status latency
 * Environment: ZP_MODEL_SEEDS (default 16), ZP_MODEL_STEPS (default 2500), ZP_MODEL_SEED0. */

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/broker_int.h"
#include "broker/journal.h"
#include "lib/util/util.h"
#include "proto/codec.h"

#define TEST_SEED 0x51075107ull
#include "tests/test_common.h"

/* ---------------------------------------------------------------- the simulated world */
enum { NVARS = 64, DOMAIN = 64, NSIM = 6, MAXT = 4, MAXOUT = 16, MAXJOBS = 4096, MAXP = 6 };
/* slot size classes (issue 10 item 7): a small circuit (NVARS, DOMAIN: 2 MiB slots), a big one
 * (BIG: 4 MiB slots) and one no class holds (HUGE: refused at SUBMIT) */
enum { BIG = 1 << 14, HUGE = 1 << 16 };
#define ZKEY_SMALL "/model/circuit.zkey"
#define ZKEY_BIG "/model/big.zkey"
#define ZKEY_HUGE "/model/huge.zkey"

typedef struct {
    zp_msg_assign_t a;
    int phase;
    bool hung;
    uint32_t nv, dom;           /* the circuit of its zkey (ASSIGN names it) */
} task_t;

typedef struct {
    int type;                   /* ZP_CMD_DONE / ZP_CMD_FAIL */
    zp_msg_done_t d;
    zp_msg_fail_t f;
    char text[256];
} out_t;

typedef struct {
    bool exists;                /* the process is alive (it may write into slots) */
    bool connected;             /* the broker has a record for our routing id */
    bool need_hello;
    bool kill_pending;          /* its supervisor was asked to fence it */
    bool faulty;                /* scripted: computes wrong results / fails everything */
    bool fail_all;
    pid_t pid;
    uint64_t inc;
    unsigned role, instance, credits;
    uint8_t id[16];
    size_t id_len;
    task_t t[MAXT];
    unsigned nt;
    out_t out[MAXOUT];
    unsigned nout;
} sim_t;

typedef struct {
    uint64_t id;
    uint32_t n, dom;            /* dom: its circuit's domain (= variables) */
    unsigned prio;
    bool bad[MAXP], done_seen[MAXP], finished, canceled, evicted;
} mjob_t;

static brk_t B;
static zp_shm_t *A;
static char g_dir[256], g_jr[512], g_arena[128];
static sim_t sims[NSIM];
static mjob_t mjobs[MAXJOBS];
static unsigned n_mjobs;
static uint64_t id_seq, done_since_restart;
static unsigned n_restarts, n_kills, n_stale_steps, n_violations;
static bool verbose;
static uint32_t g_reserve;      /* --slot-reserve for CRITICAL in this world (kept across restarts) */

#define VIOLATION(...) do { fprintf(stderr, "VIOLATION: " __VA_ARGS__); fputc('\n', stderr); n_violations++; fails++; } while (0)

static void cfg(brk_t *b)
{
    brk_config_defaults(b);
    b->n_slots = 4; b->max_domain = DOMAIN; b->max_vars = NVARS; b->max_attempts = 8; b->liveness = 3;
    b->heartbeat_ms = 200;
    b->max_deaths = 1000;          /* kills are the model's weather: never give a partition up for them */
    /* time only moves when a step says so: nothing expires by itself during a run */
    for (unsigned r = 0; r < ZP_NROLES; r++) { b->lease_base_ms[r] = 86400000; b->lease_per_m_ms[r] = 0; }
    b->backoff_ns = 1000000000000000ull;
    b->breaker_k = 3;
    b->breaker_cooldown_ms = 86400000;
    b->retain_s = 86400;
    b->retain_jobs = 8;
    b->reserve[ZP_PRIO_CRITICAL] = g_reserve;
}

static pid_t spawn_child(void)
{
    pid_t p = fork();
    if (p == 0) {
        /* a stand-in process: sleeps until killed, dies with the test, holds none of its files */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (int fd = 0; fd < 1024; fd++) close(fd);
        execl("/bin/sleep", "sleep", "100000", (char *)NULL);   /* a small image: quick to reap */
        for (;;) pause();
    }
    return p;
}

static void reap(pid_t p)
{
    kill(p, SIGKILL);
    while (waitpid(p, NULL, 0) < 0 && errno == EINTR) {}
}

static sim_t *sim_by_id(const uint8_t *id, size_t n)
{
    for (unsigned i = 0; i < NSIM; i++)
        if (sims[i].exists && sims[i].connected && sims[i].id_len == n && !memcmp(sims[i].id, id, n)) return &sims[i];
    return NULL;
}

static void sim_start(sim_t *s)
{
    s->exists = true; s->connected = false; s->need_hello = true; s->kill_pending = false;
    s->pid = spawn_child();
    s->inc = rnd64() | 1;
    s->nt = s->nout = 0;
}

static void sim_kill(sim_t *s)
{
    if (!s->exists) return;
    reap(s->pid);
    s->exists = s->connected = false;
    s->nt = s->nout = 0;
    n_kills++;
}

static mjob_t *mjob(uint64_t id)
{
    for (unsigned i = 0; i < n_mjobs; i++) if (mjobs[i].id == id) return &mjobs[i];
    return NULL;
}

/* ---------------------------------------------------------------- the transport */
int brk_send(brk_t *b, const uint8_t *id, size_t id_len, uint8_t *buf, size_t len)
{
    (void)b;
    sim_t *s = sim_by_id(id, id_len);
    zp_frame_t f;
    if (!s) { free(buf); return -EHOSTUNREACH; }
    if (zp_frame_decode_cmds(&f, buf, len, 0, ZP_CMDS_TO_WORKER) < 0) { VIOLATION("broker sent a bad frame: %s", zp_err_msg()); free(buf); return 0; }
    if (f.cmd == ZP_CMD_ASSIGN) {
        task_t t = {0};
        if (zp_msg_assign_decode(&t.a, &f) < 0) VIOLATION("bad ASSIGN: %s", zp_err_msg());
        bool big = zp_str_eq(t.a.zkey, ZKEY_BIG);
        t.nv = big ? BIG : NVARS;
        t.dom = big ? BIG : DOMAIN;
        t.a.zkey = t.a.r1cs = t.a.wtns = zp_str("");   /* views into buf */
        if (t.a.stage != s->role) VIOLATION("ASSIGN for stage %u sent to a %u worker", t.a.stage, s->role);
        if (t.a.lease_deadline == 0) VIOLATION("ASSIGN without a lease");
        if (s->nt < MAXT) s->t[s->nt++] = t;
        else VIOLATION("broker assigned past the worker's credit");
    } else if (f.cmd == ZP_CMD_REVOKE) {
        zp_msg_revoke_t rv;
        if (zp_msg_revoke_decode(&rv, &f) == 0)
            for (unsigned i = 0; i < s->nt; i++)
                if (s->t[i].a.slot == rv.slot && s->t[i].a.gen == rv.gen && s->t[i].phase == 0 && s->nout < MAXOUT) {
                    out_t *o = &s->out[s->nout++];
                    memset(o, 0, sizeof *o);
                    o->type = ZP_CMD_FAIL;
                    o->f = (zp_msg_fail_t){.slot = rv.slot, .gen = rv.gen, .job = s->t[i].a.job, .part = s->t[i].a.part,
                                           .retryable = true, .code = ZP_ECANCELED, .unstarted = true,
                                           .fail_class = ZP_FAIL_TRANSIENT};
                    snprintf(o->text, sizeof o->text, "handed back unstarted: revoked");
                    memmove(&s->t[i], &s->t[i + 1], (s->nt - i - 1) * sizeof s->t[0]);
                    s->nt--;
                    break;
                }
    } else if (f.cmd == ZP_CMD_RESET) {
        s->connected = false;
        s->need_hello = true;
    }
    free(buf);
    return 0;
}

void brk_worker_dead(brk_t *b, brk_worker_t *w, const char *why, bool kill_it)
{
    for (unsigned i = 0; i < NSIM; i++) {
        sim_t *s = &sims[i];
        if (s->exists && s->connected && s->id_len == w->id_len && !memcmp(s->id, w->id, w->id_len)) {
            s->connected = false;
            s->need_hello = true;       /* it will be told RESET on its next message */
            if (kill_it) s->kill_pending = true;
        }
    }
    if (verbose) fprintf(stderr, "  dead: %s #%u: %s%s\n", zp_role_name(w->role), w->instance, why, kill_it ? " (fence)" : "");
    brk_worker_lost(b, w, why);
}

/* what broker.c's on_hello does with a HELLO */
static void sim_hello(sim_t *s)
{
    brk_t *b = &B;
    /* a RESET drops queued work: only the running task (phase > 0) is kept and listed */
    unsigned k = 0;
    for (unsigned i = 0; i < s->nt; i++) if (s->t[i].phase > 0) s->t[k++] = s->t[i];
    s->nt = k;
    s->id_len = (size_t)snprintf((char *)s->id, sizeof s->id, "r%llu", (unsigned long long)++id_seq);
    brk_worker_t *w = NULL;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *o = &b->workers[i];
        if (!o->used || o->role != s->role || o->instance != s->instance) continue;
        if (o->incarnation != s->inc) brk_worker_dead(b, o, "restarted (new incarnation)", false);
        else { w = o; memcpy(w->id, s->id, s->id_len); w->id_len = s->id_len; }
    }
    s->connected = true;
    s->need_hello = false;
    if (!w) {
        for (unsigned i = 0; i < BRK_MAX_WORKERS && !w; i++) if (!b->workers[i].used) w = &b->workers[i];
        memset(w, 0, sizeof *w);
        w->used = true;
        memcpy(w->id, s->id, s->id_len);
        w->id_len = s->id_len;
        w->first_seen = zp_now_ns();
    }
    w->alive = true;
    w->role = s->role; w->instance = s->instance; w->pid = (uint32_t)s->pid; w->credits = s->credits;
    w->incarnation = s->inc;
    w->last_seen = zp_now_ns();
    zp_held_t held[ZP_MSG_MAX_HELD];
    size_t nh = 0;
    for (unsigned t = 0; t < s->nt && nh < ZP_MSG_MAX_HELD; t++) held[nh++] = (zp_held_t){s->t[t].a.slot, s->t[t].a.gen};
    brk_worker_held(b, w, held, nh);   /* the broker's own HELLO reconciliation */
}

static brk_worker_t *broker_rec(const sim_t *s)
{
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &B.workers[i];
        if (w->used && w->id_len == s->id_len && !memcmp(w->id, s->id, s->id_len)) return w;
    }
    return NULL;
}

/* deliver the oldest report; a sim the broker forgot is told RESET (it says HELLO, then resends) */
static void sim_deliver(sim_t *s)
{
    if (!s->exists) return;
    if (s->need_hello || !s->connected) { sim_hello(s); return; }
    if (!s->nout) return;
    brk_worker_t *w = broker_rec(s);
    if (!w) { s->connected = false; s->need_hello = true; return; }
    out_t o = s->out[0];
    memmove(&s->out[0], &s->out[1], (s->nout - 1) * sizeof s->out[0]);
    s->nout--;
    if (o.type == ZP_CMD_DONE) {
        o.d.proof_json = zp_str(o.text);
        o.d.public_json = zp_str(o.d.proof_json.len ? "[\"1\"]" : "");
        if (s->role != ZP_ROLE_FINAL) o.d.proof_json = o.d.public_json = zp_str("");
        brk_on_done(&B, w, &o.d);
    } else {
        o.f.message = zp_str(o.text);
        brk_on_fail(&B, w, &o.f);
    }
}

/* ---------------------------------------------------------------- the stages' work */
static void pattern(uint8_t *p, size_t n, uint64_t job, uint32_t part, unsigned vec)
{
    uint64_t x = job * 0x9E3779B97F4A7C15ull ^ ((uint64_t)part << 20) ^ ((uint64_t)vec << 40);
    for (size_t i = 0; i < n; i += 8) {
        x += 0x9E3779B97F4A7C15ull;
        uint64_t z = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
        memcpy(p + i, &z, n - i < 8 ? n - i : 8);
    }
}

/* the "proof" of a partition: a checksum over its canonical a, b, c */
static uint64_t expected_result(uint64_t job, uint32_t part)
{
    static uint8_t v[BIG * 32];
    const mjob_t *mj = mjob(job);
    size_t n = (size_t)(mj && mj->dom ? mj->dom : DOMAIN) * 32;
    uint64_t h = 7;
    for (unsigned k = ZP_SHM_VEC_A; k <= ZP_SHM_VEC_C; k++) {
        pattern(v, n, job, part, k);
        h = zp_shm_checksum(v, n, h);
    }
    return h;
}

static void report(sim_t *s, const task_t *t, bool ok, uint64_t new_gen, int code, bool payload_bad, unsigned cls,
                   const char *msg)
{
    if (s->nout >= MAXOUT) return;
    out_t *o = &s->out[s->nout++];
    memset(o, 0, sizeof *o);
    if (ok) {
        o->type = ZP_CMD_DONE;
        o->d = (zp_msg_done_t){.slot = t->a.slot, .gen = t->a.gen, .new_gen = new_gen, .job = t->a.job, .part = t->a.part,
                               .t_start = 1, .t_end = 2};
        if (s->role == ZP_ROLE_FINAL) snprintf(o->text, sizeof o->text, "proof:%llu:%u:%016llx",
                                               (unsigned long long)t->a.job, t->a.part,
                                               (unsigned long long)expected_result(t->a.job, t->a.part));
    } else {
        o->type = ZP_CMD_FAIL;
        o->f = (zp_msg_fail_t){.slot = t->a.slot, .gen = t->a.gen, .job = t->a.job, .part = t->a.part, .retryable = true,
                               .code = code, .payload_bad = payload_bad, .t_start = 1, .t_end = 2, .fail_class = (uint8_t)cls};
        snprintf(o->text, sizeof o->text, "%s", msg);
    }
}

static void write_vec(uint32_t slot, unsigned vec, const task_t *t)
{
    size_t len;
    uint8_t *p = zp_shm_slot_vec(A, slot, vec, &len);
    if (p) pattern(p, len, t->a.job, t->a.part, vec);   /* unfenced, like a real vector write */
}

/* one step of the running task; returns true when it ended (reported) */
static bool sim_step(sim_t *s)
{
    if (!s->exists || !s->nt || s->t[0].hung) return false;
    task_t *t = &s->t[0];
    uint32_t sl = t->a.slot;
    uint64_t g = t->a.gen, ng = 0;
    bool end = false;
    int rc;
    if (s->fail_all && t->phase == 0) { report(s, t, false, 0, -EIO, false, ZP_FAIL_TRANSIENT, "sticky fault"); end = true; goto out; }
    switch (s->role) {
    case ZP_ROLE_SYNTH:
        if (t->phase == 0) {
            if ((rc = zp_shm_slot_layout(A, sl, ZP_SLOT_SYNTH, g, t->nv, t->dom, 32)) < 0) {
                if (rc == ZP_ETOOBIG) VIOLATION("job %llu part %u (domain %u) given slot %u of %llu bytes",
                                                (unsigned long long)t->a.job, t->a.part, t->dom, sl,
                                                (unsigned long long)zp_shm_slot_extent_bytes(A, sl));
                report(s, t, false, 0, rc, false, ZP_FAIL_TRANSIENT, "slot moved (layout)"); end = true;
            }
        } else if (t->phase == 1) { write_vec(sl, ZP_SHM_VEC_W, t); n_stale_steps += zp_shm_slot_check(A, sl, ZP_SLOT_SYNTH, g) < 0; }
        else if (t->phase == 2) { write_vec(sl, ZP_SHM_VEC_A, t); write_vec(sl, ZP_SHM_VEC_B, t); }
        else if (t->phase == 3) { write_vec(sl, ZP_SHM_VEC_C, t); }
        else {
            uint32_t mask = ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_B) |
                            ZP_SHM_VEC_MASK(ZP_SHM_VEC_C);
            rc = zp_shm_payload_seal(A, sl, ZP_SLOT_SYNTH, g, mask, ZP_SLOT_READY, &ng);
            report(s, t, rc == 0, ng, rc, false, ZP_FAIL_TRANSIENT, "seal: slot moved");
            end = true;
        }
        break;
    case ZP_ROLE_GPU:
        if (t->phase == 0) {
            if ((rc = zp_shm_payload_verify(A, sl, t->a.payload_gen)) < 0) {
                report(s, t, false, 0, rc, true, ZP_FAIL_TRANSIENT, "payload does not verify"); end = true;
            }
        } else if (t->phase == 1) {
            write_vec(sl, ZP_SHM_VEC_H, t);
        } else {
            uint8_t res[16] = {0};
            uint64_t h = 7;
            for (unsigned k = ZP_SHM_VEC_A; k <= ZP_SHM_VEC_C; k++) {
                size_t len;
                const uint8_t *p = zp_shm_slot_vec(A, sl, k, &len);
                h = p ? zp_shm_checksum(p, len, h) : 0;
            }
            if (s->faulty) h ^= 1;
            memcpy(res, &h, 8);
            rc = zp_shm_commit(A, sl, ZP_SLOT_PROVING, g, ZP_SLOT_PROVED, ZP_SHM_AREA_RESULT, res, sizeof res, &ng);
            report(s, t, rc == 0, ng, rc, false, ZP_FAIL_TRANSIENT, "commit: slot moved");
            end = true;
        }
        break;
    default:
        if (t->phase == 0) {
            uint8_t res[16];
            size_t len = 0;
            if ((rc = zp_shm_area_read(A, sl, ZP_SHM_AREA_RESULT, t->a.in_gen, res, sizeof res, &len)) < 0) {
                report(s, t, false, 0, ZP_EVERIFY, false, ZP_FAIL_TRANSIENT, "G1 result area unusable"); end = true;
            } else if ((rc = zp_shm_payload_verify(A, sl, t->a.payload_gen)) < 0) {
                report(s, t, false, 0, rc, true, ZP_FAIL_TRANSIENT, "payload does not verify"); end = true;
            } else {
                uint64_t h;
                memcpy(&h, res, 8);
                mjob_t *mj = mjob(t->a.job);
                if (h != expected_result(t->a.job, t->a.part) || (mj && t->a.part < MAXP && mj->bad[t->a.part])) {
                    report(s, t, false, 0, ZP_EVERIFY, false, ZP_FAIL_TRANSIENT, "proof failed its pairing check"); end = true;
                }
            }
        } else {
            char pj[128];
            int n = snprintf(pj, sizeof pj, "proof:%llu:%u:%016llx", (unsigned long long)t->a.job, t->a.part,
                             (unsigned long long)expected_result(t->a.job, t->a.part));
            uint8_t bin[8] = {1};
            rc = zp_shm_final_commit(A, sl, g, pj, (size_t)n, "[\"1\"]", 5, bin, sizeof bin, &ng);
            report(s, t, rc == 0, ng, rc, false, ZP_FAIL_TRANSIENT, "final commit: slot moved");
            end = true;
        }
    }
out:
    if (end) {
        memmove(&s->t[0], &s->t[1], (s->nt - 1) * sizeof s->t[0]);
        s->nt--;
    } else {
        t->phase++;
    }
    return end;
}

/* ---------------------------------------------------------------- the broker's life */
static void broker_start(bool reused)
{
    memset(&B, 0, sizeof B);
    cfg(&B);
    brk_circuit_note(&B, ZKEY_SMALL, NVARS, DOMAIN);   /* the model's zkeys are no files */
    brk_circuit_note(&B, ZKEY_BIG, BIG, BIG);
    brk_circuit_note(&B, ZKEY_HUGE, HUGE, HUGE);
    B.arena = A;
    B.n_slots = zp_shm_n_slots(A);
    B.epoch = zp_shm_epoch(A);
    snprintf(B.arena_name, sizeof B.arena_name, "%s", g_arena);
    snprintf(B.jr_path, sizeof B.jr_path, "%s", g_jr);
    B.slots = calloc(B.n_slots, sizeof *B.slots);
    CHECK(B.slots != NULL);
    if (brk_jr_open(&B.jr, g_jr, false) < 0 || brk_jr_load(B.jr, &B) < 0) {
        VIOLATION("journal: %s", zp_err_msg());
        return;
    }
    if (brk_recover(&B, reused) < 0) VIOLATION("recovery: %s", zp_err_msg());
    done_since_restart = 0;
    B.t_start = zp_now_ns();
}

static void broker_stop(void)
{
    brk_jr_close(&B.jr);
    brk_jobs_close(&B);
    for (unsigned r = 0; r < ZP_NROLES; r++) free(B.q[r]);
    for (brk_waiter_t *w = B.waiters, *n; w; w = n) { n = w->next; free(w); }
    free(B.slots);
    brk_slots_close(&B);
    memset(&B, 0, sizeof B);
}

static void broker_restart(void)
{
    broker_stop();
    broker_start(true);
    n_restarts++;
    for (unsigned i = 0; i < NSIM; i++) if (sims[i].exists) { sims[i].connected = false; sims[i].need_hello = true; }
}

/* time passes: backoffs, adoption grace and breaker cool-downs run out */
static void time_passes(void)
{
    for (unsigned r = 0; r < ZP_NROLES; r++)
        for (size_t i = 0; i < B.qn[r]; i++) B.q[r][i]->not_before = 0;
    for (uint32_t s = 0; s < B.n_slots; s++)
        if (B.slots[s].part && B.slots[s].part->adopt_deadline) B.slots[s].part->adopt_deadline = 1;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) if (B.workers[i].tripped_until) B.workers[i].tripped_until = 1;
    brk_recover_expire(&B);
    brk_slots_tick(&B);
}

static bool g_classes;          /* the arena has a big class: submit big circuits too */
static int g_prio = -1, g_size = -1; /* scripted: the next submit's priority / circuit (0 small, 1 big) */

static void submit(unsigned nparts, const bool *bad)
{
    if (n_mjobs >= MAXJOBS) return;
    zp_msg_submit_t *m = calloc(1, sizeof *m);
    char rid[32];
    static unsigned rid_seq;
    if (n_mjobs == 0 && B.n_jobs == 0) rid_seq = 0;
    snprintf(rid, sizeof rid, "req-%u", rid_seq++);
    m->request_id = zp_str(rid);
    bool big = g_size >= 0 ? g_size == 1 : g_classes && rnd64() % 3 == 0;
    m->zkey = zp_str(big ? ZKEY_BIG : ZKEY_SMALL);   /* absolute: SUBMIT/ASSIGN refuse relative paths */
    m->r1cs = zp_str("");
    m->priority = g_prio >= 0 ? (uint32_t)g_prio : (uint32_t)(rnd64() % ZP_NPRIO);
    m->n_wtns = nparts;
    for (unsigned i = 0; i < nparts; i++) m->wtns[i] = zp_str("/model/w.wtns");
    brk_job_t *j;
    bool existed;
    if (brk_submit(&B, m, &j, &existed) < 0 || existed) {
        VIOLATION("submit %s: %s", rid, existed ? "request id already known" : zp_err_msg());
        free(m);
        return;
    }
    unsigned prio = m->priority;
    free(m);
    mjob_t *mj = &mjobs[n_mjobs++];
    memset(mj, 0, sizeof *mj);
    mj->id = j->id;
    mj->n = nparts;
    mj->dom = big ? BIG : DOMAIN;
    mj->prio = prio;
    for (unsigned i = 0; i < nparts; i++) mj->bad[i] = bad && bad[i];
}

/* ---------------------------------------------------------------- invariants */
static void check_invariants(const char *when)
{
    /* one writer per slot */
    for (uint32_t s = 0; s < B.n_slots; s++) {
        unsigned n = 0;
        for (unsigned i = 0; i < NSIM; i++)
            for (unsigned k = 0; sims[i].exists && k < sims[i].nt; k++) n += sims[i].t[k].a.slot == s;
        if (n > 1) VIOLATION("%s: slot %u has %u holders that may write into it", when, s, n);
        const brk_part_t *p = B.slots[s].part;
        if (p && p->slot != (int32_t)s) VIOLATION("%s: slot %u bound to a partition that names slot %d", when, s, p->slot);
        /* slot classes: never a slot smaller than the circuit */
        const mjob_t *mj = p ? mjob(p->job->id) : NULL;
        if (mj && zp_shm_slot_extent_bytes(A, s) < zp_shm_slot_bytes_for(mj->dom, mj->dom, 32))
            VIOLATION("%s: job %llu (domain %u) bound to slot %u of %llu bytes", when, (unsigned long long)mj->id, mj->dom,
                      s, (unsigned long long)zp_shm_slot_extent_bytes(A, s));
    }
    /* --slot-reserve: worse work never holds more than a class's slots minus the reserve */
    for (uint32_t k = 0; g_reserve && k < B.n_classes; k++) {
        uint32_t n = B.classes[k].n, r = g_reserve < n - 1 ? g_reserve : n - 1, worse = 0;
        for (uint32_t s = B.classes[k].first; s < B.classes[k].first + n; s++)
            worse += B.slots[s].part && B.slots[s].part->job->priority != ZP_PRIO_CRITICAL;
        if (worse > n - r) VIOLATION("%s: class %u: %u of %u slots hold non-critical work, %u reserved", when, k, worse, n, r);
    }
    /* priority (--preempt critical): after dispatch, a CRITICAL partition waiting for a slot of
     * its class while a synthesizer has credit never finds a worse partition READY in a slot
     * of that class that it could have taken back */
    bool credit = false;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &B.workers[i];
        credit |= w->used && w->alive && w->role == ZP_ROLE_SYNTH && w->n_inflight < w->credits && !w->tripped_until;
    }
    for (size_t i = 0; credit && B.preempt == ZP_PRIO_CRITICAL && i < B.qn[ZP_ROLE_SYNTH]; i++) {
        const brk_part_t *c = B.q[ZP_ROLE_SYNTH][i];
        if (c->job->priority != ZP_PRIO_CRITICAL || c->not_before > zp_now_ns() || c->job->cls >= B.n_classes) continue;
        for (uint32_t s = 0; s < B.n_slots; s++) {
            const brk_part_t *v = B.slots[s].part;
            if (v && v->job->priority > ZP_PRIO_CRITICAL && v->queued && v->stage == ZP_ROLE_GPU && !B.slots[s].held &&
                zp_shm_slot_class(A, s) == c->job->cls)
                VIOLATION("%s: critical job %llu part %u waits for a slot while %s job %llu part %u sits READY in slot %u",
                          when, (unsigned long long)c->job->id, c->idx, zp_prio_name(v->job->priority),
                          (unsigned long long)v->job->id, v->idx, s);
        }
    }
    /* partitions: proved once, never lost, the right proof */
    unsigned new_done = 0;
    for (unsigned i = 0; i < n_mjobs; i++) {
        mjob_t *mj = &mjobs[i];
        if (mj->evicted) continue;
        brk_job_t *j = brk_job_get(&B, mj->id);
        if (!j) {
            if (!mj->finished) VIOLATION("%s: job %llu lost before it finished", when, (unsigned long long)mj->id);
            mj->evicted = true;
            continue;
        }
        if (!j->parts) continue;   /* compacted: its results are in the journal (checked when it finished) */
        for (uint32_t k = 0; k < mj->n; k++) {
            const brk_part_t *p = &j->parts[k];
            if (p->state == PS_DONE && !mj->done_seen[k]) {
                mj->done_seen[k] = true;
                new_done++;
                char want[128];
                snprintf(want, sizeof want, "proof:%llu:%u:%016llx", (unsigned long long)mj->id, k,
                         (unsigned long long)expected_result(mj->id, k));
                if (!p->proof_json || strcmp(p->proof_json, want))
                    VIOLATION("%s: job %llu part %u proved with %s, want %s", when, (unsigned long long)mj->id, k,
                              p->proof_json ? p->proof_json : "(none)", want);
                if (mj->bad[k]) VIOLATION("%s: job %llu part %u (bad witness) was proved", when, (unsigned long long)mj->id, k);
            } else if (p->state != PS_DONE && mj->done_seen[k]) {
                VIOLATION("%s: job %llu part %u was proved, now %d", when, (unsigned long long)mj->id, k, p->state);
            }
        }
        if (j->state != ZP_JOB_RUNNING && !mj->finished) {
            mj->finished = true;
            for (uint32_t k = 0; k < mj->n; k++) {
                const brk_part_t *p = &j->parts[k];
                if (j->state == ZP_JOB_CANCELED) continue;
                if (p->state == PS_FAILED && (!p->reasons || !*p->reasons))
                    VIOLATION("%s: job %llu part %u failed without a reason", when, (unsigned long long)mj->id, k);
                if (p->state == PS_FAILED && !mj->bad[k])
                    VIOLATION("%s: job %llu part %u (good) failed: %s", when, (unsigned long long)mj->id, k, p->reasons);
                if (mj->bad[k] && (p->state != PS_FAILED || !strstr(p->reasons ? p->reasons : "", "does not satisfy")))
                    VIOLATION("%s: job %llu part %u (bad) ended %d: %s", when, (unsigned long long)mj->id, k, p->state,
                              p->reasons ? p->reasons : "");
            }
        }
    }
    done_since_restart += new_done;
    if (B.c.parts_done != done_since_restart)
        VIOLATION("%s: broker counted %llu partitions proved, %llu distinct ones were", when,
                  (unsigned long long)B.c.parts_done, (unsigned long long)done_since_restart);
}

/* ---------------------------------------------------------------- setup */
/* n_small slots for the small circuit; n_big > 0: a second class of n_big slots for BIG */
static void world_open_classes(unsigned n_small, unsigned n_big)
{
    static unsigned k;
    snprintf(g_arena, sizeof g_arena, "/zkpipe-model-%d-%u", (int)getpid(), k++);
    zp_shm_class_t cl[2] = {{n_small, zp_shm_slot_bytes_for(NVARS, DOMAIN, 32)}, {n_big, zp_shm_slot_bytes_for(BIG, BIG, 32)}};
    zp_shm_cfg_t c = {.name = g_arena, .n_classes = n_big ? 2 : 1, .classes = cl};
    g_classes = n_big > 0;
    g_prio = g_size = -1;
    g_reserve = 0;
    zp_shm_unlink(g_arena, NULL);
    if (zp_shm_create(&A, &c) < 0) { fprintf(stderr, "arena: %s\n", zp_err_msg()); exit(1); }
    snprintf(g_jr, sizeof g_jr, "%s/model-%u.journal", g_dir, k);
    unlink(g_jr);
    memset(sims, 0, sizeof sims);
    for (unsigned i = 0; i < NSIM; i++) {
        sims[i].role = i / 2; sims[i].instance = i % 2; sims[i].credits = 1 + (i % 2);
    }
    n_mjobs = 0;
    broker_start(false);
}

static void world_open(unsigned n_slots) { world_open_classes(n_slots, 0); }

static void world_close(void)
{
    for (unsigned i = 0; i < NSIM; i++) if (sims[i].exists) { reap(sims[i].pid); sims[i].exists = false; }
    broker_stop();
    zp_shm_close(&A);
    zp_shm_unlink(g_arena, NULL);
    char side[600];
    unlink(g_jr);
    snprintf(side, sizeof side, "%s-wal", g_jr); unlink(side);
    snprintf(side, sizeof side, "%s-shm", g_jr); unlink(side);
}

static void start_all(void)
{
    for (unsigned i = 0; i < NSIM; i++) if (!sims[i].exists) sim_start(&sims[i]);
    for (unsigned i = 0; i < NSIM; i++) sim_deliver(&sims[i]);
}

static bool all_quiet(void)
{
    for (unsigned i = 0; i < n_mjobs; i++) if (!mjobs[i].finished) return false;
    for (uint32_t s = 0; s < B.n_slots; s++)
        if (zp_shm_word_state(zp_shm_slot_word_load(A, s)) != ZP_SLOT_FREE || B.slots[s].held || B.slots[s].part) return false;
    return true;
}

/* no more faults: fence what was asked, restart the dead, run until everything settles */
static bool drain(const char *when)
{
    for (int it = 0; it < 20000; it++) {
        for (unsigned i = 0; i < NSIM; i++) {
            sim_t *s = &sims[i];
            if (s->kill_pending || (s->exists && s->nt && s->t[0].hung)) sim_kill(s);
            if (!s->exists) sim_start(s);
            sim_deliver(s);
            sim_step(s);
            sim_deliver(s);
        }
        /* hung work was fenced above; expire whatever lease is left */
        time_passes();
        brk_jobs_retain(&B);
        brk_dispatch(&B);
        check_invariants(when);
        if (all_quiet()) return true;
    }
    VIOLATION("%s: did not settle", when);
    return false;
}

/* ---------------------------------------------------------------- the random model */
static void model_run(uint64_t seed, unsigned steps)
{
    rng_state = seed;
    if (seed & 1) world_open_classes(2, 2);   /* odd seeds: two slot classes, small and big circuits */
    else world_open(4);
    if (seed % 4 >= 2) { g_reserve = 1; B.reserve[ZP_PRIO_CRITICAL] = 1; }   /* and a slot per class for CRITICAL */
    start_all();
    for (unsigned st = 0; st < steps && n_violations == 0; st++) {
        unsigned r = (unsigned)(rnd64() % 100);
        sim_t *s = &sims[rnd64() % NSIM];
        if (r < 8) {
            unsigned live = 0;
            for (unsigned i = 0; i < n_mjobs; i++) live += !mjobs[i].finished;
            if (live < 6) {
                bool bad[MAXP] = {0};
                unsigned n = 1 + (unsigned)(rnd64() % 4);
                for (unsigned i = 0; i < n; i++) bad[i] = rnd64() % 24 == 0;
                submit(n, bad);
            }
        } else if (r < 10) {
            if (n_mjobs) {
                mjob_t *mj = &mjobs[rnd64() % n_mjobs];
                brk_job_t *j = brk_job_get(&B, mj->id);
                uint32_t freed;
                if (j && j->state == ZP_JOB_RUNNING) { brk_cancel(&B, j, &freed); mj->canceled = true; }
            }
        } else if (r < 55) {
            sim_step(s);
        } else if (r < 72) {
            sim_deliver(s);
        } else if (r < 75) {
            sim_kill(s);                       /* kill -9 */
        } else if (r < 79) {
            if (!s->exists) sim_start(s);      /* its supervisor restarts it */
            else if (s->kill_pending) sim_kill(s);
        } else if (r < 81) {
            brk_worker_t *w = s->exists && s->connected ? broker_rec(s) : NULL;
            if (w) brk_worker_dead(&B, w, "missed heartbeats", true);   /* declared dead, still running */
        } else if (r < 82) {
            brk_worker_t *w = s->exists && s->connected ? broker_rec(s) : NULL;
            if (w) brk_worker_dead(&B, w, "unreachable (send failed)", false);
        } else if (r < 84) {
            if (s->exists && s->nt && s->t[0].phase > 0) s->t[0].hung = true;
        } else if (r < 87) {
            uint32_t sl = (uint32_t)(rnd64() % B.n_slots);
            if (B.slots[sl].lease) { B.slots[sl].lease = 1; brk_slots_tick(&B); }   /* its lease ran out */
        } else if (r < 91) {
            brk_slots_tick(&B);
            brk_recover_expire(&B);
        } else if (r < 95) {
            time_passes();
        } else if (r < 97) {
            brk_jobs_retain(&B);
        } else if (r < 98) {
            char *t = brk_status_text(&B, r & 1);
            CHECK(t != NULL);
            free(t);
        } else {
            broker_restart();
        }
        brk_dispatch(&B);
        char when[64];
        snprintf(when, sizeof when, "seed %#llx step %u", (unsigned long long)seed, st);
        check_invariants(when);
    }
    char when[64];
    snprintf(when, sizeof when, "seed %#llx drain", (unsigned long long)seed);
    if (n_violations == 0) drain(when);
    world_close();
}

/* ---------------------------------------------------------------- scripted regressions */
static sim_t *only(unsigned role, unsigned inst)
{
    for (unsigned i = 0; i < NSIM; i++) {
        sim_t *s = &sims[i];
        if (s->role == role && s->instance != inst && s->exists) sim_kill(s);
    }
    sim_t *s = &sims[role * 2 + inst];
    if (!s->exists) sim_start(s);
    sim_deliver(s);
    return s;
}

static brk_part_t *part_of(uint64_t job, uint32_t k)
{
    brk_job_t *j = brk_job_get(&B, job);
    return j && j->parts ? &j->parts[k] : NULL;
}

/* defect 1: a canceled partition's synthesizer keeps writing; its slot is not reused until it reports */
static void reg_cancel_quarantine(void)
{
    world_open(1);
    sim_t *sy = only(ZP_ROLE_SYNTH, 1);           /* 2 credits: it could take the next one */
    only(ZP_ROLE_GPU, 0); only(ZP_ROLE_FINAL, 0);
    submit(1, NULL);
    brk_dispatch(&B);
    CHECK(sy->nt == 1);
    sim_step(sy); sim_step(sy);                  /* layout, w written: it is running */
    uint32_t freed;
    brk_cancel(&B, brk_job_get(&B, mjobs[0].id), &freed);
    mjobs[0].canceled = true;
    submit(1, NULL);
    brk_dispatch(&B);
    check_invariants("cancel-quarantine");
    CHECK(B.slots[0].held);                      /* quarantined */
    CHECK(part_of(mjobs[1].id, 0)->state == PS_QUEUED);
    while (sy->nt) sim_step(sy);                 /* the old holder writes on, then fails its seal */
    check_invariants("cancel-quarantine: old holder finishing");
    sim_deliver(sy);                             /* its report releases the slot */
    CHECK(!B.slots[0].held);
    drain("cancel-quarantine drain");
    CHECK(part_of(mjobs[1].id, 0) == NULL || part_of(mjobs[1].id, 0)->state == PS_DONE);
    CHECK(mjobs[1].done_seen[0]);
    world_close();
}

/* defect 1: a GPU worker declared dead while it runs: its slot waits until it is gone */
/* a GPU worker declared dead while its process still runs, inside its partition: its slot *sl
 * quarantined; NULL (world closed) if the partition never reached a GPU worker */
static sim_t *gpu_quarantined(uint32_t *sl)
{
    world_open(2);
    start_all();
    submit(1, NULL);
    sim_t *g = NULL;
    for (int i = 0; i < 200 && !g; i++) {
        for (unsigned k = 0; k < NSIM; k++) { sim_step(&sims[k]); sim_deliver(&sims[k]); }
        brk_dispatch(&B);
        for (unsigned k = 0; k < NSIM; k++) if (sims[k].role == ZP_ROLE_GPU && sims[k].nt) g = &sims[k];
    }
    CHECK(g != NULL);
    if (!g) { world_close(); return NULL; }
    sim_step(g);                                  /* payload verified: working */
    *sl = g->t[0].a.slot;
    brk_worker_dead(&B, broker_rec(g), "missed heartbeats", true);
    brk_dispatch(&B);
    check_invariants("dead-alive");
    CHECK(B.slots[*sl].held && B.slots[*sl].h_inc == g->inc);
    brk_slots_tick(&B);
    CHECK(B.slots[*sl].held);                     /* still alive: still quarantined */
    return g;
}

static void reg_dead_alive_quarantine(void)
{
    uint32_t sl;
    sim_t *g = gpu_quarantined(&sl);
    if (!g) return;
    sim_step(g);                                  /* a stale write into h */
    check_invariants("dead-alive: stale write");
    sim_kill(g);                                  /* the supervisor fences it */
    brk_slots_tick(&B);
    CHECK(!B.slots[sl].held);
    brk_part_t *p = part_of(mjobs[0].id, 0);
    CHECK(p && p->attempt == 1 && p->n_uncharged == 1);   /* worker class: not charged */
    drain("dead-alive drain");
    CHECK(mjobs[0].done_seen[0]);
    world_close();
}

/* The quarantined holder's process exits but is not reaped yet (a zombie: kill(pid, 0) still
 * succeeds): the slot comes out of quarantine. Then a holder whose pid now belongs to a later
 * process (modelled by pointing the slot's holder pid at another live process while keeping
 * the recorded start time): out of quarantine too; the same pid with its own start time stays. */
static void reg_zombie_reused_quarantine(void)
{
    uint32_t sl;
    sim_t *g = gpu_quarantined(&sl);
    if (!g) return;
    CHECK(B.slots[sl].h_start != 0);              /* the holder's start time was recorded */
    kill(g->pid, SIGKILL);
    siginfo_t si;
    while (waitid(P_PID, (id_t)g->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    CHECK(kill(g->pid, 0) == 0);                  /* a zombie: the old pid test saw it alive */
    brk_slots_tick(&B);
    CHECK(!B.slots[sl].held);
    sim_kill(g);                                  /* reaped */
    drain("zombie drain");
    CHECK(mjobs[0].done_seen[0]);
    world_close();

    g = gpu_quarantined(&sl);
    if (!g) return;
    /* a later process: its start time (clock ticks) differs from the holder's, as any process
     * that got a reused pid would; two forks within one tick would share it, so fork again */
    pid_t other = spawn_child();
    uint32_t own = B.slots[sl].h_pid;
    char st;
    uint64_t t = 0;
    for (int i = 0; i < 100 && zp_proc_stat((uint32_t)other, &st, &t) == 0 && t == B.slots[sl].h_start; i++) {
        reap(other);
        usleep(20000);
        other = spawn_child();
    }
    CHECK(zp_proc_stat((uint32_t)other, &st, &t) == 0 && t != B.slots[sl].h_start);
    B.slots[sl].h_pid = (uint32_t)other;          /* the holder's pid now names a later process */
    brk_slots_tick(&B);
    CHECK(!B.slots[sl].held);
    uint64_t own_t;                               /* the check itself, on the live old holder */
    CHECK(zp_proc_stat(own, &st, &own_t) == 0 && own == (uint32_t)g->pid);
    CHECK(brk_pid_gone(own, own_t) == NULL && brk_pid_gone(own, 0) == NULL && brk_pid_gone(own, own_t + 1) != NULL);
    CHECK(brk_pid_gone((uint32_t)other, t) == NULL);
    reap(other);
    sim_kill(g);
    drain("reused drain");
    CHECK(mjobs[0].done_seen[0]);
    world_close();
}

/* run the group (no faults) until pred() or n rounds */
static void run_until(bool (*pred)(void), int n)
{
    for (int i = 0; i < n && !(pred && pred()); i++) {
        for (unsigned k = 0; k < NSIM; k++) { sim_deliver(&sims[k]); sim_step(&sims[k]); sim_deliver(&sims[k]); }
        brk_dispatch(&B);
        check_invariants("run");
    }
}

/* defect 2: a GPU worker computing wrong results: one pairing failure redoes the partition from
 * synthesis on another worker, and it is proved; a bad witness fails as input after a second
 * failure on a fresh payload */
static void reg_verify_redo(void)
{
    world_open(2);
    start_all();
    sims[2].faulty = true;                        /* gpu #0 */
    sim_kill(&sims[3]);                           /* only the faulty GPU at first */
    submit(1, NULL);
    bool bad[1] = {true};
    submit(1, bad);
    run_until(NULL, 60);
    sim_start(&sims[3]);                          /* a good GPU joins */
    drain("verify-redo drain");
    brk_part_t *p;
    CHECK(mjobs[0].done_seen[0]);
    CHECK(B.c.verify_redo >= 2);
    brk_job_t *j = brk_job_get(&B, mjobs[1].id);
    CHECK(j && j->state == ZP_JOB_FAILED);
    if (j && (p = j->parts ? &j->parts[0] : NULL)) {
        CHECK(p->state == PS_FAILED && p->n_verify_fail == 2);
        CHECK(strstr(p->reasons, "does not satisfy") != NULL);
    }
    world_close();
}

static bool gpu_requeued(void) { return B.c.requeued[ZP_ROLE_GPU] > 0 && B.n_quarantined == 0; }

/* defect 4: the GPU worker dies (its slot is requeued READY at a new generation), the broker
 * restarts right after: the READY slot's payload is accepted, nothing is redone or charged */
static void reg_restart_after_death(void)
{
    world_open(2);
    start_all();
    submit(2, NULL);
    sim_t *g = NULL;
    for (int i = 0; i < 400 && !g; i++) {
        for (unsigned k = 0; k < NSIM; k++) if (sims[k].role != ZP_ROLE_GPU) { sim_step(&sims[k]); sim_deliver(&sims[k]); }
        for (unsigned k = 0; k < NSIM; k++) if (sims[k].role == ZP_ROLE_GPU) sim_deliver(&sims[k]);
        brk_dispatch(&B);
        for (unsigned k = 0; k < NSIM; k++) if (sims[k].role == ZP_ROLE_GPU && sims[k].nt) g = &sims[k];
    }
    CHECK(g != NULL);
    if (!g) { world_close(); return; }
    sim_step(g);
    sim_kill(g);                                  /* kill -9 the GPU worker */
    if (broker_rec(g)) brk_worker_dead(&B, broker_rec(g), "unreachable (connection closed)", false);
    brk_slots_tick(&B);
    CHECK(gpu_requeued());
    uint64_t synth_rq = B.c.requeued[ZP_ROLE_SYNTH];
    broker_restart();                             /* 50 ms later */
    CHECK(B.c.requeued[ZP_ROLE_SYNTH] == 0 && synth_rq == 0);
    CHECK(B.qn[ZP_ROLE_GPU] >= 1);                /* the READY slots went on to the gpu queue */
    for (uint32_t k = 0; k < 2; k++) {
        brk_part_t *p = part_of(mjobs[0].id, k);
        CHECK(p && p->attempt == 1 && p->stage == ZP_ROLE_GPU);
    }
    drain("restart-after-death drain");
    CHECK(mjobs[0].done_seen[0] && mjobs[0].done_seen[1]);
    CHECK(B.c.requeued[ZP_ROLE_SYNTH] == 0);
    world_close();
}

/* defect 6: hung work holds its slot until its lease runs out; then the worker is fenced and the
 * partition requeued without charging it */
static void reg_lease(void)
{
    world_open(2);
    start_all();
    submit(1, NULL);
    sim_t *g = NULL;
    for (int i = 0; i < 400 && !g; i++) {
        run_until(NULL, 1);
        for (unsigned k = 0; k < NSIM; k++) if (sims[k].role == ZP_ROLE_GPU && sims[k].nt && sims[k].t[0].phase) g = &sims[k];
    }
    CHECK(g != NULL);
    if (!g) { world_close(); return; }
    g->t[0].hung = true;
    uint32_t sl = g->t[0].a.slot;
    CHECK(B.slots[sl].lease > zp_now_ns());
    brk_slots_tick(&B);
    CHECK(g->connected);                          /* within its lease: nothing happens */
    B.slots[sl].lease = 1;                        /* the deadline passes */
    brk_slots_tick(&B);
    CHECK(B.c.leases_expired == 1 && g->kill_pending && B.slots[sl].held);
    brk_part_t *p = part_of(mjobs[0].id, 0);
    CHECK(p && p->attempt == 1 && p->n_uncharged == 1 && B.c.fail_class[ZP_FAIL_WORKER] == 1);
    drain("lease drain");
    CHECK(mjobs[0].done_seen[0]);
    world_close();
}

/* defect 7: a worker with a sticky fault trips the breaker after K failures in a row and the
 * other worker proves the rest; input-class failures fail at once */
static void reg_breaker(void)
{
    world_open(4);
    start_all();
    sims[0].fail_all = true;                      /* synth #0 fails everything (transient) */
    brk_worker_dead(&B, broker_rec(&sims[1]), "stopped", false);
    sim_kill(&sims[1]);
    for (int i = 0; i < 4; i++) submit(1, NULL);
    for (int i = 0; i < 300; i++) {
        for (unsigned r = 0; r < ZP_NROLES; r++) for (size_t q = 0; q < B.qn[r]; q++) B.q[r][q]->not_before = 0;
        run_until(NULL, 1);
    }
    brk_worker_t *w = broker_rec(&sims[0]);
    CHECK(w && w->n_trips == 1 && w->tripped_until > zp_now_ns() && w->n_class[ZP_FAIL_TRANSIENT] == 3);
    sim_start(&sims[1]);
    for (int i = 0; i < 2000 && !all_quiet(); i++) {
        for (unsigned k = 0; k < NSIM; k++) { sim_deliver(&sims[k]); sim_step(&sims[k]); sim_deliver(&sims[k]); }
        for (unsigned r = 0; r < ZP_NROLES; r++) for (size_t q = 0; q < B.qn[r]; q++) B.q[r][q]->not_before = 0;
        brk_dispatch(&B);
        check_invariants("breaker");
    }
    for (int i = 0; i < 4; i++) CHECK(mjobs[i].done_seen[0]);
    CHECK(B.c.breaker_trips == 1);
    char *t = brk_status_text(&B, true);
    CHECK(t && strstr(t, "\"breaker_trips\": 1") && strstr(t, "\"in_rotation\": false"));
    free(t);
    world_close();
}

/* defect 8: retention by count evicts finished jobs from memory and journal, results of
 * compacted jobs come from the journal, ids are never reused, AWAIT waiters are bounded */
static void reg_bounded(void)
{
    world_open(2);
    start_all();
    for (int i = 0; i < 12; i++) submit(1, NULL);
    drain("bounded drain");
    brk_jobs_retain(&B);
    CHECK(B.n_fin <= B.retain_jobs && B.n_jobs <= B.retain_jobs);
    CHECK(B.c.jobs_evicted == 12 - B.retain_jobs);
    CHECK(brk_job_get(&B, mjobs[0].id) == NULL && brk_job_by_request(&B, "req-0", 5) == NULL);
    brk_job_t *j = brk_job_get(&B, mjobs[11].id);
    CHECK(j != NULL && brk_job_by_request(&B, "req-11", 6) == j);
    uint8_t *buf = NULL;
    size_t len = 0;
    CHECK(j && brk_result_encode(&B, j, false, &buf, &len) == 0);
    free(buf);
    uint64_t last = mjobs[11].id;
    broker_restart();                             /* the journal holds only the retained jobs */
    CHECK(B.n_jobs == B.retain_jobs);
    j = brk_job_get(&B, last);
    CHECK(j && !j->parts);                        /* a summary: results stay in the journal */
    buf = NULL;
    if (j && brk_result_encode(&B, j, false, &buf, &len) == 0) {
        zp_frame_t f;
        zp_msg_result_t r;
        CHECK(zp_frame_decode(&f, buf, len, 0) == 0 && zp_msg_result_decode(&r, &f) == 0);
        CHECK(r.n_parts == 1 && r.parts[0].state == ZP_PART_DONE && r.parts[0].proof_json.len > 0);
        zp_msg_result_free(&r);
    } else {
        CHECK(0);
    }
    free(buf);
    submit(1, NULL);                              /* new id, never a reused one */
    CHECK(mjobs[n_mjobs - 1].id > last);
    start_all();
    drain("bounded drain 2");
    /* waiters: per client and overall */
    B.max_waiters = 5; B.max_waiters_client = 3;
    uint8_t c1[] = "client-1", c2[] = "client-2";
    for (int i = 0; i < 3; i++) CHECK(brk_waiter_add(&B, c1, sizeof c1, last, 1000) == 0);
    CHECK(brk_waiter_add(&B, c1, sizeof c1, last, 1000) == ZP_ETOOBIG);
    CHECK(brk_waiter_add(&B, c2, sizeof c2, last, 1000) == 0 && brk_waiter_add(&B, c2, sizeof c2, last, 1000) == 0);
    CHECK(brk_waiter_add(&B, c2, sizeof c2, last, 1000) == ZP_ETOOBIG);
    CHECK(B.c.waiters_refused == 2);
    brk_waiters_poll(&B, true);
    CHECK(B.n_waiters == 0 && B.waiters == NULL);
    world_close();
}

/* ---------------------------------------------------------------- slots: priority, classes */
static brk_part_t *slot_part(uint32_t s) { return s < B.n_slots ? B.slots[s].part : NULL; }

/* step and deliver one sim until pred (or n rounds), dispatching after each */
static void step_sim(sim_t *s, int n)
{
    for (int i = 0; i < n; i++) { sim_step(s); sim_deliver(s); brk_dispatch(&B); check_invariants("step"); }
}

static unsigned low_done_before(uint64_t low_job, uint64_t crit_job)
{
    brk_job_t *c = brk_job_get(&B, crit_job), *l = brk_job_get(&B, low_job);
    if (!c || !l || !c->parts || !l->parts) return 99;
    uint64_t tc = c->parts[0].t_done[ZP_ROLE_FINAL];
    unsigned n = 0;
    for (uint32_t k = 0; k < l->n_parts; k++) n += l->parts[k].state == PS_DONE && l->parts[k].t_done[ZP_ROLE_FINAL] < tc;
    return n;
}

/* item 6: every slot full of LOW work (one on the held GPU, one READY): a CRITICAL partition
 * takes the READY one's slot back at once; the LOW partition goes back to synthesis, not
 * charged, and is proved once in the end */
static void reg_takeback_ready(void)
{
    world_open(2);
    sim_t *sy = only(ZP_ROLE_SYNTH, 1), *g = only(ZP_ROLE_GPU, 0);
    only(ZP_ROLE_FINAL, 0);
    g_prio = ZP_PRIO_LOW;
    submit(4, NULL);
    brk_dispatch(&B);
    step_sim(sy, 12);                             /* two LOW partitions synthesized, both slots bound */
    sim_deliver(g);
    CHECK(g->nt == 1 && B.qn[ZP_ROLE_GPU] == 1 && slot_part(0) && slot_part(1));
    brk_part_t *ready = B.q[ZP_ROLE_GPU][0];
    int32_t rs = ready->slot;
    g_prio = ZP_PRIO_CRITICAL;
    submit(1, NULL);
    brk_dispatch(&B);
    check_invariants("takeback-ready");
    brk_part_t *c = part_of(mjobs[1].id, 0);
    CHECK(B.n_taken_ready == 1 && c && c->state == PS_RUNNING && c->stage == ZP_ROLE_SYNTH && c->slot == rs);
    CHECK(ready->state == PS_QUEUED && ready->stage == ZP_ROLE_SYNTH && ready->slot == -1 && ready->attempt == 1 &&
          ready->n_uncharged == 0);
    CHECK(g->nt == 1 && g->t[0].phase == 0);       /* the LOW partition on the GPU is left alone */
    drain("takeback-ready drain");
    CHECK(mjobs[0].done_seen[0] && mjobs[0].done_seen[1] && mjobs[0].done_seen[2] && mjobs[0].done_seen[3]);
    CHECK(mjobs[1].done_seen[0] && B.c.parts_done == 5);
    CHECK(low_done_before(mjobs[0].id, mjobs[1].id) <= 1);   /* only the one the GPU held */
    world_close();
}

/* item 6: both slots assigned to a synthesizer (two credits) with LOW work, one started: the
 * CRITICAL partition gets the other one's slot through a REVOKE (handed back unstarted) */
static void reg_takeback_revoke(void)
{
    world_open(2);
    sim_t *sy = only(ZP_ROLE_SYNTH, 1);
    only(ZP_ROLE_GPU, 0); only(ZP_ROLE_FINAL, 0);
    g_prio = ZP_PRIO_LOW;
    submit(2, NULL);
    brk_dispatch(&B);
    CHECK(sy->nt == 2);
    sim_step(sy);                                 /* the first one has started (layout) */
    uint32_t started = sy->t[0].a.slot, queued = sy->t[1].a.slot;
    g_prio = ZP_PRIO_CRITICAL;
    submit(1, NULL);
    brk_dispatch(&B);
    brk_part_t *vq = slot_part(queued), *vs = slot_part(started);
    CHECK(B.n_taken_revoke == 1 && vq && vq->revoking && vs && !vs->revoking);
    CHECK(sy->nout == 1 && sy->out[0].type == ZP_CMD_FAIL && sy->out[0].f.unstarted);   /* handed back */
    sim_deliver(sy);                              /* its FAIL releases the slot; dispatch gives it on */
    brk_dispatch(&B);
    check_invariants("takeback-revoke");
    brk_part_t *c = part_of(mjobs[1].id, 0);
    CHECK(c && c->state == PS_RUNNING && c->stage == ZP_ROLE_SYNTH && c->slot == (int32_t)queued);
    CHECK(vq->state == PS_QUEUED && vq->attempt == 1 && vq->n_uncharged == 0 && !vq->revoking);
    CHECK(sy->nt == 2 && sy->t[0].a.slot == started && sy->t[0].phase == 1);   /* the started one runs on */
    drain("takeback-revoke drain");
    CHECK(mjobs[0].done_seen[0] && mjobs[0].done_seen[1] && mjobs[1].done_seen[0] && B.c.parts_done == 3);
    world_close();
}

/* item 6, the GPU stage: a GPU worker with two credits holds two LOW partitions (one running,
 * one not started); a CRITICAL partition READY behind them gets the second credit through a
 * REVOKE: the LOW one is handed back unstarted and is READY again with its payload (its
 * synthesis is not redone), not charged */
static void reg_takeback_gpu(void)
{
    world_open(3);
    sim_t *sy = only(ZP_ROLE_SYNTH, 1), *g = only(ZP_ROLE_GPU, 1);
    only(ZP_ROLE_FINAL, 0);
    g_prio = ZP_PRIO_LOW;
    submit(2, NULL);
    brk_dispatch(&B);
    step_sim(sy, 12);
    sim_deliver(g);
    CHECK(g->nt == 2);
    sim_step(g);                                  /* the first one runs */
    uint32_t queued = g->t[1].a.slot;
    brk_part_t *v = slot_part(queued);
    uint64_t pg = v ? v->payload_gen : 0;
    g_prio = ZP_PRIO_CRITICAL;
    submit(1, NULL);
    brk_dispatch(&B);
    step_sim(sy, 8);                              /* the critical one is synthesized: READY */
    brk_part_t *c = part_of(mjobs[1].id, 0);
    CHECK(c && c->stage == ZP_ROLE_GPU && B.n_revoked_gpu == 1 && v && v->revoking);
    CHECK(g->nout == 1 && g->out[0].f.unstarted);
    sim_deliver(g);
    brk_dispatch(&B);
    check_invariants("takeback-gpu");
    CHECK(c->state == PS_RUNNING && c->stage == ZP_ROLE_GPU && c->worker == broker_rec(g));
    CHECK(v->state == PS_QUEUED && v->stage == ZP_ROLE_GPU && v->payload_gen == pg && v->attempt == 1 && !v->revoking);
    CHECK(B.c.requeued[ZP_ROLE_SYNTH] == 0);      /* nothing synthesized again */
    drain("takeback-gpu drain");
    CHECK(mjobs[0].done_seen[0] && mjobs[0].done_seen[1] && mjobs[1].done_seen[0] && B.c.parts_done == 3);
    world_close();
}

/* item 6: --slot-reserve 1: LOW work leaves one slot free; a CRITICAL partition takes it at once
 * (taking back turned off, so the reservation alone does it) */
static void reg_reserve(void)
{
    world_open(3);
    g_reserve = 1;
    B.reserve[ZP_PRIO_CRITICAL] = 1;
    B.preempt = ZP_NPRIO;
    sim_t *sy = only(ZP_ROLE_SYNTH, 1);
    only(ZP_ROLE_GPU, 0); only(ZP_ROLE_FINAL, 0);
    g_prio = ZP_PRIO_LOW;
    submit(4, NULL);
    brk_dispatch(&B);
    step_sim(sy, 12);                             /* two synthesized; the synth has credit again */
    zp_shm_stats_t st;
    zp_shm_stats(A, &st);
    CHECK(st.by_state[ZP_SLOT_FREE] == 1 && B.nq[ZP_ROLE_SYNTH][ZP_PRIO_LOW] == 2 && sy->nt == 0);
    g_prio = ZP_PRIO_CRITICAL;
    submit(1, NULL);
    brk_dispatch(&B);
    brk_part_t *c = part_of(mjobs[1].id, 0);
    CHECK(c && c->state == PS_RUNNING && c->stage == ZP_ROLE_SYNTH && B.n_taken_ready == 0 && B.n_taken_revoke == 0);
    drain("reserve drain");
    CHECK(mjobs[1].done_seen[0] && B.c.parts_done == 5);
    world_close();
}

static bool big_in_big_slot(void)
{
    brk_part_t *p = part_of(mjobs[1].id, 1);
    return p && p->slot == 2;
}

/* item 7: two classes (2 small slots, 1 big): a circuit no class holds is refused at SUBMIT,
 * saying why; big partitions only ever get the big slot, small ones the small slots and the big
 * slot only while no big partition waits for it; everything is proved */
static void reg_classes(void)
{
    world_open_classes(2, 1);
    start_all();
    zp_msg_submit_t *m = calloc(1, sizeof *m);
    m->request_id = zp_str("huge");
    m->zkey = zp_str(ZKEY_HUGE);
    m->n_wtns = 1;
    m->wtns[0] = zp_str("/model/w.wtns");
    brk_job_t *j = NULL;
    bool existed;
    size_t nj = B.n_jobs;
    int rc = brk_submit(&B, m, &j, &existed);
    free(m);
    CHECK(rc == ZP_EMISMATCH && strstr(zp_err_msg(), ZKEY_HUGE) && strstr(zp_err_msg(), "need a slot of 10 MiB") &&
          strstr(zp_err_msg(), "have 4 MiB") && B.n_jobs == nj && B.n_submit_too_big == 1);
    g_size = 0; submit(3, NULL);                  /* small: the third one spills into the big slot */
    run_until(NULL, 3);
    CHECK(B.n_spilled >= 1);
    drain("classes drain 1");
    uint64_t spilled = B.n_spilled;
    g_size = 1; submit(2, NULL);                  /* big: job 1, while small ones keep coming */
    g_size = 0; submit(4, NULL);
    for (int i = 0; i < 4000 && !all_quiet(); i++) {
        for (unsigned k = 0; k < NSIM; k++) { sim_deliver(&sims[k]); sim_step(&sims[k]); sim_deliver(&sims[k]); }
        brk_dispatch(&B);
        check_invariants("classes");
        brk_part_t *b1 = part_of(mjobs[1].id, 1), *in2 = slot_part(2);
        /* a big partition waiting: the big slot is not given to small work */
        if (b1 && b1->state == PS_QUEUED && b1->stage == ZP_ROLE_SYNTH && in2 && in2->job->id == mjobs[2].id &&
            in2->state == PS_RUNNING && in2->stage == ZP_ROLE_SYNTH && in2->t_assign[ZP_ROLE_SYNTH] > b1->t_queued[ZP_ROLE_SYNTH])
            VIOLATION("classes: small job %llu part %u took the big slot while big partition 1 waited",
                      (unsigned long long)in2->job->id, in2->idx);
        for (uint32_t s = 0; s < 2; s++)
            if (slot_part(s) && slot_part(s)->job->id == mjobs[1].id) VIOLATION("classes: a big partition in small slot %u", s);
    }
    (void)big_in_big_slot;
    CHECK(all_quiet());
    for (unsigned i = 0; i < 4; i++) CHECK(mjobs[2].done_seen[i]);
    CHECK(mjobs[1].done_seen[0] && mjobs[1].done_seen[1]);
    CHECK(B.n_spilled >= spilled);
    world_close();
}

/* item 7: a job accepted into a class that no longer holds its circuit after a broker restart
 * (here: its zkey grew) fails at its first dispatch, saying why; nothing else is disturbed */
static void reg_classes_restart(void)
{
    world_open_classes(2, 1);
    g_size = 1; submit(1, NULL);                  /* accepted, not dispatched yet */
    g_size = 0; submit(1, NULL);
    broker_stop();
    broker_start(true);
    brk_circuit_note(&B, ZKEY_BIG, HUGE, HUGE);   /* the restarted broker finds the zkey bigger */
    start_all();
    brk_dispatch(&B);
    brk_job_t *j = brk_job_get(&B, mjobs[0].id);
    CHECK(j && j->state == ZP_JOB_FAILED && j->parts && j->parts[0].reasons &&
          strstr(j->parts[0].reasons, "need a slot of 10 MiB"));
    mjobs[0].bad[0] = true;                       /* expected to fail */
    mjobs[0].finished = true;
    drain("classes-restart drain");
    CHECK(mjobs[1].done_seen[0]);
    world_close();
}

/* ---------------------------------------------------------------- bench: bounded broker state */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f)) if (!strncmp(line, "VmRSS:", 6)) v = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return v;
}

static int bench(unsigned total)
{
    world_open(8);
    B.retain_jobs = 50000;                        /* the broker's default */
    start_all();
    unsigned done = 0, next_report = 10000;
    uint64_t t0 = zp_now_ns();
    printf("# %u partitions (1 per job) through the broker, real journal in %s, simulated stages\n", total, g_dir);
    printf("# finished  rss_kib  heap_kib  jobs_in_memory  journal_kib  status_text_ms  status_json_ms\n");
    while (done < total) {
        unsigned live = 0;
        for (unsigned i = n_mjobs > 64 ? n_mjobs - 64 : 0; i < n_mjobs; i++) live += !mjobs[i].finished;
        while (live < 16 && n_mjobs < total) { submit(1, NULL); live++; }
        if (n_mjobs >= MAXJOBS - 16) {   /* the model's own table is small: forget what finished */
            unsigned k = 0;
            for (unsigned i = 0; i < n_mjobs; i++) if (!mjobs[i].finished) mjobs[k++] = mjobs[i];
            n_mjobs = k;
        }
        for (unsigned k = 0; k < NSIM; k++) { sim_deliver(&sims[k]); sim_step(&sims[k]); sim_deliver(&sims[k]); }
        brk_dispatch(&B);
        done = (unsigned)B.c.parts_done;
        for (unsigned i = 0; i < n_mjobs; i++)
            if (!mjobs[i].finished) { brk_job_t *j = brk_job_get(&B, mjobs[i].id); if (!j || j->state != ZP_JOB_RUNNING) mjobs[i].finished = true; }
        static uint64_t last_tick;
        if (zp_now_ns() - last_tick > 200000000u) { brk_slots_tick(&B); brk_jobs_retain(&B); last_tick = zp_now_ns(); }
        if (done >= next_report) {
            brk_jobs_retain(&B);
            double ms[2];
            for (int js = 0; js < 2; js++) {
                uint64_t a = zp_now_ns();
                for (int r = 0; r < 20; r++) free(brk_status_text(&B, js));
                ms[js] = (zp_now_ns() - a) / 20 / 1e6;
            }
            struct mallinfo2 mi = mallinfo2();
            char side[600];
            snprintf(side, sizeof side, "%s-wal", g_jr);
            FILE *f = fopen(g_jr, "r");
            long jk = 0;
            if (f) { fseek(f, 0, SEEK_END); jk = ftell(f) / 1024; fclose(f); }
            printf("%9u  %7ld  %8zu  %14zu  %11ld  %14.3f  %14.3f\n", done, rss_kib(), (mi.uordblks + mi.hblkhd) / 1024,
                   B.n_jobs, jk, ms[0], ms[1]);
            fflush(stdout);
            next_report += 10000;
        }
    }
    printf("# %.1f s\n", (zp_now_ns() - t0) / 1e9);
    world_close();
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    zp_log_init("model");
    verbose = getenv("ZP_MODEL_VERBOSE") != NULL;
    if (!verbose && !getenv("ZP_LOG")) zp_log_level = ZP_LOG_ERROR - 1;   /* quiet: the model kills a lot */
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/zkpipe-model-%d-XXXXXX", base, (int)getpid());
    if (!mkdtemp(g_dir)) { perror("mkdtemp"); return 1; }
    int rc = 0;
    if (argc == 3 && !strcmp(argv[1], "--bench")) {
        rc = bench((unsigned)strtoul(argv[2], NULL, 10));
    } else {
        static const struct { const char *name; void (*fn)(void); } regs[] = {
            {"cancel-quarantine", reg_cancel_quarantine}, {"dead-alive-quarantine", reg_dead_alive_quarantine},
            {"zombie-reused-quarantine", reg_zombie_reused_quarantine},
            {"verify-redo", reg_verify_redo}, {"restart-after-death", reg_restart_after_death}, {"lease", reg_lease},
            {"breaker", reg_breaker}, {"bounded", reg_bounded}, {"takeback-ready", reg_takeback_ready},
            {"takeback-revoke", reg_takeback_revoke}, {"takeback-gpu", reg_takeback_gpu}, {"reserve", reg_reserve}, {"classes", reg_classes},
            {"classes-restart", reg_classes_restart}};
        const char *only_reg = getenv("ZP_MODEL_ONLY");
        for (unsigned i = 0; i < sizeof regs / sizeof regs[0]; i++) {
            if (only_reg && strcmp(only_reg, regs[i].name)) continue;
            int f0 = fails;
            regs[i].fn();
            printf("scenario %s: %s\n", regs[i].name, fails == f0 ? "ok" : "FAILED");
            fflush(stdout);
        }
        printf("scripted scenarios: %d failure(s)\n", fails);
        unsigned seeds = getenv("ZP_MODEL_SEEDS") ? (unsigned)atoi(getenv("ZP_MODEL_SEEDS")) : 16;
        unsigned steps = getenv("ZP_MODEL_STEPS") ? (unsigned)atoi(getenv("ZP_MODEL_STEPS")) : 2500;
        uint64_t seed0 = getenv("ZP_MODEL_SEED0") ? strtoull(getenv("ZP_MODEL_SEED0"), NULL, 0) : 1;
        for (unsigned i = 0; i < seeds; i++) {
            n_violations = 0;
            unsigned k0 = n_kills, r0 = n_restarts;
            model_run(seed0 + i, steps);
            if (n_violations) { fprintf(stderr, "seed %llu failed (rerun: ZP_MODEL_SEED0=%llu ZP_MODEL_SEEDS=1)\n",
                                        (unsigned long long)(seed0 + i), (unsigned long long)(seed0 + i)); break; }
            if (verbose) printf("seed %llu: %u kills, %u broker restarts\n", (unsigned long long)(seed0 + i),
                                n_kills - k0, n_restarts - r0);
        }
        printf("model: %u seed(s) x %u steps, %u kills, %u broker restarts, %u stale-holder steps\n", seeds, steps, n_kills,
               n_restarts, n_stale_steps);
    }
    rmdir(g_dir);
    if (rc) return rc;
    if (fails) { printf("model: %d check(s) failed\n", fails); return 1; }
    printf("model: all tests passed\n");
    return 0;
}
