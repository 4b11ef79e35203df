/* jobs.c - the broker's job table: lookups by id and by request id (hash tables, O(1)), the
 * list of running jobs and the list of finished ones in finish order, retention, submit and
 * cancel.
 *
 * Bounded state (doc/slot-protocol.md, "Bounded state"): a finished job keeps its partitions
 * in memory only while it is among the BRK_FIN_DETAIL most recently finished (the trace shows
 * them); older ones keep a summary and their results are read back from the journal on AWAIT.
 * Finished jobs are evicted from memory and journal once older than retain_s or beyond
 * retain_jobs; the request id of an evicted job may be used again (the idempotency window is
 * the retention). Job ids are never reused: the journal keeps the next id.
 * Tests: tests/test_model.c (retention, lookups), tests/ipc/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_int.h"
#include "broker/fleet.h"
#include "broker/journal.h"
#include "lib/util/util.h"

#define BRK_FIN_DETAIL 256

static size_t h_id(uint64_t id, size_t cap) { return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1); }
static size_t h_str(const char *p, size_t n, size_t cap)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static int grow(brk_t *b)
{
    size_t nc = b->h_cap ? b->h_cap * 2 : 1024;
    brk_job_t **ni = calloc(nc, sizeof *ni), **nr = calloc(nc, sizeof *nr);
    if (!ni || !nr) { free(ni); free(nr); return -ENOMEM; }
    for (size_t i = 0; i < b->h_cap; i++) {
        for (brk_job_t *j = b->h_id[i], *n; j; j = n) {
            n = j->h_id;
            size_t k = h_id(j->id, nc);
            j->h_id = ni[k]; ni[k] = j;
        }
        for (brk_job_t *j = b->h_rid[i], *n; j; j = n) {
            n = j->h_rid;
            size_t k = h_str(j->request_id, strlen(j->request_id), nc);
            j->h_rid = nr[k]; nr[k] = j;
        }
    }
    free(b->h_id); free(b->h_rid);
    b->h_id = ni; b->h_rid = nr; b->h_cap = nc;
    return 0;
}

brk_job_t *brk_job_get(brk_t *b, uint64_t id)
{
    if (!b->h_cap) return NULL;
    for (brk_job_t *j = b->h_id[h_id(id, b->h_cap)]; j; j = j->h_id)
        if (j->id == id) return j;
    return NULL;
}

brk_job_t *brk_job_by_request(brk_t *b, const char *rid, size_t len)
{
    if (!b->h_cap) return NULL;
    for (brk_job_t *j = b->h_rid[h_str(rid, len, b->h_cap)]; j; j = j->h_rid)
        if (strlen(j->request_id) == len && !memcmp(j->request_id, rid, len)) return j;
    return NULL;
}

static void list_add_tail(brk_job_t **head, brk_job_t **tail, brk_job_t *j)
{
    j->next = NULL;
    j->prev = tail ? *tail : NULL;
    if (tail) {
        if (*tail) (*tail)->next = j; else *head = j;
        *tail = j;
    } else {
        /* the live list: push front (order does not matter there) */
        j->prev = NULL;
        j->next = *head;
        if (*head) (*head)->prev = j;
        *head = j;
    }
}

static void list_del(brk_job_t **head, brk_job_t **tail, brk_job_t *j)
{
    if (j->prev) j->prev->next = j->next; else *head = j->next;
    if (j->next) j->next->prev = j->prev; else if (tail) *tail = j->prev;
    j->prev = j->next = NULL;
}

int brk_job_insert(brk_t *b, brk_job_t *j)
{
    if ((b->n_jobs + 1) * 4 > b->h_cap * 3 && grow(b) < 0) return -ENOMEM;
    size_t k = h_id(j->id, b->h_cap);
    j->h_id = b->h_id[k]; b->h_id[k] = j;
    k = h_str(j->request_id, strlen(j->request_id), b->h_cap);
    j->h_rid = b->h_rid[k]; b->h_rid[k] = j;
    if (j->state == ZP_JOB_RUNNING) list_add_tail(&b->live, NULL, j);
    else { list_add_tail(&b->fin_head, &b->fin_tail, j); b->n_fin++; }
    if (j->state <= ZP_JOB_CANCELED) b->jobs_by_state[j->state]++;
    b->n_jobs++;
    if (j->id >= b->next_job_id) b->next_job_id = j->id + 1;
    return 0;
}

static void job_remove(brk_t *b, brk_job_t *j)
{
    brk_job_t **pp = &b->h_id[h_id(j->id, b->h_cap)];
    while (*pp && *pp != j) pp = &(*pp)->h_id;
    if (*pp) *pp = j->h_id;
    pp = &b->h_rid[h_str(j->request_id, strlen(j->request_id), b->h_cap)];
    while (*pp && *pp != j) pp = &(*pp)->h_rid;
    if (*pp) *pp = j->h_rid;
    if (j->state == ZP_JOB_RUNNING) list_del(&b->live, NULL, j);
    else { list_del(&b->fin_head, &b->fin_tail, j); b->n_fin--; }
    if (j->state <= ZP_JOB_CANCELED) b->jobs_by_state[j->state]--;
    b->n_jobs--;
}

static void parts_free(brk_job_t *j)
{
    for (uint32_t i = 0; j->parts && i < j->n_parts; i++) {
        brk_part_t *p = &j->parts[i];
        free(p->wtns); free(p->reasons); free(p->proof_json); free(p->public_json);
    }
    free(j->parts);
    j->parts = NULL;
}

void brk_job_free(brk_job_t *j)
{
    if (!j) return;
    parts_free(j);
    free(j->request_id); free(j->zkey); free(j->r1cs); free(j->wasm); free(j);
}

/* a finished job's partitions leave memory (their results are in the journal); nothing may
 * point at them any more */
static void compact(brk_t *b, brk_job_t *j)
{
    if (!j->parts || !b->jr) return;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        for (unsigned k = 0; w->used && k < w->n_inflight; k++)
            if (w->inflight[k].part && w->inflight[k].part->job == j) w->inflight[k].part = NULL;
    }
    for (uint32_t i = 0; i < j->n_parts; i++) {
        brk_part_t *p = &j->parts[i];
        brk_q_remove(b, p);
        if (p->slot >= 0 && (uint32_t)p->slot < b->n_slots && b->slots[p->slot].part == p) b->slots[p->slot].part = NULL;
    }
    parts_free(j);
}

/* a running job ends in state st: off the live list, onto the finished one, journaled */
static void job_finish(brk_t *b, brk_job_t *j, zp_job_state_t st)
{
    list_del(&b->live, NULL, j);
    b->jobs_by_state[ZP_JOB_RUNNING]--;
    j->state = st;
    b->jobs_by_state[j->state]++;
    j->t_finish = zp_now_ns();
    j->finish_wall_us = zp_wall_us();
    list_add_tail(&b->fin_head, &b->fin_tail, j);
    b->n_fin++;
    brk_journal_job(b, j);
}

void brk_job_check_finished(brk_t *b, brk_job_t *j)
{
    if (j->state != ZP_JOB_RUNNING || j->n_done + j->n_failed < j->n_parts) return;
    job_finish(b, j, j->n_failed ? ZP_JOB_FAILED : ZP_JOB_DONE);
    brk_fleet_job_finished(b, j);   /* fleet: a claimed partition's proof/failure to the queue */
    zp_log(ZP_LOG_INFO, "job %llu (%s) %s: %u/%u partitions proved in %.3f s", (unsigned long long)j->id,
           j->request_id, zp_job_state_name(j->state), j->n_done, j->n_parts, (j->t_finish - j->t_submit) / 1e9);
    brk_waiters_poll(b, false);
}

void brk_jobs_retain(brk_t *b)
{
    uint64_t now = zp_wall_us(), keep_us = (uint64_t)b->retain_s * 1000000u;
    unsigned evicted = 0;
    while (b->fin_head && (b->n_fin > b->retain_jobs || now - b->fin_head->finish_wall_us > keep_us)) {
        brk_job_t *j = b->fin_head;
        if (b->jr && brk_jr_job_delete(b->jr, j->id) < 0) {
            b->jr_errors++;
            zp_log(ZP_LOG_ERROR, "job %llu: cannot drop it from the journal: %s", (unsigned long long)j->id, zp_err_msg());
            break;
        }
        compact(b, j);
        job_remove(b, j);
        brk_job_free(j);
        b->c.jobs_evicted++;
        evicted++;
    }
    if (evicted && b->jr) {
        if (brk_jr_meta_set(b->jr, "next_job_id", b->next_job_id) < 0) b->jr_errors++;
        brk_jr_compact(b->jr);
    }
    /* only the most recently finished keep their partitions in memory */
    size_t detail = 0;
    for (brk_job_t *j = b->fin_tail; j; j = j->prev) {
        if (!j->parts) break;
        if (++detail > BRK_FIN_DETAIL) compact(b, j);
    }
}

void brk_jobs_close(brk_t *b)
{
    for (int l = 0; l < 2; l++)
        for (brk_job_t *j = l ? b->fin_head : b->live, *n; j; j = n) {
            n = j->next;
            brk_job_free(j);
        }
    b->live = b->fin_head = b->fin_tail = NULL;
    free(b->h_id); free(b->h_rid);
    b->h_id = b->h_rid = NULL;
    b->h_cap = b->n_jobs = b->n_fin = 0;
    memset(b->jobs_by_state, 0, sizeof b->jobs_by_state);
}

/* ---------------------------------------------------------------- submit / cancel */
int brk_submit(brk_t *b, const zp_msg_submit_t *m, brk_job_t **jp, bool *existed)
{
    brk_job_t *old = brk_job_by_request(b, m->request_id.p, m->request_id.len);
    if (old) {
        *jp = old;
        *existed = true;
        return 0;
    }
    brk_job_t *j = calloc(1, sizeof *j);
    if (!j) return -ENOMEM;
    j->parts = calloc(m->n_wtns, sizeof *j->parts);
    j->request_id = zp_str_dup(m->request_id);
    j->zkey = zp_str_dup(m->zkey);
    j->r1cs = zp_str_dup(m->r1cs);
    j->wasm = zp_str_dup(m->wasm);
    if (!j->parts || !j->request_id || !j->zkey || !j->r1cs || !j->wasm) goto nomem;
    if (!b->next_job_id) b->next_job_id = 1;
    j->id = b->next_job_id;
    j->seq = ++b->job_seq;
    j->priority = m->priority;
    j->n_parts = (uint32_t)m->n_wtns;
    j->t_submit = zp_now_ns();
    for (uint32_t i = 0; i < j->n_parts; i++) {
        brk_part_t *p = &j->parts[i];
        p->job = j; p->idx = i; p->slot = -1; p->attempt = 1; p->t_submit = j->t_submit;
        if (!(p->wtns = zp_str_dup(m->wtns[i]))) goto nomem;
    }
    /* slots: its circuit must fit a slot class (doc/slot-protocol.md "Slot classes") */
    int rs = b->arena ? brk_job_size(b, j) : 0;
    if (rs < 0) {
        char why[800];
        snprintf(why, sizeof why, "%s", zp_err_msg());
        zp_log(ZP_LOG_WARN, "job %s refused: %s", j->request_id, why);
        brk_job_free(j);
        return zp_err_set(rs, "%s", why);
    }
    /* durable before the job id is acknowledged */
    if (b->jr && brk_jr_job_add(b->jr, j) < 0) {
        char why[600];
        snprintf(why, sizeof why, "%s", zp_err_msg());
        b->jr_errors++;
        zp_log(ZP_LOG_ERROR, "job %s refused: %s", j->request_id, why);
        brk_job_free(j);
        return zp_err_set(-EIO, "cannot record the job durably: %s", why);
    }
    if (brk_job_insert(b, j) < 0) goto nomem;
    for (uint32_t i = 0; i < j->n_parts; i++)
        if (brk_q_push(b, &j->parts[i], ZP_ROLE_SYNTH) < 0) {
            for (uint32_t k = 0; k < i; k++) brk_q_remove(b, &j->parts[k]);
            job_remove(b, j);
            goto nomem;
        }
    b->c.jobs_submitted++;
    *jp = j;
    *existed = false;
    zp_log(ZP_LOG_INFO, "job %llu (%s): %u partition(s), priority %s, zkey %s", (unsigned long long)j->id,
           j->request_id, j->n_parts, zp_prio_name(j->priority), j->zkey);
    return 0;
nomem:
    brk_job_free(j);
    return zp_err_set(-ENOMEM, "out of memory");
}

int brk_cancel(brk_t *b, brk_job_t *j, uint32_t *freed)
{
    *freed = 0;
    if (j->state != ZP_JOB_RUNNING) return 0;
    for (uint32_t i = 0; i < j->n_parts; i++) {
        brk_part_t *p = &j->parts[i];
        if (p->state == PS_DONE || p->state == PS_FAILED || p->state == PS_CANCELED) continue;
        brk_q_remove(b, p);
        if (p->state == PS_RUNNING && p->worker) {
            brk_worker_t *w = p->worker;
            for (unsigned k = 0; k < w->n_inflight; k++)
                if (w->inflight[k].part == p) {
                    w->inflight[k].part = NULL;   /* credit stays used until the worker reports it */
                    zp_msg_revoke_t rv = {.slot = w->inflight[k].slot, .gen = w->inflight[k].gen};
                    uint8_t *buf; size_t len;
                    if (zp_msg_revoke_encode(&buf, &len, &rv) == 0) brk_send(b, w->id, w->id_len, buf, len);
                }
        }
        p->worker = NULL;
        p->state = PS_CANCELED;
        /* the slot is reset and unbound; if a holder may still write it stays quarantined */
        if (p->slot >= 0) { brk_release_slot(b, p); (*freed)++; }
    }
    job_finish(b, j, ZP_JOB_CANCELED);
    zp_log(ZP_LOG_INFO, "job %llu canceled; %u slot(s) released", (unsigned long long)j->id, *freed);
    brk_waiters_poll(b, false);
    return 0;
}
