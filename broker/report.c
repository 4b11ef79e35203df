/* report.c - what the broker tells clients: STATUS (text or JSON), the Chrome/Perfetto trace
 * of every partition through every stage, AWAIT results, and the GPU busy ratio. Per worker,
 * STATUS shows the last minute split into busy and idle by cause (metrics.c: starved,
 * no_credit, handoff; the JSON's window_60s.idle parts sum to idle_s).
 * STATUS also shows failures by class (global and per worker), the breaker, quarantined slots
 * and leases. Its cost is O(slots + workers + queued partitions): counters are kept as things
 * happen, nothing walks the job table. AWAIT waiters are bounded per client and overall.
 * JSON is written by hand (every string we emit is escaped by json_str). Tests: tests/ipc/. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/broker_int.h"
#include "broker/journal.h"
#include "lib/util/util.h"

static void json_str(zp_sbuf_t *s, const char *z)
{
    zp_sbuf_printf(s, "\"");
    for (; z && *z; z++) {
        unsigned char c = (unsigned char)*z;
        if (c == '"' || c == '\\') zp_sbuf_printf(s, "\\%c", c);
        else if (c < 0x20) zp_sbuf_printf(s, "\\u%04x", c);
        else zp_sbuf_printf(s, "%c", c);
    }
    zp_sbuf_printf(s, "\"");
}
static int iv_cmp(const void *x, const void *y)
{
    const brk_interval_t *a = x, *b = y;
    return a->s < b->s ? -1 : a->s > b->s;
}

uint64_t brk_union_ns(brk_interval_t *iv, unsigned n)
{
    qsort(iv, n, sizeof *iv, iv_cmp);
    uint64_t sum = 0, cs = 0, ce = 0;   /* the run being merged: [cs, ce) */
    for (unsigned i = 0; i < n; i++) {
        if (iv[i].e <= iv[i].s) continue;
        if (iv[i].s > ce) { sum += ce - cs; cs = iv[i].s; ce = iv[i].e; }
        else if (iv[i].e > ce) ce = iv[i].e;
    }
    return sum + (ce - cs);
}

double brk_busy_ratio(const brk_worker_t *w, uint64_t now, uint64_t window)
{
    uint64_t lo = now > window ? now - window : 0;
    if (w->first_seen > lo) lo = w->first_seen;
    if (now <= lo) return 0;
    brk_interval_t iv[BRK_BUSY_RING];
    unsigned n = 0;
    for (unsigned i = 0; i < w->busy_n && i < BRK_BUSY_RING; i++) {
        brk_interval_t x = w->busy[(w->busy_head + BRK_BUSY_RING - 1 - i) % BRK_BUSY_RING];
        uint64_t s = x.s > lo ? x.s : lo, e = x.e < now ? x.e : now;
        if (e > s) iv[n++] = (brk_interval_t){s, e};
    }
    double r = (double)brk_union_ns(iv, n) / (double)(now - lo);
    return r > 1 ? 1 : r;
}

/* keys: "shm+pinned+device" */
static void key_tier_text(zp_sbuf_t *s, uint32_t t)
{
    static const char *const n[] = {"shm", "pinned", "device", "private"};
    bool any = false;
    for (unsigned i = 0; i < 4; i++)
        if (t & (1u << i)) { zp_sbuf_printf(s, "%s%s", any ? "+" : "", n[i]); any = true; }
    if (!any) zp_sbuf_printf(s, "?");
}

static void keys_json(zp_sbuf_t *s, const brk_worker_t *w)
{
    zp_sbuf_printf(s, ", \"keys\": {\"reported\": %s, \"loads\": %llu, \"evictions\": %llu, \"budget\": %llu,"
                   " \"switches\": %llu, \"held\": [", w->keys_known ? "true" : "false", (unsigned long long)w->key_loads,
                   (unsigned long long)w->key_evictions, (unsigned long long)w->key_budget,
                   (unsigned long long)w->key_switches);
    for (unsigned k = 0; k < w->n_keys; k++) {
        zp_sbuf_printf(s, "%s{\"path\": ", k ? ", " : "");
        json_str(s, w->keys[k].name);
        zp_sbuf_printf(s, ", \"bytes\": %llu, \"tier\": \"", (unsigned long long)w->keys[k].bytes);
        key_tier_text(s, w->keys[k].tier);
        zp_sbuf_printf(s, "\"}");
    }
    zp_sbuf_printf(s, "]}");
}

/* the text status's last section (`zkpipe keys list` prints it): worker -> keys */
static void keys_text(zp_sbuf_t *s, const brk_t *b)
{
    zp_sbuf_printf(s, "keys by worker (affinity %s; assigns to a holder %llu, switches %llu, first loads %llu):\n",
                   b->key_affinity ? "on" : "off", (unsigned long long)b->c.key_affine,
                   (unsigned long long)b->c.key_switches, (unsigned long long)b->c.key_first);
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        zp_sbuf_printf(s, "  %-5s #%u pid %-7u ", zp_role_name(w->role), w->instance, w->pid);
        if (!w->keys_known) { zp_sbuf_printf(s, "(reports no keys)\n"); continue; }
        zp_sbuf_printf(s, "loads %llu evictions %llu switches %llu budget ", (unsigned long long)w->key_loads,
                       (unsigned long long)w->key_evictions, (unsigned long long)w->key_switches);
        if (w->key_budget) zp_sbuf_printf(s, "%.1f KiB\n", w->key_budget / 1024.0);
        else zp_sbuf_printf(s, "none\n");
        for (unsigned k = 0; k < w->n_keys; k++) {
            zp_sbuf_printf(s, "        %s  ", w->keys[k].name);
            key_tier_text(s, w->keys[k].tier);
            zp_sbuf_printf(s, "  %.1f KiB\n", w->keys[k].bytes / 1024.0);
        }
    }
}

char *brk_status_text(brk_t *b, bool json)
{
    zp_sbuf_t s = {0};
    uint64_t now = zp_now_ns();
    zp_shm_stats_t st;
    zp_shm_stats(b->arena, &st);
    uint32_t (*nq)[ZP_NPRIO] = b->nq;
    unsigned running[ZP_NROLES];
    brk_running(b, running);
    unsigned jobs_run = b->jobs_by_state[ZP_JOB_RUNNING], jobs_done = b->jobs_by_state[ZP_JOB_DONE],
             jobs_failed = b->jobs_by_state[ZP_JOB_FAILED], jobs_cancel = b->jobs_by_state[ZP_JOB_CANCELED];
    if (json) {
        zp_sbuf_printf(&s, "{\"pid\": %d, \"endpoint\": ", (int)getpid());
        json_str(&s, b->endpoint);
        zp_sbuf_printf(&s, ", \"arena\": ");
        json_str(&s, b->arena_name);
        zp_sbuf_printf(&s, ", \"journal\": {\"path\": ");
        json_str(&s, b->jr_path);
        zp_sbuf_printf(&s, ", \"errors\": %llu}", (unsigned long long)b->jr_errors);
        if (brk_mx_listen_addr(b)) {
            zp_sbuf_printf(&s, ", \"metrics_listen\": ");
            json_str(&s, brk_mx_listen_addr(b));
        }
        zp_sbuf_printf(&s, ", \"uptime_s\": %.3f, \"slots\": {\"total\": %u", (now - b->t_start) / 1e9, st.n_slots);
        for (unsigned k = 0; k < ZP_SLOT_NSTATES; k++) zp_sbuf_printf(&s, ", \"%s\": %u", zp_shm_state_name(k), st.by_state[k]);
        zp_sbuf_printf(&s, ", \"quarantined\": %u", b->n_quarantined);
        zp_sbuf_printf(&s, "}, \"queues\": {");
        for (unsigned r = 0; r < ZP_NROLES; r++) {
            zp_sbuf_printf(&s, "%s\"%s\": {\"total\": %zu", r ? ", " : "", zp_role_name(r), b->qn[r]);
            for (unsigned pr = 0; pr < ZP_NPRIO; pr++) zp_sbuf_printf(&s, ", \"%s\": %u", zp_prio_name(pr), nq[r][pr]);
            zp_sbuf_printf(&s, ", \"running\": %u}", running[r]);
        }
        zp_sbuf_printf(&s, "}, \"jobs\": {\"total\": %zu, \"running\": %u, \"done\": %u, \"failed\": %u, \"canceled\": %u}",
                  b->n_jobs, jobs_run, jobs_done, jobs_failed, jobs_cancel);
        zp_sbuf_printf(&s, ", \"counters\": {\"assigns\": %llu, \"parts_done\": %llu, \"parts_failed\": %llu, \"stale\": %llu,"
                      " \"malformed\": %llu, \"oversized\": %llu, \"unknown_peer\": %llu",
                  (unsigned long long)b->c.assigns, (unsigned long long)b->c.parts_done,
                  (unsigned long long)b->c.parts_failed, (unsigned long long)b->c.stale,
                  (unsigned long long)b->c.malformed, (unsigned long long)b->c.oversized,
                  (unsigned long long)b->c.unknown_peer);
        zp_sbuf_printf(&s, ", \"hello_refused\": %llu, \"fence_requests\": %llu, \"fence_unsupervised\": %llu",
                  (unsigned long long)b->c.hello_refused, (unsigned long long)b->c.fence_requests,
                  (unsigned long long)b->c.fence_unsupervised);   /* ident.c */
        zp_sbuf_printf(&s, ", \"requeued\": {");
        for (unsigned r = 0; r < ZP_NROLES; r++)
            zp_sbuf_printf(&s, "%s\"%s\": %llu", r ? ", " : "", zp_role_name(r), (unsigned long long)b->c.requeued[r]);
        zp_sbuf_printf(&s, "}, \"deaths\": {");
        for (unsigned r = 0; r < ZP_NROLES; r++)
            zp_sbuf_printf(&s, "%s\"%s\": %llu", r ? ", " : "", zp_role_name(r), (unsigned long long)b->c.deaths[r]);
        zp_sbuf_printf(&s, "}, \"failures\": {");
        for (unsigned k = 0; k < ZP_NFAIL_CLASSES; k++)
            zp_sbuf_printf(&s, "%s\"%s\": %llu", k ? ", " : "", zp_fail_class_name(k), (unsigned long long)b->c.fail_class[k]);
        zp_sbuf_printf(&s, "}, \"leases_expired\": %llu, \"quarantined\": %llu, \"quarantine_released\": %llu,"
                      " \"breaker_trips\": %llu, \"verify_redo\": %llu, \"jobs_evicted\": %llu, \"waiters\": %u,"
                      " \"waiters_refused\": %llu",
                      (unsigned long long)b->c.leases_expired, (unsigned long long)b->c.quarantined,
                      (unsigned long long)b->c.quarantine_released, (unsigned long long)b->c.breaker_trips,
                      (unsigned long long)b->c.verify_redo, (unsigned long long)b->c.jobs_evicted, b->n_waiters,
                      (unsigned long long)b->c.waiters_refused);
        zp_sbuf_printf(&s, ", \"key_affine\": %llu, \"key_switches\": %llu, \"key_first\": %llu",
                       (unsigned long long)b->c.key_affine, (unsigned long long)b->c.key_switches,
                       (unsigned long long)b->c.key_first);   /* keys */
        zp_sbuf_printf(&s, "}, \"key_affinity\": %s", b->key_affinity ? "true" : "false");
        brk_mx_stage_rates_json(b, &s);   /* issue 10 item 8: the limiting stage */
        zp_sbuf_printf(&s, ", \"workers\": [");
        bool first = true;
        for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
            brk_worker_t *w = &b->workers[i];
            if (!w->used) continue;
            zp_sbuf_printf(&s, "%s{\"role\": \"%s\", \"instance\": %u, \"pid\": %u, \"name\": ", first ? "" : ", ",
                      zp_role_name(w->role), w->instance, w->pid);
            json_str(&s, w->name);
            zp_sbuf_printf(&s, ", \"credits\": %u, \"held\": %u, \"last_heartbeat_ms\": %.1f, \"done\": %llu, \"failed\": %llu",
                      w->credits, w->n_inflight, (now - w->last_seen) / 1e6, (unsigned long long)w->n_done,
                      (unsigned long long)w->n_fail);
            zp_sbuf_printf(&s, ", \"failures\": {");
            for (unsigned k = 0; k < ZP_NFAIL_CLASSES; k++)
                zp_sbuf_printf(&s, "%s\"%s\": %llu", k ? ", " : "", zp_fail_class_name(k), (unsigned long long)w->n_class[k]);
            zp_sbuf_printf(&s, "}, \"fail_streak\": %u, \"breaker_trips\": %u, \"in_rotation\": %s", w->fail_streak,
                           w->n_trips, w->tripped_until && now < w->tripped_until ? "false" : "true");
            zp_sbuf_printf(&s, ", \"busy_ratio_60s\": %.4f", brk_busy_ratio(w, now, 60000000000ull));
            /* the last minute as the broker saw it: busy (holding running work) or idle by cause */
            double iv[BRK_IDLE_NCAUSE];
            brk_mx_idle(w, now, 60000000000ull, iv);
            double idle = iv[BRK_IDLE_STARVED] + iv[BRK_IDLE_NO_CREDIT] + iv[BRK_IDLE_HANDOFF];
            zp_sbuf_printf(&s, ", \"window_60s\": {\"seconds\": %.6f, \"busy_s\": %.6f, \"idle_s\": %.6f, \"idle\": {",
                      idle + iv[BRK_IDLE_BUSY], iv[BRK_IDLE_BUSY], idle);
            for (unsigned c = BRK_IDLE_STARVED; c < BRK_IDLE_NCAUSE; c++)
                zp_sbuf_printf(&s, "%s\"%s\": %.6f", c == BRK_IDLE_STARVED ? "" : ", ", brk_mx_cause_name(c), iv[c]);
            zp_sbuf_printf(&s, "}}, \"slots\": [");
            for (unsigned k = 0; k < w->n_inflight; k++)
                zp_sbuf_printf(&s, "%s%u", k ? ", " : "", w->inflight[k].slot);
            zp_sbuf_printf(&s, "]");
            keys_json(&s, w);   /* keys */
            zp_sbuf_printf(&s, "}");
            first = false;
        }
        zp_sbuf_printf(&s, "]");
        brk_slots_status(b, &s, true);   /* slots: classes, bound slots, priority */
        zp_sbuf_printf(&s, "}\n");
        return zp_sbuf_take(&s);
    }
    zp_sbuf_printf(&s, "broker pid %d  %s  up %.0f s\n", (int)getpid(), b->endpoint, (now - b->t_start) / 1e9);
    zp_sbuf_printf(&s, "slots: %u total:", st.n_slots);
    for (unsigned k = 0; k < ZP_SLOT_NSTATES; k++) zp_sbuf_printf(&s, " %s %u", zp_shm_state_name(k), st.by_state[k]);
    zp_sbuf_printf(&s, "; quarantined %u", b->n_quarantined);
    zp_sbuf_printf(&s, "\n");
    brk_slots_status(b, &s, false);   /* slots: classes, priority */
    zp_sbuf_printf(&s, "queues (critical/high/normal/low, running):\n");
    for (unsigned r = 0; r < ZP_NROLES; r++)
        zp_sbuf_printf(&s, "  %-6s %3zu queued (%u/%u/%u/%u), %u running\n", zp_role_name(r), b->qn[r], nq[r][0], nq[r][1],
                  nq[r][2], nq[r][3], running[r]);
    zp_sbuf_printf(&s, "jobs: %zu (running %u, done %u, failed %u, canceled %u)\n", b->n_jobs, jobs_run, jobs_done,
              jobs_failed, jobs_cancel);
    zp_sbuf_printf(&s, "partitions: %llu done, %llu failed; requeued synth %llu gpu %llu final %llu; deaths synth %llu gpu %llu final %llu\n",
              (unsigned long long)b->c.parts_done, (unsigned long long)b->c.parts_failed,
              (unsigned long long)b->c.requeued[0], (unsigned long long)b->c.requeued[1],
              (unsigned long long)b->c.requeued[2], (unsigned long long)b->c.deaths[0],
              (unsigned long long)b->c.deaths[1], (unsigned long long)b->c.deaths[2]);
    zp_sbuf_printf(&s, "failures by class:");
    for (unsigned k = 0; k < ZP_NFAIL_CLASSES; k++)
        zp_sbuf_printf(&s, " %s %llu", zp_fail_class_name(k), (unsigned long long)b->c.fail_class[k]);
    zp_sbuf_printf(&s, "; leases expired %llu; quarantined %llu (released %llu); breaker trips %llu; pairing redo %llu\n",
                   (unsigned long long)b->c.leases_expired, (unsigned long long)b->c.quarantined,
                   (unsigned long long)b->c.quarantine_released, (unsigned long long)b->c.breaker_trips,
                   (unsigned long long)b->c.verify_redo);
    zp_sbuf_printf(&s, "frames: %llu stale, %llu malformed, %llu oversized, %llu from unknown peers\n",
              (unsigned long long)b->c.stale, (unsigned long long)b->c.malformed,
              (unsigned long long)b->c.oversized, (unsigned long long)b->c.unknown_peer);
    if (brk_mx_listen_addr(b)) zp_sbuf_printf(&s, "metrics: http://%s/metrics\n", brk_mx_listen_addr(b));
    brk_mx_stage_rates_text(b, &s);   /* issue 10 item 8: the limiting stage */
    zp_sbuf_printf(&s, "workers:\n");
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        zp_sbuf_printf(&s, "  %-5s #%u pid %-7u %-22s credit %u/%u  heartbeat %5.0f ms ago  done %llu failed %llu",
                  zp_role_name(w->role), w->instance, w->pid, w->name, w->credits - w->n_inflight, w->credits,
                  (now - w->last_seen) / 1e6, (unsigned long long)w->n_done, (unsigned long long)w->n_fail);
        zp_sbuf_printf(&s, " (transient %llu input %llu worker %llu device %llu)%s",
                       (unsigned long long)w->n_class[ZP_FAIL_TRANSIENT], (unsigned long long)w->n_class[ZP_FAIL_INPUT],
                       (unsigned long long)w->n_class[ZP_FAIL_WORKER], (unsigned long long)w->n_class[ZP_FAIL_DEVICE],
                       w->tripped_until && now < w->tripped_until ? "  OUT OF ROTATION (breaker)" : "");
        if (w->role == ZP_ROLE_GPU) {
            double iv[BRK_IDLE_NCAUSE];
            brk_mx_idle(w, now, 60000000000ull, iv);
            double idle = iv[BRK_IDLE_STARVED] + iv[BRK_IDLE_NO_CREDIT] + iv[BRK_IDLE_HANDOFF];
            zp_sbuf_printf(&s, "  busy %.1f%% (last minute)\n        idle %.1f s of %.1f s: starved %.1f s, no credit %.1f s, handoff %.3f s",
                      100 * brk_busy_ratio(w, now, 60000000000ull), idle, idle + iv[BRK_IDLE_BUSY], iv[BRK_IDLE_STARVED],
                      iv[BRK_IDLE_NO_CREDIT], iv[BRK_IDLE_HANDOFF]);
        }
        zp_sbuf_printf(&s, "\n");
    }
    keys_text(&s, b);   /* keys: the last section */
    return zp_sbuf_take(&s);
}

/* Chrome trace events: one complete ("X") slice per partition per stage on the track of the
 * process that ran it; metadata names each process track. Raw monotonic ns in args so that
 * scripts can compute handoff latencies. */
char *brk_trace_json(brk_t *b, uint32_t max_parts)
{
    zp_sbuf_t s = {0};
    uint64_t t0 = b->t_start;
    zp_sbuf_printf(&s, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    zp_sbuf_printf(&s, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"broker\"}}",
              (int)getpid());
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        zp_sbuf_printf(&s, ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %u, \"tid\": 0, \"args\": {\"name\": \"%s #%u ",
                  w->pid, zp_role_name(w->role), w->instance);
        for (const char *c = w->name; *c; c++) if (*c != '"' && *c != '\\' && (unsigned char)*c >= 0x20) zp_sbuf_printf(&s, "%c", *c);
        zp_sbuf_printf(&s, "\"}}");
    }
    uint32_t count = 0;
    /* running jobs, then the finished ones that still keep their partitions, newest first */
    for (int l = 0; l < 2; l++)
    for (brk_job_t *j = l ? b->fin_tail : b->live; j; j = l ? j->prev : j->next) {
        if (!j->parts) { if (l) break; continue; }
        for (uint32_t k = 0; k < j->n_parts; k++) {
            brk_part_t *p = &j->parts[k];
            if (max_parts && count >= max_parts) goto out;
            count++;
            for (unsigned r = 0; r < ZP_NROLES; r++) {
                if (!p->t_start[r] || p->t_end[r] < p->t_start[r] || p->t_start[r] < t0) continue;
                zp_sbuf_printf(&s, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"job %llu part %u\", \"pid\": %u, \"tid\": 1, "
                              "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"job\": %llu, \"part\": %u, \"stage\": \"%s\", "
                              "\"priority\": \"%s\", \"attempt\": %u, \"t_queued\": %llu, \"t_assign\": %llu, "
                              "\"t_start\": %llu, \"t_end\": %llu, \"t_done\": %llu",
                          zp_role_name(r), (unsigned long long)j->id, p->idx, p->wpid[r], (p->t_start[r] - t0) / 1e3,
                          (p->t_end[r] - p->t_start[r]) / 1e3, (unsigned long long)j->id, p->idx, zp_role_name(r),
                          zp_prio_name(j->priority), p->attempt, (unsigned long long)p->t_queued[r],
                          (unsigned long long)p->t_assign[r], (unsigned long long)p->t_start[r],
                          (unsigned long long)p->t_end[r], (unsigned long long)p->t_done[r]);
                static const char *dtn[ZP_DT_N] = {"h2d_ns", "ntt_ns", "msm_ns", "d2h_ns", "msm_g2_ns", "check_ns",
                                                   "verify_in_ns", "witness_ns"};
                for (unsigned d = 0; d < ZP_DT_N; d++)
                    if (p->dt[r][d]) zp_sbuf_printf(&s, ", \"%s\": %llu", dtn[d], (unsigned long long)p->dt[r][d]);
                static const char *tmn[ZP_TM_N] = {"t_stage_start", "t_stage_end", "t_compute_start", "t_compute_end",
                                                   "t_verify_end", "t_run_start", "t_run_end"};
                for (unsigned d = 0; d < ZP_TM_N; d++)
                    if (p->tm[r][d]) zp_sbuf_printf(&s, ", \"%s\": %llu", tmn[d], (unsigned long long)p->tm[r][d]);
                zp_sbuf_printf(&s, "}}");
            }
        }
    }
out:
    zp_sbuf_printf(&s, "\n]}\n");
    return zp_sbuf_take(&s);
}

int brk_result_encode(brk_t *b, brk_job_t *j, bool timed_out, uint8_t **buf, size_t *len)
{
    zp_msg_result_t r = {.job = j->id, .state = j->state, .timed_out = timed_out, .n_parts = j->n_parts};
    brk_part_t *parts = j->parts, *loaded = NULL;
    int rc;
    if (!parts) {
        /* a compacted finished job: its results are in the journal */
        if (!b->jr || !(loaded = calloc(j->n_parts, sizeof *loaded))) return -ENOMEM;
        if ((rc = brk_jr_parts_load(b->jr, j, loaded)) < 0) goto out;
        parts = loaded;
    }
    r.parts = calloc(j->n_parts, sizeof *r.parts);
    if (!r.parts) { rc = -ENOMEM; goto out; }
    for (uint32_t i = 0; i < j->n_parts; i++) {
        brk_part_t *p = &parts[i];
        zp_msg_part_result_t *o = &r.parts[i];
        static const uint32_t map[] = {ZP_PART_QUEUED, ZP_PART_RUNNING, ZP_PART_DONE, ZP_PART_FAILED, ZP_PART_CANCELED};
        o->state = map[p->state];
        o->attempts = p->attempt;
        o->error = zp_str(p->state == PS_FAILED ? p->reasons : NULL);
        if (p->state == PS_DONE) {
            o->proof_json = zp_str(p->proof_json);
            o->public_json = zp_str(p->public_json);
            o->proof_bin = p->proof_bin;
            o->proof_bin_len = p->proof_bin_len;
        }
    }
    rc = zp_msg_result_encode(buf, len, &r);
out:
    free(r.parts);
    for (uint32_t i = 0; loaded && i < j->n_parts; i++) {
        free(loaded[i].wtns); free(loaded[i].reasons); free(loaded[i].proof_json); free(loaded[i].public_json);
    }
    free(loaded);
    return rc;
}

int brk_waiter_add(brk_t *b, const uint8_t *id, size_t id_len, uint64_t job, uint32_t timeout_ms)
{
    if (id_len > BRK_ID_MAX) return zp_err_set(-EINVAL, "routing id too long");
    unsigned mine = 0;
    for (brk_waiter_t *w = b->waiters; w; w = w->next) mine += w->id_len == id_len && !memcmp(w->id, id, id_len);
    if (b->n_waiters >= b->max_waiters || mine >= b->max_waiters_client) {
        b->c.waiters_refused++;
        return zp_err_set(ZP_ETOOBIG, "too many AWAITs waiting (%u from this client, %u in all; limits %u and %u): "
                          "await fewer jobs at once or poll", mine, b->n_waiters, b->max_waiters_client, b->max_waiters);
    }
    brk_waiter_t *wt = calloc(1, sizeof *wt);
    if (!wt) return -ENOMEM;
    memcpy(wt->id, id, id_len);
    wt->id_len = id_len;
    wt->job = job;
    wt->deadline = zp_now_ns() + (uint64_t)timeout_ms * 1000000u;
    wt->next = b->waiters;
    b->waiters = wt;
    b->n_waiters++;
    return 0;
}

/* answer AWAITs whose job finished or whose deadline passed (all_due: answer all now) */
void brk_waiters_poll(brk_t *b, bool all_due)
{
    uint64_t now = zp_now_ns();
    for (brk_waiter_t **pp = &b->waiters; *pp;) {
        brk_waiter_t *w = *pp;
        brk_job_t *j = brk_job_get(b, w->job);
        bool fin = !j || j->state != ZP_JOB_RUNNING;
        if (!fin && !all_due && now < w->deadline) { pp = &w->next; continue; }
        uint8_t *buf; size_t len;
        if (j && brk_result_encode(b, j, !fin, &buf, &len) == 0) brk_send(b, w->id, w->id_len, buf, len);
        *pp = w->next;
        free(w);
        b->n_waiters--;
    }
}
