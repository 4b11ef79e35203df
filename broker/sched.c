/* sched.c - the broker's per-stage queues, credit-based dispatch, DONE/FAIL handling, the
 * failure-class policy, requeue with a new generation, and the circuit breaker.
 *
 * The slot protocol (states, who writes what at which generation, quarantine, leases,
 * failure classes, recovery) is written once in doc/slot-protocol.md; the comments here name
 * its sections instead of restating it. part->word_gen is always the generation the broker
 * expects in the slot word now; payload_gen and result_gen are the stamps of the synth's seal
 * and of the GPU's commit. Queues are unordered arrays; dispatch takes the best dispatchable
 * partition by (priority, job age, partition index): not in transient backoff, its slot not
 * quarantined. Free slots gate synthesis (backpressure); credits gate each worker; a worker the
 * breaker tripped gets nothing until its cool-down ends. Tests: tests/test_model.c, tests/ipc/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_int.h"
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
    b->nq[stage][p->job->priority % ZP_NPRIO]++;
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
        if (q[i] == p) { q[i] = q[--b->qn[p->stage]]; b->nq[p->stage][p->job->priority % ZP_NPRIO]--; break; }
    p->queued = false;
}

static bool better(const brk_part_t *x, const brk_part_t *y)
{
    if (x->job->priority != y->job->priority) return x->job->priority < y->job->priority;
    if (x->job->seq != y->job->seq) return x->job->seq < y->job->seq;
    return x->idx < y->idx;
}

/* ---------------------------------------------------------------- keys: affinity
 * Which worker holds which proving key (doc/keys.md): what it reported in its last HELLO or
 * HEARTBEAT, plus the keys of the partitions in flight there (it is loading them). Keys are
 * told apart by a 64-bit hash of the zkey path as jobs name it (a collision only costs a
 * preference). Routing (key_route) picks the (partition, worker) pair for the GPU and final
 * stages; the synth stage keeps plain dispatch. */
uint64_t brk_key_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
    return h | 1;   /* never 0: 0 = not computed */
}

uint64_t brk_job_key(brk_job_t *j)
{
    if (!j->zkey_hash) j->zkey_hash = brk_key_hash(j->zkey ? j->zkey : "", j->zkey ? strlen(j->zkey) : 0);
    return j->zkey_hash;
}

/* the bytes of key h as any worker reported them (0: unknown) */
static uint64_t key_bytes(const brk_t *b, uint64_t h)
{
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++)
        for (unsigned k = 0; b->workers[i].used && k < b->workers[i].n_keys; k++)
            if (b->workers[i].keys[k].hash == h) return b->workers[i].keys[k].bytes;
    return 0;
}

static bool add_key(uint64_t *v, unsigned *n, unsigned max, uint64_t h)
{
    for (unsigned i = 0; i < *n; i++)
        if (v[i] == h) return false;
    if (*n == max) return false;
    v[(*n)++] = h;
    return true;
}

/* What the broker believes w holds, most recent first: the keys of its partitions in flight
 * (it is loading them), of those it finished since its last report (a report sent after a
 * DONE reflects that task's load and evictions; one sent before does not), then the reported
 * ones; cut where its reported --key-budget is full (its cache evicts the least recently used). */
static unsigned belief(const brk_t *b, const brk_worker_t *w, uint64_t *v, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = w->n_inflight; i-- > 0;) {
        brk_part_t *p = w->inflight[i].part;
        if (p && p->job) add_key(v, &n, max, brk_job_key(p->job));
    }
    for (unsigned i = 0; i < w->n_recent; i++) add_key(v, &n, max, w->recent[i]);
    for (unsigned i = 0; i < w->n_keys; i++) add_key(v, &n, max, w->keys[i].hash);
    if (!w->key_budget) return n;
    uint64_t used = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t kb = key_bytes(b, v[i]);
        if (i > 0 && used + kb > w->key_budget) return i;   /* the first always stays (in use) */
        used += kb;
    }
    return n;
}

#define BELIEF_MAX (2 * ZP_MSG_MAX_KEYS + BRK_MAX_INFLIGHT)
static bool in_keys(const uint64_t *v, unsigned n, uint64_t h)
{
    for (unsigned i = 0; i < n; i++)
        if (v[i] == h) return true;
    return false;
}

bool brk_worker_holds(const brk_t *b, const brk_worker_t *w, uint64_t h)
{
    uint64_t v[BELIEF_MAX];
    return in_keys(v, belief(b, w, v, BELIEF_MAX), h);
}

/* the worker reported holding h (recent loads, or its key listing); unlike brk_worker_holds,
 * keys of its in-flight tasks do not count: those may still be importing */
bool brk_worker_loaded(const brk_worker_t *w, uint64_t h)
{
    if (in_keys(w->recent, w->n_recent, h)) return true;
    for (unsigned i = 0; i < w->n_keys; i++)
        if (w->keys[i].hash == h) return true;
    return false;
}

void brk_worker_key_done(brk_worker_t *w, brk_job_t *j)
{
    uint64_t h = brk_job_key(j);
    unsigned k = 0;
    for (unsigned i = 0; i < w->n_recent; i++)   /* move h to the front */
        if (w->recent[i] != h) w->recent[k++] = w->recent[i];
    if (k == ZP_MSG_MAX_KEYS) k--;
    memmove(w->recent + 1, w->recent, k * sizeof w->recent[0]);
    w->recent[0] = h;
    w->n_recent = k + 1;
}

void brk_worker_keys(brk_t *b, brk_worker_t *w, const zp_msg_keys_t *k)
{
    (void)b;
    if (!k->present) return;
    w->keys_known = true;
    w->n_recent = 0;   /* this report was sent after every DONE received before it */
    w->key_loads = k->loads;
    w->key_evictions = k->evictions;
    w->key_budget = k->budget;
    w->n_keys = 0;
    for (size_t i = 0; i < k->n && i < ZP_MSG_MAX_KEYS; i++) {
        brk_key_t *x = &w->keys[w->n_keys++];
        x->hash = brk_key_hash(k->k[i].path.p, k->k[i].path.len);
        x->bytes = k->k[i].bytes;
        x->tier = k->k[i].tier;
        size_t n = k->k[i].path.len, room = sizeof x->name - 1;
        if (n <= room) snprintf(x->name, sizeof x->name, "%.*s", (int)n, k->k[i].path.p);
        else snprintf(x->name, sizeof x->name, "...%.*s", (int)(room - 3), k->k[i].path.p + n - (room - 3));
    }
}

static bool can_take(const brk_worker_t *w, unsigned role, uint64_t now)
{
    return w->used && w->alive && w->role == role && w->n_inflight < w->credits &&
           !(w->tripped_until && now < w->tripped_until);
}

/* the worker with the most free credit for role; one whose incarnation is `avoid` only if no
 * other has credit; none the breaker took out of rotation; key != 0: only workers holding it */
static brk_worker_t *pick_worker_key(brk_t *b, unsigned role, uint64_t avoid, uint64_t now, uint64_t key)
{
    brk_worker_t *best = NULL;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!can_take(w, role, now) || (key && !brk_worker_holds(b, w, key))) continue;
        if (!best) { best = w; continue; }
        bool wa = avoid && w->incarnation == avoid, ba = avoid && best->incarnation == avoid;
        if (wa != ba) { if (ba) best = w; continue; }
        if (w->credits - w->n_inflight > best->credits - best->n_inflight) best = w;
    }
    return best;
}

static brk_worker_t *pick_worker(brk_t *b, unsigned role, uint64_t avoid, uint64_t now)
{
    return pick_worker_key(b, role, avoid, now, 0);
}

void brk_running(const brk_t *b, unsigned out[ZP_NROLES])
{
    for (unsigned r = 0; r < ZP_NROLES; r++) out[r] = 0;
    for (uint32_t s = 0; s < b->n_slots; s++) {
        const brk_part_t *p = b->slots[s].part;
        if (p && p->state == PS_RUNNING && p->slot == (int32_t)s && p->stage < ZP_NROLES) out[p->stage]++;
    }
}

/* Unbind the slot a part holds and reset it to FREE (any state, at the generation we expect,
 * or the one after a commit the worker made just before we gave up on it). A holder that may
 * still write keeps it quarantined (slots.c). */
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
    if (b->slots[s].part == p) b->slots[s].part = NULL;
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
    brk_part_fail_class(b, p, retryable ? ZP_FAIL_TRANSIENT : ZP_FAIL_INPUT, redo_synth, why);
}

/* The class policy (doc/slot-protocol.md, "Failure classes"). */
void brk_part_fail_class(brk_t *b, brk_part_t *p, unsigned cls, bool redo_synth, const char *why)
{
    char m[ZP_MSG_TEXT_MAX + 128];
    p->last_class = (uint8_t)cls;
    switch (cls) {
    case ZP_FAIL_WORKER: case ZP_FAIL_DEVICE:
        /* not the partition's fault: not charged, but a partition every worker dies on is bounded */
        p->n_uncharged++;
        snprintf(m, sizeof m, "%s [%s class, not charged]", why, zp_fail_class_name(cls));
        if (p->n_uncharged >= b->max_deaths) {
            append_reason(p, m);
            snprintf(m, sizeof m, "gave up: %u workers died or failed (worker/device class) while holding it",
                     p->n_uncharged);
            brk_part_requeue(b, p, false, redo_synth, true, m);
            return;
        }
        append_reason(p, m);
        brk_part_requeue(b, p, true, redo_synth, false, why);
        return;
    case ZP_FAIL_INPUT:
        brk_part_requeue(b, p, false, redo_synth, true, why);
        return;
    default: {
        /* transient: retry after a backoff that doubles per attempt (100 ms .. 10 s by default) */
        uint64_t d = b->backoff_ns << (p->attempt < 8 ? p->attempt - 1 : 7);
        p->not_before = zp_now_ns() + (d < 100 * b->backoff_ns ? d : 100 * b->backoff_ns);
        brk_part_requeue(b, p, true, redo_synth, true, why);
    }
    }
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
    if (count_attempt || !retryable) append_reason(p, why);
    p->worker = NULL;
    p->revoking = false;
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
    if (p->slot >= 0 && stage == ZP_ROLE_SYNTH && !redo_synth) {
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

/* ---------------------------------------------------------------- dispatch */
static int assign(brk_t *b, brk_worker_t *w, brk_part_t *p, unsigned stage)
{
    brk_job_t *j = p->job;
    uint32_t s = (uint32_t)p->slot;
    zp_msg_assign_t m = {.slot = s, .gen = p->word_gen, .in_gen = stage == ZP_ROLE_FINAL ? p->result_gen : p->payload_gen,
                         .payload_gen = p->payload_gen, .stage = stage, .job = j->id, .part = p->idx,
                         .attempt = p->attempt, .priority = j->priority, .zkey = zp_str(j->zkey),
                         .r1cs = zp_str(j->r1cs), .wtns = zp_str(stage == ZP_ROLE_SYNTH ? p->wtns : ""),
                         .epoch = b->epoch, .wasm = zp_str(stage == ZP_ROLE_SYNTH && j->wasm ? j->wasm : "")};
    zp_shm_slot_t *d = zp_shm_slot(b->arena, s);
    d->job_id = j->id; d->part_idx = p->idx; d->attempt = p->attempt; d->priority = j->priority;
    uint64_t lease = brk_lease_ns(b, j, stage);
    /* a worker that has not reported holding the job's key imports it inside this task (a
     * bellman .params laid out, subgroup checks, the shared key store filled: minutes for a big
     * key): its lease gets the key allowance, so a first import is not taken for a hung worker
     * (a worker that dies is seen by its exit, not by the lease: kill -9 safety is unchanged) */
    if (!brk_worker_loaded(w, brk_job_key(j))) lease += (uint64_t)b->lease_key_ms * 1000000u;
    m.lease_deadline = zp_now_ns() + lease;
    brk_slot_hold(b, s, w, p->word_gen, lease);      /* doc/slot-protocol.md, holders + leases */
    uint8_t *buf; size_t len;
    int rc = zp_msg_assign_encode(&buf, &len, &m);
    if (rc < 0) return rc;
    if (w->n_inflight >= BRK_MAX_INFLIGHT) { free(buf); return -ENOSPC; }
    w->inflight[w->n_inflight++] = (brk_inflight_t){s, p->word_gen, p};
    p->revoking = false;
    p->state = PS_RUNNING;
    p->stage = stage;
    p->worker = w;
    p->t_assign[stage] = zp_now_ns();
    p->wpid[stage] = w->pid;
    p->winc[stage] = w->incarnation;
    b->c.assigns++;
    rc = brk_send(b, w->id, w->id_len, buf, len);
    if (rc < 0) {
        /* the worker is gone: everything it held (this part included) is requeued */
        brk_worker_dead(b, w, rc == -EHOSTUNREACH ? "unreachable (send failed)" : "send failed", false);
        return rc;
    }
    return 0;
}

/* What synthesis may claim this turn (doc/slot-protocol.md "Slot classes", "Priority"), per
 * slot class: free slots (FREE, unbound, no holder), slots bound to partitions of each
 * priority, and queued synth partitions whose smallest fitting class it is, per priority. */
typedef struct {
    uint32_t free[ZP_SHM_MAX_CLASSES];
    uint32_t used[ZP_SHM_MAX_CLASSES][ZP_NPRIO];
    uint32_t want[ZP_SHM_MAX_CLASSES][ZP_NPRIO];
} slotview_t;

static unsigned prio_of(const brk_part_t *p) { return p->job->priority % ZP_NPRIO; }

static bool slot_free(const brk_t *b, uint32_t s)
{
    return !b->slots[s].part && brk_slot_usable(b, s) &&
           zp_shm_word_state(zp_shm_slot_word_load(b->arena, s)) == ZP_SLOT_FREE;
}

static void view_build(brk_t *b, slotview_t *v)
{
    memset(v, 0, sizeof *v);
    for (uint32_t k = 0; k < b->n_classes; k++)
        for (uint32_t s = b->classes[k].first; s < b->classes[k].first + b->classes[k].n && s < b->n_slots; s++) {
            const brk_part_t *p = b->slots[s].part;
            if (p) v->used[k][prio_of(p)]++;
            else if (slot_free(b, s)) v->free[k]++;
        }
    for (size_t i = 0; i < b->qn[ZP_ROLE_SYNTH]; i++) {
        const brk_part_t *p = b->q[ZP_ROLE_SYNTH][i];
        if (p->job->cls < b->n_classes) v->want[p->job->cls][prio_of(p)]++;
    }
}

/* free slots of class k that priority pr must leave to better priorities (--slot-reserve:
 * each priority q is owed reserve[q] slots of the class minus those it holds; at most all
 * but one slot of a class is held back) */
static uint32_t held_back(const brk_t *b, const slotview_t *v, uint32_t k, unsigned pr)
{
    uint32_t r = 0;
    for (unsigned q = 0; q < pr; q++)
        if (b->reserve[q] > v->used[k][q]) r += b->reserve[q] - v->used[k][q];
    uint32_t cap = b->classes[k].n ? b->classes[k].n - 1 : 0;
    return r < cap ? r : cap;
}

/* may p use a slot of class k? its own class (the smallest that holds it), or a larger one
 * that no queued partition of its priority or better needs as its own */
static bool class_ok(const brk_t *b, const slotview_t *v, const brk_part_t *p, uint32_t k)
{
    if (k < p->job->cls || k >= b->n_classes) return false;
    if (k == p->job->cls) return true;
    for (unsigned q = 0; q <= prio_of(p); q++)
        if (v->want[k][q]) return false;
    return true;
}

/* the class p may claim a free slot of now, or n_classes */
static uint32_t view_class_for(const brk_t *b, const slotview_t *v, const brk_part_t *p)
{
    for (uint32_t k = p->job->cls; k < b->n_classes; k++)
        if (class_ok(b, v, p, k) && v->free[k] > held_back(b, v, k, prio_of(p))) return k;
    return b->n_classes;
}

/* the best partition of a stage's queue that may go now: not backing off, its slot (gpu,
 * final) not quarantined; for synthesis (v != NULL) one a slot class has room for */
static brk_part_t *q_best(brk_t *b, unsigned stage, uint64_t now, size_t *at, const slotview_t *v)
{
    brk_part_t *best = NULL;
    for (size_t i = 0; i < b->qn[stage]; i++) {
        brk_part_t *p = b->q[stage][i];
        if (p->not_before > now || (stage != ZP_ROLE_SYNTH && !brk_slot_usable(b, (uint32_t)p->slot))) continue;
        if (best && !better(p, best)) continue;
        if (v && view_class_for(b, v, p) >= b->n_classes) continue;
        best = p; *at = i;
    }
    return best;
}

/* the worker incarnation a partition should avoid (a failed pairing check or input error there) */
static uint64_t part_avoid(const brk_part_t *p, unsigned stage)
{
    return p->n_verify_fail ? (stage == ZP_ROLE_SYNTH ? p->winc[ZP_ROLE_SYNTH] : p->avoid_inc)
                            : (p->n_input ? p->avoid_inc : 0);
}

static bool dispatchable(const brk_t *b, const brk_part_t *p, unsigned stage, uint64_t now)
{
    return p->not_before <= now && (stage == ZP_ROLE_SYNTH || brk_slot_usable(b, (uint32_t)p->slot));
}

/* queued partitions of stage whose key w holds (its demand: what a switch would leave waiting) */
static size_t key_demand(const brk_t *b, const brk_worker_t *w, unsigned stage, uint64_t now)
{
    uint64_t v[BELIEF_MAX];
    unsigned nv = belief(b, w, v, BELIEF_MAX);
    size_t n = 0;
    for (size_t i = 0; nv && i < b->qn[stage]; i++) {
        brk_part_t *p = b->q[stage][i];
        if (dispatchable(b, p, stage, now) && in_keys(v, nv, brk_job_key(p->job))) n++;
    }
    return n;
}

/* the worker that should take a key it does not hold: one holding no key, then an idle one,
 * then the one whose own keys have the fewest queued partitions, then the most free credit */
static brk_worker_t *switch_target(brk_t *b, unsigned stage, uint64_t avoid, uint64_t now)
{
    brk_worker_t *best = NULL;
    size_t best_d = 0;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!can_take(w, stage, now)) continue;
        size_t d = key_demand(b, w, stage, now);
        if (best) {
            bool wa = avoid && w->incarnation == avoid, ba = avoid && best->incarnation == avoid;
            bool we = !w->n_keys && !w->n_inflight && !w->n_recent, be = !best->n_keys && !best->n_inflight && !best->n_recent;
            if (wa != ba) { if (wa) continue; }
            else if (we != be) { if (!we) continue; }
            else if ((w->n_inflight == 0) != (best->n_inflight == 0)) { if (w->n_inflight) continue; }
            else if (d != best_d) { if (d > best_d) continue; }
            else if (w->credits - w->n_inflight <= best->credits - best->n_inflight) continue;
        }
        best = w;
        best_d = d;
    }
    return best;
}

/* Key affinity: *p is the best partition of the stage, *w the worker plain dispatch would give
 * it. Returns the pair to assign (possibly another partition, of the same priority, whose key a
 * worker with credit holds), or false: nothing should go now (p waits for its key's holder).
 * A worker moves to a key it does not hold only when no live worker holds it, when it holds no
 * key, or when the key's backlog exceeds its holders' credits (an idle worker) or
 * key_switch_backlog partitions per credit of its holders (a busy one): two circuits
 * alternating keep their workers (hysteresis; tests/ipc/keys_affinity.sh). */
static bool key_route(brk_t *b, unsigned stage, uint64_t now, brk_part_t **pp, brk_worker_t **wp)
{
    brk_part_t *p = *pp;
    uint64_t key = brk_job_key(p->job), avoid = part_avoid(p, stage);
    if (avoid) return true;   /* a retry that should go to another worker: plain dispatch's choice */
    brk_worker_t *w = pick_worker_key(b, stage, 0, now, key);
    if (w) { *wp = w; b->c.key_affine++; return true; }
    uint32_t holder_credits = 0;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        const brk_worker_t *x = &b->workers[i];
        if (x->used && x->alive && x->role == stage && !(x->tripped_until && now < x->tripped_until) &&
            brk_worker_holds(b, x, key))
            holder_credits += x->credits;
    }
    if (!holder_credits) {   /* nobody has it: someone must load it */
        if (!(w = switch_target(b, stage, 0, now))) return false;
        *wp = w;
        w->key_switches++;
        b->c.key_first++;
        return true;
    }
    /* its holders are busy: give the workers with credit work of their own keys (same priority) */
    brk_part_t *bq = NULL;
    brk_worker_t *bw = NULL;
    uint64_t none[16];   /* keys no worker with credit holds (skip their other partitions) */
    unsigned n_none = 0;
    for (size_t i = 0; i < b->qn[stage]; i++) {
        brk_part_t *q = b->q[stage][i];
        uint64_t qk = brk_job_key(q->job);
        if (q->job->priority != p->job->priority || qk == key || part_avoid(q, stage) || in_keys(none, n_none, qk) ||
            !dispatchable(b, q, stage, now) || (bq && !better(q, bq)))
            continue;
        brk_worker_t *x = pick_worker_key(b, stage, 0, now, qk);
        if (x) { bq = q; bw = x; }
        else if (n_none < 16) none[n_none++] = qk;
    }
    if (bq) { *pp = bq; *wp = bw; b->c.key_affine++; return true; }
    if (!(w = switch_target(b, stage, 0, now))) return false;
    size_t backlog = 0;
    for (size_t i = 0; i < b->qn[stage]; i++)
        backlog += brk_job_key(b->q[stage][i]->job) == key && dispatchable(b, b->q[stage][i], stage, now);
    /* hysteresis: a worker holding nothing takes it; an idle one once the backlog exceeds what
     * the holders take at once; a busy one past key_switch_backlog per holder credit */
    bool fresh = !w->n_keys && !w->n_inflight && !w->n_recent;
    size_t limit = w->n_inflight ? (size_t)b->key_switch_backlog * holder_credits : holder_credits;
    if (!fresh && backlog <= limit) return false;
    *wp = w;
    w->key_switches++;
    b->c.key_switches++;
    return true;
}

bool brk_key_pick(brk_t *b, unsigned stage, uint64_t now, brk_part_t **pp, brk_worker_t **wp)
{
    size_t at = 0;
    brk_part_t *p = q_best(b, stage, now, &at, NULL);
    brk_worker_t *w = p ? pick_worker(b, stage, part_avoid(p, stage), now) : NULL;
    if (!w) return false;
    if (stage != ZP_ROLE_SYNTH && b->key_affinity && !key_route(b, stage, now, &p, &w)) return false;
    *pp = p;
    *wp = w;
    return true;
}

/* a FREE slot of class k no partition is bound to and no holder may still write (slots.c) */
static int claim_slot(brk_t *b, uint32_t k, uint32_t *sp, uint64_t *ng)
{
    uint32_t first = b->classes[k].first, n = b->classes[k].n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = first + (b->claim_hint + i) % n;
        if (s >= b->n_slots || !slot_free(b, s)) continue;
        if (zp_shm_slot_claim_at(b->arena, s, ng) == 0) {
            b->claim_hint = s + 1;
            *sp = s;
            return 0;
        }
    }
    return -EAGAIN;
}

/* synthesis queue: size jobs recovered from the journal (SUBMIT sized the others); a job
 * whose circuit no slot class holds (the classes changed across a restart) fails */
static void size_queued(brk_t *b)
{
    for (size_t i = 0; i < b->qn[ZP_ROLE_SYNTH];) {
        brk_part_t *p = b->q[ZP_ROLE_SYNTH][i];
        if (brk_job_size(b, p->job) == 0) { i++; continue; }
        char why[700];
        snprintf(why, sizeof why, "%s", zp_err_msg());
        brk_part_requeue(b, p, false, false, true, why);   /* removes it from the queue: fails it */
    }
}

/* is q a better victim than o: a smaller slot class, a worse priority, a younger job, the
 * later assignment (with two credits, the one still queued at its synthesizer) */
static bool victim_before(const brk_t *b, const brk_part_t *q, const brk_part_t *o)
{
    uint32_t kq = zp_shm_slot_class(b->arena, (uint32_t)q->slot), ko = zp_shm_slot_class(b->arena, (uint32_t)o->slot);
    if (kq != ko) return kq < ko;
    if (prio_of(q) != prio_of(o)) return prio_of(q) > prio_of(o);
    if (q->job->seq != o->job->seq) return q->job->seq > o->job->seq;
    if (q->t_assign[ZP_ROLE_SYNTH] != o->t_assign[ZP_ROLE_SYNTH]) return q->t_assign[ZP_ROLE_SYNTH] > o->t_assign[ZP_ROLE_SYNTH];
    return q->idx > o->idx;   /* assigned in the same turn: in partition order */
}

/* Take a slot back for the best waiting partition of priority <= --preempt that cannot go
 * (doc/slot-protocol.md "Priority"): from a partition of a worse priority that has not
 * started: READY and queued for the GPU (reset to FREE, back to synthesis: its payload is
 * dropped, nothing is charged), or assigned to a synthesizer (REVOKE: it hands the task back
 * unstarted, or, already started, finishes it and is READY one stage time later). Victims:
 * the worst priority, then the youngest job; the smallest class that holds the waiting
 * partition first. true if a slot is free now (dispatch again). */
static bool take_back(brk_t *b, const slotview_t *v, uint64_t now)
{
    if (b->preempt >= ZP_NPRIO) return false;
    brk_part_t *p = NULL;
    unsigned waiting = 0, revoking = 0;
    for (size_t i = 0; i < b->qn[ZP_ROLE_SYNTH]; i++) {
        brk_part_t *q = b->q[ZP_ROLE_SYNTH][i];
        if (q->not_before > now || prio_of(q) > b->preempt || q->job->cls >= b->n_classes) continue;
        waiting++;
        if (!p || better(q, p)) p = q;
    }
    if (!p) return false;
    for (uint32_t s = 0; s < b->n_slots; s++) {
        const brk_part_t *q = b->slots[s].part;
        revoking += q && q->revoking && q->state == PS_RUNNING && q->stage == ZP_ROLE_SYNTH;
    }
    bool credit = pick_worker(b, ZP_ROLE_SYNTH, 0, now) != NULL;
    bool room = view_class_for(b, v, p) < b->n_classes;
    if (credit && room) return false;   /* it can go: nothing to take */
    unsigned pr = prio_of(p);
    brk_part_t *ready = NULL, *rev = NULL;
    for (uint32_t s = 0; s < b->n_slots; s++) {
        brk_part_t *q = b->slots[s].part;
        if (!q || q->slot != (int32_t)s || prio_of(q) <= pr) continue;
        uint32_t k = zp_shm_slot_class(b->arena, s);
        if (!room && !class_ok(b, v, p, k)) continue;  /* not a slot p could take */
        bool is_ready = q->queued && q->stage == ZP_ROLE_GPU && brk_slot_usable(b, s) &&
                        zp_shm_slot_check(b->arena, s, ZP_SLOT_READY, q->word_gen) == 0;
        bool is_synth = q->state == PS_RUNNING && q->stage == ZP_ROLE_SYNTH && q->worker && !q->revoking;
        brk_part_t **best = is_ready ? &ready : is_synth ? &rev : NULL;
        if (!best) continue;
        const brk_part_t *o = *best;
        if (!o || victim_before(b, q, o)) *best = q;
    }
    if (ready && credit) {
        zp_log(ZP_LOG_INFO, "job %llu part %u (%s): slot %d taken back (READY, not started on a GPU) for job %llu part %u "
               "(%s): back to synthesis", (unsigned long long)ready->job->id, ready->idx, zp_prio_name(prio_of(ready)),
               ready->slot, (unsigned long long)p->job->id, p->idx, zp_prio_name(pr));
        brk_q_remove(b, ready);
        brk_release_slot(b, ready);
        ready->payload_gen = ready->result_gen = 0;
        brk_q_push(b, ready, ZP_ROLE_SYNTH);
        b->n_taken_ready++;
        return true;
    }
    if (rev && revoking < waiting) {
        zp_log(ZP_LOG_INFO, "job %llu part %u (%s): asking its synthesizer to hand slot %d back unstarted for job %llu "
               "part %u (%s)", (unsigned long long)rev->job->id, rev->idx, zp_prio_name(prio_of(rev)), rev->slot,
               (unsigned long long)p->job->id, p->idx, zp_prio_name(pr));
        brk_revoke(b, rev);
    }
    return false;
}

/* The same for the GPU stage: a partition of priority <= --preempt is READY but every GPU
 * worker's credits are taken. A worker holding two or more tasks runs one; the later assigned
 * of a worse priority is revoked (handed back unstarted it is READY again at once, its
 * payload kept; already started, it finishes). One REVOKE outstanding per waiting partition. */
static void take_back_gpu(brk_t *b, uint64_t now)
{
    if (b->preempt >= ZP_NPRIO || pick_worker(b, ZP_ROLE_GPU, 0, now)) return;
    const brk_part_t *c = NULL;
    unsigned waiting = 0, revoking = 0;
    for (size_t i = 0; i < b->qn[ZP_ROLE_GPU]; i++) {
        const brk_part_t *q = b->q[ZP_ROLE_GPU][i];
        if (q->not_before > now || prio_of(q) > b->preempt || !brk_slot_usable(b, (uint32_t)q->slot)) continue;
        waiting++;
        if (!c || better(q, c)) c = q;
    }
    if (!c) return;
    brk_part_t *victim = NULL;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!w->used || !w->alive || w->role != ZP_ROLE_GPU) continue;
        if (w->tripped_until && now < w->tripped_until) continue;   /* its credit could not be used */
        for (unsigned k = 0; k < w->n_inflight; k++) {
            brk_part_t *q = w->inflight[k].part;
            if (!q) continue;
            revoking += q->revoking;
            if (q->revoking || q->state != PS_RUNNING || q->worker != w || prio_of(q) <= prio_of(c)) continue;
            bool earlier = false;   /* the worker has a task assigned before it: q is not the running one */
            for (unsigned m = 0; m < w->n_inflight; m++) {
                const brk_part_t *o = w->inflight[m].part;
                earlier |= m != k && (!o || o->t_assign[ZP_ROLE_GPU] < q->t_assign[ZP_ROLE_GPU] ||
                                      (o->t_assign[ZP_ROLE_GPU] == q->t_assign[ZP_ROLE_GPU] && m < k));
            }
            if (!earlier) continue;
            if (!victim || prio_of(q) > prio_of(victim) ||
                (prio_of(q) == prio_of(victim) && q->t_assign[ZP_ROLE_GPU] > victim->t_assign[ZP_ROLE_GPU]))
                victim = q;
        }
    }
    if (!victim || revoking >= waiting) return;
    zp_log(ZP_LOG_INFO, "job %llu part %u (%s): asking its GPU worker to hand slot %d back unstarted for job %llu part %u "
           "(%s)", (unsigned long long)victim->job->id, victim->idx, zp_prio_name(prio_of(victim)), victim->slot,
           (unsigned long long)c->job->id, c->idx, zp_prio_name(prio_of(c)));
    brk_revoke(b, victim);
}

void brk_dispatch(brk_t *b)
{
    /* downstream first: finishing partitions frees slots */
    static const unsigned order[] = {ZP_ROLE_FINAL, ZP_ROLE_GPU, ZP_ROLE_SYNTH};
    uint64_t now = zp_now_ns();
    if (!b->n_classes) brk_classes_load(b);
    for (unsigned oi = 0; oi < 3; oi++) {
        unsigned stage = order[oi];
        slotview_t view, *v = NULL;
        if (stage == ZP_ROLE_SYNTH) {
            size_queued(b);
            view_build(b, &view);
            v = &view;
        }
    again:
        while (b->qn[stage] && pick_worker(b, stage, 0, now)) {
            size_t at = 0;
            brk_part_t *p = q_best(b, stage, now, &at, v);
            if (!p) break;
            /* a partition whose result failed the pairing check goes to other workers if any */
            uint64_t avoid = part_avoid(p, stage);
            brk_worker_t *w = pick_worker(b, stage, avoid, now);
            /* keys: a worker that holds the partition's key, or another partition (key_route) */
            if (stage != ZP_ROLE_SYNTH && b->key_affinity && !key_route(b, stage, now, &p, &w)) break;
            uint64_t ng;
            if (stage == ZP_ROLE_SYNTH) {
                uint32_t s = 0, k = view_class_for(b, v, p);
                if (k >= b->n_classes || claim_slot(b, k, &s, &ng) < 0) break;   /* backpressure: no free slot */
                if (k != p->job->cls) b->n_spilled++;
                v->free[k]--;
                v->used[k][prio_of(p)]++;
                if (p->job->cls < b->n_classes) v->want[p->job->cls][prio_of(p)]--;
                p->slot = (int32_t)s;
                b->slots[s].part = p;
                p->payload_gen = p->result_gen = 0;
            } else {
                unsigned from = stage == ZP_ROLE_GPU ? ZP_SLOT_READY : ZP_SLOT_PROVED;
                unsigned to = stage == ZP_ROLE_GPU ? ZP_SLOT_PROVING : ZP_SLOT_FINALIZING;
                if (zp_shm_slot_transition(b->arena, (uint32_t)p->slot, from, p->word_gen, to, &ng) < 0) {
                    brk_q_remove(b, p);
                    zp_log(ZP_LOG_WARN, "job %llu part %u: slot %d moved under us (%s): redoing synthesis",
                           (unsigned long long)p->job->id, p->idx, p->slot, zp_err_msg());
                    brk_release_slot(b, p);
                    brk_q_push(b, p, ZP_ROLE_SYNTH);
                    continue;
                }
            }
            p->word_gen = ng;
            brk_q_remove(b, p);
            (void)at;
            assign(b, w, p, stage);
        }
        if (stage == ZP_ROLE_SYNTH && take_back(b, v, now)) {
            view_build(b, &view);
            goto again;
        }
        if (stage == ZP_ROLE_GPU) take_back_gpu(b, now);
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
    brk_slot_reported(b, w, m->slot, m->gen);     /* the holder is done writing (quarantine) */
    brk_part_t *p = take_inflight(b, w, m->slot, m->gen, &found);
    if (p) brk_worker_key_done(w, p->job);   /* keys: it holds p's key now */
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
    memcpy(p->tm[stage], m->tm, sizeof m->tm);
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
    w->fail_streak = 0;
    if (stage == ZP_ROLE_SYNTH) {
        /* the domain scales the next leases (untrusted: bounded by the arena's limit) */
        uint32_t dom = zp_shm_slot(b->arena, m->slot)->domain_size;
        if (dom >= 2 && dom <= b->max_domain) p->job->domain = dom;
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
        if (b->slots[s].part == p) b->slots[s].part = NULL;
        p->slot = -1;
    }
    brk_job_check_finished(b, p->job);
}

/* a worker failed K partitions in a row (not input class): out of rotation for a cool-down */
static void breaker(brk_t *b, brk_worker_t *w, unsigned cls)
{
    if (cls == ZP_FAIL_INPUT || !b->breaker_k) return;
    if (++w->fail_streak < b->breaker_k) return;
    w->tripped_until = zp_now_ns() + (uint64_t)b->breaker_cooldown_ms * 1000000u;
    w->n_trips++;
    b->c.breaker_trips++;
    zp_log(ZP_LOG_WARN, "%s worker #%u pid %u failed %u partitions in a row: out of rotation for %u ms",
           zp_role_name(w->role), w->instance, w->pid, w->fail_streak, b->breaker_cooldown_ms);
}

void brk_on_fail(brk_t *b, brk_worker_t *w, const zp_msg_fail_t *m)
{
    bool found;
    brk_slot_reported(b, w, m->slot, m->gen);     /* the holder is done writing (quarantine) */
    brk_part_t *p = take_inflight(b, w, m->slot, m->gen, &found);
    if (p) brk_worker_key_done(w, p->job);   /* keys: it may hold p's key now */
    record_busy(w, m->t_start, m->t_end);
    w->n_fail++;
    if (!p) {
        b->c.stale++;
        return;
    }
    unsigned cls = m->fail_class < ZP_NFAIL_CLASSES ? m->fail_class : ZP_FAIL_TRANSIENT;
    char why[ZP_MSG_TEXT_MAX + 64];
    snprintf(why, sizeof why, "%.*s", (int)m->message.len, m->message.p);
    zp_log(ZP_LOG_WARN, "job %llu part %u failed at %s (attempt %u, %s class): %s", (unsigned long long)p->job->id,
           p->idx, zp_role_name(p->stage), p->attempt, zp_fail_class_name(cls), why);
    /* the worker may have moved the slot to FAILED (gen + 1): take that as the current word */
    uint64_t wd = zp_shm_slot_word_load(b->arena, m->slot);
    if (zp_shm_word_state(wd) == ZP_SLOT_FAILED && zp_shm_word_gen(wd) == p->word_gen + 1) p->word_gen++;
    /* handed back unstarted by the stage harness (FAIL.unstarted: revoked, or the worker is
     * shutting down, FAIL.stopping): no attempt was spent. A worker that is shutting down gets
     * no more work. The message text is for people only. */
    if (m->unstarted && m->retryable && !m->payload_bad) {
        if (m->stopping) w->alive = false;
        brk_part_requeue(b, p, true, false, false, why);
        return;
    }
    b->c.fail_class[cls]++;
    w->n_class[cls]++;
    breaker(b, w, cls);
    if (p->stage == ZP_ROLE_FINAL && m->code == ZP_EVERIFY) {
        /* the pairing check failed: the G1 result or the payload under it is bad. Once: redo the
         * partition from synthesis, on other workers if there are any. Again, on a fresh
         * payload: the witness does not satisfy the circuit (input class). */
        b->c.verify_redo++;
        if (p->n_verify_fail++ == 0) {
            p->avoid_inc = p->winc[ZP_ROLE_GPU];
            snprintf(why + strlen(why), sizeof why - strlen(why), " (pairing check; redoing from synthesis)");
            brk_part_fail_class(b, p, ZP_FAIL_TRANSIENT, true, why);
        } else {
            snprintf(why + strlen(why), sizeof why - strlen(why), " (pairing check failed again on a fresh payload: "
                     "the witness does not satisfy the circuit)");
            brk_part_fail_class(b, p, ZP_FAIL_INPUT, false, why);
        }
        return;
    }
    if (cls == ZP_FAIL_INPUT && m->code > -1000 && p->n_input == 0) {
        /* a system error (a file this worker cannot read): confirm once, on another worker if any */
        p->n_input++;
        p->avoid_inc = w->incarnation;
        snprintf(why + strlen(why), sizeof why - strlen(why), " (input class, %s: confirming once)", zp_strerror(m->code));
        brk_part_fail_class(b, p, ZP_FAIL_TRANSIENT, m->payload_bad, why);
        return;
    }
    brk_part_fail_class(b, p, cls, m->payload_bad, why);
}

/* ---------------------------------------------------------------- configuration */
void brk_config_defaults(brk_t *b)
{
    /* a farm's choices: key loading alone can take a minute or two on a cold start */
    static const uint32_t per_m[ZP_NROLES] = {60000, 600000, 120000};
    for (unsigned r = 0; r < ZP_NROLES; r++) { b->lease_base_ms[r] = 120000; b->lease_per_m_ms[r] = per_m[r]; }
    b->lease_key_ms = 600000;   /* a key's first import in a worker (a 32 GiB PoRep .params: minutes) */
    b->breaker_k = 5;
    b->breaker_cooldown_ms = 60000;
    b->max_deaths = 10;
    b->retain_s = 86400;
    b->retain_jobs = 50000;
    b->max_waiters = 4096;
    b->max_waiters_client = 256;
    b->backoff_ns = 100000000u;
    b->key_affinity = true;
    b->key_switch_backlog = 2;
    b->preempt = ZP_PRIO_CRITICAL;   /* CRITICAL takes back slots of worse work that has not started */
}

/* "a,b,c": up to n unsigned numbers in [lo, hi]; returns how many */
static int parse_list(const char *v, uint32_t *out, int n, uint32_t lo, uint32_t hi)
{
    int k = 0;
    const char *p = v;
    while (k < n) {
        char *e;
        errno = 0;
        unsigned long long x = strtoull(p, &e, 10);
        if (errno || e == p || x < lo || x > hi) return -1;
        out[k++] = (uint32_t)x;
        if (*e == 0) return k;
        if (*e != ',') return -1;
        p = e + 1;
    }
    return -1;
}

int brk_config_set(brk_t *b, const char *name, const char *v)
{
    uint32_t x[5];
    int n;
    if (!strcmp(name, "lease-ms")) {   /* BASE[,SYNTH,GPU,FINAL[,KEY]]: all >= 1 but KEY (0: none) */
        if ((n = parse_list(v, x, 5, 0, 86400000)) != 1 && n != 4 && n != 5) goto bad;
        for (int i = 0; i < n && i < 4; i++)
            if (x[i] == 0) goto bad;
        for (unsigned r = 0; r < ZP_NROLES; r++) {
            b->lease_base_ms[r] = x[0];
            if (n >= 4) b->lease_per_m_ms[r] = x[1 + r];
        }
        if (n == 5) b->lease_key_ms = x[4];
    } else if (!strcmp(name, "max-deaths")) {
        if (parse_list(v, x, 1, 1, 1000) != 1) goto bad;
        b->max_deaths = x[0];
    } else if (!strcmp(name, "breaker")) {
        if ((n = parse_list(v, x, 2, 0, 86400000)) < 1) goto bad;
        b->breaker_k = x[0];
        if (n == 2) b->breaker_cooldown_ms = x[1];
    } else if (!strcmp(name, "retain-s")) {
        if (parse_list(v, x, 1, 0, 100u * 86400u) != 1) goto bad;
        b->retain_s = x[0];
    } else if (!strcmp(name, "retain-jobs")) {
        if (parse_list(v, x, 1, 1, 100000000) != 1) goto bad;
        b->retain_jobs = x[0];
    } else if (!strcmp(name, "max-waiters")) {
        if ((n = parse_list(v, x, 2, 1, 1000000)) < 1) goto bad;
        b->max_waiters = x[0];
        if (n == 2) b->max_waiters_client = x[1];
    } else if (!strcmp(name, "key-affinity")) {   /* keys: on | off | N (on, switch backlog N) */
        if (!strcmp(v, "on")) b->key_affinity = true;
        else if (!strcmp(v, "off")) b->key_affinity = false;
        else if (parse_list(v, x, 1, 0, 1000000) == 1) { b->key_affinity = true; b->key_switch_backlog = x[0]; }
        else goto bad;
    } else if (!strcmp(name, "slot-classes")) {
        return brk_classes_parse(b, v);
    } else if (!strcmp(name, "slot-reserve")) {
        /* free slots of each class held back for CRITICAL[,HIGH[,NORMAL]] */
        if ((n = parse_list(v, x, 3, 0, 4096)) < 1) goto bad;
        for (int k = 0; k < ZP_NPRIO; k++) b->reserve[k] = k < n ? x[k] : 0;
    } else if (!strcmp(name, "preempt")) {
        int pr = strcmp(v, "none") ? zp_prio_parse(v) : ZP_NPRIO;
        if (pr < 0 || pr == ZP_PRIO_LOW) goto bad;
        b->preempt = (uint32_t)pr;
    } else {
        return zp_err_set(-EINVAL, "no option %s", name);
    }
    return 0;
bad:
    return zp_err_set(-EINVAL, "'%s' is not valid (see --help)", v);
}
