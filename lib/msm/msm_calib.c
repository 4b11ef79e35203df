/* msm_calib.c - the MSM's method choice (msm.h, issue 31): endomorphism split or plain per
 * group, curve, scalar shape and size, from a table of measured one-thread times (the
 * built-in one below, or a file written by `zkpipe msm calibrate`, cli/bench_arith.c).
 * File format (text, '#' starts a comment, blank lines skipped):
 *   zkpipe-msm-calib 1                       the first line that is not blank or a comment
 *   machine FREE TEXT                        optional, once
 *   GROUP CURVE SCALARS LOG2N ENDO_MS PLAIN_MS   rows: g1|g2 bn254|bls12_381 uniform|witness,
 *                                            LOG2N 1..30, times > 0 (ms; only their ratio is used)
 * Every error names the file and line. The table in use is process-wide (a load replaces it
 * under a lock; readers read it without one: loads happen at start, or in tests between MSMs).
 * Tests: tests/test_msm.c (test_calib_*) */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msm/msm.h"
#include "lib/msm/msm_calib_path.h"
#include "lib/util/util.h"

enum { CAL_LOG_MAX = 30, CAL_KEYS = 8, CAL_LINE = 512 };
/* the split is taken where it was measured at least 2% faster: within that the two are a tie
 * on this machine's noise, and plain leaves the split's scratch untouched (~96 B a G1 point:
 * less resident memory, less memory traffic when threads share the bus) */
#define CAL_SPLIT_BELOW 0.98
/* the share of scalars longer than 128 bits in the "witness" rows' mix (bench_arith.c's
 * wit_scalars: 10% uniform, 5% r - small); "uniform" rows: 1 */
#define CAL_WIT_LONG 0.15

typedef struct {
    float endo[CAL_KEYS][CAL_LOG_MAX + 1], plain[CAL_KEYS][CAL_LOG_MAX + 1];  /* 0: none */
    char source[320];
} cal_table_t;

/* key: group (1, 2), curve (0 bn254, 1 bls12_381), shape (witness) */
static unsigned cal_key(unsigned g, unsigned curve, bool wit)
{
    return ((g == 2) << 2) | ((curve & 1) << 1) | (wit ? 1u : 0u);
}

/* The built-in table: `zkpipe msm calibrate` (one thread, process CPU ms, endo and plain
 * alternately, best of 2, one run from 2^20 up) on this project's build machine: AMD EPYC
 * (2 cores, 1 MiB L2 per core, 32 MiB L3, no AVX-512 IFMA: the scalar batched additions),
 * 2026-12-04. Columns: group, curve (0 bn254, 1 bls12_381), witness, log2n, endo ms, plain ms. */
static const struct { uint8_t g, curve, wit, log2n; float endo, plain; } cal_builtin[] = {
#include "lib/msm/msm_calib_default.h"
};
#define CAL_BUILTIN_SOURCE "built-in (AMD EPYC, 2 cores, 1 MiB L2/core, 32 MiB L3, scalar path; 2026-12-04)"

static cal_table_t cal_cur;
static pthread_mutex_t cal_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cal_once = PTHREAD_ONCE_INIT;
static int cal_init_rc;
static char cal_init_msg[400];
static atomic_int cal_forced;      /* ZP_MSM_METHOD: 0 auto, else the method */
static atomic_bool cal_asked, cal_warned;

static void cal_builtin_fill(cal_table_t *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < sizeof cal_builtin / sizeof cal_builtin[0]; i++) {
        unsigned k = cal_key(cal_builtin[i].g, cal_builtin[i].curve, cal_builtin[i].wit);
        t->endo[k][cal_builtin[i].log2n] = cal_builtin[i].endo;
        t->plain[k][cal_builtin[i].log2n] = cal_builtin[i].plain;
    }
    snprintf(t->source, sizeof t->source, "%s", CAL_BUILTIN_SOURCE);
}

void zp_msm_calib_reset(void)
{
    pthread_mutex_lock(&cal_lock);
    cal_builtin_fill(&cal_cur);
    pthread_mutex_unlock(&cal_lock);
}

/* split s (modified) into up to max whitespace-separated tokens; the count, or max + 1 when
 * there are more */
static unsigned cal_tokens(char *s, char **tok, unsigned max)
{
    unsigned n = 0;
    char *save = NULL;
    for (char *p = strtok_r(s, " \t\r\n", &save); p; p = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == max) return max + 1;
        tok[n++] = p;
    }
    return n;
}

static int cal_parse(cal_table_t *t, FILE *f, const char *path)
{
    char *line = NULL, *tok[8];
    size_t cap = 0;
    ssize_t got;
    unsigned ln = 0, rows = 0;
    bool header = false, machine = false, seen[CAL_KEYS] = {false};
    unsigned first[CAL_KEYS][CAL_LOG_MAX + 1];
    float endo[CAL_KEYS][CAL_LOG_MAX + 1] = {{0}}, plain[CAL_KEYS][CAL_LOG_MAX + 1] = {{0}};
    char mach[200] = "";
    int rc = 0;
    memset(first, 0, sizeof first);
    while ((got = getline(&line, &cap, f)) >= 0) {
        ln++;
        size_t len = (size_t)got;
        if (len > CAL_LINE) {
            rc = zp_err_set(ZP_EFORMAT, "%s:%u: line longer than %u characters", path, ln, CAL_LINE);
            goto out;
        }
        if (strlen(line) != len) {
            rc = zp_err_set(ZP_EFORMAT, "%s:%u: a NUL byte (not a text file)", path, ln);
            goto out;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char raw[CAL_LINE + 1];
        memcpy(raw, line, len + 1);
        unsigned nt = cal_tokens(line, tok, 7);
        if (nt == 0) continue;
        if (!header) {
            if (nt != 2 || strcmp(tok[0], "zkpipe-msm-calib") || strcmp(tok[1], "1")) {
                rc = zp_err_set(ZP_EFORMAT,
                                "%s:%u: expected the header 'zkpipe-msm-calib 1', got '%s'",
                                path, ln, tok[0]);
                goto out;
            }
            header = true;
            continue;
        }
        if (!strcmp(tok[0], "machine")) {
            if (machine) {
                rc = zp_err_set(ZP_EFORMAT, "%s:%u: a second 'machine' line", path, ln);
                goto out;
            }
            machine = true;
            const char *m = strstr(raw, "machine") + 7;
            while (*m == ' ' || *m == '\t') m++;
            snprintf(mach, sizeof mach, "%.*s", (int)strcspn(m, "\r\n"), m);
            continue;
        }
        if (nt != 6) {
            rc = zp_err_set(ZP_EFORMAT,
                            "%s:%u: expected 'GROUP CURVE SCALARS LOG2N ENDO_MS PLAIN_MS' (6 fields), got %s%u",
                            path, ln, nt > 6 ? "more than " : "", nt > 6 ? 6 : nt);
            goto out;
        }
        unsigned g, cv, wit;
        if (!strcmp(tok[0], "g1")) g = 1;
        else if (!strcmp(tok[0], "g2")) g = 2;
        else {
            rc = zp_err_set(ZP_EFORMAT, "%s:%u: group '%s' is not g1 or g2", path, ln, tok[0]);
            goto out;
        }
        if (!strcmp(tok[1], "bn254")) cv = 0;
        else if (!strcmp(tok[1], "bls12_381")) cv = 1;
        else {
            rc = zp_err_set(ZP_EFORMAT, "%s:%u: curve '%s' is not bn254 or bls12_381", path, ln, tok[1]);
            goto out;
        }
        if (!strcmp(tok[2], "uniform")) wit = 0;
        else if (!strcmp(tok[2], "witness")) wit = 1;
        else {
            rc = zp_err_set(ZP_EFORMAT, "%s:%u: scalars '%s' is not uniform or witness", path, ln, tok[2]);
            goto out;
        }
        char *end;
        errno = 0;
        unsigned long lg = strtoul(tok[3], &end, 10);
        if (*end || end == tok[3] || errno || lg < 1 || lg > CAL_LOG_MAX || tok[3][0] == '-') {
            rc = zp_err_set(ZP_EFORMAT,
                            "%s:%u: log2n '%s' is not an integer in 1..%u",
                            path, ln, tok[3], CAL_LOG_MAX);
            goto out;
        }
        double ms[2];
        for (int j = 0; j < 2; j++) {
            errno = 0;
            ms[j] = strtod(tok[4 + j], &end);
            if (*end || end == tok[4 + j] || errno || !isfinite(ms[j]) || ms[j] <= 0 || ms[j] > 1e9) {
                rc = zp_err_set(ZP_EFORMAT,
                                "%s:%u: %s '%s' is not a time in ms (a number > 0, <= 1e9)",
                                path, ln, j ? "PLAIN_MS" : "ENDO_MS", tok[4 + j]);
                goto out;
            }
        }
        unsigned k = cal_key(g, cv, wit);
        if (first[k][lg]) {
            rc = zp_err_set(ZP_EFORMAT,
                            "%s:%u: a second row for %s %s %s 2^%lu (the first at line %u)",
                            path, ln, tok[0], tok[1], tok[2], lg, first[k][lg]);
            goto out;
        }
        first[k][lg] = ln;
        endo[k][lg] = (float)ms[0];
        plain[k][lg] = (float)ms[1];
        seen[k] = true;
        rows++;
    }
    if (ferror(f)) {
        rc = zp_err_set(-EIO, "%s:%u: read error", path, ln + 1);
        goto out;
    }
    if (!header) {
        rc = zp_err_set(ZP_EFORMAT, "%s:%u: no header 'zkpipe-msm-calib 1' (empty file)", path, ln);
        goto out;
    }
    if (!rows) {
        rc = zp_err_set(ZP_EFORMAT, "%s:%u: no rows", path, ln);
        goto out;
    }
    for (unsigned k = 0; k < CAL_KEYS; k++)
        if (seen[k]) {                   /* the file's keys replace the built-in rows */
            memcpy(t->endo[k], endo[k], sizeof endo[k]);
            memcpy(t->plain[k], plain[k], sizeof plain[k]);
        }
    snprintf(t->source, sizeof t->source, "%s (%s)", path, machine ? mach : "machine not named");
out:
    free(line);
    return rc;
}

int zp_msm_calib_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = -errno;
        return zp_err_set(e, "%s: cannot open: %s", path, strerror(-e));
    }
    cal_table_t *t = malloc(sizeof *t);
    if (!t) {
        fclose(f);
        return zp_err_set(-ENOMEM, "%s: out of memory", path);
    }
    pthread_mutex_lock(&cal_lock);
    *t = cal_cur;
    pthread_mutex_unlock(&cal_lock);
    if (!t->source[0]) cal_builtin_fill(t);
    int rc = cal_parse(t, f, path);
    fclose(f);
    if (rc == 0) {
        pthread_mutex_lock(&cal_lock);
        cal_cur = *t;
        pthread_mutex_unlock(&cal_lock);
    }
    free(t);
    return rc;
}

/* ZP_MSM_METHOD, then the file ($ZKPIPE_MSM_CALIB, else the share dir's, if it exists) */
static void cal_do_init(void)
{
    pthread_mutex_lock(&cal_lock);
    if (!cal_cur.source[0]) cal_builtin_fill(&cal_cur);
    pthread_mutex_unlock(&cal_lock);
    const char *m = getenv("ZP_MSM_METHOD");
    if (m && *m) {
        if (!strcmp(m, "endo")) atomic_store(&cal_forced, ZP_MSM_ENDO);
        else if (!strcmp(m, "plain")) atomic_store(&cal_forced, ZP_MSM_PLAIN);
        else if (strcmp(m, "auto")) {
            cal_init_rc = zp_err_set(ZP_EFORMAT, "ZP_MSM_METHOD='%s' is not endo, plain or auto", m);
            snprintf(cal_init_msg, sizeof cal_init_msg, "%s", zp_err_msg());
            return;
        }
    }
    const char *e = getenv("ZKPIPE_MSM_CALIB");
    const char *path = e && *e ? e : ZP_MSM_CALIB_SHARE;
    int rc = zp_msm_calib_load(path);
    if (rc == -ENOENT) rc = 0;           /* no file: the built-in table */
    if (rc) {
        cal_init_rc = rc;
        snprintf(cal_init_msg, sizeof cal_init_msg, "msm calibration: %s", zp_err_msg());
    }
}

int zp_msm_calib_init(void)
{
    atomic_store(&cal_asked, true);
    pthread_once(&cal_once, cal_do_init);
    if (cal_init_rc) return zp_err_set(cal_init_rc, "%s", cal_init_msg);
    return 0;
}

const char *zp_msm_calib_source(void)
{
    pthread_once(&cal_once, cal_do_init);
    return cal_cur.source;
}

/* *r = the ratio endo/plain of key k at n points, interpolated linearly in log2 n between the
 * measured sizes, held constant outside them; false if the key has no rows */
static bool cal_ratio(double *r, unsigned k, size_t n)
{
    const float *en = cal_cur.endo[k], *pl = cal_cur.plain[k];
    double x = n > 1 ? log2((double)n) : 0, lo_x = -1, lo_r = 0, hi_x = -1, hi_r = 0;
    for (unsigned l = 1; l <= CAL_LOG_MAX; l++) {
        if (!(en[l] > 0 && pl[l] > 0)) continue;
        double q = (double)en[l] / pl[l];
        if (l <= x) lo_x = l, lo_r = q;
        else if (hi_x < 0) hi_x = l, hi_r = q;
    }
    if (lo_x < 0 && hi_x < 0) return false;
    if (lo_x < 0) *r = hi_r;
    else if (hi_x < 0) *r = lo_r;
    else *r = lo_r + (hi_r - lo_r) * (x - lo_x) / (hi_x - lo_x);
    return true;
}

zp_msm_method_t zp_msm_auto_method_mix(unsigned g, unsigned curve, double long_frac, size_t n)
{
    pthread_once(&cal_once, cal_do_init);
    if (cal_init_rc && !atomic_load(&cal_asked) && !atomic_exchange(&cal_warned, true))
        fprintf(stderr, "zkpipe: %s; using the built-in MSM table\n", cal_init_msg);
    int forced = atomic_load(&cal_forced);
    if (forced) return (zp_msm_method_t)forced;
    double ru = 0, rw = 0, r;
    bool hu = cal_ratio(&ru, cal_key(g, curve, false), n), hw = cal_ratio(&rw, cal_key(g, curve, true), n);
    if (!hu && !hw) return ZP_MSM_ENDO;                    /* nothing measured: the split */
    if (!hw) {
        r = ru;
    } else if (!hu) {
        r = rw;
    } else {                             /* between the two measured mixes, by the long share */
        double t = (long_frac - CAL_WIT_LONG) / (1.0 - CAL_WIT_LONG);
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        r = rw + (ru - rw) * t;
    }
    return r < CAL_SPLIT_BELOW ? ZP_MSM_ENDO : ZP_MSM_PLAIN;
}

zp_msm_method_t zp_msm_auto_method(unsigned g, unsigned curve, bool witness, size_t n)
{
    return zp_msm_auto_method_mix(g, curve, witness ? CAL_WIT_LONG : 1.0, n);
}
