/* backend.c - the backend wrapper of the GPU worker (see backend.h): every production call
 * goes through call_begin/call_end, which count and time it, fire an armed fault, and decide
 * (zp_bk_fatal, the only place) that an error breaks the device for good.
 * Tests: tests/ipc/stage_device.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/util.h"
#include "stage/backend.h"

static const char *const op_name[ZP_BK_NOPS] = {"host_register", "host_unregister", "load_key", "prove_g1",
                                                         "prove_g1_batch", "stage_in", "prove_staged", "release_set"};

bool zp_bk_fatal(int rc) { return rc == ZP_EDEVICE; }

int zp_bk_open(zp_bk_t *bk, const zp_backend_ops_t *ops, const zp_backend_cfg_t *cfg)
{
    *bk = (zp_bk_t){.ops = ops, .fault_op = -1};
    pthread_mutex_init(&bk->mu, NULL);
    int rc = ops->open(&bk->be, cfg);
    if (rc < 0) bk->be = NULL;
    return rc;
}

int zp_bk_detach(zp_bk_t *bk)
{
    if (bk->runner) return 0;
    bk->runner = zp_runner_new("zp-compute", true);
    return bk->runner ? 0 : zp_err_set(-ENOMEM, "cannot start the compute thread");
}

void zp_bk_last_run(const zp_bk_t *bk, uint64_t *start, uint64_t *end)
{
    *start = bk->run_start;
    *end = bk->run_end;
}

void zp_bk_close(zp_bk_t *bk)
{
    zp_runner_destroy(&bk->runner);
    if (bk->ops && bk->be) bk->ops->close(&bk->be);
    bk->be = NULL;
    if (bk->ops) pthread_mutex_destroy(&bk->mu);
}

const char *zp_bk_name(const zp_bk_t *bk) { return bk->ops ? bk->ops->name : "none"; }

int zp_bk_fault_arm(zp_bk_t *bk, const char *spec)
{
    static const struct { const char *name; int code; } codes[] = {
        {"EDEVICE", ZP_EDEVICE}, {"ENOMEM", -ENOMEM}, {"EIO", -EIO}, {"EFORMAT", ZP_EFORMAT}, {"ETIMEDOUT", ZP_ETIMEDOUT}};
    bk->fault_op = -1;
    if (!spec || !*spec) return 0;
    char op[32], code[32];
    unsigned long long at = 1;
    int n = sscanf(spec, "%31[a-z_0-9]=%31[A-Z]@%llu", op, code, &at);
    if (n < 2 || at == 0) return zp_err_set(ZP_EFORMAT, "fault spec '%s': expected OP=CODE[@N]", spec);
    int o = -1, c = 0;
    for (int i = 0; i < ZP_BK_NOPS; i++) if (!strcmp(op, op_name[i])) o = i;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) if (!strcmp(code, codes[i].name)) c = codes[i].code;
    if (o < 0 || !c) return zp_err_set(ZP_EFORMAT, "fault spec '%s': unknown operation or code", spec);
    bk->fault_op = o;
    bk->fault_code = c;
    bk->fault_at = at;
    zp_log(ZP_LOG_WARN, "fault injection armed: %s fails with %s from call %llu on (a test hook)", op, code, at);
    return 0;
}

/* before a call: 0 to go on, else the error to return without calling the backend */
static int call_begin(zp_bk_t *bk, int op, uint64_t *t0)
{
    *t0 = zp_now_ns();
    pthread_mutex_lock(&bk->mu);
    uint64_t calls = ++bk->span[op].calls;
    bool broken = bk->broken, fault = bk->fault_op == op && calls >= bk->fault_at;
    pthread_mutex_unlock(&bk->mu);
    if (broken)
        return zp_err_set(ZP_EDEVICE, "%s: the %s device failed earlier; this worker must restart", op_name[op],
                          zp_bk_name(bk));
    if (fault)
        return zp_err_set(bk->fault_code, "%s: injected fault (call %llu)", op_name[op], (unsigned long long)calls);
    return 0;
}

/* after a call that took dt ns (a posted compute: its run on the compute thread) */
static int call_end(zp_bk_t *bk, int op, uint64_t dt, int rc)
{
    pthread_mutex_lock(&bk->mu);
    bk->span[op].ns += dt;
    bool first_break = false;
    if (rc < 0) {
        bk->span[op].fails++;
        first_break = zp_bk_fatal(rc) && !bk->broken;
        if (first_break) bk->broken = true;
    }
    pthread_mutex_unlock(&bk->mu);
    if (rc < 0) {
        if (first_break) {
            zp_log(ZP_LOG_ERROR, "%s backend: device error in %s (%s): the device is unusable from now on",
                   zp_bk_name(bk), op_name[op], zp_err_msg());
        }
    }
    zp_log(ZP_LOG_DEBUG, "%s backend: %s %.3f ms%s%s", zp_bk_name(bk), op_name[op], dt / 1e6, rc < 0 ? ": " : "",
           rc < 0 ? zp_strerror(rc) : "");
    return rc;
}

#define BK_CALL(bk, op, expr)                                         \
    uint64_t t0_;                                                     \
    int rc_ = call_begin((bk), (op), &t0_);                           \
    if (rc_ == 0) rc_ = (expr);                                       \
    rc_ = call_end((bk), (op), zp_now_ns() - t0_, rc_)

/* a compute verb, on the caller's thread or the compute thread: a posted one that finds the
 * device broken by an earlier one (which failed while this one waited behind it) does not reach
 * the backend, as every call after a fatal error does not */
static int compute_fn(void *v)
{
    zp_bk_run_t *x = v;
    zp_bk_t *bk = x->bk;
    if (x->pre) x->pre(x->pre_arg);
    pthread_mutex_lock(&bk->mu);
    bool broken = bk->broken;
    pthread_mutex_unlock(&bk->mu);
    if (broken)
        return zp_err_set(ZP_EDEVICE, "%s: the %s device failed before this compute began; this worker must restart",
                          op_name[x->op], zp_bk_name(bk));
    const zp_backend_ops_t *o = bk->ops;
    switch (x->op) {
    case ZP_BK_PROVE_G1:
        return x->from ? o->prove_g1_from(bk->be, x->k, x->w, x->a_in, x->b_in, x->c, x->a, x->b, x->h, x->out, x->t)
                       : o->prove_g1(bk->be, x->k, x->w, x->a, x->b, x->c, x->h, x->out, x->t);
    case ZP_BK_PROVE_G1_BATCH: return o->prove_g1_batch(bk->be, x->k, x->n, x->jobs, x->t);
    default: return o->prove_staged(bk->be, x->set, x->k, x->out, x->t);
    }
}

/* a synchronous compute verb (x on the caller's stack): here, or on the compute thread while the
 * caller sleeps */
static int compute(zp_bk_run_t x)
{
    zp_bk_t *bk = x.bk;
    bk->run_start = bk->run_end = 0;
    if (!bk->runner) return compute_fn(&x);
    return zp_runner_call(bk->runner, compute_fn, &x, &bk->run_start, &bk->run_end);
}

bool zp_bk_detached(const zp_bk_t *bk) { return bk->runner != NULL; }

bool zp_bk_busy(const zp_bk_t *bk) { return zp_runner_busy(bk->runner); }
uint64_t zp_bk_begun(const zp_bk_t *bk) { return zp_runner_begun(bk->runner); }

/* post r (its verb and arguments filled): counted and faulted now, as a call */
static int post(zp_bk_t *bk, zp_bk_run_t *r, void (*done)(void *), void *done_arg)
{
    r->bk = bk;
    r->posted = false;
    r->run_start = r->run_end = 0;
    if (!bk->runner) return zp_err_set(-EINVAL, "%s: posted without a compute thread", op_name[r->op]);
    uint64_t t0;
    int rc = call_begin(bk, r->op, &t0);
    if (rc < 0) return call_end(bk, r->op, 0, rc);
    r->run = (zp_run_t){.fn = compute_fn, .arg = r, .done = done, .done_arg = done_arg};
    r->posted = true;
    zp_runner_post(bk->runner, &r->run);
    return 0;
}

int zp_bk_post_prove_g1_from(zp_bk_t *bk, zp_bk_run_t *r, const zp_g16_key_t *k, const zp_scalar_t *w,
                             const zp_scalar_t *a_in, const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a,
                             zp_scalar_t *b, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t,
                             void (*done)(void *), void *done_arg)
{
    *r = (zp_bk_run_t){.op = ZP_BK_PROVE_G1, .from = true, .k = k, .w = w, .a_in = a_in, .b_in = b_in, .c = c,
                       .a = a, .b = b, .h = h, .out = out, .t = t, .pre = r->pre, .pre_arg = r->pre_arg};
    if (!bk->ops->prove_g1_from) return zp_err_set(-ENOTSUP, "prove_g1: the %s backend reads no separate sources",
                                                   zp_bk_name(bk));
    return post(bk, r, done, done_arg);
}

int zp_bk_post_prove_staged(zp_bk_t *bk, zp_bk_run_t *r, unsigned set, const zp_g16_key_t *k,
                            zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t, void (*done)(void *), void *done_arg)
{
    *r = (zp_bk_run_t){.op = ZP_BK_PROVE_STAGED, .set = set, .k = k, .out = out, .t = t, .pre = r->pre,
                       .pre_arg = r->pre_arg};
    return post(bk, r, done, done_arg);
}

bool zp_bk_run_cancel(zp_bk_t *bk, zp_bk_run_t *r)
{
    if (!r->posted || !zp_runner_cancel(bk->runner, &r->run)) return false;
    r->posted = false;
    zp_log(ZP_LOG_DEBUG, "%s backend: %s taken back before it began", zp_bk_name(bk), op_name[r->op]);
    return true;
}

int zp_bk_run_wait(zp_bk_t *bk, zp_bk_run_t *r)
{
    if (!r->posted) return zp_err_set(-EINVAL, "%s: waited on a compute that was not posted", op_name[r->op]);
    int rc = zp_runner_wait(bk->runner, &r->run);
    r->posted = false;
    r->run_start = r->run.t_run;
    r->run_end = r->run.t_done;
    return call_end(bk, r->op, r->run_end - r->run_start, rc);
}

int zp_bk_host_register(zp_bk_t *bk, void *p, size_t len)
{
    BK_CALL(bk, ZP_BK_HOST_REGISTER, bk->ops->host_register(bk->be, p, len));
    return rc_;
}

int zp_bk_host_unregister(zp_bk_t *bk, void *p)
{
    pthread_mutex_lock(&bk->mu);
    bool broken = bk->broken;
    pthread_mutex_unlock(&bk->mu);
    if (broken) return ZP_EDEVICE;   /* nothing to undo on a dead context; do not count */
    BK_CALL(bk, ZP_BK_HOST_UNREGISTER, bk->ops->host_unregister(bk->be, p));
    return rc_;
}

int zp_bk_load_key(zp_bk_t *bk, const zp_g16_key_t *k)
{
    BK_CALL(bk, ZP_BK_LOAD_KEY, bk->ops->load_key(bk->be, k));
    return rc_;
}

int zp_bk_prove_g1(zp_bk_t *bk, const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a, zp_scalar_t *b,
                   const zp_scalar_t *c, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t)
{
    BK_CALL(bk, ZP_BK_PROVE_G1,
            compute((zp_bk_run_t){.bk = bk, .op = ZP_BK_PROVE_G1, .k = k, .w = w, .a = a, .b = b, .c = c, .h = h,
                                .out = out, .t = t}));
    return rc_;
}

/* a_in, b_in copied into the work buffers a, b: for a backend without prove_g1_from */
static void copy_in(const zp_g16_key_t *k, const zp_scalar_t *a_in, const zp_scalar_t *b_in, zp_scalar_t *a,
                    zp_scalar_t *b)
{
    size_t nb = (size_t)k->domain_size * sizeof *a;
    if (a != a_in) memcpy(a, a_in, nb);
    if (b != b_in) memcpy(b, b_in, nb);
}

int zp_bk_prove_g1_from(zp_bk_t *bk, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a_in,
                        const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *h,
                        zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t)
{
    if (!bk->ops->prove_g1_from) {
        copy_in(k, a_in, b_in, a, b);
        return zp_bk_prove_g1(bk, k, w, a, b, c, h, out, t);
    }
    BK_CALL(bk, ZP_BK_PROVE_G1,
            compute((zp_bk_run_t){.bk = bk, .op = ZP_BK_PROVE_G1, .from = true, .k = k, .w = w, .a_in = a_in,
                                .b_in = b_in, .c = c, .a = a, .b = b, .h = h, .out = out, .t = t}));
    return rc_;
}

static void times_add(zp_g16_times_t *acc, const zp_g16_times_t *t)
{
    acc->h2d_ns += t->h2d_ns;
    acc->ntt_ns += t->ntt_ns;
    acc->d2h_ns += t->d2h_ns;
    acc->total_ns += t->total_ns;
    for (int i = 0; i < ZP_G16_NMSM; i++) acc->msm_ns[i] += t->msm_ns[i];
}

int zp_bk_prove_g1_batch(zp_bk_t *bk, const zp_g16_key_t *k, unsigned n, zp_g16_g1_job_t *jobs, zp_g16_times_t *t)
{
    if (t) memset(t, 0, sizeof *t);
    if (!bk->ops->prove_g1_from)   /* a backend that does not read a_in / b_in itself */
        for (unsigned i = 0; i < n; i++)
            if (jobs[i].a_in || jobs[i].b_in) {
                copy_in(k, zp_g16_job_a(&jobs[i]), zp_g16_job_b(&jobs[i]), jobs[i].a, jobs[i].b);
                jobs[i].a_in = jobs[i].b_in = NULL;
            }
    if (bk->ops->prove_g1_batch) {
        BK_CALL(bk, ZP_BK_PROVE_G1_BATCH,
                compute((zp_bk_run_t){.bk = bk, .op = ZP_BK_PROVE_G1_BATCH, .k = k, .n = n, .jobs = jobs, .t = t}));
        return rc_;
    }
    for (unsigned i = 0; i < n; i++) {
        zp_g16_times_t ti;
        memset(&ti, 0, sizeof ti);
        /* sources equal to the work buffers (no a_in / b_in): prove_g1_from is prove_g1 in place */
        int rc = zp_bk_prove_g1_from(bk, k, jobs[i].w, zp_g16_job_a(&jobs[i]), zp_g16_job_b(&jobs[i]), jobs[i].c,
                                     jobs[i].a, jobs[i].b, jobs[i].h, jobs[i].out, &ti);
        if (rc < 0) return rc;
        if (t) times_add(t, &ti);
    }
    return 0;
}

bool zp_bk_has_stage_in(const zp_bk_t *bk)
{
    return bk->ops && bk->ops->stage_in && bk->ops->prove_staged && bk->ops->release_set;
}

int zp_bk_key_resident(const zp_bk_t *bk, const zp_g16_key_t *k)
{
    if (!bk->ops || !bk->be || !bk->ops->key_resident) return -1;
    return bk->ops->key_resident(bk->be, k) > 0;
}

int zp_bk_stage_in(zp_bk_t *bk, unsigned set, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a,
                   const zp_scalar_t *b, const zp_scalar_t *c)
{
    BK_CALL(bk, ZP_BK_STAGE_IN, bk->ops->stage_in(bk->be, set, k, w, a, b, c));
    return rc_;
}

int zp_bk_prove_staged(zp_bk_t *bk, unsigned set, const zp_g16_key_t *k, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t)
{
    BK_CALL(bk, ZP_BK_PROVE_STAGED,
            compute((zp_bk_run_t){.bk = bk, .op = ZP_BK_PROVE_STAGED, .set = set, .k = k, .out = out, .t = t}));
    return rc_;
}

int zp_bk_release_set(zp_bk_t *bk, unsigned set)
{
    uint64_t t0 = zp_now_ns();
    pthread_mutex_lock(&bk->mu);
    bk->span[ZP_BK_RELEASE_SET].calls++;
    pthread_mutex_unlock(&bk->mu);
    int rc = bk->ops->release_set(bk->be, set);
    return call_end(bk, ZP_BK_RELEASE_SET, zp_now_ns() - t0, rc);
}

void zp_bk_log_spans(const zp_bk_t *bk)
{
    char buf[400];
    size_t o = 0;
    for (int i = 0; i < ZP_BK_NOPS && o < sizeof buf; i++)
        if (bk->span[i].calls)
            o += (size_t)snprintf(buf + o, sizeof buf - o, " %s %llu call(s) %llu failed %.1f ms;", op_name[i],
                                  (unsigned long long)bk->span[i].calls, (unsigned long long)bk->span[i].fails,
                                  bk->span[i].ns / 1e6);
    zp_log(ZP_LOG_INFO, "%s backend:%s", zp_bk_name(bk), o ? buf : " no calls");
}
