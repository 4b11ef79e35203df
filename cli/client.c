/* client.c - `zkpipe submit | await | status | cancel | trace | metrics`: the command-line face
 * of libzkpipe-client (client/zkpipe-client.h), which does the talking: runtime-directory
 * checks, reconnect and retry across broker restarts, result codes. This file only parses
 * options, writes files and prints.
 * Exit status (ZP_CLIENT_* = the library's codes; also in `zkpipe --help`):
 *   0 done   1 a partition failed   2 bad usage or input   3 timed out (await)   4 canceled
 *   5 broker unreachable (not running, permission denied, untrusted runtime dir)
 *   6 refused by the broker   7 local failure
 * await on a terminal redraws one progress line (done/total, elapsed, estimate) on stderr;
 * otherwise it prints a plain line whenever the count changes; --quiet: none. --json: the
 * result as one JSON object on stdout (the HTTP API's GET /v1/jobs/ID shape).
 * Tests: tests/ipc/client.sh, tests/client/ (restart, runtime dir, progress through a pty). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "client/zkpipe-client.h"
#include "lib/util/util.h"

#define RUNDIR_OPT {"runtime-dir", 1, 0, 'R'}, {"broker-timeout", 1, 0, 'B'}
#define RUNDIR_USAGE "[--runtime-dir DIR] [--broker-timeout SECONDS]"

typedef struct { const char *rundir; int timeout_ms; } conn_opts_t;

/* the options every client command shares; true when c was one of them (*bad on a bad value) */
static bool conn_opt(conn_opts_t *o, int c, const char *arg, bool *bad)
{
    if (c == 'R') { o->rundir = arg; return true; }
    if (c != 'B') return false;
    char *e;
    double s = strtod(arg, &e);
    if (e == arg || *e || !(s > 0) || s > 86400) {
        fprintf(stderr, "zkpipe: --broker-timeout must be seconds in (0, 86400], got '%s'\n", arg);
        *bad = true;
    }
    o->timeout_ms = (int)(s * 1000 + 0.5);
    if (o->timeout_ms < 1) o->timeout_ms = 1;
    return true;
}

static zp_client_t *client_open(const conn_opts_t *o)
{
    zp_client_t *c = zp_client_new(o->rundir);
    if (!c) { fprintf(stderr, "zkpipe: out of memory\n"); return NULL; }
    if (o->timeout_ms) zp_client_set_timeout(c, o->timeout_ms);
    return c;
}

/* print the library's message for rc and return rc (the exit status) */
static int fail(const char *cmd, zp_client_t *c, int rc)
{
    const char *m = zp_client_errmsg(c);
    fprintf(stderr, "zkpipe %s: %s%s%s\n", cmd, zp_client_strerror(rc), *m ? ": " : "", m);
    return rc;
}

static int parse_job(const char *s, uint64_t *job)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || e == s || *e || v == 0 || s[0] == '-') { fprintf(stderr, "zkpipe: '%s' is not a job id\n", s); return -1; }
    *job = v;
    return 0;
}

static int read_all(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "zkpipe submit: %s: %s\n", path, strerror(errno)); return -1; }
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    for (size_t k; b && (k = fread(b + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n > ZP_CLIENT_INLINE_WTNS_MAX) break;
        if (n == cap) { uint8_t *nb = realloc(b, cap *= 2); if (!nb) { free(b); b = NULL; } else b = nb; }
    }
    fclose(f);
    if (!b) { fprintf(stderr, "zkpipe submit: out of memory reading %s\n", path); return -1; }
    *data = b;
    *len = n;
    return 0;
}

int zp_cmd_submit(int argc, char **argv)
{
    conn_opts_t co = {0};
    const char *zkey = NULL, *r1cs = NULL, *rid = NULL, *prio = NULL, *wasm = NULL;
    bool inline_wtns = false, bad = false, inputs = false;
    int c;
    static const struct option opts[] = {RUNDIR_OPT, {"zkey", 1, 0, 'z'}, {"r1cs", 1, 0, 'r'}, {"priority", 1, 0, 'p'},
                                         {"request-id", 1, 0, 'i'}, {"inline", 0, 0, 'I'},
                                         {"wasm", 1, 0, 'w'}, {"input", 0, 0, 'J'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (conn_opt(&co, c, optarg, &bad)) continue;
        switch (c) {
        case 'z': zkey = optarg; break;
        case 'r': r1cs = optarg; break;
        case 'i': rid = optarg; break;
        case 'p': prio = optarg; break;
        case 'I': inline_wtns = true; break;
        case 'w': wasm = optarg; break;
        case 'J': inputs = true; break;   /* every operand is an input.json (issue 28) */
        default: goto usage;
        }
    }
    if (bad) return ZP_CLIENT_USAGE;
    if (!zkey || argc - optind < 1) goto usage;
    if (inputs != (wasm != NULL)) {
        fprintf(stderr, "zkpipe submit: %s\n", inputs ? "--input needs --wasm (the circuit's witness generator)"
                                                         : "--wasm goes with --input IN.json [IN2.json ...]");
        return ZP_CLIENT_USAGE;
    }
    if (inputs && inline_wtns) { fprintf(stderr, "zkpipe submit: --inline is for witnesses; inputs always go inline\n"); return ZP_CLIENT_USAGE; }
    zp_client_job_t *j = zp_client_job_new(zkey);
    if (!j) { fprintf(stderr, "zkpipe submit: out of memory\n"); return ZP_CLIENT_SYSTEM; }
    if (r1cs) zp_client_job_set_r1cs(j, r1cs);
    if (prio) zp_client_job_set_priority(j, prio);
    if (rid) zp_client_job_set_request_id(j, rid);
    if (wasm) zp_client_job_set_wasm(j, wasm);
    for (int i = optind; i < argc && !zp_client_job_errmsg(j)[0]; i++) {
        if (inputs) { zp_client_job_add_input_file(j, argv[i]); continue; }
        if (!inline_wtns) { zp_client_job_add_wtns(j, argv[i]); continue; }
        uint8_t *data; size_t len;
        if (read_all(argv[i], &data, &len) < 0) { zp_client_job_free(&j); return ZP_CLIENT_USAGE; }
        zp_client_job_add_wtns_data(j, data, len);
        free(data);
    }
    if (zp_client_job_errmsg(j)[0]) {
        fprintf(stderr, "zkpipe submit: %s\n", zp_client_job_errmsg(j));
        zp_client_job_free(&j);
        return ZP_CLIENT_USAGE;
    }
    zp_client_t *cl = client_open(&co);
    if (!cl) { zp_client_job_free(&j); return ZP_CLIENT_SYSTEM; }
    uint64_t job = 0;
    bool existed = false;
    int rc = zp_client_submit(cl, j, &job, &existed);
    if (rc) fail("submit", cl, rc);
    else {
        printf("%llu\n", (unsigned long long)job);
        if (existed) fprintf(stderr, "zkpipe submit: request id '%s' was already submitted: job %llu\n",
                             zp_client_job_request_id(j), (unsigned long long)job);
    }
    zp_client_job_free(&j);
    zp_client_destroy(&cl);
    return rc;
usage:
    fprintf(stderr, "usage: zkpipe submit --zkey Z [--r1cs R] [--priority critical|high|normal|low] [--request-id ID]\n"
                    "                     [--inline] " RUNDIR_USAGE " W1.wtns [W2.wtns ...]\n"
                    "  --inline: send the witness bytes (up to %u each) instead of their paths\n"
                    "   or: zkpipe submit --zkey Z --wasm W --input [options] IN1.json [IN2.json ...]\n"
                    "  --wasm W --input: the synthesizers compute each witness from its input.json with the\n"
                    "  circuit's witness generator W (circom --wasm); the inputs are sent inline (up to %u each)\n",
            ZP_CLIENT_INLINE_WTNS_MAX, ZP_CLIENT_INPUT_MAX);
    return ZP_CLIENT_USAGE;
}

/* ---------------------------------------------------------------- await */
static int write_file(const char *dir, uint32_t idx, const char *name, const char *ext, const void *data, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s-%u.%s", dir, name, idx, ext);
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "zkpipe await: %s: %s\n", path, strerror(errno)); return -1; }
    size_t n = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || n != len) { fprintf(stderr, "zkpipe await: writing %s failed\n", path); return -1; }
    return 0;
}

typedef struct {
    bool tty, quiet;
    uint64_t job, t0;
    uint32_t last_done, last_failed, last_total;
    bool printed, drawn;
} progress_t;

/* one progress report: in place on a terminal, a plain line on change otherwise */
static void on_progress(void *ctx, uint32_t done, uint32_t failed, uint32_t total)
{
    progress_t *p = ctx;
    if (p->quiet) return;
    double el = (double)(zp_now_ns() - p->t0) / 1e9;
    uint32_t fin = done + failed;
    char eta[48] = "estimate: -";
    if (fin > 0 && fin < total) snprintf(eta, sizeof eta, "about %.0f s left", el / fin * (total - fin));
    else if (fin == total) snprintf(eta, sizeof eta, "finished");
    if (p->tty) {
        fprintf(stderr, "\r\033[Kjob %llu: %u/%u proved%s%.0u%s, %.1f s elapsed, %s", (unsigned long long)p->job, done,
                total, failed ? ", " : "", failed, failed ? " failed" : "", el, eta);
        p->drawn = true;
    } else if (!p->printed || done != p->last_done || failed != p->last_failed || total != p->last_total) {
        fprintf(stderr, "job %llu: %u/%u proved, %u failed, %.1f s elapsed, %s\n", (unsigned long long)p->job, done,
                total, failed, el, eta);
    }
    fflush(stderr);
    p->printed = true;
    p->last_done = done; p->last_failed = failed; p->last_total = total;
}

static void json_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

/* the result as the HTTP API's job object; proof/public are the broker's own JSON texts */
static void print_json(FILE *f, const zp_client_result_t *r, bool timed_out)
{
    fprintf(f, "{\"id\":%llu,\"state\":\"%s\",\"timed_out\":%s,\"partitions\":[", (unsigned long long)zp_client_result_job(r),
            zp_client_result_state(r), timed_out ? "true" : "false");
    for (uint32_t i = 0; i < zp_client_result_parts(r); i++) {
        fprintf(f, "%s{\"state\":\"%s\",\"attempts\":%u", i ? "," : "", zp_client_result_part_state(r, i),
                zp_client_result_part_attempts(r, i));
        if (zp_client_result_proof(r, i)) fprintf(f, ",\"proof\":%s,\"public\":%s", zp_client_result_proof(r, i),
                                                  zp_client_result_public(r, i) ? zp_client_result_public(r, i) : "null");
        if (zp_client_result_error(r, i)) { fputs(",\"error\":", f); json_text(f, zp_client_result_error(r, i)); }
        fputc('}', f);
    }
    fputs("]}\n", f);
}

static int write_results(const char *out, const zp_client_result_t *r)
{
    int status = 0;
    for (uint32_t i = 0; i < zp_client_result_parts(r); i++) {
        const char *proof = zp_client_result_proof(r, i), *pub = zp_client_result_public(r, i);
        size_t blen;
        const uint8_t *bin = zp_client_result_proof_bin(r, i, &blen);
        if (!proof) continue;
        if (write_file(out, i, "proof", "json", proof, strlen(proof)) < 0 ||
            write_file(out, i, "public", "json", pub ? pub : "", pub ? strlen(pub) : 0) < 0 ||
            (bin && write_file(out, i, "proof", "bin", bin, blen) < 0))
            status = ZP_CLIENT_SYSTEM;
    }
    return status;
}

int zp_cmd_await(int argc, char **argv)
{
    conn_opts_t co = {0};
    const char *out = NULL;
    double timeout = -1;
    bool json = false, quiet = false, bad = false;
    int c;
    static const struct option opts[] = {RUNDIR_OPT, {"timeout", 1, 0, 't'}, {"out", 1, 0, 'o'}, {"json", 0, 0, 'j'},
                                         {"quiet", 0, 0, 'q'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (conn_opt(&co, c, optarg, &bad)) continue;
        switch (c) {
        case 't': {
            char *e;
            timeout = strtod(optarg, &e);
            if (e == optarg || *e || timeout < 0) {
                fprintf(stderr, "zkpipe await: --timeout must be seconds >= 0, got '%s'\n", optarg);
                return ZP_CLIENT_USAGE;
            }
            break;
        }
        case 'o': out = optarg; break;
        case 'j': json = true; break;
        case 'q': quiet = true; break;
        default: goto usage;
        }
    }
    uint64_t job;
    if (bad) return ZP_CLIENT_USAGE;
    if (argc - optind != 1 || parse_job(argv[optind], &job) < 0) goto usage;
    if (out && mkdir(out, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "zkpipe await: %s: %s\n", out, strerror(errno));
        return ZP_CLIENT_USAGE;
    }
    zp_client_t *cl = client_open(&co);
    if (!cl) return ZP_CLIENT_SYSTEM;
    progress_t pr = {.tty = isatty(STDERR_FILENO), .quiet = quiet, .job = job, .t0 = zp_now_ns()};
    if (!quiet) zp_client_set_progress(cl, on_progress, &pr, pr.tty ? 500 : 2000);   /* quiet: one long wait per call */
    zp_client_result_t *r = NULL;
    int rc = zp_client_await(cl, job, timeout < 0 ? -1 : (int64_t)(timeout * 1000 + 0.5), &r);
    if (pr.drawn) fputc('\n', stderr);
    if (r) {
        for (uint32_t i = 0; i < zp_client_result_parts(r); i++)
            if (zp_client_result_error(r, i))
                fprintf(stderr, "partition %u failed after %u attempt(s): %s\n", i, zp_client_result_part_attempts(r, i),
                        zp_client_result_error(r, i));
        if (out && write_results(out, r) && rc == ZP_CLIENT_OK) rc = ZP_CLIENT_SYSTEM;
        if (json) print_json(stdout, r, rc == ZP_CLIENT_TIMEOUT);
        else printf("job %llu: %s, %u/%u partitions proved%s\n", (unsigned long long)job, zp_client_result_state(r),
                    zp_client_result_done(r), zp_client_result_parts(r), rc == ZP_CLIENT_TIMEOUT ? " (timed out waiting)" : "");
    }
    if (rc && rc != ZP_CLIENT_FAILED) fail("await", cl, rc);
    zp_client_result_free(&r);
    zp_client_destroy(&cl);
    return rc;
usage:
    fprintf(stderr, "usage: zkpipe await JOB [--timeout SECONDS] [--out DIR] [--json] [--quiet] " RUNDIR_USAGE "\n");
    return ZP_CLIENT_USAGE;
}

/* ---------------------------------------------------------------- status, cancel, trace, metrics */
/* parse only the shared options and --json (json NULL: --json not accepted); 0 or -1 */
static int simple_opts(int argc, char **argv, conn_opts_t *co, bool *json)
{
    static const struct option with_json[] = {RUNDIR_OPT, {"json", 0, 0, 'j'}, {0, 0, 0, 0}};
    static const struct option plain[] = {RUNDIR_OPT, {0, 0, 0, 0}};
    bool bad = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", json ? with_json : plain, NULL)) != -1) {
        if (conn_opt(co, c, optarg, &bad)) continue;
        if (c == 'j' && json) { *json = true; continue; }
        return -1;
    }
    return bad ? -1 : 0;
}

static int print_text(const char *cmd, const conn_opts_t *co, int (*fn)(zp_client_t *, void *, char **), void *arg,
                      FILE *out)
{
    zp_client_t *cl = client_open(co);
    if (!cl) return ZP_CLIENT_SYSTEM;
    char *text = NULL;
    int rc = fn(cl, arg, &text);
    if (rc) fail(cmd, cl, rc);
    else fputs(text, out);
    zp_client_free(text);
    zp_client_destroy(&cl);
    return rc;
}

static int do_status(zp_client_t *c, void *arg, char **t) { return zp_client_status(c, *(bool *)arg, t); }
static int do_metrics(zp_client_t *c, void *arg, char **t) { (void)arg; return zp_client_metrics(c, t); }
static int do_trace(zp_client_t *c, void *arg, char **t) { return zp_client_trace(c, *(uint32_t *)arg, t); }

int zp_cmd_status(int argc, char **argv)
{
    conn_opts_t co = {0};
    bool json = false;
    if (simple_opts(argc, argv, &co, &json) != 0 || optind != argc) {
        fprintf(stderr, "usage: zkpipe status [--json] " RUNDIR_USAGE "\n");
        return ZP_CLIENT_USAGE;
    }
    return print_text("status", &co, do_status, &json, stdout);
}

int zp_cmd_cancel(int argc, char **argv)
{
    conn_opts_t co = {0};
    uint64_t job;
    if (simple_opts(argc, argv, &co, NULL) != 0 || argc - optind != 1 || parse_job(argv[optind], &job) < 0) {
        fprintf(stderr, "usage: zkpipe cancel JOB " RUNDIR_USAGE "\n");
        return ZP_CLIENT_USAGE;
    }
    zp_client_t *cl = client_open(&co);
    if (!cl) return ZP_CLIENT_SYSTEM;
    uint32_t freed = 0;
    int rc = zp_client_cancel(cl, job, &freed);
    if (rc) fail("cancel", cl, rc);
    else printf("job %llu canceled (%u slot(s) freed)\n", (unsigned long long)job, freed);
    zp_client_destroy(&cl);
    return rc;
}

int zp_cmd_trace(int argc, char **argv)
{
    conn_opts_t co = {0};
    const char *out = NULL;
    uint32_t maxp = 0;
    static const struct option opts[] = {RUNDIR_OPT, {"out", 1, 0, 'o'}, {"max-parts", 1, 0, 'm'}, {0, 0, 0, 0}};
    bool bad = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (conn_opt(&co, c, optarg, &bad)) continue;
        if (c == 'o') out = optarg;
        else if (c == 'm') {
            char *e;
            unsigned long v = strtoul(optarg, &e, 10);
            if (e == optarg || *e || v > 1u << 20) goto usage;
            maxp = (uint32_t)v;
        } else goto usage;
    }
    if (bad || !out || optind != argc) goto usage;
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) { fprintf(stderr, "zkpipe trace: %s: %s\n", out, strerror(errno)); return ZP_CLIENT_USAGE; }
    int rc = print_text("trace", &co, do_trace, &maxp, f);
    if (f != stdout && fclose(f) != 0 && !rc) rc = ZP_CLIENT_SYSTEM;
    if (!rc && f != stdout) fprintf(stderr, "zkpipe trace: wrote %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", out);
    return rc;
usage:
    fprintf(stderr, "usage: zkpipe trace --out trace.json [--max-parts N] " RUNDIR_USAGE "\n");
    return ZP_CLIENT_USAGE;
}

int zp_cmd_metrics(int argc, char **argv)
{
    conn_opts_t co = {0};
    if (simple_opts(argc, argv, &co, NULL) != 0 || optind != argc) {
        fprintf(stderr, "usage: zkpipe metrics " RUNDIR_USAGE "   (Prometheus text exposition format)\n");
        return ZP_CLIENT_USAGE;
    }
    return print_text("metrics", &co, do_metrics, NULL, stdout);
}
