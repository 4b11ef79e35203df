/* metrics.c - the broker's observability bookkeeping: per-worker idle time split by cause,
 * stage / queue-wait / handoff histograms, partition outcome counters, the Prometheus text
 * exposition (METRICS command, `zkpipe metrics`; over HTTP as GET /metrics by http.c, on
 * libmicrohttpd: `--metrics-listen ADDR:PORT` or $ZP_METRICS_LISTEN, off by default).
 *
 * Idle split. Each worker has a ring of BRK_IDLE_BUCKETS one-second buckets (monotonic
 * seconds) holding nanoseconds per cause. brk_mx_tick() (once per broker loop turn)
 * charges the time since the previous tick to the state seen at that tick:
 *   busy       it holds a live assignment (provisional: it may not have started yet)
 *   starved    no partition is queued for its stage (for the GPU stage: no READY slot)
 *   no_credit  work is queued but all its credits are held (orphans, revoked work)
 *   handoff    work is queued and it has credit, but nothing was dispatched yet
 * When a DONE/FAIL reports the task's own [t_start, t_end], the provisional busy time of the
 * current run before t_start (since the run began or the previous report's t_end) was
 * dispatch / transfer latency: it moves from busy to handoff; so does the tail between the
 * last t_end and the end of the run. The parts therefore sum exactly to the idle time.
 * Time charged between a state change in a handler and the next tick goes to the old state
 * (error: one loop turn).
 *
 * Stage rates (issue 10 item 8): the last BRK_RATE_RING successful task times of each stage
 * ([t_start, t_end] as the worker reported them). A stage's rate is its live workers (alive,
 * in rotation) divided by the time per task over a recent window (the union of each worker's
 * task intervals over the tasks: staged tasks overlap their predecessor, a batch's tasks share
 * one interval): the reports of the last
 * BRK_RATE_WINDOW_S seconds, or the last BRK_RATE_MIN reports when fewer came in that window
 * (a 2^20 GPU task on the CPU backend takes minutes). The limiting stage is the one with the
 * lowest rate while there is work (queued or running); none when nothing is queued or
 * running; before that, a stage with no live worker limits (rate 0), and so does a stage
 * that has work but has not finished a task yet (the most upstream one: all after it wait).
 *
 * HTTP request counters (served / rejected) are kept here, counted by http.c.
 * Tests: tests/ipc/metrics.sh (+ metrics_check.py). */
#include <stddef.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"

#define NS 1000000000ull

/* ---------------------------------------------------------------- histograms */
static const double k_stage_le[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
static const double k_lat_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30};
#define HB_N 15
typedef struct { uint64_t cnt[HB_N + 1]; uint64_t n; double sum; } hist_t;

enum { RES_DONE = 0, RES_FAILED = 1, RES_STALE = 2, RES_N = 3 };
static const char *k_res_name[RES_N] = {"done", "failed", "stale"};
static const char *k_cause_name[BRK_IDLE_NCAUSE] = {"busy", "starved", "no_credit", "handoff"};

#define BRK_RATE_RING 256
#define BRK_RATE_WINDOW_S 600
#define BRK_RATE_MIN 8
typedef struct { uint64_t t_end, s, e; unsigned worker; } rate_ent_t;   /* t_end: when reported */

struct brk_mx {
    rate_ent_t rate[ZP_NROLES][BRK_RATE_RING];   /* recent successful task times per stage */
    unsigned rate_head[ZP_NROLES], rate_n[ZP_NROLES];
    hist_t stage[ZP_NROLES], queue_wait[ZP_NROLES], handoff[ZP_NROLES];
    uint64_t parts[ZP_NROLES][RES_N];
    uint64_t dt_ns[ZP_NROLES][ZP_DT_N];
    uint64_t http_requests, http_rejected;
};

static void hist_add(hist_t *h, const double *le, double v)
{
    unsigned i = 0;
    while (i < HB_N && v > le[i]) i++;
    h->cnt[i]++;
    h->n++;
    h->sum += v;
}

/* ---------------------------------------------------------------- idle buckets */
static brk_idle_bucket_t *bucket(brk_worker_t *w, uint64_t sec)
{
    brk_idle_bucket_t *bk = &w->idle.b[sec % BRK_IDLE_BUCKETS];
    if (bk->sec != sec) { memset(bk, 0, sizeof *bk); bk->sec = sec; }
    return bk;
}

/* charge [s, e) to cause c */
static void charge(brk_worker_t *w, uint64_t s, uint64_t e, unsigned c)
{
    if (e > s && e - s > (uint64_t)BRK_IDLE_BUCKETS * NS) s = e - (uint64_t)BRK_IDLE_BUCKETS * NS;
    while (s < e) {
        uint64_t sec = s / NS, end = (sec + 1) * NS;
        if (end > e) end = e;
        bucket(w, sec)->ns[c] += end - s;
        s = end;
    }
}

/* move what [s, e) charged to cause `from` over to cause `to` (only what is still in the ring) */
static void reclass(brk_worker_t *w, uint64_t s, uint64_t e, unsigned from, unsigned to)
{
    if (e > s && e - s > (uint64_t)BRK_IDLE_BUCKETS * NS) s = e - (uint64_t)BRK_IDLE_BUCKETS * NS;
    while (s < e) {
        uint64_t sec = s / NS, end = (sec + 1) * NS;
        if (end > e) end = e;
        brk_idle_bucket_t *bk = &w->idle.b[sec % BRK_IDLE_BUCKETS];
        if (bk->sec == sec) {
            uint64_t amt = end - s;
            if (amt > bk->ns[from]) amt = bk->ns[from];
            bk->ns[from] -= amt;
            bk->ns[to] += amt;
        }
        s = end;
    }
}

static unsigned n_live(const brk_worker_t *w)
{
    unsigned live = 0;
    for (unsigned i = 0; i < w->n_inflight; i++) {
        const brk_part_t *p = w->inflight[i].part;
        if (p && p->state == PS_RUNNING && p->worker == w) live++;
    }
    return live;
}

static unsigned classify(const brk_t *b, const brk_worker_t *w)
{
    if (n_live(w)) return BRK_IDLE_BUSY;
    if (w->role >= ZP_NROLES || !b->qn[w->role]) return BRK_IDLE_STARVED;
    if (w->n_inflight >= w->credits || !w->alive) return BRK_IDLE_NO_CREDIT;
    return BRK_IDLE_HANDOFF;
}

/* a busy run ended at `now`: when a report of its last live task ended it, the tail after
 * that task's end was report latency; when a cancel or requeue ended it, the worker may
 * still have been running the task, so the time stays busy */
static void run_closed(brk_worker_t *w, uint64_t now)
{
    uint64_t from = w->idle.last_end > w->idle.run_start ? w->idle.last_end : w->idle.run_start;
    if (w->idle.tail_ok && from && now > from) reclass(w, from, now, BRK_IDLE_BUSY, BRK_IDLE_HANDOFF);
}

void brk_mx_tick(brk_t *b)
{
    uint64_t now = zp_now_ns();
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        brk_idle_t *d = &w->idle;
        if (!d->t_last) { d->t_last = w->first_seen ? w->first_seen : now; d->state = BRK_IDLE_STARVED; }
        if (now > d->t_last) charge(w, d->t_last, now, d->state);
        d->t_last = now;
        unsigned st = classify(b, w);
        if (st == BRK_IDLE_BUSY && d->state != BRK_IDLE_BUSY) { d->run_start = now; d->last_end = 0; d->tail_ok = false; }
        if (st != BRK_IDLE_BUSY && d->state == BRK_IDLE_BUSY) run_closed(w, now);
        d->state = st;
    }
}

void brk_mx_idle(const brk_worker_t *w, uint64_t now, uint64_t window, double out[BRK_IDLE_NCAUSE])
{
    uint64_t lo_sec = now / NS >= window / NS ? now / NS - window / NS + 1 : 0;
    uint64_t ns[BRK_IDLE_NCAUSE] = {0};
    for (unsigned k = 0; k < BRK_IDLE_BUCKETS; k++) {
        const brk_idle_bucket_t *bk = &w->idle.b[k];
        if (!bk->sec || bk->sec < lo_sec || bk->sec > now / NS) continue;
        for (unsigned c = 0; c < BRK_IDLE_NCAUSE; c++) ns[c] += bk->ns[c];
    }
    /* the open segment since the last tick, charged to the current state */
    if (w->idle.t_last && now > w->idle.t_last) ns[w->idle.state] += now - w->idle.t_last;
    for (unsigned c = 0; c < BRK_IDLE_NCAUSE; c++) out[c] = (double)ns[c] / 1e9;
}

const char *brk_mx_cause_name(unsigned c) { return c < BRK_IDLE_NCAUSE ? k_cause_name[c] : "?"; }

/* ---------------------------------------------------------------- DONE / FAIL hooks */
static brk_part_t *live_part(brk_worker_t *w, uint32_t slot, uint64_t gen)
{
    for (unsigned i = 0; i < w->n_inflight; i++)
        if (w->inflight[i].slot == slot && w->inflight[i].gen == gen) {
            brk_part_t *p = w->inflight[i].part;
            if (!p || p->state != PS_RUNNING || p->worker != w || p->slot != (int32_t)slot || p->word_gen != gen)
                return NULL;
            return p;
        }
    return NULL;
}

static void on_report(brk_t *b, brk_worker_t *w, uint32_t slot, uint64_t gen, uint64_t t_start, uint64_t t_end,
                      bool ok, const uint64_t *dt)
{
    struct brk_mx *mx = b->mx;
    brk_part_t *p = live_part(w, slot, gen);
    brk_idle_t *d = &w->idle;
    /* the gap in this busy run before the task started was dispatch / transfer latency */
    if (d->state == BRK_IDLE_BUSY && d->run_start) {
        uint64_t from = d->last_end > d->run_start ? d->last_end : d->run_start;
        uint64_t to = t_start < d->t_last ? t_start : d->t_last;
        if (p && to > from) reclass(w, from, to, BRK_IDLE_BUSY, BRK_IDLE_HANDOFF);
        if (p && t_end > d->last_end && t_end <= zp_now_ns()) d->last_end = t_end;
        d->tail_ok = p && n_live(w) == 1;   /* this report ends the run (p is still counted) */
    }
    if (!mx) return;
    unsigned r = w->role < ZP_NROLES ? w->role : 0;
    if (!p) { mx->parts[r][RES_STALE]++; return; }
    unsigned s = p->stage < ZP_NROLES ? p->stage : r;
    mx->parts[s][ok ? RES_DONE : RES_FAILED]++;
    if (t_end >= t_start) hist_add(&mx->stage[s], k_stage_le, (double)(t_end - t_start) / 1e9);
    if (ok && t_end > t_start) {
        mx->rate[s][mx->rate_head[s]] = (rate_ent_t){zp_now_ns(), t_start, t_end, (unsigned)(w - b->workers)};
        mx->rate_head[s] = (mx->rate_head[s] + 1) % BRK_RATE_RING;
        if (mx->rate_n[s] < BRK_RATE_RING) mx->rate_n[s]++;
    }
    if (p->t_assign[s] >= p->t_queued[s] && p->t_queued[s])
        hist_add(&mx->queue_wait[s], k_lat_le, (double)(p->t_assign[s] - p->t_queued[s]) / 1e9);
    if (t_start >= p->t_assign[s] && p->t_assign[s])
        hist_add(&mx->handoff[s], k_lat_le, (double)(t_start - p->t_assign[s]) / 1e9);
    if (dt)
        for (unsigned k = 0; k < ZP_DT_N; k++) mx->dt_ns[s][k] += dt[k];
}

void brk_mx_on_done(brk_t *b, brk_worker_t *w, const zp_msg_done_t *m)
{
    on_report(b, w, m->slot, m->gen, m->t_start, m->t_end, true, m->dt);
}

void brk_mx_on_fail(brk_t *b, brk_worker_t *w, const zp_msg_fail_t *m)
{
    on_report(b, w, m->slot, m->gen, m->t_start, m->t_end, false, NULL);
}

/* ---------------------------------------------------------------- stage rates */
int brk_mx_stage_rates(const brk_t *b, uint64_t now, brk_stage_rate_t out[ZP_NROLES], const char **why)
{
    unsigned running[ZP_NROLES];
    brk_running(b, running);
    bool work = false;
    for (unsigned r = 0; r < ZP_NROLES; r++) {
        brk_stage_rate_t *o = &out[r];
        memset(o, 0, sizeof *o);
        o->queued = (unsigned)b->qn[r];
        o->running = running[r];
        work |= o->queued || o->running;
        for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
            const brk_worker_t *w = &b->workers[i];
            if (w->used && w->alive && w->role == r && !(w->tripped_until && now < w->tripped_until)) o->workers++;
        }
        const struct brk_mx *mx = b->mx;
        if (!mx) continue;
        uint64_t sum = 0, lo = now > (uint64_t)BRK_RATE_WINDOW_S * NS ? now - (uint64_t)BRK_RATE_WINDOW_S * NS : 0;
        /* time per task = the union of each worker's task intervals / tasks: a GPU worker's
         * next task is staged while one computes, and a batch's tasks report one interval,
         * so the plain mean of t_end - t_start would count that time twice (or B times) */
        unsigned n = 0;   /* the entries of the window: the newest n */
        for (unsigned k = 0; k < mx->rate_n[r]; k++, n++) {
            const rate_ent_t *e = &mx->rate[r][(mx->rate_head[r] + BRK_RATE_RING - 1 - k) % BRK_RATE_RING];
            if (e->t_end < lo && k >= BRK_RATE_MIN) break;
        }
        o->tasks = n;
        for (unsigned i = 0; i < BRK_MAX_WORKERS && n; i++) {   /* gone workers' entries count too */
            brk_interval_t iv[BRK_RATE_RING];
            unsigned m = 0;
            for (unsigned k = 0; k < n; k++) {
                const rate_ent_t *e = &mx->rate[r][(mx->rate_head[r] + BRK_RATE_RING - 1 - k) % BRK_RATE_RING];
                if (e->worker == i) iv[m++] = (brk_interval_t){e->s, e->e};
            }
            if (m) sum += brk_union_ns(iv, m);
        }
        if (o->tasks && sum) {
            o->mean_task_s = (double)sum / o->tasks / 1e9;
            o->rate = o->workers / o->mean_task_s;
        }
    }
    if (!work) { *why = "no stage is limiting: nothing is queued or running"; return -1; }
    int lim = -1;
    for (unsigned r = 0; r < ZP_NROLES; r++)
        if (!out[r].workers) { *why = "it has no live worker"; return (int)r; }
    /* a stage with work that has not finished a task yet (a first partition, a key load):
     * everything downstream waits on it; the most upstream such stage */
    for (unsigned r = 0; r < ZP_NROLES; r++)
        if (!out[r].tasks && (out[r].queued || out[r].running)) {
            *why = "it has work and has not finished a task yet";
            return (int)r;
        }
    for (unsigned r = 0; r < ZP_NROLES; r++)
        if (out[r].tasks && (lim < 0 || out[r].rate < out[lim].rate)) lim = (int)r;
    if (lim < 0) { *why = "no task finished yet: no stage measured"; return -1; }
    bool all = true;
    for (unsigned r = 0; r < ZP_NROLES; r++) all &= out[r].tasks > 0;
    *why = all ? "lowest partitions/s of the three stages" : "lowest partitions/s of the stages measured so far";
    return lim;
}

/* the threads of the first live finalizer, from its HELLO name ("finalizer N thread(s)",
 * finalizer.c); 0 when unknown. A peer's claim: used for a hint text only. */
static unsigned final_threads(const brk_t *b)
{
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        unsigned t;
        if (w->used && w->alive && w->role == ZP_ROLE_FINAL && sscanf(w->name, "finalizer %u thread", &t) == 1 && t &&
            t < 65536)
            return t;
    }
    return 0;
}

static void stage_rates_out(const brk_t *b, zp_sbuf_t *s, bool json)
{
    brk_stage_rate_t st[ZP_NROLES];
    const char *why = "";
    int lim = brk_mx_stage_rates(b, zp_now_ns(), st, &why);
    if (json) {
        zp_sbuf_printf(s, ", \"stages\": {\"window_s\": %u, \"min_tasks\": %u", BRK_RATE_WINDOW_S, BRK_RATE_MIN);
        for (unsigned r = 0; r < ZP_NROLES; r++)
            zp_sbuf_printf(s, ", \"%s\": {\"workers\": %u, \"tasks\": %u, \"mean_task_ms\": %.3f, \"partitions_per_s\": %.6g, "
                           "\"queued\": %u, \"running\": %u}", zp_role_name(r), st[r].workers, st[r].tasks,
                           st[r].mean_task_s * 1e3, st[r].rate, st[r].queued, st[r].running);
        zp_sbuf_printf(s, ", \"limiting\": ");
        if (lim >= 0) zp_sbuf_printf(s, "\"%s\"", zp_role_name((unsigned)lim));
        else zp_sbuf_printf(s, "null");
        zp_sbuf_printf(s, ", \"limiting_why\": \"%s\"}", why);   /* our own constant text */
        return;
    }
    zp_sbuf_printf(s, "stages (partitions/s = live workers / time per task, last %u s or %u tasks):", BRK_RATE_WINDOW_S,
                   BRK_RATE_MIN);
    for (unsigned r = 0; r < ZP_NROLES; r++) {
        if (st[r].tasks)
            zp_sbuf_printf(s, "%s %s %u x %.1f ms = %.4g/s", r ? ";" : "", zp_role_name(r), st[r].workers,
                           st[r].mean_task_s * 1e3, st[r].rate);
        else zp_sbuf_printf(s, "%s %s %u worker(s), not measured", r ? ";" : "", zp_role_name(r), st[r].workers);
    }
    /* issue 28: how much of the synth stage is witness generation (jobs with inputs) */
    char wit[160] = "";
    const struct brk_mx *mx = b->mx;
    if (mx && mx->dt_ns[ZP_ROLE_SYNTH][ZP_DT_WITNESS] && mx->stage[ZP_ROLE_SYNTH].sum > 0 && mx->stage[ZP_ROLE_SYNTH].n)
        snprintf(wit, sizeof wit, "; synth: witness generation %.0f%% of its time, %.1f ms per partition",
                 100.0 * (double)mx->dt_ns[ZP_ROLE_SYNTH][ZP_DT_WITNESS] / 1e9 / mx->stage[ZP_ROLE_SYNTH].sum,
                 (double)mx->dt_ns[ZP_ROLE_SYNTH][ZP_DT_WITNESS] / 1e6 / (double)mx->stage[ZP_ROLE_SYNTH].n);
    if (lim >= 0) zp_sbuf_printf(s, "\nlimiting stage: %s (%s%s)\n", zp_role_name((unsigned)lim), why, wit);
    else zp_sbuf_printf(s, "\nlimiting stage: none (%s%s)\n", why, wit);
    unsigned ft = final_threads(b);
    if (st[ZP_ROLE_GPU].tasks && st[ZP_ROLE_FINAL].tasks)   /* what `zkpipe up` sizes finalizers from */
        zp_sbuf_printf(s, "finalizer sizing: zkpipe up --stage-ms gpu=%.0f,final=%.0f@%u\n",
                       st[ZP_ROLE_GPU].mean_task_s * 1e3, st[ZP_ROLE_FINAL].mean_task_s * 1e3, ft ? ft : 1);
}

void brk_mx_stage_rates_text(const brk_t *b, zp_sbuf_t *s) { stage_rates_out(b, s, false); }
void brk_mx_stage_rates_json(const brk_t *b, zp_sbuf_t *s) { stage_rates_out(b, s, true); }

/* ---------------------------------------------------------------- Prometheus text */
static void head(zp_sbuf_t *s, const char *name, const char *type, const char *help)
{
    zp_sbuf_printf(s, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}
/* a label value: \ " and newline escaped, other control bytes dropped */
static void lval(zp_sbuf_t *s, const char *z)
{
    for (; *z; z++) {
        unsigned char c = (unsigned char)*z;
        if (c == '\\' || c == '"') zp_sbuf_printf(s, "\\%c", c);
        else if (c == '\n') zp_sbuf_printf(s, "\\n");
        else if (c >= 0x20 && c != 0x7f) zp_sbuf_printf(s, "%c", c);
    }
}
static void worker_labels(zp_sbuf_t *s, const brk_worker_t *w)
{
    zp_sbuf_printf(s, "worker=\"%s-%u\",name=\"", zp_role_name(w->role), w->instance);   /* no pid: restarts would churn series */
    lval(s, w->name);
    zp_sbuf_printf(s, "\"");
}
static void hist_out(zp_sbuf_t *s, const char *name, const char *stage, const hist_t *h, const double *le)
{
    uint64_t acc = 0;
    for (unsigned i = 0; i < HB_N; i++) {
        acc += h->cnt[i];
        zp_sbuf_printf(s, "%s_bucket{stage=\"%s\",le=\"%g\"} %llu\n", name, stage, le[i], (unsigned long long)acc);
    }
    acc += h->cnt[HB_N];
    zp_sbuf_printf(s, "%s_bucket{stage=\"%s\",le=\"+Inf\"} %llu\n", name, stage, (unsigned long long)acc);
    zp_sbuf_printf(s, "%s_sum{stage=\"%s\"} %.9f\n%s_count{stage=\"%s\"} %llu\n", name, stage, h->sum, name, stage,
              (unsigned long long)h->n);
}

char *brk_metrics_text(brk_t *b)
{
    static const struct brk_mx zero;
    const struct brk_mx *mx = b->mx ? b->mx : &zero;
    zp_sbuf_t s = {0};
    uint64_t now = zp_now_ns();
    static const char *dtn[ZP_DT_N] = {"h2d", "ntt", "msm", "d2h", "msm_g2", "check", "verify_in", "witness"};

    head(&s, "zkpipe_up", "gauge", "1 while the broker serves");
    zp_sbuf_printf(&s, "zkpipe_up 1\n");
    head(&s, "zkpipe_uptime_seconds", "gauge", "seconds since the broker started serving");
    zp_sbuf_printf(&s, "zkpipe_uptime_seconds %.3f\n", (double)(now - b->t_start) / 1e9);

    head(&s, "zkpipe_partitions_total", "counter",
         "stage reports by result: done, failed (a retry may follow) or stale (dropped)");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        for (unsigned k = 0; k < RES_N; k++)
            zp_sbuf_printf(&s, "zkpipe_partitions_total{stage=\"%s\",result=\"%s\"} %llu\n", zp_role_name(r), k_res_name[k],
                      (unsigned long long)mx->parts[r][k]);
    head(&s, "zkpipe_partitions_finished_total", "counter", "partitions that reached a final state");
    zp_sbuf_printf(&s, "zkpipe_partitions_finished_total{result=\"proved\"} %llu\n", (unsigned long long)b->c.parts_done);
    zp_sbuf_printf(&s, "zkpipe_partitions_finished_total{result=\"failed\"} %llu\n", (unsigned long long)b->c.parts_failed);
    head(&s, "zkpipe_jobs_submitted_total", "counter", "jobs accepted since the broker started");
    zp_sbuf_printf(&s, "zkpipe_jobs_submitted_total %llu\n", (unsigned long long)b->c.jobs_submitted);
    head(&s, "zkpipe_assignments_total", "counter", "ASSIGNs sent to workers");
    zp_sbuf_printf(&s, "zkpipe_assignments_total %llu\n", (unsigned long long)b->c.assigns);
    head(&s, "zkpipe_requeues_total", "counter", "partitions requeued at a stage (failure, worker death, hand-back)");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        zp_sbuf_printf(&s, "zkpipe_requeues_total{stage=\"%s\"} %llu\n", zp_role_name(r), (unsigned long long)b->c.requeued[r]);
    head(&s, "zkpipe_worker_deaths_total", "counter", "workers declared dead, by role");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        zp_sbuf_printf(&s, "zkpipe_worker_deaths_total{stage=\"%s\"} %llu\n", zp_role_name(r), (unsigned long long)b->c.deaths[r]);
    head(&s, "zkpipe_stale_messages_total", "counter", "DONE/FAIL reports dropped as stale (old generation)");
    zp_sbuf_printf(&s, "zkpipe_stale_messages_total %llu\n", (unsigned long long)b->c.stale);
    head(&s, "zkpipe_malformed_frames_total", "counter", "frames dropped as malformed");
    zp_sbuf_printf(&s, "zkpipe_malformed_frames_total %llu\n", (unsigned long long)b->c.malformed);
    head(&s, "zkpipe_oversized_frames_total", "counter", "frames dropped as larger than the frame limit");
    zp_sbuf_printf(&s, "zkpipe_oversized_frames_total %llu\n", (unsigned long long)b->c.oversized);
    head(&s, "zkpipe_unknown_peer_frames_total", "counter", "frames from connections that had not said HELLO");
    zp_sbuf_printf(&s, "zkpipe_unknown_peer_frames_total %llu\n", (unsigned long long)b->c.unknown_peer);
    head(&s, "zkpipe_hello_refused_total", "counter", "HELLOs refused: identity not established by the group");
    zp_sbuf_printf(&s, "zkpipe_hello_refused_total %llu\n", (unsigned long long)b->c.hello_refused);
    head(&s, "zkpipe_fence_requests_total", "counter", "workers the broker asked its supervisor to kill");
    zp_sbuf_printf(&s, "zkpipe_fence_requests_total %llu\n", (unsigned long long)b->c.fence_requests);
    head(&s, "zkpipe_journal_errors_total", "counter", "failed journal writes");
    zp_sbuf_printf(&s, "zkpipe_journal_errors_total %llu\n", (unsigned long long)b->jr_errors);
    head(&s, "zkpipe_failures_total", "counter", "stage failures reported or declared, by class "
         "(doc/slot-protocol.md, Failure classes)");
    for (unsigned k = 0; k < ZP_NFAIL_CLASSES; k++)
        zp_sbuf_printf(&s, "zkpipe_failures_total{class=\"%s\"} %llu\n", zp_fail_class_name(k),
                       (unsigned long long)b->c.fail_class[k]);
    /* the fault machinery's counters, named like the status JSON's */
    static const struct { const char *name, *help; size_t off; } fc[] = {
        {"zkpipe_leases_expired_total", "assignments whose lease ran out (the partition requeued)",
         offsetof(brk_counters_t, leases_expired)},
        {"zkpipe_slots_quarantined_total", "slots held back because their last holder may still write",
         offsetof(brk_counters_t, quarantined)},
        {"zkpipe_slots_quarantine_released_total", "quarantined slots freed once their holder was gone",
         offsetof(brk_counters_t, quarantine_released)},
        {"zkpipe_breaker_trips_total", "workers taken out of rotation by the failure circuit breaker",
         offsetof(brk_counters_t, breaker_trips)},
        {"zkpipe_verify_redo_total", "partitions redone from synthesis after a failed pairing check",
         offsetof(brk_counters_t, verify_redo)},
        {"zkpipe_jobs_evicted_total", "finished jobs dropped by retention", offsetof(brk_counters_t, jobs_evicted)},
        {"zkpipe_waiters_refused_total", "AWAITs refused (waiter limits)", offsetof(brk_counters_t, waiters_refused)},
        {"zkpipe_key_affine_assignments_total", "assignments to a worker already holding the partition's key",
         offsetof(brk_counters_t, key_affine)},
        {"zkpipe_key_switches_total", "assignments that moved a worker to a key it did not hold",
         offsetof(brk_counters_t, key_switches)},
        {"zkpipe_key_first_loads_total", "assignments of a key no live worker held", offsetof(brk_counters_t, key_first)},
    };
    for (size_t i = 0; i < sizeof fc / sizeof fc[0]; i++) {
        head(&s, fc[i].name, "counter", fc[i].help);
        zp_sbuf_printf(&s, "%s %llu\n", fc[i].name,
                       (unsigned long long)*(const uint64_t *)((const char *)&b->c + fc[i].off));
    }

    /* counters kept by the scheduler: no walk over the job table (bounded cost) */
    uint32_t (*nq)[ZP_NPRIO] = b->nq, *jstate = b->jobs_by_state;
    unsigned running[ZP_NROLES];
    brk_running(b, running);
    head(&s, "zkpipe_queue_depth", "gauge", "partitions queued for a stage, by priority");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        for (unsigned pr = 0; pr < ZP_NPRIO; pr++)
            zp_sbuf_printf(&s, "zkpipe_queue_depth{stage=\"%s\",priority=\"%s\"} %u\n", zp_role_name(r), zp_prio_name(pr),
                      nq[r][pr]);
    head(&s, "zkpipe_running", "gauge", "partitions assigned to a worker, by stage");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        zp_sbuf_printf(&s, "zkpipe_running{stage=\"%s\"} %u\n", zp_role_name(r), running[r]);
    head(&s, "zkpipe_jobs", "gauge", "jobs in the broker's table, by state");
    for (unsigned k = 0; k <= ZP_JOB_CANCELED; k++)
        zp_sbuf_printf(&s, "zkpipe_jobs{state=\"%s\"} %u\n", zp_job_state_name(k), jstate[k]);
    zp_shm_stats_t st;
    zp_shm_stats(b->arena, &st);
    head(&s, "zkpipe_slots", "gauge", "arena slots by state");
    for (unsigned k = 0; k < ZP_SLOT_NSTATES; k++)
        zp_sbuf_printf(&s, "zkpipe_slots{state=\"%s\"} %u\n", zp_shm_state_name(k), st.by_state[k]);
    head(&s, "zkpipe_slots_total", "gauge", "arena slots");
    zp_sbuf_printf(&s, "zkpipe_slots_total %u\n", st.n_slots);

    head(&s, "zkpipe_worker_credits", "gauge", "credits a worker announced");
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        zp_sbuf_printf(&s, "zkpipe_worker_credits{");
        worker_labels(&s, w);
        zp_sbuf_printf(&s, "} %u\n", w->credits);
    }
    head(&s, "zkpipe_worker_held", "gauge", "assignments a worker holds now");
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        zp_sbuf_printf(&s, "zkpipe_worker_held{");
        worker_labels(&s, w);
        zp_sbuf_printf(&s, "} %u\n", w->n_inflight);
    }
    head(&s, "zkpipe_gpu_busy_ratio", "gauge", "share of the last 60 s a GPU worker reported running a task");
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used || w->role != ZP_ROLE_GPU) continue;
        zp_sbuf_printf(&s, "zkpipe_gpu_busy_ratio{");
        worker_labels(&s, w);
        zp_sbuf_printf(&s, "} %.4f\n", brk_busy_ratio(w, now, 60 * NS));
    }
    head(&s, "zkpipe_gpu_idle_seconds", "gauge",
         "idle time of a GPU worker over the last 60 s by cause: starved (no READY partition), no_credit "
         "(READY exists, credits all held), handoff (dispatch / transfer latency)");
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used || w->role != ZP_ROLE_GPU) continue;
        double v[BRK_IDLE_NCAUSE];
        brk_mx_idle(w, now, 60 * NS, v);
        for (unsigned c = BRK_IDLE_STARVED; c < BRK_IDLE_NCAUSE; c++) {
            zp_sbuf_printf(&s, "zkpipe_gpu_idle_seconds{");
            worker_labels(&s, w);
            zp_sbuf_printf(&s, ",cause=\"%s\"} %.6f\n", k_cause_name[c], v[c]);
        }
    }
    head(&s, "zkpipe_gpu_busy_seconds", "gauge", "time a GPU worker held running work over the last 60 s");
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used || w->role != ZP_ROLE_GPU) continue;
        double v[BRK_IDLE_NCAUSE];
        brk_mx_idle(w, now, 60 * NS, v);
        zp_sbuf_printf(&s, "zkpipe_gpu_busy_seconds{");
        worker_labels(&s, w);
        zp_sbuf_printf(&s, "} %.6f\n", v[BRK_IDLE_BUSY]);
    }

    {
        brk_stage_rate_t sr[ZP_NROLES];
        const char *why;
        int lim = brk_mx_stage_rates(b, now, sr, &why);
        head(&s, "zkpipe_stage_partitions_per_second", "gauge",
             "what a stage sustains: live workers / time per task over the recent window (0: not measured)");
        for (unsigned r = 0; r < ZP_NROLES; r++)
            zp_sbuf_printf(&s, "zkpipe_stage_partitions_per_second{stage=\"%s\"} %.6g\n", zp_role_name(r), sr[r].rate);
        head(&s, "zkpipe_stage_limiting", "gauge", "1 for the stage that limits throughput now (none while idle)");
        for (unsigned r = 0; r < ZP_NROLES; r++)
            zp_sbuf_printf(&s, "zkpipe_stage_limiting{stage=\"%s\"} %d\n", zp_role_name(r), lim == (int)r);
    }
    head(&s, "zkpipe_stage_seconds", "histogram", "time a stage worked on a partition (worker's t_start to t_end)");
    for (unsigned r = 0; r < ZP_NROLES; r++) hist_out(&s, "zkpipe_stage_seconds", zp_role_name(r), &mx->stage[r], k_stage_le);
    head(&s, "zkpipe_queue_wait_seconds", "histogram", "time a partition waited in a stage's queue before dispatch");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        hist_out(&s, "zkpipe_queue_wait_seconds", zp_role_name(r), &mx->queue_wait[r], k_lat_le);
    head(&s, "zkpipe_handoff_seconds", "histogram", "dispatch to start of work (ASSIGN transfer and worker pickup)");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        hist_out(&s, "zkpipe_handoff_seconds", zp_role_name(r), &mx->handoff[r], k_lat_le);
    head(&s, "zkpipe_stage_phase_seconds_total", "counter", "time spent in stage phases (h2d, ntt, msm, d2h, ...)");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        for (unsigned k = 0; k < ZP_DT_N; k++)
            if (mx->dt_ns[r][k])
                zp_sbuf_printf(&s, "zkpipe_stage_phase_seconds_total{stage=\"%s\",phase=\"%s\"} %.9f\n", zp_role_name(r),
                          dtn[k], (double)mx->dt_ns[r][k] / 1e9);
    if (b->mx && brk_mx_listen_addr(b)) {
        head(&s, "zkpipe_http_requests_total", "counter", "HTTP requests (served: answered 2xx/3xx; rejected: 4xx/5xx or closed without a request)");
        zp_sbuf_printf(&s, "zkpipe_http_requests_total{result=\"served\"} %llu\n", (unsigned long long)b->mx->http_requests);
        zp_sbuf_printf(&s, "zkpipe_http_requests_total{result=\"rejected\"} %llu\n", (unsigned long long)b->mx->http_rejected);
    }
    return zp_sbuf_take(&s);
}

/* ---------------------------------------------------------------- state */
/* The HTTP listeners themselves are in http.c (libmicrohttpd); listen_addr is passed there
 * by broker.c. Here only the counters and the address the status reports. */
int brk_mx_init(brk_t *b, const char *listen_addr)
{
    (void)listen_addr;
    struct brk_mx *mx = calloc(1, sizeof *mx);
    if (!mx) return -ENOMEM;
    b->mx = mx;
    return 0;
}

const char *brk_mx_listen_addr(const brk_t *b)
{
    const char *a = brk_http_addr(b, false);
    return a ? a : brk_http_addr(b, true);
}

void brk_mx_http_count(brk_t *b, bool served)
{
    if (!b || !b->mx) return;
    if (served) b->mx->http_requests++;
    else b->mx->http_rejected++;
}

void brk_mx_close(brk_t *b)
{
    free(b->mx);
    b->mx = NULL;
}
