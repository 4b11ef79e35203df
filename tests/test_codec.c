/* test_codec.c - wire frames: round trips of every type (checked against msgpack-c, an
 * independent implementation, in both directions), getter errors, encoder errors, a battery
 * of hostile frames (short, wrong tag, unknown command, trailing bytes, bad keys, huge
 * declared counts with tiny payloads under a low address-space limit, depth bombs, every
 * truncation of a valid frame), and a random fuzz whose accepted frames are re-walked by
 * every getter and re-parsed by msgpack-c. */
#include <errno.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "proto/codec.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #c, \
                                          zp_err_msg()); exit(1); } } while (0)

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static const uint64_t u64s[] = { 0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295u, 4294967296u, UINT64_MAX - 1,
                                 UINT64_MAX };
static const int64_t i64s[] = { -1, -32, -33, -128, -129, -32768, -32769, INT32_MIN, (int64_t)INT32_MIN - 1, INT64_MIN,
                                INT64_MIN + 1, 0, 5, 200, INT64_MAX };
static const size_t lens[] = { 0, 1, 31, 32, 255, 256, 65535, 65536, 70000 };

/* a frame with everything; returns malloc'd bytes */
static uint8_t *build_all(size_t *len)
{
    zp_enc_t e;
    uint8_t *big = malloc(70000);
    for (size_t i = 0; i < 70000; i++)
        big[i] = (uint8_t)('a' + i % 26);
    CHECK(zp_enc_init(&e, 9, 3, ZP_FRAME_MAX_LIMIT) == 0);
    CHECK(zp_enc_array_begin(&e, 1) == 0);
    for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++)
        zp_enc_u64(&e, 0, u64s[i]);
    zp_enc_end(&e);
    zp_enc_array_begin(&e, 2);
    for (size_t i = 0; i < sizeof i64s / sizeof i64s[0]; i++)
        zp_enc_i64(&e, 0, i64s[i]);
    zp_enc_end(&e);
    zp_enc_bool(&e, 3, true);
    zp_enc_bool(&e, 4, false);
    zp_enc_nil(&e, 5);
    zp_enc_array_begin(&e, 6);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        zp_enc_strn(&e, 0, (const char *)big, lens[i]);
    zp_enc_end(&e);
    zp_enc_array_begin(&e, 7);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        zp_enc_bin(&e, 0, big, lens[i]);
    zp_enc_end(&e);
    const char *names[] = { "alpha", "", "gamma delta" };
    zp_enc_str_array(&e, 8, names, 3);
    uint32_t u32s[20];
    for (int i = 0; i < 20; i++)
        u32s[i] = (uint32_t)i * 1000003u;
    zp_enc_u32_array(&e, 9, u32s, 20);                /* array16 (>15 elements) */
    zp_enc_map_begin(&e, 10);                           /* nested map, 17 entries (map16) */
    for (unsigned k = 0; k < 17; k++)
        zp_enc_u64(&e, k * 3, k);
    zp_enc_map_begin(&e, 60);
    zp_enc_str(&e, 1, "deep");
    zp_enc_end(&e);
    zp_enc_end(&e);
    zp_enc_array_begin(&e, 11);                         /* array of maps */
    for (unsigned i = 0; i < 3; i++) {
        zp_enc_map_begin(&e, 0);
        zp_enc_u64(&e, 1, i);
        zp_enc_str(&e, 2, i == 1 ? "one" : "other");
        zp_enc_end(&e);
    }
    zp_enc_end(&e);
    zp_enc_array_begin(&e, 12);                         /* array of arrays */
    for (unsigned i = 0; i < 2; i++) {
        zp_enc_array_begin(&e, 0);
        zp_enc_u64(&e, 0, i);
        zp_enc_u64(&e, 0, i + 10);
        zp_enc_end(&e);
    }
    zp_enc_end(&e);
    zp_enc_array_begin(&e, 13);                         /* array32 (> 65535 elements) */
    for (unsigned i = 0; i < 70000; i++)
        zp_enc_u64(&e, 0, i & 1);
    zp_enc_end(&e);
    zp_enc_str(&e, 63, "last key");
    const uint8_t *b;
    CHECK(zp_enc_finish(&e, &b, len) == 0);
    const uint8_t *b2;
    size_t l2;
    CHECK(zp_enc_finish(&e, &b2, &l2) == 0 && b2 == b && l2 == *len);   /* idempotent */
    uint8_t *out = zp_enc_take(&e, len);
    CHECK(out && e.buf == NULL);
    zp_enc_close(&e);
    free(big);
    return out;
}

static void check_all(const uint8_t *buf, size_t len)
{
    zp_frame_t f;
    CHECK(zp_frame_decode(&f, buf, len, ZP_FRAME_MAX_LIMIT) == 0);
    CHECK(f.cmd == 9 && f.msg_version == 3 && f.len == len);
    CHECK(zp_frame_peek_cmd(buf, len) == 9);
    zp_arr_t a, s;
    uint64_t u;
    int64_t i;
    CHECK(zp_map_get_array(&f.m, 1, 100, &a) == 0 && a.n == sizeof u64s / sizeof u64s[0]);
    for (size_t k = 0; k < a.n; k++)
        CHECK(zp_arr_next_u64(&a, 0, UINT64_MAX, &u) == 0 && u == u64s[k]);
    CHECK(zp_arr_next_u64(&a, 0, UINT64_MAX, &u) == ZP_EPROTO);
    CHECK(zp_map_get_array(&f.m, 2, 100, &a) == 0);
    for (size_t k = 0; k < a.n; k++)
        CHECK(zp_arr_next_i64(&a, INT64_MIN, INT64_MAX, &i) == 0 && i == i64s[k]);
    bool bv = false;
    CHECK(zp_map_get_bool(&f.m, 3, &bv) == 0 && bv);
    CHECK(zp_map_get_bool(&f.m, 4, &bv) == 0 && !bv);
    CHECK(!zp_map_has(&f.m, 5) && !zp_map_has(&f.m, 14) && zp_map_has(&f.m, 4));
    CHECK(zp_map_get_array(&f.m, 6, 100, &a) == 0);
    for (size_t k = 0; k < a.n; k++) {
        const char *p;
        size_t n;
        CHECK(zp_arr_next_str(&a, 100000, &p, &n) == 0 && n == lens[k]);
        for (size_t j = 0; j < n; j++)
            CHECK(p[j] == (char)('a' + j % 26));
    }
    CHECK(zp_map_get_array(&f.m, 7, 100, &a) == 0);
    for (size_t k = 0; k < a.n; k++) {
        const uint8_t *p;
        size_t n;
        CHECK(zp_arr_next_bin(&a, 100000, &p, &n) == 0 && n == lens[k]);
        CHECK(n == 0 || (p[0] == 'a' && p[n - 1] == (uint8_t)('a' + (n - 1) % 26)));
    }
    zp_strref_t sr[4];
    size_t n;
    CHECK(zp_map_get_str_array(&f.m, 8, 4, 20, sr, &n) == 0 && n == 3);
    CHECK(sr[0].len == 5 && memcmp(sr[0].p, "alpha", 5) == 0 && sr[1].len == 0 && sr[2].len == 11);
    uint64_t v[32];
    CHECK(zp_map_get_u64_array(&f.m, 9, 32, 0, UINT32_MAX, v, &n) == 0 && n == 20);
    for (int k = 0; k < 20; k++)
        CHECK(v[k] == (uint64_t)k * 1000003u);
    zp_map_t sub, deep;
    CHECK(zp_map_get_map(&f.m, 10, &sub) == 0);
    for (unsigned k = 0; k < 17; k++)
        CHECK(zp_map_get_u64(&sub, k * 3, 0, 100, &u) == 0 && u == k);
    CHECK(zp_map_get_map(&sub, 60, &deep) == 0);
    char sz[8];
    CHECK(zp_map_get_strz(&deep, 1, sz, sizeof sz) == 0 && strcmp(sz, "deep") == 0);
    CHECK(zp_map_get_u64(&deep, 2, 0, 1, &u) == ZP_EPROTO && strstr(zp_err_msg(), "key 10.60.2: missing"));
    CHECK(zp_map_get_array(&f.m, 11, 3, &a) == 0);
    for (unsigned k = 0; k < 3; k++) {
        CHECK(zp_arr_next_map(&a, &sub) == 0);
        CHECK(zp_map_get_u64(&sub, 1, 0, 10, &u) == 0 && u == k);
        CHECK(zp_map_get_strz(&sub, 2, sz, sizeof sz) == 0 && strcmp(sz, k == 1 ? "one" : "other") == 0);
    }
    CHECK(zp_map_get_array(&f.m, 12, 2, &a) == 0);
    for (unsigned k = 0; k < 2; k++) {
        CHECK(zp_arr_next_array(&a, 2, &s) == 0 && s.n == 2);
        CHECK(zp_arr_next_u64(&s, 0, 100, &u) == 0 && u == k);
        CHECK(zp_arr_next_u64(&s, 0, 100, &u) == 0 && u == k + 10);
    }
    CHECK(zp_map_get_array(&f.m, 13, 70000, &a) == 0 && a.n == 70000);
    CHECK(zp_map_get_array(&f.m, 13, 69999, &a) == ZP_EPROTO);
    CHECK(zp_map_get_strz(&f.m, 63, sz, sizeof sz) == ZP_EPROTO);      /* too long for the buffer */
    char s9[9];
    CHECK(zp_map_get_strz(&f.m, 63, s9, sizeof s9) == 0 && strcmp(s9, "last key") == 0);
}

/* msgpack-c reads our body, and its reading matches */
static void crosscheck_msgpack_c(const uint8_t *buf, size_t len)
{
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    CHECK(msgpack_unpack_next(&u, (const char *)buf + ZP_FRAME_HDR, len - ZP_FRAME_HDR, &off) ==
          MSGPACK_UNPACK_SUCCESS);
    CHECK(off == len - ZP_FRAME_HDR);
    msgpack_object o = u.data;
    CHECK(o.type == MSGPACK_OBJECT_MAP && o.via.map.size == 15);
    CHECK(o.via.map.ptr[0].key.via.u64 == 0 && o.via.map.ptr[0].val.via.u64 == 3);
    msgpack_object a1 = o.via.map.ptr[1].val;
    CHECK(a1.type == MSGPACK_OBJECT_ARRAY && a1.via.array.size == sizeof u64s / sizeof u64s[0]);
    for (size_t k = 0; k < a1.via.array.size; k++)
        CHECK(a1.via.array.ptr[k].via.u64 == u64s[k]);
    msgpack_object a2 = o.via.map.ptr[2].val;
    for (size_t k = 0; k < a2.via.array.size; k++)
        CHECK(a2.via.array.ptr[k].type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? a2.via.array.ptr[k].via.i64 == i64s[k]
                                                                           : a2.via.array.ptr[k].via.u64 == (uint64_t)i64s[k]);
    msgpack_object a6 = o.via.map.ptr[6].val;
    for (size_t k = 0; k < a6.via.array.size; k++)
        CHECK(a6.via.array.ptr[k].type == MSGPACK_OBJECT_STR && a6.via.array.ptr[k].via.str.size == lens[k]);
    CHECK(o.via.map.ptr[7].val.via.array.ptr[8].type == MSGPACK_OBJECT_BIN);
    CHECK(o.via.map.ptr[14].key.via.u64 == 63);
    msgpack_unpacked_destroy(&u);

    /* and the other way: a frame packed by msgpack-c decodes here */
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_sbuffer_write(&sb, "ZKP\x01\x07", 5);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 6);
    msgpack_pack_uint64(&pk, 0);
    msgpack_pack_uint64(&pk, 2);
    msgpack_pack_uint64(&pk, 1);
    msgpack_pack_int64(&pk, -1234567890123LL);
    msgpack_pack_uint64(&pk, 2);
    msgpack_pack_str(&pk, 300);
    char s300[300];
    memset(s300, 'q', 300);
    msgpack_pack_str_body(&pk, s300, 300);
    msgpack_pack_uint64(&pk, 3);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_true(&pk);
    msgpack_pack_bin(&pk, 3);
    msgpack_pack_bin_body(&pk, "\x00\x01\x02", 3);
    msgpack_pack_uint64(&pk, 4);
    msgpack_pack_uint64(&pk, UINT64_MAX);
    msgpack_pack_uint64(&pk, 5);
    msgpack_pack_nil(&pk);
    zp_frame_t f;
    CHECK(zp_frame_decode(&f, sb.data, sb.size, 0) == 0 && f.cmd == 7 && f.msg_version == 2);
    int64_t i;
    uint64_t u64;
    const char *p;
    size_t n;
    CHECK(zp_map_get_i64(&f.m, 1, INT64_MIN, 0, &i) == 0 && i == -1234567890123LL);
    CHECK(zp_map_get_str(&f.m, 2, 300, &p, &n) == 0 && n == 300 && p[299] == 'q');
    CHECK(zp_map_get_str(&f.m, 2, 299, &p, &n) == ZP_EPROTO);
    zp_arr_t a;
    bool bv;
    const uint8_t *bp;
    CHECK(zp_map_get_array(&f.m, 3, 2, &a) == 0 && zp_arr_next_bool(&a, &bv) == 0 && bv);
    CHECK(zp_arr_next_bin(&a, 3, &bp, &n) == 0 && n == 3 && bp[2] == 2);
    CHECK(zp_map_get_u64(&f.m, 4, 0, UINT64_MAX, &u64) == 0 && u64 == UINT64_MAX);
    u64 = 77;
    CHECK(zp_map_get_u64(&f.m, ZP_OPT(5), 0, 10, &u64) == 0 && u64 == 77);       /* nil optional: untouched */
    CHECK(zp_map_get_u64(&f.m, 5, 0, 10, &u64) == ZP_EPROTO && strstr(zp_err_msg(), "nil"));
    msgpack_sbuffer_destroy(&sb);
}

static void test_getter_errors(void)
{
    zp_enc_t e;
    CHECK(zp_enc_init(&e, 3, 1, 0) == 0);
    zp_enc_u64(&e, 1, 500);
    zp_enc_i64(&e, 2, -5);
    zp_enc_str(&e, 3, "abc");
    zp_enc_strn(&e, 4, "a\0b", 3);
    zp_enc_bin(&e, 5, "xyz", 3);
    zp_enc_array_begin(&e, 6);
    zp_enc_u64(&e, 0, 1);
    zp_enc_map_begin(&e, 0);
    zp_enc_u64(&e, 2, 1u << 20);
    zp_enc_end(&e);
    zp_enc_end(&e);
    zp_enc_u64(&e, 7, UINT64_MAX);
    const uint8_t *b;
    size_t len;
    CHECK(zp_enc_finish(&e, &b, &len) == 0);
    zp_frame_t f;
    CHECK(zp_frame_decode(&f, b, len, 0) == 0);
    uint64_t u = 9;
    uint32_t u32;
    int64_t i;
    bool bv;
    const char *p;
    const uint8_t *bp;
    size_t n;
    CHECK(zp_map_get_u64(&f.m, 1, 0, 499, &u) == ZP_EPROTO && strstr(zp_err_msg(), "key 1: 500 not in [0, 499]"));
    CHECK(zp_map_get_u64(&f.m, 1, 501, 600, &u) == ZP_EPROTO && u == 9);
    CHECK(zp_map_get_u32(&f.m, 7, 0, UINT32_MAX, &u32) == ZP_EPROTO);
    CHECK(zp_map_get_u64(&f.m, 2, 0, 10, &u) == ZP_EPROTO && strstr(zp_err_msg(), "-5 not in"));
    CHECK(zp_map_get_i64(&f.m, 2, -4, 4, &i) == ZP_EPROTO);
    CHECK(zp_map_get_i64(&f.m, 7, INT64_MIN, INT64_MAX, &i) == ZP_EPROTO);   /* > INT64_MAX */
    CHECK(zp_map_get_i64(&f.m, 1, 0, 1000, &i) == 0 && i == 500);
    CHECK(zp_map_get_u64(&f.m, 3, 0, 10, &u) == ZP_EPROTO && strstr(zp_err_msg(), "key 3: expected uint, got str"));
    CHECK(zp_map_get_bool(&f.m, 1, &bv) == ZP_EPROTO && strstr(zp_err_msg(), "expected bool, got uint"));
    CHECK(zp_map_get_str(&f.m, 5, 10, &p, &n) == ZP_EPROTO && strstr(zp_err_msg(), "expected str, got bin"));
    CHECK(zp_map_get_bin(&f.m, 3, 10, &bp, &n) == ZP_EPROTO);
    CHECK(zp_map_get_str(&f.m, 3, 2, &p, &n) == ZP_EPROTO && strstr(zp_err_msg(), "at most 2"));
    char buf[8];
    CHECK(zp_map_get_strz(&f.m, 4, buf, sizeof buf) == ZP_EPROTO && strstr(zp_err_msg(), "NUL"));
    uint8_t x3[3], x4[4];
    CHECK(zp_map_get_bin_exact(&f.m, 5, x3, 3) == 0 && memcmp(x3, "xyz", 3) == 0);
    CHECK(zp_map_get_bin_exact(&f.m, 5, x4, 4) == ZP_EPROTO);
    CHECK(zp_map_get_u64(&f.m, 9, 0, 10, &u) == ZP_EPROTO && strstr(zp_err_msg(), "key 9: missing"));
    u = 42;
    CHECK(zp_map_get_u64(&f.m, ZP_OPT(9), 0, 10, &u) == 0 && u == 42);
    CHECK(zp_map_get_u64(&f.m, ZP_OPT(1), 0, 10, &u) == ZP_EPROTO);        /* present: still checked */
    CHECK(zp_map_get_u64(&f.m, 64, 0, 10, &u) == -EINVAL);
    zp_map_t sub;
    CHECK(zp_map_get_map(&f.m, 1, &sub) == ZP_EPROTO && strstr(zp_err_msg(), "expected map"));
    zp_arr_t a;
    CHECK(zp_map_get_array(&f.m, 6, 1, &a) == ZP_EPROTO && strstr(zp_err_msg(), "at most 1"));
    CHECK(zp_map_get_array(&f.m, 6, 2, &a) == 0);
    CHECK(zp_arr_next_str(&a, 10, &p, &n) == ZP_EPROTO && strstr(zp_err_msg(), "key 6[0]: expected str"));
    CHECK(zp_arr_next_u64(&a, 0, 1, &u) == 0);
    CHECK(zp_arr_next_map(&a, &sub) == 0);
    CHECK(zp_map_get_u64(&sub, 2, 0, 1000, &u) == ZP_EPROTO && strstr(zp_err_msg(), "key 6[1].2:"));
    CHECK(zp_arr_next_map(&a, &sub) == ZP_EPROTO && strstr(zp_err_msg(), "only 2"));
    uint64_t arr[1];
    CHECK(zp_map_get_u64_array(&f.m, 6, 1, 0, 9, arr, &n) == ZP_EPROTO && n == 0);
    zp_enc_close(&e);

    /* encoder errors */
    CHECK(zp_enc_init(&e, 0, 1, 0) == -EINVAL);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 128, 1, 0) == -EINVAL);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 0, 0) == -EINVAL);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 0) == 0);
    CHECK(zp_enc_u64(&e, 0, 1) == -EINVAL && strstr(zp_err_msg(), "duplicate key 0"));
    CHECK(zp_enc_finish(&e, &b, &len) == -EINVAL);                 /* sticky */
    CHECK(zp_enc_take(&e, &len) == NULL);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 0) == 0);
    CHECK(zp_enc_u64(&e, 64, 1) == -EINVAL);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 0) == 0);
    for (int d = 1; d < ZP_FRAME_MAX_DEPTH; d++)
        CHECK(zp_enc_array_begin(&e, 1) == 0);
    CHECK(zp_enc_array_begin(&e, 1) == -EINVAL);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 0) == 0);
    CHECK(zp_enc_end(&e) == ZP_ESTATE);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 0) == 0);
    zp_enc_map_begin(&e, 1);
    CHECK(zp_enc_finish(&e, &b, &len) == ZP_ESTATE);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 100) == 0);
    char big[200] = { 0 };
    CHECK(zp_enc_bin(&e, 1, big, 150) == ZP_ETOOBIG);
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 100) == 0);
    CHECK(zp_enc_bin(&e, 1, big, 90) == 0);                        /* within the header slack... */
    CHECK(zp_enc_finish(&e, &b, &len) == ZP_ETOOBIG);              /* ...but 101 bytes in the end */
    zp_enc_close(&e);
    CHECK(zp_enc_init(&e, 1, 1, 100) == 0);                        /* exactly the limit is fine */
    CHECK(zp_enc_bin(&e, 1, big, 100 - 5 - 1 - 2 - 1 - 2) == 0);
    CHECK(zp_enc_finish(&e, &b, &len) == 0 && len == 100);
    CHECK(zp_frame_decode(&f, b, len, 100) == 0);
    CHECK(zp_frame_decode(&f, b, len, 99) == ZP_ETOOBIG);
    zp_enc_close(&e);
}

/* ---- hostile frames ---- */

static int dec(const void *b, size_t n)
{
    zp_frame_t f;
    return zp_frame_decode(&f, b, n, 0);
}

#define HDR "ZKP\x01\x05"
#define DEC(lit) dec(lit, sizeof(lit) - 1)

static void test_hostile(void)
{
    CHECK(dec(NULL, 0) == ZP_EPROTO);
    CHECK(dec("", 0) == ZP_EPROTO);
    CHECK(DEC("ZKP") == ZP_EPROTO);
    CHECK(DEC(HDR) == ZP_EPROTO);                                  /* no body */
    CHECK(DEC(HDR "\x81\x00\x01") == 0);                           /* minimal valid frame */
    CHECK(DEC("ZKQ\x01\x05\x81\x00\x01") == ZP_EPROTO);
    CHECK(DEC("ZKP\x02\x05\x81\x00\x01") == ZP_EVERSION);
    CHECK(DEC("ZKP\x01\x00\x81\x00\x01") == ZP_EPROTO && strstr(zp_err_msg(), "unknown command 0"));
    CHECK(DEC("ZKP\x01\x80\x81\x00\x01") == ZP_EPROTO);
    zp_frame_t f;
    CHECK(zp_frame_decode_cmds(&f, HDR "\x81\x00\x01", 8, 0, 1u << 5) == 0);
    CHECK(zp_frame_decode_cmds(&f, HDR "\x81\x00\x01", 8, 0, 1u << 6) == ZP_EPROTO);
    CHECK(DEC(HDR "\x81\x00\x01\x00") == ZP_EPROTO && strstr(zp_err_msg(), "trailing"));
    CHECK(DEC(HDR "\x81\x00\x01\x81\x00\x01") == ZP_EPROTO);      /* two maps */
    CHECK(DEC(HDR "\x91\x01") == ZP_EPROTO && strstr(zp_err_msg(), "not a map"));
    CHECK(DEC(HDR "\x01") == ZP_EPROTO);
    CHECK(DEC(HDR "\xc0") == ZP_EPROTO);
    CHECK(DEC(HDR "\x80") == ZP_EPROTO && strstr(zp_err_msg(), "key 0"));   /* no message version */
    CHECK(DEC(HDR "\x81\x00\x00") == ZP_EPROTO);                   /* version 0 */
    CHECK(DEC(HDR "\x81\x00\xcd\x01\x00") == ZP_EPROTO);           /* version 256 */
    CHECK(DEC(HDR "\x81\x00\xa1x") == ZP_EPROTO);                  /* version not a uint */
    CHECK(DEC(HDR "\x81\x00\xcf\x00\x00\x00\x00\x00\x00\x00\x01") == 0);   /* non-minimal is fine */
    CHECK(DEC(HDR "\x82\x00\x01\x00\x02") == ZP_EPROTO && strstr(zp_err_msg(), "duplicate map key 0"));
    CHECK(DEC(HDR "\x82\x00\x01\xa1k\x02") == ZP_EPROTO && strstr(zp_err_msg(), "not an unsigned"));
    CHECK(DEC(HDR "\x82\x00\x01\xff\x02") == ZP_EPROTO && strstr(zp_err_msg(), "negative map key"));
    CHECK(DEC(HDR "\x82\x00\x01\x40\x02") == ZP_EPROTO && strstr(zp_err_msg(), "larger than 63"));
    CHECK(DEC(HDR "\x82\x00\x01\xcf\x00\x00\x00\x01\x00\x00\x00\x01\x02") == ZP_EPROTO);
    CHECK(DEC(HDR "\x82\x00\x01\x3f\x02") == 0);
    CHECK(DEC(HDR "\x82\x00\x01\x01\x81\x01\x00\x81\x01\x00") == ZP_EPROTO);   /* wrong count: trailing */
    CHECK(DEC(HDR "\x82\x00\x01\x01\x82\x01\x00\x01\x00") == ZP_EPROTO && strstr(zp_err_msg(), "key 1: duplicate map key 1"));
    CHECK(DEC(HDR "\x82\x00\x01\x01\xca\x00\x00\x00\x00") == ZP_EPROTO && strstr(zp_err_msg(), "float"));
    CHECK(DEC(HDR "\x82\x00\x01\x01\xcb\x00\x00\x00\x00\x00\x00\x00\x00") == ZP_EPROTO);
    CHECK(DEC(HDR "\x82\x00\x01\x01\xd4\x01\x00") == ZP_EPROTO && strstr(zp_err_msg(), "ext"));
    CHECK(DEC(HDR "\x82\x00\x01\x01\xc7\x01\x01\x00") == ZP_EPROTO);
    CHECK(DEC(HDR "\x82\x00\x01\x01\xc1") == ZP_EPROTO);
    /* huge declared counts and lengths with tiny payloads */
    static const struct { const char *b; size_t n; } huge[] = {
#define LIT(x) { x, sizeof(x) - 1 }
        LIT(HDR "\x82\x00\x01\x01\xdd\xff\xff\xff\xff"),             /* array32 of 2^32-1 */
        LIT(HDR "\x82\x00\x01\x01\xdd\xff\xff\xff\xff\x01\x01\x01"),
        LIT(HDR "\x82\x00\x01\x01\xdf\xff\xff\xff\xff"),             /* map32 */
        LIT(HDR "\x82\x00\x01\x01\xdb\xff\xff\xff\xff"),             /* str32 */
        LIT(HDR "\x82\x00\x01\x01\xc6\xff\xff\xff\xff"),             /* bin32 */
        LIT(HDR "\x82\x00\x01\x01\xdc\xff\xff"),                     /* array16 */
        LIT(HDR "\x82\x00\x01\x01\xde\x00\x02\x01\x01"),             /* map16 of 2, one entry */
        LIT(HDR "\xdf\xff\xff\xff\xff\x00\x01"),                     /* top-level map32 */
        LIT(HDR "\x82\x00\x01\x01\xd9\x05" "abcd"),                     /* str8 one short */
        LIT(HDR "\x82\x00\x01\x01\xcf\x00\x00"),                     /* truncated uint64 */
        LIT(HDR "\x82\x00\x01\x01\x9f\x01"),                          /* fixarray 15, one given */
        LIT(HDR "\x82\x00\x01\x01\x8f\x01\x01"),                      /* fixmap 15, one given */
#undef LIT
    };
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
        CHECK(dec(huge[k].b, huge[k].n) == ZP_EPROTO);
        CHECK(strstr(zp_err_msg(), "larger than the rest") || strstr(zp_err_msg(), "longer than the rest") ||
              strstr(zp_err_msg(), "truncated"));
    }
    /* nesting depth bomb: 100000 nested arrays of one */
    size_t bl = 100000;
    uint8_t *bomb = malloc(bl + 16);
    memcpy(bomb, HDR "\x82\x00\x01\x01", 9);
    memset(bomb + 9, 0x91, bl);
    bomb[9 + bl] = 0x01;
    CHECK(dec(bomb, 10 + bl) == ZP_EPROTO && strstr(zp_err_msg(), "too deep"));
    /* depth exactly at the limit: top map (1) + 7 arrays */
    memset(bomb + 9, 0x91, ZP_FRAME_MAX_DEPTH - 1);
    bomb[9 + ZP_FRAME_MAX_DEPTH - 1] = 0x01;
    CHECK(dec(bomb, 9 + ZP_FRAME_MAX_DEPTH) == 0);
    memset(bomb + 9, 0x91, ZP_FRAME_MAX_DEPTH);
    bomb[9 + ZP_FRAME_MAX_DEPTH] = 0x01;
    CHECK(dec(bomb, 10 + ZP_FRAME_MAX_DEPTH) == ZP_EPROTO);
    free(bomb);
    /* size limits */
    uint8_t *large = calloc(1, ZP_FRAME_MAX_LIMIT + 2);
    CHECK(zp_frame_decode(&f, large, ZP_FRAME_MAX_DEFAULT + 1, 0) == ZP_ETOOBIG);
    CHECK(zp_frame_decode(&f, large, ZP_FRAME_MAX_LIMIT + 1, SIZE_MAX) == ZP_ETOOBIG);
    free(large);
}

/* Every hostile header again in a child with a small address-space limit: the decoder must
 * refuse them without trying to allocate (it never allocates). Skipped under ASan, whose
 * shadow memory needs a huge address space. */
static void test_no_alloc(void)
{
    if (UNDER_ASAN)
        return;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = { 256u << 20, 256u << 20 };
        if (setrlimit(RLIMIT_AS, &rl) < 0)
            _exit(3);
        void *probe = malloc((size_t)1 << 30);
        if (probe)
            _exit(4);                   /* the limit does not bite: the test would mean nothing */
        static const uint8_t h[] = { 'Z', 'K', 'P', 1, 5, 0x82, 0, 1, 1, 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01 };
        zp_frame_t f;
        for (int k = 0; k < 1000; k++)
            if (zp_frame_decode(&f, h, sizeof h, 0) != ZP_EPROTO)
                _exit(5);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_truncations(const uint8_t *buf, size_t len)
{
    for (size_t n = 0; n < len; n++) {
        uint8_t *c = malloc(n ? n : 1);   /* exact-size copy: ASan catches any over-read */
        memcpy(c, buf, n);
        CHECK(dec(c, n) != 0);
        free(c);
    }
}

/* exercise every getter on whatever an accepted frame contains */
static unsigned g_visits;
static void visit_arr(zp_arr_t *a, int depth);
static void visit_map(const zp_map_t *m, int depth)
{
    for (unsigned k = 0; k <= ZP_KEY_MAX; k++) {
        uint64_t u;
        int64_t i;
        bool b;
        const char *p;
        const uint8_t *bp;
        size_t n;
        char s[16];
        uint8_t x[4];
        zp_map_t sub;
        zp_arr_t a;
        g_visits++;
        (void)zp_map_has(m, k);
        (void)zp_map_get_u64(m, ZP_OPT(k), 0, UINT64_MAX, &u);
        (void)zp_map_get_u32(m, k, 3, 1000, (uint32_t *)x);
        (void)zp_map_get_i64(m, k, -100, 100, &i);
        (void)zp_map_get_bool(m, k, &b);
        (void)zp_map_get_str(m, k, 100, &p, &n);
        (void)zp_map_get_strz(m, k, s, sizeof s);
        (void)zp_map_get_bin(m, k, 100, &bp, &n);
        (void)zp_map_get_bin_exact(m, k, x, 4);
        uint64_t arr[8];
        zp_strref_t sr[8];
        (void)zp_map_get_u64_array(m, k, 8, 0, 1000, arr, &n);
        (void)zp_map_get_str_array(m, k, 8, 10, sr, &n);
        if (zp_map_get_map(m, k, &sub) == 0)
            visit_map(&sub, depth + 1);
        if (zp_map_get_array(m, k, 1000000, &a) == 0)
            visit_arr(&a, depth + 1);
    }
    CHECK(depth <= ZP_FRAME_MAX_DEPTH);
}

static void visit_arr(zp_arr_t *a, int depth)
{
    CHECK(depth <= ZP_FRAME_MAX_DEPTH);
    while (a->i < a->n) {
        uint64_t u;
        int64_t i;
        bool b;
        const char *p;
        const uint8_t *bp;
        size_t n;
        zp_map_t sub;
        zp_arr_t s;
        g_visits++;
        if (zp_arr_next_u64(a, 0, UINT64_MAX, &u) == 0 || zp_arr_next_i64(a, INT64_MIN, INT64_MAX, &i) == 0 ||
            zp_arr_next_bool(a, &b) == 0 || zp_arr_next_str(a, SIZE_MAX, &p, &n) == 0 ||
            zp_arr_next_bin(a, SIZE_MAX, &bp, &n) == 0)
            continue;
        if (zp_arr_next_map(a, &sub) == 0) {
            visit_map(&sub, depth + 1);
            continue;
        }
        if (zp_arr_next_array(a, SIZE_MAX, &s) == 0) {
            visit_arr(&s, depth + 1);
            continue;
        }
        /* only nil is left: no getter takes it; it must really be nil */
        CHECK(a->buf[a->pos] == 0xc0);
        a->pos++;
        a->i++;
    }
}

static uint64_t rng_state = 0x1234567887654321ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void accepted_is_msgpack(const uint8_t *b, size_t n)
{
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    CHECK(msgpack_unpack_next(&u, (const char *)b + ZP_FRAME_HDR, n - ZP_FRAME_HDR, &off) == MSGPACK_UNPACK_SUCCESS);
    CHECK(off == n - ZP_FRAME_HDR && u.data.type == MSGPACK_OBJECT_MAP);
    msgpack_unpacked_destroy(&u);
}

static void fuzz(const uint8_t *seed, size_t seedlen)
{
    unsigned accepted = 0, iters = 6000;
    const char *env = getenv("ZP_FUZZ_ITERS");          /* longer runs by hand, e.g. under ASan */
    if (env && atoi(env) > 0)
        iters = (unsigned)atoi(env);
    static const uint8_t interesting[] = { 0x00, 0x01, 0x3f, 0x40, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x91, 0x9f, 0xa0,
                                           0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc6, 0xca, 0xcc, 0xcf, 0xd0, 0xd3,
                                           0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff };
    for (unsigned it = 0; it < iters; it++) {
        size_t n;
        uint8_t *b;
        if (it % 3 == 0) {                        /* random body after a valid header */
            n = 6 + rnd() % 64;
            b = malloc(n);
            memcpy(b, "ZKP\x01\x05", 5);
            for (size_t k = 5; k < n; k++)
                b[k] = rnd() & 1 ? interesting[rnd() % sizeof interesting] : (uint8_t)rnd();
            if (rnd() & 1)
                b[5] = 0x80 | (uint8_t)(rnd() % 4);
            if (n > 7 && (rnd() & 1)) {
                b[6] = 0;
                b[7] = 1;
            }
        } else {                                  /* mutations of a valid frame */
            n = seedlen;
            b = malloc(n + 8);
            memcpy(b, seed, n);
            int muts = 1 + (int)(rnd() % 4);
            for (int m = 0; m < muts; m++) {
                size_t at = 5 + rnd() % (n - 5);
                switch (rnd() % 4) {
                case 0: b[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
                case 1: b[at] = interesting[rnd() % sizeof interesting]; break;
                case 2: b[at] = (uint8_t)rnd(); break;
                default: if (n > 6) n -= 1 + rnd() % 3; break;
                }
            }
        }
        zp_frame_t f;
        if (zp_frame_decode(&f, b, n, 0) == 0) {
            accepted++;
            accepted_is_msgpack(b, n);
            visit_map(&f.m, 1);
        }
        free(b);
    }
    printf("codec fuzz: %u frames, %u accepted, %u getter visits\n", iters, accepted, g_visits);
}

/* a mid-sized realistic frame for fuzzing and truncation */
static uint8_t *build_small(size_t *len)
{
    zp_enc_t e;
    CHECK(zp_enc_init(&e, 5, 1, 0) == 0);
    zp_enc_u64(&e, 1, 12345678901ull);
    zp_enc_i64(&e, 2, -77);
    zp_enc_str(&e, 3, "gpu-worker");
    zp_enc_bin(&e, 4, "\x01\x02\x03\x04", 4);
    zp_enc_bool(&e, 5, true);
    zp_enc_array_begin(&e, 6);
    for (unsigned i = 0; i < 3; i++) {
        zp_enc_array_begin(&e, 0);
        zp_enc_u64(&e, 0, i);
        zp_enc_u64(&e, 0, 1000 + i);
        zp_enc_end(&e);
    }
    zp_enc_end(&e);
    zp_enc_map_begin(&e, 7);
    zp_enc_u64(&e, 1, 2);
    zp_enc_str(&e, 2, "x");
    zp_enc_nil(&e, 3);
    zp_enc_end(&e);
    const char *ss[] = { "a", "bb" };
    zp_enc_str_array(&e, 8, ss, 2);
    CHECK(zp_enc_finish(&e, NULL, NULL) == 0);
    uint8_t *b = zp_enc_take(&e, len);
    zp_enc_close(&e);
    return b;
}

int main(void)
{
    size_t len, slen;
    uint8_t *all = build_all(&len);
    check_all(all, len);
    crosscheck_msgpack_c(all, len);
    test_getter_errors();
    test_hostile();
    test_no_alloc();
    uint8_t *small = build_small(&slen);
    test_truncations(small, slen);
    fuzz(small, slen);
    uint64_t t0 = zp_now_ns();
    zp_frame_t f;
    for (int k = 0; k < 200; k++)
        CHECK(zp_frame_decode(&f, all, len, ZP_FRAME_MAX_LIMIT) == 0);
    uint64_t t1 = zp_now_ns();
    for (int k = 0; k < 20000; k++)
        CHECK(zp_frame_decode(&f, small, slen, 0) == 0);
    uint64_t t2 = zp_now_ns();
    printf("codec decode: %zu-byte frame %.1f us, %zu-byte frame %.2f us\n", len, (double)(t1 - t0) / 200e3, slen,
           (double)(t2 - t1) / 20000e3);
    free(all);
    free(small);
    printf("codec: all tests passed\n");
    return 0;
}
