/* msm_calib.c - the MSM's calibrated choices (msm.h, issue 31): per group, curve, scalar
 * shape, size and thread class, the method (endomorphism split or plain) and, for each
 * method, the window offset from the plan's operation-count model (-1, 0 or +1 bits), from a
 * table of measured times: the built-in one below, or a file written by `zkpipe msm
 * calibrate` (cli/bench_arith.c).
 * File format (text, '#' starts a comment, blank lines skipped), the first line that is not
 * blank or a comment is the header:
 *   zkpipe-msm-calib 3                        (or 2, 1: earlier formats, below)
 *   machine FREE TEXT                         optional, once
 *   path scalar|vector                        format 3: the arithmetic path the rows that
 *        follow were measured on (the batched additions' scalar code, or AVX-512 IFMA,
 *        msm_vec_impl.h); before the first row, and again to switch
 *   GROUP CURVE SCALARS LOG2N THREADS METHOD DC MS    rows: g1|g2 bn254|bls12_381
 *        uniform|witness, LOG2N 1..30, THREADS 1..1024 (1: the one-thread class; more: the
 *        many-thread class, one count per file), METHOD endo|plain, DC -1..1 (the window the
 *        row measured: the model's + DC), MS > 0 (only ratios are used)
 *   kp GROUP CURVE SCALARS LOG2N THREADS METHOD DC DK DP RATIO
 *        format 4 (session 20; otherwise format 3): the batch size K and the point ranges per
 *        window P at the window DC (the model's + DC) as the plan's times 2^DK and 2^DP (DK,
 *        DP -1..1, not both 0), RATIO > 0 (<= 100) the time over the plan's K and P at that
 *        window measured alongside (`zkpipe msm calibrate`, each method at the window the
 *        table takes). Ratios, not times: a file of kp rows alone (`msm calibrate --kp-only`)
 *        leaves the window rows of the table in use as they are.
 * Version 2 is version 3 without path lines; version 1 rows are `GROUP CURVE SCALARS LOG2N
 * ENDO_MS PLAIN_MS` (one thread, DC 0). Version 1 and 2 rows do not say their path: they are
 * taken as measured on both (they replace both paths' rows for their key and thread class).
 * Per path (issue 31, session 16): the table holds rows for the scalar and the vector path;
 * an MSM uses the rows of the path in use when it runs (zp_msm_vector()), per (group, curve,
 * shape): the rows of its thread class on its path, else the other class's on its path,
 * else (fallback: the path in use has no rows for this key) the other path's, in the same
 * order; `zkpipe msm which` prints which (zp_msm_calib_rows).
 * For each (key, thread class, size, method) the row with offset 0 counts unless one with
 * offset -1 or +1 was measured more than 2% faster (CAL_WIN_BELOW: a window is not moved on
 * noise); the fastest of those then. At that window the kp row with the lowest ratio counts
 * where that ratio is below CAL_KP_BELOW (else the plan's K and P); the method is chosen on
 * the window rows' times alone (cal_best). Every error names the file and line.
 * The table in use is process-wide (one per process: the install's or ZKPIPE_MSM_CALIB's,
 * read once by zp_msm_calib_init; MSMs with NULL opts, i.e. the prover's, use it). It is
 * immutable once published: an atomic pointer, read without a lock (acquire); a load or reset
 * builds a new table and publishes it under cal_lock (release), and the old one is kept on a
 * retired list (never freed: an MSM may still be reading it; a few KiB per load, and loads
 * are rare: at start, in tests, in `msm calibrate`'s self-check).
 * Tests: tests/test_msm.c (test_calib_*, test_auto_*, test_window_*) */
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

enum { CAL_LOG_MAX = 30, CAL_KEYS = 8, CAL_TC = 2, CAL_PATHS = 2, CAL_LINE = 512, CAL_THR_MAX = 1024 };
/* the split is taken where it was measured at least 2% faster: within that the two are a tie
 * on this machine's noise, and plain leaves the split's scratch untouched (~96 B a G1 point:
 * less resident memory, less memory traffic when threads share the bus) */
#define CAL_SPLIT_BELOW 0.98
/* the share of scalars longer than 128 bits in the "witness" rows' mix (bench_arith.c's
 * wit_scalars: 10% uniform, 5% r - small); "uniform" rows: 1 */
#define CAL_WIT_LONG 0.15
/* a window offset is taken where it measured at least 2% faster than the model's window */
#define CAL_WIN_BELOW 0.98
/* a K / P offset likewise, against the plan's K and P at the same window */
#define CAL_KP_BELOW 0.98

typedef struct cal_table {
    /* [path: 0 scalar, 1 vector][key][thread class][log2n][method: 0 endo, 1 plain][window
     * offset + 1]: the measured time (0: none) */
    float ms[CAL_PATHS][CAL_KEYS][CAL_TC][CAL_LOG_MAX + 1][2][3];
    /* the same and [dk + 1][dp + 1]: the kp rows' ratios (0: none) */
    float kp[CAL_PATHS][CAL_KEYS][CAL_TC][CAL_LOG_MAX + 1][2][3][3][3];
    unsigned thr[CAL_PATHS];     /* per path the many-thread class's thread count (0: no rows) */
    char source[CAL_PATHS][320]; /* per path where its rows came from ("" : none) */
    char desc[700];              /* zp_msm_calib_source: both paths' */
    struct cal_table *retired;   /* the list of replaced tables */
} cal_table_t;

static const char *const cal_path_name[CAL_PATHS] = {"scalar", "vector"};

/* key: group (1, 2), curve (0 bn254, 1 bls12_381), shape (witness) */
static unsigned cal_key(unsigned g, unsigned curve, bool wit)
{
    return ((g == 2) << 2) | ((curve & 1) << 1) | (wit ? 1u : 0u);
}

/* The built-in table: rows of `zkpipe msm calibrate --c-table` on this project's build
 * machines, one file per path (each names its runs): {group, curve (0 bn254, 1 bls12_381),
 * witness, log2n, threads, method (0 endo, 1 plain), window offset, ms}. */
typedef struct { uint8_t g, curve, wit, log2n; uint16_t threads; uint8_t method; int8_t dc; float ms; } cal_row_t;
/* kp rows: {..., method, window offset, K offset, P offset, ratio} */
typedef struct { uint8_t g, curve, wit, log2n; uint16_t threads; uint8_t method; int8_t dc, dk, dp; float ratio; } cal_kp_row_t;
static const cal_row_t cal_builtin_scalar[] = {
#include "lib/msm/msm_calib_default.h"
};
static const cal_row_t cal_builtin_vector[] = {
#include "lib/msm/msm_calib_default_vec.h"
};
static const cal_kp_row_t cal_builtin_kp_vector[] = {
#include "lib/msm/msm_calib_default_kp_vec.h"
    {0}   /* the end (group 0) */
};
static const struct {
    const cal_row_t *rows;
    size_t n;
    const char *source;
    const cal_kp_row_t *kp;   /* the kp rows (the scalar path has none: the plan's K and P) */
    size_t nkp;
} cal_builtin[CAL_PATHS] = {
    {cal_builtin_scalar, sizeof cal_builtin_scalar / sizeof cal_builtin_scalar[0],
     "built-in (AMD EPYC, 2 cores, 1 MiB L2/core, 32 MiB L3, scalar path; msm calibrate, best of 2 runs, "
     "2026-12-04 09:40-10:04 UTC, load 0.4-7)", NULL, 0},
    {cal_builtin_vector, sizeof cal_builtin_vector / sizeof cal_builtin_vector[0], CAL_BUILTIN_VEC_SOURCE,
     cal_builtin_kp_vector, sizeof cal_builtin_kp_vector / sizeof cal_builtin_kp_vector[0]},
};

static _Atomic(cal_table_t *) cal_cur;
static cal_table_t *cal_retired;   /* under cal_lock */
static pthread_mutex_t cal_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cal_once = PTHREAD_ONCE_INIT;
static int cal_init_rc;
static char cal_init_msg[400];
static atomic_int cal_forced;      /* ZP_MSM_METHOD: 0 auto, else the method */
static atomic_bool cal_asked, cal_warned, cal_model_window;

/* one measured row into t */
static void cal_put(cal_table_t *t, unsigned p, unsigned k, unsigned tc, unsigned l, unsigned meth, int dc, float ms)
{
    t->ms[p][k][tc][l][meth][dc + 1] = ms;
}

/* t->desc from the paths' sources */
static void cal_describe(cal_table_t *t)
{
    if (!strcmp(t->source[0], t->source[1]))
        snprintf(t->desc, sizeof t->desc, "%s (both paths)", t->source[0][0] ? t->source[0] : "none");
    else
        snprintf(t->desc, sizeof t->desc, "scalar path: %s; vector path: %s", t->source[0][0] ? t->source[0] : "none",
                 t->source[1][0] ? t->source[1] : "none");
}

int zp_msm_calib_offset(const double ms[3])
{
    double eff = -1;                     /* an offset's time counts 1/CAL_WIN_BELOW more */
    int dc = 0;
    for (int d = -1; d <= 1; d++) {
        if (!(ms[d + 1] > 0)) continue;
        double e = d ? ms[d + 1] / CAL_WIN_BELOW : ms[d + 1];
        if (eff < 0 || e < eff) eff = e, dc = d;
    }
    return dc;
}

/* the window offset of (path, key, class, size, method), at it the K and P offsets (the kp
 * row of the lowest ratio below CAL_KP_BELOW, else 0, 0), and the window's time (0: nothing
 * measured). The time is not scaled by the ratio: the method is chosen on the window rows
 * alone. (A first version compared the methods' times scaled by their kp ratios; a ratio from
 * a --kp-only run times a window row measured in another run, days and flush changes apart,
 * turned G2 BN254 2^20 two threads to the split, 0.979 by the table, 1.11x plain measured.) */
static float cal_best(const cal_table_t *t, unsigned p, unsigned k, unsigned tc, unsigned l, unsigned meth,
                      int off[3])
{
    const float *m = t->ms[p][k][tc][l][meth];
    const double w[3] = {m[0], m[1], m[2]};
    off[0] = zp_msm_calib_offset(w), off[1] = off[2] = 0;
    if (!(m[off[0] + 1] > 0)) return 0;
    double best = CAL_KP_BELOW;
    for (unsigned j = 0; j < 9; j++) {
        const float r = t->kp[p][k][tc][l][meth][off[0] + 1][j / 3][j % 3];
        if (r > 0 && r < best) best = r, off[1] = (int)(j / 3) - 1, off[2] = (int)(j % 3) - 1;
    }
    return m[off[0] + 1];
}

static void cal_builtin_fill(cal_table_t *t)
{
    memset(t, 0, sizeof *t);
    for (unsigned p = 0; p < CAL_PATHS; p++) {
        for (size_t i = 0; i < cal_builtin[p].n; i++) {
            const cal_row_t *r = &cal_builtin[p].rows[i];
            unsigned k = cal_key(r->g, r->curve, r->wit);
            unsigned tc = r->threads > 1;
            if (tc) t->thr[p] = r->threads;
            cal_put(t, p, k, tc, r->log2n, r->method, r->dc, r->ms);
        }
        for (size_t i = 0; i < cal_builtin[p].nkp; i++) {
            const cal_kp_row_t *r = &cal_builtin[p].kp[i];
            if (!r->g) continue;
            t->kp[p][cal_key(r->g, r->curve, r->wit)][r->threads > 1][r->log2n][r->method][r->dc + 1][r->dk + 1]
                 [r->dp + 1] = r->ratio;
        }
        if (cal_builtin[p].n) snprintf(t->source[p], sizeof t->source[p], "%s", cal_builtin[p].source);
    }
    cal_describe(t);
}

/* publish t (taken) as the table in use; the old one goes to the retired list */
static void cal_publish_locked(cal_table_t *t)
{
    cal_table_t *old = atomic_exchange_explicit(&cal_cur, t, memory_order_acq_rel);
    if (old) {
        old->retired = cal_retired;
        cal_retired = old;
    }
}

void zp_msm_calib_reset(void)
{
    cal_table_t *t = malloc(sizeof *t);
    if (!t) return;                      /* out of memory: the table in use stays */
    cal_builtin_fill(t);
    pthread_mutex_lock(&cal_lock);
    cal_publish_locked(t);
    pthread_mutex_unlock(&cal_lock);
}

void zp_msm_calib_clear(void)
{
    cal_table_t *t = calloc(1, sizeof *t);
    if (!t) return;                      /* out of memory: the table in use stays */
    cal_describe(t);
    pthread_mutex_lock(&cal_lock);
    cal_publish_locked(t);
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

/* the parser's state: the file's rows (merged into the table at the end), where each (path,
 * key, class, size, method, offset) was first seen, and the path of the rows that follow
 * (format 3: -1 before the first path line; formats 1 and 2: both paths, -2) */
typedef struct {
    cal_table_t t;
    bool seen[CAL_PATHS][CAL_KEYS][CAL_TC], seen_kp[CAL_PATHS][CAL_KEYS][CAL_TC];
    unsigned first[CAL_PATHS][CAL_KEYS][CAL_TC][CAL_LOG_MAX + 1][2][3];
    unsigned first_kp[CAL_PATHS][CAL_KEYS][CAL_TC][CAL_LOG_MAX + 1][2][3][3][3];
    unsigned thr_line, thr;
    int path;
} cal_parse_t;

static int cal_int(long *v, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (*end || end == s || errno || x < lo || x > hi) return -1;
    *v = x;
    return 0;
}

static int cal_ms(double *v, const char *s)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (*end || end == s || errno || !isfinite(x) || x <= 0 || x > 1e9) return -1;
    *v = x;
    return 0;
}

/* a row's GROUP CURVE SCALARS LOG2N (tok[0..3]): *k the key, *l log2n */
static int cal_key_fields(char **tok, const char *path, unsigned ln, unsigned *k, unsigned *l)
{
    unsigned g, cv, wit;
    if (!strcmp(tok[0], "g1")) g = 1;
    else if (!strcmp(tok[0], "g2")) g = 2;
    else return zp_err_set(ZP_EFORMAT, "%s:%u: group '%s' is not g1 or g2", path, ln, tok[0]);
    if (!strcmp(tok[1], "bn254")) cv = 0;
    else if (!strcmp(tok[1], "bls12_381")) cv = 1;
    else return zp_err_set(ZP_EFORMAT, "%s:%u: curve '%s' is not bn254 or bls12_381", path, ln, tok[1]);
    if (!strcmp(tok[2], "uniform")) wit = 0;
    else if (!strcmp(tok[2], "witness")) wit = 1;
    else return zp_err_set(ZP_EFORMAT, "%s:%u: scalars '%s' is not uniform or witness", path, ln, tok[2]);
    long lg;
    if (cal_int(&lg, tok[3], 1, CAL_LOG_MAX) || tok[3][0] == '-' || tok[3][0] == '+')
        return zp_err_set(ZP_EFORMAT, "%s:%u: log2n '%s' is not an integer in 1..%u", path, ln, tok[3], CAL_LOG_MAX);
    *k = cal_key(g, cv, wit), *l = (unsigned)lg;
    return 0;
}

/* a row's THREADS METHOD DC (tok[0..2]): *tc its thread class (one many-thread count per
 * file, ps->thr) */
static int cal_class_fields(cal_parse_t *ps, char **tok, const char *path, unsigned ln, long *thr, unsigned *tc,
                            long *meth, long *dc)
{
    if (cal_int(thr, tok[0], 1, CAL_THR_MAX) || tok[0][0] == '+')
        return zp_err_set(ZP_EFORMAT, "%s:%u: threads '%s' is not an integer in 1..%u", path, ln, tok[0], CAL_THR_MAX);
    if (!strcmp(tok[1], "endo")) *meth = 0;
    else if (!strcmp(tok[1], "plain")) *meth = 1;
    else return zp_err_set(ZP_EFORMAT, "%s:%u: method '%s' is not endo or plain", path, ln, tok[1]);
    if (cal_int(dc, tok[2], -1, 1))
        return zp_err_set(ZP_EFORMAT, "%s:%u: window offset '%s' is not -1, 0 or 1", path, ln, tok[2]);
    *tc = *thr > 1;
    if (*tc && ps->thr && ps->thr != (unsigned)*thr)
        return zp_err_set(ZP_EFORMAT, "%s:%u: threads %ld, but line %u has %u (one many-thread count per file)",
                          path, ln, *thr, ps->thr_line, ps->thr);
    if (*tc && !ps->thr) ps->thr = (unsigned)*thr, ps->thr_line = ln;
    return 0;
}

/* a format 4 kp row (nt tokens, tok[0] "kp"): format 4, after a path line (cal_parse) */
static int cal_kp_row(cal_parse_t *ps, char **tok, unsigned nt, const char *path, unsigned ln)
{
    if (nt != 11)
        return zp_err_set(ZP_EFORMAT, "%s:%u: expected 'kp GROUP CURVE SCALARS LOG2N THREADS METHOD DC DK DP RATIO' "
                          "(11 fields), got %s%u", path, ln, nt > 11 ? "more than " : "", nt > 11 ? 11 : nt);
    unsigned k, l, tc;
    long thr, meth, dc, dk, dp;
    double r;
    int rc;
    if ((rc = cal_key_fields(tok + 1, path, ln, &k, &l)) || (rc = cal_class_fields(ps, tok + 5, path, ln, &thr, &tc, &meth, &dc)))
        return rc;
    if (cal_int(&dk, tok[8], -1, 1))
        return zp_err_set(ZP_EFORMAT, "%s:%u: K offset '%s' is not -1, 0 or 1", path, ln, tok[8]);
    if (cal_int(&dp, tok[9], -1, 1))
        return zp_err_set(ZP_EFORMAT, "%s:%u: P offset '%s' is not -1, 0 or 1", path, ln, tok[9]);
    if (!dk && !dp)
        return zp_err_set(ZP_EFORMAT, "%s:%u: K and P offsets both 0 (the plan's own K and P are the ratio's 1)", path, ln);
    if (cal_ms(&r, tok[10]) || r > 100)
        return zp_err_set(ZP_EFORMAT, "%s:%u: RATIO '%s' is not a number > 0, <= 100", path, ln, tok[10]);
    const unsigned p = (unsigned)ps->path;
    unsigned *first = &ps->first_kp[p][k][tc][l][meth][dc + 1][dk + 1][dp + 1];
    if (*first)
        return zp_err_set(ZP_EFORMAT, "%s:%u: a second kp row for %s %s %s 2^%u %s %s window %+ld K %+ld P %+ld on the "
                          "path %s (the first at line %u)", path, ln, tok[1], tok[2], tok[3], l, tok[5], tok[6], dc,
                          dk, dp, cal_path_name[p], *first);
    *first = ln;
    ps->t.kp[p][k][tc][l][meth][dc + 1][dk + 1][dp + 1] = (float)r;
    ps->seen_kp[p][k][tc] = true;
    if (tc) ps->t.thr[p] = (unsigned)thr;
    return 0;
}

/* one data row (nt tokens) of a version ver file */
static int cal_row(cal_parse_t *ps, char **tok, unsigned nt, unsigned ver, const char *path, unsigned ln)
{
    const unsigned want = ver == 1 ? 6 : 8;
    if (nt != want)
        return zp_err_set(ZP_EFORMAT, "%s:%u: expected '%s' (%u fields), got %s%u", path, ln,
                          ver == 1 ? "GROUP CURVE SCALARS LOG2N ENDO_MS PLAIN_MS"
                                   : "GROUP CURVE SCALARS LOG2N THREADS METHOD DC MS",
                          want, nt > want ? "more than " : "", nt > want ? want : nt);
    unsigned k, l, tc = 0;
    long thr = 1, meth = 0, dc = 0;
    double ms[2];
    const unsigned nm = ver == 1 ? 2 : 1;
    int rc;
    if ((rc = cal_key_fields(tok, path, ln, &k, &l))) return rc;
    if (ver == 1) {
        for (int j = 0; j < 2; j++)
            if (cal_ms(&ms[j], tok[4 + j]))
                return zp_err_set(ZP_EFORMAT, "%s:%u: %s '%s' is not a time in ms (a number > 0, <= 1e9)",
                                  path, ln, j ? "PLAIN_MS" : "ENDO_MS", tok[4 + j]);
    } else {
        if ((rc = cal_class_fields(ps, tok + 4, path, ln, &thr, &tc, &meth, &dc))) return rc;
        if (cal_ms(&ms[0], tok[7]))
            return zp_err_set(ZP_EFORMAT, "%s:%u: MS '%s' is not a time in ms (a number > 0, <= 1e9)", path,
                              ln, tok[7]);
    }
    /* format 3: the path line's; formats 1 and 2: both */
    const unsigned p0 = ps->path >= 0 ? (unsigned)ps->path : 0, p1 = ps->path >= 0 ? (unsigned)ps->path : 1;
    for (unsigned p = p0; p <= p1; p++) {
        for (unsigned j = 0; j < nm; j++) {
            unsigned *first = &ps->first[p][k][tc][l][meth + j][dc + 1];
            if (*first)
                return zp_err_set(ZP_EFORMAT, "%s:%u: a second row for %s %s %s 2^%u%s%s%s%s (the first at line %u)",
                                  path, ln, tok[0], tok[1], tok[2], l, ver == 1 ? "" : " ", ver == 1 ? "" : tok[5],
                                  ver >= 3 ? " on the path " : "", ver >= 3 ? cal_path_name[p] : "", *first);
            *first = ln;
            cal_put(&ps->t, p, k, tc, l, (unsigned)meth + j, (int)dc, (float)ms[j]);
        }
        ps->seen[p][k][tc] = true;
        if (tc) ps->t.thr[p] = (unsigned)thr;
    }
    return 0;
}

static int cal_parse(cal_table_t *t, FILE *f, const char *path)
{
    char *line = NULL, *tok[12];
    size_t cap = 0;
    ssize_t got;
    unsigned ln = 0, rows = 0, ver = 0;
    bool machine = false;
    char mach[200] = "";
    int rc = 0;
    cal_parse_t *ps = calloc(1, sizeof *ps);
    if (!ps) return zp_err_set(-ENOMEM, "%s: out of memory", path);
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
        memcpy(raw, line, strlen(line) + 1);
        unsigned nt = cal_tokens(line, tok, 11);
        if (nt == 0) continue;
        if (!ver) {
            if (nt != 2 || strcmp(tok[0], "zkpipe-msm-calib") ||
                (strcmp(tok[1], "1") && strcmp(tok[1], "2") && strcmp(tok[1], "3") && strcmp(tok[1], "4"))) {
                rc = zp_err_set(ZP_EFORMAT,
                                "%s:%u: expected the header 'zkpipe-msm-calib 4' (or 3, 2, 1), got '%s%s%s'",
                                path, ln, tok[0], nt > 1 ? " " : "", nt > 1 ? tok[1] : "");
                goto out;
            }
            ver = (unsigned)(tok[1][0] - '0');
            ps->path = ver >= 3 ? -1 : -2;
            continue;
        }
        if (!strcmp(tok[0], "path")) {
            if (ver < 3) {
                rc = zp_err_set(ZP_EFORMAT, "%s:%u: a 'path' line in a format %u file (path lines are formats 3, 4)",
                                path, ln, ver);
                goto out;
            }
            if (nt != 2 || (strcmp(tok[1], "scalar") && strcmp(tok[1], "vector"))) {
                rc = zp_err_set(ZP_EFORMAT, "%s:%u: path '%s' is not scalar or vector (want 'path scalar|vector')",
                                path, ln, nt > 1 ? tok[1] : "");
                goto out;
            }
            ps->path = !strcmp(tok[1], "vector");
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
        if (ps->path == -1) {
            rc = zp_err_set(ZP_EFORMAT, "%s:%u: a row before any 'path scalar|vector' line (format %u)", path, ln,
                            ver);
            goto out;
        }
        if (!strcmp(tok[0], "kp")) {
            if (ver < 4) {
                rc = zp_err_set(ZP_EFORMAT, "%s:%u: a 'kp' row in a format %u file (kp rows are format 4)", path,
                                ln, ver);
                goto out;
            }
            if ((rc = cal_kp_row(ps, tok, nt, path, ln))) goto out;
        } else if ((rc = cal_row(ps, tok, nt, ver, path, ln)))
            goto out;
        rows++;
    }
    if (ferror(f)) {
        rc = zp_err_set(-EIO, "%s:%u: read error", path, ln + 1);
        goto out;
    }
    if (!ver) {
        rc = zp_err_set(ZP_EFORMAT, "%s:%u: no header 'zkpipe-msm-calib 4' (empty file)", path, ln);
        goto out;
    }
    if (!rows) {
        rc = zp_err_set(ZP_EFORMAT, "%s:%u: no rows", path, ln);
        goto out;
    }
    for (unsigned p = 0; p < CAL_PATHS; p++) {
        bool any = false;
        for (unsigned k = 0; k < CAL_KEYS; k++)
            for (unsigned tc = 0; tc < CAL_TC; tc++) {
                /* the file's (path, key, class) replace the table's rows; its kp rows replace
                 * the table's kp rows, and so do its window rows (kp rows were measured at the
                 * windows the table took then): a file of kp rows alone keeps the windows */
                if (ps->seen[p][k][tc]) memcpy(t->ms[p][k][tc], ps->t.ms[p][k][tc], sizeof t->ms[p][k][tc]);
                if (ps->seen[p][k][tc] || ps->seen_kp[p][k][tc])
                    memcpy(t->kp[p][k][tc], ps->t.kp[p][k][tc], sizeof t->kp[p][k][tc]);
                any |= ps->seen[p][k][tc] || ps->seen_kp[p][k][tc];
            }
        if (ps->t.thr[p]) t->thr[p] = ps->t.thr[p];
        if (any) snprintf(t->source[p], sizeof t->source[p], "%s (%s)", path, machine ? mach : "machine not named");
    }
    cal_describe(t);
out:
    free(ps);
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
    pthread_mutex_lock(&cal_lock);       /* writers are serialised: the copy is the latest */
    cal_table_t *cur = atomic_load_explicit(&cal_cur, memory_order_acquire);
    if (cur) *t = *cur;
    else cal_builtin_fill(t);
    t->retired = NULL;
    int rc = cal_parse(t, f, path);
    if (rc == 0) cal_publish_locked(t);
    pthread_mutex_unlock(&cal_lock);
    fclose(f);
    if (rc) free(t);
    return rc;
}

/* ZP_MSM_METHOD and ZP_MSM_WINDOW, then the file ($ZKPIPE_MSM_CALIB, else the share dir's,
 * if it exists) */
static void cal_do_init(void)
{
    if (!atomic_load(&cal_cur)) {
        cal_table_t *t = malloc(sizeof *t);
        if (!t) {
            cal_init_rc = zp_err_set(-ENOMEM, "msm calibration: out of memory");
            snprintf(cal_init_msg, sizeof cal_init_msg, "%s", zp_err_msg());
            return;
        }
        cal_builtin_fill(t);
        pthread_mutex_lock(&cal_lock);
        cal_table_t *none = NULL;
        if (!atomic_compare_exchange_strong(&cal_cur, &none, t)) free(t);   /* a reset came first */
        pthread_mutex_unlock(&cal_lock);
    }
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
    const char *w = getenv("ZP_MSM_WINDOW");
    if (w && *w) {
        if (!strcmp(w, "model")) atomic_store(&cal_model_window, true);
        else if (strcmp(w, "calibrated")) {
            cal_init_rc = zp_err_set(ZP_EFORMAT, "ZP_MSM_WINDOW='%s' is not model or calibrated", w);
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

/* the table in use (never NULL after the first call but when out of memory at start) */
static const cal_table_t *cal_get(void)
{
    pthread_once(&cal_once, cal_do_init);
    return atomic_load_explicit(&cal_cur, memory_order_acquire);
}

const char *zp_msm_calib_source(void)
{
    const cal_table_t *t = cal_get();
    return t ? t->desc : "none (out of memory)";
}

/* whether (path p, key k, class tc) has any row */
static bool cal_has(const cal_table_t *t, unsigned p, unsigned k, unsigned tc)
{
    for (unsigned l = 1; l <= CAL_LOG_MAX; l++)
        for (unsigned j = 0; j < 6; j++)
            if (t->ms[p][k][tc][l][j / 3][j % 3] > 0) return true;
    return false;
}

/* the rows key k takes for nthreads on the path vec (msm.h: zp_msm_calib_rows): its path's
 * rows of its thread class, its path's rows of the other class, then the same on the other
 * path (fallback); *p, *tc: that path and class; false: no rows at all (*p = vec, *tc = 0) */
static bool cal_which(const cal_table_t *t, bool vec, unsigned k, unsigned nthreads, unsigned *p, unsigned *tc)
{
    const unsigned own = nthreads > 1;
    for (unsigned o = 0; o < CAL_PATHS * CAL_TC; o++) {
        const unsigned pp = o < CAL_TC ? vec : !vec, c = o % CAL_TC ? !own : own;
        if (cal_has(t, pp, k, c)) {
            *p = pp, *tc = c;
            return true;
        }
    }
    *p = vec, *tc = 0;
    return false;
}

unsigned zp_msm_calib_threads(void)
{
    const cal_table_t *t = cal_get();
    if (!t) return 1;
    const unsigned v = zp_msm_vector();
    return t->thr[v] ? t->thr[v] : t->thr[!v] ? t->thr[!v] : 1;
}

void zp_msm_calib_rows(zp_msm_rows_t *r, unsigned g, unsigned curve, bool witness, unsigned nthreads, bool vector)
{
    const cal_table_t *t = cal_get();
    unsigned p = vector, tc = 0;
    *r = (zp_msm_rows_t){.vector = vector};
    if (!t || !cal_which(t, vector, cal_key(g, curve, witness), nthreads, &p, &tc)) {
        r->none = true;
        return;
    }
    r->vector = p == 1;
    r->fallback = p != (unsigned)vector;
    r->threads = tc ? t->thr[p] : 1;
}

/* linear interpolation in x = log2 n of the values v[l] where have[l], held constant outside
 * the measured sizes; false if none */
static bool cal_lerp(double *r, const double *v, const bool *have, double x)
{
    double lo_x = -1, lo_v = 0, hi_x = -1, hi_v = 0;
    for (unsigned l = 1; l <= CAL_LOG_MAX; l++) {
        if (!have[l]) continue;
        if (l <= x) lo_x = l, lo_v = v[l];
        else if (hi_x < 0) hi_x = l, hi_v = v[l];
    }
    if (lo_x < 0 && hi_x < 0) return false;
    if (lo_x < 0) *r = hi_v;
    else if (hi_x < 0) *r = lo_v;
    else *r = lo_v + (hi_v - lo_v) * (x - lo_x) / (hi_x - lo_x);
    return true;
}

/* key k at n points, nthreads, on the path vec: the ratio endo/plain (*hr: known) and each
 * method's window, K and P offsets (off[j][0..2], interpolated, not rounded; hd[j]: known),
 * from the rows cal_which picks */
static void cal_key_at(const cal_table_t *t, unsigned k, size_t n, unsigned nthreads, bool vec, double *ratio,
                       bool *hr, double off[2][3], bool hd[2])
{
    unsigned p, tc;
    cal_which(t, vec, k, nthreads, &p, &tc);
    const double x = n > 1 ? log2((double)n) : 0;
    double v[CAL_LOG_MAX + 1], w[2][3][CAL_LOG_MAX + 1];
    bool have[CAL_LOG_MAX + 1], hw[2][CAL_LOG_MAX + 1];
    for (unsigned l = 0; l <= CAL_LOG_MAX; l++) {
        float ms[2] = {0, 0};
        for (unsigned j = 0; j < 2; j++) {
            int d[3] = {0, 0, 0};
            ms[j] = l ? cal_best(t, p, k, tc, l, j, d) : 0;
            hw[j][l] = ms[j] > 0;
            for (unsigned i = 0; i < 3; i++) w[j][i][l] = d[i];
        }
        have[l] = ms[0] > 0 && ms[1] > 0;
        v[l] = have[l] ? (double)ms[0] / ms[1] : 0;
    }
    *hr = cal_lerp(ratio, v, have, x);
    for (unsigned j = 0; j < 2; j++) {
        hd[j] = cal_lerp(&off[j][0], w[j][0], hw[j], x);
        for (unsigned i = 1; i < 3; i++) cal_lerp(&off[j][i], w[j][i], hw[j], x);
    }
}

/* an interpolated offset, rounded, within -1..1 */
static int cal_round(double d)
{
    long q = lround(d);
    return q < -1 ? -1 : q > 1 ? 1 : (int)q;
}

zp_msm_pick_t zp_msm_auto_pick_path(unsigned g, unsigned curve, double long_frac, size_t n, unsigned nthreads,
                                    bool vector)
{
    zp_msm_pick_t p = {.method = ZP_MSM_ENDO};
    const cal_table_t *t = cal_get();
    if (cal_init_rc && !atomic_load(&cal_asked) && !atomic_exchange(&cal_warned, true))
        fprintf(stderr, "zkpipe: %s; using the built-in MSM table\n", cal_init_msg);
    int forced = atomic_load(&cal_forced);
    if (!t) return p;
    double ru = 0, rw = 0, du[2][3] = {{0}}, dw[2][3] = {{0}};
    bool hu, hw, hdu[2], hdw[2];
    cal_key_at(t, cal_key(g, curve, false), n, nthreads, vector, &ru, &hu, du, hdu);
    cal_key_at(t, cal_key(g, curve, true), n, nthreads, vector, &rw, &hw, dw, hdw);
    /* between the two measured mixes, by the long share */
    double s = (long_frac - CAL_WIT_LONG) / (1.0 - CAL_WIT_LONG);
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    double r = !hw ? ru : !hu ? rw : rw + (ru - rw) * s;
    if (forced) p.method = (zp_msm_method_t)forced;
    else if (hu || hw) p.method = r < CAL_SPLIT_BELOW ? ZP_MSM_ENDO : ZP_MSM_PLAIN;
    if (!atomic_load(&cal_model_window))
        for (unsigned j = 0; j < 2; j++) {
            int o[3];
            for (unsigned i = 0; i < 3; i++)
                o[i] = cal_round(!hdw[j] ? du[j][i] : !hdu[j] ? dw[j][i] : dw[j][i] + (du[j][i] - dw[j][i]) * s);
            p.dc[j] = o[0], p.dk[j] = o[1], p.dp[j] = o[2];
        }
    return p;
}

zp_msm_pick_t zp_msm_auto_pick(unsigned g, unsigned curve, double long_frac, size_t n, unsigned nthreads)
{
    return zp_msm_auto_pick_path(g, curve, long_frac, n, nthreads, zp_msm_vector());
}

zp_msm_method_t zp_msm_auto_method_mix(unsigned g, unsigned curve, double long_frac, size_t n)
{
    return zp_msm_auto_pick(g, curve, long_frac, n, 1).method;
}

zp_msm_method_t zp_msm_auto_method(unsigned g, unsigned curve, bool witness, size_t n)
{
    return zp_msm_auto_method_mix(g, curve, witness ? CAL_WIT_LONG : 1.0, n);
}
