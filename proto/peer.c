/* peer.c - DEALER-side plumbing (runtime dir, endpoint, request/reply) and the stage-worker
 * harness shared by synth, gpu-worker and finalizer (see peer.h for the thread model).
 *
 * Harness invariants: the loop thread owns the socket; the work thread owns the task it is
 * running; the two queues (todo, done) are guarded by one mutex; the work thread wakes the
 * loop through an eventfd. A task is reported exactly once (DONE or FAIL); queued tasks are
 * dropped silently on a RESET (the broker forgot them); the running one carries on, is listed
 * in the HELLO that follows, and is reported (adopted by a restarted broker, else counted stale).
 * Work handed back without running work() is a FAIL with unstarted = true (stopping = true when
 * the worker is shutting down).
 * Service manager (proto/notify.h; systemd or `zkpipe up`): READY=1 once, when the first frame
 * from the broker arrives after our HELLO (the caller opened its backend and caches before
 * zp_stage_main); STATUS= follows the process title; WATCHDOG=1 from the loop at half of
 * WATCHDOG_USEC (the loop never waits on work(), so a ping means the loop is alive);
 * STOPPING=1 when *stop is seen. Tests: tests/ipc/ (notify.sh for the notifications). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "lib/util/util.h"
#include "proto/identity.h"
#include "proto/notify.h"
#include "proto/peer.h"

int zp_runtime_dir(char *buf, size_t n, const char *override, bool create)
{
    const char *e;
    int k;
    if (override && *override) k = snprintf(buf, n, "%s", override);
    else if ((e = getenv("ZP_RUNTIME_DIR")) && *e) k = snprintf(buf, n, "%s", e);
    else if ((e = getenv("XDG_RUNTIME_DIR")) && *e) k = snprintf(buf, n, "%s/zkpipe", e);
    else k = snprintf(buf, n, "/tmp/zkpipe-%u", (unsigned)getuid());
    if (k < 0 || (size_t)k >= n - 20) return zp_err_set(-ENAMETOOLONG, "runtime directory path too long");
    if (create && mkdir(buf, 0700) < 0 && errno != EEXIST)
        return zp_err_set(-errno, "mkdir %s: %s", buf, strerror(errno));
    struct stat st;
    if (stat(buf, &st) < 0) return zp_err_set(-errno, "runtime directory %s: %s", buf, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return zp_err_set(-ENOTDIR, "runtime directory %s is not a directory", buf);
    if (create && (st.st_uid != getuid() || (st.st_mode & 022)))
        return zp_err_set(-EPERM, "runtime directory %s must be owned by uid %u and not group/other writable",
                          buf, (unsigned)getuid());
    return 0;
}

int zp_broker_endpoint(char *buf, size_t n, const char *rundir)
{
    int k = snprintf(buf, n, "ipc://%s/broker.sock", rundir);
    if (k < 0 || (size_t)k >= n) return zp_err_set(-ENAMETOOLONG, "endpoint too long");
    return 0;
}

int zp_peer_open(zp_peer_t *p, const char *endpoint, size_t max_frame)
{
    memset(p, 0, sizeof *p);
    p->max_frame = max_frame ? max_frame : ZP_FRAME_MAX_LIMIT;
    p->ctx = zmq_ctx_new();
    if (!p->ctx) return zp_err_set(-errno, "zmq_ctx_new: %s", zmq_strerror(errno));
    p->sock = zmq_socket(p->ctx, ZMQ_DEALER);
    p->rx = calloc(1, sizeof(zmq_msg_t));
    if (!p->sock || !p->rx) { zp_peer_close(p); return zp_err_set(-ENOMEM, "zmq_socket failed"); }
    zmq_msg_init(p->rx);
    int linger = 200;
    int64_t maxsz = (int64_t)p->max_frame;
    zmq_setsockopt(p->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(p->sock, ZMQ_MAXMSGSIZE, &maxsz, sizeof maxsz);
    if (zmq_connect(p->sock, endpoint) < 0) {
        int e = errno;
        zp_peer_close(p);
        return zp_err_set(-e, "zmq_connect %s: %s", endpoint, zmq_strerror(e));
    }
    return 0;
}

void zp_peer_close(zp_peer_t *p)
{
    if (p->rx) { zmq_msg_close(p->rx); free(p->rx); p->rx = NULL; }
    if (p->sock) zmq_close(p->sock);
    if (p->ctx) zmq_ctx_term(p->ctx);
    p->sock = p->ctx = NULL;
}

static void free_buf(void *data, void *hint) { (void)hint; free(data); }

int zp_peer_send(zp_peer_t *p, uint8_t *buf, size_t len)
{
    zmq_msg_t m;
    if (zmq_msg_init_data(&m, buf, len, free_buf, NULL) < 0) { free(buf); return -errno; }
    if (zmq_msg_send(&m, p->sock, ZMQ_DONTWAIT) < 0) {
        int e = errno;
        zmq_msg_close(&m);
        return zp_err_set(-e, "send: %s", zmq_strerror(e));
    }
    return 0;
}

int zp_peer_recv(zp_peer_t *p, zp_frame_t *f, int timeout_ms, uint64_t cmd_mask)
{
    zmq_pollitem_t it = {p->sock, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&it, 1, timeout_ms);
    if (rc < 0) return -errno;
    if (rc == 0) return -EAGAIN;
    zmq_msg_close(p->rx);
    zmq_msg_init(p->rx);
    if (zmq_msg_recv(p->rx, p->sock, ZMQ_DONTWAIT) < 0) return errno == EAGAIN ? -EAGAIN : -errno;
    /* drain any extra parts: one frame per message */
    int more = zmq_msg_more(p->rx);
    while (more) {
        zmq_msg_t x;
        zmq_msg_init(&x);
        zmq_msg_recv(&x, p->sock, 0);
        more = zmq_msg_more(&x);
        zmq_msg_close(&x);
        if (!more) return zp_err_set(ZP_EPROTO, "multi-part message");
    }
    return zp_frame_decode_cmds(f, zmq_msg_data(p->rx), zmq_msg_size(p->rx), p->max_frame, cmd_mask);
}

int zp_peer_call(zp_peer_t *p, uint8_t *req, size_t len, zp_frame_t *rep, int timeout_ms)
{
    int rc = zp_peer_send(p, req, len);
    if (rc < 0) return rc;
    uint64_t deadline = zp_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        uint64_t now = zp_now_ns();
        if (now >= deadline) return zp_err_set(ZP_ETIMEDOUT, "no reply from the broker within %d ms (is `zkpipe up` running?)", timeout_ms);
        rc = zp_peer_recv(p, rep, (int)((deadline - now) / 1000000u) + 1, ZP_CMDS_TO_CLIENT);
        if (rc == -EAGAIN || rc == -EINTR) continue;
        if (rc < 0) return rc;
        if (rep->cmd == ZP_CMD_ERROR) {
            zp_msg_error_t er;
            if ((rc = zp_msg_error_decode(&er, rep)) < 0) return rc;
            return zp_err_set(er.code ? er.code : ZP_EPROTO, "%.*s", (int)er.message.len, er.message.p);
        }
        return 0;
    }
}

uint64_t zp_incarnation_new(void)
{
    uint64_t v = 0;
    while (v == 0)
        if (zp_random_bytes(&v, sizeof v) < 0) v = zp_now_ns() ^ ((uint64_t)getpid() << 32);
    return v;
}

void zp_stage_test_hold(unsigned role, volatile int *revoked)
{
    const char *d = getenv("ZP_TEST_HOLD_DIR");
    char path[512];
    if (!d || !*d) return;
    snprintf(path, sizeof path, "%s/hold-%s", d, zp_role_name(role));
    while (access(path, F_OK) == 0 && !(revoked && *revoked)) usleep(10000);
}

/* ---------------------------------------------------------------- harness */
typedef struct {
    const zp_stage_def_t *def;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    zp_stage_task_t *todo, *todo_tail, *done, *running;
    bool quit;
    int efd;
    unsigned held;          /* tasks received and not yet reported */
    char status[200];       /* last STATUS= sent */
} harness_t;

static void task_free(zp_stage_task_t *t)
{
    if (!t) return;
    free(t->zkey); free(t->r1cs); free(t->wtns); free(t->proof_json); free(t->public_json);
    free(t);
}

static void *work_thread(void *arg)
{
    harness_t *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->mu);
        while (!h->todo && !h->quit) pthread_cond_wait(&h->cv, &h->mu);
        if (!h->todo) { pthread_mutex_unlock(&h->mu); break; }
        zp_stage_task_t *t = h->todo;
        h->todo = t->next;
        if (!h->todo) h->todo_tail = NULL;
        t->next = NULL;
        h->running = t;
        pthread_mutex_unlock(&h->mu);

        zp_stage_test_hold(h->def->role, &t->revoked);
        t->t_start = zp_now_ns();
        if (t->revoked) {
            t->ok = false; t->code = ZP_ESTALE; t->retryable = true; t->unstarted = true;
            t->stopping = h->def->stop && *h->def->stop;
            snprintf(t->msg, sizeof t->msg, "handed back unstarted: %s",
                     t->stopping ? "worker shutting down" : "revoked");
        } else {
            zp_log_ctx(t->a.job, t->a.part);   /* log lines from work() name the job and partition */
            h->def->work(h->def->ctx, t);
            zp_log_ctx(0, -1);
        }
        t->t_end = zp_now_ns();

        pthread_mutex_lock(&h->mu);
        h->running = NULL;
        t->next = h->done;
        h->done = t;
        pthread_mutex_unlock(&h->mu);
        uint64_t one = 1;
        if (write(h->efd, &one, sizeof one) < 0) { /* eventfd cannot fail here */ }
    }
    return NULL;
}

static int send_hello(harness_t *h, zp_peer_t *p, uint64_t inc)
{
    const zp_stage_def_t *d = h->def;
    zp_msg_hello_t m = {.role = d->role, .instance = d->instance, .incarnation = inc,
                        .pid = (uint32_t)getpid(), .capabilities = d->caps, .credits = d->credits,
                        .name = zp_str(d->name)};
    zp_identity_hello(&m);   /* the supervisor's token (proto/identity.h) */
    pthread_mutex_lock(&h->mu);
    if (h->running && m.n_held < ZP_MSG_MAX_HELD)
        m.held[m.n_held++] = (zp_held_t){h->running->a.slot, h->running->a.gen};
    pthread_mutex_unlock(&h->mu);
    uint8_t *b; size_t n;
    int rc = zp_msg_hello_encode(&b, &n, &m);
    return rc < 0 ? rc : zp_peer_send(p, b, n);
}

static void report(harness_t *h, zp_peer_t *p, zp_stage_task_t *t)
{
    uint8_t *b = NULL; size_t n = 0;
    int rc;
    if (t->ok) {
        zp_msg_done_t m = {.slot = t->a.slot, .gen = t->a.gen, .new_gen = t->new_gen, .job = t->a.job,
                           .part = t->a.part, .t_start = t->t_start, .t_end = t->t_end,
                           .proof_json = zp_str(t->proof_json), .public_json = zp_str(t->public_json),
                           .proof_bin = t->proof_bin, .proof_bin_len = t->proof_bin_len};
        memcpy(m.dt, t->dt, sizeof m.dt);
        rc = zp_msg_done_encode(&b, &n, &m);
    } else {
        zp_msg_fail_t m = {.slot = t->a.slot, .gen = t->a.gen, .job = t->a.job, .part = t->a.part,
                           .retryable = t->retryable, .code = t->code < 0 ? t->code : ZP_EPROTO,
                           .payload_bad = t->payload_bad, .t_start = t->t_start, .t_end = t->t_end,
                           .message = zp_str(t->msg), .unstarted = t->unstarted, .stopping = t->stopping};
        rc = zp_msg_fail_encode(&b, &n, &m);
    }
    if (rc == 0) rc = zp_peer_send(p, b, n);
    if (rc < 0) zp_log(ZP_LOG_ERROR, "job %llu part %u: cannot report to the broker: %s %s",
                       (unsigned long long)t->a.job, t->a.part, zp_strerror(rc), zp_err_msg());
    else zp_log(ZP_LOG_DEBUG, "job %llu part %u slot %u: %s", (unsigned long long)t->a.job, t->a.part,
                t->a.slot, t->ok ? "DONE" : t->msg);
    if (h->held) h->held--;
}

/* process title and, when it changed, STATUS= for the service manager */
static void title(harness_t *h, const char *state)
{
    char buf[200];
    snprintf(buf, sizeof buf, "%s #%u: %s (%u held)", zp_role_name(h->def->role), h->def->instance, state, h->held);
    if (h->def->set_title) h->def->set_title(buf);
    if (strcmp(buf, h->status)) {
        memcpy(h->status, buf, sizeof buf);
        zp_notifyf("STATUS=%s", buf);
    }
}

static void on_assign(harness_t *h, zp_peer_t *p, const zp_frame_t *f)
{
    zp_msg_assign_t a;
    if (zp_msg_assign_decode(&a, f) < 0 || a.stage != h->def->role) {
        zp_log(ZP_LOG_WARN, "bad ASSIGN dropped: %s", zp_err_msg());
        return;
    }
    zp_stage_task_t *t = calloc(1, sizeof *t);
    if (!t || !(t->zkey = zp_str_dup(a.zkey)) || !(t->r1cs = zp_str_dup(a.r1cs)) || !(t->wtns = zp_str_dup(a.wtns))) {
        if (t) task_free(t);
        zp_stage_task_t tmp = {.a = a, .retryable = true, .code = -ENOMEM};
        snprintf(tmp.msg, sizeof tmp.msg, "out of memory");
        h->held++;
        report(h, p, &tmp);
        return;
    }
    t->a = a;
    t->a.zkey = zp_str(t->zkey); t->a.r1cs = zp_str(t->r1cs); t->a.wtns = zp_str(t->wtns);
    h->held++;
    pthread_mutex_lock(&h->mu);
    if (h->todo_tail) h->todo_tail->next = t; else h->todo = t;
    h->todo_tail = t;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    char s[120];
    snprintf(s, sizeof s, "job %llu part %u slot %u", (unsigned long long)a.job, a.part, a.slot);
    title(h, s);
}

/* drop queued tasks: matching (slot, gen) only, or all (all = true). Reports FAIL (unstarted)
 * for each when report_them (REVOKE / stop), silently for RESET (the broker forgot them).
 * The running task is marked revoked (it may stop before work() starts) only when
 * revoke_running: not on RESET, where the HELLO that follows lists it at its generation and
 * a restarted broker adopts it (if the broker requeued it instead, the slot's generation moved
 * and the task's commit is refused by the fence). */
static void drop_queued(harness_t *h, zp_peer_t *p, bool all, uint32_t slot, uint64_t gen, bool report_them,
                        bool revoke_running, const char *why)
{
    bool stopping = report_them && all;
    zp_stage_task_t *keep = NULL, *keep_tail = NULL, *drop = NULL;
    pthread_mutex_lock(&h->mu);
    for (zp_stage_task_t *t = h->todo, *nx; t; t = nx) {
        nx = t->next;
        t->next = NULL;
        if (all || (t->a.slot == slot && t->a.gen == gen)) { t->next = drop; drop = t; }
        else { if (keep_tail) keep_tail->next = t; else keep = t; keep_tail = t; }
    }
    h->todo = keep; h->todo_tail = keep_tail;
    if (revoke_running && h->running && (all || (h->running->a.slot == slot && h->running->a.gen == gen)))
        h->running->revoked = 1;
    pthread_mutex_unlock(&h->mu);
    for (zp_stage_task_t *t = drop, *nx; t; t = nx) {
        nx = t->next;
        if (report_them) {
            t->ok = false; t->retryable = true; t->code = ZP_ESTALE;
            t->unstarted = true; t->stopping = stopping;
            t->t_start = t->t_end = zp_now_ns();
            snprintf(t->msg, sizeof t->msg, "%s", why);
            report(h, p, t);
        } else if (h->held) h->held--;
        task_free(t);
    }
}

int zp_stage_main(const zp_stage_def_t *def)
{
    harness_t h = {.def = def};
    zp_peer_t p;
    pthread_t th;
    int hb = def->heartbeat_ms > 0 ? def->heartbeat_ms : 500;
    uint64_t inc = zp_incarnation_new();
    int rc;

    if ((rc = zp_peer_open(&p, def->endpoint, ZP_FRAME_MAX_DEFAULT)) < 0) return rc;
    h.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (h.efd < 0) { rc = zp_err_set(-errno, "eventfd: %s", strerror(errno)); goto out_peer; }
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    if ((rc = pthread_create(&th, NULL, work_thread, &h)) != 0) {
        rc = zp_err_set(-rc, "pthread_create failed");
        goto out_efd;
    }
    zp_log(ZP_LOG_INFO, "%s #%u (%s) connecting to %s, %u credit(s)", zp_role_name(def->role), def->instance,
           def->name ? def->name : "", def->endpoint, def->credits);
    send_hello(&h, &p, inc);
    title(&h, "idle");

    uint64_t next_hb = zp_now_ns() + (uint64_t)hb * 1000000u;
    uint64_t last_rx = zp_now_ns();
    bool stopping = false, ready = false;
    zp_watchdog_t wd;
    zp_watchdog_init(&wd);
    int fatal = 0;
    for (;;) {
        if (def->stop && *def->stop && !stopping) {
            stopping = true;
            zp_log(ZP_LOG_INFO, "stopping: handing back queued work, finishing the running task");
            zp_notify("STOPPING=1");
            drop_queued(&h, &p, true, 0, 0, true, true, "handed back unstarted: worker shutting down");
            title(&h, "stopping");
        }
        if (stopping) {
            pthread_mutex_lock(&h.mu);
            bool idle = !h.running && !h.todo && !h.done;
            pthread_mutex_unlock(&h.mu);
            if (idle) break;
        }
        zmq_pollitem_t it[2] = {{p.sock, 0, ZMQ_POLLIN, 0}, {NULL, h.efd, ZMQ_POLLIN, 0}};
        uint64_t now = zp_now_ns();
        int to = next_hb > now ? (int)((next_hb - now) / 1000000u) + 1 : 0;
        if (to > hb / 2) to = hb / 2;
        to = zp_watchdog_poll_ms(&wd, now, to);
        rc = zmq_poll(it, 2, to);
        if (rc < 0 && errno != EINTR) { fatal = zp_err_set(-errno, "zmq_poll: %s", zmq_strerror(errno)); break; }
        if (rc > 0 && (it[1].revents & ZMQ_POLLIN)) {
            uint64_t v;
            if (read(h.efd, &v, sizeof v) < 0) { /* spurious wake */ }
            pthread_mutex_lock(&h.mu);
            zp_stage_task_t *d = h.done;
            h.done = NULL;
            pthread_mutex_unlock(&h.mu);
            /* reverse to completion order */
            zp_stage_task_t *rev = NULL;
            while (d) { zp_stage_task_t *nx = d->next; d->next = rev; rev = d; d = nx; }
            for (zp_stage_task_t *t = rev, *nx; t; t = nx) {
                nx = t->next;
                report(&h, &p, t);
                task_free(t);
            }
            title(&h, h.held ? "busy" : "idle");
        }
        if (rc > 0 && (it[0].revents & ZMQ_POLLIN)) {
            zp_frame_t f;
            for (int k = 0; k < 64; k++) {
                int r = zp_peer_recv(&p, &f, 0, ZP_CMDS_TO_WORKER);
                if (r == -EAGAIN || r == -EINTR) break;
                last_rx = zp_now_ns();
                if (!ready) {
                    /* the broker answered after our HELLO: connected and registered */
                    ready = true;
                    zp_notifyf("READY=1\nSTATUS=%s", h.status);
                    zp_log(ZP_LOG_DEBUG, "registered with the broker");
                }
                if (r < 0) { zp_log(ZP_LOG_WARN, "malformed frame from the broker dropped: %s", zp_err_msg()); continue; }
                if (f.cmd == ZP_CMD_ASSIGN) {
                    if (stopping) {
                        zp_msg_assign_t a;
                        if (zp_msg_assign_decode(&a, &f) == 0) {
                            zp_stage_task_t t = {.a = a, .retryable = true, .code = ZP_ESTALE,
                                                 .unstarted = true, .stopping = true};
                            snprintf(t.msg, sizeof t.msg, "handed back unstarted: worker shutting down");
                            t.t_start = t.t_end = zp_now_ns();
                            h.held++;
                            report(&h, &p, &t);
                        }
                    } else {
                        on_assign(&h, &p, &f);
                    }
                } else if (f.cmd == ZP_CMD_REVOKE) {
                    zp_msg_revoke_t rv;
                    if (zp_msg_revoke_decode(&rv, &f) == 0)
                        drop_queued(&h, &p, false, rv.slot, rv.gen, true, true, "handed back unstarted: revoked");
                } else if (f.cmd == ZP_CMD_RESET) {
                    zp_msg_reset_t rs;
                    zp_msg_reset_decode(&rs, &f);
                    zp_log(ZP_LOG_WARN, "broker RESET (%.*s): dropping queued work, keeping the running task, "
                           "saying HELLO again", (int)rs.reason.len, rs.reason.p);
                    drop_queued(&h, &p, true, 0, 0, false, false, "reset");
                    send_hello(&h, &p, inc);
                }
                /* HEARTBEAT, ACK: liveness only */
            }
        }
        now = zp_now_ns();
        zp_watchdog_tick(&wd, now);
        if (now >= next_hb) {
            zp_msg_heartbeat_t m = {.incarnation = inc, .busy = h.held};
            uint8_t *b; size_t n;
            if (zp_msg_heartbeat_encode(&b, &n, &m) == 0) zp_peer_send(&p, b, n);
            next_hb = now + (uint64_t)hb * 1000000u;
            /* no word from the broker for a long time: it may have restarted; announce again */
            if (now - last_rx > (uint64_t)hb * 6000000u) {
                send_hello(&h, &p, inc);
                last_rx = now;
            }
        }
    }
    pthread_mutex_lock(&h.mu);
    h.quit = true;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    pthread_join(th, NULL);
    rc = fatal;
    zp_log(ZP_LOG_INFO, "stopped");
out_efd:
    close(h.efd);
out_peer:
    zp_peer_close(&p);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- key cache */
#define KC_MAX 64
typedef struct { char *path; zp_r1cs_t r; uint64_t dev, ino, size, mtime_ns; } r1ent_t;
struct zp_keycache {
    zp_keyent_t *k[KC_MAX];
    r1ent_t *r[KC_MAX];
    unsigned nk, nr;
    /* hot tier (shm/keystore.h), NULL get = none */
    char prefix[ZP_KEYSTORE_NAME_MAX];
    int (*get)(zp_keystore_key_t *, const char *, const zp_zkey_t *, const char *, const zp_keystore_opt_t *);
    void (*release)(zp_keystore_key_t *);
    zp_pool_t *pool;
    void (*on_release)(void *ctx, zp_keyent_t *e);
    void *on_release_ctx;
};

zp_keycache_t *zp_keycache_new(void) { return calloc(1, sizeof(zp_keycache_t)); }

int zp_keycache_set_store(zp_keycache_t *kc, const char *prefix,
                          int (*get)(zp_keystore_key_t *, const char *, const zp_zkey_t *, const char *,
                                     const zp_keystore_opt_t *),
                          void (*release)(zp_keystore_key_t *), zp_pool_t *pool)
{
    if (!prefix || !get || !release) { kc->get = NULL; kc->release = NULL; return 0; }
    if (strlen(prefix) >= sizeof kc->prefix) return zp_err_set(ZP_ETOOBIG, "key store prefix too long");
    snprintf(kc->prefix, sizeof kc->prefix, "%s", prefix);
    kc->get = get;
    kc->release = release;
    kc->pool = pool;
    return 0;
}

void zp_keycache_set_release(zp_keycache_t *kc, void (*fn)(void *ctx, zp_keyent_t *e), void *ctx)
{
    kc->on_release = fn;
    kc->on_release_ctx = ctx;
}

static void keyent_free(zp_keycache_t *kc, zp_keyent_t *e)
{
    if (!e) return;
    if (kc->on_release && e->key.mem) kc->on_release(kc->on_release_ctx, e);
    zp_g16_key_close(&e->key);   /* a store view is not owned: only forgotten */
    if (e->ks) { kc->release(e->ks); free(e->ks); }
    zp_zkey_close(&e->zkey);
    free(e->path);
    free(e);
}

void zp_keycache_destroy(zp_keycache_t **kcp)
{
    zp_keycache_t *kc = kcp ? *kcp : NULL;
    if (!kc) return;
    for (unsigned i = 0; i < kc->nk; i++) keyent_free(kc, kc->k[i]);
    for (unsigned i = 0; i < kc->nr; i++) { zp_r1cs_close(&kc->r[i]->r); free(kc->r[i]->path); free(kc->r[i]); }
    free(kc);
    *kcp = NULL;
}

static int file_id(const char *path, uint64_t id[4])
{
    struct stat st;
    if (stat(path, &st) < 0) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    id[0] = st.st_dev; id[1] = st.st_ino; id[2] = (uint64_t)st.st_size;
    id[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    return 0;
}

/* the point arrays of e: from the store (hot, or filled by us) or parsed into private memory */
static int keyent_load(zp_keycache_t *kc, zp_keyent_t *e)
{
    uint64_t t0 = zp_now_ns();
    int rc;
    if (kc->get) {
        zp_keystore_key_t *ks = calloc(1, sizeof *ks);
        if (!ks) return zp_err_set(-ENOMEM, "key store entry");
        zp_keystore_opt_t opt = {.pool = kc->pool};
        rc = kc->get(ks, kc->prefix, &e->zkey, e->path, &opt);
        if (rc == 0) {
            e->ks = ks;
            e->key = ks->key;
            e->hot = ks->hot;
            e->load_ns = zp_now_ns() - t0;
            if (ks->hot)
                zp_log(ZP_LOG_INFO, "key %s: hot (shm) in %.1f ms (%s, %zu MiB; filled by its creator in %.1f ms)", e->path,
                       e->load_ns / 1e6, ks->name, ks->data_len >> 20, ks->fill_ns / 1e6);
            else
                zp_log(ZP_LOG_INFO, "key %s: cold: parsed in %.1f ms (into shm %s, %zu MiB)", e->path, e->load_ns / 1e6,
                       ks->name, ks->data_len >> 20);
            return 0;
        }
        free(ks);
        /* a bad zkey is bad everywhere: report it; anything else: fall back to private memory */
        if (rc == ZP_EFORMAT && !strstr(zp_err_msg(), kc->prefix)) return rc;
        zp_log(ZP_LOG_WARN, "key %s: shared-memory key store unusable (%s %s): loading into private memory", e->path,
               zp_strerror(rc), zp_err_msg());
        t0 = zp_now_ns();
    }
    if ((rc = zp_g16_key_load_pool(&e->key, &e->zkey, NULL, 0, kc->pool)) < 0) return rc;
    e->hot = false;
    e->load_ns = zp_now_ns() - t0;
    zp_log(ZP_LOG_INFO, "key %s: cold: parsed in %.1f ms (private memory)", e->path, e->load_ns / 1e6);
    return 0;
}

int zp_keycache_key(zp_keycache_t *kc, const char *path, bool with_key, zp_keyent_t **out)
{
    uint64_t id[4] = {0};
    int rc = file_id(path, id);
    if (rc < 0) return rc;
    for (unsigned i = 0; i < kc->nk; i++) {
        zp_keyent_t *e = kc->k[i];
        if (strcmp(e->path, path)) continue;
        if (e->dev == id[0] && e->ino == id[1] && e->size == id[2] && e->mtime_ns == id[3]) {
            if (with_key && !e->key.mem && (rc = keyent_load(kc, e)) < 0) return rc;
            *out = e;
            return 0;
        }
        /* the file changed: drop the old entry (a backend must notice the new key pointer) */
        keyent_free(kc, e);
        kc->k[i] = kc->k[--kc->nk];
        break;
    }
    if (kc->nk == KC_MAX) return zp_err_set(ZP_ETOOBIG, "more than %d proving keys in one process", KC_MAX);
    zp_keyent_t *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) { free(e); return -ENOMEM; }
    if ((rc = zp_zkey_open(&e->zkey, path)) < 0) { free(e->path); free(e); return rc; }
    if (with_key && (rc = keyent_load(kc, e)) < 0) { zp_zkey_close(&e->zkey); free(e->path); free(e); return rc; }
    e->dev = id[0]; e->ino = id[1]; e->size = id[2]; e->mtime_ns = id[3];
    kc->k[kc->nk++] = e;
    zp_log(ZP_LOG_INFO, "loaded %s: %s, %u vars, domain %u%s", path, zp_curve_name(e->zkey.curve), e->zkey.n_vars,
           e->zkey.domain_size, with_key ? (e->ks ? " (proving key in shared memory)" : " (proving key in memory)") : "");
    *out = e;
    return 0;
}

int zp_keycache_preload(zp_keycache_t *kc, char *const *paths, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        zp_keyent_t *e;
        int rc = zp_keycache_key(kc, paths[i], true, &e);
        if (rc < 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", zp_err_msg()[0] ? zp_err_msg() : zp_strerror(rc));
            return zp_err_set(rc, "--preload %s: %s", paths[i], msg);
        }
    }
    return 0;
}

bool zp_keyopts_parse(zp_keyopts_t *o, int c, char *arg)
{
    if (c == 'K') { o->no_store = true; return true; }
    if (c != 'P') return false;
    if (o->n == ZP_PRELOAD_MAX) o->too_many = true;
    else o->paths[o->n++] = arg;
    return true;
}

int zp_keycache_r1cs(zp_keycache_t *kc, const char *path, const zp_r1cs_t **out)
{
    uint64_t id[4] = {0};
    int rc = file_id(path, id);
    if (rc < 0) return rc;
    for (unsigned i = 0; i < kc->nr; i++) {
        r1ent_t *e = kc->r[i];
        if (strcmp(e->path, path)) continue;
        if (e->dev == id[0] && e->ino == id[1] && e->size == id[2] && e->mtime_ns == id[3]) { *out = &e->r; return 0; }
        zp_r1cs_close(&e->r); free(e->path); free(e);
        kc->r[i] = kc->r[--kc->nr];
        break;
    }
    if (kc->nr == KC_MAX) return zp_err_set(ZP_ETOOBIG, "more than %d r1cs files in one process", KC_MAX);
    r1ent_t *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) { free(e); return -ENOMEM; }
    if ((rc = zp_r1cs_open(&e->r, path)) < 0) { free(e->path); free(e); return rc; }
    e->dev = id[0]; e->ino = id[1]; e->size = id[2]; e->mtime_ns = id[3];
    kc->r[kc->nr++] = e;
    *out = &e->r;
    return 0;
}

int zp_stage_opts_parse(zp_stage_opts_t *o, int argc, char **argv, void (*usage)(FILE *f))
{
    static const struct option opts[] = {
        {"runtime-dir", 1, 0, 'r'}, {"arena", 1, 0, 'a'}, {"instance", 1, 0, 'i'}, {"credits", 1, 0, 'c'},
        {"threads", 1, 0, 't'}, {"heartbeat-ms", 1, 0, 'H'}, ZP_KEYOPTS_LONG, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': o->rundir_opt = optarg; break;
        case 'a': o->arena = optarg; break;
        case 'i': o->instance = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'c': o->credits = (unsigned)strtoul(optarg, NULL, 10); break;
        case 't': o->threads = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'H': o->hb = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'h': usage(stdout); return 0;
        default:
            if (zp_keyopts_parse(&o->ko, c, optarg)) break;
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || o->credits < 1 || o->credits > ZP_MSG_MAX_CREDITS || o->hb < 10) { usage(stderr); return 2; }
    if (o->ko.too_many) {
        fprintf(stderr, "%s: more than %d --preload keys\n", o->prog, ZP_PRELOAD_MAX);
        return 2;
    }
    if (zp_runtime_dir(o->rundir, sizeof o->rundir, o->rundir_opt, false) < 0 ||
        zp_broker_endpoint(o->endpoint, sizeof o->endpoint, o->rundir) < 0) {
        fprintf(stderr, "%s: %s\n", o->prog, zp_err_msg());
        return 1;
    }
    return -1;
}

int zp_stage_keys_setup(const zp_stage_opts_t *o, const char *arena_name, zp_keycache_t **kc, zp_pool_t **pool,
                        int (*get)(zp_keystore_key_t *, const char *, const zp_zkey_t *, const char *,
                                   const zp_keystore_opt_t *),
                        void (*release)(zp_keystore_key_t *))
{
    *kc = zp_keycache_new();
    *pool = zp_pool_new(o->threads);
    if (!*kc || !*pool) {
        fprintf(stderr, "%s: out of memory\n", o->prog);
        goto fail;
    }
    if (!o->ko.no_store) zp_keycache_set_store(*kc, arena_name, get, release, *pool);
    if (zp_keycache_preload(*kc, o->ko.paths, o->ko.n) < 0) {
        fprintf(stderr, "%s: %s\n", o->prog, zp_err_msg());
        goto fail;
    }
    return -1;
fail:
    zp_keycache_destroy(kc);
    zp_pool_destroy(pool);
    return 1;
}
