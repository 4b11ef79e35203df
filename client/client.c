/* client.c - libzkpipe-client (public API in zkpipe-client.h): requests to a running broker
 * over its ROUTER socket, with the runtime-directory checks, reconnect-and-retry across broker
 * restarts, and the result codes the `zkpipe` commands exit with.
 *
 * Invariants: a zp_client_t owns at most one DEALER socket; a request is retried only on a
 * FRESH socket (the old one is closed first), so a late reply to an earlier attempt can never
 * be taken for the answer to a later one. Every request is idempotent (SUBMIT by its request
 * id), so resending after a broker restart cannot duplicate work. Frames from the broker are
 * untrusted: decoded by the strict codec (proto/messages.c) and copied into the result.
 * Built twice: into the installed libzkpipe-client (shared + static, with proto/codec.c,
 * proto/messages.c and lib/util/util.c) and into the `zkpipe` command.
 * Tests: tests/client/ (test_client.c against a real group, restart.sh, rundir.sh). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "client/zkpipe-client.h"
#include "lib/util/util.h"
#include "proto/proto.h"

#define ATTEMPT_GRACE_MS 5000   /* how long past its own wait one attempt waits for a reply */
#define RETRY_PAUSE_MS 100      /* between attempts while the broker is away */
#define ABSENT_WAIT_MS 5000     /* how long a missing socket is waited for before "no broker" */

struct zp_client {
    char rundir[512], sock_path[560], endpoint[576];
    bool explicit_dir;          /* named by the caller or $ZP_RUNTIME_DIR */
    void *ctx, *sock;
    zmq_msg_t rx;               /* the last reply (decoded frames point into it) */
    int timeout_ms;
    zp_client_progress_fn progress;
    void *progress_ctx;
    int progress_ms;
    char err[1024];
};

typedef struct {
    char *path;                 /* absolute, or NULL when inline */
    uint8_t *data;
    size_t len;
} job_wtns_t;

struct zp_client_job {
    char *zkey, *r1cs, *wasm;
    size_t n_inputs;            /* entries of w[] that are input.json texts (issue 28) */
    char rid[ZP_MSG_NAME_MAX + 1];
    uint32_t priority;
    size_t n;
    job_wtns_t w[ZP_MSG_MAX_PARTS];
    char err[PATH_MAX + 200];
};

typedef struct {
    uint32_t state, attempts;
    char *proof, *pub, *error;
    uint8_t *bin;
    size_t bin_len;
} part_t;

struct zp_client_result {
    uint64_t job;
    uint32_t state, n, done, failed;
    part_t *p;
};

static int set_err(zp_client_t *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_err(zp_client_t *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *zp_client_strerror(int code)
{
    switch (code) {
    case ZP_CLIENT_OK: return "done";
    case ZP_CLIENT_FAILED: return "a partition failed";
    case ZP_CLIENT_USAGE: return "bad usage or input";
    case ZP_CLIENT_TIMEOUT: return "timed out";
    case ZP_CLIENT_CANCELED: return "canceled";
    case ZP_CLIENT_UNREACHABLE: return "broker unreachable";
    case ZP_CLIENT_REFUSED: return "refused by the broker";
    case ZP_CLIENT_SYSTEM: return "local failure";
    default: return "unknown result code";
    }
}

/* ---------------------------------------------------------------- client object */
zp_client_t *zp_client_new(const char *runtime_dir)
{
    zp_client_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    const char *e;
    int k;
    c->explicit_dir = true;
    if (runtime_dir && *runtime_dir) k = snprintf(c->rundir, sizeof c->rundir, "%s", runtime_dir);
    else if ((e = getenv("ZP_RUNTIME_DIR")) && *e) k = snprintf(c->rundir, sizeof c->rundir, "%s", e);
    else {
        c->explicit_dir = false;
        if ((e = getenv("XDG_RUNTIME_DIR")) && *e) k = snprintf(c->rundir, sizeof c->rundir, "%s/zkpipe", e);
        else k = snprintf(c->rundir, sizeof c->rundir, "/tmp/zkpipe-%u", (unsigned)getuid());
    }
    if (k < 0 || (size_t)k >= sizeof c->rundir) c->rundir[0] = 0;   /* reported at connect */
    snprintf(c->sock_path, sizeof c->sock_path, "%s/broker.sock", c->rundir);
    snprintf(c->endpoint, sizeof c->endpoint, "ipc://%s", c->sock_path);
    c->timeout_ms = 30000;
    zmq_msg_init(&c->rx);
    return c;
}

static void sock_close(zp_client_t *c)
{
    if (c->sock) zmq_close(c->sock);
    c->sock = NULL;
}

void zp_client_destroy(zp_client_t **cp)
{
    if (!cp || !*cp) return;
    zp_client_t *c = *cp;
    sock_close(c);
    zmq_msg_close(&c->rx);
    if (c->ctx) zmq_ctx_term(c->ctx);
    free(c);
    *cp = NULL;
}

void zp_client_set_timeout(zp_client_t *c, int timeout_ms) { c->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000; }
const char *zp_client_errmsg(const zp_client_t *c) { return c ? c->err : ""; }
void zp_client_free(void *p) { free(p); }

void zp_client_set_progress(zp_client_t *c, zp_client_progress_fn fn, void *ctx, int interval_ms)
{
    c->progress = fn;
    c->progress_ctx = ctx;
    c->progress_ms = interval_ms > 0 ? interval_ms : 0;
}

/* ---------------------------------------------------------------- runtime directory checks */
/* 0: the socket may be used; ZP_CLIENT_UNREACHABLE with the message otherwise. *absent: the
 * directory or socket does not exist (yet): worth waiting for during a restart. */
static int check_rundir(zp_client_t *c, bool *absent)
{
    struct stat st;
    uid_t me = getuid();
    *absent = false;
    if (!c->rundir[0]) return set_err(c, ZP_CLIENT_USAGE, "runtime directory path too long");
    if (stat(c->rundir, &st) < 0) {
        int e = errno;
        if (e == EACCES)
            return set_err(c, ZP_CLIENT_UNREACHABLE, "permission denied: cannot reach the broker's runtime directory %s"
                           " (it belongs to another user; ask to be let in, e.g. the service's group)", c->rundir);
        *absent = e == ENOENT;
        return set_err(c, ZP_CLIENT_UNREACHABLE, "no broker: runtime directory %s: %s (is `zkpipe up` running?)",
                       c->rundir, strerror(e));
    }
    if (!S_ISDIR(st.st_mode)) return set_err(c, ZP_CLIENT_UNREACHABLE, "runtime directory %s is not a directory", c->rundir);
    bool owner_ok = st.st_uid == me || c->explicit_dir;   /* a named directory: the caller chose whom to trust */
    if (!owner_ok)
        return set_err(c, ZP_CLIENT_UNREACHABLE, "runtime directory %s belongs to uid %u, not to you (uid %u): not "
                       "trusted (another user may have created it to run a fake broker); remove it or set ZP_RUNTIME_DIR",
                       c->rundir, (unsigned)st.st_uid, (unsigned)me);
    if (st.st_mode & 022)
        return set_err(c, ZP_CLIENT_UNREACHABLE, "runtime directory %s is writable by group or others (mode %04o): not "
                       "trusted (anyone could replace the broker's socket)", c->rundir, (unsigned)(st.st_mode & 07777));
    uid_t dir_uid = st.st_uid;
    if (lstat(c->sock_path, &st) < 0) {
        int e = errno;
        if (e == EACCES)
            return set_err(c, ZP_CLIENT_UNREACHABLE, "permission denied: cannot reach the broker socket %s "
                           "(runtime directory owned by uid %u)", c->sock_path, (unsigned)dir_uid);
        *absent = e == ENOENT;
        return set_err(c, ZP_CLIENT_UNREACHABLE, "no broker socket at %s (is `zkpipe up` running?)", c->sock_path);
    }
    if (!S_ISSOCK(st.st_mode)) return set_err(c, ZP_CLIENT_UNREACHABLE, "%s is not a socket", c->sock_path);
    if (st.st_uid != dir_uid)
        return set_err(c, ZP_CLIENT_UNREACHABLE, "broker socket %s belongs to uid %u, its directory to uid %u: not trusted",
                       c->sock_path, (unsigned)st.st_uid, (unsigned)dir_uid);
    if (access(c->sock_path, W_OK) < 0 && errno == EACCES)
        return set_err(c, ZP_CLIENT_UNREACHABLE, "permission denied: the broker socket %s is not writable for uid %u",
                       c->sock_path, (unsigned)me);
    return 0;
}

static int sock_open(zp_client_t *c)
{
    if (!c->ctx && !(c->ctx = zmq_ctx_new())) return set_err(c, ZP_CLIENT_SYSTEM, "zmq_ctx_new: %s", zmq_strerror(errno));
    c->sock = zmq_socket(c->ctx, ZMQ_DEALER);
    if (!c->sock) return set_err(c, ZP_CLIENT_SYSTEM, "zmq_socket: %s", zmq_strerror(errno));
    int linger = 0;
    int64_t maxsz = ZP_FRAME_MAX_LIMIT;
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(c->sock, ZMQ_MAXMSGSIZE, &maxsz, sizeof maxsz);
    if (zmq_connect(c->sock, c->endpoint) < 0) {
        int e = errno;
        sock_close(c);
        return set_err(c, ZP_CLIENT_SYSTEM, "zmq_connect %s: %s", c->endpoint, zmq_strerror(e));
    }
    return 0;
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* check and connect. A missing socket is waited for (a broker that restarts cleanly removes
 * and re-creates it) until give_up, but at most ABSENT_WAIT_MS in a row: with no broker at all
 * `zkpipe status` says so after a few seconds, not after the whole call timeout. */
static int ensure_connected(zp_client_t *c, uint64_t give_up)
{
    if (c->sock) return 0;
    uint64_t absent_until = zp_now_ns() + (uint64_t)ABSENT_WAIT_MS * 1000000u;
    if (absent_until > give_up) absent_until = give_up;
    for (;;) {
        bool absent;
        int rc = check_rundir(c, &absent);
        if (rc == 0) return sock_open(c);
        if (!absent || zp_now_ns() >= absent_until) return rc;
        pause_ms(RETRY_PAUSE_MS);
    }
}

int zp_client_connect(zp_client_t *c)
{
    c->err[0] = 0;
    return ensure_connected(c, zp_now_ns() + (uint64_t)c->timeout_ms * 1000000u);
}

/* ---------------------------------------------------------------- one request, retried */
/* Send req (kept: it may be resent) and wait up to attempt_ms for a reply; on silence or a lost
 * connection reconnect and resend until give_up. 0: *f holds the reply (an ERROR reply is
 * turned into REFUSED with its message). */
static int call(zp_client_t *c, const uint8_t *req, size_t len, int attempt_ms, uint64_t give_up, zp_frame_t *f)
{
    c->err[0] = 0;
    for (unsigned attempt = 0;; attempt++) {
        int rc = ensure_connected(c, give_up);
        if (rc) return rc;
        if (zmq_send(c->sock, req, len, ZMQ_DONTWAIT) < 0 && errno != EAGAIN)
            return set_err(c, ZP_CLIENT_SYSTEM, "send to the broker: %s", zmq_strerror(errno));
        uint64_t now = zp_now_ns(), until = now + (uint64_t)attempt_ms * 1000000u;
        if (until > give_up) until = give_up;
        while ((now = zp_now_ns()) < until) {
            zmq_pollitem_t it = {c->sock, 0, ZMQ_POLLIN, 0};
            int n = zmq_poll(&it, 1, (long)((until - now) / 1000000u) + 1);
            if (n < 0 && errno != EINTR) return set_err(c, ZP_CLIENT_SYSTEM, "zmq_poll: %s", zmq_strerror(errno));
            if (n <= 0) continue;
            zmq_msg_close(&c->rx);
            zmq_msg_init(&c->rx);
            if (zmq_msg_recv(&c->rx, c->sock, ZMQ_DONTWAIT) < 0) continue;
            bool more = zmq_msg_more(&c->rx);
            if (more) {          /* not ours: one frame per message; start over on a fresh socket */
                sock_close(c);
                return set_err(c, ZP_CLIENT_REFUSED, "malformed reply from the broker (multi-part message)");
            }
            if (zp_frame_decode_cmds(f, zmq_msg_data(&c->rx), zmq_msg_size(&c->rx), ZP_FRAME_MAX_LIMIT,
                                     ZP_CMDS_TO_CLIENT) < 0) {
                sock_close(c);
                return set_err(c, ZP_CLIENT_REFUSED, "malformed reply from the broker: %s", zp_err_msg());
            }
            if (f->cmd != ZP_CMD_ERROR) return 0;
            zp_msg_error_t er;
            if (zp_msg_error_decode(&er, f) < 0)
                return set_err(c, ZP_CLIENT_REFUSED, "malformed ERROR from the broker: %s", zp_err_msg());
            if (er.code == ZP_ETOOBIG)
                return set_err(c, ZP_CLIENT_REFUSED, "the broker refused the request as too large (%zu bytes; %.*s): "
                               "send big witnesses by path, or raise zkpipe-broker --max-frame", len,
                               (int)er.message.len, er.message.p);
            return set_err(c, ZP_CLIENT_REFUSED, "%s: %.*s", zp_strerror(er.code ? er.code : ZP_EPROTO),
                           (int)er.message.len, er.message.p);
        }
        /* no reply: the broker is gone or restarting; a fresh socket for the next attempt */
        sock_close(c);
        if (zp_now_ns() >= give_up)
            return set_err(c, ZP_CLIENT_UNREACHABLE, "no answer from the broker at %s after %u attempt(s) "
                           "(is `zkpipe up` running?)", c->sock_path, attempt + 1);
        pause_ms(RETRY_PAUSE_MS);
    }
}

static uint64_t deadline_in(int ms) { return zp_now_ns() + (uint64_t)ms * 1000000u; }

/* encode with enc, then one call; the request buffer is freed here */
static int call_owned(zp_client_t *c, int rc_enc, uint8_t *buf, size_t len, zp_frame_t *f)
{
    if (rc_enc < 0) return set_err(c, rc_enc == ZP_ETOOBIG ? ZP_CLIENT_USAGE : ZP_CLIENT_SYSTEM,
                                   "encoding the request: %s %s", zp_strerror(rc_enc), zp_err_msg());
    int attempt = c->timeout_ms < ATTEMPT_GRACE_MS ? c->timeout_ms : ATTEMPT_GRACE_MS;
    int rc = call(c, buf, len, attempt, deadline_in(c->timeout_ms), f);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- jobs */
zp_client_job_t *zp_client_job_new(const char *zkey_path)
{
    zp_client_job_t *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->priority = ZP_PRIO_NORMAL;
    char abs[PATH_MAX];
    if (!zkey_path || !*zkey_path) snprintf(j->err, sizeof j->err, "no proving key (.zkey) given");
    else if (!realpath(zkey_path, abs)) snprintf(j->err, sizeof j->err, "%s: %s", zkey_path, strerror(errno));
    else if (!(j->zkey = strdup(abs))) { free(j); return NULL; }
    return j;
}

void zp_client_job_free(zp_client_job_t **jp)
{
    if (!jp || !*jp) return;
    zp_client_job_t *j = *jp;
    free(j->zkey);
    free(j->r1cs);
    free(j->wasm);
    for (size_t i = 0; i < j->n; i++) { free(j->w[i].path); free(j->w[i].data); }
    free(j);
    *jp = NULL;
}

static int job_err(zp_client_job_t *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int job_err(zp_client_job_t *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!j->err[0]) vsnprintf(j->err, sizeof j->err, fmt, ap);   /* keep the first */
    va_end(ap);
    return ZP_CLIENT_USAGE;
}

const char *zp_client_job_errmsg(const zp_client_job_t *j) { return j ? j->err : ""; }
const char *zp_client_job_request_id(const zp_client_job_t *j) { return j->rid; }

int zp_client_job_set_r1cs(zp_client_job_t *j, const char *r1cs_path)
{
    char abs[PATH_MAX];
    if (!r1cs_path || !*r1cs_path) return job_err(j, "empty r1cs path");
    if (!realpath(r1cs_path, abs)) return job_err(j, "%s: %s", r1cs_path, strerror(errno));
    free(j->r1cs);
    if (!(j->r1cs = strdup(abs))) return job_err(j, "out of memory");
    return 0;
}

int zp_client_job_set_priority(zp_client_job_t *j, const char *priority)
{
    int p = priority ? zp_prio_parse(priority) : -1;
    if (p < 0) return job_err(j, "priority '%s' is not one of critical, high, normal, low", priority ? priority : "");
    j->priority = (uint32_t)p;
    return 0;
}

int zp_client_job_set_request_id(zp_client_job_t *j, const char *rid)
{
    size_t n = rid ? strlen(rid) : 0;
    if (n == 0)
        return job_err(j, "the request id is empty: it must be 1 to %d bytes (the key that makes a repeated submit "
                          "return the same job)", ZP_MSG_NAME_MAX);
    if (n > ZP_MSG_NAME_MAX) return job_err(j, "the request id is %zu bytes long: at most %d", n, ZP_MSG_NAME_MAX);
    memcpy(j->rid, rid, n + 1);
    return 0;
}

static int add_slot(zp_client_job_t *j)
{
    if (j->n >= ZP_MSG_MAX_PARTS) return job_err(j, "at most %d witnesses per job", ZP_MSG_MAX_PARTS);
    return 0;
}

int zp_client_job_add_wtns(zp_client_job_t *j, const char *path)
{
    char abs[PATH_MAX];
    if (add_slot(j)) return ZP_CLIENT_USAGE;
    if (j->n_inputs) return job_err(j, "witness %zu: a job takes either witnesses or inputs, not both", j->n);
    if (!path || !*path) return job_err(j, "witness %zu: empty path", j->n);
    if (!realpath(path, abs)) return job_err(j, "%s: %s", path, strerror(errno));
    if (!(j->w[j->n].path = strdup(abs))) return job_err(j, "out of memory");
    j->n++;
    return 0;
}

int zp_client_job_add_vectors(zp_client_job_t *j, const char *path)
{
    char abs[PATH_MAX];
    unsigned char m[8];
    if (!path || !*path) return job_err(j, "vectors %zu: empty path", j->n);
    FILE *f = fopen(path, "rb");
    if (!f) return job_err(j, "%s: %s", path, strerror(errno));
    size_t got = fread(m, 1, sizeof m, f);
    fclose(f);
    if (got != sizeof m || memcmp(m, "zpvecs\0\1", 8))
        return job_err(j, "%s: not a vectors file (magic \"zpvecs\\0\\1\" expected)", path);
    if (add_slot(j)) return ZP_CLIENT_USAGE;
    if (j->n_inputs) return job_err(j, "vectors %zu: a job takes either witnesses/vectors or inputs, not both", j->n);
    if (!realpath(path, abs)) return job_err(j, "%s: %s", path, strerror(errno));
    if (!(j->w[j->n].path = strdup(abs))) return job_err(j, "out of memory");
    j->n++;
    return 0;
}

int zp_client_job_set_wasm(zp_client_job_t *j, const char *wasm_path)
{
    char abs[PATH_MAX];
    if (!wasm_path || !*wasm_path) return job_err(j, "empty wasm path");
    if (!realpath(wasm_path, abs)) return job_err(j, "%s: %s", wasm_path, strerror(errno));
    free(j->wasm);
    if (!(j->wasm = strdup(abs))) return job_err(j, "out of memory");
    return 0;
}

int zp_client_job_add_input(zp_client_job_t *j, const char *json, size_t len)
{
    if (add_slot(j)) return ZP_CLIENT_USAGE;
    if (j->n > j->n_inputs) return job_err(j, "input %zu: a job takes either witnesses or inputs, not both", j->n);
    if (!json || len == 0) return job_err(j, "input %zu: empty", j->n);
    if (len > ZP_CLIENT_INPUT_MAX)
        return job_err(j, "input %zu: %zu bytes, at most %u", j->n, len, ZP_CLIENT_INPUT_MAX);
    if (!(j->w[j->n].data = malloc(len))) return job_err(j, "out of memory");
    memcpy(j->w[j->n].data, json, len);
    j->w[j->n].len = len;
    j->n++;
    j->n_inputs++;
    return 0;
}

int zp_client_job_add_input_file(zp_client_job_t *j, const char *path)
{
    if (!path || !*path) return job_err(j, "input %zu: empty path", j->n);
    FILE *f = fopen(path, "rb");
    if (!f) return job_err(j, "%s: %s", path, strerror(errno));
    char *buf = malloc(ZP_CLIENT_INPUT_MAX + 1);
    if (!buf) { fclose(f); return job_err(j, "out of memory"); }
    size_t n = fread(buf, 1, ZP_CLIENT_INPUT_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    int rc;
    if (bad) rc = job_err(j, "%s: read error", path);
    else if (n > ZP_CLIENT_INPUT_MAX) rc = job_err(j, "%s: larger than %u bytes", path, ZP_CLIENT_INPUT_MAX);
    else if (n == 0) rc = job_err(j, "%s: empty file", path);
    else rc = zp_client_job_add_input(j, buf, n);
    free(buf);
    return rc;
}

int zp_client_job_add_wtns_data(zp_client_job_t *j, const void *data, size_t len)
{
    if (add_slot(j)) return ZP_CLIENT_USAGE;
    if (j->n_inputs) return job_err(j, "witness %zu: a job takes either witnesses or inputs, not both", j->n);
    if (!data || len == 0) return job_err(j, "witness %zu: no bytes", j->n);
    if (len > ZP_CLIENT_INLINE_WTNS_MAX)
        return job_err(j, "witness %zu: %zu bytes inline, at most %u (send larger witnesses by path)", j->n, len,
                       ZP_CLIENT_INLINE_WTNS_MAX);
    if (!(j->w[j->n].data = malloc(len))) return job_err(j, "out of memory");
    memcpy(j->w[j->n].data, data, len);
    j->w[j->n].len = len;
    j->n++;
    return 0;
}

int zp_client_submit(zp_client_t *c, zp_client_job_t *j, uint64_t *job, bool *existed)
{
    c->err[0] = 0;
    if (j->err[0]) return set_err(c, ZP_CLIENT_USAGE, "%s", j->err);
    if (!j->zkey) return set_err(c, ZP_CLIENT_USAGE, "no proving key (.zkey) given");
    if (j->n == 0) return set_err(c, ZP_CLIENT_USAGE, "a job needs at least one witness or input");
    if (j->n_inputs && !j->wasm)
        return set_err(c, ZP_CLIENT_USAGE, "inputs need the circuit's witness generator (zp_client_job_set_wasm)");
    if (j->wasm && !j->n_inputs)
        return set_err(c, ZP_CLIENT_USAGE, "a wasm was given but no inputs (witnesses go without a wasm)");
    if (!j->rid[0]) {   /* fixed now: a retry after a restart must carry the same id */
        uint64_t r = 0;
        if (zp_random_bytes(&r, sizeof r) < 0) r = zp_now_ns() ^ ((uint64_t)getpid() << 32);
        snprintf(j->rid, sizeof j->rid, "auto-%016llx", (unsigned long long)r);
    }
    zp_msg_submit_t *m = calloc(1, sizeof *m);
    if (!m) return set_err(c, ZP_CLIENT_SYSTEM, "out of memory");
    m->request_id = zp_str(j->rid);
    m->zkey = zp_str(j->zkey);
    m->r1cs = zp_str(j->r1cs ? j->r1cs : "");
    m->priority = j->priority;
    m->wasm = zp_str(j->wasm ? j->wasm : "");
    m->n_wtns = j->n;
    for (size_t i = 0; i < j->n; i++) {
        m->wtns[i] = zp_str(j->w[i].path ? j->w[i].path : "");
        m->wtns_data[i] = j->w[i].data;
        m->wtns_data_len[i] = j->w[i].len;
    }
    uint8_t *buf = NULL; size_t len = 0;
    int rc = zp_msg_submit_encode(&buf, &len, m);
    free(m);
    zp_frame_t f;
    if ((rc = call_owned(c, rc, buf, len, &f))) return rc;
    zp_msg_submitted_t r;
    if (zp_msg_submitted_decode(&r, &f) < 0) return set_err(c, ZP_CLIENT_REFUSED, "bad SUBMITTED reply: %s", zp_err_msg());
    *job = r.job;
    if (existed) *existed = r.existed;
    return 0;
}

/* ---------------------------------------------------------------- await and results */
void zp_client_result_free(zp_client_result_t **rp)
{
    if (!rp || !*rp) return;
    zp_client_result_t *r = *rp;
    for (uint32_t i = 0; i < r->n; i++) { free(r->p[i].proof); free(r->p[i].pub); free(r->p[i].error); free(r->p[i].bin); }
    free(r->p);
    free(r);
    *rp = NULL;
}

static char *dup_opt(zp_str_t s, bool *oom)
{
    if (!s.len) return NULL;
    char *d = zp_str_dup(s);
    if (!d) *oom = true;
    return d;
}

static zp_client_result_t *result_copy(const zp_msg_result_t *m)
{
    zp_client_result_t *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->job = m->job;
    r->state = m->state;
    r->n = (uint32_t)m->n_parts;
    if (r->n && !(r->p = calloc(r->n, sizeof *r->p))) { free(r); return NULL; }
    bool oom = false;
    for (uint32_t i = 0; i < r->n; i++) {
        const zp_msg_part_result_t *s = &m->parts[i];
        part_t *d = &r->p[i];
        d->state = s->state;
        d->attempts = s->attempts;
        if (s->state == ZP_PART_DONE) r->done++;
        if (s->state == ZP_PART_FAILED) r->failed++;
        d->proof = dup_opt(s->proof_json, &oom);
        d->pub = dup_opt(s->public_json, &oom);
        d->error = dup_opt(s->error, &oom);
        if (s->proof_bin_len && (d->bin = malloc(s->proof_bin_len))) {
            memcpy(d->bin, s->proof_bin, s->proof_bin_len);
            d->bin_len = s->proof_bin_len;
        } else if (s->proof_bin_len) oom = true;
    }
    if (oom) zp_client_result_free(&r);
    return r;
}

int zp_client_await(zp_client_t *c, uint64_t job, int64_t timeout_ms, zp_client_result_t **out)
{
    if (out) *out = NULL;
    if (job == 0) return set_err(c, ZP_CLIENT_USAGE, "job ids start at 1");
    uint64_t start = zp_now_ns();
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : start + (uint64_t)timeout_ms * 1000000u;
    zp_client_result_t *last = NULL;
    int rc;
    for (;;) {
        uint64_t now = zp_now_ns();
        uint64_t left = deadline == UINT64_MAX ? 60000 : deadline > now ? (deadline - now) / 1000000u : 0;
        if (left > 60000) left = 60000;
        if (c->progress && c->progress_ms && left > (uint64_t)c->progress_ms) left = (uint64_t)c->progress_ms;
        if (c->progress && !last) left = 0;   /* the first report at once: "0/N" before any wait */
        zp_msg_await_t m = {.job = job, .timeout_ms = (uint32_t)left};
        uint8_t *buf; size_t len;
        if ((rc = zp_msg_await_encode(&buf, &len, &m)) < 0) { rc = set_err(c, ZP_CLIENT_SYSTEM, "encode AWAIT"); break; }
        /* give up when the broker stays silent for the client timeout, and never past the
         * await's own deadline (plus the grace one reply needs to arrive) */
        uint64_t give_up = deadline_in((int)left + c->timeout_ms);
        if (deadline != UINT64_MAX && give_up > deadline + (uint64_t)ATTEMPT_GRACE_MS * 1000000u)
            give_up = deadline + (uint64_t)ATTEMPT_GRACE_MS * 1000000u;
        zp_frame_t f;
        rc = call(c, buf, len, (int)left + ATTEMPT_GRACE_MS, give_up, &f);
        free(buf);
        if (rc) break;
        zp_msg_result_t res;
        if (zp_msg_result_decode(&res, &f) < 0) { rc = set_err(c, ZP_CLIENT_REFUSED, "bad RESULT: %s", zp_err_msg()); break; }
        zp_client_result_t *r = result_copy(&res);
        zp_msg_result_free(&res);
        if (!r) { rc = set_err(c, ZP_CLIENT_SYSTEM, "out of memory"); break; }
        zp_client_result_free(&last);
        last = r;
        if (c->progress) c->progress(c->progress_ctx, r->done, r->failed, r->n);
        if (r->state != ZP_JOB_RUNNING) {
            rc = r->state == ZP_JOB_DONE && !r->failed ? ZP_CLIENT_OK : r->state == ZP_JOB_CANCELED ? ZP_CLIENT_CANCELED
                                                                                                    : ZP_CLIENT_FAILED;
            if (rc == ZP_CLIENT_FAILED) set_err(c, ZP_CLIENT_FAILED, "job %llu: %u of %u partition(s) failed",
                                                (unsigned long long)job, r->failed, r->n);
            if (rc == ZP_CLIENT_CANCELED) set_err(c, rc, "job %llu was canceled", (unsigned long long)job);
            break;
        }
        if (zp_now_ns() >= deadline) {
            rc = set_err(c, ZP_CLIENT_TIMEOUT, "timed out after %.1f s; job %llu is still running (%u/%u proved)",
                         (double)(zp_now_ns() - start) / 1e9, (unsigned long long)job, r->done, r->n);
            break;
        }
    }
    if (out) *out = last;
    else zp_client_result_free(&last);
    return rc;
}

uint64_t zp_client_result_job(const zp_client_result_t *r) { return r ? r->job : 0; }
const char *zp_client_result_state(const zp_client_result_t *r) { return r ? zp_job_state_name(r->state) : NULL; }
uint32_t zp_client_result_parts(const zp_client_result_t *r) { return r ? r->n : 0; }
uint32_t zp_client_result_done(const zp_client_result_t *r) { return r ? r->done : 0; }
uint32_t zp_client_result_failed(const zp_client_result_t *r) { return r ? r->failed : 0; }
static const part_t *part(const zp_client_result_t *r, uint32_t i) { return r && i < r->n ? &r->p[i] : NULL; }
const char *zp_client_result_part_state(const zp_client_result_t *r, uint32_t i)
{
    return part(r, i) ? zp_part_state_name(part(r, i)->state) : NULL;
}
uint32_t zp_client_result_part_attempts(const zp_client_result_t *r, uint32_t i) { return part(r, i) ? part(r, i)->attempts : 0; }
const char *zp_client_result_proof(const zp_client_result_t *r, uint32_t i) { return part(r, i) ? part(r, i)->proof : NULL; }
const char *zp_client_result_public(const zp_client_result_t *r, uint32_t i) { return part(r, i) ? part(r, i)->pub : NULL; }
const char *zp_client_result_error(const zp_client_result_t *r, uint32_t i) { return part(r, i) ? part(r, i)->error : NULL; }
const uint8_t *zp_client_result_proof_bin(const zp_client_result_t *r, uint32_t i, size_t *len)
{
    const part_t *p = part(r, i);
    if (len) *len = p ? p->bin_len : 0;
    return p && p->bin_len ? p->bin : NULL;
}

/* ---------------------------------------------------------------- cancel, text calls */
int zp_client_cancel(zp_client_t *c, uint64_t job, uint32_t *freed)
{
    if (job == 0) return set_err(c, ZP_CLIENT_USAGE, "job ids start at 1");
    zp_msg_cancel_t m = {.job = job};
    uint8_t *buf = NULL; size_t len = 0;
    zp_frame_t f;
    int rc = zp_msg_cancel_encode(&buf, &len, &m);
    if ((rc = call_owned(c, rc, buf, len, &f))) return rc;
    zp_msg_canceled_t r;
    if (zp_msg_canceled_decode(&r, &f) < 0) return set_err(c, ZP_CLIENT_REFUSED, "bad CANCELED reply: %s", zp_err_msg());
    if (freed) *freed = r.freed;
    return 0;
}

/* one request already encoded (enc_rc, buf), its TEXT reply copied into *text */
static int text_call(zp_client_t *c, int enc_rc, uint8_t *buf, size_t len, char **text)
{
    zp_frame_t f;
    *text = NULL;
    int rc = call_owned(c, enc_rc, buf, len, &f);
    if (rc) return rc;
    zp_msg_text_t t;
    if (zp_msg_text_decode(&t, &f) < 0) return set_err(c, ZP_CLIENT_REFUSED, "bad TEXT reply: %s", zp_err_msg());
    if (!(*text = zp_str_dup(t.text))) return set_err(c, ZP_CLIENT_SYSTEM, "out of memory");
    return 0;
}

int zp_client_status(zp_client_t *c, bool json, char **text)
{
    zp_msg_status_t m = {.json = json};
    uint8_t *buf = NULL; size_t len = 0;
    int rc = zp_msg_status_encode(&buf, &len, &m);
    return text_call(c, rc, buf, len, text);
}

int zp_client_metrics(zp_client_t *c, char **text)
{
    zp_msg_metrics_t m = {.format = 0};
    uint8_t *buf = NULL; size_t len = 0;
    int rc = zp_msg_metrics_encode(&buf, &len, &m);
    return text_call(c, rc, buf, len, text);
}

int zp_client_trace(zp_client_t *c, uint32_t max_parts, char **text)
{
    zp_msg_trace_t m = {.max_parts = max_parts};
    uint8_t *buf = NULL; size_t len = 0;
    int rc = zp_msg_trace_encode(&buf, &len, &m);
    return text_call(c, rc, buf, len, text);
}
