/* bellman.h - bellman / bellperson (Filecoin) Groth16 files on BLS12-381 (issue 29).
 *
 * .params (Parameters::write): the verifying key block, then h, l, a, b_g1, b_g2, each a u32
 * big-endian count followed by that many uncompressed zcash-encoded points (G1 96 bytes, G2 192).
 * .vk (VerifyingKey::write): alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2
 * (uncompressed), u32 big-endian IC count, IC points. No header, no magic; bytes after the last
 * section are ignored (Zcash's files carry their MPC transcript there), and a .params is accepted
 * wherever a .vk is expected (its first block is the .vk).
 *
 * zcash encoding (zkcrypto/bls12_381 g1.rs, g2.rs): big-endian Fp, G2 coordinates c1 then c0;
 * the top 3 bits of byte 0 are flags: 0x80 compressed, 0x40 infinity, 0x20 sort (compressed only:
 * y is the lexicographically larger root). Uncompressed: 0x80 and 0x20 clear; infinity = 0x40 and
 * every other bit zero. Compressed forms: lib/ec/ec.h (zp_g?a_bls12_381_compress/decompress).
 *
 * Checks (as bellman's Parameters::read with checked = true): every count is checked against the
 * file size (64-bit arithmetic) before any point is read; coordinates canonical (< p); every point
 * on its curve; IC, h, l, a, b_g1, b_g2 never the identity ("point at infinity"; the six header
 * points may be); subgroup membership once, at open (ZP_BKEY_NO_SUBGROUP skips it for callers
 * that checked the file before, e.g. the keystore re-opening its own import; ZP_BKEY_USE_RECORD
 * skips it for a file this user's check record says passed it: see below).
 * Speed: decoding, the checks and the conversion run in one pass over each section, on a thread
 * pool (chunks of 1024 points taken in order; errors name the smallest bad index whatever the
 * thread count). Subgroup tests by the endomorphisms: G1 phi(P) = [-x^2] P, G2 psi(P) = [x] P
 * (short double-and-add chains in Jacobian coordinates, no inversion).
 *
 * Layout after open: the file is mapped MAP_PRIVATE writable and every point is converted IN
 * PLACE into zkpipe's affine Montgomery form (zp_g1a_bls12_381_t 96 bytes = the uncompressed G1
 * size, zp_g2a_bls12_381_t 192 bytes = the G2 size), each array shifted down 4 bytes so that it
 * starts on an 8-byte boundary (over its own count field). The identity never appears in the
 * arrays. One copy only: the page-cache pages of converted ranges are dropped as the conversion
 * goes (posix_fadvise DONTNEED), so a 47 GB file costs 47 GB of private memory, never 94.
 * Errors: ZP_EFORMAT "<file>: <field>[i]: <what>" (field = alpha_g1 .. ic, h, l, a, b_g1, b_g2).
 * Tests: tests/test_bellman.c. Fuzz: tests/fuzz/fuzz_bellman.c */
#ifndef ZP_FMT_BELLMAN_H
#define ZP_FMT_BELLMAN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/ec/ec.h"
#include "lib/fmt/fmt.h"

enum { ZP_BLS_G1_UNCOMPRESSED = 96, ZP_BLS_G2_UNCOMPRESSED = 192, ZP_BPROOF_SIZE = 192 };
/* bytes of the verifying-key block before the IC count: 3 G1 + 3 G2 */
#define ZP_BVK_HEAD_BYTES (3u * 96u + 3u * 192u)

/* key file formats, recognised from the first bytes (zp_key_format_sniff) */
typedef enum { ZP_KEYFMT_UNKNOWN = 0, ZP_KEYFMT_ZKEY = 1, ZP_KEYFMT_BELLMAN = 2 } zp_keyfmt_t;
/* "zkey" magic -> ZKEY; a first byte whose flag bits make an uncompressed point (0x00..0x1f,
 * or 0x40 infinity) -> BELLMAN; anything else UNKNOWN. n: bytes available at head (>= 4 for ZKEY). */
zp_keyfmt_t zp_key_format_sniff(const uint8_t *head, size_t n);
/* the same from a file (reads its first 4 bytes); <0 -errno with detail if unreadable */
int zp_key_format_of_file(zp_keyfmt_t *fmt, const char *path);

/* one uncompressed point -> affine Montgomery (identity -> (0,0)). Checks flags, canonical
 * coordinates, on-curve; the subgroup when subgroup is true. ZP_EFORMAT with a short reason
 * (the caller adds file and field). */
int zp_bls_g1_from_uncompressed(zp_g1a_bls12_381_t *r, const uint8_t in[96], bool subgroup);
int zp_bls_g2_from_uncompressed(zp_g2a_bls12_381_t *r, const uint8_t in[192], bool subgroup);
/* prime-order subgroup membership by the endomorphisms (on-curve checked too; identity: true) */
bool zp_bls_g1_torsion_free(const zp_g1a_bls12_381_t *p);
bool zp_bls_g2_torsion_free(const zp_g2a_bls12_381_t *p);
void zp_bls_g1_to_uncompressed(uint8_t out[96], const zp_g1a_bls12_381_t *p);
void zp_bls_g2_to_uncompressed(uint8_t out[192], const zp_g2a_bls12_381_t *p);

/* a section of a .params: where its count and points were in the file, how many there are,
 * and (after open) the converted array */
typedef struct {
    uint64_t count_off;              /* file offset of the u32 count */
    uint64_t file_off;               /* file offset of the first encoded point (count_off + 4) */
    uint32_t n;
    const void *pts;                 /* n converted points (zp_g1a / zp_g2a_bls12_381_t), 8-aligned; NULL if n == 0 */
} zp_bsec_t;

enum { ZP_BSEC_IC, ZP_BSEC_H, ZP_BSEC_L, ZP_BSEC_A, ZP_BSEC_B_G1, ZP_BSEC_B_G2, ZP_BSEC_N };

typedef struct zp_bkey {
    zp_binfile_t f;                  /* the mapping (private, converted in place) or caller memory */
    bool has_params;                 /* h, l, a, b_g1, b_g2 were read (not a vk-only open) */
    zp_g1a_bls12_381_t alpha_g1, beta_g1, delta_g1;
    zp_g2a_bls12_381_t beta_g2, gamma_g2, delta_g2;
    zp_bsec_t sec[ZP_BSEC_N];
    /* typed views of sec[].pts */
    const zp_g1a_bls12_381_t *ic, *h, *l, *a, *b_g1;
    const zp_g2a_bls12_381_t *b_g2;
    uint32_t n_ic, n_h, n_l, n_a, n_b_g1, n_b_g2;
    uint64_t end;                    /* bytes used; the rest of the file is ignored */
    /* (added after the first release of this struct; appended, nothing above moved) */
    uint8_t subgroup;                /* ZP_BKEY_SG_*: how subgroup membership was established */
    bool record_written;             /* ZP_BKEY_USE_RECORD: a check record was written for this file */
    char record_note[256];           /* ZP_BKEY_USE_RECORD: why no record was used or written ("" if none) */
} zp_bkey_t;

enum {
    ZP_BKEY_VK_ONLY = 1,             /* read only the verifying-key block (of a .vk or a .params) */
    ZP_BKEY_NO_SUBGROUP = 2,         /* skip the subgroup checks (on-curve is always checked) */
    ZP_BKEY_USE_RECORD = 4,          /* open only: skip the subgroup checks if this user's check record
                                      * says the file passed them; after a full check, write the record */
    ZP_BKEY_RECHECK = 8,             /* with ZP_BKEY_USE_RECORD: check fully even if a record matches,
                                      * then write the record again */
    ZP_BKEY_SCAN = 16,               /* open only: the header points (checked) and every section's count
                                      * (checked against the size), no section point read; nothing stays
                                      * mapped (sec[].pts NULL): what a caller needs to lay out memory for
                                      * opts.into */
};
enum { ZP_BKEY_SG_SKIPPED = 0, ZP_BKEY_SG_CHECKED = 1, ZP_BKEY_SG_RECORD = 2 };

/* maps path and converts (see above), on a new pool of all CPUs for a big file. 0 or
 * ZP_EFORMAT / -errno with detail. */
int zp_bkey_open(zp_bkey_t *k, const char *path, unsigned flags);
/* the same over caller memory (converted in place: buf is overwritten); name for messages;
 * ZP_BKEY_USE_RECORD / ZP_BKEY_RECHECK are ignored (memory has no inode) */
int zp_bkey_parse(zp_bkey_t *k, void *buf, size_t len, const char *name, unsigned flags);
/* the same with options (NULL: as zp_bkey_open) */
typedef struct {
    unsigned flags;                  /* ZP_BKEY_* */
    unsigned threads;                /* 0: the CPUs this process may run on; 1: the caller only */
    zp_pool_t *pool;                 /* a caller's pool to run on instead (threads ignored) */
    const char *record_dir;          /* NULL: zp_bkey_record_dir() */
    /* (added) open only, non-NULL: every section s is converted from a read-only mapping of the
     * file straight into into[s] (8-aligned, room for into_cap[s] points; a larger count is
     * ZP_EMISMATCH), never in place: the mapping's pages and the page cache are dropped as the
     * conversion goes and the file is unmapped before return, so the caller's memory holds the
     * only copy (the key store: doc/filecoin.md). sec[].pts and the typed views point there. */
    void *const *into;
    const uint64_t *into_cap;
} zp_bkey_opts_t;
int zp_bkey_open_opts(zp_bkey_t *k, const char *path, const zp_bkey_opts_t *o);
int zp_bkey_parse_opts(zp_bkey_t *k, void *buf, size_t len, const char *name, const zp_bkey_opts_t *o);
/* The check record (bellman_record.c; what it trusts: doc/filecoin.md). The default dir:
 * $ZKPIPE_KEYCHECK_DIR, else $XDG_CACHE_HOME/zkpipe/keycheck, else ~/.cache/zkpipe/keycheck,
 * else /tmp/zkpipe-keycheck-<euid>; it must be owned by the euid and not group/other-writable
 * (else no record is read or written, record_note says why, and every open checks fully).
 * One record per file: <dev>-<inode>.check = dev, inode, size, mtime_ns, ctime_ns of the
 * mapped descriptor + SHA-256 of the raw verifying-key block + scope (params / vk), written
 * after a full check if the file did not change meanwhile; a record matches only byte-exactly. */
int zp_bkey_record_dir(char *dir, size_t cap);
void zp_bkey_close(zp_bkey_t *k);
/* section name for messages: "ic", "h", "l", "a", "b_g1", "b_g2" */
const char *zp_bsec_name(int sec);

/* writers (test keys): Parameters::write / VerifyingKey::write from converted points.
 * vk_only writes the .vk block alone. 0 or -errno with detail. */
typedef struct {
    zp_g1a_bls12_381_t alpha_g1, beta_g1, delta_g1;
    zp_g2a_bls12_381_t beta_g2, gamma_g2, delta_g2;
    const zp_g1a_bls12_381_t *ic, *h, *l, *a, *b_g1;
    const zp_g2a_bls12_381_t *b_g2;
    uint64_t n_ic, n_h, n_l, n_a, n_b_g1, n_b_g2;
} zp_bkey_view_t;
int zp_bkey_write(const char *path, const zp_bkey_view_t *v, bool vk_only);

/* Proof::write / Proof::read: A (G1) | B (G2) | C (G1), compressed zcash encoding, 192 bytes.
 * read checks canonical / on-curve / subgroup and refuses the identity as bellman does. */
typedef struct {
    zp_g1a_bls12_381_t a, c;
    zp_g2a_bls12_381_t b;
} zp_bproof_t;
void zp_bproof_write(uint8_t out[192], const zp_bproof_t *p);
int zp_bproof_read(zp_bproof_t *p, const uint8_t in[192]);
#endif
