/* fuzz_frames.c - the frame decoder (proto/codec.c) and every message decoder (proto/messages.c).
 * For an input that zp_frame_decode accepts, the decoder of its command runs; when that accepts
 * too, the struct is encoded again (y) and y must decode and re-encode to exactly y: for every
 * frame our encoders can produce, decode then encode gives the same bytes. (An arbitrary input
 * need not be byte-identical to y: msgpack has several encodings of one integer, and optional
 * keys may be absent or nil.) The typed getters are also run over every key of accepted maps.
 * Seeds: corpus/frames (one encoded frame per message type, made by gen_seeds). */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tests/fuzz/fuzz.h"

/* decode f by its command and encode the result; 1 when the decoder accepted, 0 refused */
static int roundtrip(const zp_frame_t *f, uint8_t **out, size_t *outn)
{
    static zp_msg_submit_t sub;   /* big: static */
    union {
        zp_msg_hello_t hello; zp_msg_heartbeat_t hb; zp_msg_done_t done; zp_msg_fail_t fail; zp_msg_assign_t asg;
        zp_msg_ack_t ack; zp_msg_revoke_t rev; zp_msg_reset_t rst; zp_msg_status_t st; zp_msg_await_t aw;
        zp_msg_cancel_t can; zp_msg_trace_t tr; zp_msg_metrics_t mx; zp_msg_submitted_t sd; zp_msg_text_t tx;
        zp_msg_result_t res; zp_msg_canceled_t cd; zp_msg_error_t er;
    } u;
    int rc;
#define RT(CMD, name, field) case CMD: \
        if (zp_msg_##name##_decode(&u.field, f) < 0) return 0; \
        rc = zp_msg_##name##_encode(out, outn, &u.field); break
    switch (f->cmd) {
    RT(ZP_CMD_HELLO, hello, hello);
    RT(ZP_CMD_HEARTBEAT, heartbeat, hb);
    RT(ZP_CMD_DONE, done, done);
    RT(ZP_CMD_FAIL, fail, fail);
    RT(ZP_CMD_ASSIGN, assign, asg);
    RT(ZP_CMD_ACK, ack, ack);
    RT(ZP_CMD_REVOKE, revoke, rev);
    RT(ZP_CMD_RESET, reset, rst);
    RT(ZP_CMD_STATUS, status, st);
    RT(ZP_CMD_AWAIT, await, aw);
    RT(ZP_CMD_CANCEL, cancel, can);
    RT(ZP_CMD_TRACE, trace, tr);
    RT(ZP_CMD_METRICS, metrics, mx);
    RT(ZP_CMD_SUBMITTED, submitted, sd);
    RT(ZP_CMD_TEXT, text, tx);
    RT(ZP_CMD_CANCELED, canceled, cd);
    RT(ZP_CMD_ERROR, error, er);
    case ZP_CMD_SUBMIT:
        if (zp_msg_submit_decode(&sub, f) < 0) return 0;
        rc = zp_msg_submit_encode(out, outn, &sub);
        break;
    case ZP_CMD_RESULT:
        if (zp_msg_result_decode(&u.res, f) < 0) return 0;
        rc = zp_msg_result_encode(out, outn, &u.res);
        zp_msg_result_free(&u.res);
        break;
    default:
        return 0;
    }
#undef RT
    FUZZ_ASSERT(rc == 0, "command %u: decoded but does not encode again (%d)", f->cmd, rc);
    return 1;
}

/* every getter on every key must fail cleanly or succeed: no reads outside the frame */
static void getters(const zp_map_t *m, int depth)
{
    for (unsigned k = 0; k <= ZP_KEY_MAX; k++) {
        uint64_t u; int64_t i; bool b; const char *s; const uint8_t *p; size_t n;
        char z[64]; uint64_t arr[8]; zp_strref_t sa[8]; zp_map_t sub; zp_arr_t a;
        if (!zp_map_has(m, k)) continue;
        zp_map_get_u64(m, k, 0, UINT64_MAX, &u);
        zp_map_get_i64(m, k, INT64_MIN, INT64_MAX, &i);
        zp_map_get_bool(m, k, &b);
        zp_map_get_str(m, k, 1u << 24, &s, &n);
        zp_map_get_strz(m, k, z, sizeof z);
        zp_map_get_bin(m, k, 1u << 24, &p, &n);
        zp_map_get_u64_array(m, k, 8, 0, UINT64_MAX, arr, &n);
        zp_map_get_str_array(m, k, 8, 1u << 24, sa, &n);
        if (depth < 3 && zp_map_get_map(m, k, &sub) == 0) getters(&sub, depth + 1);
        if (zp_map_get_array(m, k, 1u << 20, &a) == 0)
            for (uint32_t j = 0; j < a.n && j < 64; j++) {
                zp_arr_t c = a;   /* each element type tried from the same position */
                if (zp_arr_next_u64(&c, 0, UINT64_MAX, &u) == 0) { a = c; continue; }
                c = a;
                if (zp_arr_next_str(&c, 1u << 24, &s, &n) == 0) { a = c; continue; }
                c = a;
                if (depth < 3 && zp_arr_next_map(&c, &sub) == 0) { getters(&sub, depth + 1); a = c; continue; }
                break;
            }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zp_frame_t f, g;
    if (zp_frame_decode(&f, data, size, ZP_FRAME_MAX_LIMIT) < 0) return 0;
    FUZZ_ASSERT(f.len == size && f.cmd >= ZP_CMD_MIN && f.cmd <= ZP_CMD_MAX, "frame header");
    getters(&f.m, 0);
    uint8_t *y = NULL, *y2 = NULL;
    size_t ny = 0, ny2 = 0;
    if (!roundtrip(&f, &y, &ny)) return 0;
    FUZZ_ASSERT(zp_frame_decode(&g, y, ny, ZP_FRAME_MAX_LIMIT) == 0, "command %u: re-encoded frame refused", f.cmd);
    FUZZ_ASSERT(roundtrip(&g, &y2, &ny2) == 1, "command %u: re-encoded message refused", f.cmd);
    FUZZ_ASSERT(ny == ny2 && !memcmp(y, y2, ny), "command %u: decode+encode of an encoded frame changed it", f.cmd);
    free(y);
    free(y2);
    return 0;
}
