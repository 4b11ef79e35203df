/* binfile.c - the binfileutils container shared by .zkey, .wtns, .r1cs (and .ptau), curve
 * identification, and the big-integer text helpers of the JSON code.
 * Container: magic[4], u32 version, u32 nSections, then nSections x {u32 id, u64 size, payload}.
 * Invariants: a file is mapped read-only and never written (zp_fmt_align_inplace moves bytes
 * inside the private mapping only - new anonymous pages swapped in - over a section header); every (offset, size) recorded in a
 * zp_fmt_container_t was checked to lie inside the file with overflow-safe u64 arithmetic
 * (size <= file_size - offset, never offset + size) before anything behind it is read.
 * Tests: tests/test_fmt.c */
#include "lib/fmt/fmt_int.h"
#include "lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* little-endian moduli */
static const uint8_t bn254_q[32] = {
    0x47, 0xfd, 0x7c, 0xd8, 0x16, 0x8c, 0x20, 0x3c, 0x8d, 0xca, 0x71, 0x68, 0x91, 0x6a, 0x81, 0x97,
    0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45, 0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
static const uint8_t bn254_r[32] = {
    0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9, 0x79, 0x48, 0xe8, 0x33, 0x28,
    0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45, 0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
static const uint8_t bls_q[48] = {
    0xab, 0xaa, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xb9, 0xff, 0xff, 0x53, 0xb1, 0xfe, 0xff, 0xab, 0x1e,
    0x24, 0xf6, 0xb0, 0xf6, 0xa0, 0xd2, 0x30, 0x67, 0xbf, 0x12, 0x85, 0xf3, 0x84, 0x4b, 0x77, 0x64,
    0xd7, 0xac, 0x4b, 0x43, 0xb6, 0xa7, 0x1b, 0x4b, 0x9a, 0xe6, 0x7f, 0x39, 0xea, 0x11, 0x01, 0x1a};
static const uint8_t bls_r[32] = {
    0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0x02, 0xa4, 0xbd, 0x53,
    0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8, 0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29, 0x53, 0xa7, 0xed, 0x73};

const char *zp_curve_name(zp_curve_id_t c)
{
    switch (c) {
    case ZP_CURVE_BN254: return "bn128";
    case ZP_CURVE_BLS12_381: return "bls12381";
    default: return "unknown";
    }
}

const uint8_t *zp_fmt_curve_q(zp_curve_id_t c, uint32_t *n8)
{
    switch (c) {
    case ZP_CURVE_BN254: *n8 = 32; return bn254_q;
    case ZP_CURVE_BLS12_381: *n8 = 48; return bls_q;
    default: *n8 = 0; return NULL;
    }
}

const uint8_t *zp_fmt_curve_r(zp_curve_id_t c, uint32_t *n8)
{
    switch (c) {
    case ZP_CURVE_BN254: *n8 = 32; return bn254_r;
    case ZP_CURVE_BLS12_381: *n8 = 32; return bls_r;
    default: *n8 = 0; return NULL;
    }
}

zp_curve_id_t zp_curve_from_r(const uint8_t *r, size_t n8)
{
    if (n8 != 32 || !r) return ZP_CURVE_NONE;
    if (!memcmp(r, bn254_r, 32)) return ZP_CURVE_BN254;
    if (!memcmp(r, bls_r, 32)) return ZP_CURVE_BLS12_381;
    return ZP_CURVE_NONE;
}

zp_curve_id_t zp_curve_from_q(const uint8_t *q, size_t n8)
{
    if (!q) return ZP_CURVE_NONE;
    if (n8 == 32 && !memcmp(q, bn254_q, 32)) return ZP_CURVE_BN254;
    if (n8 == 48 && !memcmp(q, bls_q, 48)) return ZP_CURVE_BLS12_381;
    return ZP_CURVE_NONE;
}

const char *zp_fmt_prime_name(const uint8_t *p, size_t n8)
{
    if (zp_curve_from_r(p, n8) == ZP_CURVE_BN254) return "r of bn128";
    if (zp_curve_from_r(p, n8) == ZP_CURVE_BLS12_381) return "r of bls12381";
    if (zp_curve_from_q(p, n8) == ZP_CURVE_BN254) return "q of bn128";
    if (zp_curve_from_q(p, n8) == ZP_CURVE_BLS12_381) return "q of bls12381";
    return "an unknown prime";
}

int zp_fmt_cmp_le(const uint8_t *a, const uint8_t *b, size_t n)
{
    while (n--) {
        if (a[n] != b[n]) return a[n] < b[n] ? -1 : 1;
    }
    return 0;
}

const char *zp_fmt_name(const zp_binfile_t *f)
{
    return f->path ? f->path : "(memory)";
}

int zp_fmt_map(zp_binfile_t *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return zp_err_set(-e, "%s: open: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return zp_err_set(-e, "%s: fstat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return zp_err_set(ZP_EFORMAT, "%s: not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return zp_err_set(ZP_EFORMAT, "%s: empty file", path);
    }
    if ((uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return zp_err_set(ZP_ETOOBIG, "%s: %lld bytes do not fit in memory", path, (long long)st.st_size);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED) return zp_err_set(-e, "%s: mmap: %s", path, strerror(e));
    f->map = m;
    f->size = (size_t)st.st_size;
    f->mapped = 1;
    return 0;
}

void zp_fmt_unmap(zp_binfile_t *f)
{
    if (f->mapped && f->map) munmap((void *)f->map, f->size);
    f->map = NULL;
    f->size = 0;
    f->mapped = 0;
}

int zp_fmt_container(zp_fmt_container_t *c, const zp_binfile_t *f, const char magic[4],
                     uint32_t vmin, uint32_t vmax)
{
    const char *name = zp_fmt_name(f);
    memset(c, 0, sizeof *c);
    if (f->size < 12)
        return zp_err_set(ZP_EFORMAT, "%s: %zu bytes, too short for a %.4s file header (12)", name,
                          f->size, magic);
    if (memcmp(f->map, magic, 4)) {
        char got[4];
        for (int i = 0; i < 4; i++) got[i] = (f->map[i] >= 0x20 && f->map[i] < 0x7f) ? (char)f->map[i] : '?';
        return zp_err_set(ZP_EFORMAT, "%s: bad magic \"%.4s\", expected \"%.4s\"", name, got, magic);
    }
    c->version = zp_fmt_u32(f->map + 4);
    if (c->version < vmin || c->version > vmax) {
        if (vmin == vmax)
            return zp_err_set(ZP_EVERSION, "%s: %.4s version %u not supported (only %u)", name, magic,
                              c->version, vmin);
        return zp_err_set(ZP_EVERSION, "%s: %.4s version %u not supported (%u..%u)", name, magic,
                          c->version, vmin, vmax);
    }
    c->n_sections = zp_fmt_u32(f->map + 8);
    uint64_t pos = 12, fsize = f->size;
    for (uint32_t i = 0; i < c->n_sections; i++) {
        if (fsize - pos < 12)
            return zp_err_set(ZP_EFORMAT, "%s: section header %u of %u at offset %llu runs past the end of the file (%llu bytes)",
                              name, i + 1, c->n_sections, (unsigned long long)pos, (unsigned long long)fsize);
        uint32_t id = zp_fmt_u32(f->map + pos);
        uint64_t size = zp_fmt_u64(f->map + pos + 4);
        pos += 12;
        if (size > fsize - pos)
            return zp_err_set(ZP_EFORMAT, "%s: section %u at offset %llu is %llu bytes, beyond the end of the file (%llu bytes left)",
                              name, id, (unsigned long long)pos, (unsigned long long)size,
                              (unsigned long long)(fsize - pos));
        if (id < ZP_FMT_MAX_SECTION_ID) {
            if (c->sec[id].present)
                return zp_err_set(ZP_EFORMAT, "%s: duplicate section %u (at offsets %llu and %llu)", name, id,
                                  (unsigned long long)c->sec[id].off, (unsigned long long)pos);
            c->sec[id].present = true;
            c->sec[id].off = pos;
            c->sec[id].size = size;
        }
        pos += size;
    }
    if (pos != fsize)
        return zp_err_set(ZP_EFORMAT, "%s: %llu unexpected bytes after the last of %u sections", name,
                          (unsigned long long)(fsize - pos), c->n_sections);
    return 0;
}

int zp_fmt_section(const uint8_t **p, uint64_t *size, const zp_fmt_container_t *c,
                   const zp_binfile_t *f, uint32_t id, const char *what)
{
    if (id >= ZP_FMT_MAX_SECTION_ID || !c->sec[id].present)
        return zp_err_set(ZP_EFORMAT, "%s: missing section %u (%s)", zp_fmt_name(f), id, what);
    *p = f->map + c->sec[id].off;
    *size = c->sec[id].size;
    return 0;
}

/* ---- big integers as text -------------------------------------------------------------- */

/* le = le * m + a over n8 bytes; returns nonzero carry on overflow */
static unsigned mul_add_le(uint8_t *le, size_t n8, unsigned m, unsigned a)
{
    unsigned carry = a;
    for (size_t i = 0; i < n8; i++) {
        unsigned v = (unsigned)le[i] * m + carry;
        le[i] = (uint8_t)v;
        carry = v >> 8;
    }
    return carry;
}

int zp_fmt_text_to_le(uint8_t *le, size_t n8, const char *s, size_t len)
{
    memset(le, 0, n8);
    if (len == 0) return -1;
    unsigned base = 10;
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        len -= 2;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned d;
        char ch = s[i];
        if (ch >= '0' && ch <= '9') d = (unsigned)(ch - '0');
        else if (base == 16 && ch >= 'a' && ch <= 'f') d = (unsigned)(ch - 'a' + 10);
        else if (base == 16 && ch >= 'A' && ch <= 'F') d = (unsigned)(ch - 'A' + 10);
        else return -1;
        if (mul_add_le(le, n8, base, d)) return -2;
    }
    return 0;
}

size_t zp_fmt_le_to_dec(char *out, size_t cap, const uint8_t *le, size_t n8)
{
    uint8_t t[64];
    char rev[160];
    size_t nd = 0;
    if (n8 > sizeof t) n8 = sizeof t;
    memcpy(t, le, n8);
    for (;;) {
        bool nz = false;
        unsigned rem = 0;
        for (size_t i = n8; i--;) {   /* t /= 10, from the most significant byte */
            unsigned v = rem << 8 | t[i];
            t[i] = (uint8_t)(v / 10);
            rem = v % 10;
            nz |= t[i] != 0;
        }
        rev[nd++] = (char)('0' + rem);
        if (!nz) break;
    }
    if (cap == 0) return nd;
    size_t n = nd < cap - 1 ? nd : cap - 1;
    for (size_t i = 0; i < n; i++) out[i] = rev[nd - 1 - i];
    out[n] = 0;
    return nd;
}

/* (added, issue 12) the n bytes at *p of a file this process mapped, moved down to the
 * previous multiple of align so they can be read as typed arrays where they are; the
 * mapping is private, so the file and the page cache are unchanged and nothing is resident
 * twice. The up to align - 1 bytes before *p are overwritten: only for a section's payload,
 * whose 12-byte section header (parsed already, never read again) precedes it.
 * How (issue 31, session 16): the pages [lo, hi) that hold the payload are rebuilt in a fresh
 * anonymous mapping (populated at once: one kernel call instead of one fault per page) - the
 * bytes before and after the payload as they are, the payload shifted - and that mapping is
 * moved over [lo, hi) with mremap(MREMAP_FIXED). Before, the bytes were moved in the file's
 * own private mapping, each page a read fault plus a copy-on-write fault: 34 MB took ~300 ms
 * here against ~30 ms now (a 2^16 zkey's key load: 145 -> ~25 ms CPU). The source pages are
 * dropped as their bytes are copied (MADV_DONTNEED on the file mapping: they were clean), so
 * the peak stays at the new pages plus one chunk a thread. */
enum { ALIGN_MAX_CHUNKS = 1024, ALIGN_MIN_CHUNK = (size_t)1 << 16, ALIGN_CHUNK = (size_t)1 << 20 };
typedef struct {
    uint8_t *dst;          /* the payload's place in the new pages */
    const uint8_t *src;    /* the payload in the file mapping */
    size_t n, chunks;
} align_job_t;

/* the whole pages inside [p, p + n) of a clean private file mapping given back: a later read
 * faults them in again from the page cache (advice: failure is harmless) */
static void fmt_drop(const uint8_t *p, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) pg = 4096;
    uintptr_t lo = ((uintptr_t)p + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1), hi = ((uintptr_t)p + n) & ~((uintptr_t)pg - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* len bytes of fresh anonymous memory for the pages [lo, lo + len): from 2 MiB up placed at
 * the same offset modulo 2 MiB as lo, with the huge-page hint (zp_advise_huge), so that the
 * copy faults 2 MiB at a time and mremap moves whole huge pages (session 17: 4 KiB faults cost
 * ~10 us each on this VM; MAP_POPULATE of 4 KiB pages ~5 us a page); below 2 MiB populated
 * 4 KiB pages. NULL with errno on failure. */
static uint8_t *align_fresh(uintptr_t lo, size_t len)
{
    const size_t huge = (size_t)2 << 20;
    if (len < huge || len > SIZE_MAX - huge) {
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        return m == MAP_FAILED ? NULL : m;
    }
    uint8_t *m = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    size_t head = ((lo & (huge - 1)) - ((uintptr_t)m & (huge - 1))) & (huge - 1);   /* m + head == lo mod 2 MiB */
    if (head) (void)munmap(m, head);
    if (huge - head) (void)munmap(m + head + len, huge - head);
    zp_advise_huge(m + head, len);
    return m + head;
}

static void align_job(void *arg, unsigned tid, unsigned nt)
{
    align_job_t *j = arg;
    for (size_t c = tid; c < j->chunks; c += nt) {
        size_t lo, hi;
        zp_split(j->n, (unsigned)c, (unsigned)j->chunks, &lo, &hi);
        memcpy(j->dst + lo, j->src + lo, hi - lo);
        fmt_drop(j->src + lo, hi - lo);   /* whole pages inside: copied, clean, never read again */
    }
}

int zp_fmt_align_inplace(zp_binfile_t *f, const uint8_t **p, size_t n, size_t align)
{
    return zp_fmt_align_inplace_pool(f, p, n, align, NULL);
}

int zp_fmt_align_inplace_pool(zp_binfile_t *f, const uint8_t **p, size_t n, size_t align, zp_pool_t *pool)
{
    uintptr_t a = (uintptr_t)*p, shift = a & (uintptr_t)(align - 1);
    if (!shift || n == 0) return 0;
    const char *name = zp_fmt_name(f);
    if (!f->mapped) return zp_err_set(-EINVAL, "%s: not mapped by this process: cannot move its bytes", name);
    uintptr_t base = (uintptr_t)f->map;
    if (align > 12 || (align & (align - 1)) || a < base + 12 || a > base + f->size || n > base + f->size - a)
        return zp_err_set(-EINVAL, "%s: cannot align %zu bytes at offset %llu to %zu", name, n,
                          (unsigned long long)(a - base), align);
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) pg = 4096;
    /* hi stays inside the mapping's last page (the file's size rounded up to a page) */
    uintptr_t lo = (a - shift) & ~((uintptr_t)pg - 1), hi = (a + n + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    size_t len = hi - lo;
    uint8_t *fresh = align_fresh(lo, len);
    if (!fresh) {
        int e = errno;
        return zp_err_set(-e, "%s: %zu bytes for the moved section at offset %llu: %s", name, len,
                          (unsigned long long)(a - base), strerror(e));
    }
    size_t head = a - shift - lo, tail_at = head + n;   /* the payload's place in fresh */
    memcpy(fresh, (const void *)lo, head);
    align_job_t j = {.dst = fresh + head, .src = (const uint8_t *)a, .n = n, .chunks = 1};
    unsigned nt = pool ? zp_pool_size(pool) : 1;
    /* chunks of ~1 MiB (the source pages dropped behind each), at least two a thread where
     * the payload has 64 KiB for each */
    if (n / ALIGN_CHUNK > 1) j.chunks = n / ALIGN_CHUNK < ALIGN_MAX_CHUNKS ? n / ALIGN_CHUNK : ALIGN_MAX_CHUNKS;
    if (nt > 1 && j.chunks < nt * 2 && n / ALIGN_MIN_CHUNK >= 2)
        j.chunks = n / ALIGN_MIN_CHUNK < nt * 2 ? n / ALIGN_MIN_CHUNK : nt * 2;
    if (nt > 1 && j.chunks > 1) zp_pool_run(pool, align_job, &j);
    else align_job(&j, 0, 1);
    /* the bytes after the payload as the in-place move left them: the payload's last shift
     * bytes (moved over, so unchanged) and what follows it up to the page's end */
    memcpy(fresh + tail_at, (const void *)(lo + tail_at), len - tail_at);
    (void)mprotect(fresh, len, PROT_READ);   /* read-only like the rest; failure is harmless */
    if (mremap(fresh, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)lo) == MAP_FAILED) {
        int e = errno;
        munmap(fresh, len);
        return zp_err_set(-e, "%s: mremap of the moved section at offset %llu: %s", name,
                          (unsigned long long)(a - base), strerror(e));
    }
    *p = (const uint8_t *)(a - shift);
    return 0;
}
