/* stage_peer.c - ipc test driver: a fake broker (a ZeroMQ ROUTER speaking the real protocol)
 * for one real stage process, to drive the stage runtime (stage/) where a real broker cannot
 * be made to misbehave on purpose. It binds ipc://RUNDIR/broker.sock, waits for the stage's
 * HELLO, then runs one scenario and exits 0 when the stage behaved, 1 (with the reason) if not.
 *   stalled N ZKEY   the broker stops reading (RCVHWM 1, tiny buffers) while it sends N synth
 *                    ASSIGNs whose arena does not exist (each ends in a quick TRANSIENT FAIL);
 *                    then it reads again: every one of the N FAILs must arrive, exactly once
 *                    (issue 8 defect 5: results are never dropped at the high-water mark).
 *   lease MS ZKEY    one synth ASSIGN with a lease deadline MS ms from now (the caller holds
 *                    the work thread with ZP_TEST_HOLD_DIR), then serve heartbeats until the
 *                    stage goes silent (the caller checks its exit status).
 *   lease-ok MS ZKEY the same without a hold: the task must be reported (a TRANSIENT FAIL: no
 *                    arena) within its lease, and the stage keeps running.
 *   device ARENA ZKEY  creates arena ARENA (deployment name), sends two GPU ASSIGNs: the first
 *                    must FAIL with class DEVICE and stopping set (the caller injects the device
 *                    error), the second must not run (unstarted, or unanswered as the worker exits).
 * Timeouts are safety nets only. Usage: ipc_stage_peer RUNDIR MODE ARGS... */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "lib/fmt/fmt.h"
#include "lib/util/util.h"
#include "proto/proto.h"
#include "shm/shm.h"

static void *sock;
static uint8_t rid[256];
static size_t rid_len;

static int send_to(const uint8_t *b, size_t n)
{
    if (zmq_send(sock, rid, rid_len, ZMQ_SNDMORE) < 0 || zmq_send(sock, b, n, 0) < 0) {
        fprintf(stderr, "stage_peer: send: %s\n", zmq_strerror(errno));
        return -1;
    }
    return 0;
}

/* one frame from the stage within ms: 1, 0 on timeout, -1 on error. buf holds the bytes. */
static int recv_frame(zp_frame_t *f, uint8_t *buf, size_t cap, int ms)
{
    zmq_pollitem_t it = {sock, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&it, 1, ms);
    if (rc <= 0) return rc < 0 && errno != EINTR ? -1 : 0;
    uint8_t id[256];
    int il = zmq_recv(sock, id, sizeof id, 0);
    int n = zmq_recv(sock, buf, cap, 0);
    if (il < 0 || n < 0 || (size_t)n > cap) { fprintf(stderr, "stage_peer: bad message\n"); return -1; }
    memcpy(rid, id, (size_t)il);
    rid_len = (size_t)il;
    if (zp_frame_decode_cmds(f, buf, (size_t)n, cap, ZP_CMDS_FROM_WORKER) < 0) {
        fprintf(stderr, "stage_peer: malformed frame from the stage: %s\n", zp_err_msg());
        return -1;
    }
    return 1;
}

static int send_assign(uint32_t slot, uint32_t stage, const char *zkey, const char *wtns, uint64_t epoch,
                       uint64_t lease)
{
    zp_msg_assign_t a = {.slot = slot, .gen = 1, .in_gen = stage ? 1 : 0, .payload_gen = stage ? 1 : 0,
                         .stage = stage, .job = 1, .part = slot % ZP_MSG_MAX_PARTS, .attempt = 1,
                         .priority = ZP_PRIO_NORMAL, .zkey = zp_str(zkey), .r1cs = zp_str(""), .wtns = zp_str(wtns),
                         .epoch = epoch, .lease_deadline = lease};
    uint8_t *b; size_t n;
    if (zp_msg_assign_encode(&b, &n, &a) < 0) return -1;
    int rc = send_to(b, n);
    free(b);
    return rc;
}

static uint8_t fbuf[1 << 20];

static int wait_hello(unsigned *role)
{
    zp_frame_t f;
    for (int i = 0; i < 600; i++) {
        int rc = recv_frame(&f, fbuf, sizeof fbuf, 100);
        if (rc < 0) return -1;
        if (rc == 0 || f.cmd != ZP_CMD_HELLO) continue;
        zp_msg_hello_t h;
        if (zp_msg_hello_decode(&h, &f) < 0) { fprintf(stderr, "stage_peer: bad HELLO: %s\n", zp_err_msg()); return -1; }
        *role = h.role;
        fprintf(stderr, "stage_peer: HELLO from %s #%u pid %u\n", zp_role_name(h.role), h.instance, h.pid);
        return 0;
    }
    fprintf(stderr, "stage_peer: no HELLO within 60 s\n");
    return -1;
}

static int stalled(unsigned n, const char *zkey)
{
    char w[64];
    for (unsigned i = 0; i < n; i++) {
        snprintf(w, sizeof w, "/nonexistent/zp-stalled-%u.wtns", i);
        if (send_assign(i, ZP_ROLE_SYNTH, zkey, w, 0x5eed, 0) < 0) return 1;
    }
    fprintf(stderr, "stage_peer: %u ASSIGNs sent while not reading; stalled for 3 s\n", n);
    sleep(3);
    uint8_t *seen = calloc(n, 1);
    unsigned got = 0, dup = 0, other = 0;
    zp_frame_t f;
    uint64_t last_fail = zp_now_ns();
    while (got < n && zp_now_ns() - last_fail < 60000000000ull) {   /* safety: 60 s without a FAIL */
        int rc = recv_frame(&f, fbuf, sizeof fbuf, 100);
        if (rc < 0) return 1;
        if (rc == 0 || f.cmd != ZP_CMD_FAIL) continue;
        last_fail = zp_now_ns();
        zp_msg_fail_t m;
        if (zp_msg_fail_decode(&m, &f) < 0 || m.slot >= n) { other++; continue; }
        if (m.fail_class != ZP_FAIL_TRANSIENT) other++;
        if (seen[m.slot]++) dup++; else got++;
    }
    free(seen);
    fprintf(stderr, "stage_peer: %u of %u FAILs arrived, %u duplicated, %u unexpected\n", got, n, dup, other);
    return got == n && dup == 0 && other == 0 ? 0 : 1;
}

static int lease(unsigned ms, const char *zkey, bool hung)
{
    if (send_assign(0, ZP_ROLE_SYNTH, zkey, "/nonexistent/zp-lease.wtns", 0x5eed,
                    zp_now_ns() + (uint64_t)ms * 1000000u) < 0) return 1;
    zp_frame_t f;
    unsigned frames = 0;
    for (int idle = 0; idle < 50;) {   /* until the stage is silent for 5 s (safety: 10 min) */
        int rc = recv_frame(&f, fbuf, sizeof fbuf, 100);
        if (rc < 0) return 1;
        if (rc == 0) { idle++; continue; }
        idle = 0;
        if (f.cmd == ZP_CMD_DONE || f.cmd == ZP_CMD_FAIL) {
            if (!hung && f.cmd == ZP_CMD_FAIL) {   /* in time: the task ran and was reported */
                zp_msg_fail_t m;
                if (zp_msg_fail_decode(&m, &f) < 0 || m.unstarted || m.fail_class != ZP_FAIL_TRANSIENT) return 1;
                fprintf(stderr, "stage_peer: reported within its lease: %.*s\n", (int)m.message.len, m.message.p);
                return 0;
            }
            fprintf(stderr, "stage_peer: the hung task was reported (command %u): expected the stage to exit\n", f.cmd);
            return 1;
        }
        if (++frames > 6000) { fprintf(stderr, "stage_peer: the stage kept talking past its lease\n"); return 1; }
    }
    fprintf(stderr, "stage_peer: the stage went silent\n");
    return hung ? 0 : 1;
}

/* the arena first, as the broker does (it creates it before binding): the GPU worker waits
 * for it and registers it before its HELLO */
static int device_arena_named(const char *name, zp_shm_t **a)
{
    zp_shm_cfg_t cfg = {.name = name, .n_slots = 2, .slot_bytes = 1u << 20};
    if (zp_shm_create(a, &cfg) < 0) { fprintf(stderr, "stage_peer: arena: %s\n", zp_err_msg()); return 1; }
    return 0;
}

static int device_arena(const char *deploy, char name[ZP_SHM_NAME_MAX + 1], zp_shm_t **a)
{
    if (zp_shm_default_name(name, ZP_SHM_NAME_MAX + 1, deploy) < 0) return 1;
    return device_arena_named(name, a);
}

/* slot idx PROVING as the broker hands it to a GPU worker: laid out for the zkey, a sealed
 * payload (zeros: the compute never starts in these scenarios), READY -> PROVING; the ASSIGN
 * then carries the PROVING generation and the seal's */
static int proving_slot(zp_shm_t *a, uint32_t idx, const char *zkey, uint64_t *gen, uint64_t *pg)
{
    zp_zkey_t z;
    uint64_t g;
    if (zp_zkey_open(&z, zkey) < 0) { fprintf(stderr, "stage_peer: %s\n", zp_err_msg()); return -1; }
    uint32_t nv = z.n_vars, dom = z.domain_size;
    zp_zkey_close(&z);
    uint32_t mask = ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_B) |
                    ZP_SHM_VEC_MASK(ZP_SHM_VEC_C);
    if (zp_shm_slot_claim_at(a, idx, &g) < 0 || zp_shm_slot_layout(a, idx, ZP_SLOT_SYNTH, g, nv, dom, 32) < 0 ||
        zp_shm_payload_seal(a, idx, ZP_SLOT_SYNTH, g, mask, ZP_SLOT_READY, pg) < 0 ||
        zp_shm_slot_transition(a, idx, ZP_SLOT_READY, *pg, ZP_SLOT_PROVING, gen) < 0) {
        fprintf(stderr, "stage_peer: slot %u: %s\n", idx, zp_err_msg());
        return -1;
    }
    return 0;
}

static int send_assign_at(uint32_t slot, const char *zkey, uint64_t epoch, uint64_t gen, uint64_t pg)
{
    zp_msg_assign_t a = {.slot = slot, .gen = gen, .in_gen = pg, .payload_gen = pg, .stage = ZP_ROLE_GPU, .job = 1,
                         .part = slot, .attempt = 1, .priority = ZP_PRIO_NORMAL, .zkey = zp_str(zkey),
                         .r1cs = zp_str(""), .wtns = zp_str(""), .epoch = epoch};
    uint8_t *b; size_t n;
    if (zp_msg_assign_encode(&b, &n, &a) < 0) return -1;
    int rc = send_to(b, n);
    free(b);
    return rc;
}

static int device(zp_shm_t *a, const char *zkey)
{
    int ok = 1;
    uint64_t g[2], pg[2];
    /* real PROVING slots with sealed payloads: the staging thread's checks pass and the task
     * reaches the backend (load_key), where the injected device error fires */
    for (uint32_t i = 0; i < 2; i++)
        if (proving_slot(a, i, zkey, &g[i], &pg[i]) < 0) goto out;
    if (send_assign_at(0, zkey, zp_shm_epoch(a), g[0], pg[0]) < 0 ||
        send_assign_at(1, zkey, zp_shm_epoch(a), g[1], pg[1]) < 0) goto out;
    zp_frame_t f;
    bool first = false, second = false;
    /* until the first FAIL (safety: 60 s), then until the worker is silent for 3 s (it exits) */
    for (int idle = 0; !(first && second) && idle < (first ? 30 : 600);) {
        int rc = recv_frame(&f, fbuf, sizeof fbuf, 100);
        if (rc < 0) goto out;
        if (rc == 0) { idle++; continue; }
        idle = 0;
        if (f.cmd == ZP_CMD_DONE) { fprintf(stderr, "stage_peer: DONE despite the device error\n"); goto out; }
        if (f.cmd != ZP_CMD_FAIL) continue;
        zp_msg_fail_t m;
        if (zp_msg_fail_decode(&m, &f) < 0) goto out;
        fprintf(stderr, "stage_peer: FAIL slot %u class %s unstarted %d stopping %d: %.*s\n", m.slot,
                zp_fail_class_name(m.fail_class), m.unstarted, m.stopping, (int)m.message.len, m.message.p);
        if (m.slot == 0) {
            if (m.fail_class != ZP_FAIL_DEVICE || !m.stopping || !m.retryable || m.code != ZP_EDEVICE) {
                fprintf(stderr, "stage_peer: expected a DEVICE-class, retryable, stopping FAIL with ZP_EDEVICE\n");
                goto out;
            }
            first = true;
        } else {
            if (!m.unstarted || m.fail_class == ZP_FAIL_DEVICE) {
                fprintf(stderr, "stage_peer: the second task ran (or failed as a device error) after the device failed\n");
                goto out;
            }
            second = true;
        }
    }
    /* the second task is never run: handed back unstarted, or (sent after the worker's last
     * read) left to the broker's death handling when the worker exits */
    ok = first ? 0 : 1;
    if (ok) fprintf(stderr, "stage_peer: no FAIL for the first task\n");
    else fprintf(stderr, "stage_peer: second task %s\n", second ? "handed back unstarted" : "not answered (worker gone)");
out:
    return ok;
}

/* a new broker epoch: the arena is replaced (same name, new epoch) after the HELLO, then one
 * ASSIGN of the new epoch; the worker must open (register) it on its loop thread and report
 * the task (TRANSIENT: the fake slot holds no synthesized payload) */
static int epoch(zp_shm_t **a, const char *name, const char *zkey)
{
    uint64_t old = zp_shm_epoch(*a);
    zp_shm_close(a);
    zp_shm_unlink(name, NULL);
    if (device_arena_named(name, a)) return 1;
    fprintf(stderr, "stage_peer: arena replaced: epoch %016llx -> %016llx\n", (unsigned long long)old,
            (unsigned long long)zp_shm_epoch(*a));
    if (send_assign(0, ZP_ROLE_GPU, zkey, "", zp_shm_epoch(*a), 0) < 0) return 1;
    zp_frame_t f;
    for (int idle = 0; idle < 600;) {   /* safety: 60 s */
        int rc = recv_frame(&f, fbuf, sizeof fbuf, 100);
        if (rc < 0) return 1;
        if (rc == 0) { idle++; continue; }
        if (f.cmd == ZP_CMD_DONE) { fprintf(stderr, "stage_peer: DONE without a payload\n"); return 1; }
        if (f.cmd != ZP_CMD_FAIL) continue;
        zp_msg_fail_t m;
        if (zp_msg_fail_decode(&m, &f) < 0) return 1;
        fprintf(stderr, "stage_peer: FAIL class %s: %.*s\n", zp_fail_class_name(m.fail_class), (int)m.message.len, m.message.p);
        return m.fail_class == ZP_FAIL_TRANSIENT && !m.unstarted ? 0 : 1;
    }
    fprintf(stderr, "stage_peer: no answer for the new epoch's task\n");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) { fprintf(stderr, "usage: ipc_stage_peer RUNDIR stalled N ZKEY | lease[-ok] MS ZKEY | device|epoch ARENA ZKEY\n"); return 2; }
    char ep[700];
    snprintf(ep, sizeof ep, "ipc://%s/broker.sock", argv[1]);
    void *ctx = zmq_ctx_new();
    sock = zmq_socket(ctx, ZMQ_ROUTER);
    int one = 1, linger = 2000, small = 4096;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one);   /* block at the mark, never drop our ASSIGNs */
    if (!strcmp(argv[2], "stalled")) {
        zmq_setsockopt(sock, ZMQ_RCVHWM, &one, sizeof one);
        zmq_setsockopt(sock, ZMQ_RCVBUF, &small, sizeof small);
    }
    if (zmq_bind(sock, ep) < 0) { fprintf(stderr, "stage_peer: bind %s: %s\n", ep, zmq_strerror(errno)); return 1; }
    unsigned role;
    int rc = 1;
    char aname[ZP_SHM_NAME_MAX + 1];
    zp_shm_t *arena = NULL;
    if ((!strcmp(argv[2], "device") || !strcmp(argv[2], "epoch")) && argc == 5 && device_arena(argv[3], aname, &arena))
        return 1;
    if (wait_hello(&role) == 0) {
        if (!strcmp(argv[2], "stalled") && argc == 5) rc = stalled((unsigned)atoi(argv[3]), argv[4]);
        else if (!strcmp(argv[2], "lease") && argc == 5) rc = lease((unsigned)atoi(argv[3]), argv[4], true);
        else if (!strcmp(argv[2], "lease-ok") && argc == 5) rc = lease((unsigned)atoi(argv[3]), argv[4], false);
        else if (!strcmp(argv[2], "device") && argc == 5) rc = device(arena, argv[4]);
        else if (!strcmp(argv[2], "epoch") && argc == 5) rc = epoch(&arena, aname, argv[4]);
        else { fprintf(stderr, "stage_peer: bad arguments\n"); rc = 2; }
    }
    if (arena) {
        zp_shm_close(&arena);
        zp_shm_unlink(aname, NULL);
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return rc;
}
