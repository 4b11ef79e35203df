/* slots.c - who may write into a slot: holders, quarantine and leases (doc/slot-protocol.md,
 * "Holders and quarantine", "Leases").
 *
 * Invariant: at most one process may write into a slot at any time. The broker records the
 * holder of each slot when it assigns it (brk_slot_hold) and forgets it only when that process
 * has reported on the assignment (DONE/FAIL/hand-back, even one that arrives stale) or is known
 * gone: a worker with the same (role, instance) said HELLO with a new incarnation, the worker
 * with that incarnation said HELLO without listing the slot, or its pid no longer exists.
 * A slot held by a process that no longer has a live assignment there (canceled, requeued,
 * declared dead, lease expired) is quarantined: dispatch does not give it to anyone. The holder
 * is mirrored in the descriptor's owner fields (zp_shm_slot_set_owner at assignment,
 * zp_shm_slot_clear_owner at release; resets keep it), so a restarted broker keeps the
 * quarantine (recover.c).
 * Leases: every assignment gets a deadline (brk_lease_ns: base + per 2^20 domain elements, per
 * stage); past it the holder is declared dead with kill_it = true (its supervisor fences it) and
 * what it held is requeued without charging the partitions (worker class).
 * Tests: tests/test_model.c (quarantine, lease and restart scenarios, seeded model). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"

uint64_t brk_lease_ns(const brk_t *b, const brk_job_t *j, unsigned stage)
{
    if (stage >= ZP_NROLES) stage = ZP_ROLE_GPU;
    uint64_t dom = j && j->domain ? j->domain : b->max_domain;
    uint64_t ms = b->lease_base_ms[stage] + ((uint64_t)b->lease_per_m_ms[stage] * dom >> 20);
    return ms * 1000000u;
}

void brk_slot_hold(brk_t *b, uint32_t s, const brk_worker_t *w, uint64_t gen, uint64_t lease)
{
    brk_slot_t *sl = &b->slots[s];
    uint64_t now = zp_now_ns();
    sl->held = true;
    sl->h_role = w->role; sl->h_instance = w->instance; sl->h_pid = w->pid;
    sl->h_inc = w->incarnation; sl->h_gen = gen; sl->h_since = now;
    sl->lease = lease ? now + lease : 0;
    static const unsigned busy[ZP_NROLES] = {ZP_SLOT_SYNTH, ZP_SLOT_PROVING, ZP_SLOT_FINALIZING};
    zp_shm_slot_set_owner(b->arena, s, busy[w->role < ZP_NROLES ? w->role : 0], gen, w->pid, w->incarnation,
                          sl->lease);
}

/* the slot's holder still has the live assignment it was given */
static bool live(const brk_t *b, uint32_t s)
{
    const brk_slot_t *sl = &b->slots[s];
    const brk_part_t *p = sl->part;
    return sl->held && p && p->state == PS_RUNNING && p->worker && p->worker->incarnation == sl->h_inc &&
           p->slot == (int32_t)s && p->word_gen == sl->h_gen;
}

static void release(brk_t *b, uint32_t s, const char *why)
{
    brk_slot_t *sl = &b->slots[s];
    if (!sl->held) return;
    if (!live(b, s)) {
        b->c.quarantine_released++;
        zp_log(ZP_LOG_INFO, "slot %u: holder pid %u (incarnation %016llx) %s: out of quarantine", s, sl->h_pid,
               (unsigned long long)sl->h_inc, why);
    }
    sl->held = false;
    sl->lease = 0;
    zp_shm_slot_clear_owner(b->arena, s);
}

void brk_slot_reported(brk_t *b, const brk_worker_t *w, uint32_t s, uint64_t gen)
{
    if (s >= b->n_slots) return;
    brk_slot_t *sl = &b->slots[s];
    /* h_gen 0: a quarantine recovered from the descriptor, generation unknown */
    if (sl->held && sl->h_inc == w->incarnation && (sl->h_gen == gen || sl->h_gen == 0)) release(b, s, "reported");
}

bool brk_slot_usable(const brk_t *b, uint32_t s)
{
    return s < b->n_slots && !b->slots[s].held;
}

static bool pid_gone(uint32_t pid)
{
    if (pid <= 1 || pid > 0x7fffffff) return false;
    return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* why the quarantined holder of s is known not to write any more, or NULL */
static const char *holder_gone(const brk_t *b, uint32_t s)
{
    const brk_slot_t *sl = &b->slots[s];
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        if (w->incarnation == sl->h_inc) {
            /* the same process, connected: it listed what it runs in its HELLO */
            for (unsigned k = 0; k < w->n_inflight; k++)
                if (w->inflight[k].slot == s && (w->inflight[k].gen == sl->h_gen || sl->h_gen == 0)) return NULL;
            return "no longer lists it";
        }
        if (w->role == sl->h_role && w->instance == sl->h_instance && sl->h_role < ZP_NROLES)
            return "was replaced by a new incarnation";
    }
    if (pid_gone(sl->h_pid)) return "is gone";
    return NULL;
}

void brk_slots_tick(brk_t *b)
{
    uint64_t now = zp_now_ns();
    uint32_t nq = 0;
    for (uint32_t s = 0; s < b->n_slots; s++) {
        brk_slot_t *sl = &b->slots[s];
        if (!sl->held) continue;
        if (live(b, s)) {
            if (!sl->lease || now < sl->lease) continue;
            brk_worker_t *w = sl->part->worker;
            char why[160];
            snprintf(why, sizeof why, "lease on slot %u expired (%s, %.1f s)", s, zp_role_name(w->role),
                     (now - sl->h_since) / 1e9);
            b->c.leases_expired++;
            brk_worker_dead(b, w, why, true);
            continue;
        }
        const char *why = holder_gone(b, s);
        if (why) release(b, s, why);
        else nq++;
    }
    b->n_quarantined = nq;
}

void brk_worker_lost(brk_t *b, brk_worker_t *w, const char *why)
{
    char msg[300];
    if (!w->used) return;
    b->c.deaths[w->role < ZP_NROLES ? w->role : 0]++;
    b->c.fail_class[ZP_FAIL_WORKER]++;
    w->n_class[ZP_FAIL_WORKER]++;
    snprintf(msg, sizeof msg, "%s worker pid %u %s", zp_role_name(w->role), w->pid, why);
    unsigned n = w->n_inflight;
    brk_inflight_t fl[BRK_MAX_INFLIGHT];
    memcpy(fl, w->inflight, sizeof fl);
    w->n_inflight = 0;
    w->used = false;
    w->alive = false;
    for (unsigned i = 0; i < n; i++) {
        brk_part_t *p = fl[i].part;
        /* its slots stay held by it: quarantined until it is known gone */
        if (fl[i].slot < b->n_slots && b->slots[fl[i].slot].held && b->slots[fl[i].slot].h_inc == w->incarnation)
            b->c.quarantined++;
        if (!p || p->state != PS_RUNNING || p->worker != w) continue;
        p->worker = NULL;
        brk_part_fail_class(b, p, ZP_FAIL_WORKER, false, msg);
    }
}

/* A worker said HELLO listing the (slot, gen) pairs it holds (broker.c; the model test).
 * Slots we think it holds but it does not list: requeue (not charged). Slots it holds that we
 * do not know: keep them as orphans so its credit stays consumed until it reports them. */
void brk_worker_held(brk_t *b, brk_worker_t *w, const zp_held_t *held, size_t n)
{
    for (unsigned i = 0; i < w->n_inflight;) {
        bool listed = false;
        for (size_t k = 0; k < n; k++)
            if (held[k].slot == w->inflight[i].slot && held[k].gen == w->inflight[i].gen) listed = true;
        if (listed) { i++; continue; }
        brk_part_t *p = w->inflight[i].part;
        w->inflight[i] = w->inflight[--w->n_inflight];
        if (p && p->state == PS_RUNNING && p->worker == w) {
            p->worker = NULL;
            /* not listed: it dropped the task unstarted (a RESET drops queued work) */
            brk_part_requeue(b, p, true, false, false, "worker lost the assignment (reconnected)");
        }
    }
    for (size_t k = 0; k < n && w->n_inflight < BRK_MAX_INFLIGHT; k++) {
        bool known = false;
        for (unsigned i = 0; i < w->n_inflight; i++)
            if (w->inflight[i].slot == held[k].slot && w->inflight[i].gen == held[k].gen) known = true;
        /* after a broker restart: a recovered partition still RUNNING in that slot at that
         * generation is this worker's again; anything else stays an orphan (its credit is
         * used until the worker reports it, and that report is dropped as stale) */
        if (!known)
            w->inflight[w->n_inflight++] = (brk_inflight_t){held[k].slot, held[k].gen,
                                                            brk_recover_adopt(b, w, held[k].slot, held[k].gen)};
    }
}
