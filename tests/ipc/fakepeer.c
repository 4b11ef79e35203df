/* fakepeer.c - a hostile or confused local peer speaking the real protocol to a running broker
 * (ipc://$ZP_RUNTIME_DIR/broker.sock), for the identity, kill and frame tests (issue 9).
 *   fakepeer hello ROLE INSTANCE PID|self [SECONDS [beat]]  HELLO as (ROLE, INSTANCE) naming PID
 *            (no token: a supervised broker must refuse it). Accepted (a frame other than ERROR
 *            arrives): prints "accepted", then stays connected SECONDS (default 0), silent, or
 *            sending HEARTBEATs every 50 ms with "beat"; exit 0. Refused: prints
 *            "refused: <message>", exit 3.
 *   fakepeer submit-relative    a raw SUBMIT whose second witness path is relative: prints the
 *            broker's ERROR, exit 0 if it names "key 5.1 (witness 1)", else 1.
 *   fakepeer oversize BYTES     one frame of BYTES: prints the ERROR, exit 0 if the broker said
 *            the frame is too large, else 1.
 * Exit 1 on any unexpected reply; 2 on usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "proto/peer.h"

static int reply(zp_peer_t *p, zp_frame_t *f, int ms, uint64_t mask)
{
    for (int waited = 0; waited < ms; waited += 50) {
        int rc = zp_peer_recv(p, f, 50, mask);
        if (rc == -EAGAIN || rc == -EINTR) continue;
        return rc;
    }
    return -ETIMEDOUT;
}

static int error_text(const zp_frame_t *f, char *out, size_t n)
{
    zp_msg_error_t e;
    if (f->cmd != ZP_CMD_ERROR || zp_msg_error_decode(&e, f) < 0) return -1;
    snprintf(out, n, "%.*s", (int)e.message.len, e.message.p);
    return 0;
}

static int cmd_hello(zp_peer_t *p, int argc, char **argv)
{
    if (argc < 5) return 2;
    int role = -1;
    for (int r = 0; r < ZP_NROLES; r++)
        if (!strcmp(argv[2], zp_role_name((unsigned)r))) role = r;
    if (role < 0) return 2;
    zp_msg_hello_t m = {.role = (uint32_t)role, .instance = (uint32_t)atoi(argv[3]),
                        .incarnation = zp_incarnation_new(),
                        .pid = !strcmp(argv[4], "self") ? (uint32_t)getpid() : (uint32_t)strtoul(argv[4], NULL, 10),
                        .credits = 1, .name = zp_str("fakepeer")};
    uint8_t *b; size_t n;
    if (zp_msg_hello_encode(&b, &n, &m) < 0 || zp_peer_send(p, b, n) < 0) return 1;
    zp_frame_t f;
    int rc = reply(p, &f, 10000, ZP_CMDS_TO_WORKER | (1ull << ZP_CMD_ERROR));
    if (rc < 0) { fprintf(stderr, "fakepeer: no reply to HELLO: %s\n", zp_strerror(rc)); return 1; }
    char msg[600];
    if (error_text(&f, msg, sizeof msg) == 0) { printf("refused: %s\n", msg); return 3; }
    printf("accepted\n");
    fflush(stdout);
    uint64_t until = zp_now_ns() + (argc > 5 ? (uint64_t)atoi(argv[5]) * 1000000000ull : 0);
    bool beat = argc > 6 && !strcmp(argv[6], "beat");
    while (zp_now_ns() < until) {
        if (beat) {
            zp_msg_heartbeat_t hb = {.incarnation = m.incarnation};
            if (zp_msg_heartbeat_encode(&b, &n, &hb) == 0) zp_peer_send(p, b, n);
        }
        reply(p, &f, 50, ZP_CMDS_TO_WORKER | (1ull << ZP_CMD_ERROR));   /* drain; a wait of 50 ms */
    }
    return 0;
}

static int cmd_submit_relative(zp_peer_t *p)
{
    zp_msg_submit_t *m = calloc(1, sizeof *m);
    if (!m) return 1;
    m->request_id = zp_str("fakepeer-relative");
    m->zkey = zp_str("/nonexistent/circuit.zkey");
    m->n_wtns = 2;
    m->wtns[0] = zp_str("/nonexistent/w0.wtns");
    m->wtns[1] = zp_str("witness-1.wtns");
    uint8_t *b; size_t n;
    int rc = zp_msg_submit_encode(&b, &n, m);
    free(m);
    if (rc < 0 || zp_peer_send(p, b, n) < 0) return 1;
    zp_frame_t f;
    char msg[600];
    if (reply(p, &f, 10000, ZP_CMDS_TO_CLIENT) < 0 || error_text(&f, msg, sizeof msg) < 0) {
        fprintf(stderr, "fakepeer: a relative SUBMIT was not answered with ERROR\n");
        return 1;
    }
    printf("%s\n", msg);
    return strstr(msg, "key 5.1 (witness 1)") && strstr(msg, "relative") ? 0 : 1;
}

static int cmd_oversize(zp_peer_t *p, const char *bytes)
{
    size_t n = strtoull(bytes, NULL, 10);
    uint8_t *b = calloc(1, n);
    if (n < 6 || !b) return 2;
    memcpy(b, "ZKP\x01\x15", 5);   /* a STATUS tag: only the size is wrong */
    if (zp_peer_send(p, b, n) < 0) return 1;
    zp_frame_t f;
    char msg[600];
    if (reply(p, &f, 20000, ZP_CMDS_TO_CLIENT) < 0 || error_text(&f, msg, sizeof msg) < 0) {
        fprintf(stderr, "fakepeer: a %zu-byte frame was not answered\n", n);
        return 1;
    }
    printf("%s\n", msg);
    return strstr(msg, "too large") ? 0 : 1;
}

int main(int argc, char **argv)
{
    char rundir[512], ep[600];
    zp_peer_t p;
    if (argc < 2) return 2;
    if (zp_runtime_dir(rundir, sizeof rundir, NULL, false) < 0 || zp_broker_endpoint(ep, sizeof ep, rundir) < 0 ||
        zp_peer_open(&p, ep, 0) < 0) {
        fprintf(stderr, "fakepeer: %s\n", zp_err_msg());
        return 1;
    }
    int rc = 2;
    if (!strcmp(argv[1], "hello")) rc = cmd_hello(&p, argc, argv);
    else if (!strcmp(argv[1], "submit-relative")) rc = cmd_submit_relative(&p);
    else if (!strcmp(argv[1], "oversize") && argc > 2) rc = cmd_oversize(&p, argv[2]);
    if (rc == 2) fprintf(stderr, "usage: fakepeer hello ROLE INSTANCE PID [SILENT_S] | submit-relative | oversize BYTES\n");
    zp_peer_close(&p);
    return rc;
}
