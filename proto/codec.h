/* codec.h - the wire frame of zkpipe's control plane: encoder and strict decoder.
 *
 * One ZMQ message frame = "ZKP" 0x01 (4-byte protocol tag + version) | command byte | one
 * msgpack map. Every map in a frame (top level and nested) has small non-negative integer keys
 * (0..ZP_KEY_MAX) without duplicates; key 0 of the top-level map is the message version
 * (uint 1..255). Values: nil, bool, int, str, bin, array, map (no float, no ext).
 *
 * Decoding is done once, strictly, before anything is used: zp_frame_decode() walks the raw
 * bytes with a bounds-checked reader (our own, no allocation: a header that claims 2^32
 * elements is refused because every element needs at least one byte), checks the tag, the
 * command, that the body is exactly one map with no trailing bytes, nesting depth, keys,
 * and indexes every map's keys. Typed getters then check type, integer range and length per
 * key and return ZP_EPROTO with a message naming the key path ("key 4.2: ...").
 * Strings and binaries returned by getters point INTO the frame buffer (not NUL-terminated):
 * the buffer must outlive the views; zp_map_get_strz copies with a NUL.
 *
 * The encoder writes into a growable malloc'd buffer bounded by a maximum frame size. Errors
 * are sticky: check once in zp_enc_finish. Containers nest (map inside map, arrays of maps...);
 * `key` arguments are ignored when the current container is an array.
 * Tests: tests/test_codec.c */
#ifndef ZP_CODEC_H
#define ZP_CODEC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZP_FRAME_TAG0 'Z'
#define ZP_FRAME_TAG1 'K'
#define ZP_FRAME_TAG2 'P'
#define ZP_FRAME_VERSION 1
#define ZP_FRAME_HDR 5                       /* tag (4) + command (1) */
#define ZP_FRAME_MAX_DEFAULT (1u << 20)      /* 1 MiB */
#define ZP_FRAME_MAX_LIMIT (16u << 20)       /* 16 MiB: upper bound of any configured max */
#define ZP_FRAME_MAX_DEPTH 8                 /* the top-level map is depth 1 */
#define ZP_KEY_MAX 63                        /* keys are 0..63 */
#define ZP_PATH_MAX 64                       /* key paths in messages (truncated beyond) */
#define ZP_CMD_MIN 1
#define ZP_CMD_MAX 127                       /* command bytes 1..127 */
/* flag for getters' key argument: the key is optional (absent or nil: return 0, output untouched) */
#define ZP_OPT(key) ((key) | 0x100u)

/* ---- encoder ---- */
typedef struct zp_enc {
    uint8_t *buf;
    size_t len, cap, max;
    int err;                                 /* sticky: first error */
    unsigned depth;                          /* open containers, top-level map = 1 */
    struct zp_enc_level { size_t hdr; uint64_t keys; uint32_t count; bool is_map; } stack[ZP_FRAME_MAX_DEPTH];
} zp_enc_t;

/* Start a frame: tag, command (ZP_CMD_MIN..ZP_CMD_MAX), the top-level map and key 0 =
 * msg_version (1..255). max: frame size limit (0 = ZP_FRAME_MAX_DEFAULT, capped at
 * ZP_FRAME_MAX_LIMIT). Returns 0 or the sticky error. */
int zp_enc_init(zp_enc_t *e, uint8_t cmd, unsigned msg_version, size_t max);
int zp_enc_u64(zp_enc_t *e, unsigned key, uint64_t v);
int zp_enc_i64(zp_enc_t *e, unsigned key, int64_t v);
int zp_enc_bool(zp_enc_t *e, unsigned key, bool v);
int zp_enc_nil(zp_enc_t *e, unsigned key);
int zp_enc_str(zp_enc_t *e, unsigned key, const char *s);          /* NUL-terminated */
int zp_enc_strn(zp_enc_t *e, unsigned key, const char *s, size_t n);
int zp_enc_bin(zp_enc_t *e, unsigned key, const void *p, size_t n);
int zp_enc_u64_array(zp_enc_t *e, unsigned key, const uint64_t *v, size_t n);
int zp_enc_u32_array(zp_enc_t *e, unsigned key, const uint32_t *v, size_t n);
int zp_enc_str_array(zp_enc_t *e, unsigned key, const char *const *s, size_t n);
/* nested containers: begin ... end (the count is patched at end) */
int zp_enc_map_begin(zp_enc_t *e, unsigned key);
int zp_enc_array_begin(zp_enc_t *e, unsigned key);
int zp_enc_end(zp_enc_t *e);                                        /* closes the innermost */
/* Close the top-level map and return the frame (owned by e; valid until zp_enc_close). Fails
 * with the sticky error, or ZP_ESTATE if nested containers are still open. */
int zp_enc_finish(zp_enc_t *e, const uint8_t **buf, size_t *len);
/* After finish: take the buffer (caller free()s it); e no longer owns it. */
uint8_t *zp_enc_take(zp_enc_t *e, size_t *len);
void zp_enc_close(zp_enc_t *e);                                     /* frees the buffer */

/* ---- decoder ---- */
/* A validated map view: offsets of each key's value (0 = absent) inside buf. */
typedef struct zp_map {
    const uint8_t *buf;                      /* the whole frame */
    size_t len;
    uint32_t off[ZP_KEY_MAX + 1];
    char path[ZP_PATH_MAX];                  /* key path for messages: "" top level, "4.2", "6[1].2" */
} zp_map_t;

typedef struct zp_frame {
    zp_map_t m;                              /* the top-level map */
    uint8_t cmd;
    unsigned msg_version;                    /* key 0 */
    size_t len;
} zp_frame_t;

/* Validate a frame and index its top-level map. max: 0 = ZP_FRAME_MAX_DEFAULT, capped at
 * ZP_FRAME_MAX_LIMIT; len > max is ZP_ETOOBIG; a valid tag with another frame version byte is
 * ZP_EVERSION. Everything else malformed is ZP_EPROTO with a message. Command must be
 * ZP_CMD_MIN..ZP_CMD_MAX; key 0 (message version, uint 1..255) is required. No allocation. */
int zp_frame_decode(zp_frame_t *f, const void *buf, size_t len, size_t max);
/* The same, and the command must be in cmd_mask (bit c = command c accepted; c < 64). */
int zp_frame_decode_cmds(zp_frame_t *f, const void *buf, size_t len, size_t max, uint64_t cmd_mask);
/* Peek at the command byte of a frame with a valid tag: -1 if too short / wrong tag. */
int zp_frame_peek_cmd(const void *buf, size_t len);

/* ---- typed getters on a map view ----
 * key: 0..ZP_KEY_MAX, or ZP_OPT(key) for an optional key. A missing required key, a wrong
 * type or a value out of bounds is ZP_EPROTO with a message naming the key path. */
bool zp_map_has(const zp_map_t *m, unsigned key);                   /* present and not nil */
int zp_map_get_u64(const zp_map_t *m, unsigned key, uint64_t lo, uint64_t hi, uint64_t *v);
int zp_map_get_u32(const zp_map_t *m, unsigned key, uint32_t lo, uint32_t hi, uint32_t *v);
int zp_map_get_i64(const zp_map_t *m, unsigned key, int64_t lo, int64_t hi, int64_t *v);
int zp_map_get_bool(const zp_map_t *m, unsigned key, bool *v);
/* str: *p points into the frame (not NUL-terminated); length <= maxlen. */
int zp_map_get_str(const zp_map_t *m, unsigned key, size_t maxlen, const char **p, size_t *len);
/* str copied to buf with NUL: length must be < bufsize and contain no NUL byte. */
int zp_map_get_strz(const zp_map_t *m, unsigned key, char *buf, size_t bufsize);
int zp_map_get_bin(const zp_map_t *m, unsigned key, size_t maxlen, const uint8_t **p, size_t *len);
/* bin of exactly len bytes copied into out */
int zp_map_get_bin_exact(const zp_map_t *m, unsigned key, void *out, size_t len);
/* array of at most maxn uints in [lo, hi] into out[maxn]; *n = count */
int zp_map_get_u64_array(const zp_map_t *m, unsigned key, size_t maxn, uint64_t lo, uint64_t hi,
                         uint64_t *out, size_t *n);
typedef struct { const char *p; size_t len; } zp_strref_t;
/* array of at most maxn strings each <= maxlen bytes, views into the frame */
int zp_map_get_str_array(const zp_map_t *m, unsigned key, size_t maxn, size_t maxlen,
                         zp_strref_t *out, size_t *n);
/* nested map */
int zp_map_get_map(const zp_map_t *m, unsigned key, zp_map_t *sub);

/* arrays of anything: iterate elements in order */
typedef struct zp_arr {
    const uint8_t *buf;
    size_t len;
    size_t pos;                              /* offset of the next element */
    uint32_t n, i;                           /* count, next index */
    char path[ZP_PATH_MAX];
} zp_arr_t;
int zp_map_get_array(const zp_map_t *m, unsigned key, size_t maxn, zp_arr_t *a);
/* next element as a given type; ZP_EPROTO at the end or on a type/range mismatch */
int zp_arr_next_u64(zp_arr_t *a, uint64_t lo, uint64_t hi, uint64_t *v);
int zp_arr_next_i64(zp_arr_t *a, int64_t lo, int64_t hi, int64_t *v);
int zp_arr_next_bool(zp_arr_t *a, bool *v);
int zp_arr_next_str(zp_arr_t *a, size_t maxlen, const char **p, size_t *len);
int zp_arr_next_bin(zp_arr_t *a, size_t maxlen, const uint8_t **p, size_t *len);
int zp_arr_next_map(zp_arr_t *a, zp_map_t *sub);
int zp_arr_next_array(zp_arr_t *a, size_t maxn, zp_arr_t *sub);
#endif
