/* recover.c - a restarted broker rebuilds its queues from the journal and the shm arena.
 *
 * doc/slot-protocol.md, "Recovery". brk_jr_load has put every journaled job back in the job
 * table (unfinished parts PS_QUEUED, no slot, not queued). If the arena survived (the broker
 * died, its workers did not), each slot's descriptor names the (job, partition) it belongs to;
 * a slot is kept only if that partition is journaled and unfinished and the slot's contents
 * check out. The stamps need not equal the word's generation (a requeue after a death resets
 * the word to a new generation and keeps the stamps): a stamp is good if it is not newer than
 * the word and its checksum holds:
 *   READY       the payload's seal stamp, mask and vector offsets check out -> gpu queue. The
 *               payload's checksum (O(n): 16 GiB at 2^27) is not computed here, on the broker's
 *               one thread: the GPU worker verifies it (staging thread) before it computes and
 *               the finalizer again before it releases the proof; a bad payload FAILs there with
 *               payload_bad and goes back to synthesis, as a bad one found here would
 *   PROVED      the same, plus the G1 result area's stamp (newer than the seal) -> final queue
 *   FINISHED    the finalizer's proof (zp_shm_final_read: record stamped with the current
 *               generation, lengths and text checksum check out) -> journaled as done, slot
 *               freed; a bad one -> PROVED again, final queue (no attempt charged)
 *   SYNTH/PROVING/FINALIZING whose owner process is alive: kept RUNNING without a worker for a
 *               grace period; the owner's HELLO listing (slot, generation) adopts it
 *               (brk_recover_adopt); otherwise it is requeued at that stage (brk_part_requeue:
 *               PROVING -> READY, FINALIZING -> PROVED, SYNTH -> FREE), without charging an
 *               attempt; if the owner is dead: the same at once, with attempt+1
 *   anything else bound to a partition: reset to FREE (new generation), synth, attempt+1
 * Slots bound to nothing are reset to FREE. Unfinished partitions without a slot go to the
 * synth queue at their journaled attempt. Every reset bumps the generation, so anything a
 * stale holder still sends is dropped. A descriptor whose owner (the last holder) is still
 * alive keeps that owner as the slot's holder: quarantined until it reports or is gone.
 * Tests: tests/test_model.c (restart scenarios), tests/ipc/durable*.sh. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"

static uint64_t grace_ns(const brk_t *b)
{
    uint64_t g = (uint64_t)b->heartbeat_ms * b->liveness * 2u * 1000000u;
    return g < 2000000000u ? 2000000000u : g;
}

/* a live process has that pid (not a zombie); *start: its start time */
static bool pid_alive(uint64_t pid, uint64_t *start)
{
    *start = 0;
    if (pid <= 1 || pid > 0x7fffffff || brk_pid_gone((uint32_t)pid, 0)) return false;
    char st;
    if (zp_proc_stat((uint32_t)pid, &st, start) < 0) *start = 0;
    zp_err_clear();
    return true;
}

/* the unfinished, unbound partition slot s names, or NULL */
/* the descriptor's owner (the last holder) is alive: it stays the slot's holder (slots.c) */
static void recover_holder(brk_t *b, uint32_t s, unsigned st, uint64_t g)
{
    zp_shm_slot_t *d = zp_shm_slot(b->arena, s);
    uint64_t pid = atomic_load(&d->owner_pid), inc = atomic_load(&d->owner_inc);
    brk_slot_t *sl = &b->slots[s];
    uint64_t start;
    if (!pid || !pid_alive(pid, &start)) {
        zp_shm_slot_clear_owner(b->arena, s);
        return;
    }
    bool busy = st == ZP_SLOT_SYNTH || st == ZP_SLOT_PROVING || st == ZP_SLOT_FINALIZING;
    sl->held = true;
    sl->h_pid = (uint32_t)pid;
    sl->h_start = start;   /* from now on a later process with this pid is not the holder */
    sl->h_inc = inc;
    sl->h_role = busy ? (st == ZP_SLOT_SYNTH ? ZP_ROLE_SYNTH : st == ZP_SLOT_PROVING ? ZP_ROLE_GPU : ZP_ROLE_FINAL)
                      : ZP_NROLES;   /* unknown: released by its report, its HELLO or its exit */
    sl->h_instance = UINT32_MAX;
    sl->h_gen = busy ? g : 0;
    sl->h_since = zp_now_ns();
    sl->lease = 0;
}

static brk_part_t *slot_owner_part(brk_t *b, uint32_t s)
{
    const zp_shm_slot_t *d = zp_shm_slot(b->arena, s);
    uint64_t job = d->job_id;            /* untrusted: read once */
    uint32_t idx = d->part_idx;
    brk_job_t *j = brk_job_get(b, job);
    if (!j || j->state != ZP_JOB_RUNNING || idx >= j->n_parts) return NULL;
    brk_part_t *p = &j->parts[idx];
    return p->state == PS_QUEUED && p->slot < 0 ? p : NULL;
}

static void recover_slot(brk_t *b, uint32_t s, uint64_t now, unsigned *kept, unsigned *adopt, unsigned *reset)
{
    uint64_t w = zp_shm_slot_word_load(b->arena, s), g = zp_shm_word_gen(w);
    unsigned st = zp_shm_word_state(w);
    brk_part_t *p = slot_owner_part(b, s);
    const zp_shm_slot_t *d = zp_shm_slot(b->arena, s);
    uint64_t owner = atomic_load(&zp_shm_slot(b->arena, s)->owner_pid);   /* before recover_holder */
    recover_holder(b, s, st, g);
    if (!p || st == ZP_SLOT_FREE) {
        if (st != ZP_SLOT_FREE) {
            zp_log(ZP_LOG_INFO, "recovery: slot %u (%s, gen %llu) belongs to no unfinished partition: freed", s,
                   zp_shm_state_name(st), (unsigned long long)g);
            if (zp_shm_slot_reset(b->arena, s, g, ZP_SLOT_FREE, NULL) < 0)
                zp_log(ZP_LOG_ERROR, "recovery: slot %u: reset failed: %s", s, zp_err_msg());
            (*reset)++;
        }
        return;
    }
    p->slot = (int32_t)s;
    b->slots[s].part = p;
    p->word_gen = g;
    uint64_t pg = d->payload_gen, rg = zp_shm_area_gen(b->arena, s, ZP_SHM_AREA_RESULT);
    p->payload_gen = pg;
    p->result_gen = 0;
    uint8_t res[ZP_SHM_RESULT_BYTES];
    size_t rl = 0;
    const char *why = NULL;
    switch (st) {
    case ZP_SLOT_READY:
        if (pg && pg <= g && zp_shm_payload_stamp(b->arena, s, pg) == 0) {
            zp_log(ZP_LOG_INFO, "recovery: job %llu part %u: slot %u READY, payload verifies (seal stamp; the gpu worker checks the sum): on to the gpu",
                   (unsigned long long)p->job->id, p->idx, s);
            brk_q_push(b, p, ZP_ROLE_GPU);
            (*kept)++;
            return;
        }
        p->stage = ZP_ROLE_GPU;
        why = "sealed payload did not verify after a broker restart";
        break;
    case ZP_SLOT_PROVED:
        if (rg && rg <= g && pg && pg < rg &&
            zp_shm_area_read(b->arena, s, ZP_SHM_AREA_RESULT, rg, res, sizeof res, &rl) == 0 &&
            zp_shm_payload_stamp(b->arena, s, pg) == 0) {
            zp_log(ZP_LOG_INFO, "recovery: job %llu part %u: slot %u PROVED, result verifies (the finalizer checks the payload sum): on to the finalizer",
                   (unsigned long long)p->job->id, p->idx, s);
            p->result_gen = rg;
            brk_q_push(b, p, ZP_ROLE_FINAL);
            (*kept)++;
            return;
        }
        p->stage = ZP_ROLE_FINAL;
        why = "G1 result or payload did not verify after a broker restart";
        break;
    case ZP_SLOT_FINISHED: {
        /* the finalizer finished while we were down (its DONE is lost): journal the proof from the slot */
        char *pj, *pu;
        uint8_t bin[ZP_MSG_BIN_MAX];
        size_t bl;
        if (zp_shm_final_read(&pj, &pu, bin, sizeof bin, &bl, b->arena, s, g) == 0 && strlen(pj) <= ZP_MSG_JSON_MAX &&
            strlen(pu) <= ZP_MSG_JSON_MAX) {
            zp_log(ZP_LOG_INFO, "recovery: job %llu part %u: slot %u FINISHED, proof verifies: journaled from the slot",
                   (unsigned long long)p->job->id, p->idx, s);
            brk_part_proved(b, p, pj, pu, bin, bl);
            (*kept)++;
            return;
        }
        if (pj) { free(pj); free(pu); }
        /* the proof in the slot is unusable: finalize again from the G1 result (the finalizer
         * checks it and the sealed payload; a bad one goes back further) */
        zp_log(ZP_LOG_WARN, "recovery: job %llu part %u: slot %u FINISHED but its proof does not check out (%s): "
               "finalizing again", (unsigned long long)p->job->id, p->idx, s, zp_err_msg());
        p->stage = ZP_ROLE_FINAL;
        p->result_gen = rg;
        p->state = PS_RUNNING;
        p->worker = NULL;
        (*reset)++;
        brk_part_requeue(b, p, true, false, false, "finished proof unusable after a broker restart");
        return;
    }
    case ZP_SLOT_SYNTH: case ZP_SLOT_PROVING: case ZP_SLOT_FINALIZING:
        p->stage = st == ZP_SLOT_SYNTH ? ZP_ROLE_SYNTH : st == ZP_SLOT_PROVING ? ZP_ROLE_GPU : ZP_ROLE_FINAL;
        if (st == ZP_SLOT_FINALIZING) p->result_gen = rg;
        p->state = PS_RUNNING;
        p->worker = NULL;
        uint64_t ostart;
        bool alive = pid_alive(owner, &ostart);
        zp_log(ZP_LOG_INFO, "recovery: job %llu part %u: slot %u %s gen %llu, owner pid %llu %s", (unsigned long long)p->job->id,
               p->idx, s, zp_shm_state_name(st), (unsigned long long)g, (unsigned long long)owner,
               alive ? "alive: waiting for its HELLO" : "gone: requeueing at its stage");
        if (alive) {
            p->adopt_deadline = now + grace_ns(b);
            (*adopt)++;
            return;
        }
        (*reset)++;
        brk_part_fail_class(b, p, ZP_FAIL_WORKER, false, "its worker died with the broker");
        return;
    default:
        p->stage = ZP_ROLE_SYNTH;
        why = "slot lost in a broker restart";
    }
    (*reset)++;
    zp_log(ZP_LOG_WARN, "recovery: job %llu part %u: slot %u (%s): %s", (unsigned long long)p->job->id, p->idx, s,
           zp_shm_state_name(st), why);
    brk_part_failed(b, p, true, true, why);
}

int brk_recover(brk_t *b, bool arena_reused)
{
    unsigned kept = 0, adopt = 0, reset = 0, queued = 0, unfinished = 0;
    uint64_t now = zp_now_ns();
    /* a job whose last partition finished just before the crash */
    for (brk_job_t *j = b->live, *n; j; j = n) { n = j->next; brk_job_check_finished(b, j); }
    if (arena_reused)
        for (uint32_t s = 0; s < b->n_slots; s++) recover_slot(b, s, now, &kept, &adopt, &reset);
    for (brk_job_t *j = b->live; j; j = j->next) {
        if (j->state != ZP_JOB_RUNNING) continue;
        unfinished++;
        for (uint32_t k = 0; k < j->n_parts; k++) {
            brk_part_t *p = &j->parts[k];
            if (p->state != PS_QUEUED || p->queued || p->slot >= 0) continue;
            int rc = brk_q_push(b, p, ZP_ROLE_SYNTH);
            if (rc < 0) return zp_err_set(rc, "recovery: out of memory");
            queued++;
        }
    }
    if (b->n_jobs)
        zp_log(ZP_LOG_INFO, "recovery: %zu journaled job(s), %u unfinished; arena %s: %u slot(s) continue, %u await "
               "their worker, %u reset; %u partition(s) queued for synthesis", b->n_jobs, unfinished,
               arena_reused ? "reused" : "new", kept, adopt, reset, queued);
    return 0;
}

void brk_recover_expire(brk_t *b)
{
    uint64_t now = zp_now_ns();
    for (uint32_t s = 0; s < b->n_slots; s++) {
        brk_part_t *p = b->slots[s].part;
        if (!p || p->state != PS_RUNNING || p->worker || !p->adopt_deadline || now < p->adopt_deadline) continue;
        p->adopt_deadline = 0;
        /* its owner was alive at recovery and did not list it: it dropped the task unstarted
         * (a RESET drops queued work) or died since; no attempt is charged for that */
        zp_log(ZP_LOG_INFO, "job %llu part %u: slot %u not reclaimed after the broker restart: requeueing",
               (unsigned long long)p->job->id, p->idx, s);
        brk_part_requeue(b, p, true, false, false, "not reclaimed by its worker after a broker restart");
    }
}

brk_part_t *brk_recover_adopt(brk_t *b, brk_worker_t *w, uint32_t slot, uint64_t gen)
{
    if (slot >= b->n_slots) return NULL;
    brk_part_t *p = b->slots[slot].part;
    if (!p || p->state != PS_RUNNING || p->worker || !p->adopt_deadline || p->word_gen != gen || p->stage != w->role)
        return NULL;
    if (zp_shm_slot_check(b->arena, slot, p->stage == ZP_ROLE_SYNTH ? ZP_SLOT_SYNTH :
                          p->stage == ZP_ROLE_GPU ? ZP_SLOT_PROVING : ZP_SLOT_FINALIZING, gen) < 0)
        return NULL;
    p->worker = w;
    p->adopt_deadline = 0;
    p->wpid[p->stage] = w->pid;
    p->winc[p->stage] = w->incarnation;
    brk_slot_hold(b, slot, w, gen, brk_lease_ns(b, p->job, p->stage));
    zp_log(ZP_LOG_INFO, "job %llu part %u: slot %u gen %llu adopted by %s worker #%u pid %u", (unsigned long long)p->job->id,
           p->idx, slot, (unsigned long long)gen, zp_role_name(w->role), w->instance, w->pid);
    return p;
}
