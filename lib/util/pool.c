/* pool.c - a fixed pthread pool running one function on every thread (SPMD), with the
 * caller as thread 0. Generation counter + condvars; no allocation per run.
 * Invariant: at most one zp_pool_run in flight per pool. Also the runner (zp_runner_*): one
 * thread running posted calls one after another, in order, for callers that sleep or go on. Tests: tests/test_util.c */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

struct zp_pool {
    unsigned n;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;
    unsigned pending;
    int stop;
    void (*fn)(void *, unsigned, unsigned);
    void *arg;
};

typedef struct { zp_pool_t *p; unsigned tid; } pool_arg_t;

static void *pool_main(void *v)
{
    pool_arg_t a = *(pool_arg_t *)v;
    free(v);
    zp_pool_t *p = a.p;
    unsigned long seen = 0;
    zp_rt_leave();   /* a creator's short slice is inherited whatever the attributes (lib/util/rt.c) */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->stop) pthread_cond_wait(&p->go, &p->mu);
        if (p->stop) break;
        seen = p->gen;
        void (*fn)(void *, unsigned, unsigned) = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(arg, a.tid, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

zp_pool_t *zp_pool_new(unsigned nthreads)
{
    if (nthreads == 0) { /* the CPUs we may run on (taskset, cgroup cpusets), not all online ones */
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
            nthreads = (unsigned)CPU_COUNT(&set);
        } else {
            long c = sysconf(_SC_NPROCESSORS_ONLN);
            nthreads = c > 0 ? (unsigned)c : 1;
        }
    }
    zp_pool_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->th = calloc(nthreads, sizeof *p->th);
    if (!p->th) { free(p); return NULL; }
    /* explicit normal policy: a pool made by a real-time thread (zp_rt_enter) must not inherit it */
    pthread_attr_t attr;
    bool attr_init = pthread_attr_init(&attr) == 0, attr_ok = attr_init;
    if (attr_ok) {
        struct sched_param sp = {.sched_priority = 0};
        attr_ok = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
                  pthread_attr_setschedpolicy(&attr, SCHED_OTHER) == 0 && pthread_attr_setschedparam(&attr, &sp) == 0;
    }
    for (unsigned i = 1; i < nthreads; i++) {
        pool_arg_t *a = malloc(sizeof *a);
        if (!a) { p->n = i; break; }
        a->p = p;
        a->tid = i;
        if (pthread_create(&p->th[i], attr_ok ? &attr : NULL, pool_main, a) != 0) { free(a); p->n = i; break; }
    }
    if (attr_init) pthread_attr_destroy(&attr);
    return p;
}

void zp_pool_destroy(zp_pool_t **pp)
{
    if (!pp || !*pp) return;
    zp_pool_t *p = *pp;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 1; i < p->n; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
    *pp = NULL;
}

unsigned zp_pool_size(const zp_pool_t *p) { return p ? p->n : 1; }

void zp_pool_run(zp_pool_t *p, void (*fn)(void *, unsigned, unsigned), void *arg)
{
    if (!p || p->n == 1) { fn(arg, 0, 1); return; }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->pending = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, p->n);
    pthread_mutex_lock(&p->mu);
    while (p->pending) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void zp_split(size_t total, unsigned tid, unsigned n, size_t *lo, size_t *hi)
{
    size_t q = total / n, r = total % n;
    *lo = tid * q + (tid < r ? tid : r);
    *hi = *lo + q + (tid < r ? 1 : 0);
}

typedef struct {
    size_t n;
    bool (*bad)(const void *, size_t);
    const void *arg;
    _Atomic size_t first;
} first_job_t;

static void first_run(void *a, unsigned tid, unsigned nt)
{
    first_job_t *j = a;
    size_t lo, hi;
    zp_split(j->n, tid, nt, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (j->bad(j->arg, i)) {   /* a range's first hit is its smallest: lower the minimum */
            size_t cur = atomic_load(&j->first);
            while (i < cur && !atomic_compare_exchange_weak(&j->first, &cur, i)) {
            }
            return;
        }
}

size_t zp_pool_first(zp_pool_t *p, size_t n, bool (*bad)(const void *arg, size_t i), const void *arg)
{
    first_job_t j = {.n = n, .bad = bad, .arg = arg};
    atomic_init(&j.first, n);
    zp_pool_run(p, first_run, &j);
    return atomic_load(&j.first);
}

struct zp_runner {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    zp_run_t *head, *tail;     /* posted, not yet begun, in order */
    _Atomic bool busy;         /* a call's fn is running (zp_runner_busy) */
    _Atomic uint64_t begun;    /* calls whose fn began (zp_runner_begun) */
    bool stop, tier;
    char name[16];
};

/* The turnaround between two calls that were queued back to back (the second posted before
 * the first ended): a device would go on at once, so a slow one is logged with its parts. Only
 * the clock (vDSO) is read in between: a system call's return is where a pending reschedule
 * takes the thread off its core. */
#define ZP_RUNNER_SLOW_TURN_NS 1000000u   /* 1 ms: issue 10's bound on the gap between two computes */
typedef struct {
    uint64_t end, signaled, called;   /* the call's end, its waiters woken, its done callback returned */
    uint64_t job;
    int64_t part;
} turn_t;

static void runner_turnaround(const zp_runner_t *r, const turn_t *tu, uint64_t next_start)
{
    uint64_t total = next_start - tu->end;
    if (total < ZP_RUNNER_SLOW_TURN_NS) return;
    zp_log_ctx(tu->job, tu->part);
    zp_log(ZP_LOG_INFO, "%s: the next queued call began %.3f ms after this one ended (waking waiters %.3f ms, "
           "done callback %.3f ms, taking the next %.3f ms)",
           r->name, (double)total / 1e6, (double)(tu->signaled - tu->end) / 1e6,
           (double)(tu->called - tu->signaled) / 1e6, (double)(next_start - tu->called) / 1e6);
}

static _Thread_local bool runner_next_queued;   /* zp_runner_next_queued, in a done callback */

bool zp_runner_next_queued(void) { return runner_next_queued; }

bool zp_runner_busy(zp_runner_t *r) { return r && atomic_load_explicit(&r->busy, memory_order_relaxed); }
uint64_t zp_runner_begun(zp_runner_t *r) { return r ? atomic_load_explicit(&r->begun, memory_order_relaxed) : 0; }

static void *runner_main(void *v)
{
    zp_runner_t *r = v;
    zp_rt_leave();   /* as a pool thread: the creator's slice or policy is not inherited */
    pthread_setname_np(pthread_self(), r->name);
    turn_t tu = {0};
    bool queued = false;   /* the call that began next was posted before the last one ended */
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->head && !r->stop) {
            queued = false;
            pthread_cond_wait(&r->go, &r->mu);
        }
        if (!r->head) break;   /* stop: what was posted runs first */
        zp_run_t *c = r->head;
        r->head = c->next_;
        if (!r->head) r->tail = NULL;
        pthread_mutex_unlock(&r->mu);
        if (r->tier && !zp_rt_active()) zp_rt_enter();   /* once set up (a no-op while it is not) */
        uint64_t t0 = zp_now_ns();
        if (queued) runner_turnaround(r, &tu, t0);
        zp_log_ctx(c->job_, c->part_);
        zp_err_clear();
        atomic_store_explicit(&r->busy, true, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->begun, 1, memory_order_relaxed);
        int rc = c->fn(c->arg);
        atomic_store_explicit(&r->busy, false, memory_order_relaxed);
        uint64_t t1 = zp_now_ns();
        void (*done)(void *) = c->done;
        void *done_arg = c->done_arg;
        tu.end = t1;
        tu.job = c->job_;
        tu.part = c->part_;
        pthread_mutex_lock(&r->mu);
        queued = r->head != NULL;
        snprintf(c->err_, sizeof c->err_, "%s", zp_err_msg());
        c->rc = rc;
        c->t_run = t0;
        c->t_done = t1;
        c->finished_ = true;
        pthread_cond_broadcast(&r->done);
        pthread_mutex_unlock(&r->mu);
        tu.signaled = zp_now_ns();
        runner_next_queued = queued;
        if (done) done(done_arg);   /* c may be gone once finished: only the copies are used */
        runner_next_queued = false;
        tu.called = zp_now_ns();
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

zp_runner_t *zp_runner_new(const char *name, bool tier)
{
    zp_runner_t *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->tier = tier;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "zp-runner");
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->go, NULL);
    pthread_cond_init(&r->done, NULL);
    if (pthread_create(&r->th, NULL, runner_main, r) != 0) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->go);
        pthread_cond_destroy(&r->done);
        free(r);
        return NULL;
    }
    return r;
}

void zp_runner_destroy(zp_runner_t **rp)
{
    if (!rp || !*rp) return;
    zp_runner_t *r = *rp;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_signal(&r->go);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->th, NULL);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->go);
    pthread_cond_destroy(&r->done);
    free(r);
    *rp = NULL;
}

void zp_runner_post(zp_runner_t *r, zp_run_t *c)
{
    zp_log_ctx_get(&c->job_, &c->part_);
    c->next_ = NULL;
    c->finished_ = false;
    pthread_mutex_lock(&r->mu);
    if (r->tail) r->tail->next_ = c; else r->head = c;
    r->tail = c;
    pthread_cond_signal(&r->go);
    pthread_mutex_unlock(&r->mu);
}

bool zp_runner_cancel(zp_runner_t *r, zp_run_t *c)
{
    bool found = false;
    pthread_mutex_lock(&r->mu);
    for (zp_run_t **pp = &r->head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next_)
        if (*pp == c) {
            *pp = c->next_;
            if (r->tail == c) r->tail = prev;
            found = true;
            break;
        }
    pthread_mutex_unlock(&r->mu);
    return found;
}

int zp_runner_wait(zp_runner_t *r, zp_run_t *c)
{
    pthread_mutex_lock(&r->mu);
    while (!c->finished_) pthread_cond_wait(&r->done, &r->mu);
    int rc = c->rc;
    zp_err_clear();
    if (c->err_[0]) zp_err_set(rc, "%s", c->err_);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int zp_runner_call(zp_runner_t *r, int (*fn)(void *), void *arg, uint64_t *t_run, uint64_t *t_done)
{
    zp_run_t c = {.fn = fn, .arg = arg};
    zp_runner_post(r, &c);
    int rc = zp_runner_wait(r, &c);
    if (t_run) *t_run = c.t_run;
    if (t_done) *t_done = c.t_done;
    return rc;
}
