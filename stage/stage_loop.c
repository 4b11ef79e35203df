/* stage_loop.c - the stage runtime's loop: the socket, HELLO, heartbeats, the work thread,
 * REVOKE/RESET, the results outbox and the lease watch (see stage.h).
 *
 * Invariants: the loop (main) thread owns the socket and the outbox; the work thread owns the
 * task (or batch) it is running; the staging thread (def->stage) the task it stages; the queues
 * (todo, ready, done), `running`, `staging` and the buffer sets are guarded by one mutex; both
 * threads wake the loop through an eventfd. Staging: ASSIGN -> todo -> staging thread (stage()
 * into a free buffer set) -> ready -> work thread (work()/work_batch()) -> done; without
 * def->stage an ASSIGN goes to ready directly. With def->deferred the staging thread, right after
 * it put a task on ready, runs the task's deferred check (`verifying`; the work thread may already
 * compute it) and hands the verdict to zp_stage_deferred_wait; the task is unstaged, finished or
 * dropped only after that check returned (a drop meanwhile marks it `unqueued`: the staging
 * thread finishes it). A staged task holds its set until it is reported
 * or dropped; the HELLO lists the running tasks only (staged ones have written nothing and are
 * dropped on a RESET like queued ones; one being staged then is discarded when staging ends). A task is reported exactly once (DONE or
 * FAIL); queued tasks are dropped silently on a RESET (the broker forgot them); the running one
 * carries on, is listed in the HELLO that follows, and is reported (adopted by a restarted
 * broker, else counted stale). Work handed back without running work() is a FAIL with
 * unstarted = true (stopping = true when the worker is shutting down).
 * Results are never dropped: every HELLO, DONE and FAIL goes through the outbox, in order; a
 * frame the socket does not take now (high-water mark) stays there and is resent when the
 * socket polls writable. Heartbeats are liveness only: sent when the outbox is empty.
 * Lease: a running task past its ASSIGN's lease_deadline means a hung work thread (it cannot be
 * cancelled safely): the loop logs it, hands what it can to the socket and exits the process
 * (ZP_STAGE_EXIT_LEASE) for the supervisor to restart; the broker requeues on the same expiry.
 * A HELLO the broker refuses (ERROR before any other answer: another live process holds this
 * role and instance, a bad identity token, too many workers, a frame it cannot read) is logged
 * with the broker's reason and the process exits ZP_STAGE_EXIT_REFUSED: such a worker would
 * never get work, and saying HELLO forever (what it did) hid the reason behind RESETs. An ERROR
 * after registration is logged and changes nothing.
 * Service manager (proto/notify.h; systemd or `zkpipe up`): READY=1 once, when the first frame
 * from the broker other than an ERROR arrives after our HELLO; STATUS= follows the process title; WATCHDOG=1 from the
 * loop at half of WATCHDOG_USEC; STOPPING=1 on a stop. Tests: tests/ipc/stage_*.sh, tests/ipc/. */
#include <bsd/unistd.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "lib/util/util.h"
#include "proto/identity.h"
#include "proto/notify.h"
#include "proto/peer.h"
#include "stage/stage_int.h"

#define OUTBOX_DRAIN_MS 10000     /* a stop waits this long for the broker to take our results */

typedef struct out_frame { struct out_frame *next; size_t n; uint8_t b[]; } out_frame_t;

typedef struct {
    zp_stage_t *s;
    zp_peer_t p;
    uint64_t inc;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    zp_runner_t *verifier;   /* def->deferred's thread ("zp-verify", normal policy): the staging
                                thread sleeps through the O(n) check instead of running it, so
                                it never has used more than its share when the next ASSIGN
                                wakes it (a woken thread that has is not eligible to run) */
    pthread_cond_t wcv;   /* the work thread's idle wait alone (ready, hold, quit): the other
                             threads' broadcasts on cv must not wake it for nothing, which left it
                             runnable behind the staging thread's checksum when its task came */
    /* todo: assigned, not yet taken; with def->stage the staging thread takes from todo and
     * appends what it staged to ready, else on_assign appends to ready directly; the work thread
     * takes from ready (running: the task, or the batch chained by next, it works on);
     * staging: the task on the staging thread; sets_busy: the buffer sets held */
    zp_stage_task_t *todo, *todo_tail, *done, *running, *ready, *ready_tail, *staging;
    zp_stage_task_t *verifying;   /* def->deferred running on the staging thread for this task */
    uint64_t sets_busy;
    bool staged_mode;       /* def->stage */
    bool chained;           /* def->launch without batching: work_chained */
    bool device_gone;       /* a thread saw a DEVICE-class failure (the loop learns it later) */
    bool quit;
    int efd;
    unsigned held;          /* tasks received and not yet reported */
    char status[200];       /* last STATUS= sent */
    out_frame_t *out, *out_tail;
    unsigned out_n;
    bool out_stalled;
    uint64_t out_stalls;    /* times the broker stopped taking our frames */
    bool device_failed;     /* a DEVICE-class FAIL was reported: stop, exit for a clean restart */
    bool refused;           /* the broker refused our HELLO: exit ZP_STAGE_EXIT_REFUSED */
    /* def->arena_first: the epoch whose arena the loop opened; an ASSIGN of another epoch sets
     * hold (the work thread takes nothing) until the work thread is idle and the loop has
     * opened that epoch's arena (arena_opened: the GPU worker registers it here, not in a task) */
    uint64_t epoch, want_epoch;
    bool hold;
} loop_t;

static void task_free(zp_stage_task_t *t)
{
    if (!t) return;
    free(t->zkey); free(t->r1cs); free(t->wtns); free(t->wasm); free(t->proof_json); free(t->public_json);
    free(t);
}

static void unstarted(zp_stage_task_t *t, bool stopping, const char *why)
{
    t->ok = false; t->code = ZP_ESTALE; t->fail_class = ZP_FAIL_WORKER;
    t->unstarted = true; t->stopping = stopping;
    snprintf(t->msg, sizeof t->msg, "handed back unstarted: %s", why);
}

/* ---------------------------------------------------------------- work thread */
static void push_ready(loop_t *h, zp_stage_task_t *t)
{
    t->next = NULL;
    if (h->ready_tail) h->ready_tail->next = t; else h->ready = t;
    h->ready_tail = t;
    pthread_cond_signal(&h->wcv);
}

/* mu held: a finished (or never staged) task goes to the loop; its buffer set is free again */
static void finish_locked(loop_t *h, zp_stage_task_t *t)
{
    if (h->staged_mode) h->sets_busy &= ~(UINT64_C(1) << t->set);
    t->next = h->done;
    h->done = t;
}

static void wake_loop(loop_t *h)
{
    uint64_t one = 1;
    if (write(h->efd, &one, sizeof one) < 0) { /* eventfd cannot fail here */ }
}

/* the lowest free buffer set, or -1 (mu held) */
static int free_set(const loop_t *h)
{
    for (unsigned i = 0; i < h->s->stage_sets; i++)
        if (!(h->sets_busy & (UINT64_C(1) << i))) return (int)i;
    return -1;
}

/* the staging thread, after it handed t to the work thread: def->deferred (the check that gates
 * t's result); its verdict goes into t for zp_stage_deferred_wait. A task that drop_queued took
 * off the ready queue meanwhile (unqueued: RESET, REVOKE, stop) is finished here: unstaged,
 * then reported (unstarted, set by drop_queued) or, after a RESET, dropped. */
typedef struct { zp_stage_t *s; zp_stage_task_t *t; } deferred_arg_t;
static int deferred_fn(void *v)
{
    const deferred_arg_t *d = v;
    return d->s->def->deferred(d->s, d->t);
}

static void run_deferred(loop_t *h, zp_stage_task_t *t)
{
    zp_stage_t *s = h->s;
    zp_err_clear();
    zp_log_ctx(t->a.job, t->a.part);
    /* the O(n) check on its own thread at the normal policy: it must not hog a core, nor leave
     * the staging thread (a control thread) behind in its share */
    int rc = zp_runner_call(h->verifier, deferred_fn, &(deferred_arg_t){.s = s, .t = t}, NULL, NULL);
    zp_log_ctx(0, -1);
    uint64_t now = zp_now_ns();
    pthread_mutex_lock(&h->mu);
    t->drc = rc < 0 ? rc : 0;
    snprintf(t->dmsg, sizeof t->dmsg, "%s", rc < 0 ? zp_err_msg() : "");
    t->tm[ZP_TM_VERIFY_END] = now;
    t->dstate = ZP_STAGE_DEFERRED_DONE;
    h->verifying = NULL;
    bool orphan = t->unqueued;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    zp_err_clear();
    if (!orphan) return;
    if (s->def->unstage) s->def->unstage(s, t);
    t->staged = false;
    pthread_mutex_lock(&h->mu);
    t->t_start = t->tm[ZP_TM_STAGE_START];
    t->t_end = zp_now_ns();
    finish_locked(h, t);
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    wake_loop(h);
}

/* mu not held: wait until t's deferred check (if any) ended */
static void deferred_join(loop_t *h, zp_stage_task_t *t)
{
    pthread_mutex_lock(&h->mu);
    while (t->dstate == ZP_STAGE_DEFERRED_RUNNING) pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
}

int zp_stage_deferred_wait(zp_stage_t *s, zp_stage_task_t *t)
{
    deferred_join(s->loop, t);
    if (t->dstate != ZP_STAGE_DEFERRED_DONE || t->drc == 0) return 0;
    return zp_err_set(t->drc, "%s", t->dmsg);
}

/* def->stage: take assigned tasks in order and stage them into a free buffer set while the work
 * thread computes; a task of an epoch whose arena is not the open one waits until nothing is
 * staged or running (stage() may then reopen the arena: nobody else uses it) */
static void *staging_thread(void *arg)
{
    loop_t *h = arg;
    zp_stage_t *s = h->s;
    pthread_setname_np(pthread_self(), "zp-staging");   /* top -H, perf sched */
    zp_rt_enter();   /* a control thread (lib/util/rt.c; a no-op unless the daemon set it up) */
    for (;;) {
        pthread_mutex_lock(&h->mu);
        zp_stage_task_t *t = NULL;
        int set = -1;
        while (!h->quit) {
            if (h->todo && !h->hold && (set = free_set(h)) >= 0) {
                bool other_epoch = !s->arena || zp_shm_epoch(s->arena) != h->todo->a.epoch;
                if (!other_epoch || (!h->ready && !h->running)) { t = h->todo; break; }
            }
            pthread_cond_wait(&h->cv, &h->mu);
        }
        if (!t) { pthread_mutex_unlock(&h->mu); break; }
        h->todo = t->next;
        if (!h->todo) h->todo_tail = NULL;
        t->next = NULL;
        t->set = (unsigned)set;
        h->sets_busy |= UINT64_C(1) << set;
        h->staging = t;
        bool gone = h->device_gone;
        pthread_mutex_unlock(&h->mu);

        t->tm[ZP_TM_STAGE_START] = zp_now_ns();
        if (t->a.lease_deadline && t->tm[ZP_TM_STAGE_START] >= t->a.lease_deadline) {
            unstarted(t, false, "its lease expired while it was queued");
        } else if (t->revoked || gone) {
            unstarted(t, gone || zp_stage_sig_stop, gone || zp_stage_sig_stop ? "worker shutting down" : "revoked");
        } else {
            zp_log_ctx(t->a.job, t->a.part);
            s->def->stage(s, t);
            zp_log_ctx(0, -1);
            if (!t->staged && t->fail_class == ZP_FAIL_DEVICE) {
                pthread_mutex_lock(&h->mu);
                h->device_gone = true;
                pthread_mutex_unlock(&h->mu);
            }
        }
        t->tm[ZP_TM_STAGE_END] = zp_now_ns();
        if (t->staged && (t->dropped || t->revoked)) {   /* RESET / REVOKE / stop while staging */
            if (s->def->unstage) s->def->unstage(s, t);
            t->staged = false;
            if (!t->dropped) unstarted(t, zp_stage_sig_stop, zp_stage_sig_stop ? "worker shutting down" : "revoked");
        }
        pthread_mutex_lock(&h->mu);
        h->staging = NULL;
        bool to_loop = !t->staged, defer = t->staged && s->def->deferred;
        if (to_loop) {   /* never reached the work thread: the staging was all of it */
            t->t_start = t->tm[ZP_TM_STAGE_START];
            t->t_end = zp_now_ns();
            finish_locked(h, t);
        } else {
            push_ready(h, t);
            if (defer) {   /* the work thread may take it now: its compute overlaps the check */
                t->dstate = ZP_STAGE_DEFERRED_RUNNING;
                h->verifying = t;
            }
        }
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        if (to_loop) wake_loop(h);
        if (defer) run_deferred(h, t);
    }
    return NULL;
}

/* a task the work thread took: can it start? Not when its lease expired in the queue, it was
 * revoked, or a DEVICE failure was seen (handed back unstarted). The first task that passes the
 * lease check waits in the test hold (*held: done once per take). t->t_start: after the hold. */
static bool startable(loop_t *h, zp_stage_task_t *t, bool *held)
{
    zp_stage_t *s = h->s;
    t->t_start = zp_now_ns();
    if (t->a.lease_deadline && t->t_start >= t->a.lease_deadline) {
        unstarted(t, false, "its lease expired while it was queued");
        return false;
    }
    if (!*held) {
        zp_stage_test_hold(s->def->role, &t->revoked);
        *held = true;
        t->t_start = zp_now_ns();
    }
    pthread_mutex_lock(&h->mu);
    bool gone = h->device_gone;
    pthread_mutex_unlock(&h->mu);
    if (t->revoked || gone) {   /* after a DEVICE failure nothing more runs here */
        bool stopping = zp_stage_sig_stop || h->device_failed || gone;
        unstarted(t, stopping, stopping ? "worker shutting down" : "revoked");
        return false;
    }
    return true;
}

/* after work() (or instead of it): a DEVICE failure noted, the deferred check joined, the
 * buffer set and the key let go */
static void task_end(loop_t *h, zp_stage_task_t *t)
{
    zp_stage_t *s = h->s;
    if (!t->ok && t->fail_class == ZP_FAIL_DEVICE) {
        pthread_mutex_lock(&h->mu);
        h->device_gone = true;
        pthread_mutex_unlock(&h->mu);
    }
    deferred_join(h, t);   /* the staging thread may still read t's buffer set */
    if (t->staged && s->def->unstage) s->def->unstage(s, t);
    t->staged = false;
    if (t->key) zp_keycache_release(s->kc, t->key);
    t->key = NULL;
    t->t_end = zp_now_ns();
}

/* run one task or a batch (chained by next) that the work thread took */
static void run_tasks(loop_t *h, zp_stage_task_t *first)
{
    zp_stage_t *s = h->s;
    zp_stage_task_t *run[ZP_MSG_MAX_CREDITS];
    unsigned m = 0;
    bool held = false;
    for (zp_stage_task_t *t = first; t; t = t->next)
        if (startable(h, t, &held)) run[m++] = t;
    if (m > 1 && s->def->work_batch) {
        zp_log_ctx(run[0]->a.job, run[0]->a.part);
        s->def->work_batch(s, run, m);
        zp_log_ctx(0, -1);
    } else {
        for (unsigned i = 0; i < m; i++) {
            zp_log_ctx(run[i]->a.job, run[i]->a.part);   /* log lines from work() name the job and partition */
            s->def->work(s, run[i]);
            zp_log_ctx(0, -1);
        }
    }
    for (zp_stage_task_t *t = first; t; t = t->next) task_end(h, t);
    pthread_mutex_lock(&h->mu);
    h->running = NULL;
    for (zp_stage_task_t *t = first, *nx; t; t = nx) {
        nx = t->next;
        finish_locked(h, t);
    }
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    wake_loop(h);
}

/* def->launch's done: the task's compute ended (on the compute thread) */
static void launched_done(void *v)
{
    zp_stage_task_t *t = v;
    loop_t *h = t->rt;
    bool wake = !zp_runner_next_queued();   /* else the work thread polls (quiet_wait) */
    pthread_mutex_lock(&h->mu);
    t->computed = true;
    if (wake) pthread_cond_signal(&h->wcv);
    pthread_mutex_unlock(&h->mu);
}

/* mu held: the work thread's wait for a launched compute's end. With a compute queued behind
 * it the compute thread sets `computed` without waking anyone: a wake-up (the futex call's
 * return) is where a pending reschedule took it off its core between the two computes, and it
 * then waited out a finalizer thread's slice (issue 10: 4.2 ms at 2^20). So this wait polls,
 * every 1/32 of the time since the oldest was taken, 1-50 ms: a few hundred wake-ups in a
 * compute of seconds, the commit at most 50 ms later, off the device's path. Any other event
 * (ready, revoke, quit; the end of a compute with nothing behind it) still signals. */
static void quiet_wait(loop_t *h)
{
    uint64_t now = zp_now_ns(), until = now + zp_poll_step_ns(h->running->t_start, now, 32, 1000000u, 50000000u);
    struct timespec ts = {.tv_sec = (time_t)(until / 1000000000u), .tv_nsec = (long)(until % 1000000000u)};
    (void)pthread_cond_clockwait(&h->wcv, &h->mu, CLOCK_MONOTONIC, &ts);
}

/* The chained work thread (def->launch, no batching): h->running holds up to CHAIN_DEPTH tasks
 * in order, each launched (its compute posted behind the previous one's) or not (work() runs it
 * whole, alone: a new key to load first, no compute thread). It takes the next staged task as
 * soon as every running one is launched, and launches it, so the compute thread finds it queued
 * when the running compute ends and goes on with nothing to wake (the gap a hand-off through
 * this thread cost, issue 10); taking comes first. It completes the oldest (work(): the wait
 * for its compute, the verdict, the commit) once its compute ended, then reports it: tasks
 * are reported in the order they were taken. A launched task revoked (REVOKE: a higher
 * priority wants its slot; a stop) before its compute began is taken back (def->cancel) and
 * handed back unstarted, as a staged one is. */
#define CHAIN_DEPTH 2

/* mu held: a launched task whose compute has not ended, revoked, not yet asked to cancel */
static zp_stage_task_t *launched_revoked(loop_t *h)
{
    for (zp_stage_task_t *t = h->running; t; t = t->next)
        if (t->chain == ZP_STAGE_CHAIN_LAUNCHED && !t->computed && t->revoked && !t->cancel_tried) return t;
    return NULL;
}

/* a running task done with: ended (task_end), off the running list, to the loop */
static void retire(loop_t *h, zp_stage_task_t *t)
{
    task_end(h, t);
    pthread_mutex_lock(&h->mu);
    for (zp_stage_task_t **pp = &h->running; *pp; pp = &(*pp)->next)
        if (*pp == t) { *pp = t->next; break; }
    t->next = NULL;
    finish_locked(h, t);
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    wake_loop(h);
}

static void work_chained(loop_t *h)
{
    zp_stage_t *s = h->s;
    for (;;) {
        pthread_mutex_lock(&h->mu);
        zp_stage_task_t *take = NULL, *end = NULL, *last = NULL;
        unsigned n = 0;
        bool all_launched = true;
        for (zp_stage_task_t *t = h->running; t; t = t->next) {
            last = t;
            n++;
            all_launched &= t->chain == ZP_STAGE_CHAIN_LAUNCHED;
        }
        zp_stage_task_t *revoked = NULL;
        bool quiet = false;   /* zp_rt_wake_quiet: the compute's end must not pre-empt the compute thread */
        while (!(h->ready && n < CHAIN_DEPTH && all_launched) &&
               !(h->running && (h->running->computed || h->running->chain != ZP_STAGE_CHAIN_LAUNCHED)) &&
               !(h->quit && !h->running) && !(revoked = launched_revoked(h))) {
            if (!quiet && h->running) {   /* (a system call: not with mu held) */
                quiet = true;
                pthread_mutex_unlock(&h->mu);
                zp_rt_wake_quiet(true);
                pthread_mutex_lock(&h->mu);
                continue;
            }
            if (h->running) quiet_wait(h);
            else pthread_cond_wait(&h->wcv, &h->mu);
        }
        if (quiet) {
            pthread_mutex_unlock(&h->mu);
            zp_rt_wake_quiet(false);
            pthread_mutex_lock(&h->mu);
        }
        if (revoked) {   /* revoked while its compute waits behind another: hand it back if it can be */
            revoked->cancel_tried = true;
            pthread_mutex_unlock(&h->mu);
            if (s->def->cancel && s->def->cancel(s, revoked)) {
                bool stopping = zp_stage_sig_stop || h->device_failed;
                unstarted(revoked, stopping, stopping ? "worker shutting down" : "revoked");
                retire(h, revoked);   /* at once, not after the compute before it */
            }
            continue;
        }
        if (h->ready && n < CHAIN_DEPTH && all_launched) {
            take = h->ready;
            h->ready = take->next;
            if (!h->ready) h->ready_tail = NULL;
            take->next = NULL;
            if (last) last->next = take; else h->running = take;
        } else if (h->running) {
            end = h->running;
        }
        pthread_mutex_unlock(&h->mu);
        if (take) {
            bool held = false;
            take->rt = h;
            if (!startable(h, take, &held)) {   /* handed back unstarted, at once */
                take->chain = ZP_STAGE_CHAIN_SKIP;
                retire(h, take);
                continue;
            }
            take->chain = ZP_STAGE_CHAIN_LAUNCHED;   /* (the work thread's alone) before the post */
            zp_log_ctx(take->a.job, take->a.part);
            int r = s->def->launch(s, take, launched_done, take);
            if (r > 0 && last)
                zp_log(ZP_LOG_DEBUG, "compute posted behind the running one (job %llu part %u): chained",
                       (unsigned long long)last->a.job, last->a.part);
            zp_log_ctx(0, -1);
            if (r < 0) {   /* failed before its compute: reported at once */
                take->chain = ZP_STAGE_CHAIN_SKIP;
                retire(h, take);
            } else if (r == 0) {
                take->chain = ZP_STAGE_CHAIN_NONE;
            }
            continue;
        }
        if (!end) break;
        bool held = true;
        /* one that work() runs whole: the checks again (a DEVICE failure may have come since) */
        if (end->chain == ZP_STAGE_CHAIN_LAUNCHED || (end->chain == ZP_STAGE_CHAIN_NONE && startable(h, end, &held))) {
            zp_log_ctx(end->a.job, end->a.part);
            s->def->work(s, end);
            zp_log_ctx(0, -1);
        }
        retire(h, end);
    }
}

static void *work_thread(void *arg)
{
    loop_t *h = arg;
    zp_stage_t *s = h->s;
    pthread_setname_np(pthread_self(), "zp-work");
    zp_rt_enter();
    if (h->chained) {
        work_chained(h);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&h->mu);
        /* without staging an epoch switch holds the work thread; with staging it holds the
         * staging thread, and the work thread drains what was staged from the old arena */
        while ((!h->ready || (h->hold && !h->staged_mode)) && !h->quit) pthread_cond_wait(&h->wcv, &h->mu);
        if (!h->ready || (h->hold && !h->staged_mode)) { pthread_mutex_unlock(&h->mu); break; }
        zp_stage_task_t *first = h->ready, *last = first;
        h->ready = first->next;
        first->next = NULL;
        /* same-zkey batching: consecutive staged tasks of one key, at most s->batch */
        unsigned n = 1;
        while (s->def->work_batch && n < s->batch && h->ready && !strcmp(h->ready->zkey, first->zkey)) {
            last->next = h->ready;
            last = h->ready;
            h->ready = h->ready->next;
            last->next = NULL;
            n++;
        }
        if (!h->ready) h->ready_tail = NULL;
        h->running = first;
        pthread_mutex_unlock(&h->mu);
        run_tasks(h, first);
    }
    return NULL;
}

/* ---------------------------------------------------------------- outbox */
/* hand queued frames to the socket, in order, until it would block */
static void out_flush(loop_t *h)
{
    while (h->out) {
        out_frame_t *o = h->out;
        if (zmq_send(h->p.sock, o->b, o->n, ZMQ_DONTWAIT) < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                if (!h->out_stalled) {
                    h->out_stalled = true;
                    h->out_stalls++;
                    zp_log(ZP_LOG_WARN, "the broker is not taking messages (high-water mark): results queued, "
                           "resending as soon as it takes them");
                }
                return;
            }
            /* the socket itself is gone (context terminated): nothing can be sent any more */
            zp_log(ZP_LOG_ERROR, "send: %s: %u queued frame(s) not delivered", zmq_strerror(errno), h->out_n);
            return;
        }
        h->out = o->next;
        if (!h->out) h->out_tail = NULL;
        h->out_n--;
        free(o);
    }
    if (h->out_stalled) {
        h->out_stalled = false;
        zp_log(ZP_LOG_INFO, "the broker takes messages again: every queued result delivered");
    }
}

/* queue buf (freed here) behind what is waiting, then flush */
static int out_send(loop_t *h, uint8_t *buf, size_t n)
{
    out_frame_t *o = malloc(sizeof *o + n);
    if (!o) {
        /* no memory for the queue: block on the socket instead of losing the frame */
        int rc = zmq_send(h->p.sock, buf, n, 0);
        free(buf);
        return rc < 0 ? zp_err_set(-errno, "send: %s", zmq_strerror(errno)) : 0;
    }
    o->next = NULL;
    o->n = n;
    memcpy(o->b, buf, n);
    free(buf);
    if (h->out_tail) h->out_tail->next = o; else h->out = o;
    h->out_tail = o;
    h->out_n++;
    out_flush(h);
    return 0;
}

/* wait up to ms for the outbox to drain (stop, exit) */
static void out_drain(loop_t *h, int ms)
{
    uint64_t end = zp_now_ns() + (uint64_t)ms * 1000000u;
    while (h->out && zp_now_ns() < end) {
        zmq_pollitem_t it = {h->p.sock, 0, ZMQ_POLLOUT, 0};
        if (zmq_poll(&it, 1, 50) > 0) out_flush(h);
    }
    if (h->out)
        zp_log(ZP_LOG_WARN, "%u result frame(s) not taken by the broker in %d ms; the slots keep the committed "
               "state for its recovery", h->out_n, ms);
}

/* ---------------------------------------------------------------- messages */
/* The HELLO this worker sends: identity, credits and the slot it is working on. (The one
 * place a HELLO is built: an identity token handed by the supervisor goes here.) */
static void hello_build(loop_t *h, zp_msg_hello_t *m)
{
    const zp_stage_t *s = h->s;
    *m = (zp_msg_hello_t){.role = s->def->role, .instance = s->instance, .incarnation = h->inc,
                          .pid = (uint32_t)getpid(), .capabilities = s->caps, .credits = s->credits,
                          .name = zp_str(s->name)};
    zp_identity_hello(m);   /* the supervisor's token (proto/identity.h) */
    pthread_mutex_lock(&h->mu);
    for (zp_stage_task_t *t = h->running; t && m->n_held < ZP_MSG_MAX_HELD; t = t->next)
        m->held[m->n_held++] = (zp_held_t){t->a.slot, t->a.gen};
    pthread_mutex_unlock(&h->mu);
}

/* the keys this process holds, for HELLO / HEARTBEAT (doc/keys.md): views into *ki (free it
 * with zp_keycache_list_free after encoding) */
static void keys_build(const zp_stage_t *s, zp_msg_keys_t *k, zp_keycache_info_t **ki, size_t *kn)
{
    zp_keycache_stats_t st;
    memset(k, 0, sizeof *k);
    *ki = NULL;
    *kn = 0;
    if (!s->kc || zp_keycache_list(s->kc, ki, kn) < 0) return;
    zp_keycache_stats(s->kc, &st);
    k->present = true;
    k->loads = st.loads;
    k->evictions = st.evictions;
    k->budget = st.budget;
    for (size_t i = 0; i < *kn && k->n < ZP_MSG_MAX_KEYS; i++)
        if ((*ki)[i].path[0] == '/' && strlen((*ki)[i].path) <= ZP_MSG_PATH_MAX)
            k->k[k->n++] = (zp_msg_key_t){zp_str((*ki)[i].path), (*ki)[i].bytes, (*ki)[i].tier & ZP_MSG_KEY_TIERS};
}

static int send_hello(loop_t *h)
{
    zp_msg_hello_t m;
    hello_build(h, &m);
    zp_keycache_info_t *ki;
    size_t kn;
    keys_build(h->s, &m.keys, &ki, &kn);
    uint8_t *b; size_t n;
    int rc = zp_msg_hello_encode(&b, &n, &m);
    zp_keycache_list_free(ki, kn);
    return rc < 0 ? rc : out_send(h, b, n);
}

static void report(loop_t *h, zp_stage_task_t *t)
{
    uint8_t *b = NULL; size_t n = 0;
    int rc;
    if (t->ok) {
        zp_msg_done_t m = {.slot = t->a.slot, .gen = t->a.gen, .new_gen = t->new_gen, .job = t->a.job,
                           .part = t->a.part, .t_start = t->t_start, .t_end = t->t_end,
                           .proof_json = zp_str(t->proof_json), .public_json = zp_str(t->public_json),
                           .proof_bin = t->proof_bin, .proof_bin_len = t->proof_bin_len};
        memcpy(m.dt, t->dt, sizeof m.dt);
        memcpy(m.tm, t->tm, sizeof m.tm);
        rc = zp_msg_done_encode(&b, &n, &m);
    } else {
        zp_msg_fail_t m = {.slot = t->a.slot, .gen = t->a.gen, .job = t->a.job, .part = t->a.part,
                           .retryable = t->fail_class != ZP_FAIL_INPUT, .code = t->code < 0 ? t->code : ZP_EPROTO,
                           .payload_bad = t->payload_bad, .t_start = t->t_start, .t_end = t->t_end,
                           .message = zp_str(t->msg), .unstarted = t->unstarted,
                           .stopping = t->stopping || t->fail_class == ZP_FAIL_DEVICE,
                           .fail_class = t->fail_class};
        rc = zp_msg_fail_encode(&b, &n, &m);
        if (t->fail_class == ZP_FAIL_DEVICE && !h->device_failed) {
            h->device_failed = true;
            zp_log(ZP_LOG_ERROR, "job %llu part %u: device failure (%s): exiting for a clean restart",
                   (unsigned long long)t->a.job, t->a.part, t->msg);
        }
    }
    if (rc == 0) rc = out_send(h, b, n);
    if (rc < 0) zp_log(ZP_LOG_ERROR, "job %llu part %u: cannot report to the broker: %s %s",
                       (unsigned long long)t->a.job, t->a.part, zp_strerror(rc), zp_err_msg());
    else zp_log(ZP_LOG_DEBUG, "job %llu part %u slot %u: %s%s%s%s", (unsigned long long)t->a.job, t->a.part,
                t->a.slot, t->ok ? "DONE" : "FAIL ", t->ok ? "" : zp_fail_class_name(t->fail_class),
                t->ok ? "" : ": ", t->ok ? "" : t->msg);
    if (h->held) h->held--;
}

/* process title and, when it changed, STATUS= for the service manager */
static void title(loop_t *h, const char *state)
{
    char buf[200];
    snprintf(buf, sizeof buf, "%s #%u: %s (%u held)", zp_role_name(h->s->def->role), h->s->instance, state, h->held);
    setproctitle("%s", buf);
    if (strcmp(buf, h->status)) {
        memcpy(h->status, buf, sizeof buf);
        zp_notifyf("STATUS=%s", buf);
    }
}

static void on_assign(loop_t *h, const zp_frame_t *f, bool stopping)
{
    zp_msg_assign_t a;
    if (zp_msg_assign_decode(&a, f) < 0 || a.stage != h->s->def->role) {
        zp_log(ZP_LOG_WARN, "bad ASSIGN dropped: %s", zp_err_msg());
        return;
    }
    h->held++;
    if (stopping) {
        zp_stage_task_t t = {.a = a};
        unstarted(&t, true, "worker shutting down");
        t.t_start = t.t_end = zp_now_ns();
        report(h, &t);
        return;
    }
    zp_stage_task_t *t = calloc(1, sizeof *t);
    if (!t || !(t->zkey = zp_str_dup(a.zkey)) || !(t->r1cs = zp_str_dup(a.r1cs)) || !(t->wtns = zp_str_dup(a.wtns)) ||
        !(t->wasm = zp_str_dup(a.wasm))) {
        if (t) task_free(t);
        zp_stage_task_t tmp = {.a = a, .code = -ENOMEM, .fail_class = ZP_FAIL_TRANSIENT};
        snprintf(tmp.msg, sizeof tmp.msg, "out of memory");
        report(h, &tmp);
        return;
    }
    t->a = a;
    t->a.zkey = zp_str(t->zkey); t->a.r1cs = zp_str(t->r1cs); t->a.wtns = zp_str(t->wtns); t->a.wasm = zp_str(t->wasm);
    pthread_mutex_lock(&h->mu);
    if (h->s->def->arena_first && a.epoch != h->epoch && !h->hold) {
        h->hold = true;   /* a new epoch: its arena is opened (registered) by the loop first */
        h->want_epoch = a.epoch;
    }
    if (!h->staged_mode) {
        push_ready(h, t);
    } else {
        if (h->todo_tail) h->todo_tail->next = t; else h->todo = t;
        h->todo_tail = t;
    }
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    char s[120];
    snprintf(s, sizeof s, "job %llu part %u slot %u", (unsigned long long)a.job, a.part, a.slot);
    title(h, s);
}

/* drop queued tasks: matching (slot, gen) only, or all (all = true). Reports FAIL (unstarted)
 * for each when report_them (REVOKE / stop), silently for RESET (the broker forgot them).
 * The running task is marked revoked (it may stop before work() starts) only when
 * revoke_running: not on RESET, where the HELLO that follows lists it at its generation and
 * a restarted broker adopts it (if the broker requeued it instead, the slot's generation moved
 * and the task's commit is refused by the fence). */
static void drop_queued(loop_t *h, bool all, uint32_t slot, uint64_t gen, bool report_them, bool revoke_running,
                        const char *why)
{
    bool stopping = report_them && all;
    zp_stage_task_t *drop = NULL;
    pthread_mutex_lock(&h->mu);
    /* the assigned and the staged (ready) queues; a staged task's buffer set is freed here */
    for (int q = 0; q < 2; q++) {
        zp_stage_task_t **head = q ? &h->ready : &h->todo, **tail = q ? &h->ready_tail : &h->todo_tail;
        zp_stage_task_t *keep = NULL, *keep_tail = NULL;
        for (zp_stage_task_t *t = *head, *nx; t; t = nx) {
            nx = t->next;
            t->next = NULL;
            if ((all || (t->a.slot == slot && t->a.gen == gen)) && q && t == h->verifying) {
                /* its deferred check is running: the staging thread finishes it after */
                t->unqueued = true;
                if (report_them) { t->revoked = 1; unstarted(t, stopping, why); }
                else t->dropped = 1;
            } else if (all || (t->a.slot == slot && t->a.gen == gen)) {
                if (q && h->staged_mode) h->sets_busy &= ~(UINT64_C(1) << t->set);
                t->next = drop; drop = t;
            } else { if (keep_tail) keep_tail->next = t; else keep = t; keep_tail = t; }
        }
        *head = keep; *tail = keep_tail;
    }
    zp_stage_task_t *st = h->staging;   /* being staged: discarded (RESET) or handed back (REVOKE, stop) after */
    if (st && (all || (st->a.slot == slot && st->a.gen == gen))) {
        if (report_them) st->revoked = 1;
        else st->dropped = 1;
    }
    for (zp_stage_task_t *t = h->running; revoke_running && t; t = t->next)
        if (all || (t->a.slot == slot && t->a.gen == gen)) t->revoked = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_cond_signal(&h->wcv);   /* chained: a revoked launched task may be taken back */
    pthread_mutex_unlock(&h->mu);
    for (zp_stage_task_t *t = drop, *nx; t; t = nx) {
        nx = t->next;
        if (t->staged && h->s->def->unstage) h->s->def->unstage(h->s, t);
        t->staged = false;
        if (report_them) {
            unstarted(t, stopping, why);
            t->t_start = t->t_end = zp_now_ns();
            report(h, t);
        } else if (h->held) h->held--;
        task_free(t);
    }
}

/* a held new epoch and an idle work thread: open that epoch's arena here (arena_opened runs on
 * this thread; the work thread is parked, so the backend sees one caller), then release */
static void epoch_switch(loop_t *h)
{
    pthread_mutex_lock(&h->mu);
    bool go = h->hold && !h->running && !h->staging && !h->ready && !h->verifying;
    pthread_mutex_unlock(&h->mu);
    if (!go) return;
    uint64_t t0 = zp_now_ns();
    int rc = zp_stage_arena(h->s, h->want_epoch);
    if (rc < 0)   /* the tasks then fail in work() (TRANSIENT "arena") as before */
        zp_log(ZP_LOG_WARN, "new epoch %016llx: %s %s", (unsigned long long)h->want_epoch, zp_strerror(rc), zp_err_msg());
    else
        zp_log(ZP_LOG_INFO, "new epoch %016llx: arena %s opened by the loop before its tasks (%.1f ms)",
               (unsigned long long)h->want_epoch, h->s->arena_name, (zp_now_ns() - t0) / 1e6);
    pthread_mutex_lock(&h->mu);
    h->epoch = h->want_epoch;
    h->hold = false;
    pthread_cond_broadcast(&h->cv);
    pthread_cond_signal(&h->wcv);
    pthread_mutex_unlock(&h->mu);
}

/* report what the work thread finished, in completion order */
static void take_done(loop_t *h)
{
    uint64_t v;
    if (read(h->efd, &v, sizeof v) < 0) { /* spurious wake */ }
    pthread_mutex_lock(&h->mu);
    zp_stage_task_t *d = h->done;
    h->done = NULL;
    pthread_mutex_unlock(&h->mu);
    zp_stage_task_t *rev = NULL;
    while (d) { zp_stage_task_t *nx = d->next; d->next = rev; rev = d; d = nx; }
    for (zp_stage_task_t *t = rev, *nx; t; t = nx) {
        nx = t->next;
        if (t->dropped) { if (h->held) h->held--; }   /* RESET while staging: the broker forgot it */
        else report(h, t);
        task_free(t);
    }
    title(h, h->held ? "busy" : "idle");
}

/* the running task's lease deadline (0: none or nothing running) */
static uint64_t running_deadline(loop_t *h, zp_msg_assign_t *a)
{
    uint64_t dl = 0;
    pthread_mutex_lock(&h->mu);
    /* chained: the oldest only (the one computing; the one posted behind it has not begun) */
    for (zp_stage_task_t *t = h->running; t; t = h->chained ? NULL : t->next)
        if (t->a.lease_deadline && (!dl || t->a.lease_deadline < dl)) { dl = t->a.lease_deadline; *a = t->a; }
    zp_stage_task_t *st = h->staging;   /* a staging thread stuck (a zkey on a stuck mount) is hung too */
    if (st && st->a.lease_deadline && (!dl || st->a.lease_deadline < dl)) { dl = st->a.lease_deadline; *a = st->a; }
    pthread_mutex_unlock(&h->mu);
    return dl;
}

/* the work thread overran its lease: it is hung (a device that stopped answering, a path on a
 * stuck mount) and cannot be stopped safely; exit for the supervisor to restart us */
static void lease_expired(loop_t *h, const zp_msg_assign_t *a, uint64_t now)
{
    zp_log(ZP_LOG_ERROR, "job %llu part %u slot %u: the work thread is %.1f s past the task's lease: taken as hung; "
           "exiting (status %d) for a restart; the broker requeues the partition",
           (unsigned long long)a->job, a->part, a->slot, (now - a->lease_deadline) / 1e9, ZP_STAGE_EXIT_LEASE);
    zp_notifyf("STATUS=lease expired on job %llu part %u: restarting", (unsigned long long)a->job, a->part);
    out_drain(h, 1000);   /* results of tasks that did finish */
    int linger = 1000;
    zmq_setsockopt(h->p.sock, ZMQ_LINGER, &linger, sizeof linger);
    zp_peer_close(&h->p);
    fflush(NULL);
    _exit(ZP_STAGE_EXIT_LEASE);
}

/* one batch of frames from the broker */
static void on_frames(loop_t *h, bool stopping, bool *ready, uint64_t *last_rx)
{
    zp_frame_t f;
    for (int k = 0; k < 64; k++) {
        int r = zp_peer_recv(&h->p, &f, 0, ZP_CMDS_TO_WORKER | (1ull << ZP_CMD_ERROR));
        if (r == -EAGAIN || r == -EINTR) break;
        *last_rx = zp_now_ns();
        if (r == 0 && f.cmd == ZP_CMD_ERROR) {
            zp_msg_error_t er;
            if (zp_msg_error_decode(&er, &f) < 0) { zp_log(ZP_LOG_WARN, "malformed ERROR from the broker: %s", zp_err_msg()); continue; }
            if (!*ready) {   /* the answer to our HELLO */
                zp_log(ZP_LOG_ERROR, "the broker refused this %s #%u: %.*s (%s): exiting with status %d",
                       zp_role_name(h->s->def->role), h->s->instance, (int)er.message.len, er.message.p,
                       zp_strerror(er.code), ZP_STAGE_EXIT_REFUSED);
                h->refused = true;
                return;
            }
            zp_log(ZP_LOG_WARN, "the broker answered with an error: %.*s (%s)", (int)er.message.len, er.message.p,
                   zp_strerror(er.code));
            continue;
        }
        if (!*ready) {
            /* the broker answered after our HELLO: connected and registered */
            *ready = true;
            zp_notifyf("READY=1\nSTATUS=%s", h->status);
            zp_log(ZP_LOG_DEBUG, "registered with the broker");
        }
        if (r < 0) { zp_log(ZP_LOG_WARN, "malformed frame from the broker dropped: %s", zp_err_msg()); continue; }
        if (f.cmd == ZP_CMD_ASSIGN) {
            on_assign(h, &f, stopping);
        } else if (f.cmd == ZP_CMD_REVOKE) {
            zp_msg_revoke_t rv;
            if (zp_msg_revoke_decode(&rv, &f) == 0) drop_queued(h, false, rv.slot, rv.gen, true, true, "revoked");
        } else if (f.cmd == ZP_CMD_RESET) {
            zp_msg_reset_t rs;
            zp_msg_reset_decode(&rs, &f);
            zp_log(ZP_LOG_WARN, "broker RESET (%.*s): dropping queued work, keeping the running task, "
                   "saying HELLO again", (int)rs.reason.len, rs.reason.p);
            drop_queued(h, true, 0, 0, false, false, "reset");
            send_hello(h);
        }
        /* HEARTBEAT, ACK: liveness only */
    }
}

int zp_stage_loop(zp_stage_t *s)
{
    static loop_t H;   /* static: a hung work thread may still reach it while the process exits */
    loop_t *h = &H;
    *h = (loop_t){.s = s, .inc = zp_incarnation_new(), .epoch = s->arena ? zp_shm_epoch(s->arena) : 0,
                  .staged_mode = s->def->stage != NULL,
                  .chained = s->def->stage && s->def->launch && !(s->def->work_batch && s->batch > 1)};
    s->stage_sets = s->credits < 64 ? s->credits : 64;
    s->loop = h;
    int hb = (int)s->hb_ms;
    pthread_t th, sth;
    int rc;

    zp_rt_enter();   /* before the socket: libzmq's I/O thread gets the same policy (proto/peer.c) */
    if ((rc = zp_peer_open(&h->p, s->endpoint, ZP_FRAME_MAX_DEFAULT)) < 0) { zp_rt_leave(); return rc; }
    h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (h->efd < 0) { rc = zp_err_set(-errno, "eventfd: %s", strerror(errno)); goto out_peer; }
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    pthread_cond_init(&h->wcv, NULL);
    if (h->staged_mode && s->def->deferred && !(h->verifier = zp_runner_new("zp-verify", false))) {
        rc = zp_err_set(-ENOMEM, "cannot start the deferred check's thread");
        goto out_efd;
    }
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM); sigaddset(&set, SIGINT); sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, &old);   /* the work thread never takes the stop signals */
    rc = pthread_create(&th, NULL, work_thread, h);
    if (rc == 0 && h->staged_mode && (rc = pthread_create(&sth, NULL, staging_thread, h)) != 0) {
        pthread_mutex_lock(&h->mu);
        h->quit = true;
        pthread_cond_broadcast(&h->cv);
        pthread_cond_signal(&h->wcv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(th, NULL);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) { rc = zp_err_set(-rc, "pthread_create failed"); goto out_efd; }
    zp_log(ZP_LOG_INFO, "%s #%u (%s) connecting to %s, %u credit(s)%s", zp_role_name(s->def->role), s->instance,
           s->name, s->endpoint, s->credits, h->staged_mode ? ", a staging thread (double buffering)" : "");
    send_hello(h);
    title(h, "idle");

    uint64_t next_hb = zp_now_ns() + (uint64_t)hb * 1000000u, last_rx = zp_now_ns();
    bool stopping = false, ready = false;
    zp_watchdog_t wd;
    zp_watchdog_init(&wd);
    int fatal = 0;
    for (;;) {
        if ((zp_stage_sig_stop || h->device_failed) && !stopping) {
            stopping = true;
            zp_log(ZP_LOG_INFO, "stopping: handing back queued work, finishing the running task");
            zp_notify("STOPPING=1");
            drop_queued(h, true, 0, 0, true, true, "worker shutting down");
            title(h, "stopping");
        }
        if (zp_stage_sig_hup) {
            zp_stage_sig_hup = 0;
            zp_log(ZP_LOG_INFO, "SIGHUP ignored (nothing to reload; SIGTERM stops)");
        }
        if (stopping) {
            pthread_mutex_lock(&h->mu);
            bool idle = !h->running && !h->todo && !h->done && !h->staging && !h->ready && !h->verifying;
            pthread_mutex_unlock(&h->mu);
            if (idle) break;
        }
        uint64_t now = zp_now_ns();
        zp_msg_assign_t la = {0};
        uint64_t dl = running_deadline(h, &la);
        if (dl && now >= dl) lease_expired(h, &la, now);
        zmq_pollitem_t it[2] = {{h->p.sock, 0, (short)(ZMQ_POLLIN | (h->out ? ZMQ_POLLOUT : 0)), 0},
                                {NULL, h->efd, ZMQ_POLLIN, 0}};
        int to = next_hb > now ? (int)((next_hb - now) / 1000000u) + 1 : 0;
        if (to > hb / 2) to = hb / 2;
        if (dl && (int64_t)((dl - now) / 1000000u) + 1 < to) to = (int)((dl - now) / 1000000u) + 1;
        to = zp_watchdog_poll_ms(&wd, now, to);
        rc = zmq_poll(it, 2, to);
        if (rc < 0 && errno != EINTR) { fatal = zp_err_set(-errno, "zmq_poll: %s", zmq_strerror(errno)); break; }
        if (rc > 0 && (it[0].revents & ZMQ_POLLOUT)) out_flush(h);
        if (rc > 0 && (it[1].revents & ZMQ_POLLIN)) take_done(h);
        if (rc > 0 && (it[0].revents & ZMQ_POLLIN)) on_frames(h, stopping, &ready, &last_rx);
        if (h->refused) break;
        if (h->hold) epoch_switch(h);
        now = zp_now_ns();
        zp_watchdog_tick(&wd, now);
        if (now >= next_hb) {
            next_hb = now + (uint64_t)hb * 1000000u;
            if (!h->out) {   /* a broker that is not reading gets no heartbeats queued behind results */
                zp_msg_heartbeat_t m = {.incarnation = h->inc, .busy = h->held};
                zp_keycache_info_t *ki;
                size_t kn;
                keys_build(h->s, &m.keys, &ki, &kn);   /* keys: which keys this worker holds */
                uint8_t *b; size_t n;
                if (zp_msg_heartbeat_encode(&b, &n, &m) == 0) zp_peer_send(&h->p, b, n);
                zp_keycache_list_free(ki, kn);
                /* no word from the broker for a long time: it may have restarted; announce again */
                if (now - last_rx > (uint64_t)hb * 6000000u) {
                    send_hello(h);
                    last_rx = now;
                }
            }
        }
    }
    if (stopping && !fatal && !h->refused) on_frames(h, true, &ready, &last_rx);   /* hand back ASSIGNs already here */
    out_drain(h, OUTBOX_DRAIN_MS);
    pthread_mutex_lock(&h->mu);
    h->quit = true;
    pthread_cond_broadcast(&h->cv);
    pthread_cond_signal(&h->wcv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(th, NULL);
    if (h->staged_mode) pthread_join(sth, NULL);
    zp_runner_destroy(&h->verifier);
    rc = fatal < 0 ? fatal : h->refused ? ZP_STAGE_EXIT_REFUSED : h->device_failed ? ZP_STAGE_EXIT_DEVICE : 0;
    zp_log(ZP_LOG_INFO, "stopped%s", h->refused ? ": refused by the broker" : h->device_failed ? " after a device failure" : "");
out_efd:
    zp_runner_destroy(&h->verifier);
    close(h->efd);
out_peer:
    while (h->out) { out_frame_t *o = h->out; h->out = o->next; free(o); }
    zp_peer_close(&h->p);
    zp_rt_leave();   /* fini (main thread) unregisters and frees: O(n), at the normal policy */
    return rc;
}
