/* json_write.c - proof.json / public.json writers, byte-exact with snarkjs:
 * JSON.stringify(x, null, 1) (1-space indent, no trailing newline), keys in snarkjs's order
 * pi_a, pi_b, pi_c, protocol, curve. An EMPTY public array is "[]" as JSON.stringify writes
 * it (the snarkjs CLI's bfj writer emits "[\n]" there: tests/fixtures/README.md).
 * Only canonical decimal strings are written (anything else: format returns 0). Files are
 * written to a temporary name in the same folder and renamed. Tests: tests/test_fmt.c */
#include "lib/fmt/fmt_int.h"
#include "lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char *buf;
    size_t cap, len;
    bool bad;
} wbuf_t;

static void w_str(wbuf_t *w, const char *s)
{
    size_t n = strlen(s);
    if (w->len < w->cap) {
        size_t room = w->cap - w->len;
        memcpy(w->buf + w->len, s, n < room ? n : room);
    }
    w->len += n;
}

static void w_indent(wbuf_t *w, int level)
{
    w_str(w, "\n");
    for (int i = 0; i < level; i++) w_str(w, " ");
}

static bool dec_ok(const char *s)
{
    if (!s[0] || (s[0] == '0' && s[1])) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* array of n strings at nesting level (the '[' is already at that level) */
static void w_strarray(wbuf_t *w, int level, const char *const *v, size_t n)
{
    w_str(w, "[");
    for (size_t i = 0; i < n; i++) {
        if (!dec_ok(v[i])) w->bad = true;
        w_indent(w, level + 1);
        w_str(w, "\"");
        w_str(w, v[i]);
        w_str(w, i + 1 < n ? "\"," : "\"");
    }
    if (n) w_indent(w, level);
    w_str(w, "]");
}

static void w_g1(wbuf_t *w, int level, const char (*xy)[ZP_DEC_LEN])
{
    const char *v[3] = {xy[0], xy[1], "1"};
    if (!xy[0][0] && !xy[1][0]) { v[0] = "0"; v[1] = "1"; v[2] = "0"; }    /* infinity */
    w_strarray(w, level, v, 3);
}

static void w_g2(wbuf_t *w, int level, const char (*xy)[2][ZP_DEC_LEN])
{
    bool inf = !xy[0][0][0] && !xy[0][1][0] && !xy[1][0][0] && !xy[1][1][0];
    const char *x[2] = {xy[0][0], xy[0][1]}, *y[2] = {xy[1][0], xy[1][1]}, *z[2] = {"1", "0"};
    if (inf) { x[0] = x[1] = y[1] = z[0] = z[1] = "0"; y[0] = "1"; }
    w_str(w, "[");
    w_indent(w, level + 1);
    w_strarray(w, level + 1, x, 2);
    w_str(w, ",");
    w_indent(w, level + 1);
    w_strarray(w, level + 1, y, 2);
    w_str(w, ",");
    w_indent(w, level + 1);
    w_strarray(w, level + 1, z, 2);
    w_indent(w, level);
    w_str(w, "]");
}

static size_t w_finish(wbuf_t *w)
{
    if (w->cap) w->buf[w->len < w->cap ? w->len : w->cap - 1] = 0;
    return w->bad ? 0 : w->len;
}

size_t zp_proof_json_format(char *buf, size_t cap, const zp_proof_json_t *p)
{
    wbuf_t w = {buf, cap, 0, false};
    if (p->curve != ZP_CURVE_BN254 && p->curve != ZP_CURVE_BLS12_381) w.bad = true;
    w_str(&w, "{");
    w_indent(&w, 1);
    w_str(&w, "\"pi_a\": ");
    w_g1(&w, 1, p->a);
    w_str(&w, ",");
    w_indent(&w, 1);
    w_str(&w, "\"pi_b\": ");
    w_g2(&w, 1, p->b);
    w_str(&w, ",");
    w_indent(&w, 1);
    w_str(&w, "\"pi_c\": ");
    w_g1(&w, 1, p->c);
    w_str(&w, ",");
    w_indent(&w, 1);
    w_str(&w, "\"protocol\": \"groth16\",");
    w_indent(&w, 1);
    w_str(&w, "\"curve\": \"");
    w_str(&w, zp_curve_name(p->curve));
    w_str(&w, "\"\n}");
    return w_finish(&w);
}

size_t zp_public_json_format(char *buf, size_t cap, char (*const sig)[100], size_t n)
{
    wbuf_t w = {buf, cap, 0, false};
    w_str(&w, "[");
    for (size_t i = 0; i < n; i++) {
        if (!memchr(sig[i], 0, 100) || !dec_ok(sig[i])) {
            w.bad = true;
            break;
        }
        w_indent(&w, 1);
        w_str(&w, "\"");
        w_str(&w, sig[i]);
        w_str(&w, i + 1 < n ? "\"," : "\"");
    }
    if (n) w_indent(&w, 0);
    w_str(&w, "]");
    return w_finish(&w);
}

/* write len bytes to path through a temporary file in the same directory + rename */
static int write_file_atomic(const char *path, const char *data, size_t len)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    if (!tmp) return zp_err_set(-ENOMEM, "%s: out of memory", path);
    static unsigned seq;   /* distinct temp names for concurrent writers in one process */
    snprintf(tmp, pl + 32, "%s.tmp.%ld.%u", path, (long)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd < 0) {
        rc = zp_err_set(-errno, "%s: open: %s", tmp, strerror(errno));
        goto out_free;
    }
    for (size_t off = 0; off < len;) {
        ssize_t k = write(fd, data + off, len - off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            rc = zp_err_set(-errno, "%s: write: %s", tmp, strerror(errno));
            close(fd);
            goto out_unlink;
        }
        off += (size_t)k;
    }
    if (close(fd) < 0) {
        rc = zp_err_set(-errno, "%s: close: %s", tmp, strerror(errno));
        goto out_unlink;
    }
    if (rename(tmp, path) < 0) {
        rc = zp_err_set(-errno, "%s: rename to %s: %s", tmp, path, strerror(errno));
        goto out_unlink;
    }
    goto out_free;
out_unlink:
    unlink(tmp);
out_free:
    free(tmp);
    return rc;
}

int zp_proof_json_write(const char *path, const zp_proof_json_t *p)
{
    char buf[2048];   /* 8 coordinates of <= 115 digits + layout: < 1500 bytes */
    size_t n = zp_proof_json_format(buf, sizeof buf, p);
    if (n == 0 || n >= sizeof buf)
        return zp_err_set(ZP_EFORMAT, "%s: proof has a coordinate that is not a canonical decimal string, or no curve", path);
    return write_file_atomic(path, buf, n);
}

int zp_public_json_write(const char *path, char (*const sig)[100], size_t n)
{
    size_t cap = 8 + n * 106, len;   /* per entry: newline, space, quotes, comma, <= 99 digits */
    char *buf = malloc(cap);
    if (!buf) return zp_err_set(-ENOMEM, "%s: out of memory for %zu signals", path, n);
    len = zp_public_json_format(buf, cap, sig, n);
    int rc;
    if (len == 0 || len >= cap)
        rc = zp_err_set(ZP_EFORMAT, "%s: a public signal is not a canonical decimal string below 10^80", path);
    else
        rc = write_file_atomic(path, buf, len);
    free(buf);
    return rc;
}

