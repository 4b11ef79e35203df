/* backend.h - the one wrapper the GPU worker calls a backend through (sqlite os.c style over
 * the zp_backend_ops_t table of lib/groth16/groth16.h: CPU, CUDA). It adds, in one place:
 *   - spans: calls, failures and time per operation (zp_bk_span_t; a debug log line per call);
 *   - fault injection for tests: zp_bk_fault_arm("op=CODE[@N]"), e.g. "load_key=EDEVICE" or
 *     "prove_g1=EDEVICE@2": the N-th call of op (default the first) and every later one fail
 *     with CODE before reaching the backend, as a sticky device error would;
 *   - the one decision whether an error is fatal (zp_bk_fatal): ZP_EDEVICE means the device
 *     context is unusable; the wrapper then refuses every later call (ZP_EDEVICE) and the
 *     stage reports the task as a DEVICE failure and exits for a clean restart.
 * The ops table holds only the production verbs (open/close, host (un)register, load_key,
 * prove_g1); the test and bench verbs (compute_h, msm_g1) are a separate table
 * (lib/groth16/backend_test.h) that neither this wrapper nor the worker includes.
 * Threads: the bookkeeping (spans, the broken flag, the fault counter) is under a lock, so the
 * staging thread's stage_in / release_set may run while the work thread computes (the
 * backend's own ops say which pairs may overlap: stage_in / release_set with prove_staged);
 * the other ops one at a time (the work thread; init and fini on main; the staging thread only
 * while the work thread is idle: an arena of a new epoch).
 * Tests: tests/ipc/stage_device.sh (fault injection on the CPU backend). */
#ifndef ZP_STAGE_BACKEND_H
#define ZP_STAGE_BACKEND_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/groth16/groth16.h"
#include "lib/util/util.h"

enum { ZP_BK_HOST_REGISTER = 0, ZP_BK_HOST_UNREGISTER = 1, ZP_BK_LOAD_KEY = 2, ZP_BK_PROVE_G1 = 3,
       ZP_BK_PROVE_G1_BATCH = 4, ZP_BK_STAGE_IN = 5, ZP_BK_PROVE_STAGED = 6, ZP_BK_RELEASE_SET = 7, ZP_BK_NOPS = 8 };
typedef struct { uint64_t calls, fails, ns; } zp_bk_span_t;
typedef struct zp_bk {
    const zp_backend_ops_t *ops;
    zp_backend_t *be;
    bool broken;                    /* a fatal error was seen: every later call fails */
    zp_bk_span_t span[ZP_BK_NOPS];
    int fault_op, fault_code;       /* fault_op < 0: none */
    uint64_t fault_at;              /* 1-based call number of fault_op from which it fails */
    pthread_mutex_t mu;             /* (added) the fields above, for calls from two threads */
    zp_runner_t *runner;            /* (added, issue 10) zp_bk_detach: the compute verbs' own thread */
    uint64_t run_start, run_end;    /* the last compute verb's span on that thread (0: not detached) */
} zp_bk_t;

/* open ops on cfg into bk (no faults armed) */
int zp_bk_open(zp_bk_t *bk, const zp_backend_ops_t *ops, const zp_backend_cfg_t *cfg);
void zp_bk_close(zp_bk_t *bk);
/* (added, issue 10) from now on the compute verbs (prove_g1, prove_g1_from, prove_g1_batch,
 * prove_staged) run on the wrapper's own thread ("zp-compute", in the control threads' tier, as
 * the device it stands in for would start at once; its pool's other threads are not) while the
 * caller sleeps until they return, as it waits on a GPU stream: for the CPU backend, whose pool
 * then has that thread as its thread 0, so the GPU worker's work thread does not compute. Spans,
 * faults and errors as before. zp_bk_last_run: the last compute verb's start and end on that
 * thread (both 0 when not detached); the caller's own call times bracket them. */
int zp_bk_detach(zp_bk_t *bk);
void zp_bk_last_run(const zp_bk_t *bk, uint64_t *start, uint64_t *end);
/* (added, issue 10) a compute verb posted to the detached compute thread, as a kernel is queued
 * on a stream: it runs after the verbs posted before it, the moment they end, with nothing to
 * wake in between, while the caller goes on (the GPU worker posts partition k+1's compute while
 * k's runs). The caller owns r until zp_bk_run_wait returned; pre (set before posting, may be
 * NULL) runs first on the compute thread (a test hold). Counted and faulted when posted; a verb
 * posted behind one that broke the device fails ZP_EDEVICE without reaching the backend.
 * done(done_arg) (may be NULL) runs on the compute thread once the verb ended. */
typedef struct zp_bk_run {
    int op;
    bool from, posted;
    const zp_g16_key_t *k;
    const zp_scalar_t *w, *a_in, *b_in, *c;
    zp_scalar_t *a, *b, *h;
    zp_g1_any_t *out;
    zp_g16_times_t *t;
    unsigned n, set;
    zp_g16_g1_job_t *jobs;
    void (*pre)(void *arg);
    void *pre_arg;
    uint64_t run_start, run_end;    /* after zp_bk_run_wait: the verb's span on the compute thread */
    zp_bk_t *bk;
    zp_run_t run;
} zp_bk_run_t;
/* is there a compute thread (zp_bk_detach)? Posting needs one. */
bool zp_bk_detached(const zp_bk_t *bk);
/* a compute verb is running on the compute thread now (the device is busy); false without one.
 * zp_bk_begun: how many compute verbs began there so far (0 without one). */
bool zp_bk_busy(const zp_bk_t *bk);
uint64_t zp_bk_begun(const zp_bk_t *bk);
/* post prove_g1_from / prove_staged (arguments as below); 0, or the error the call failed with
 * (nothing posted: no done call) */
int zp_bk_post_prove_g1_from(zp_bk_t *bk, zp_bk_run_t *r, const zp_g16_key_t *k, const zp_scalar_t *w,
                             const zp_scalar_t *a_in, const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a,
                             zp_scalar_t *b, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t,
                             void (*done)(void *), void *done_arg);
int zp_bk_post_prove_staged(zp_bk_t *bk, zp_bk_run_t *r, unsigned set, const zp_g16_key_t *k,
                            zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t, void (*done)(void *), void *done_arg);
/* until the posted verb ended: its result (error message set), r->run_start / run_end */
int zp_bk_run_wait(zp_bk_t *bk, zp_bk_run_t *r);
/* take the posted verb back if it has not begun (true: it never runs, no done call; counted as
 * a call, not as a failure); false: it began (wait for it) */
bool zp_bk_run_cancel(zp_bk_t *bk, zp_bk_run_t *r);
/* spec NULL or "": nothing armed. ZP_EFORMAT with a message on a bad spec. */
int zp_bk_fault_arm(zp_bk_t *bk, const char *spec);
const char *zp_bk_name(const zp_bk_t *bk);
/* the one rule: does this error leave the device unusable? */
bool zp_bk_fatal(int rc);
/* one log line with the spans */
void zp_bk_log_spans(const zp_bk_t *bk);

int zp_bk_host_register(zp_bk_t *bk, void *p, size_t len);
int zp_bk_host_unregister(zp_bk_t *bk, void *p);
int zp_bk_load_key(zp_bk_t *bk, const zp_g16_key_t *k);
int zp_bk_prove_g1(zp_bk_t *bk, const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a, zp_scalar_t *b,
                   const zp_scalar_t *c, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t);
/* (added, issue 10 item 1) prove_g1 that leaves a_in, b_in, c intact: the backend's
 * prove_g1_from (the first NTT pass reads them and writes the work buffers a, b, h), or, for
 * one without it, a copy into a, b then prove_g1. Counted and faulted as prove_g1. */
int zp_bk_prove_g1_from(zp_bk_t *bk, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a_in,
                        const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *h,
                        zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t);
/* n partitions of key k at once (same-circuit batching): the backend's prove_g1_batch, or, when
 * the backend has none, zp_bk_prove_g1 per job (each counted, faults apply). t: the totals.
 * Jobs with a_in / b_in: copied into a / b first for a backend without prove_g1_from. */
int zp_bk_prove_g1_batch(zp_bk_t *bk, const zp_g16_key_t *k, unsigned n, zp_g16_g1_job_t *jobs, zp_g16_times_t *t);
/* (added, issue 10 item 2) device double buffering: does the backend stage onto the device? */
bool zp_bk_has_stage_in(const zp_bk_t *bk);
/* 1 / 0: key k's bases are / are not resident on the device now; -1: the backend has no device
 * (the CPU backend). Any thread; not a span (the heartbeat asks it), no fault injection. */
int zp_bk_key_resident(const zp_bk_t *bk, const zp_g16_key_t *k);
/* the backend's stage_in / prove_staged (groth16.h); faults apply ("stage_in=EDEVICE@2") */
int zp_bk_stage_in(zp_bk_t *bk, unsigned set, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a,
                   const zp_scalar_t *b, const zp_scalar_t *c);
int zp_bk_prove_staged(zp_bk_t *bk, unsigned set, const zp_g16_key_t *k, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t);
/* the set back: always reaches the backend (also after a device error: its memory and key
 * reference go), counted but never failed by an injected fault */
int zp_bk_release_set(zp_bk_t *bk, unsigned set);
#endif
