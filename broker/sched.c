/* sched.c - the broker's job table, per-stage queues, credit-based dispatch, DONE/FAIL
 * handling, requeue with a new generation, cancel.
 *
 * Slot protocol (the generation is the fencing token; shm.h):
 *   synth  dispatch: claim FREE -> (SYNTH, g)          worker seals -> (READY, g+1) = payload_gen
 *   gpu    dispatch: (READY, x) -> (PROVING, x+1)      worker commits RESULT -> (PROVED, y) = result_gen
 *   final  dispatch: (PROVED, y) -> (FINALIZING, y+1)  worker commits PROOF -> (FREE, z)
 * part->word_gen is always the generation the broker expects in the slot word. A requeue
 * resets the word (zp_shm_slot_reset) to the state the stage's queue needs, with a new
 * generation, so anything a stale holder still sends is dropped. Queues are unordered arrays;
 * dispatch takes the best by (priority, job age, partition index). Free slots gate synthesis
 * (backpressure); credits gate each worker. Tests: tests/ipc/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_int.h"
#include "broker/fleet.h"
#include "broker/journal.h"
#include "lib/util/util.h"

/* ---------------------------------------------------------------- journal hooks */
int brk_journal_part(brk_t *b, const brk_part_t *p)
{
    int rc = b->jr ? brk_jr_part(b->jr, p) : 0;
    if (rc < 0) {
        b->jr_errors++;
        zp_log(ZP_LOG_ERROR, "job %llu part %u: NOT DURABLE: %s", (unsigned long long)p->job->id, p->idx, zp_err_msg());
    }
    return rc;
}

int brk_journal_job(brk_t *b, const brk_job_t *j)
{
    int rc = b->jr ? brk_jr_job_state(b->jr, j) : 0;
    if (rc < 0) {
        b->jr_errors++;
        zp_log(ZP_LOG_ERROR, "job %llu: state %s NOT DURABLE: %s", (unsigned long long)j->id,
               zp_job_state_name(j->state), zp_err_msg());
    }
    return rc;
}

brk_job_t *brk_job_get(brk_t *b, uint64_t id)
{
    return id >= 1 && id <= b->n_jobs ? b->jobs[id - 1] : NULL;
}

int brk_q_push(brk_t *b, brk_part_t *p, unsigned stage)
{
    if (b->qn[stage] == b->qcap[stage]) {
        size_t nc = b->qcap[stage] ? b->qcap[stage] * 2 : 64;
        brk_part_t **q = realloc(b->q[stage], nc * sizeof *q);
        if (!q) return -ENOMEM;
        b->q[stage] = q;
        b->qcap[stage] = nc;
    }
    b->q[stage][b->qn[stage]++] = p;
    p->stage = stage;
    p->state = PS_QUEUED;
    p->queued = true;
    p->t_queued[stage] = zp_now_ns();
    return 0;
}

void brk_q_remove(brk_t *b, brk_part_t *p)
{
    if (!p->queued) return;
    brk_part_t **q = b->q[p->stage];
    for (size_t i = 0; i < b->qn[p->stage]; i++)
        if (q[i] == p) { q[i] = q[--b->qn[p->stage]]; break; }
    p->queued = false;
}

static bool better(const brk_part_t *x, const brk_part_t *y)
{
    if (x->job->priority != y->job->priority) return x->job->priority < y->job->priority;
    if (x->job->seq != y->job->seq) return x->job->seq < y->job->seq;
    return x->idx < y->idx;
}

static brk_worker_t *pick_worker(brk_t *b, unsigned role)
{
    brk_worker_t *best = NULL;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!w->used || !w->alive || w->role != role || w->n_inflight >= w->credits) continue;
        if (!best || w->credits - w->n_inflight > best->credits - best->n_inflight) best = w;
    }
    return best;
}

/* Free the slot a part holds (any state, at the generation we expect, or the one after a
 * commit the worker made just before we gave up on it). */
void brk_release_slot(brk_t *b, brk_part_t *p)
{
    if (p->slot < 0) return;
    uint32_t s = (uint32_t)p->slot;
    uint64_t w = zp_shm_slot_word_load(b->arena, s);
    uint64_t g = zp_shm_word_gen(w);
    if (!(zp_shm_word_state(w) == ZP_SLOT_FREE && g > p->word_gen)) {
        if (g < p->word_gen || g > p->word_gen + 1)
            zp_log(ZP_LOG_WARN, "slot %u at generation %llu, expected %llu: resetting anyway", s,
                   (unsigned long long)g, (unsigned long long)p->word_gen);
        if (zp_shm_slot_reset(b->arena, s, g, ZP_SLOT_FREE, NULL) < 0)
            zp_log(ZP_LOG_ERROR, "slot %u: reset to FREE failed: %s", s, zp_err_msg());
    }
    if (b->slot_part[s] == p) b->slot_part[s] = NULL;
    p->slot = -1;
}

static void append_reason(brk_part_t *p, const char *why)
{
    size_t old = p->reasons ? strlen(p->reasons) : 0;
    if (old > 6000) return;
    char *r = realloc(p->reasons, old + strlen(why) + 40);
    if (!r) return;
    p->reasons = r;
    sprintf(r + old, "%sattempt %u (%s): %s", old ? "; " : "", p->attempt, zp_role_name(p->stage), why);
}

void brk_job_check_finished(brk_t *b, brk_job_t *j)
{
    if (j->state != ZP_JOB_RUNNING || j->n_done + j->n_failed < j->n_parts) return;
    j->state = j->n_failed ? ZP_JOB_FAILED : ZP_JOB_DONE;
    j->t_finish = zp_now_ns();
    brk_journal_job(b, j);
    brk_fleet_job_finished(b, j);   /* fleet: a claimed partition's proof/failure to the queue */
    zp_log(ZP_LOG_INFO, "job %llu (%s) %s: %u/%u partitions proved in %.3f s", (unsigned long long)j->id,
           j->request_id, zp_job_state_name(j->state), j->n_done, j->n_parts, (j->t_finish - j->t_submit) / 1e9);
    brk_waiters_poll(b, false);
}

static void part_final_fail(brk_t *b, brk_part_t *p)
{
    brk_q_remove(b, p);
    brk_release_slot(b, p);
    p->state = PS_FAILED;
    p->job->n_failed++;
    b->c.parts_failed++;
    brk_journal_part(b, p);
    zp_log(ZP_LOG_WARN, "job %llu part %u failed: %s", (unsigned long long)p->job->id, p->idx, p->reasons);
    brk_job_check_finished(b, p->job);
}

void brk_part_failed(brk_t *b, brk_part_t *p, bool retryable, bool redo_synth, const char *why)
{
    brk_part_requeue(b, p, retryable, redo_synth, true, why);
}

/* the finalizer committed the proof (FINISHED at word_gen + 1) but its DONE did not reach us
 * (it died, or was declared dead, right after): take the proof from the slot */
static bool take_finished(brk_t *b, brk_part_t *p)
{
    uint32_t s = (uint32_t)p->slot;
    uint64_t w = zp_shm_slot_word_load(b->arena, s), g = zp_shm_word_gen(w);
    if (zp_shm_word_state(w) != ZP_SLOT_FINISHED || g != p->word_gen + 1) return false;
    char *pj, *pu;
    uint8_t bin[ZP_MSG_BIN_MAX];
    size_t bl;
    if (zp_shm_final_read(&pj, &pu, bin, sizeof bin, &bl, b->arena, s, g) < 0) return false;
    if (strlen(pj) > ZP_MSG_JSON_MAX || strlen(pu) > ZP_MSG_JSON_MAX) { free(pj); free(pu); return false; }
    zp_log(ZP_LOG_INFO, "job %llu part %u: slot %u FINISHED by its finalizer before its DONE arrived: proof taken "
           "from the slot", (unsigned long long)p->job->id, p->idx, s);
    p->word_gen = g;
    brk_part_proved(b, p, pj, pu, bin, bl);
    return true;
}

void brk_part_requeue(brk_t *b, brk_part_t *p, bool retryable, bool redo_synth, bool count_attempt, const char *why)
{
    unsigned stage = p->stage;
    if (stage == ZP_ROLE_FINAL && p->slot >= 0 && take_finished(b, p)) return;
    if (count_attempt) append_reason(p, why);
    p->worker = NULL;
    p->adopt_deadline = 0;
    if (!retryable || (count_attempt && p->attempt >= b->max_attempts)) {
        if (retryable) {
            char m[64];
            snprintf(m, sizeof m, "gave up after %u attempts", p->attempt);
            append_reason(p, m);
        }
        part_final_fail(b, p);
        return;
    }
    b->c.requeued[stage]++;
    if (count_attempt) {
        p->attempt++;
        brk_journal_part(b, p);     /* attempts and reasons survive a restart (max_attempts holds) */
    }
    /* where to restart: synth needs no slot; gpu needs the sealed payload (READY); final needs
     * the committed G1 result (PROVED). A slot that moved on (the holder committed just before
     * it was declared dead) is taken as it is. */
    unsigned want = ZP_SLOT_FREE;
    if (!redo_synth && stage == ZP_ROLE_GPU) want = ZP_SLOT_READY;
    if (!redo_synth && stage == ZP_ROLE_FINAL) want = ZP_SLOT_PROVED;
    if (p->slot >= 0 && want != ZP_SLOT_FREE) {
        uint32_t s = (uint32_t)p->slot;
        uint64_t w = zp_shm_slot_word_load(b->arena, s), g = zp_shm_word_gen(w), ng;
        unsigned st = zp_shm_word_state(w);
        if (g == p->word_gen + 1 && stage == ZP_ROLE_GPU && st == ZP_SLOT_PROVED) {
            /* the GPU committed its result before dying: go on to the finalizer */
            p->result_gen = g; p->word_gen = g;
            brk_q_push(b, p, ZP_ROLE_FINAL);
            return;
        }
        if ((g == p->word_gen || g == p->word_gen + 1) && zp_shm_slot_reset(b->arena, s, g, want, &ng) == 0) {
            p->word_gen = ng;
            brk_q_push(b, p, stage);
            return;
        }
        zp_log(ZP_LOG_WARN, "job %llu part %u: slot %u at an unexpected generation: redoing synthesis",
               (unsigned long long)p->job->id, p->idx, s);
    }
    if (p->slot >= 0 && stage == ZP_ROLE_SYNTH) {
        uint32_t s = (uint32_t)p->slot;
        uint64_t w = zp_shm_slot_word_load(b->arena, s);
        if (zp_shm_word_state(w) == ZP_SLOT_READY && zp_shm_word_gen(w) == p->word_gen + 1) {
            /* the synth sealed before dying: the payload is good */
            p->payload_gen = p->word_gen = zp_shm_word_gen(w);
            brk_q_push(b, p, ZP_ROLE_GPU);
            return;
        }
    }
    brk_release_slot(b, p);
    brk_q_push(b, p, ZP_ROLE_SYNTH);
}

/* ---------------------------------------------------------------- submit / cancel */
static void free_job(brk_job_t *j)
{
    if (j->parts)
        for (uint32_t i = 0; i < j->n_parts; i++) free(j->parts[i].wtns);
    free(j->parts); free(j->request_id); free(j->zkey); free(j->r1cs); free(j);
}

int brk_submit(brk_t *b, const zp_msg_submit_t *m, brk_job_t **jp, bool *existed)
{
    for (size_t i = 0; i < b->n_jobs; i++)
        if (zp_str_eq(m->request_id, b->jobs[i]->request_id)) {
            *jp = b->jobs[i];
            *existed = true;
            return 0;
        }
    if (b->n_jobs == b->cap_jobs) {
        size_t nc = b->cap_jobs ? b->cap_jobs * 2 : 64;
        brk_job_t **nj = realloc(b->jobs, nc * sizeof *nj);
        if (!nj) return -ENOMEM;
        b->jobs = nj;
        b->cap_jobs = nc;
    }
    brk_job_t *j = calloc(1, sizeof *j);
    if (!j) return -ENOMEM;
    j->parts = calloc(m->n_wtns, sizeof *j->parts);
    j->request_id = zp_str_dup(m->request_id);
    j->zkey = zp_str_dup(m->zkey);
    j->r1cs = zp_str_dup(m->r1cs);
    if (!j->parts || !j->request_id || !j->zkey || !j->r1cs) goto nomem;
    j->id = b->n_jobs + 1;
    j->seq = ++b->job_seq;
    j->priority = m->priority;
    j->n_parts = (uint32_t)m->n_wtns;
    j->t_submit = zp_now_ns();
    for (uint32_t i = 0; i < j->n_parts; i++) {
        brk_part_t *p = &j->parts[i];
        p->job = j; p->idx = i; p->slot = -1; p->attempt = 1; p->t_submit = j->t_submit;
        if (!(p->wtns = zp_str_dup(m->wtns[i]))) goto nomem;
    }
    /* durable before the job id is acknowledged */
    if (b->jr && brk_jr_job_add(b->jr, j) < 0) {
        char why[600];
        snprintf(why, sizeof why, "%s", zp_err_msg());
        b->jr_errors++;
        zp_log(ZP_LOG_ERROR, "job %s refused: %s", j->request_id, why);
        free_job(j);
        return zp_err_set(-EIO, "cannot record the job durably: %s", why);
    }
    for (uint32_t i = 0; i < j->n_parts; i++)
        if (brk_q_push(b, &j->parts[i], ZP_ROLE_SYNTH) < 0) {
            for (uint32_t k = 0; k < i; k++) brk_q_remove(b, &j->parts[k]);
            goto nomem;
        }
    b->jobs[b->n_jobs++] = j;
    b->c.jobs_submitted++;
    *jp = j;
    *existed = false;
    zp_log(ZP_LOG_INFO, "job %llu (%s): %u partition(s), priority %s, zkey %s", (unsigned long long)j->id,
           j->request_id, j->n_parts, zp_prio_name(j->priority), j->zkey);
    return 0;
nomem:
    free_job(j);
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
        if (p->slot >= 0) { brk_release_slot(b, p); (*freed)++; }
        p->worker = NULL;
        p->state = PS_CANCELED;
    }
    j->state = ZP_JOB_CANCELED;
    j->t_finish = zp_now_ns();
    brk_journal_job(b, j);
    zp_log(ZP_LOG_INFO, "job %llu canceled; %u slot(s) freed", (unsigned long long)j->id, *freed);
    brk_waiters_poll(b, false);
    return 0;
}

/* ---------------------------------------------------------------- dispatch */
static int assign(brk_t *b, brk_worker_t *w, brk_part_t *p, unsigned stage)
{
    brk_job_t *j = p->job;
    uint32_t s = (uint32_t)p->slot;
    zp_msg_assign_t m = {.slot = s, .gen = p->word_gen, .in_gen = stage == ZP_ROLE_FINAL ? p->result_gen : p->payload_gen,
                         .payload_gen = p->payload_gen, .stage = stage, .job = j->id, .part = p->idx,
                         .attempt = p->attempt, .priority = j->priority, .zkey = zp_str(j->zkey),
                         .r1cs = zp_str(j->r1cs), .wtns = zp_str(stage == ZP_ROLE_SYNTH ? p->wtns : ""),
                         .epoch = b->epoch};
    zp_shm_slot_t *d = zp_shm_slot(b->arena, s);
    d->job_id = j->id; d->part_idx = p->idx; d->attempt = p->attempt; d->priority = j->priority;
    zp_shm_slot_set_owner(b->arena, s, stage == ZP_ROLE_SYNTH ? ZP_SLOT_SYNTH : stage == ZP_ROLE_GPU ? ZP_SLOT_PROVING : ZP_SLOT_FINALIZING,
                          p->word_gen, w->pid, w->incarnation, 0);
    uint8_t *buf; size_t len;
    int rc = zp_msg_assign_encode(&buf, &len, &m);
    if (rc < 0) return rc;
    if (w->n_inflight >= BRK_MAX_INFLIGHT) { free(buf); return -ENOSPC; }
    w->inflight[w->n_inflight++] = (brk_inflight_t){s, p->word_gen, p};
    p->state = PS_RUNNING;
    p->stage = stage;
    p->worker = w;
    p->t_assign[stage] = zp_now_ns();
    p->wpid[stage] = w->pid;
    b->c.assigns++;
    rc = brk_send(b, w->id, w->id_len, buf, len);
    if (rc < 0) {
        /* the worker is gone: everything it held (this part included) is requeued */
        brk_worker_dead(b, w, rc == -EHOSTUNREACH ? "unreachable (send failed)" : "send failed", false);
        return rc;
    }
    return 0;
}

static brk_part_t *q_best(brk_t *b, unsigned stage, size_t *at)
{
    brk_part_t *best = NULL;
    for (size_t i = 0; i < b->qn[stage]; i++)
        if (!best || better(b->q[stage][i], best)) { best = b->q[stage][i]; *at = i; }
    return best;
}

void brk_dispatch(brk_t *b)
{
    /* downstream first: finishing partitions frees slots */
    static const unsigned order[] = {ZP_ROLE_FINAL, ZP_ROLE_GPU, ZP_ROLE_SYNTH};
    for (unsigned oi = 0; oi < 3; oi++) {
        unsigned stage = order[oi];
        while (b->qn[stage]) {
            brk_worker_t *w = pick_worker(b, stage);
            if (!w) break;
            size_t at = 0;
            brk_part_t *p = q_best(b, stage, &at);
            uint64_t ng;
            int rc;
            if (stage == ZP_ROLE_SYNTH) {
                /* only slots no partition is bound to: a finalizer frees its slot in shm
                 * before its DONE arrives, and the slot stays bound until then */
                uint32_t s = 0;
                rc = -EAGAIN;
                for (uint32_t k = 0; k < b->n_slots && rc < 0; k++) {
                    s = (b->claim_hint + k) % b->n_slots;
                    if (!b->slot_part[s] && zp_shm_word_state(zp_shm_slot_word_load(b->arena, s)) == ZP_SLOT_FREE)
                        rc = zp_shm_slot_claim_at(b->arena, s, &ng);
                }
                if (rc < 0) break;            /* backpressure: no free slot */
                b->claim_hint = s + 1;
                p->slot = (int32_t)s;
                b->slot_part[s] = p;
                p->payload_gen = p->result_gen = 0;
            } else {
                unsigned from = stage == ZP_ROLE_GPU ? ZP_SLOT_READY : ZP_SLOT_PROVED;
                unsigned to = stage == ZP_ROLE_GPU ? ZP_SLOT_PROVING : ZP_SLOT_FINALIZING;
                rc = zp_shm_slot_transition(b->arena, (uint32_t)p->slot, from, p->word_gen, to, &ng);
                if (rc < 0) {
                    b->q[stage][at] = b->q[stage][--b->qn[stage]];
                    p->queued = false;
                    zp_log(ZP_LOG_WARN, "job %llu part %u: slot %d moved under us (%s): redoing synthesis",
                           (unsigned long long)p->job->id, p->idx, p->slot, zp_err_msg());
                    brk_release_slot(b, p);
                    brk_q_push(b, p, ZP_ROLE_SYNTH);
                    continue;
                }
            }
            p->word_gen = ng;
            b->q[stage][at] = b->q[stage][--b->qn[stage]];
            p->queued = false;
            assign(b, w, p, stage);
        }
    }
}

/* ---------------------------------------------------------------- DONE / FAIL */
static brk_part_t *take_inflight(brk_t *b, brk_worker_t *w, uint32_t slot, uint64_t gen, bool *found)
{
    *found = false;
    for (unsigned i = 0; i < w->n_inflight; i++)
        if (w->inflight[i].slot == slot && w->inflight[i].gen == gen) {
            brk_part_t *p = w->inflight[i].part;
            w->inflight[i] = w->inflight[--w->n_inflight];
            *found = true;
            if (!p || p->state != PS_RUNNING || p->worker != w || p->slot != (int32_t)slot || p->word_gen != gen)
                return NULL;
            return p;
        }
    (void)b;
    return NULL;
}

static void record_busy(brk_worker_t *w, uint64_t s, uint64_t e)
{
    w->busy[w->busy_head] = (brk_interval_t){s, e};
    w->busy_head = (w->busy_head + 1) % BRK_BUSY_RING;
    if (w->busy_n < BRK_BUSY_RING) w->busy_n++;
}

void brk_on_done(brk_t *b, brk_worker_t *w, const zp_msg_done_t *m)
{
    bool found;
    brk_part_t *p = take_inflight(b, w, m->slot, m->gen, &found);
    record_busy(w, m->t_start, m->t_end);
    w->n_done++;
    if (!p) {
        b->c.stale++;
        zp_log(ZP_LOG_INFO, "stale DONE dropped (slot %u gen %llu from %s #%u)", m->slot, (unsigned long long)m->gen,
               zp_role_name(w->role), w->instance);
        return;
    }
    unsigned stage = p->stage;
    uint64_t now = zp_now_ns();
    p->t_start[stage] = m->t_start; p->t_end[stage] = m->t_end; p->t_done[stage] = now;
    memcpy(p->dt[stage], m->dt, sizeof m->dt);
    p->worker = NULL;
    /* the finalizer commits to FINISHED (the proof kept in the slot until we journaled it), or
     * to FREE when the proof did not fit into the slot */
    static const unsigned next_state[] = {ZP_SLOT_READY, ZP_SLOT_PROVED, ZP_SLOT_FINISHED};
    bool moved = zp_shm_slot_check(b->arena, m->slot, next_state[stage], m->new_gen) == 0 ||
                 (stage == ZP_ROLE_FINAL && zp_shm_slot_check(b->arena, m->slot, ZP_SLOT_FREE, m->new_gen) == 0);
    if (!moved || m->new_gen != m->gen + 1) {
        char why[160];
        snprintf(why, sizeof why, "DONE claims generation %llu but the slot disagrees", (unsigned long long)m->new_gen);
        b->c.stale++;
        brk_part_failed(b, p, true, true, why);
        return;
    }
    p->word_gen = m->new_gen;
    if (stage == ZP_ROLE_SYNTH) {
        p->payload_gen = m->new_gen;
        brk_q_push(b, p, ZP_ROLE_GPU);
    } else if (stage == ZP_ROLE_GPU) {
        p->result_gen = m->new_gen;
        brk_q_push(b, p, ZP_ROLE_FINAL);
    } else {
        char *pj = m->proof_json.len ? zp_str_dup(m->proof_json) : NULL;
        char *pu = m->public_json.len ? zp_str_dup(m->public_json) : NULL;
        if (!pj || !pu) {
            free(pj); free(pu);
            b->c.malformed++;
            brk_release_slot(b, p);
            brk_part_failed(b, p, true, true, "finalizer sent no proof");
            return;
        }
        brk_part_proved(b, p, pj, pu, m->proof_bin, m->proof_bin_len);
    }
}

void brk_part_proved(brk_t *b, brk_part_t *p, char *proof_json, char *public_json, const uint8_t *bin, size_t bin_len)
{
    free(p->proof_json); free(p->public_json);
    p->proof_json = proof_json;
    p->public_json = public_json;
    p->proof_bin_len = bin_len <= sizeof p->proof_bin ? bin_len : 0;
    if (p->proof_bin_len) memcpy(p->proof_bin, bin, p->proof_bin_len);
    p->state = PS_DONE;
    p->worker = NULL;
    p->adopt_deadline = 0;
    p->job->n_done++;
    b->c.parts_done++;
    brk_journal_part(b, p);   /* before any AWAIT can see the proof, and before the slot is freed */
    if (p->slot >= 0) {
        uint32_t s = (uint32_t)p->slot;
        /* FINISHED at our generation: free it (fenced); FREE: the finalizer freed it already */
        if (zp_shm_slot_check(b->arena, s, ZP_SLOT_FINISHED, p->word_gen) == 0 &&
            zp_shm_slot_transition(b->arena, s, ZP_SLOT_FINISHED, p->word_gen, ZP_SLOT_FREE, NULL) < 0)
            zp_log(ZP_LOG_ERROR, "slot %u: FINISHED -> FREE failed: %s", s, zp_err_msg());
        if (b->slot_part[s] == p) b->slot_part[s] = NULL;
        p->slot = -1;
    }
    brk_job_check_finished(b, p->job);
}

void brk_on_fail(brk_t *b, brk_worker_t *w, const zp_msg_fail_t *m)
{
    bool found;
    brk_part_t *p = take_inflight(b, w, m->slot, m->gen, &found);
    record_busy(w, m->t_start, m->t_end);
    w->n_fail++;
    if (!p) {
        b->c.stale++;
        return;
    }
    char why[ZP_MSG_TEXT_MAX + 64];
    snprintf(why, sizeof why, "%.*s", (int)m->message.len, m->message.p);
    zp_log(ZP_LOG_WARN, "job %llu part %u failed at %s (attempt %u, %s): %s", (unsigned long long)p->job->id, p->idx,
           zp_role_name(p->stage), p->attempt, m->retryable ? "retryable" : "final", why);
    /* the worker may have moved the slot to FAILED (gen + 1): take that as the current word */
    uint64_t wd = zp_shm_slot_word_load(b->arena, m->slot);
    if (zp_shm_word_state(wd) == ZP_SLOT_FAILED && zp_shm_word_gen(wd) == p->word_gen + 1) p->word_gen++;
    /* handed back unstarted by the stage harness (proto/peer.c sets FAIL.unstarted: revoked,
     * or the worker is shutting down, FAIL.stopping): no attempt was spent. A worker that is
     * shutting down gets no more work. The message text is for people only. */
    if (m->unstarted && m->retryable && !m->payload_bad) {
        if (m->stopping) w->alive = false;
        brk_part_requeue(b, p, true, false, false, why);
        return;
    }
    bool redo = m->payload_bad || (p->stage == ZP_ROLE_FINAL && m->code == ZP_EVERIFY);
    if (p->stage == ZP_ROLE_FINAL && m->code == ZP_EVERIFY) {
        /* a bad G1 result: prove it again from the (still sealed) payload */
        p->stage = ZP_ROLE_GPU;
        redo = false;
    }
    brk_part_failed(b, p, m->retryable, redo, why);
}
