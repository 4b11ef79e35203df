/* worker.c - the GPU worker daemon (zkpipe-gpu-worker): the G1 half of the proof.
 *
 * NOTES
 * Backend: CUDA when built and a device opens (--device N), else the CPU backend with a log
 * line that says so (--backend cpu|cuda|auto). The whole arena is registered with the
 * backend once, in 256 MiB pieces, before HELLO (the runtime waits for the broker's arena;
 * a new epoch's arena is registered by the loop thread before its tasks run), and so are the
 * --preload keys' regions (cudaHostRegister: every H2D copy is a DMA from pinned memory); each proving
 * key is loaded once per process and uploaded once per backend. HELLO announces 2 credits:
 * the next partition is already assigned (and its data in the slot) while one computes.
 * Double buffering (issue 10 items 1-2): the stage runtime's staging thread runs stage() for
 * task k+1 while the work thread computes task k: arena, key lookup, check the slot is
 * (PROVING, gen), the seal's stamp and the layout checks (all O(1)), and on CUDA the H2D of the
 * slot's vectors queued into the task's device buffer set. Nothing O(n) on the host runs
 * between two computes, even when the worker was starved (k+1 READY only after k's compute
 * ended): the synth's payload checksum is deferred (stage.h def->deferred: verify() on the
 * staging thread and pool, right after the task went to the work thread, beside its compute
 * or the previous one's, once a compute runs) and gates the commit, not the start: the work
 * thread waits for its verdict before it commits the four Jacobian points into the slot's
 * result area (fenced: PROVING(gen) -> PROVED(gen+1)); a payload that does not verify has its
 * result dropped and goes back to synthesis (payload_bad), as before. Why that still
 * protects: see stage().
 * Chained computes (issue 10, the gap): the compute verbs run on the backend wrapper's compute
 * thread (zp_bk_detach; both backends), and launch() posts task k+1's compute there as soon as
 * it is staged and k's was posted (stage.h def->launch), so that thread goes from k's compute to
 * k+1's the moment k's ends, as a stream runs queued kernels: the work thread is not between
 * two computes at all (it waits for k, checks the verdict and commits k while k+1 computes). A
 * task whose key is not loaded into the backend yet is not posted but run whole by work() after
 * the one before it (loading a key while another compute runs is not a pair the backends allow;
 * with none in flight launch() loads it first).
 * --batch B: up to B staged tasks of one zkey in one zp_bk_prove_g1_batch (B + 1 credits; not chained).
 * The slot's vectors stay intact: the CPU backend clobbers a and b and writes h, so it computes
 * in the set's work buffers, and its first pass (the inverse NTTs' out-of-place bit reversal,
 * zp_bk_prove_g1_from) reads a, b, c from the slot and writes them there: no separate copy (a
 * retry of this stage reads the same payload). The CUDA backend reads the host vectors only:
 * stage() queues their H2D into the task's device buffer set (zp_bk_stage_in: the copy
 * stream, from the pinned arena, while the previous set computes) and work() runs
 * zp_bk_prove_staged on that set; unstage() releases it (after the compute, or for a task
 * dropped or revoked while staged). The key is made ready (pinned, uploaded once, referenced
 * so that it is not evicted) by the stage-in too, on the staging thread.
 * --device accepts N or N-K (a systemd instance name: zkpipe-gpu@N-K is worker K on device N,
 * `--device %i`); without --instance, N-K gives instance N*64+K, unique per (device, k).
 * Every backend call goes through the wrapper stage/backend.h (spans, fault injection, and the
 * one rule for fatal errors): a device error fails the task as a DEVICE failure and the stage
 * runtime then exits (ZP_STAGE_EXIT_DEVICE) so the supervisor restarts this worker clean.
 * ZP_TEST_FAULT=OP=CODE[@N] arms the wrapper's fault injection (tests only);
 * ZP_TEST_CUDA_EMULATE=1 opens the CUDA backend on the host-emulated device (tests only);
 * ZP_TEST_HOLD_DIR/hold-gpu-compute holds a task inside its compute (on the compute thread when
 * launched), hold-gpu-verify its
 * deferred payload verify (tests only).
 * Options, signals, key cache, loop: the stage runtime (stage/stage.h).
 * Tests: tests/ipc/ (up_gpus.sh for the device arguments, stage_device.sh for device errors,
 * stage_overlap.sh / stage_corrupt.sh / stage_batch.sh for staging and batching,
 * stage_deferred.sh for the deferred verify). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/groth16/groth16.h"
#include "lib/util/util.h"
#include "stage/backend.h"
#include "stage/stage.h"
#ifdef ZP_HAVE_CUDA
#include "gpu-worker/cuda/backend_cuda.h"
#endif

static_assert(ZP_G16_NMSM * sizeof(zp_g1_any_t) <= ZP_SHM_RESULT_BYTES, "result area holds the 4 points");

/* one buffer set: what stage() prepared for work() (the set is the task's until it is reported) */
typedef struct {
    zp_keyent_t *ke;                    /* referenced until unstage */
    zp_scalar_t *w, *a, *b, *c, *h;     /* the slot's vectors (read only) */
    zp_scalar_t *pa, *pb, *ph;          /* work buffers (CPU backend: its first NTT pass reads a, b, c
                                           from the slot and writes them here; it clobbers them) */
    size_t pcap;                        /* elements */
    bool dev;                           /* a device buffer set was staged (release it in unstage) */
    bool posted;                        /* launch() posted the compute: work() waits for it */
    uint64_t begun0;                    /* zp_bk_begun when stage() began (verify_when_busy) */
    zp_bk_run_t run;                    /* the posted compute and what it writes */
    zp_g1_any_t out[ZP_G16_NMSM];
    zp_g16_times_t tm;
} bset_t;

typedef struct {
    const char *backend;         /* --backend auto|cuda|cpu */
    int device, dev_k;           /* --device N[-K] */
    uint8_t *registered;         /* the arena's base, registered with the backend (REG_CHUNK pieces) */
    size_t registered_len;
    /* a task is running: a registration now is counted as in-task (in_stage: the staging
     * thread, around zp_stage_arena; in_work: the work thread, around key_register) */
    bool in_stage, in_work;
    unsigned long long arena_registrations, task_registrations;
    zp_bk_t bk;
    bool private_vectors;        /* backend clobbers a, b: compute in work buffers (prove_g1_from) */
    bset_t set[64];              /* buffer sets (s->stage_sets used): one per task staged or running */
    unsigned long long batches, batched_tasks;
    bool batch_given;            /* --batch was given (else $ZP_GPU_BATCH) */
    int rt_prio;                 /* --rt-priority / $ZP_GPU_RT_PRIORITY (-1: not given): lib/util/rt.c */
    int rt_slice;                /* --rt-slice / $ZP_GPU_RT_SLICE in us (-1: not given, 100) */
    unsigned inflight;           /* computes launch() posted that work() has not waited for (work thread) */
    bool inline_compute;         /* --inline-compute / $ZP_GPU_INLINE_COMPUTE=1: the CPU backend's
                                    compute on the work thread (its pool's thread 0), not detached */
} gpu_t;

#define REG_CHUNK ((size_t)256 << 20)   /* arena registration step: one backend call per 256 MiB */

/* the arena of a new epoch: pinned in REG_CHUNK pieces (every H2D copy is then a DMA), on the
 * main thread before HELLO or on the loop thread before that epoch's tasks (stage.h
 * arena_first), never inside a task. A device error marks the backend broken (prepare exits
 * for a restart, a later task fails DEVICE); any other failure (ENOMEM, RLIMIT_MEMLOCK) leaves
 * the arena pageable, with a warning. */
static void arena_opened(zp_stage_t *s)
{
    gpu_t *g = s->ctx;
    size_t len, done = 0;
    uint8_t *base = zp_shm_base(s->arena, &len);
    uint64_t t0 = zp_now_ns();
    int rc = 0;
    if (g->in_stage) {
        g->task_registrations++;
        zp_log(ZP_LOG_ERROR, "arena %s registered inside a task (registration #%llu in a task): the loop should "
               "have registered it before; this task pays the pinning time", s->arena_name,
               (unsigned long long)g->task_registrations);
    }
    while (done < len) {
        size_t n = len - done < REG_CHUNK ? len - done : REG_CHUNK;
        if ((rc = zp_bk_host_register(&g->bk, base + done, n)) < 0) break;
        done += n;
    }
    if (rc < 0) {
        for (size_t o = 0; o < done; o += REG_CHUNK) zp_bk_host_unregister(&g->bk, base + o);
        zp_log(zp_bk_fatal(rc) ? ZP_LOG_ERROR : ZP_LOG_WARN,
               "host_register of the arena %s (%zu MiB) failed: %s %s; %s", s->arena_name, len >> 20,
               zp_strerror(rc), zp_err_msg(),
               zp_bk_fatal(rc) ? "a device error: this worker restarts" : "falling back to pageable copies");
        zp_err_clear();
        return;
    }
    g->registered = base;
    g->registered_len = len;
    if (!g->in_stage) g->arena_registrations++;
    zp_log(ZP_LOG_INFO, "arena %s: %zu bytes (%zu MiB) registered with the %s backend in %zu chunk(s), %.1f ms%s",
           s->arena_name, len, len >> 20, zp_bk_name(&g->bk), (len + REG_CHUNK - 1) / REG_CHUNK,
           (zp_now_ns() - t0) / 1e6, g->in_stage ? " (inside a task)" : " (before tasks)");
}

static void arena_closing(zp_stage_t *s)
{
    gpu_t *g = s->ctx;
    if (g->registered)
        for (size_t o = 0; o < g->registered_len; o += REG_CHUNK) zp_bk_host_unregister(&g->bk, g->registered + o);
    g->registered = NULL;
    g->registered_len = 0;
}

/* pin a cached key's shared region (once per entry); fatal (device) errors returned, others
 * logged and left pageable */
static int key_register(gpu_t *g, zp_keyent_t *ke, const char *path)
{
    if (!ke->ks || __atomic_load_n(&ke->user, __ATOMIC_ACQUIRE)) return 0;
    if (g->in_work) {
        g->task_registrations++;
        zp_log(ZP_LOG_WARN, "proving key %s registered inside a task (registration #%llu in a task; "
               "--preload it to pin it before HELLO)", path, (unsigned long long)g->task_registrations);
    }
    int rc = zp_bk_host_register(&g->bk, ke->ks->data, ke->ks->data_len);
    if (rc < 0) {
        if (zp_bk_fatal(rc)) return rc;
        zp_log(ZP_LOG_WARN, "host_register of key %s (%zu MiB, read-only shm) failed: %s %s; its copies will be pageable",
               path, ke->ks->data_len >> 20, zp_strerror(rc), zp_err_msg());
    } else {
        __atomic_store_n(&ke->user, ke->ks->data, __ATOMIC_RELEASE);   /* the heartbeat's listing reads it */
    }
    zp_err_clear();
    return 0;
}

/* main thread, after the arena was opened (and registered) and --preload, before HELLO: pin
 * the preloaded keys' regions and upload the keys; a device error exits for a restart */
static int prepare(zp_stage_t *s)
{
    gpu_t *g = s->ctx;
    for (unsigned i = 0; i < s->n_preload && !g->bk.broken; i++) {
        zp_keyent_t *ke;
        int rc = zp_keycache_key_spec(s->kc, s->preload[i], true, &ke);
        if (rc < 0) continue;   /* preload already reported it; a task will report it again */
        if ((rc = key_register(g, ke, s->preload[i])) < 0) { zp_keycache_release(s->kc, ke); break; }
        uint64_t t0 = zp_now_ns();
        if (ke->backend_tag != g->bk.be) {
            if (zp_bk_load_key(&g->bk, &ke->key) < 0) { zp_keycache_release(s->kc, ke); break; }
            ke->backend_tag = g->bk.be;
            zp_log(ZP_LOG_INFO, "proving key %s loaded into the %s backend in %.1f ms (before HELLO)", s->preload[i],
                   zp_bk_name(&g->bk), (zp_now_ns() - t0) / 1e6);
        }
        zp_keycache_release(s->kc, ke);
    }
    if (g->bk.broken) {
        zp_log(ZP_LOG_ERROR, "device failure before HELLO (the backend error above): exiting for a clean restart");
        return ZP_STAGE_EXIT_DEVICE;
    }
    zp_log(ZP_LOG_INFO, "host_register before HELLO: arena %s, %u preloaded key(s)",
           g->registered ? "pinned" : "pageable", s->n_preload);
    return -1;
}

/* keycache: a key's memory is about to go away: unpin it first */
static void key_release(void *ctx, zp_keyent_t *e)
{
    gpu_t *g = ctx;
    void *p = __atomic_exchange_n(&e->user, NULL, __ATOMIC_ACQ_REL);
    if (p && g->bk.be) zp_bk_host_unregister(&g->bk, p);
}

/* keycache (the heartbeat's key listing, any thread): pinned and on the device as the backend
 * sees it now (a key the device table evicted is no longer listed there); nothing of either
 * on the CPU backend */
static uint32_t key_tiers(void *ctx, const zp_keyent_t *e)
{
    gpu_t *g = ctx;
    int r = zp_bk_key_resident(&g->bk, &e->key);
    if (r < 0) return 0;
    return (__atomic_load_n(&e->user, __ATOMIC_ACQUIRE) ? ZP_KEYTIER_PINNED : 0) | (r ? ZP_KEYTIER_DEVICE : 0);
}

/* a backend call failed: the wrapper's rule decides whether the device is gone (DEVICE: the
 * runtime reports it and exits for a clean restart) or the task may be retried */
static void backend_failed(zp_stage_task_t *t, int rc, const char *what)
{
    zp_stage_fail_as(t, rc, zp_bk_fatal(rc) ? ZP_FAIL_DEVICE : ZP_FAIL_TRANSIENT, what);
}

static int ensure_private(bset_t *bs, size_t n)
{
    if (n <= bs->pcap) return 0;
    free(bs->pa); free(bs->pb); free(bs->ph);
    bs->pa = aligned_alloc(64, n * sizeof(zp_scalar_t));
    bs->pb = aligned_alloc(64, n * sizeof(zp_scalar_t));
    bs->ph = aligned_alloc(64, n * sizeof(zp_scalar_t));
    bs->pcap = bs->pa && bs->pb && bs->ph ? n : 0;
    return bs->pcap ? 0 : zp_err_set(-ENOMEM, "private vectors of %zu elements", n);
}

/* stage(): the O(1) checks of the slot and the payload for key entry ke (the checksum is
 * deferred: verify()); 0, or t failed */
static int stage_checks(zp_stage_t *s, zp_stage_task_t *t, zp_keyent_t *ke, bset_t *bs)
{
    gpu_t *g = s->ctx;
    const zp_msg_assign_t *a = &t->a;
    const zp_g16_key_t *k = &ke->key;
    int rc;
    if ((rc = zp_shm_slot_check(s->arena, a->slot, ZP_SLOT_PROVING, a->gen)) < 0) {
        zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot");
        return rc;
    }
    /* the seal's stamp, mask and vector offsets (O(1)): a payload of another generation is
     * refused before the compute */
    if ((rc = zp_shm_payload_stamp(s->arena, a->slot, a->payload_gen)) < 0) {
        zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "synthesized payload");
        t->payload_bad = true;
        return rc;
    }
    const zp_shm_slot_t *d = zp_shm_slot(s->arena, a->slot);
    size_t lw, la, lb, lc, lh;
    zp_scalar_t *w = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_W, &lw);
    zp_scalar_t *va = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_A, &la);
    zp_scalar_t *vb = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_B, &lb);
    zp_scalar_t *vc = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_C, &lc);
    zp_scalar_t *vh = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_H, &lh);
    size_t n = k->domain_size, nb = n * sizeof(zp_scalar_t);
    if (!w || !va || !vb || !vc || !vh || d->n_vars != k->n_vars || d->domain_size != k->domain_size ||
        lw < (size_t)k->n_vars * 32 || la < nb || lb < nb || lc < nb || lh < nb) {
        zp_err_set(ZP_EFORMAT, "slot %u vectors do not fit the key (%u vars, domain %u)", a->slot, k->n_vars, k->domain_size);
        zp_stage_fail_as(t, ZP_EFORMAT, ZP_FAIL_TRANSIENT, "slot");
        t->payload_bad = true;
        return ZP_EFORMAT;
    }
    /* the work buffers (allocated once per set and size; nothing is copied into them here) */
    if (g->private_vectors && (rc = ensure_private(bs, n)) < 0) {
        zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "memory");
        return rc;
    }
    bs->ke = ke;
    bs->w = w; bs->a = va; bs->b = vb; bs->c = vc; bs->h = vh;
    bs->dev = bs->posted = false;
    return 0;
}

static int key_ready(zp_stage_t *s, zp_stage_task_t *t, zp_keyent_t *ke, bool staging);

/* stage(), a device backend: the key ready (pinned, uploaded) and the H2D of w, a, b, c queued
 * into the task's device buffer set; returns without waiting for the copies. 0, or t failed. */
static int stage_device(zp_stage_t *s, zp_stage_task_t *t, bset_t *bs)
{
    gpu_t *g = s->ctx;
    int rc;
    if ((rc = key_ready(s, t, bs->ke, true)) < 0) return rc;
    if ((rc = zp_bk_stage_in(&g->bk, t->set, &bs->ke->key, bs->w, bs->a, bs->b, bs->c)) < 0) {
        backend_failed(t, rc, "stage_in");
        return rc;
    }
    bs->dev = true;
    return 0;
}

/* Staging thread (stage.h def->stage), for task k+1 (while task k computes, or at once when
 * the worker was starved): arena, key lookup, slot check (PROVING, gen), the seal's stamp, the
 * layout checks, the work buffers (CPU) or the device set's H2D (queued, CUDA): nothing O(n)
 * on the host. The payload's checksum is deferred: verify() below runs right after, on this
 * thread and its pool, beside the compute, and gates the commit (work() waits for its verdict
 * before PROVING -> PROVED). Protection: a payload that does not verify is never committed
 * (payload_bad: back to synthesis, as when it was checked before the compute); a corruption
 * after the verify read it (a stray write into a slot held PROVING(gen) by this worker) is
 * caught by the finalizer's verify of the same seal before the proof is released. */
static void stage(zp_stage_t *s, zp_stage_task_t *t)
{
    gpu_t *g = s->ctx;
    bset_t *bs = &g->set[t->set];
    const zp_msg_assign_t *a = &t->a;
    zp_keyent_t *ke;
    int rc;

    zp_err_clear();
    bs->begun0 = zp_bk_begun(&g->bk);   /* before the work thread can take it: its compute comes after */
    /* the arena of this epoch was opened and registered by the loop (arena_first): a no-op here */
    g->in_stage = true;
    rc = zp_stage_arena(s, a->epoch);
    g->in_stage = false;
    if (rc < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "arena");
    if ((rc = zp_keycache_key_r1cs(s->kc, t->zkey, t->r1cs, true, &ke)) < 0) return zp_stage_fail(t, rc, "zkey");
    if ((rc = stage_checks(s, t, ke, bs)) < 0 || (zp_bk_has_stage_in(&g->bk) && stage_device(s, t, bs) < 0)) {
        zp_keycache_release(s->kc, ke);
        bs->ke = NULL;
        return;
    }
    t->staged = true;
    zp_log(ZP_LOG_DEBUG, "slot %u staged in buffer set %u (payload checksum deferred: beside the compute)", a->slot,
           t->set);
}

/* stage.h def->deferred (the runtime's zp-verify thread, for the staging thread), right after
 * stage() handed the task to the work thread: the sealed payload's checksum (chunks on the staging pool), overlapped with this
 * task's compute (or the previous one's when staged ahead). It begins only once a compute
 * runs or has begun since the staging (verify_when_busy). Staged ahead, that is at once.
 * Starved (the device idle, this task's compute about to be posted), the checksum would
 * otherwise race the work thread's launch and the compute thread's wake-up for a core: on 2
 * cores at 2^18, 3 of 11 pairs lost 2.2-2.5 ms, the woken thread queued behind zp-verify while
 * the other core idled (sched_switch trace). It polls, 50 us to 5 ms steps (1/8 of the wait so
 * far): a signal at the compute's start would be a system call on the device's path. It stops
 * waiting on a revoke, a stop or a reset, or after VERIFY_IDLE_WAIT_NS (a key load before the
 * compute, a device failure). The verdict is needed
 * only at the commit, after the compute. ZP_TEST_HOLD_DIR/hold-gpu-verify holds it before that
 * wait (tests: the compute then starts and ends before the verdict, and the wait, released,
 * ends at once: the compute began since the staging). */
#define VERIFY_IDLE_WAIT_NS 5000000000ull   /* the device idle that long: the check runs anyway */
static void verify_when_busy(gpu_t *g, zp_stage_task_t *t)
{
    if (!zp_bk_detached(&g->bk)) return;   /* inline compute: nothing to tell from */
    uint64_t t0 = zp_now_ns(), now = t0, begun0 = g->set[t->set].begun0;
    /* a compute running, or one begun since staging (this task's, short enough to have ended
     * between two looks, or the one before it) */
    while (!zp_bk_busy(&g->bk) && zp_bk_begun(&g->bk) == begun0 && !t->revoked && !t->dropped &&
           now - t0 < VERIFY_IDLE_WAIT_NS) {
        nanosleep(&(struct timespec){.tv_nsec = (long)zp_poll_step_ns(t0, now, 8, 50000u, 5000000u)}, NULL);
        now = zp_now_ns();
    }
    if (now - t0 >= VERIFY_IDLE_WAIT_NS)
        zp_log(ZP_LOG_DEBUG, "slot %u: no compute began within %.0f s: the payload verify runs now", t->a.slot,
               VERIFY_IDLE_WAIT_NS / 1e9);
}

static int verify(zp_stage_t *s, zp_stage_task_t *t)
{
    const zp_msg_assign_t *a = &t->a;
    zp_stage_test_hold_at("gpu-verify", &t->revoked);
    verify_when_busy(s->ctx, t);
    uint64_t t0 = zp_now_ns();
    int rc = zp_shm_payload_verify_pool(s->arena, a->slot, a->payload_gen, s->stage_pool);
    t->dt[ZP_DT_VERIFY_IN] = zp_now_ns() - t0;
    zp_log(ZP_LOG_DEBUG, "slot %u payload %s in %.1f ms (deferred, beside the compute)", a->slot,
           rc < 0 ? "does NOT verify" : "verified", t->dt[ZP_DT_VERIFY_IN] / 1e6);
    return rc;
}

/* work thread, before the commit: the deferred verify's verdict (waiting for it if the compute
 * ended first); 0, or t failed payload_bad (its result is dropped, nothing committed) */
static int verdict(zp_stage_t *s, zp_stage_task_t *t)
{
    uint64_t w0 = zp_now_ns();
    int rc = zp_stage_deferred_wait(s, t);
    uint64_t waited = zp_now_ns() - w0;
    if (waited > 1000000)
        zp_log(ZP_LOG_DEBUG, "slot %u: the commit waited %.1f ms for the payload verify", t->a.slot, waited / 1e6);
    if (rc < 0) {
        zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "synthesized payload");
        t->payload_bad = true;
        zp_log(ZP_LOG_WARN, "slot %u gen %llu: the payload did not verify: the computed result is dropped, "
               "nothing committed (back to synthesis)", t->a.slot, (unsigned long long)t->a.gen);
    }
    return rc;
}

static void unstage(zp_stage_t *s, zp_stage_task_t *t)
{
    gpu_t *g = s->ctx;
    bset_t *bs = &g->set[t->set];
    if (bs->dev) {   /* the device set (and the key reference) back, after the compute or instead of it */
        int rc = zp_bk_release_set(&g->bk, t->set);
        if (rc < 0 && !zp_bk_fatal(rc))
            zp_log(ZP_LOG_WARN, "release of device buffer set %u: %s %s", t->set, zp_strerror(rc), zp_err_msg());
        bs->dev = false;
    }
    if (bs->ke) zp_keycache_release(s->kc, bs->ke);
    bs->ke = NULL;
}

/* key_ready's O(key) part: pin the key's region, upload it */
static int key_ready_load(zp_stage_t *s, zp_stage_task_t *t, zp_keyent_t *ke, bool staging)
{
    gpu_t *g = s->ctx;
    uint64_t t0 = zp_now_ns();
    /* the shared key region: pinned once, so the upload below is a DMA (a preloaded key was
     * pinned before HELLO) */
    if (!staging) g->in_work = true;
    int rc = key_register(g, ke, t->zkey);
    if (!staging) g->in_work = false;
    if (rc < 0) { backend_failed(t, rc, "host_register"); return rc; }
    if ((rc = zp_bk_load_key(&g->bk, &ke->key)) < 0) { backend_failed(t, rc, "load_key"); return rc; }
    ke->backend_tag = g->bk.be;
    zp_log(ZP_LOG_INFO, "proving key %s loaded into the %s backend in %.1f ms", t->zkey, zp_bk_name(&g->bk),
           (zp_now_ns() - t0) / 1e6);
    return 0;
}

/* work thread (staging thread for a device stage-in): the key resident in the backend (once
 * per key and process: pinned and uploaded; a preloaded key already is); 0 or the task failed */
static int key_ready(zp_stage_t *s, zp_stage_task_t *t, zp_keyent_t *ke, bool staging)
{
    gpu_t *g = s->ctx;
    if (ke->backend_tag == g->bk.be) return 0;
    zp_rt_pause();   /* pinning and the upload: O(key) host work at the normal policy */
    int rc = key_ready_load(s, t, ke, staging);
    zp_rt_resume();
    return rc;
}

static void times_to_task(zp_stage_task_t *t, const zp_g16_times_t *tm)
{
    t->dt[ZP_DT_H2D] = tm->h2d_ns;
    t->dt[ZP_DT_NTT] = tm->ntt_ns;
    t->dt[ZP_DT_MSM] = tm->msm_ns[0] + tm->msm_ns[1] + tm->msm_ns[2] + tm->msm_ns[3];
    t->dt[ZP_DT_D2H] = tm->d2h_ns;
}

/* the O(1) end of a task: the 4 points into the result area (fenced PROVING(gen) -> PROVED) */
static void commit(zp_stage_t *s, zp_stage_task_t *t, const zp_g1_any_t out[ZP_G16_NMSM])
{
    int rc = zp_shm_commit(s->arena, t->a.slot, ZP_SLOT_PROVING, t->a.gen, ZP_SLOT_PROVED, ZP_SHM_AREA_RESULT, out,
                           ZP_G16_NMSM * sizeof(zp_g1_any_t), &t->new_gen);
    if (rc < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "commit");
    t->ok = true;
}

/* the test hold inside a compute (ZP_TEST_HOLD_DIR/hold-gpu-compute): on the compute thread
 * for a launched one, on the work thread otherwise */
static void hold_compute(void *t) { zp_stage_test_hold_at("gpu-compute", &((zp_stage_task_t *)t)->revoked); }

/* a compute about to begin (posted or run here): its outputs cleared, its start stamped */
static void compute_begin(bset_t *bs, zp_stage_task_t *t)
{
    memset(bs->out, 0, sizeof bs->out);
    memset(&bs->tm, 0, sizeof bs->tm);
    t->tm[ZP_TM_COMPUTE_START] = zp_now_ns();
}

/* the posted compute is no longer outstanding (waited for, or taken back) */
static void unpost(gpu_t *g, bset_t *bs)
{
    bs->posted = false;
    g->inflight--;
}

/* def->launch (work thread): post t's compute behind the running one (the compute thread, or on
 * CUDA the stream, runs it the moment that one ends); 1 posted, 0 for work() to run it whole (no
 * compute thread, or the key not loaded into the backend yet: loading it while another compute
 * runs is not a pair the backend allows; with none in flight it is loaded here), < 0 t failed */
static int launch(zp_stage_t *s, zp_stage_task_t *t, void (*done)(void *), void *arg)
{
    gpu_t *g = s->ctx;
    bset_t *bs = &g->set[t->set];
    if (!zp_bk_detached(&g->bk) || (!bs->dev && !g->private_vectors)) return 0;
    /* a key not loaded yet: here when no compute is in flight, else by work() after the one before */
    if (!bs->dev && bs->ke->backend_tag != g->bk.be) {
        if (g->inflight) return 0;
        if (key_ready(s, t, bs->ke, false) < 0) return -1;
    }
    compute_begin(bs, t);
    bs->run.pre = hold_compute;
    bs->run.pre_arg = t;
    int rc = bs->dev ? zp_bk_post_prove_staged(&g->bk, &bs->run, t->set, &bs->ke->key, bs->out, &bs->tm, done, arg)
                     : zp_bk_post_prove_g1_from(&g->bk, &bs->run, &bs->ke->key, bs->w, bs->a, bs->b, bs->c, bs->pa,
                                                bs->pb, bs->ph, bs->out, &bs->tm, done, arg);
    if (rc == -ENOTSUP) return 0;
    if (rc < 0) {
        t->tm[ZP_TM_COMPUTE_END] = zp_now_ns();
        backend_failed(t, rc, bs->dev ? "prove_staged" : "prove_g1");
        return rc;
    }
    bs->posted = true;
    g->inflight++;
    return 1;
}

/* def->cancel (work thread): a launched task revoked before its compute began */
static bool cancel(zp_stage_t *s, zp_stage_task_t *t)
{
    gpu_t *g = s->ctx;
    bset_t *bs = &g->set[t->set];
    if (!bs->posted || !zp_bk_run_cancel(&g->bk, &bs->run)) return false;
    unpost(g, bs);
    t->tm[ZP_TM_COMPUTE_START] = 0;
    return true;
}

/* work thread, on a staged task: the compute (launched: its wait) and the commit, nothing O(n)
 * besides the compute */
static void work(zp_stage_t *s, zp_stage_task_t *t)
{
    gpu_t *g = s->ctx;
    bset_t *bs = &g->set[t->set];
    zp_err_clear();
    int rc;
    if (bs->posted) {
        unpost(g, bs);
        rc = zp_bk_run_wait(&g->bk, &bs->run);
        t->tm[ZP_TM_COMPUTE_END] = zp_now_ns();
        t->tm[ZP_TM_RUN_START] = bs->run.run_start;
        t->tm[ZP_TM_RUN_END] = bs->run.run_end;
    } else {
        if (!bs->dev && key_ready(s, t, bs->ke, false) < 0) return;
        compute_begin(bs, t);
        hold_compute(t);   /* tests: task k held in its compute */
        rc = bs->dev ? zp_bk_prove_staged(&g->bk, t->set, &bs->ke->key, bs->out, &bs->tm)
             : g->private_vectors ? zp_bk_prove_g1_from(&g->bk, &bs->ke->key, bs->w, bs->a, bs->b, bs->c, bs->pa,
                                                        bs->pb, bs->ph, bs->out, &bs->tm)
                                  : zp_bk_prove_g1(&g->bk, &bs->ke->key, bs->w, bs->a, bs->b, bs->c, bs->h, bs->out,
                                                   &bs->tm);
        t->tm[ZP_TM_COMPUTE_END] = zp_now_ns();
        zp_bk_last_run(&g->bk, &t->tm[ZP_TM_RUN_START], &t->tm[ZP_TM_RUN_END]);
    }
    if (rc < 0) return backend_failed(t, rc, bs->dev ? "prove_staged" : "prove_g1");
    times_to_task(t, &bs->tm);
    if (verdict(s, t) < 0) return;
    commit(s, t, bs->out);
}

/* work thread, --batch: n staged tasks of one zkey path in one zp_bk_prove_g1_batch (the MSMs
 * share the bases' reads); tasks whose cached key entry differs (the file changed in between)
 * run one by one */
static void work_batch(zp_stage_t *s, zp_stage_task_t **ts, unsigned n)
{
    gpu_t *g = s->ctx;
    zp_keyent_t *ke = g->set[ts[0]->set].ke;
    for (unsigned i = 0; i < n; i++)   /* device sets staged: each computes on its own set */
        if (g->set[ts[i]->set].ke != ke || g->set[ts[i]->set].dev) {
            for (unsigned j = 0; j < n; j++) work(s, ts[j]);
            return;
        }
    zp_err_clear();
    if (key_ready(s, ts[0], ke, false) < 0) {
        for (unsigned i = 1; i < n; i++) {
            ts[i]->ok = false; ts[i]->code = ts[0]->code; ts[i]->fail_class = ts[0]->fail_class;
            memcpy(ts[i]->msg, ts[0]->msg, sizeof ts[i]->msg);
        }
        return;
    }
    zp_g16_g1_job_t jobs[ZP_MSG_MAX_CREDITS];
    for (unsigned i = 0; i < n; i++) {
        const bset_t *bs = &g->set[ts[i]->set];
        jobs[i] = g->private_vectors   /* the slot's a, b, c read by the first NTT pass, never written */
                  ? (zp_g16_g1_job_t){.w = bs->w, .a = bs->pa, .b = bs->pb, .c = bs->c, .h = bs->ph, .a_in = bs->a,
                                      .b_in = bs->b}
                  : (zp_g16_g1_job_t){.w = bs->w, .a = bs->a, .b = bs->b, .c = bs->c, .h = bs->h};
    }
    zp_g16_times_t tm;
    uint64_t c0 = zp_now_ns();
    zp_stage_test_hold_at("gpu-compute", &ts[0]->revoked);
    int rc = zp_bk_prove_g1_batch(&g->bk, &ke->key, n, jobs, &tm);
    uint64_t c1 = zp_now_ns(), r0, r1;
    zp_bk_last_run(&g->bk, &r0, &r1);
    g->batches++;
    g->batched_tasks += n;
    zp_log(ZP_LOG_INFO, "batch of %u partitions of %s computed in %.1f ms%s", n, ts[0]->zkey, (c1 - c0) / 1e6,
           rc < 0 ? " (failed)" : "");
    for (unsigned i = 0; i < n; i++) {
        zp_stage_task_t *t = ts[i];
        t->tm[ZP_TM_COMPUTE_START] = c0;
        t->tm[ZP_TM_COMPUTE_END] = c1;
        t->tm[ZP_TM_RUN_START] = r0;
        t->tm[ZP_TM_RUN_END] = r1;
        if (rc < 0) { backend_failed(t, rc, "prove_g1_batch"); continue; }
        times_to_task(t, &tm);
        if (verdict(s, t) < 0) continue;
        commit(s, t, jobs[i].out);
    }
}

/* "N" or "N-K": device ordinal N (after CUDA_VISIBLE_DEVICES), per-device index K */
static int parse_device(const char *s, int *dev, int *k)
{
    char *e;
    errno = 0;
    long d = strtol(s, &e, 10);
    if (errno || e == s || d < 0 || d > 4095 || (*e && *e != '-')) return -1;
    *dev = (int)d;
    *k = -1;
    if (*e == '-') {
        const char *ks = e + 1;
        long kv = strtol(ks, &e, 10);
        if (errno || e == ks || *e || kv < 0 || kv > 63 || *ks == '-' || *ks == '+') return -1;
        *k = (int)kv;
    }
    return 0;
}

/* a number from lo to hi for option or variable `what` (--batch 1..32, --rt-priority 0..99) */
static int parse_range(const char *what, const char *arg, long lo, long hi, long *out)
{
    char *e;
    errno = 0;
    long v = strtol(arg, &e, 10);
    if (errno || e == arg || *e || v < lo || v > hi) {
        fprintf(stderr, "zkpipe-gpu-worker: %s '%s': expected a number from %ld to %ld\n", what, arg, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_batch(zp_stage_t *s, const char *what, const char *arg)
{
    long v;
    if (parse_range(what, arg, 1, 32, &v) < 0) return -1;
    s->batch = (unsigned)v;
    return 0;
}

static int parse_rt(int *out, const char *what, const char *arg, bool slice)   /* 0: off */
{
    long v;
    if (parse_range(what, arg, 0, slice ? ZP_RT_SLICE_MAX_US : 99, &v) < 0) return -1;
    if (slice && !zp_rt_slice_ok(v)) {
        fprintf(stderr, "zkpipe-gpu-worker: %s '%s': expected 0 (off) or a number from %d to %d\n", what, arg,
                ZP_RT_SLICE_MIN_US, ZP_RT_SLICE_MAX_US);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int opt(zp_stage_t *s, int c, const char *arg)
{
    gpu_t *g = s->ctx;
    switch (c) {
    case 'd':
        if (parse_device(arg, &g->device, &g->dev_k) < 0) {
            fprintf(stderr, "zkpipe-gpu-worker: --device '%s': expected N or N-K (K < 64)\n", arg);
            return 2;
        }
        return -1;
    case 'b':
        if (strcmp(arg, "auto") && strcmp(arg, "cuda") && strcmp(arg, "cpu")) {
            fprintf(stderr, "zkpipe-gpu-worker: --backend '%s': expected auto, cuda or cpu\n", arg);
            return 2;
        }
        g->backend = arg;
        return -1;
    case 'n':
        if (parse_batch(s, "--batch", arg) < 0) return 2;
        g->batch_given = true;
        return -1;
    case 'R':
        if (parse_rt(&g->rt_prio, "--rt-priority", arg, false) < 0) return 2;
        return -1;
    case 'S':
        if (parse_rt(&g->rt_slice, "--rt-slice", arg, true) < 0) return 2;
        return -1;
    case 'I':
        g->inline_compute = true;
        return -1;
    case 'B':   /* for `zkpipe up`: the backends this build has */
#ifdef ZP_HAVE_CUDA
        puts("cuda cpu");
#else
        puts("cpu");
#endif
        return 0;
    default:
        return 2;
    }
}

static int open_backend(gpu_t *g, unsigned threads, char *name, size_t nn)
{
    zp_backend_cfg_t cfg = {.threads = threads, .device = g->device};
    int rc;
#ifdef ZP_HAVE_CUDA
    if (strcmp(g->backend, "cpu")) {
        const char *emu = getenv("ZP_TEST_CUDA_EMULATE");
        bool emulated = emu && !strcmp(emu, "1");
        if (emulated) zp_log(ZP_LOG_WARN, "ZP_TEST_CUDA_EMULATE=1 (a test hook): the CUDA backend on the host-emulated device");
        rc = zp_bk_open(&g->bk, emulated ? &zp_backend_cuda_emulated : &zp_backend_cuda, &cfg);
        if (rc == 0) {
            g->private_vectors = false;
            snprintf(name, nn, "cuda:%d", g->device);
            /* prove_staged on its own thread too (every executor entry binds the device to the
             * calling thread): the next partition's is posted behind the running one, so the
             * device is handed the next compute without waiting on the work thread */
            if ((rc = zp_bk_detach(&g->bk)) < 0) zp_bk_close(&g->bk);
            return rc;
        }
        if (!strcmp(g->backend, "cuda")) return rc;
        zp_log(ZP_LOG_WARN, "no usable CUDA device %d (%s %s): using the CPU backend", g->device, zp_strerror(rc),
               zp_err_msg());
    }
#else
    if (!strcmp(g->backend, "cuda")) return zp_err_set(ZP_ENODEV, "this build has no CUDA backend");
    zp_log(ZP_LOG_WARN, "built without CUDA: using the CPU backend");
#endif
    if ((rc = zp_bk_open(&g->bk, &zp_backend_cpu, &cfg)) < 0) return rc;
    g->private_vectors = true;
    /* the compute on its own thread, the work thread asleep meanwhile as on a device */
    const char *ei = getenv("ZP_GPU_INLINE_COMPUTE");
    if (ei && *ei && strcmp(ei, "0") && strcmp(ei, "1")) {
        zp_bk_close(&g->bk);
        return zp_err_set(ZP_EFORMAT, "ZP_GPU_INLINE_COMPUTE '%s': expected 0 or 1", ei);
    }
    if (ei && !strcmp(ei, "1")) g->inline_compute = true;
    if (!g->inline_compute && (rc = zp_bk_detach(&g->bk)) < 0) {
        zp_bk_close(&g->bk);
        return rc;
    }
    snprintf(name, nn, "cpu");
    return 0;
}

static int init(zp_stage_t *s)
{
    gpu_t *g = s->ctx;
    char bname[32];
    if (g->dev_k >= 0 && !s->have_instance) s->instance = (unsigned)g->device * 64u + (unsigned)g->dev_k;
    int rc = open_backend(g, s->threads, bname, sizeof bname);
    if (rc < 0) {
        fprintf(stderr, "zkpipe-gpu-worker: backend %s: %s %s\n", g->backend, zp_strerror(rc), zp_err_msg());
        return 1;
    }
    if (zp_bk_fault_arm(&g->bk, getenv("ZP_TEST_FAULT")) < 0) {
        fprintf(stderr, "zkpipe-gpu-worker: ZP_TEST_FAULT: %s\n", zp_err_msg());
        zp_bk_close(&g->bk);
        return 2;
    }
    zp_log(ZP_LOG_INFO, "backend %s", bname);
    zp_keycache_set_release(s->kc, key_release, g);
    zp_keycache_set_tier_fn(s->kc, key_tiers, g);
    const char *eb = getenv("ZP_GPU_BATCH");
    if (!g->batch_given && eb && *eb && parse_batch(s, "ZP_GPU_BATCH", eb) < 0) {
        zp_bk_close(&g->bk);
        return 2;
    }
    const char *er = getenv("ZP_GPU_RT_PRIORITY"), *es = getenv("ZP_GPU_RT_SLICE");
    if ((g->rt_prio < 0 && er && *er && parse_rt(&g->rt_prio, "ZP_GPU_RT_PRIORITY", er, false) < 0) ||
        (g->rt_slice < 0 && es && *es && parse_rt(&g->rt_slice, "ZP_GPU_RT_SLICE", es, true) < 0)) {
        zp_bk_close(&g->bk);
        return 2;
    }
    /* the control threads (the runtime's loop, staging and work threads) enter it themselves */
    zp_rt_setup(g->rt_prio > 0 ? g->rt_prio : 0, g->rt_slice < 0 ? 100 : (unsigned)g->rt_slice);
    const char *cpu_share = g->private_vectors && g->inline_compute
                                ? " (the CPU backend inline: the work thread's share of each compute too)"
                                : g->private_vectors ? " (the CPU backend's compute on its own thread, in the tier too)" : "";
    if (zp_rt_priority() > 0) zp_log(ZP_LOG_INFO, "control threads at SCHED_FIFO %d%s", zp_rt_priority(), cpu_share);
    else if (zp_rt_slice_us() > 0)
        zp_log(ZP_LOG_INFO, "control threads with a %u us scheduling slice%s", zp_rt_slice_us(), cpu_share);
    /* --batch B: B tasks compute while the next one stages: B + 1 credits (buffer sets) */
    if (s->batch > 1 && s->credits < s->batch + 1) s->credits = s->batch + 1;
    if (s->batch > 1) zp_log(ZP_LOG_INFO, "batching up to %u partitions of one key per compute, %u credits", s->batch,
                             s->credits);
    snprintf(s->name, sizeof s->name, "gpu-worker %s", bname);
    if (strcmp(bname, "cpu")) s->caps |= ZP_CAP_CUDA;
    return -1;
}

/* after the key cache is gone (it may hold registrations keyed by the backend) */
static void fini(zp_stage_t *s)
{
    gpu_t *g = s->ctx;
    zp_bk_log_spans(&g->bk);
    zp_log(g->task_registrations ? ZP_LOG_WARN : ZP_LOG_INFO,
           "host registrations: %llu arena(s) outside tasks, %llu inside tasks", g->arena_registrations,
           g->task_registrations);
    if (g->batches)
        zp_log(ZP_LOG_INFO, "batches: %llu computed, %llu partitions in them", g->batches, g->batched_tasks);
    zp_bk_close(&g->bk);
    for (unsigned i = 0; i < sizeof g->set / sizeof g->set[0]; i++) {
        free(g->set[i].pa); free(g->set[i].pb); free(g->set[i].ph);
    }
}

int main(int argc, char **argv)
{
    static gpu_t G = {.backend = "auto", .dev_k = -1, .rt_prio = -1, .rt_slice = -1};
    static const struct option opts[] = {
        {"device", 1, 0, 'd'}, {"backend", 1, 0, 'b'}, {"backends", 0, 0, 'B'}, {"batch", 1, 0, 'n'},
        {"rt-priority", 1, 0, 'R'}, {"rt-slice", 1, 0, 'S'}, {"inline-compute", 0, 0, 'I'},
        {0, 0, 0, 0}};
    static const zp_stage_def_t def = {
        .role = ZP_ROLE_GPU, .prog = "zkpipe-gpu-worker", .log_role = "gpu-worker", .credits = 2,
        .opts = opts, .opt = opt,
        .usage_args = "[--device N|N-K] [--backend auto|cuda|cpu] [--backends] [--batch B] [--rt-priority P] [--rt-slice US] [--inline-compute]",
        .usage_text = "  --device N-K: worker K on CUDA device N (as systemd's zkpipe-gpu@N-K passes it);\n"
                      "                the default instance is then N*64+K (K < 64)\n"
                      "  --backends:    print the backends this build has (\"cuda cpu\" or \"cpu\") and exit\n"
                      "  --batch B:     compute up to B staged partitions of one key together (default 1,\n"
                      "                or $ZP_GPU_BATCH); the credits become at least B + 1\n"
                      "  --rt-priority P: the control threads (socket loop, staging, work thread) run\n"
                      "                SCHED_FIFO at P (1-99; default 0 = off, or $ZP_GPU_RT_PRIORITY) except\n"
                      "                during O(n) host work (key loads, the payload checksum, arena pinning);\n"
                      "                the CPU backend's compute thread (it stands in for the device) too;\n"
                      "                refused by the kernel: a log line, then --rt-slice\n"
                      "  --rt-slice US: without FIFO, the same threads at the normal policy with a\n"
                      "                US-microsecond scheduling slice (100-100000; default 100, or\n"
                      "                $ZP_GPU_RT_SLICE; 0 = the kernel's): on Linux >= 6.12 their wake-ups\n"
                      "                preempt longer slices (the host's other stages), no privilege needed\n"
                      "  --inline-compute: the CPU backend's compute on the work thread (its pool's\n"
                      "                thread 0; or $ZP_GPU_INLINE_COMPUTE=1) instead of on its own thread\n"
                      "                while the work thread sleeps, as it does on a GPU (the default)\n",
        .init = init, .work = work, .stage = stage, .unstage = unstage, .work_batch = work_batch, .deferred = verify,
        .launch = launch, .cancel = cancel,
        .arena_opened = arena_opened, .arena_closing = arena_closing, .fini = fini,
        .arena_first = true, .prepare = prepare,
        .ctx = &G};
    return zp_stage_run(&def, argc, argv);
}
