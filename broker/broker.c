/* broker.c - the zkpipe broker process: owns the shared-memory arena and all scheduling state.
 *
 * NOTES
 * One thread. A ROUTER socket at ipc://<runtime dir>/broker.sock (ZMQ_ROUTER_MANDATORY, so a
 * send to a vanished peer fails with EHOSTUNREACH instead of being dropped; ZMQ_MAXMSGSIZE as
 * the hard bound, the configured frame limit checked per frame). A libbsd pidfile in the
 * runtime dir keeps a second broker from stealing the endpoint. The loop: zmq_poll with a
 * timeout of half the heartbeat interval; each turn handles up to a batch of frames, checks
 * liveness, sends heartbeats, expires AWAITs and dispatches.
 * Workers are keyed by ZMQ routing id; (role, instance) names the logical worker. Who may
 * speak for it is decided by ident.c (proto/identity.h), not by the HELLO: a supervisor's
 * token and the connection's kernel pid. An accepted HELLO with a new incarnation for the same
 * (role, instance) means the old process is gone; a refused one changes nothing (counted as
 * hello_refused). The broker never signals a process: kill_it in brk_worker_dead asks the
 * supervisor (ident.c). Frames up to BRK_TRANSPORT_MAX reach the decoder, so one over the
 * configured limit is counted and answered instead of vanishing in the transport.
 * Every frame is decoded strictly; anything malformed is counted and answered with ERROR;
 * the broker keeps serving. Tests: tests/ipc/. */
#include <bsd/libutil.h>
#include <bsd/unistd.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "broker/broker_int.h"
#include "broker/fleet.h"
#include "broker/journal.h"
#include "lib/util/util.h"
#include "proto/identity.h"
#include "proto/notify.h"
#include "shm/keystore.h"
#include "proto/peer.h"

/* what libzmq accepts before our decoder sees a frame: above the largest configurable
 * --max-frame, so an oversized frame is counted and answered; beyond this the transport drops
 * the connection (a peer that sends 64 MiB control frames is not speaking the protocol) */
#define BRK_TRANSPORT_MAX (4 * (int64_t)ZP_FRAME_MAX_LIMIT)

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

int brk_send(brk_t *b, const uint8_t *id, size_t id_len, uint8_t *buf, size_t len)
{
    if (zmq_send(b->sock, id, id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) { free(buf); return -errno; }
    zmq_msg_t m;
    zmq_msg_init_size(&m, len);
    memcpy(zmq_msg_data(&m), buf, len);
    free(buf);
    if (zmq_msg_send(&m, b->sock, ZMQ_DONTWAIT) < 0) { int e = errno; zmq_msg_close(&m); return -e; }
    return 0;
}

static void send_error(brk_t *b, const uint8_t *id, size_t id_len, int code, const char *msg)
{
    zp_msg_error_t e = {.code = code, .message = zp_str(msg)};
    uint8_t *buf; size_t len;
    if (zp_msg_error_encode(&buf, &len, &e) == 0) brk_send(b, id, id_len, buf, len);
}

static brk_worker_t *worker_by_id(brk_t *b, const uint8_t *id, size_t n)
{
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (w->used && w->id_len == n && !memcmp(w->id, id, n)) return w;
    }
    return NULL;
}

/* Everything the dead worker held goes back to its queue with a new generation, not charged
 * (worker class); its slots stay quarantined until it is known gone (brk_worker_lost). */
void brk_worker_dead(brk_t *b, brk_worker_t *w, const char *why, bool kill_it)
{
    if (!w->used) return;
    zp_log(ZP_LOG_WARN, "%s worker #%u pid %u (%s) is gone: %s; requeueing %u slot(s)", zp_role_name(w->role),
           w->instance, w->pid, w->name, why, w->n_inflight);
    if (kill_it) brk_ident_fence(b, w, why);   /* the supervisor kills, never us */
    brk_ident_forget(b, w);
    brk_worker_lost(b, w, why);
}

/* ---------------------------------------------------------------- worker messages */
static void on_hello(brk_t *b, const uint8_t *id, size_t id_len, const zp_frame_t *f, uint32_t peer_pid)
{
    zp_msg_hello_t m;
    if (zp_msg_hello_decode(&m, f) < 0) {
        b->c.malformed++;
        send_error(b, id, id_len, ZP_EPROTO, zp_err_msg());
        return;
    }
    /* identity first: a refused HELLO changes nothing (the real worker keeps its work) */
    char why[256];
    uint32_t vpid;
    int reg;
    if (brk_ident_check(b, &m, peer_pid, &vpid, &reg, why, sizeof why) < 0) {
        b->c.hello_refused++;
        zp_log(ZP_LOG_WARN, "refused a HELLO as %s #%u (claimed pid %u, connection pid %u): %s", zp_role_name(m.role),
               m.instance, m.pid, peer_pid, why);
        send_error(b, id, id_len, -EPERM, why);
        return;
    }
    m.pid = vpid;
    brk_worker_t *w = worker_by_id(b, id, id_len);
    /* the same logical worker with a new incarnation (or another connection): the old one is gone */
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *o = &b->workers[i];
        if (!o->used || o == w || o->role != m.role || o->instance != m.instance) continue;
        if (o->incarnation != m.incarnation) brk_worker_dead(b, o, "restarted (new incarnation)", false);
        else { /* same process, new connection: move it */ w = o; memcpy(w->id, id, id_len); w->id_len = id_len; }
    }
    if (w && w->incarnation != m.incarnation) { brk_worker_dead(b, w, "restarted (new incarnation)", false); w = NULL; }
    if (!w) {
        for (unsigned i = 0; i < BRK_MAX_WORKERS && !w; i++)
            if (!b->workers[i].used) w = &b->workers[i];
        if (!w) { send_error(b, id, id_len, ZP_ETOOBIG, "too many workers"); return; }
        memset(w, 0, sizeof *w);
        w->used = true;
        memcpy(w->id, id, id_len);
        w->id_len = id_len;
        w->first_seen = zp_now_ns();
        zp_log(ZP_LOG_INFO, "%s worker #%u pid %u (%.*s) joined with %u credit(s)", zp_role_name(m.role),
               m.instance, m.pid, (int)m.name.len, m.name.p, m.credits);
    }
    w->alive = true;
    w->role = m.role; w->instance = m.instance; w->pid = m.pid; w->caps = m.capabilities;
    w->credits = m.credits; w->incarnation = m.incarnation;
    brk_ident_bind(b, w, peer_pid, reg);
    snprintf(w->name, sizeof w->name, "%.*s", (int)m.name.len, m.name.p);
    w->last_seen = zp_now_ns();
    brk_worker_held(b, w, m.held, m.n_held);   /* reconcile what it says it holds (slots.c) */
    brk_worker_keys(b, w, &m.keys);            /* keys: the proving keys it holds */
}

static void on_worker_msg(brk_t *b, const uint8_t *id, size_t id_len, const zp_frame_t *f)
{
    brk_worker_t *w = worker_by_id(b, id, id_len);
    if (!w) {
        /* unknown connection (we restarted, or declared it dead): ask it to start over, once:
         * what it sent before its HELLO arrives is stale, and a second RESET would make it
         * drop work we assigned after the HELLO */
        b->c.unknown_peer++;
        uint64_t now = zp_now_ns(), win = (uint64_t)b->heartbeat_ms * 4u * 1000000u;
        for (unsigned i = 0; i < 16; i++)
            if (b->reset_sent[i].n == id_len && now - b->reset_sent[i].t < win && !memcmp(b->reset_sent[i].id, id, id_len))
                return;
        unsigned k = b->reset_head++ % 16;
        memcpy(b->reset_sent[k].id, id, id_len);
        b->reset_sent[k].n = id_len;
        b->reset_sent[k].t = now;
        zp_msg_reset_t r = {.reason = zp_str("unknown worker: say HELLO")};
        uint8_t *buf; size_t len;
        if (zp_msg_reset_encode(&buf, &len, &r) == 0) brk_send(b, id, id_len, buf, len);
        return;
    }
    w->last_seen = zp_now_ns();
    if (f->cmd == ZP_CMD_HEARTBEAT) {
        zp_msg_heartbeat_t m;
        if (zp_msg_heartbeat_decode(&m, f) < 0) b->c.malformed++;
        else if (m.incarnation && m.incarnation != w->incarnation) brk_worker_dead(b, w, "incarnation changed", false);
        else brk_worker_keys(b, w, &m.keys);   /* keys: the proving keys it holds */
    } else if (f->cmd == ZP_CMD_DONE) {
        zp_msg_done_t m;
        if (zp_msg_done_decode(&m, f) < 0) { b->c.malformed++; zp_log(ZP_LOG_WARN, "bad DONE: %s", zp_err_msg()); }
        else { brk_mx_on_done(b, w, &m); brk_on_done(b, w, &m); }   /* obs: metrics hook */
    } else if (f->cmd == ZP_CMD_FAIL) {
        zp_msg_fail_t m;
        if (zp_msg_fail_decode(&m, f) < 0) { b->c.malformed++; zp_log(ZP_LOG_WARN, "bad FAIL: %s", zp_err_msg()); }
        else { brk_mx_on_fail(b, w, &m); brk_on_fail(b, w, &m); }   /* obs: metrics hook */
    }
}

/* ---------------------------------------------------------------- client messages */
static void on_client_msg(brk_t *b, const uint8_t *id, size_t id_len, const zp_frame_t *f)
{
    uint8_t *buf = NULL; size_t len = 0;
    int rc = 0;
    switch (f->cmd) {
    case ZP_CMD_SUBMIT: {
        zp_msg_submit_t *m = malloc(sizeof *m);
        brk_job_t *j = NULL;
        bool existed = false;
        if (!m) { rc = -ENOMEM; break; }
        if ((rc = zp_msg_submit_decode(m, f)) < 0) { b->c.malformed++; free(m); break; }
        char *inl = NULL;   /* client: inline witness bytes go to files first (inline.c) */
        if ((rc = brk_inline_store(b, m, &inl)) < 0) { free(m); break; }
        rc = brk_submit(b, m, &j, &existed);
        free(inl);
        free(m);
        if (rc < 0) break;
        zp_msg_submitted_t r = {.job = j->id, .n_parts = j->n_parts, .existed = existed};
        rc = zp_msg_submitted_encode(&buf, &len, &r);
        break;
    }
    case ZP_CMD_STATUS: {
        zp_msg_status_t m;
        if ((rc = zp_msg_status_decode(&m, f)) < 0) { b->c.malformed++; break; }
        char *t = brk_status_text(b, m.json);
        if (!t) { rc = -ENOMEM; break; }
        zp_msg_text_t r = {.text = zp_str(t)};
        rc = zp_msg_text_encode(&buf, &len, &r);
        free(t);
        break;
    }
    case ZP_CMD_TRACE: {
        zp_msg_trace_t m;
        if ((rc = zp_msg_trace_decode(&m, f)) < 0) { b->c.malformed++; break; }
        char *t = brk_trace_json(b, m.max_parts);
        if (!t) { rc = -ENOMEM; break; }
        zp_msg_text_t r = {.text = zp_str(t)};
        rc = zp_msg_text_encode(&buf, &len, &r);
        free(t);
        break;
    }
    case ZP_CMD_METRICS: {  /* ---- obs: Prometheus text (metrics.c) */
        zp_msg_metrics_t m;
        if ((rc = zp_msg_metrics_decode(&m, f)) < 0) { b->c.malformed++; break; }
        char *t = brk_metrics_text(b);
        if (!t) { rc = -ENOMEM; break; }
        zp_msg_text_t r = {.text = zp_str(t)};
        rc = zp_msg_text_encode(&buf, &len, &r);
        free(t);
        break;
    }
    case ZP_CMD_AWAIT: {
        zp_msg_await_t m;
        if ((rc = zp_msg_await_decode(&m, f)) < 0) { b->c.malformed++; break; }
        brk_job_t *j = brk_job_get(b, m.job);
        if (!j) { rc = zp_err_set(-ENOENT, "no job %llu", (unsigned long long)m.job); break; }
        if (j->state != ZP_JOB_RUNNING || m.timeout_ms == 0) {
            rc = brk_result_encode(b, j, j->state == ZP_JOB_RUNNING, &buf, &len);
            break;
        }
        if ((rc = brk_waiter_add(b, id, id_len, j->id, m.timeout_ms)) < 0) break;   /* bounded */
        return;
    }
    case ZP_CMD_CANCEL: {
        zp_msg_cancel_t m;
        if ((rc = zp_msg_cancel_decode(&m, f)) < 0) { b->c.malformed++; break; }
        brk_job_t *j = brk_job_get(b, m.job);
        if (!j) { rc = zp_err_set(-ENOENT, "no job %llu", (unsigned long long)m.job); break; }
        uint32_t freed = 0;
        if ((rc = brk_cancel(b, j, &freed)) < 0) break;
        zp_msg_canceled_t r = {.job = j->id, .freed = freed};
        rc = zp_msg_canceled_encode(&buf, &len, &r);
        break;
    }
    default:
        rc = zp_err_set(ZP_EPROTO, "unexpected command %u", f->cmd);
    }
    if (rc < 0) {
        const char *msg = zp_err_msg();
        send_error(b, id, id_len, rc, *msg ? msg : zp_strerror(rc));
        return;
    }
    brk_send(b, id, id_len, buf, len);
}

/* one ROUTER message: [routing id][frame] */
static void handle_one(brk_t *b)
{
    uint8_t id[BRK_ID_MAX];
    int idn = zmq_recv(b->sock, id, sizeof id, ZMQ_DONTWAIT);
    if (idn < 0) return;
    int more = 0;
    size_t ms = sizeof more;
    zmq_getsockopt(b->sock, ZMQ_RCVMORE, &more, &ms);
    if (!more || idn > BRK_ID_MAX) { b->c.malformed++; return; }
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, b->sock, ZMQ_DONTWAIT) < 0) { zmq_msg_close(&msg); return; }
    zp_zmq_threads_adopt(&b->zmq_adopted);
    bool extra = zmq_msg_more(&msg);
    while (zmq_msg_more(&msg)) {      /* drain and count multi-part junk */
        zmq_msg_close(&msg);
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, b->sock, ZMQ_DONTWAIT) < 0) break;
    }
    zp_frame_t f;
    size_t len = zmq_msg_size(&msg);
    uint32_t peer_pid = zp_peer_address_pid(zmq_msg_gets(&msg, "Peer-Address"), NULL);
    int rc = extra ? zp_err_set(ZP_EPROTO, "multi-part message") :
                     zp_frame_decode_cmds(&f, zmq_msg_data(&msg), len, b->max_frame, ZP_CMDS_TO_BROKER);
    if (rc < 0) {
        if (rc == ZP_ETOOBIG) b->c.oversized++; else b->c.malformed++;
        zp_log(ZP_LOG_WARN, "dropped a %s frame (%zu bytes): %s", rc == ZP_ETOOBIG ? "oversized" : "malformed",
               len, zp_err_msg());
        char why[200];
        snprintf(why, sizeof why, "%s%s", rc == ZP_ETOOBIG ? "frame too large: " : "", zp_err_msg());
        send_error(b, id, (size_t)idn, rc, why);
    } else if ((1ull << f.cmd) & ZP_CMDS_FROM_WORKER) {
        if (f.cmd == ZP_CMD_HELLO) on_hello(b, id, (size_t)idn, &f, peer_pid);
        else on_worker_msg(b, id, (size_t)idn, &f);
    } else {
        on_client_msg(b, id, (size_t)idn, &f);
    }
    zmq_msg_close(&msg);
}

static void heartbeat_and_liveness(brk_t *b)
{
    uint64_t now = zp_now_ns();
    uint64_t dead_after = (uint64_t)b->heartbeat_ms * b->liveness * 1000000u;
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++) {
        brk_worker_t *w = &b->workers[i];
        if (!w->used) continue;
        if (now - w->last_seen > dead_after) {
            char why[80];
            snprintf(why, sizeof why, "missed heartbeats (silent for %llu ms)",
                     (unsigned long long)((now - w->last_seen) / 1000000u));
            brk_worker_dead(b, w, why, true);
            continue;
        }
        zp_msg_heartbeat_t m = {.incarnation = 0, .busy = w->n_inflight};
        uint8_t *buf; size_t len;
        if (zp_msg_heartbeat_encode(&buf, &len, &m) == 0 && brk_send(b, w->id, w->id_len, buf, len) == -EHOSTUNREACH)
            brk_worker_dead(b, w, "unreachable (connection closed)", false);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: zkpipe-broker [--runtime-dir DIR] [--arena NAME] [--slots N] [--max-domain N]\n"
               "                     [--max-vars N] [--heartbeat-ms MS] [--liveness N] [--max-attempts K]\n"
               "                     [--max-frame BYTES] [--state-dir DIR] [--reset-state]\n"
               "                     [--metrics-listen IPV4:PORT] [--http-listen [IPV4:]PORT]\n"
               "                     [--http-token-file FILE] [--http-max-body BYTES] [--http-key-dir DIR]\n"
               "                     [--fleet-env VAR [--box-name NAME]]\n"
               "                     [--lease-ms BASE[,SYNTH,GPU,FINAL[,KEY]]] [--max-deaths N] [--breaker K[,COOL_MS]]\n"
               "                     [--retain-s S] [--retain-jobs N] [--max-waiters N[,PER_CLIENT]]\n"
               "                     [--key-affinity on|off|N] [--rt-priority P] [--rt-slice US]\n"
               "--rt-priority P (0-99, default 0 = off): the loop and libzmq's I/O thread at SCHED_FIFO P\n"
               "(READY -> ASSIGN lies between two GPU computes; `zkpipe up --gpu-rt-priority` sets it);\n"
               "HTTP API requests run at the normal policy; refused by the kernel: a log line, then --rt-slice.\n"
               "--rt-slice US (100-100000, default 100; 0 = off): without FIFO, the same threads at the normal\n"
               "policy with a US-microsecond scheduling slice (Linux >= 6.12: a wake-up preempts longer slices).\n"
               "--fleet-env VAR: also take partitions from the PostgreSQL fleet queue whose connection string\n"
               "is in environment variable VAR (`zkpipe up --fleet URL` sets it); --box-name: this box's name\n"
               "in the fleet (default: the host name).\n"
               "--lease-ms ($ZP_LEASE_MS): each assignment's deadline = BASE ms + STAGE ms per 2^20 domain\n"
               "elements (defaults 120000,60000,600000,120000); past it the worker is fenced and its work requeued;\n"
               "KEY (default 600000, 0 = none) is added while the worker has not reported holding the job's key\n"
               "(its first import of it runs inside the task).\n"
               "--max-deaths ($ZP_MAX_DEATHS, 10): worker/device-class failures (not charged) before a partition fails.\n"
               "--breaker ($ZP_BREAKER, 5,60000): a worker failing K partitions in a row leaves rotation for COOL_MS.\n"
               "--retain-s/--retain-jobs ($ZP_RETAIN_S 86400, $ZP_RETAIN_JOBS 50000): finished jobs kept (memory and\n"
               "journal); the request-id idempotency window is the retention.\n"
               "--max-waiters ($ZP_MAX_WAITERS, 4096,256): AWAITs waiting at once, overall and per client.\n"
               "--key-affinity ($ZP_KEY_AFFINITY, on): route GPU/final partitions to workers holding their proving\n"
               "key; N: on, and a busy worker switches keys only past N queued partitions per holder credit\n"
               "(default 2; doc/keys.md).\n"
               "--slot-classes ($ZP_SLOT_CLASSES) SPEC: the arena in slot size classes instead of --slots N of\n"
               "--max-domain/--max-vars each: COUNTxDOMAIN[/VARS] or COUNTx@ZKEY items, comma-separated\n"
               "(e.g. 6x2^16,2x2^20 or 4x@/keys/a.zkey,1x@/keys/b.zkey); each partition gets a slot of the\n"
               "smallest class that holds its circuit; one too big for every class is refused at SUBMIT.\n"
               "--slot-reserve ($ZP_SLOT_RESERVE) C[,H[,N]]: free slots of each class held back for CRITICAL\n"
               "(HIGH, NORMAL) work (default 0). --preempt ($ZP_PREEMPT, critical): partitions of this priority\n"
               "or better take back slots of worse ones that have not started (none: never).\n"
               "--metrics-listen (or $ZP_METRICS_LISTEN): serve GET /metrics (Prometheus text) over HTTP;\n"
               "off by default. Bind it to 127.0.0.1 unless the network is trusted.\n"
               "--http-listen: the HTTP JSON API (POST /v1/jobs, GET|DELETE /v1/jobs/ID, GET /v1/status,\n"
               "GET /metrics; 127.0.0.1 when no address is given); --http-token-file: Bearer tokens, one per\n"
               "line, required on every /v1/ request; --http-max-body: request size limit (default 16 MiB,\n"
               "inline witnesses included); --http-key-dir DIR: {\"key_id\": NAME} names DIR/NAME.zkey.\n"
               "The journal (accepted jobs, finished proofs) is <state dir>/<arena>.journal; the state dir\n"
               "defaults to $ZP_STATE_DIR, $XDG_STATE_HOME/zkpipe or ~/.local/state/zkpipe. A journal that\n"
               "cannot be read is an error; --reset-state moves it aside and starts empty.\n");
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out, const char *what)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 0);
    if (errno || e == s || *e || v < lo || v > hi) {
        fprintf(stderr, "zkpipe-broker: --%s: '%s' is not a number in [%u, %u]\n", what, s, lo, hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int main(int argc, char **argv, char **envp)
{
    static brk_t B;
    brk_t *b = &B;
    const char *rundir_opt = NULL, *arena = "default", *state_opt = NULL;
    const char *metrics_listen = getenv("ZP_METRICS_LISTEN");   /* obs */
    const char *http_listen = NULL, *http_tokens = NULL, *http_keys = NULL;   /* client: HTTP API (http.c) */
    uint32_t http_max_body = 0;
    const char *fleet_env = NULL, *box_name = NULL;              /* fleet */
    bool reset_state = false, arena_reused = false;
    uint32_t hb = 500, maxframe = ZP_FRAME_MAX_DEFAULT, rt_prio = 0, rt_slice = 100;
    int rc;

    setproctitle_init(argc, argv, envp);
    zp_log_init("broker");
    b->n_slots = 8; b->max_domain = 1u << 16; b->max_vars = 0; b->max_attempts = 3; b->liveness = 3;
    brk_config_defaults(b);
    /* environment defaults of the options below (children of `zkpipe up` inherit them) */
    static const char *const envs[][2] = {{"ZP_LEASE_MS", "lease-ms"}, {"ZP_MAX_DEATHS", "max-deaths"},
        {"ZP_BREAKER", "breaker"}, {"ZP_RETAIN_S", "retain-s"}, {"ZP_RETAIN_JOBS", "retain-jobs"},
        {"ZP_MAX_WAITERS", "max-waiters"}, {"ZP_KEY_AFFINITY", "key-affinity"}, {"ZP_SLOT_CLASSES", "slot-classes"},
        {"ZP_SLOT_RESERVE", "slot-reserve"}, {"ZP_PREEMPT", "preempt"}};
    for (unsigned i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        const char *v = getenv(envs[i][0]);
        if (v && *v && brk_config_set(b, envs[i][1], v) < 0) {
            fprintf(stderr, "zkpipe-broker: $%s: %s\n", envs[i][0], zp_err_msg());
            return 2;
        }
    }
    static const struct option opts[] = {
        {"runtime-dir", 1, 0, 'r'}, {"arena", 1, 0, 'a'}, {"slots", 1, 0, 's'}, {"max-domain", 1, 0, 'd'},
        {"max-vars", 1, 0, 'v'}, {"heartbeat-ms", 1, 0, 'H'}, {"liveness", 1, 0, 'l'},
        {"max-attempts", 1, 0, 'k'}, {"max-frame", 1, 0, 'F'}, {"state-dir", 1, 0, 'S'},
        {"reset-state", 0, 0, 'R'}, {"metrics-listen", 1, 0, 'M'}, {"help", 0, 0, 'h'},
        /* slots: 1000.. must stay right after "help" (index 13: brk_config_set by name) */
        {"lease-ms", 1, 0, 1000}, {"max-deaths", 1, 0, 1001}, {"breaker", 1, 0, 1002}, {"retain-s", 1, 0, 1003},
        {"retain-jobs", 1, 0, 1004}, {"max-waiters", 1, 0, 1005}, {"key-affinity", 1, 0, 1006},
        {"slot-classes", 1, 0, 1007}, {"slot-reserve", 1, 0, 1008}, {"preempt", 1, 0, 1009},
        {"http-listen", 1, 0, 'W'}, {"http-token-file", 1, 0, 'T'}, {"http-max-body", 1, 0, 'X'},
        {"http-key-dir", 1, 0, 'Y'}, {"fleet-env", 1, 0, 1101}, {"box-name", 1, 0, 1102},
        {"rt-priority", 1, 0, 1103}, {"rt-slice", 1, 0, 1104}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': rundir_opt = optarg; break;
        case 'a': arena = optarg; break;
        case 's': if (parse_u32(optarg, 1, 4096, &b->n_slots, "slots")) return 2; break;
        case 'd': if (parse_u32(optarg, 2, 1u << 28, &b->max_domain, "max-domain")) return 2; break;
        case 'v': if (parse_u32(optarg, 2, 1u << 28, &b->max_vars, "max-vars")) return 2; break;
        case 'H': if (parse_u32(optarg, 10, 60000, &hb, "heartbeat-ms")) return 2; break;
        case 'l': if (parse_u32(optarg, 2, 1000, &b->liveness, "liveness")) return 2; break;
        case 'k': if (parse_u32(optarg, 1, 100, &b->max_attempts, "max-attempts")) return 2; break;
        case 'F': if (parse_u32(optarg, 1024, ZP_FRAME_MAX_LIMIT, &maxframe, "max-frame")) return 2; break;
        case 'S': state_opt = optarg; break;
        case 'R': reset_state = true; break;
        case 'M': metrics_listen = optarg; break;   /* obs */
        case 'W': http_listen = optarg; break;      /* client: HTTP API */
        case 'T': http_tokens = optarg; break;
        case 'Y': http_keys = optarg; break;
        case 'X': if (parse_u32(optarg, 1024, 1u << 30, &http_max_body, "http-max-body")) return 2; break;
        case 1101: fleet_env = optarg; break;        /* fleet */
        case 1102: box_name = optarg; break;
        case 1103: if (parse_u32(optarg, 0, 99, &rt_prio, "rt-priority")) return 2; break;
        case 1104:
            if (parse_u32(optarg, 0, ZP_RT_SLICE_MAX_US, &rt_slice, "rt-slice")) return 2;
            if (!zp_rt_slice_ok(rt_slice)) {   /* below the kernel's minimum: not clamped silently */
                fprintf(stderr, "zkpipe-broker: --rt-slice '%s': expected 0 (off) or %d..%d\n", optarg,
                        ZP_RT_SLICE_MIN_US, ZP_RT_SLICE_MAX_US);
                return 2;
            }
            break;
        case 1000: case 1001: case 1002: case 1003: case 1004: case 1005: case 1006: case 1007: case 1008: case 1009:
            if (brk_config_set(b, opts[c - 1000 + 13].name, optarg) < 0) {
                fprintf(stderr, "zkpipe-broker: --%s: %s\n", opts[c - 1000 + 13].name, zp_err_msg());
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) { usage(stderr); return 2; }
    b->heartbeat_ms = (int)hb;
    b->max_frame = maxframe;
    if (!b->max_vars) b->max_vars = b->max_domain;
    zp_shm_class_t classes[ZP_SHM_MAX_CLASSES];
    uint32_t n_classes = 0;
    if (brk_classes_config(b, classes, &n_classes) < 0) {
        fprintf(stderr, "zkpipe-broker: slot classes: %s\n", zp_err_msg());
        return 2;
    }

    if ((rc = zp_runtime_dir(b->rundir, sizeof b->rundir, rundir_opt, true)) < 0) {
        fprintf(stderr, "zkpipe-broker: %s\n", zp_err_msg());
        return 1;
    }
    if (brk_ident_init(b) < 0) {
        fprintf(stderr, "zkpipe-broker: %s\n", zp_err_msg());
        return 1;
    }
    char pidpath[sizeof b->rundir + 16];
    if (snprintf(pidpath, sizeof pidpath, "%s/broker.pid", b->rundir) >= (int)sizeof pidpath) return 1;
    pid_t other = 0;
    struct pidfh *pfh = pidfile_open(pidpath, 0600, &other);
    if (!pfh) {
        if (errno == EEXIST)
            fprintf(stderr, "zkpipe-broker: another broker (pid %ld) already serves %s; stop it first\n",
                    (long)other, b->rundir);
        else fprintf(stderr, "zkpipe-broker: pidfile %s: %s\n", pidpath, strerror(errno));
        return 1;
    }
    pidfile_write(pfh);

    /* the arena: a stale one (from a broker that died) is replaced; we hold the pidfile */
    if ((rc = zp_shm_default_name(b->arena_name, sizeof b->arena_name, arena)) < 0) {
        fprintf(stderr, "zkpipe-broker: arena name '%s': %s\n", arena, zp_err_msg());
        goto out_pid;
    }
    uint64_t sb = classes[n_classes - 1].slot_bytes;   /* the largest */
    zp_shm_cfg_t cfg = {.name = b->arena_name, .n_classes = n_classes, .classes = classes};
    /* the journal: every accepted job and finished proof of this deployment */
    char sdir[512];
    if ((rc = brk_jr_state_dir(sdir, sizeof sdir, state_opt, true)) < 0 ||
        snprintf(b->jr_path, sizeof b->jr_path, "%s/%s.journal", sdir, b->arena_name + 1) >= (int)sizeof b->jr_path) {
        fprintf(stderr, "zkpipe-broker: state directory: %s\n", rc < 0 ? zp_err_msg() : "path too long");
        rc = 1;
        goto out_pid;
    }
    if ((rc = brk_jr_open(&b->jr, b->jr_path, reset_state)) < 0 || (rc = brk_jr_load(b->jr, b)) < 0) {
        fprintf(stderr, "zkpipe-broker: cannot use the journal: %s\n"
                        "zkpipe-broker: refusing to start without the accepted jobs it records; fix or move the file,\n"
                        "zkpipe-broker: or start with --reset-state to set it aside and start empty\n", zp_err_msg());
        rc = 1;
        goto out_jr;
    }
    /* the arena: one left by a broker that died is reused when it checks out (its slots hold
     * work in flight); anything else is replaced. We hold the pidfile. */
    rc = zp_shm_create(&b->arena, &cfg);
    if (rc == -EEXIST) {
        uint64_t jr_epoch = 0;
        if (brk_jr_meta_get(b->jr, "arena_epoch", &jr_epoch) < 0) zp_log(ZP_LOG_WARN, "%s", zp_err_msg());
        if (zp_shm_open(&b->arena, b->arena_name, NULL, 0) == 0 && zp_shm_n_slots(b->arena) == b->n_slots &&
            brk_classes_match(b->arena, classes, n_classes) && jr_epoch && zp_shm_epoch(b->arena) == jr_epoch) {
            zp_log(ZP_LOG_INFO, "arena %s exists (left by a previous broker) and checks out: reusing it", b->arena_name);
            arena_reused = true;
        } else {
            zp_log(ZP_LOG_WARN, "arena %s exists (left by a previous broker) but does not match (%s): replacing it",
                   b->arena_name, !b->arena ? zp_err_msg() : zp_shm_epoch(b->arena) != jr_epoch ?
                   "its epoch is not the one the journal knows" : "other slot count or size classes");
            zp_shm_close(&b->arena);
            zp_shm_unlink(b->arena_name, NULL);
            rc = zp_shm_create(&b->arena, &cfg);
        }
        if (arena_reused) rc = 0;
    }
    if (rc < 0) {
        fprintf(stderr, "zkpipe-broker: cannot create arena %s (%u slots of %llu bytes): %s %s\n", b->arena_name,
                b->n_slots, (unsigned long long)sb, zp_strerror(rc), zp_err_msg());
        goto out_jr;
    }
    b->epoch = zp_shm_epoch(b->arena);
    brk_classes_load(b);
    if (!arena_reused && (rc = brk_jr_meta_set(b->jr, "arena_epoch", b->epoch)) < 0) {
        fprintf(stderr, "zkpipe-broker: %s\n", zp_err_msg());
        goto out_arena;
    }
    b->slots = calloc(b->n_slots, sizeof *b->slots);
    if (!b->slots) { rc = -ENOMEM; goto out_arena; }
    if ((rc = brk_recover(b, arena_reused)) < 0) {
        fprintf(stderr, "zkpipe-broker: recovery: %s\n", zp_err_msg());
        goto out_arena;
    }

    zp_broker_endpoint(b->endpoint, sizeof b->endpoint, b->rundir);
    /* --rt-priority: the loop (READY -> ASSIGN is on the path between two GPU computes) and
     * libzmq's I/O thread at SCHED_FIFO (lib/util/rt.c); the fleet thread leaves it */
    zp_rt_setup((int)rt_prio, rt_slice);
    if (zp_rt_enter()) {
        if (zp_rt_priority()) zp_log(ZP_LOG_INFO, "loop and message I/O threads at SCHED_FIFO %d", zp_rt_priority());
        else zp_log(ZP_LOG_INFO, "loop and message I/O threads with a %u us scheduling slice", zp_rt_slice_us());
    }
    b->ctx = zmq_ctx_new();
    zp_zmq_ctx_rt(b->ctx);
    b->sock = zmq_socket(b->ctx, ZMQ_ROUTER);
    int one = 1, linger = 0;
    int64_t hard = BRK_TRANSPORT_MAX;
    zmq_setsockopt(b->sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
    zmq_setsockopt(b->sock, ZMQ_MAXMSGSIZE, &hard, sizeof hard);
    zmq_setsockopt(b->sock, ZMQ_LINGER, &linger, sizeof linger);
    /* a socket file left by a dead broker: we hold the pidfile, so it is stale */
    unlink(b->endpoint + strlen("ipc://"));
    if (zmq_bind(b->sock, b->endpoint) < 0) {
        fprintf(stderr, "zkpipe-broker: bind %s: %s\n", b->endpoint, zmq_strerror(errno));
        rc = 1;
        goto out_zmq;
    }
    chmod(b->endpoint + strlen("ipc://"), 0600);
    if (brk_mx_init(b, metrics_listen) < 0 ||   /* obs: metrics state */
        brk_http_init(b, metrics_listen, http_listen, http_tokens, http_max_body, http_keys) < 0) {   /* client: HTTP (http.c) */
        fprintf(stderr, "zkpipe-broker: %s\n", zp_err_msg());
        rc = 1;
        goto out_zmq;
    }
    if (fleet_env && brk_fleet_start(b, fleet_env, box_name, sdir) < 0) {   /* fleet: a box of the queue */
        fprintf(stderr, "zkpipe-broker: fleet: %s\n", zp_err_msg());
        rc = 1;
        goto out_zmq;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    b->t_start = zp_now_ns();
    zp_log(ZP_LOG_INFO, "serving %s; arena %s: %u slots, the largest %llu MiB (max domain %u, max vars %u), epoch %016llx",
           b->endpoint, b->arena_name, b->n_slots, (unsigned long long)(sb >> 20), b->max_domain, b->max_vars,
           (unsigned long long)b->epoch);
    for (uint32_t k = 0; k < b->n_classes; k++)
        zp_log(ZP_LOG_INFO, "slot class %u: %u slot(s) of %llu MiB (slots %u..%u)", k, b->classes[k].n,
               (unsigned long long)(b->classes[k].bytes >> 20), b->classes[k].first, b->classes[k].first + b->classes[k].n - 1);
    setproctitle("serving %s", b->endpoint);
    zp_notifyf("READY=1\nSTATUS=serving %s", b->endpoint);
    zp_watchdog_t wd;
    zp_watchdog_init(&wd);

    uint64_t next_hb = zp_now_ns();
    while (!g_stop) {
        zmq_pollitem_t it[5] = {{b->sock, 0, ZMQ_POLLIN, 0}};
        int tmo = b->heartbeat_ms / 2;
        int nhttp = brk_http_pollitems(b, it + 1, &tmo);   /* client: libmicrohttpd epoll fds (<= 2) */
        int supfd = brk_ident_pollfd(b);                 /* the supervisor channel, after them */
        it[1 + nhttp] = (zmq_pollitem_t){NULL, supfd, ZMQ_POLLIN, 0};
        tmo = zp_watchdog_poll_ms(&wd, zp_now_ns(), tmo);
        int nsup = supfd >= 0;
        int nfleet = brk_fleet_pollitem(b, it + 1 + nhttp + nsup);   /* fleet: its thread's wake-up pipe */
        int n = zmq_poll(it, 1 + nhttp + nsup + nfleet, tmo);
        if (n < 0 && errno != EINTR) { zp_log(ZP_LOG_ERROR, "zmq_poll: %s", zmq_strerror(errno)); break; }
        if (supfd >= 0) brk_ident_service(b);           /* REG before the HELLOs it announces */
        if (n > 0)
            for (int k = 0; k < 256; k++) {
                int ev = 0;
                size_t evs = sizeof ev;
                zmq_getsockopt(b->sock, ZMQ_EVENTS, &ev, &evs);
                if (!(ev & ZMQ_POLLIN)) break;
                handle_one(b);
            }
        uint64_t now = zp_now_ns();
        zp_watchdog_tick(&wd, now);
        if (now >= next_hb) {
            heartbeat_and_liveness(b);
            brk_ident_tick(b);
            brk_recover_expire(b);
            brk_slots_tick(b);      /* quarantine releases, lease expiry */
            brk_jobs_retain(b);     /* bounded state */
            next_hb = now + (uint64_t)b->heartbeat_ms * 1000000u;
        }
        brk_fleet_service(b);   /* fleet: claimed partitions in, lost leases out, capacity published */
        brk_dispatch(b);
        brk_waiters_poll(b, false);
        /* request bodies are O(n): at the normal policy (only with the HTTP API: a pause
         * reschedules, so the loop never takes one it does not need) */
        if (http_listen) zp_rt_pause();
        brk_http_service(b);                            /* client: HTTP requests and timeouts */
        if (http_listen) zp_rt_resume();
        brk_mx_tick(b);                                 /* obs: idle accounting */
        brk_inline_sweep(b);                            /* client: finished jobs' inline witnesses */
        static uint64_t last_title;
        if (now - last_title > 1000000000u) {
            zp_shm_stats_t st;
            zp_shm_stats(b->arena, &st);
            setproctitle("%zu jobs, queues %zu/%zu/%zu, %u/%u slots free", b->n_jobs, b->qn[0], b->qn[1],
                         b->qn[2], st.by_state[ZP_SLOT_FREE], st.n_slots);
            last_title = now;
        }
    }
    zp_log(ZP_LOG_INFO, "stopping");
    zp_notify("STOPPING=1");
    brk_waiters_poll(b, true);
    rc = 0;
out_zmq:
    brk_http_close(b);   /* client */
    brk_fleet_stop(b);   /* fleet */
    brk_mx_close(b);   /* obs */
    zmq_close(b->sock);
    zmq_ctx_term(b->ctx);
    unlink(b->endpoint + strlen("ipc://"));
out_arena:
    zp_shm_close(&b->arena);
    zp_shm_unlink(b->arena_name, NULL);
    zp_keystore_unlink_all(b->arena_name);   /* clean shutdown: the shared proving keys go too */
out_jr:
    brk_jr_close(&b->jr);
    brk_jobs_close(b);
    brk_slots_close(b);
out_pid:
    pidfile_remove(pfh);
    brk_ident_close(b);
    return rc < 0 ? 1 : rc;
}
