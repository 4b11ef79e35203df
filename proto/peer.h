/* peer.h - the DEALER side of the control plane: runtime directory, broker endpoint and a
 * request/reply client (the zkpipe command, test drivers). The stage-worker runtime (HELLO,
 * heartbeats, credits, the work thread, DONE/FAIL, leases, signals) is stage/stage.h.
 * Tests: tests/ipc/. */
#ifndef ZP_PEER_H
#define ZP_PEER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/proto.h"

/* Runtime directory: override, else $ZP_RUNTIME_DIR, else $XDG_RUNTIME_DIR/zkpipe, else
 * /tmp/zkpipe-<uid>. create: mkdir 0700 if missing; an existing directory must be owned by us
 * and not group/other writable (else -EPERM with a message). */
int zp_runtime_dir(char *buf, size_t n, const char *override, bool create);
/* "ipc://<rundir>/broker.sock" */
int zp_broker_endpoint(char *buf, size_t n, const char *rundir);

typedef struct zp_peer {
    void *ctx, *sock;
    size_t max_frame;
    void *rx;              /* zmq_msg_t of the last received frame (frames point into it) */
    bool threads_adopted;  /* libzmq's threads given the caller's short slice (zp_rt_adopt_threads) */
} zp_peer_t;

/* DEALER connected to endpoint; max_frame bounds what we accept (0 = ZP_FRAME_MAX_LIMIT) */
int zp_peer_open(zp_peer_t *p, const char *endpoint, size_t max_frame);
/* a new libzmq context's I/O and reaper threads at the calling thread's SCHED_FIFO policy when
 * it runs one (lib/util/rt.c zp_rt_active, zp_rt_priority; set before the first socket). Only
 * then: libzmq aborts when it cannot apply the policy. zp_peer_open calls it; the broker for its
 * own. The short-slice tier has no libzmq option: the threads are adopted by name once they have
 * carried a message (zp_peer_recv's first frame; the broker's first). */
void zp_zmq_ctx_rt(void *ctx);
/* once per context (*done), after its first received message (the I/O thread has run and named
 * itself): libzmq's threads get the calling thread's short slice (zp_rt_adopt_threads) */
void zp_zmq_threads_adopt(bool *done);
void zp_peer_close(zp_peer_t *p);
/* send and free buf (always freed) */
int zp_peer_send(zp_peer_t *p, uint8_t *buf, size_t len);
/* receive one frame within timeout_ms (-1 = forever): 0, -EAGAIN on timeout, -EINTR,
 * ZP_EPROTO/ZP_ETOOBIG on a malformed frame. The frame stays valid until the next recv/close. */
int zp_peer_recv(zp_peer_t *p, zp_frame_t *f, int timeout_ms, uint64_t cmd_mask);
/* send a request, wait for one reply; ZP_ETIMEDOUT (broker not answering) with a message.
 * An ERROR reply is decoded and returned as its code with the message in zp_err_msg(). */
int zp_peer_call(zp_peer_t *p, uint8_t *req, size_t len, zp_frame_t *rep, int timeout_ms);

/* Random non-zero incarnation for this process start. */
uint64_t zp_incarnation_new(void);
#endif
