/* frames.c - ipc test driver: send malformed and oversized frames to a running broker
 * (ipc://$ZP_RUNTIME_DIR/broker.sock) and check it answers ERROR where it can, and still
 * serves STATUS afterwards. Prints the number of bad frames it sent ("sent N malformed M
 * oversized") so the calling script can compare with the broker's counters.
 * Usage: ipc_frames   (exit 0 ok, 1 failure). Run by tests/ipc/client.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "lib/util/util.h"
#include "proto/peer.h"

static int expect_error(zp_peer_t *p, const char *what)
{
    zp_frame_t f;
    for (int i = 0; i < 200; i++) {
        int rc = zp_peer_recv(p, &f, 50, ZP_CMDS_TO_CLIENT);
        if (rc == -EAGAIN) continue;
        if (rc < 0) { fprintf(stderr, "%s: bad reply: %s\n", what, zp_err_msg()); return -1; }
        if (f.cmd != ZP_CMD_ERROR) { fprintf(stderr, "%s: expected ERROR, got command %u\n", what, f.cmd); return -1; }
        zp_msg_error_t e;
        if (zp_msg_error_decode(&e, &f) < 0) return -1;
        fprintf(stderr, "  %s -> ERROR %d: %.*s\n", what, e.code, (int)e.message.len, e.message.p);
        return 0;
    }
    fprintf(stderr, "%s: no ERROR reply within 10 s\n", what);
    return -1;
}

static int send_raw(zp_peer_t *p, const void *d, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    if (!b) return -1;
    memcpy(b, d, n);
    return zp_peer_send(p, b, n);
}

int main(void)
{
    char rundir[512], ep[600];
    zp_peer_t p;
    int malformed = 0, oversized = 0;
    if (zp_runtime_dir(rundir, sizeof rundir, NULL, false) < 0 || zp_broker_endpoint(ep, sizeof ep, rundir) < 0 ||
        zp_peer_open(&p, ep, 0) < 0) {
        fprintf(stderr, "ipc_frames: %s\n", zp_err_msg());
        return 1;
    }
    /* 1. garbage bytes */
    static const uint8_t junk[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};
    if (send_raw(&p, junk, sizeof junk) < 0 || expect_error(&p, "junk bytes") < 0) return 1;
    malformed++;
    /* 2. right tag, truncated msgpack map */
    static const uint8_t trunc[] = {'Z', 'K', 'P', 1, ZP_CMD_STATUS, 0x82, 0x00, 0x01, 0x01};
    if (send_raw(&p, trunc, sizeof trunc) < 0 || expect_error(&p, "truncated map") < 0) return 1;
    malformed++;
    /* 3. a well-formed frame whose fields have the wrong types (SUBMIT with an int zkey) */
    zp_enc_t e;
    zp_enc_init(&e, ZP_CMD_SUBMIT, ZP_PROTO_VERSION, 0);
    zp_enc_str(&e, 1, "rid");
    zp_enc_u64(&e, 2, 42);
    zp_enc_u64(&e, 4, 2);
    const uint8_t *fb; size_t fl;
    if (zp_enc_finish(&e, &fb, &fl) < 0 || send_raw(&p, fb, fl) < 0 || expect_error(&p, "wrong field type") < 0) return 1;
    zp_enc_close(&e);
    malformed++;
    /* 4. trailing bytes after the map */
    zp_msg_status_t st = {.json = true};
    uint8_t *sb; size_t sl;
    if (zp_msg_status_encode(&sb, &sl, &st) < 0) return 1;
    uint8_t *tb = malloc(sl + 3);
    memcpy(tb, sb, sl);
    memset(tb + sl, 0xc0, 3);
    free(sb);
    if (zp_peer_send(&p, tb, sl + 3) < 0 || expect_error(&p, "trailing bytes") < 0) return 1;
    malformed++;
    /* 5. an unknown command byte */
    static const uint8_t cmd[] = {'Z', 'K', 'P', 1, 99, 0x81, 0x00, 0x01};
    if (send_raw(&p, cmd, sizeof cmd) < 0 || expect_error(&p, "unknown command") < 0) return 1;
    malformed++;
    /* 6. oversized: 2 MiB of a valid-looking TEXT frame (above the broker's 1 MiB default) */
    size_t big = 2u << 20;
    uint8_t *bb = calloc(1, big);
    memcpy(bb, "ZKP\x01\x15", 5);
    if (zp_peer_send(&p, bb, big) < 0 || expect_error(&p, "oversized frame") < 0) return 1;
    oversized++;
    /* the broker still serves */
    if (zp_msg_status_encode(&sb, &sl, &st) < 0) return 1;
    zp_frame_t f;
    int rc;
    rc = zp_peer_call(&p, sb, sl, &f, 10000);
    if (rc < 0 || f.cmd != ZP_CMD_TEXT) { fprintf(stderr, "STATUS after bad frames failed: %s\n", zp_err_msg()); return 1; }
    zp_peer_close(&p);
    printf("sent %d malformed %d oversized\n", malformed, oversized);
    return 0;
}
