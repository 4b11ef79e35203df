/* vecs.c - the pre-synthesized partition file (vecs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fmt/vecs.h"
#include "lib/util/util.h"

static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void vecs_reset(zp_vecs_t *v)
{
    memset(v, 0, sizeof *v);
    v->fd = -1;
}

bool zp_vecs_is(const char *path)
{
    uint8_t m[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = pread(fd, m, sizeof m, 0);
    close(fd);
    return n == (ssize_t)sizeof m && !memcmp(m, ZP_VECS_MAGIC, 8);
}

/* a, b, c pointers from map and abc_cap */
static void vecs_point(zp_vecs_t *v)
{
    v->a = (uint64_t *)(v->map + ZP_VECS_HDR);
    v->b = v->a + 4 * v->abc_cap;
    v->c = v->b + 4 * v->abc_cap;
}

/* the file grows to len: within the mapping (reserved at create) or by a remap that may move it */
static int vecs_grow(zp_vecs_t *v, size_t len)
{
    if (ftruncate(v->fd, (off_t)len) < 0) return zp_err_set(-errno, "%s: %zu bytes: %s", v->path, len, strerror(errno));
    if (len > v->maplen) {
        void *m = mremap(v->map, v->maplen, len, MREMAP_MAYMOVE);
        if (m == MAP_FAILED) return zp_err_set(-errno, "%s: mremap: %s", v->path, strerror(errno));
        v->map = m;
        v->maplen = len;
        vecs_point(v);
    }
    v->len = len;
    return 0;
}

static uint64_t words_of(uint64_t bits) { return (bits + 63) / 64; }

int zp_vecs_create(zp_vecs_t *v, const char *path, uint32_t curve, uint64_t abc_cap, uint64_t reserve_w)
{
    vecs_reset(v);
    if (abc_cap == 0 || abc_cap > ZP_VECS_MAX) return zp_err_set(ZP_ETOOBIG, "%s: abc_cap %llu (1 .. 2^32)", path, (unsigned long long)abc_cap);
    if (snprintf(v->path, sizeof v->path, "%s", path) >= (int)sizeof v->path) return zp_err_set(ZP_ETOOBIG, "vectors path too long");
    if (reserve_w > ZP_VECS_MAX) reserve_w = ZP_VECS_MAX;
    size_t len = ZP_VECS_HDR + 96 * abc_cap, maplen = len + 32 * reserve_w + 8 * 3 * words_of(reserve_w);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return zp_err_set(-errno, "%s: create: %s", path, strerror(errno));
    if (ftruncate(fd, (off_t)len) < 0) {
        int e = errno;
        close(fd);
        unlink(path);
        return zp_err_set(-e, "%s: %zu bytes: %s", path, len, strerror(e));
    }
    void *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(fd);
        unlink(path);
        return zp_err_set(-e, "%s: mmap: %s", path, strerror(e));
    }
    v->fd = fd;
    v->writable = true;
    v->map = m;
    v->len = len;
    v->maplen = maplen;
    v->curve = curve;
    v->abc_cap = abc_cap;
    memcpy(v->map, ZP_VECS_MAGIC, 8);
    memcpy(v->map + 8, &curve, 4);
    put64(v->map + 40, abc_cap);
    put64(v->map + 48, ZP_VECS_HDR);
    vecs_point(v);
    return 0;
}

uint64_t zp_vecs_rs_sum(uint64_t off_rs, const uint8_t rs[ZP_VECS_RS_BYTES])
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 8; i++) h = (h ^ ((off_rs >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    for (unsigned i = 0; i < ZP_VECS_RS_BYTES; i++) h = (h ^ rs[i]) * 0x100000001b3ull;
    return h;
}

int zp_vecs_set_rs(zp_vecs_t *v, const uint64_t r[4], const uint64_t s[4])
{
    if (!v->writable || !v->w) return zp_err_set(ZP_ESTATE, "%s: r, s before w", v->path);
    if (v->has_rs) return zp_err_set(ZP_ESTATE, "%s: r, s already set", v->path);
    size_t off = v->len;
    int rc;
    if ((rc = vecs_grow(v, off + ZP_VECS_RS_BYTES))) return rc;
    v->w = (uint64_t *)(v->map + get64(v->map + 56));
    uint64_t doff = get64(v->map + 88);
    if (doff) {
        uint64_t *d = (uint64_t *)(v->map + doff);
        for (int i = 0; i < 3; i++) {
            v->dens[i] = d;
            d += words_of(v->dens_bits[i]);
        }
    }
    uint8_t *p = v->map + off;
    for (int i = 0; i < 4; i++) {
        put64(p + 8 * i, r[i]);
        put64(p + 32 + 8 * i, s[i]);
    }
    memcpy(v->r, r, sizeof v->r);
    memcpy(v->s, s, sizeof v->s);
    put64(v->map + 96, off);
    put64(v->map + 104, zp_vecs_rs_sum(off, p));
    uint32_t flags = ZP_VECS_F_RS;
    memcpy(v->map + 12, &flags, 4);
    v->has_rs = true;
    return 0;
}

int zp_vecs_set_w(zp_vecs_t *v, uint64_t n_w, uint64_t n_inputs, uint64_t abc_size)
{
    if (!v->writable) return zp_err_set(ZP_ESTATE, "%s: not opened for writing", v->path);
    if (v->dens[0] || v->has_rs) return zp_err_set(ZP_ESTATE, "%s: w after the density or r, s", v->path);
    if (n_w == 0 || n_w > ZP_VECS_MAX || n_inputs == 0 || n_inputs > n_w || abc_size == 0 || abc_size > v->abc_cap)
        return zp_err_set(ZP_EFORMAT, "%s: n_w %llu, n_inputs %llu, abc_size %llu (cap %llu) do not fit", v->path,
                          (unsigned long long)n_w, (unsigned long long)n_inputs, (unsigned long long)abc_size,
                          (unsigned long long)v->abc_cap);
    size_t off_w = ZP_VECS_HDR + 96 * v->abc_cap, len = off_w + 32 * n_w;
    int rc;
    if (len != v->len && (rc = vecs_grow(v, len))) return rc;
    v->n_w = n_w;
    v->n_inputs = n_inputs;
    v->abc_size = abc_size;
    put64(v->map + 16, n_w);
    put64(v->map + 24, n_inputs);
    put64(v->map + 32, abc_size);
    put64(v->map + 56, off_w);
    v->w = (uint64_t *)(v->map + off_w);
    return 0;
}

int zp_vecs_set_density(zp_vecs_t *v, const uint64_t *const bm[3], const uint64_t bits[3])
{
    if (!v->writable || !v->w) return zp_err_set(ZP_ESTATE, "%s: density before w", v->path);
    if (v->dens[0]) return zp_err_set(ZP_ESTATE, "%s: density already set", v->path);
    if (v->has_rs) return zp_err_set(ZP_ESTATE, "%s: density after r, s", v->path);
    uint64_t words = 0;
    for (int i = 0; i < 3; i++) {
        if (bits[i] > ZP_VECS_MAX || (bits[i] && !bm[i])) return zp_err_set(ZP_EFORMAT, "%s: density %d: %llu bits", v->path, i, (unsigned long long)bits[i]);
        words += words_of(bits[i]);
    }
    size_t off = v->len, len = off + 8 * words;
    int rc;
    if ((rc = vecs_grow(v, len))) return rc;
    v->w = (uint64_t *)(v->map + get64(v->map + 56));
    uint64_t *d = (uint64_t *)(v->map + off);
    for (int i = 0; i < 3; i++) {
        v->dens_bits[i] = bits[i];
        v->dens[i] = d;
        if (bits[i]) memcpy(d, bm[i], 8 * words_of(bits[i]));
        d += words_of(bits[i]);
        put64(v->map + 64 + 8 * i, bits[i]);
    }
    put64(v->map + 88, off);
    return 0;
}

int zp_vecs_open(zp_vecs_t *v, const char *path)
{
    vecs_reset(v);
    snprintf(v->path, sizeof v->path, "%s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)ZP_VECS_HDR) {
        close(fd);
        return zp_err_set(ZP_EFORMAT, "%s: not a vectors file (shorter than its %u-byte header, or not a file)", path,
                          ZP_VECS_HDR);
    }
    size_t len = (size_t)st.st_size;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(fd);
        return zp_err_set(-e, "%s: mmap: %s", path, strerror(e));
    }
    v->fd = fd;
    v->map = m;
    v->len = v->maplen = len;
    const uint8_t *h = m;
    int rc;
    if (memcmp(h, ZP_VECS_MAGIC, 8)) { rc = zp_err_set(ZP_EFORMAT, "%s: magic: not a vectors file", path); goto fail; }
    memcpy(&v->curve, h + 8, 4);
    uint32_t flags;
    memcpy(&flags, h + 12, 4);
    v->n_w = get64(h + 16);
    v->n_inputs = get64(h + 24);
    v->abc_size = get64(h + 32);
    v->abc_cap = get64(h + 40);
    uint64_t off_abc = get64(h + 48), off_w = get64(h + 56);
    if (flags & ~ZP_VECS_F_RS) { rc = zp_err_set(ZP_EFORMAT, "%s: flags 0x%x: unknown bits (0 or 0x%x expected)", path, flags, ZP_VECS_F_RS); goto fail; }
    if (off_w == 0) { rc = zp_err_set(ZP_EFORMAT, "%s: off_w 0: w was never written (zp_vecs_set_w)", path); goto fail; }
    if (v->abc_cap == 0 || v->abc_cap > ZP_VECS_MAX) { rc = zp_err_set(ZP_EFORMAT, "%s: abc_cap %llu (1 .. 2^32)", path, (unsigned long long)v->abc_cap); goto fail; }
    if (v->abc_size == 0 || v->abc_size > v->abc_cap) { rc = zp_err_set(ZP_EFORMAT, "%s: abc_size %llu (1 .. abc_cap %llu)", path, (unsigned long long)v->abc_size, (unsigned long long)v->abc_cap); goto fail; }
    if (v->n_w == 0 || v->n_w > ZP_VECS_MAX) { rc = zp_err_set(ZP_EFORMAT, "%s: n_w %llu (1 .. 2^32)", path, (unsigned long long)v->n_w); goto fail; }
    if (v->n_inputs == 0 || v->n_inputs > v->n_w) { rc = zp_err_set(ZP_EFORMAT, "%s: n_inputs %llu (1 .. n_w %llu)", path, (unsigned long long)v->n_inputs, (unsigned long long)v->n_w); goto fail; }
    if (off_abc != ZP_VECS_HDR) { rc = zp_err_set(ZP_EFORMAT, "%s: off_abc %llu (%u expected)", path, (unsigned long long)off_abc, ZP_VECS_HDR); goto fail; }
    if (off_w != ZP_VECS_HDR + 96 * v->abc_cap) { rc = zp_err_set(ZP_EFORMAT, "%s: off_w %llu (%llu expected)", path, (unsigned long long)off_w, (unsigned long long)(ZP_VECS_HDR + 96 * v->abc_cap)); goto fail; }
    uint64_t off_dens = get64(h + 88), end = off_w + 32 * v->n_w, words = 0;
    for (int i = 0; i < 3; i++) {
        v->dens_bits[i] = get64(h + 64 + 8 * i);
        if (v->dens_bits[i] > ZP_VECS_MAX) { rc = zp_err_set(ZP_EFORMAT, "%s: density %d: %llu bits (at most 2^32)", path, i, (unsigned long long)v->dens_bits[i]); goto fail; }
        words += words_of(v->dens_bits[i]);
    }
    if (off_dens && off_dens != end) { rc = zp_err_set(ZP_EFORMAT, "%s: off_dens %llu (%llu expected)", path, (unsigned long long)off_dens, (unsigned long long)end); goto fail; }
    if (!off_dens && words) { rc = zp_err_set(ZP_EFORMAT, "%s: density bit lengths without off_dens", path); goto fail; }
    if (off_dens) end += 8 * words;
    uint64_t off_rs = get64(h + 96), rs_sum = get64(h + 104);
    if (flags & ZP_VECS_F_RS) {   /* the caller's r, s: the last 64 bytes, checksummed */
        if (off_rs != end) { rc = zp_err_set(ZP_EFORMAT, "%s: r/s field: off_rs %llu (%llu expected)", path, (unsigned long long)off_rs, (unsigned long long)end); goto fail; }
        if (len != end + ZP_VECS_RS_BYTES) { rc = zp_err_set(ZP_EFORMAT, "%s: r/s field: %zu bytes, the header says %llu", path, len, (unsigned long long)(end + ZP_VECS_RS_BYTES)); goto fail; }
        if (zp_vecs_rs_sum(off_rs, h + off_rs) != rs_sum) { rc = zp_err_set(ZP_EFORMAT, "%s: r/s field at offset %llu: checksum mismatch (torn or corrupted caller's r, s)", path, (unsigned long long)off_rs); goto fail; }
        for (int i = 0; i < 4; i++) {
            v->r[i] = get64(h + off_rs + 8 * i);
            v->s[i] = get64(h + off_rs + 32 + 8 * i);
        }
        v->has_rs = true;
        end += ZP_VECS_RS_BYTES;
    } else if (off_rs || rs_sum) { rc = zp_err_set(ZP_EFORMAT, "%s: r/s field: off_rs/rs_sum set without flag 0x%x", path, ZP_VECS_F_RS); goto fail; }
    for (int i = 112; i < (int)ZP_VECS_HDR; i++)
        if (h[i]) { rc = zp_err_set(ZP_EFORMAT, "%s: reserved header byte %d is not 0", path, i); goto fail; }
    if (len != end) { rc = zp_err_set(ZP_EFORMAT, "%s: %zu bytes, the header says %llu", path, len, (unsigned long long)end); goto fail; }
    vecs_point(v);
    v->w = (uint64_t *)(v->map + off_w);
    if (off_dens) {
        uint64_t *d = (uint64_t *)(v->map + off_dens);
        for (int i = 0; i < 3; i++) {
            v->dens[i] = d;
            d += words_of(v->dens_bits[i]);
        }
    }
    return 0;
fail:
    zp_vecs_close(v);
    return rc;
}

void zp_vecs_close(zp_vecs_t *v)
{
    if (v->map) munmap(v->map, v->maplen);
    if (v->fd >= 0) close(v->fd);
    char p[sizeof v->path];
    memcpy(p, v->path, sizeof p);
    vecs_reset(v);
    memcpy(v->path, p, sizeof p);
}
