/* vecs.h - the pre-synthesized partition ("vectors file", issue 30): a partition whose w, a,
 * b, c were computed by the client (supraseal-c2's caller: bellperson synthesizes in Rust)
 * instead of a witness for zkpipe's synthesizer. The client writes one file (normally in
 * /dev/shm, so nothing touches a disk) and submits its path where a .wtns path goes; the
 * synthesizer recognises the magic, validates the file against the key and copies the
 * vectors into the slot, so the slot protocol and the GPU worker do not change.
 *
 * Layout (little-endian, every vector 64-byte aligned):
 *   0   magic "zpvecs\0\1"
 *   8   u32 curve (zp_curve_id_t)           12  u32 flags: ZP_VECS_F_RS or 0 (other bits refused)
 *   16  u64 n_w       values of w: inputs (ONE first) then aux, STANDARD form (< r)
 *   24  u64 n_inputs  of them inputs (ONE included)
 *   32  u64 abc_size  values of a, b, c used (each), MONTGOMERY form (R = 2^256), as the
 *                     slot holds them (zp_g16_synth) and supraseal-c2's Assignment gives them
 *   40  u64 abc_cap   room for each of a, b, c (>= abc_size)
 *   48  u64 off_abc   = 128: a, then b at off_abc + 32 abc_cap, c at off_abc + 64 abc_cap
 *   56  u64 off_w     = off_abc + 96 abc_cap (0 while w is not written: not submittable)
 *   64  u64 a_aux_bits, 72 u64 b_inp_bits, 80 u64 b_aux_bits: bellman's density bitmaps (bit i
 *                     = bit i%64 of word i/64), for a key with bellman's conventions, whose
 *                     A and B queries are compacted by them (libzkpipe_c2 writes supraseal's
 *                     Assignment densities here); 0, 0, 0 and off_dens 0 when absent
 *   88  u64 off_dens  = off_w + 32 n_w: a_aux, then b_inp, then b_aux, each ceil(bits/64) u64
 *   96  u64 off_rs    with ZP_VECS_F_RS (else 0): the caller's blinding r then s, 32 bytes each,
 *                     STANDARD form, little-endian limbs, at the end of the file (after the
 *                     bitmaps, or after w without them); supraseal-c2's r_s[i], s_s[i], used as
 *                     given (zero included, as supraseal does)
 *   104 u64 rs_sum    zp_vecs_rs_sum(off_rs, r, s): a torn or corrupted r, s is refused at open
 *   112..127 reserved (0)
 * File size = the end of the last section present: off_rs + 64, or off_dens + 8 * (words of
 * the three bitmaps), or off_w + 32 n_w. Files without ZP_VECS_F_RS (flags 0) read as before. Every field is untrusted when read (zp_vecs_open checks them
 * against the file's size, naming the field); values are checked where they are used.
 * Writer: zp_vecs_create (a, b, c region; the caller may write a, b, c at once, e.g. through
 * libzkpipe_c2's zkpipe_c2_alloc_abc), then zp_vecs_set_w (grows the file, maps w), then
 * optionally zp_vecs_set_density and zp_vecs_set_rs, in that order.
 * Tests: tests/test_vecs.c (unit 'vecs'). */
#ifndef ZP_FMT_VECS_H
#define ZP_FMT_VECS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ff/ff.h"

#define ZP_VECS_MAGIC "zpvecs\0\1"
#define ZP_VECS_HDR 128u
#define ZP_VECS_MAX ((uint64_t)1 << 32)   /* n_w, abc_cap limit */
#define ZP_VECS_F_RS 1u                   /* flags: the caller's r, s at off_rs */
#define ZP_VECS_RS_BYTES 64u

typedef struct zp_vecs {
    int fd;
    bool writable;
    uint8_t *map;           /* whole file, MAP_SHARED */
    size_t len, maplen;     /* the file's bytes; the mapping's (>= len: room reserved to grow) */
    uint32_t curve;
    uint64_t n_w, n_inputs, abc_size, abc_cap;
    uint64_t *a, *b, *c;    /* limbs: 4 per value (pointers into map) */
    uint64_t *w;            /* NULL until set */
    uint64_t dens_bits[3];  /* a_aux, b_inp, b_aux bit lengths (0 when absent) */
    uint64_t *dens[3];      /* the bitmaps, NULL when absent */
    bool has_rs;            /* ZP_VECS_F_RS: r, s below are the caller's (checksum checked) */
    uint64_t r[4], s[4];    /* standard form limbs (not checked against a field: the reader does) */
    char path[512];
} zp_vecs_t;

/* true when the first 8 bytes of path are the magic (a missing or short file: false) */
bool zp_vecs_is(const char *path);
/* creates path (O_EXCL, mode 0600) with room for abc_cap values of a, b, c (zeroed); the
 * mapping reserves address space for reserve_w values of w and their bitmaps, so that set_w
 * and set_density up to that size never move a, b, c (a writer may hold pointers into them) */
int zp_vecs_create(zp_vecs_t *v, const char *path, uint32_t curve, uint64_t abc_cap, uint64_t reserve_w);
/* sets the sizes and grows the file for n_w values of w (mapped at v->w, zeroed) */
int zp_vecs_set_w(zp_vecs_t *v, uint64_t n_w, uint64_t n_inputs, uint64_t abc_size);
/* appends the three density bitmaps after w (once, after zp_vecs_set_w); a NULL bitmap with
 * bits 0 is an empty one */
int zp_vecs_set_density(zp_vecs_t *v, const uint64_t *const bm[3], const uint64_t bits[3]);
/* appends the caller's r, s (standard form, 4 little-endian limbs each) after the last section
 * and sets ZP_VECS_F_RS; once, after zp_vecs_set_w (and zp_vecs_set_density if any) */
int zp_vecs_set_rs(zp_vecs_t *v, const uint64_t r[4], const uint64_t s[4]);
/* the checksum at header byte 104: FNV-1a 64 over off_rs and the 64 bytes of r, s */
uint64_t zp_vecs_rs_sum(uint64_t off_rs, const uint8_t rs[ZP_VECS_RS_BYTES]);
/* maps an existing file read-only and checks its header against its size: ZP_EFORMAT naming
 * the path and the field. A file without w (off_w = 0) is refused. */
int zp_vecs_open(zp_vecs_t *v, const char *path);
void zp_vecs_close(zp_vecs_t *v);   /* unmaps (the file stays: unlink is the creator's) */
#endif
