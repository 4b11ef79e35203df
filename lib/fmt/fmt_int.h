/* fmt_int.h - private helpers of the fmt module: the binfileutils container (magic, version,
 * section table found by id), little-endian loads from unaligned bytes, big-integer compares
 * on little-endian byte strings, and the curve constants q and r.
 * Every load goes through zp_fmt_u32 / zp_fmt_u64 on byte pointers: no typed access to the map.
 * Tests: tests/test_fmt.c */
#ifndef ZP_FMT_INT_H
#define ZP_FMT_INT_H
#include "lib/fmt/fmt.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZP_FMT_MAX_SECTION_ID 32     /* ids at or above this are skipped (never needed) */

typedef struct {
    uint64_t off;                    /* payload offset in the file */
    uint64_t size;                   /* payload size, off + size <= file size */
    bool present;
} zp_fmt_section_t;

typedef struct {
    uint32_t version;
    uint32_t n_sections;
    zp_fmt_section_t sec[ZP_FMT_MAX_SECTION_ID];
} zp_fmt_container_t;

static inline uint32_t zp_fmt_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t zp_fmt_u64(const uint8_t *p)
{
    return (uint64_t)zp_fmt_u32(p) | (uint64_t)zp_fmt_u32(p + 4) << 32;
}

/* name for messages: f->path or "(memory)" */
const char *zp_fmt_name(const zp_binfile_t *f);
/* mmap path read-only into f (f->mapped = 1); empty files are rejected with ZP_EFORMAT */
int zp_fmt_map(zp_binfile_t *f, const char *path);
void zp_fmt_unmap(zp_binfile_t *f);
/* (added) moves the n bytes at *p (a section payload of a mapped file, align <= 8 a power of
 * two) down to the previous multiple of align inside the private mapping, over the section
 * header before it, and updates *p; 0, or -EINVAL / -errno (f not mapped, out of range) */
int zp_fmt_align_inplace(zp_binfile_t *f, const uint8_t **p, size_t n, size_t align);
/* (added, issue 31) the same with the move split over pool's threads (from 64 KiB a chunk;
 * NULL or one thread: one memmove); the bytes that land are the same */
int zp_fmt_align_inplace_pool(zp_binfile_t *f, const uint8_t **p, size_t n, size_t align, zp_pool_t *pool);
/* checks magic and version in [vmin, vmax] and walks the section table: every section lies
 * inside the file, no id below ZP_FMT_MAX_SECTION_ID twice, no bytes after the last one. */
int zp_fmt_container(zp_fmt_container_t *c, const zp_binfile_t *f, const char magic[4],
                     uint32_t vmin, uint32_t vmax);
/* the section with that id, or ZP_EFORMAT "<file>: missing section <id> (<what>)" */
int zp_fmt_section(const uint8_t **p, uint64_t *size, const zp_fmt_container_t *c,
                   const zp_binfile_t *f, uint32_t id, const char *what);

/* compare little-endian unsigned integers of n bytes: <0, 0, >0 */
int zp_fmt_cmp_le(const uint8_t *a, const uint8_t *b, size_t n);
/* the curve's moduli as little-endian bytes (NULL for ZP_CURVE_NONE) */
const uint8_t *zp_fmt_curve_q(zp_curve_id_t c, uint32_t *n8);
const uint8_t *zp_fmt_curve_r(zp_curve_id_t c, uint32_t *n8);
/* which prime this is, for messages: "r of bn128", "q of bls12381" or "unknown" */
const char *zp_fmt_prime_name(const uint8_t *p, size_t n8);

/* big-integer text helpers used by the JSON code (numbers up to 512 bits) */
/* decimal or 0x-hex text of an unsigned integer -> n8 LE bytes; -1 if not a number, -2 if too big */
int zp_fmt_text_to_le(uint8_t *le, size_t n8, const char *s, size_t len);
/* n8 LE bytes -> decimal, NUL-terminated; returns length (cap >= 160 always enough for 64 bytes) */
size_t zp_fmt_le_to_dec(char *out, size_t cap, const uint8_t *le, size_t n8);
#endif
