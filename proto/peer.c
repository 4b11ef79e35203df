/* peer.c - DEALER-side plumbing: runtime dir, endpoint, request/reply. The stage-worker
 * runtime that synth, gpu-worker and finalizer share lives in stage/ (stage/stage.c).
 * Tests: tests/ipc/. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "lib/util/util.h"
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

void zp_zmq_ctx_rt(void *ctx)
{
    if (!ctx || !zp_rt_active() || zp_rt_priority() <= 0) return;
    zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO);
    zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, zp_rt_priority());
}

void zp_zmq_threads_adopt(bool *done)
{
    if (*done) return;
    *done = true;
    (void)zp_rt_adopt_threads("ZMQbg");   /* libzmq's thread names: ZMQbg/IO/N, ZMQbg/Reaper */
}

int zp_peer_open(zp_peer_t *p, const char *endpoint, size_t max_frame)
{
    memset(p, 0, sizeof *p);
    p->max_frame = max_frame ? max_frame : ZP_FRAME_MAX_LIMIT;
    p->ctx = zmq_ctx_new();
    if (!p->ctx) return zp_err_set(-errno, "zmq_ctx_new: %s", zmq_strerror(errno));
    zp_zmq_ctx_rt(p->ctx);   /* libzmq's I/O thread carries a real-time caller's frames */
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
    zp_zmq_threads_adopt(&p->threads_adopted);
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
