/* test_vecs.c - the pre-synthesized partition file (lib/fmt/vecs.h): a file written by
 * zp_vecs_create / set_w / set_density reads back the same (sizes, vectors, bitmaps); every
 * header field damaged on its own is refused with ZP_EFORMAT naming it; a file without w, a
 * short file and another format are refused; zp_vecs_is tells the magic; the caller's r, s
 * (ZP_VECS_F_RS) read back, and a torn or damaged r/s field is refused naming it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fmt/vecs.h"
#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #c, zp_err_msg()); exit(1); } } while (0)

static char dir[] = "/tmp/zp_test_vecs_XXXXXX";

static void patch(const char *path, size_t off, const void *b, size_t n)
{
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0 && pwrite(fd, b, n, (off_t)off) == (ssize_t)n);
    close(fd);
}

/* a copy of good with 8 bytes at off replaced by v: zp_vecs_open must refuse it naming want */
static void expect_bad(const char *good, size_t off, uint64_t v, const char *want)
{
    char p[128], cmd[300];
    snprintf(p, sizeof p, "%s/bad.vecs", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, p);
    CHECK(system(cmd) == 0);
    patch(p, off, &v, 8);
    zp_vecs_t r;
    int rc = zp_vecs_open(&r, p);
    if (rc != ZP_EFORMAT || !strstr(zp_err_msg(), want)) {
        fprintf(stderr, "offset %zu = %llu: rc %d, '%s' (wanted '%s')\n", off, (unsigned long long)v, rc, zp_err_msg(), want);
        exit(1);
    }
    CHECK(r.map == NULL);
}

int main(void)
{
    CHECK(mkdtemp(dir));
    char p[128];
    snprintf(p, sizeof p, "%s/a.vecs", dir);
    zp_vecs_t v;
    CHECK(zp_vecs_create(&v, p, 2, 10, 0) == 0);
    zp_vecs_t w;
    CHECK(zp_vecs_create(&w, p, 2, 10, 0) < 0);   /* O_EXCL */
    CHECK(zp_vecs_open(&w, p) == ZP_EFORMAT && strstr(zp_err_msg(), "off_w 0"));   /* no w yet */
    CHECK(zp_vecs_create(&w, "/nonexistent/x.vecs", 2, 10, 0) < 0);
    zp_vecs_close(&v);
    unlink(p);
    CHECK(zp_vecs_create(&v, p, 2, 10, 0) == 0);
    for (int i = 0; i < 40; i++) v.a[i] = 100 + i, v.b[i] = 200 + i, v.c[i] = 300 + i;
    CHECK(zp_vecs_set_w(&v, 7, 8, 9) == ZP_EFORMAT);   /* n_inputs > n_w */
    CHECK(zp_vecs_set_w(&v, 7, 2, 11) == ZP_EFORMAT);  /* abc_size > cap */
    CHECK(zp_vecs_set_w(&v, 7, 2, 9) == 0);
    for (int i = 0; i < 28; i++) v.w[i] = 1000 + i;
    CHECK(v.a[3] == 103 && v.c[39] == 339);            /* kept across the remap */
    uint64_t b0[1] = {0x5}, b1[1] = {0x1}, b2[2] = {~0ull, 0x3};
    const uint64_t *bm[3] = {b0, b1, b2};
    uint64_t bits[3] = {5, 2, 66};
    CHECK(zp_vecs_set_density(&v, bm, bits) == 0);
    CHECK(zp_vecs_set_density(&v, bm, bits) == ZP_ESTATE);
    CHECK(zp_vecs_set_w(&v, 7, 2, 9) == ZP_ESTATE);
    zp_vecs_close(&v);
    CHECK(zp_vecs_is(p) && !zp_vecs_is("/nonexistent") && !zp_vecs_is(ZP_FIXTURES_DIR "/bn128_chain/witness-0.wtns"));

    zp_vecs_t r;
    CHECK(zp_vecs_open(&r, p) == 0);
    CHECK(r.curve == 2 && r.n_w == 7 && r.n_inputs == 2 && r.abc_size == 9 && r.abc_cap == 10);
    CHECK(r.a[0] == 100 && r.b[0] == 200 && r.c[39] == 339 && r.w[0] == 1000 && r.w[27] == 1027);
    CHECK(r.dens_bits[0] == 5 && r.dens_bits[2] == 66 && r.dens[0][0] == 5 && r.dens[1][0] == 1 && r.dens[2][1] == 3);
    CHECK(r.len == ZP_VECS_HDR + 96 * 10 + 32 * 7 + 8 * 4);
    zp_vecs_close(&r);

    char cmd0[400];
    /* every field damaged alone */
    expect_bad(p, 0, 0x736e7477, "magic");
    expect_bad(p, 8, (uint64_t)2 << 32 | 2, "flags");
    expect_bad(p, 8, (uint64_t)ZP_VECS_F_RS << 32 | 2, "r/s field: off_rs 0");   /* the flag without r, s */
    expect_bad(p, 16, 8, "off_dens 1312");                         /* n_w: the bitmaps no longer follow w */
    expect_bad(p, 16, 0, "n_w 0");
    expect_bad(p, 24, 8, "n_inputs 8");
    expect_bad(p, 24, 0, "n_inputs 0");
    expect_bad(p, 32, 11, "abc_size 11");
    expect_bad(p, 32, 0, "abc_size 0");
    expect_bad(p, 40, 0, "abc_cap 0");
    expect_bad(p, 40, 9, "off_w");                                  /* cap no longer matches off_w */
    expect_bad(p, 48, 64, "off_abc 64");
    expect_bad(p, 56, 0, "off_w 0");
    expect_bad(p, 56, 200, "off_w 200");
    expect_bad(p, 64, 130, "bytes, the header says");               /* a_aux bits: more words */
    expect_bad(p, 80, (uint64_t)1 << 40, "density 2");
    expect_bad(p, 88, 8, "off_dens 8");
    expect_bad(p, 96, 1, "r/s field: off_rs/rs_sum set without flag");
    expect_bad(p, 104, 1, "r/s field: off_rs/rs_sum set without flag");
    expect_bad(p, 112, 1, "reserved header byte 112");
    /* the caller's r, s (ZP_VECS_F_RS): after the bitmaps, read back; torn or damaged: refused
     * naming the r/s field; only after w (and the density) */
    char rp[160];
    snprintf(rp, sizeof rp, "%s/rs.vecs", dir);
    CHECK(zp_vecs_create(&v, rp, 2, 10, 7) == 0);
    const uint64_t R[4] = {5, 6, 7, 8}, S[4] = {0, 0, 0, 0};
    CHECK(zp_vecs_set_rs(&v, R, S) == ZP_ESTATE);   /* before w */
    CHECK(zp_vecs_set_w(&v, 7, 2, 9) == 0 && zp_vecs_set_density(&v, bm, bits) == 0);
    CHECK(zp_vecs_set_rs(&v, R, S) == 0 && zp_vecs_set_rs(&v, R, S) == ZP_ESTATE);
    CHECK(zp_vecs_set_density(&v, bm, bits) == ZP_ESTATE);
    zp_vecs_close(&v);
    CHECK(zp_vecs_open(&r, rp) == 0 && r.has_rs && r.r[0] == 5 && r.r[3] == 8 && r.s[0] == 0 && r.s[3] == 0);
    CHECK(r.dens_bits[2] == 66 && r.dens[2][1] == 3 && r.len == ZP_VECS_HDR + 96 * 10 + 32 * 7 + 8 * 4 + 64);
    zp_vecs_close(&r);
    size_t rs_off = ZP_VECS_HDR + 96 * 10 + 32 * 7 + 8 * 4;
    expect_bad(rp, rs_off + 8, 7, "r/s field at offset");          /* r's limb 1 changed: checksum */
    expect_bad(rp, rs_off + 56, 1, "checksum mismatch");            /* s's last limb */
    expect_bad(rp, 104, 12345, "checksum mismatch");                 /* the checksum itself */
    expect_bad(rp, 96, rs_off - 8, "r/s field: off_rs");
    expect_bad(rp, 8, 2, "set without flag");                       /* the flag cleared */
    snprintf(cmd0, sizeof cmd0, "head -c %zu '%s' > '%s/rscut.vecs'", rs_off + 40, rp, dir);
    CHECK(system(cmd0) == 0);
    snprintf(rp, sizeof rp, "%s/rscut.vecs", dir);
    CHECK(zp_vecs_open(&r, rp) == ZP_EFORMAT && strstr(zp_err_msg(), "r/s field"));
    /* short file, a directory, not there */
    char q[160], cmd[400];
    snprintf(q, sizeof q, "%s/short.vecs", dir);
    snprintf(cmd, sizeof cmd, "head -c 100 '%s' > '%s'", p, q);
    CHECK(system(cmd) == 0);
    CHECK(zp_vecs_open(&r, q) == ZP_EFORMAT && strstr(zp_err_msg(), "header"));
    CHECK(zp_vecs_open(&r, dir) == ZP_EFORMAT);
    CHECK(zp_vecs_open(&r, "/nonexistent/x.vecs") < 0);
    /* room reserved at create: w and the bitmaps do not move a, b, c */
    snprintf(q, sizeof q, "%s/r.vecs", dir);
    CHECK(zp_vecs_create(&v, q, 2, 10, 100) == 0);
    uint64_t *a0 = v.a;
    CHECK(zp_vecs_set_w(&v, 100, 2, 10) == 0 && zp_vecs_set_density(&v, bm, bits) == 0 && v.a == a0);
    zp_vecs_close(&v);
    CHECK(zp_vecs_open(&r, q) == 0 && r.n_w == 100);
    zp_vecs_close(&r);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    printf("vecs: ok\n");
    return 0;
}
