/* fmt.h - readers for snarkjs/circom binary files and the JSON files of the ecosystem.
 *
 * .zkey (Groth16, version 1..2), .wtns (version 2), .r1cs (version 1): see
 * shared/snarkjs-groth16.md. Files are mmap'd read-only; sections are found by id; every
 * count and size is checked against the file before anything is read. Pointers into the map
 * are byte pointers: NOT aligned; copy before using as typed arrays.
 * Every error returns ZP_EFORMAT / ZP_ECURVE / ZP_EVERSION / ZP_EMISMATCH / -errno and sets
 * zp_err_msg() to a message naming the file and what is wrong.
 * JSON: proof.json / public.json written byte-exactly as snarkjs (JSON.stringify(x, null, 1),
 * no trailing newline); verification_key.json, proof.json, public.json parsed strictly.
 * Tests: tests/test_fmt.c (crafted bad files), tests/oracle/ */
#ifndef ZP_FMT_H
#define ZP_FMT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { ZP_CURVE_NONE = 0, ZP_CURVE_BN254 = 1, ZP_CURVE_BLS12_381 = 2 } zp_curve_id_t;
const char *zp_curve_name(zp_curve_id_t c);            /* "bn128" / "bls12381" (snarkjs names) */
/* curve from its scalar field r given as n8 LE bytes; ZP_CURVE_NONE if unknown */
zp_curve_id_t zp_curve_from_r(const uint8_t *r, size_t n8);
zp_curve_id_t zp_curve_from_q(const uint8_t *q, size_t n8);

typedef struct {
    const char *path;          /* for messages; not owned */
    const uint8_t *map;        /* whole file */
    size_t size;
    int mapped;                /* 1: munmap on close; 0: caller's memory */
} zp_binfile_t;

typedef struct zp_zkey {
    zp_binfile_t f;
    zp_curve_id_t curve;
    uint32_t n8q, n8r;
    uint32_t n_vars, n_public, domain_size, log_n;
    /* section 2 points: affine, LEM (Montgomery little-endian), x then y */
    const uint8_t *alpha1, *beta1, *beta2, *gamma2, *delta1, *delta2;
    const uint8_t *ic;         /* n_public + 1 G1 */
    const uint8_t *coefs;      /* n_coefs entries of 12 + n8r bytes: u32 matrix, u32 row, u32 wire, value (R^2-Montgomery) */
    uint32_t n_coefs;
    const uint8_t *points_a, *points_b1, *points_b2, *points_c, *points_h;
    /* sizes in points: a, b1, b2: n_vars; c: n_vars - n_public - 1; h: domain_size */
    unsigned moved;            /* (added) ZP_ZKEY_MOVED_* bits: arrays zp_zkey_align_points moved */
} zp_zkey_t;
enum { ZP_ZKEY_MOVED_IC = 1, ZP_ZKEY_MOVED_A = 2, ZP_ZKEY_MOVED_B1 = 4, ZP_ZKEY_MOVED_B2 = 8,
       ZP_ZKEY_MOVED_C = 16, ZP_ZKEY_MOVED_H = 32 };

typedef struct zp_wtns {
    zp_binfile_t f;
    zp_curve_id_t curve;       /* from the prime (= r) */
    uint32_t n8;
    uint32_t n_witness;
    const uint8_t *values;     /* n_witness x n8 bytes, standard form LE, each checked < r */
    const uint8_t *prime;      /* r, n8 bytes, in the header */
} zp_wtns_t;

typedef struct zp_r1cs {
    zp_binfile_t f;
    zp_curve_id_t curve;
    uint32_t n8;
    uint32_t n_wires, n_pub_out, n_pub_in, n_prv_in, n_constraints;
    uint64_t n_labels;
    const uint8_t *constraints; /* section 2, fully validated at open (wire ids < n_wires, coefs < r) */
    size_t constraints_len;
} zp_r1cs_t;

int zp_zkey_open(zp_zkey_t *z, const char *path);
/* (added, session 17) the same without the O(n) check of the coefficient entries (matrix
 * 0/1, row < domain, wire < nVars, value < r; the section's size is still checked): only for
 * a caller that loads the key with zp_g16_key_load* next, which checks every entry again on
 * its pool (a 2^18 key: ~25 ms on one thread saved); until then z->coefs is untrusted. */
int zp_zkey_open_unchecked(zp_zkey_t *z, const char *path);
int zp_wtns_open(zp_wtns_t *w, const char *path);
/* the same without the O(n) range check of the values (w[0] == 1 is still checked): for a
 * caller that checks them on its pool with zp_wtns_check_values, or checks its own copy */
int zp_wtns_open_unchecked(zp_wtns_t *w, const char *path);
typedef struct zp_pool zp_pool_t;
/* every value < r, on the pool (NULL: this thread); the error names the smallest bad index */
int zp_wtns_check_values(const zp_wtns_t *w, zp_pool_t *pool);
int zp_r1cs_open(zp_r1cs_t *r, const char *path);
/* the same, over memory the caller keeps alive (e.g. a witness copied into a shm slot) */
int zp_zkey_parse(zp_zkey_t *z, const void *buf, size_t len, const char *name);
int zp_wtns_parse(zp_wtns_t *w, const void *buf, size_t len, const char *name);
int zp_r1cs_parse(zp_r1cs_t *r, const void *buf, size_t len, const char *name);
void zp_zkey_close(zp_zkey_t *z);
void zp_wtns_close(zp_wtns_t *w);
void zp_r1cs_close(zp_r1cs_t *r);
/* checks witness prime == zkey r, length == n_vars; r1cs prime, nWires == n_vars,
 * nPubOut + nPubIn == n_public, domain_size == the power of two snarkjs picks for
 * nConstraints + nPublic + 1 rows, and the zkey coefs are exactly the r1cs A and B terms in
 * snarkjs's order (matrix, row, wire; coefficient values are not compared) followed by the
 * nPublic + 1 public rows. ZP_EMISMATCH with detail.
 * (wtns open also rejects a witness whose value 0, the constant wire, is not 1.) */
int zp_check_wtns_zkey(const zp_wtns_t *w, const zp_zkey_t *z);
int zp_check_r1cs_zkey(const zp_r1cs_t *r, const zp_zkey_t *z);
/* (added) every point coordinate of the key < q: reads the whole file, so not done at open */
int zp_zkey_check_points(const zp_zkey_t *z);
/* (added, issue 12) for a zkey this process mapped (zp_zkey_open): moves every point array
 * (IC, A, B1, B2, C, H) whose bytes are not 8-byte aligned down onto the preceding multiple
 * of 8 in the private mapping (over its own section header) and updates the pointers, so a
 * proving key can use all of them in place (zp_g16_key_load_inplace); the file is not
 * changed. A no-op for aligned arrays and for zp_zkey_parse's caller memory. 0 or -errno. */
int zp_zkey_align_points(zp_zkey_t *z);
/* (added, issue 31) the same with each move split over pool's threads (NULL: one thread) */
int zp_zkey_align_points_pool(zp_zkey_t *z, zp_pool_t *pool);
/* (added, issue 12) the same for a mapped witness's values */
int zp_wtns_align_values(zp_wtns_t *w);
/* (added) the curve and counts of a zkey's header (sections 1 and 2) without reading the rest:
 * only curve, n8q, n8r, n_vars, n_public, domain_size, log_n are set; no pointers, nothing to close */
int zp_zkey_read_header(zp_zkey_t *z, const char *path);

/* ---- JSON ---- decimal strings are canonical standard-form integers (no sign, no leading
 * zeros). A BLS12-381 base-field coordinate has up to 115 digits, so coordinates use
 * ZP_DEC_LEN bytes; public signals (< r, at most 78 digits) keep char[100]. */
#define ZP_DEC_LEN 128
typedef struct {
    zp_curve_id_t curve;
    /* affine decimal: a = (x, y); b = ((x.c0, x.c1), (y.c0, y.c1)); infinity: x = y = "" */
    char a[2][ZP_DEC_LEN], b[2][2][ZP_DEC_LEN], c[2][ZP_DEC_LEN];
} zp_proof_json_t;
/* writes exactly snarkjs's bytes: {"pi_a": [x, y, "1"], "pi_b": [...], "pi_c": [...], "protocol": "groth16", "curve": ...}
 * _format: like snprintf (returns the full length, writes at most cap-1 bytes + NUL), but
 * returns 0 when a string is not a canonical decimal or the curve is unknown. A point with
 * all coordinates "" is infinity, written as snarkjs does (["0","1","0"]). n == 0 gives "[]"
 * (JSON.stringify; the snarkjs CLI writes "[\n]" there). _write: temp file + rename. */
int zp_proof_json_write(const char *path, const zp_proof_json_t *p);
size_t zp_proof_json_format(char *buf, size_t cap, const zp_proof_json_t *p);
int zp_public_json_write(const char *path, char (*const sig)[100], size_t n);
size_t zp_public_json_format(char *buf, size_t cap, char (*const sig)[100], size_t n);
/* parsing: accepts snarkjs's own output and any equivalent JSON; projective z must be "1"
 * (or "0" = infinity, reported by empty x) */
int zp_proof_json_read(zp_proof_json_t *p, const char *path);
/* public.json: array of decimal strings; *sig malloc'd (caller frees) */
int zp_public_json_read(char (**sig)[100], size_t *n, const char *path);
/* (added) the same from memory (name for messages); and the check that each signal is < r */
int zp_proof_json_parse(zp_proof_json_t *p, const char *text, size_t len, const char *name);
int zp_public_json_parse(char (**sig)[100], size_t *n, const char *text, size_t len, const char *name);
int zp_public_json_check(char (*const sig)[100], size_t n, zp_curve_id_t curve, const char *name);

typedef struct {
    zp_curve_id_t curve;
    uint32_t n_public;
    char alpha1[2][ZP_DEC_LEN], beta2[2][2][ZP_DEC_LEN], gamma2[2][2][ZP_DEC_LEN], delta2[2][2][ZP_DEC_LEN];
    char (*ic)[2][ZP_DEC_LEN];  /* n_public + 1 points, malloc'd */
} zp_vk_json_t;
int zp_vk_json_read(zp_vk_json_t *vk, const char *path);
int zp_vk_json_parse(zp_vk_json_t *vk, const char *text, size_t len, const char *name);  /* (added) */
void zp_vk_json_free(zp_vk_json_t *vk);

/* A parsed JSON document for readers outside fmt (input.json of the witness calculator): the
 * same strict RFC 8259 reader (nesting <= 32, objects <= 1024 members, no duplicate keys).
 * Nodes are indices; 0 is the root; a child's next sibling is 0 after the last. Strings are
 * decoded UTF-8 (not NUL-terminated), numbers their literal text. */
typedef struct zp_json zp_json_t;
enum { ZP_JSON_NULL, ZP_JSON_FALSE, ZP_JSON_TRUE, ZP_JSON_NUM, ZP_JSON_STR, ZP_JSON_ARR, ZP_JSON_OBJ };
int zp_json_parse(zp_json_t **out, const char *text, size_t len, const char *name);
int zp_json_load(zp_json_t **out, const char *path, size_t max);
void zp_json_free(zp_json_t **jp);
int zp_json_type(const zp_json_t *j, uint32_t node);
uint32_t zp_json_count(const zp_json_t *j, uint32_t node);      /* array elements / object members */
uint32_t zp_json_first(const zp_json_t *j, uint32_t node);      /* 0 if none */
uint32_t zp_json_next(const zp_json_t *j, uint32_t node);       /* 0 after the last */
const char *zp_json_text(const zp_json_t *j, uint32_t node, size_t *len);  /* string / number */
const char *zp_json_key(const zp_json_t *j, uint32_t node, size_t *len);   /* member key */
const char *zp_json_type_name(int type);                       /* "a string", ... */
#endif
