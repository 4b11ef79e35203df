/* test_proto.c - unit tests of proto/messages.c: every message round-trips through the strict
 * codec; the decoders reject the wrong command, missing keys, wrong types, out-of-range values
 * and every truncation of a valid frame. t_keys: the key lists of HELLO (10) and HEARTBEAT (3)
 * round-trip; absent they are not present; a relative path, a tier out of range, a short
 * entry, too many keys are refused naming the key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/util.h"
#include "proto/proto.h"

static int fails;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #c, zp_err_msg()); fails++; } } while (0)

static int decode(zp_frame_t *f, const uint8_t *b, size_t n) { return zp_frame_decode(f, b, n, ZP_FRAME_MAX_LIMIT); }

/* every strict prefix of a valid frame must be refused by the frame decoder */
static void truncations(const uint8_t *b, size_t n)
{
    zp_frame_t f;
    for (size_t k = 0; k < n; k++) CHECK(decode(&f, b, k) < 0);
}

static void t_hello(void)
{
    zp_msg_hello_t m = {.role = ZP_ROLE_GPU, .instance = 3, .incarnation = 0x1234567890abcdefULL, .pid = 4242,
                        .capabilities = ZP_CAP_CUDA, .credits = 2, .name = zp_str("gpu-worker cuda:0"), .n_held = 2};
    m.held[0] = (zp_held_t){1, 77}; m.held[1] = (zp_held_t){5, 9};
    uint8_t *b; size_t n;
    zp_frame_t f;
    zp_msg_hello_t d;
    CHECK(zp_msg_hello_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0);
    CHECK(zp_msg_hello_decode(&d, &f) == 0);
    CHECK(d.role == m.role && d.instance == 3 && d.incarnation == m.incarnation && d.pid == 4242 && d.credits == 2);
    CHECK(d.n_held == 2 && d.held[1].slot == 5 && d.held[1].gen == 9 && zp_str_eq(d.name, "gpu-worker cuda:0"));
    zp_msg_heartbeat_t hb;
    CHECK(zp_msg_heartbeat_decode(&hb, &f) == ZP_EPROTO);   /* wrong command */
    truncations(b, n);
    free(b);
    m.credits = 0;                                          /* out of range */
    CHECK(zp_msg_hello_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0);
    CHECK(zp_msg_hello_decode(&d, &f) == ZP_EPROTO);
    free(b);
    /* the identity token (key 9) round-trips; absent: has_token false; wrong length refused */
    m.credits = 2; m.has_token = true;
    for (int i = 0; i < ZP_ID_TOKEN_LEN; i++) m.token[i] = (uint8_t)(0xa0 + i);
    CHECK(zp_msg_hello_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_hello_decode(&d, &f) == 0);
    CHECK(d.has_token && !memcmp(d.token, m.token, ZP_ID_TOKEN_LEN));
    free(b);
    m.has_token = false;
    CHECK(zp_msg_hello_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_hello_decode(&d, &f) == 0 && !d.has_token);
    free(b);
    {
        zp_enc_t e;
        const uint8_t *fb; size_t fl;
        zp_enc_init(&e, ZP_CMD_HELLO, ZP_PROTO_VERSION, 0);
        zp_enc_u64(&e, 1, 1); zp_enc_u64(&e, 2, 0); zp_enc_u64(&e, 3, 5); zp_enc_u64(&e, 4, 9);
        zp_enc_u64(&e, 5, 0); zp_enc_u64(&e, 6, 1); zp_enc_array_begin(&e, 8); zp_enc_end(&e);
        zp_enc_bin(&e, 9, "short", 5);
        CHECK(zp_enc_finish(&e, &fb, &fl) == 0);
        CHECK(decode(&f, fb, fl) == 0 && zp_msg_hello_decode(&d, &f) == ZP_EPROTO);
        zp_enc_close(&e);
    }
    m.credits = 1; m.role = 7;
    CHECK(zp_msg_hello_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_hello_decode(&d, &f) == ZP_EPROTO);
    free(b);
}

static void t_assign_done_fail(void)
{
    zp_msg_assign_t a = {.slot = 2, .gen = 10, .in_gen = 9, .payload_gen = 7, .stage = ZP_ROLE_FINAL, .job = 5, .part = 3,
                         .attempt = 2, .priority = ZP_PRIO_HIGH, .zkey = zp_str("/k.zkey"), .r1cs = zp_str(""),
                         .wtns = zp_str(""), .epoch = 99};
    uint8_t *b; size_t n;
    zp_frame_t f;
    zp_msg_assign_t da;
    CHECK(zp_msg_assign_encode(&b, &n, &a) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_assign_decode(&da, &f) == 0);
    CHECK(da.slot == 2 && da.gen == 10 && da.in_gen == 9 && da.payload_gen == 7 && da.stage == ZP_ROLE_FINAL &&
          da.job == 5 && da.part == 3 && da.attempt == 2 && da.priority == 1 && da.epoch == 99 &&
          zp_str_eq(da.zkey, "/k.zkey") && da.r1cs.len == 0);
    CHECK(da.lease_deadline == 0);   /* absent: no lease */
    truncations(b, n);
    free(b);
    a.lease_deadline = 123456789012ull;   /* the optional lease (key 14) round-trips */
    CHECK(zp_msg_assign_encode(&b, &n, &a) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_assign_decode(&da, &f) == 0 && da.lease_deadline == 123456789012ull);
    free(b);
    a.lease_deadline = 0;
    a.stage = ZP_ROLE_SYNTH; /* synth needs a witness path */
    CHECK(zp_msg_assign_encode(&b, &n, &a) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_assign_decode(&da, &f) == ZP_EPROTO);
    free(b);
    a.stage = ZP_ROLE_GPU; a.payload_gen = 0; /* later stages need the input generation */
    CHECK(zp_msg_assign_encode(&b, &n, &a) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_assign_decode(&da, &f) == ZP_EPROTO);
    free(b);

    zp_msg_done_t d = {.slot = 1, .gen = 4, .new_gen = 5, .job = 8, .part = 2, .t_start = 100, .t_end = 200,
                       .proof_json = zp_str("{\"pi_a\": 1}"), .public_json = zp_str("[\"1\"]")};
    static const uint8_t bin[192] = {1, 2, 3};
    d.proof_bin = bin; d.proof_bin_len = sizeof bin;
    d.dt[ZP_DT_MSM] = 12345;
    zp_msg_done_t dd;
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == 0);
    CHECK(dd.new_gen == 5 && dd.dt[ZP_DT_MSM] == 12345 && dd.proof_bin_len == 192 && dd.proof_bin[2] == 3 &&
          zp_str_eq(dd.public_json, "[\"1\"]"));
    truncations(b, n);
    free(b);
    d.new_gen = 4;  /* must move forward */
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == ZP_EPROTO);
    free(b);
    d.new_gen = 5; d.t_end = 50; /* end before start */
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == ZP_EPROTO);
    free(b);
    /* DONE key 12 (issue 10): the phases' absolute times round-trip; absent = 0; an end before
     * its start is refused */
    d.t_end = 200;
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == 0 && dd.tm[ZP_TM_STAGE_START] == 0 &&
          dd.tm[ZP_TM_COMPUTE_END] == 0);
    free(b);
    d.tm[ZP_TM_STAGE_START] = 90; d.tm[ZP_TM_STAGE_END] = 95; d.tm[ZP_TM_COMPUTE_START] = 120; d.tm[ZP_TM_COMPUTE_END] = 190;
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == 0 && dd.tm[ZP_TM_STAGE_START] == 90 &&
          dd.tm[ZP_TM_STAGE_END] == 95 && dd.tm[ZP_TM_COMPUTE_START] == 120 && dd.tm[ZP_TM_COMPUTE_END] == 190);
    free(b);
    d.tm[ZP_TM_COMPUTE_END] = 110;
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == ZP_EPROTO && strstr(zp_err_msg(), "key 12"));
    free(b);
    /* (added) the deferred verify's end (it may come after the compute's) round-trips; one
     * before the staging's end is refused */
    d.tm[ZP_TM_COMPUTE_END] = 190; d.tm[ZP_TM_VERIFY_END] = 250;
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == 0 && dd.tm[ZP_TM_VERIFY_END] == 250);
    free(b);
    d.tm[ZP_TM_VERIFY_END] = 94;
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == ZP_EPROTO && strstr(zp_err_msg(), "deferred verify"));
    free(b);
    /* (added) the compute thread's span round-trips inside [compute start, end]; outside, or
     * with its end before its start, it is refused */
    d.tm[ZP_TM_VERIFY_END] = 250; d.tm[ZP_TM_RUN_START] = 121; d.tm[ZP_TM_RUN_END] = 189;
    CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == 0 && dd.tm[ZP_TM_RUN_START] == 121 &&
          dd.tm[ZP_TM_RUN_END] == 189 && dd.tm[ZP_TM_VERIFY_END] == 250);
    free(b);
    const uint64_t bad_run[][2] = {{119, 189}, {121, 191}, {150, 140}, {0, 150}, {150, 0}};
    for (size_t i = 0; i < sizeof bad_run / sizeof bad_run[0]; i++) {
        d.tm[ZP_TM_RUN_START] = bad_run[i][0]; d.tm[ZP_TM_RUN_END] = bad_run[i][1];
        CHECK(zp_msg_done_encode(&b, &n, &d) == 0);
        CHECK(decode(&f, b, n) == 0 && zp_msg_done_decode(&dd, &f) == ZP_EPROTO && strstr(zp_err_msg(), "compute thread"));
        free(b);
    }
    d.tm[ZP_TM_RUN_START] = d.tm[ZP_TM_RUN_END] = 0;
    memset(d.tm, 0, sizeof d.tm);

    zp_msg_fail_t fl = {.slot = 1, .gen = 4, .job = 8, .part = 2, .retryable = true, .code = ZP_EUNSAT,
                        .payload_bad = true, .message = zp_str("constraint 3")};
    zp_msg_fail_t df;
    CHECK(zp_msg_fail_encode(&b, &n, &fl) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_fail_decode(&df, &f) == 0);
    CHECK(df.retryable && df.payload_bad && df.code == ZP_EUNSAT && zp_str_eq(df.message, "constraint 3"));
    CHECK(!df.unstarted && !df.stopping);   /* absent optional keys (an older worker's FAIL) */
    CHECK(df.fail_class == ZP_FAIL_TRANSIENT);  /* retryable, no class set */
    size_t n_plain = n;
    free(b);
    /* failure class: explicit, derived from retryable when unset, out of range refused */
    fl.fail_class = ZP_FAIL_DEVICE;
    CHECK(zp_msg_fail_encode(&b, &n, &fl) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_fail_decode(&df, &f) == 0 && df.fail_class == ZP_FAIL_DEVICE);
    free(b);
    fl.fail_class = ZP_FAIL_TRANSIENT; fl.retryable = false;
    CHECK(zp_msg_fail_encode(&b, &n, &fl) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_fail_decode(&df, &f) == 0 && df.fail_class == ZP_FAIL_INPUT);
    free(b);
    fl.fail_class = ZP_NFAIL_CLASSES; fl.retryable = true;
    CHECK(zp_msg_fail_encode(&b, &n, &fl) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_fail_decode(&df, &f) == ZP_EPROTO);
    fl.fail_class = ZP_FAIL_TRANSIENT;
    CHECK(!strcmp(zp_fail_class_name(ZP_FAIL_WORKER), "worker") && !strcmp(zp_fail_class_name(9), "?"));
    free(b);
    /* handed back unstarted: explicit fields, independent of the message text */
    fl.unstarted = true; fl.stopping = true; fl.payload_bad = false; fl.message = zp_str("anything at all");
    CHECK(zp_msg_fail_encode(&b, &n, &fl) == 0);
    CHECK(n > n_plain);
    CHECK(decode(&f, b, n) == 0 && zp_msg_fail_decode(&df, &f) == 0);
    CHECK(df.unstarted && df.stopping && !df.payload_bad && zp_str_eq(df.message, "anything at all"));
    free(b);
    fl.stopping = false;
    CHECK(zp_msg_fail_encode(&b, &n, &fl) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_fail_decode(&df, &f) == 0);
    CHECK(df.unstarted && !df.stopping);
    free(b);
}

static void t_client(void)
{
    static zp_msg_submit_t s, ds;
    s.request_id = zp_str("req-1"); s.zkey = zp_str("/a.zkey"); s.r1cs = zp_str("/a.r1cs"); s.priority = ZP_PRIO_CRITICAL;
    s.n_wtns = 3;
    s.wtns[0] = zp_str("/w0"); s.wtns[1] = zp_str("/w1"); s.wtns[2] = zp_str("/w2");
    uint8_t *b; size_t n;
    zp_frame_t f;
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == 0);
    CHECK(ds.n_wtns == 3 && zp_str_eq(ds.wtns[2], "/w2") && ds.priority == 0 && zp_str_eq(ds.request_id, "req-1"));
    truncations(b, n);
    free(b);
    s.n_wtns = 0;       /* a job needs partitions */
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO);
    free(b);
    s.n_wtns = 1; s.request_id = zp_str("");   /* empty idempotency key */
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO);
    free(b);
    /* relative paths are refused at submit, and the message names the field (issue 9 item 8) */
    s.request_id = zp_str("req-2"); s.n_wtns = 3; s.wtns[1] = zp_str("w1.wtns");
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO);
    CHECK(strstr(zp_err_msg(), "key 5.1 (witness 1)") && strstr(zp_err_msg(), "'w1.wtns' is a relative path"));
    free(b);
    s.wtns[1] = zp_str("/w1"); s.zkey = zp_str("a.zkey");
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO);
    CHECK(strstr(zp_err_msg(), "key 2 (zkey)") != NULL);
    free(b);
    s.zkey = zp_str("/a.zkey"); s.r1cs = zp_str("./a.r1cs");
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO);
    CHECK(strstr(zp_err_msg(), "key 3 (r1cs)") != NULL);
    free(b);
    s.r1cs = zp_str("");   /* no r1cs: fine */
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == 0 && ds.r1cs.len == 0);
    free(b);

    zp_msg_part_result_t parts[2] = {
        {.state = ZP_PART_DONE, .attempts = 1, .proof_json = zp_str("{}"), .public_json = zp_str("[]")},
        {.state = ZP_PART_FAILED, .attempts = 3, .error = zp_str("bad witness")}};
    zp_msg_result_t r = {.job = 4, .state = ZP_JOB_FAILED, .timed_out = false, .n_parts = 2, .parts = parts}, dr;
    CHECK(zp_msg_result_encode(&b, &n, &r) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_result_decode(&dr, &f) == 0);
    CHECK(dr.n_parts == 2 && dr.parts[1].state == ZP_PART_FAILED && zp_str_eq(dr.parts[1].error, "bad witness") &&
          zp_str_eq(dr.parts[0].proof_json, "{}") && dr.state == ZP_JOB_FAILED);
    zp_msg_result_free(&dr);
    truncations(b, n);
    free(b);

    zp_msg_await_t aw = {.job = 3, .timeout_ms = 1500}, daw;
    CHECK(zp_msg_await_encode(&b, &n, &aw) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_await_decode(&daw, &f) == 0 && daw.job == 3 && daw.timeout_ms == 1500);
    free(b);
    aw.job = 0;
    CHECK(zp_msg_await_encode(&b, &n, &aw) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_await_decode(&daw, &f) == ZP_EPROTO);
    free(b);

    zp_msg_error_t e = {.code = ZP_ETOOBIG, .message = zp_str("too big")}, de;
    CHECK(zp_msg_error_encode(&b, &n, &e) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_error_decode(&de, &f) == 0 && de.code == ZP_ETOOBIG);
    free(b);
    CHECK(zp_prio_parse("CRITICAL") == 0 && zp_prio_parse("low") == 3 && zp_prio_parse("2") == 2 &&
          zp_prio_parse("urgent") == -1);
}

/* SUBMIT key 6 (client): inline witness bytes beside paths; absent when none is inline (frames of
 * older clients are unchanged); one entry per witness; never both a path and bytes */
static void t_submit_inline(void)
{
    static zp_msg_submit_t s, ds;
    static const uint8_t w1[] = {'w', 't', 'n', 's', 0, 1, 2, 255};
    s.request_id = zp_str("inl"); s.zkey = zp_str("/a.zkey"); s.r1cs = zp_str(""); s.priority = ZP_PRIO_NORMAL;
    s.n_wtns = 2;
    s.wtns[0] = zp_str("/w0"); s.wtns[1] = zp_str("");
    s.wtns_data[1] = w1; s.wtns_data_len[1] = sizeof w1;
    uint8_t *b, *b0; size_t n, n0;
    zp_frame_t f;
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == 0);
    CHECK(ds.n_wtns == 2 && zp_str_eq(ds.wtns[0], "/w0") && ds.wtns_data_len[0] == 0 && ds.wtns[1].len == 0 &&
          ds.wtns_data_len[1] == sizeof w1 && !memcmp(ds.wtns_data[1], w1, sizeof w1));
    truncations(b, n);
    free(b);
    s.wtns_data_len[1] = 0; s.wtns[1] = zp_str("/w1");     /* no inline: no key 6 at all */
    CHECK(zp_msg_submit_encode(&b0, &n0, &s) == 0);
    CHECK(decode(&f, b0, n0) == 0 && !zp_map_has(&f.m, 6));
    free(b0);
    s.wtns_data_len[1] = sizeof w1;                        /* both a path and bytes */
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO && strstr(zp_err_msg(), "key 6.1"));
    free(b);
    s.wtns[1] = zp_str(""); s.wtns_data_len[1] = 0;        /* neither */
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO);
    free(b);
    /* a key 6 array whose length is not the witness count */
    zp_enc_t e;
    CHECK(zp_enc_init(&e, ZP_CMD_SUBMIT, ZP_PROTO_VERSION, ZP_FRAME_MAX_LIMIT) == 0);
    zp_enc_str(&e, 1, "inl"); zp_enc_str(&e, 2, "/a.zkey"); zp_enc_str(&e, 3, ""); zp_enc_u64(&e, 4, 2);
    zp_enc_array_begin(&e, 5); zp_enc_str(&e, 0, ""); zp_enc_str(&e, 0, "/w1"); zp_enc_end(&e);
    zp_enc_array_begin(&e, 6); zp_enc_bin(&e, 0, w1, sizeof w1); zp_enc_end(&e);
    const uint8_t *eb; size_t en;
    CHECK(zp_enc_finish(&e, &eb, &en) == 0);
    CHECK(decode(&f, eb, en) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO && strstr(zp_err_msg(), "key 6"));
    zp_enc_close(&e);
}

/* keys (issue 10 item 4): the key list in HELLO 10 and HEARTBEAT 3 */
static void t_keys(void)
{
    zp_msg_heartbeat_t m = {.incarnation = 7, .busy = 1}, d;
    zp_frame_t f;
    uint8_t *b; size_t n;
    CHECK(zp_msg_heartbeat_encode(&b, &n, &m) == 0);             /* absent: not present */
    CHECK(decode(&f, b, n) == 0 && zp_msg_heartbeat_decode(&d, &f) == 0 && !d.keys.present);
    free(b);
    m.keys = (zp_msg_keys_t){.present = true, .loads = 9, .evictions = 3, .budget = 1u << 30, .n = 2};
    m.keys.k[0] = (zp_msg_key_t){zp_str("/keys/a.zkey"), 123456, 1 | 2 | 4};
    m.keys.k[1] = (zp_msg_key_t){zp_str("/keys/b.zkey"), 42, 8};
    CHECK(zp_msg_heartbeat_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_heartbeat_decode(&d, &f) == 0);
    CHECK(d.keys.present && d.keys.loads == 9 && d.keys.evictions == 3 && d.keys.budget == 1u << 30 && d.keys.n == 2);
    CHECK(zp_str_eq(d.keys.k[0].path, "/keys/a.zkey") && d.keys.k[0].bytes == 123456 && d.keys.k[0].tier == 7);
    CHECK(zp_str_eq(d.keys.k[1].path, "/keys/b.zkey") && d.keys.k[1].tier == 8);
    truncations(b, n);
    free(b);
    zp_msg_hello_t h = {.role = ZP_ROLE_GPU, .incarnation = 5, .pid = 9, .credits = 2, .keys = m.keys}, hd;
    CHECK(zp_msg_hello_encode(&b, &n, &h) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_hello_decode(&hd, &f) == 0 && hd.keys.present && hd.keys.n == 2);
    CHECK(zp_str_eq(hd.keys.k[1].path, "/keys/b.zkey"));
    free(b);
    /* untrusted: relative path, tier bits beyond the known ones, a short entry, too many keys */
    m.keys.k[1].path = zp_str("keys/b.zkey");
    CHECK(zp_msg_heartbeat_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_heartbeat_decode(&d, &f) == ZP_EPROTO && strstr(zp_err_msg(), "3.3.1"));
    free(b);
    m.keys.k[1].path = zp_str("/keys/b.zkey");
    m.keys.k[1].tier = 16;
    CHECK(zp_msg_heartbeat_encode(&b, &n, &m) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_heartbeat_decode(&d, &f) == ZP_EPROTO);
    free(b);
    zp_enc_t e;
    const uint8_t *eb; size_t en;
    zp_enc_init(&e, ZP_CMD_HEARTBEAT, ZP_PROTO_VERSION, 0);
    zp_enc_u64(&e, 1, 7);
    zp_enc_array_begin(&e, 3); zp_enc_u64(&e, 0, 1); zp_enc_u64(&e, 0, 0); zp_enc_u64(&e, 0, 0);
    zp_enc_array_begin(&e, 0); zp_enc_array_begin(&e, 0); zp_enc_str(&e, 0, "/a"); zp_enc_end(&e); zp_enc_end(&e);
    zp_enc_end(&e);
    CHECK(zp_enc_finish(&e, &eb, &en) == 0);
    CHECK(decode(&f, eb, en) == 0 && zp_msg_heartbeat_decode(&d, &f) == ZP_EPROTO && strstr(zp_err_msg(), "[path, bytes, tier]"));
    zp_enc_close(&e);
    zp_enc_init(&e, ZP_CMD_HEARTBEAT, ZP_PROTO_VERSION, 0);
    zp_enc_array_begin(&e, 3); zp_enc_u64(&e, 0, 1); zp_enc_u64(&e, 0, 0); zp_enc_u64(&e, 0, 0);
    zp_enc_array_begin(&e, 0);
    for (int i = 0; i <= ZP_MSG_MAX_KEYS; i++) {
        zp_enc_array_begin(&e, 0); zp_enc_str(&e, 0, "/a"); zp_enc_u64(&e, 0, 1); zp_enc_u64(&e, 0, 1); zp_enc_end(&e);
    }
    zp_enc_end(&e); zp_enc_end(&e);
    CHECK(zp_enc_finish(&e, &eb, &en) == 0);
    CHECK(decode(&f, eb, en) == 0 && zp_msg_heartbeat_decode(&d, &f) == ZP_EPROTO);
    zp_enc_close(&e);
}

/* issue 28: SUBMIT key 7 (wasm: the entries are inputs), ASSIGN key 15 */
static void t_inputs(void)
{
    static zp_msg_submit_t s, ds;
    static const char in1[] = "{\"x\": \"2\", \"k\": [5, 7, 11]}";
    s.request_id = zp_str("in"); s.zkey = zp_str("/a.zkey"); s.r1cs = zp_str(""); s.wasm = zp_str("/c.wasm");
    s.n_wtns = 2;
    s.wtns[0] = zp_str("/in0.json"); s.wtns[1] = zp_str("");
    s.wtns_data[1] = (const uint8_t *)in1; s.wtns_data_len[1] = sizeof in1 - 1;
    uint8_t *b; size_t n;
    zp_frame_t f;
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == 0);
    CHECK(zp_str_eq(ds.wasm, "/c.wasm") && zp_str_eq(ds.wtns[0], "/in0.json") && ds.wtns_data_len[1] == sizeof in1 - 1);
    truncations(b, n);
    free(b);
    s.wasm = zp_str("c.wasm");   /* relative: refused by name */
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO && strstr(zp_err_msg(), "key 7 (wasm)"));
    free(b);
    s.wasm = zp_str("");         /* no wasm: no key 7, the entries are witnesses */
    CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
    CHECK(decode(&f, b, n) == 0 && !zp_map_has(&f.m, 7) && zp_msg_submit_decode(&ds, &f) == 0 && ds.wasm.len == 0);
    free(b);
    /* an inline input over ZP_MSG_INPUT_MAX */
    uint8_t *big = calloc(1, ZP_MSG_INPUT_MAX + 1);
    CHECK(big != NULL);
    if (big) {
        s.wasm = zp_str("/c.wasm"); s.wtns_data[1] = big; s.wtns_data_len[1] = ZP_MSG_INPUT_MAX + 1;
        CHECK(zp_msg_submit_encode(&b, &n, &s) == 0);
        CHECK(decode(&f, b, n) == 0 && zp_msg_submit_decode(&ds, &f) == ZP_EPROTO && strstr(zp_err_msg(), "key 6.1"));
        free(b);
        free(big);
    }
    zp_msg_assign_t a = {.slot = 1, .gen = 3, .stage = ZP_ROLE_SYNTH, .job = 5, .part = 0, .attempt = 1,
                         .zkey = zp_str("/a.zkey"), .r1cs = zp_str(""), .wtns = zp_str("/in.json"), .epoch = 9,
                         .wasm = zp_str("/c.wasm")}, da;
    CHECK(zp_msg_assign_encode(&b, &n, &a) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_assign_decode(&da, &f) == 0 && zp_str_eq(da.wasm, "/c.wasm"));
    free(b);
    a.wtns = zp_str("");         /* a wasm without the input */
    CHECK(zp_msg_assign_encode(&b, &n, &a) == 0);
    CHECK(decode(&f, b, n) == 0 && zp_msg_assign_decode(&da, &f) == ZP_EPROTO);
    free(b);
}

int main(void)
{
    t_keys();
    t_hello();
    t_assign_done_fail();
    t_client();
    t_submit_inline();
    t_inputs();
    if (fails) { fprintf(stderr, "test_proto: %d failure(s)\n", fails); return 1; }
    printf("test_proto: OK\n");
    return 0;
}
