/* client.c - `zkpipe submit | await | status | cancel | trace | metrics`: clients of a running broker.
 * Each command connects a DEALER to ipc://<runtime dir>/broker.sock (--runtime-dir DIR, else
 * $ZP_RUNTIME_DIR, $XDG_RUNTIME_DIR/zkpipe, /tmp/zkpipe-<uid>), sends one request and waits
 * for the reply. Paths are made absolute before submission (the daemons run elsewhere).
 * Exit status: 0 ok; 1 failure (a failed partition, an error from the broker); 2 usage;
 * 3 await timed out; 4 the job was canceled. Tests: tests/ipc/. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lib/util/util.h"
#include "proto/peer.h"

static int connect_broker(zp_peer_t *p, const char *rundir_opt)
{
    char rundir[512], ep[600];
    if (zp_runtime_dir(rundir, sizeof rundir, rundir_opt, false) < 0 || zp_broker_endpoint(ep, sizeof ep, rundir) < 0) {
        fprintf(stderr, "zkpipe: %s (is `zkpipe up` running?)\n", zp_err_msg());
        return -1;
    }
    struct stat st;
    if (stat(ep + 6, &st) < 0) {
        fprintf(stderr, "zkpipe: no broker socket at %s (is `zkpipe up` running?)\n", ep + 6);
        return -1;
    }
    if (zp_peer_open(p, ep, 0) < 0) {
        fprintf(stderr, "zkpipe: %s\n", zp_err_msg());
        return -1;
    }
    return 0;
}

static int call_err(int rc)
{
    fprintf(stderr, "zkpipe: %s: %s\n", zp_strerror(rc), zp_err_msg());
    return 1;
}

/* connect, send one request (buf is consumed), wait for the reply. 0: the reply is in *f and
 * *p stays open until the caller has decoded it; 1: failed, message printed, *p closed. */
static int one_call(const char *rundir, uint8_t *buf, size_t len, zp_peer_t *p, zp_frame_t *f)
{
    if (connect_broker(p, rundir) < 0) { free(buf); return 1; }
    int rc = zp_peer_call(p, buf, len, f, 10000);
    if (rc < 0) { zp_peer_close(p); return call_err(rc); }
    return 0;
}

static int parse_job(const char *s, uint64_t *job)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || e == s || *e || v == 0) { fprintf(stderr, "zkpipe: '%s' is not a job id\n", s); return -1; }
    *job = v;
    return 0;
}

#define RUNDIR_OPT {"runtime-dir", 1, 0, 'R'}

int zp_cmd_submit(int argc, char **argv)
{
    const char *rundir = NULL, *zkey = NULL, *r1cs = NULL, *rid = NULL;
    int prio = ZP_PRIO_NORMAL, c;
    static const struct option opts[] = {RUNDIR_OPT, {"zkey", 1, 0, 'z'}, {"r1cs", 1, 0, 'r'}, {"priority", 1, 0, 'p'},
                                         {"request-id", 1, 0, 'i'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'R': rundir = optarg; break;
        case 'z': zkey = optarg; break;
        case 'r': r1cs = optarg; break;
        case 'i': rid = optarg; break;
        case 'p':
            if ((prio = zp_prio_parse(optarg)) < 0) {
                fprintf(stderr, "zkpipe submit: priority must be critical, high, normal or low\n");
                return 2;
            }
            break;
        default: goto usage;
        }
    }
    int nw = argc - optind;
    if (!zkey || nw < 1) goto usage;
    if (nw > ZP_MSG_MAX_PARTS) { fprintf(stderr, "zkpipe submit: at most %d witnesses per job\n", ZP_MSG_MAX_PARTS); return 2; }
    static char paths[ZP_MSG_MAX_PARTS + 2][PATH_MAX];
    static zp_msg_submit_t m;
    char ridbuf[40];
    memset(&m, 0, sizeof m);
    if (!realpath(zkey, paths[0])) { fprintf(stderr, "zkpipe submit: %s: %s\n", zkey, strerror(errno)); return 1; }
    if (r1cs && !realpath(r1cs, paths[1])) { fprintf(stderr, "zkpipe submit: %s: %s\n", r1cs, strerror(errno)); return 1; }
    for (int i = 0; i < nw; i++)
        if (!realpath(argv[optind + i], paths[2 + i])) {
            fprintf(stderr, "zkpipe submit: %s: %s\n", argv[optind + i], strerror(errno));
            return 1;
        }
    if (!rid) {
        uint64_t r = zp_incarnation_new();
        snprintf(ridbuf, sizeof ridbuf, "auto-%016llx", (unsigned long long)r);
        rid = ridbuf;
    }
    m.request_id = zp_str(rid);
    m.zkey = zp_str(paths[0]);
    m.r1cs = zp_str(r1cs ? paths[1] : "");
    m.priority = (uint32_t)prio;
    m.n_wtns = (size_t)nw;
    for (int i = 0; i < nw; i++) m.wtns[i] = zp_str(paths[2 + i]);
    uint8_t *buf; size_t len;
    int rc = zp_msg_submit_encode(&buf, &len, &m);
    if (rc < 0) return call_err(rc);
    zp_peer_t p;
    zp_frame_t f;
    zp_msg_submitted_t r;
    if (one_call(rundir, buf, len, &p, &f)) return 1;
    rc = zp_msg_submitted_decode(&r, &f);
    zp_peer_close(&p);
    if (rc < 0) return call_err(rc);
    printf("%llu\n", (unsigned long long)r.job);
    if (r.existed) fprintf(stderr, "zkpipe submit: request id '%s' was already submitted: job %llu\n", rid,
                           (unsigned long long)r.job);
    return 0;
usage:
    fprintf(stderr, "usage: zkpipe submit --zkey Z [--r1cs R] [--priority critical|high|normal|low] [--request-id ID]\n"
                    "                     [--runtime-dir DIR] W1.wtns [W2.wtns ...]\n");
    return 2;
}

static int write_file(const char *dir, const char *name, int idx, const void *data, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s-%d.%s", dir, name, idx, strcmp(name, "proof-bin") ? "json" : "bin");
    if (!strcmp(name, "proof-bin")) snprintf(path, sizeof path, "%s/proof-%d.bin", dir, idx);
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "zkpipe await: %s: %s\n", path, strerror(errno)); return -1; }
    size_t n = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || n != len) { fprintf(stderr, "zkpipe await: writing %s failed\n", path); return -1; }
    return 0;
}

int zp_cmd_await(int argc, char **argv)
{
    const char *rundir = NULL, *out = NULL;
    double timeout = -1;
    int c;
    static const struct option opts[] = {RUNDIR_OPT, {"timeout", 1, 0, 't'}, {"out", 1, 0, 'o'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'R': rundir = optarg; break;
        case 't': timeout = strtod(optarg, NULL); if (timeout < 0) goto usage; break;
        case 'o': out = optarg; break;
        default: goto usage;
        }
    }
    uint64_t job;
    if (argc - optind != 1 || parse_job(argv[optind], &job) < 0) goto usage;
    if (out && mkdir(out, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "zkpipe await: %s: %s\n", out, strerror(errno));
        return 1;
    }
    zp_peer_t p;
    if (connect_broker(&p, rundir) < 0) return 1;
    uint64_t deadline = timeout < 0 ? UINT64_MAX : zp_now_ns() + (uint64_t)(timeout * 1e9);
    zp_msg_result_t r = {0};
    int rc;
    for (;;) {
        uint64_t now = zp_now_ns();
        uint64_t left_ms = deadline == UINT64_MAX ? 60000 : deadline > now ? (deadline - now) / 1000000u : 0;
        if (left_ms > 60000) left_ms = 60000;
        zp_msg_await_t m = {.job = job, .timeout_ms = (uint32_t)left_ms};
        uint8_t *buf; size_t len;
        zp_frame_t f;
        if ((rc = zp_msg_await_encode(&buf, &len, &m)) < 0) break;
        if ((rc = zp_peer_call(&p, buf, len, &f, (int)left_ms + 10000)) < 0) break;
        if ((rc = zp_msg_result_decode(&r, &f)) < 0) break;
        if (!r.timed_out || zp_now_ns() >= deadline) break;
        zp_msg_result_free(&r);
    }
    if (rc < 0) { zp_peer_close(&p); return call_err(rc); }
    int status = 0;
    unsigned nd = 0, nf = 0;
    for (size_t i = 0; i < r.n_parts; i++) {
        zp_msg_part_result_t *pr = &r.parts[i];
        if (pr->state == ZP_PART_DONE) {
            nd++;
            if (out && (write_file(out, "proof", (int)i, pr->proof_json.p, pr->proof_json.len) < 0 ||
                        write_file(out, "public", (int)i, pr->public_json.p, pr->public_json.len) < 0 ||
                        (pr->proof_bin_len && write_file(out, "proof-bin", (int)i, pr->proof_bin, pr->proof_bin_len) < 0)))
                status = 1;
        } else if (pr->state == ZP_PART_FAILED) {
            nf++;
            fprintf(stderr, "partition %zu failed after %u attempt(s): %.*s\n", i, pr->attempts, (int)pr->error.len,
                    pr->error.p);
        }
    }
    printf("job %llu: %s, %u/%zu partitions proved%s\n", (unsigned long long)r.job, zp_job_state_name(r.state), nd,
           r.n_parts, r.timed_out ? " (timed out waiting)" : "");
    if (r.timed_out) { fprintf(stderr, "zkpipe await: timed out; job %llu is still running\n", (unsigned long long)job); status = 3; }
    else if (r.state == ZP_JOB_CANCELED) status = 4;
    else if (nf || r.state == ZP_JOB_FAILED) status = 1;
    zp_msg_result_free(&r);
    zp_peer_close(&p);
    return status;
usage:
    fprintf(stderr, "usage: zkpipe await JOB [--timeout SECONDS] [--out DIR] [--runtime-dir DIR]\n");
    return 2;
}

static int text_call(const char *rundir, uint8_t *buf, size_t len, FILE *out)
{
    zp_peer_t p;
    zp_frame_t f;
    zp_msg_text_t t;
    if (one_call(rundir, buf, len, &p, &f)) return 1;
    int rc = zp_msg_text_decode(&t, &f);
    if (rc == 0) fwrite(t.text.p, 1, t.text.len, out);
    zp_peer_close(&p);
    return rc < 0 ? call_err(rc) : 0;
}

int zp_cmd_status(int argc, char **argv)
{
    const char *rundir = NULL;
    bool json = false;
    int c;
    static const struct option opts[] = {RUNDIR_OPT, {"json", 0, 0, 'j'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'R') rundir = optarg;
        else if (c == 'j') json = true;
        else { fprintf(stderr, "usage: zkpipe status [--json] [--runtime-dir DIR]\n"); return 2; }
    }
    zp_msg_status_t m = {.json = json};
    uint8_t *buf; size_t len;
    int rc = zp_msg_status_encode(&buf, &len, &m);
    return rc < 0 ? call_err(rc) : text_call(rundir, buf, len, stdout);
}

int zp_cmd_cancel(int argc, char **argv)
{
    const char *rundir = NULL;
    int c;
    static const struct option opts[] = {RUNDIR_OPT, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'R') rundir = optarg;
        else goto usage;
    }
    uint64_t job;
    if (argc - optind != 1 || parse_job(argv[optind], &job) < 0) goto usage;
    zp_msg_cancel_t m = {.job = job};
    uint8_t *buf; size_t len;
    int rc = zp_msg_cancel_encode(&buf, &len, &m);
    if (rc < 0) return call_err(rc);
    zp_peer_t p;
    zp_frame_t f;
    zp_msg_canceled_t r;
    if (one_call(rundir, buf, len, &p, &f)) return 1;
    rc = zp_msg_canceled_decode(&r, &f);
    zp_peer_close(&p);
    if (rc < 0) return call_err(rc);
    printf("job %llu canceled (%u slot(s) freed)\n", (unsigned long long)r.job, r.freed);
    return 0;
usage:
    fprintf(stderr, "usage: zkpipe cancel JOB [--runtime-dir DIR]\n");
    return 2;
}

int zp_cmd_trace(int argc, char **argv)
{
    const char *rundir = NULL, *out = NULL;
    unsigned maxp = 0;
    int c;
    static const struct option opts[] = {RUNDIR_OPT, {"out", 1, 0, 'o'}, {"max-parts", 1, 0, 'm'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'R') rundir = optarg;
        else if (c == 'o') out = optarg;
        else if (c == 'm') maxp = (unsigned)strtoul(optarg, NULL, 10);
        else goto usage;
    }
    if (!out || optind != argc) goto usage;
    zp_msg_trace_t m = {.max_parts = maxp};
    uint8_t *buf; size_t len;
    int rc = zp_msg_trace_encode(&buf, &len, &m);
    if (rc < 0) return call_err(rc);
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) { fprintf(stderr, "zkpipe trace: %s: %s\n", out, strerror(errno)); free(buf); return 1; }
    rc = text_call(rundir, buf, len, f);
    if (f != stdout && fclose(f) != 0) rc = 1;
    if (!rc && f != stdout) fprintf(stderr, "zkpipe trace: wrote %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", out);
    return rc;
usage:
    fprintf(stderr, "usage: zkpipe trace --out trace.json [--max-parts N] [--runtime-dir DIR]\n");
    return 2;
}

int zp_cmd_metrics(int argc, char **argv)
{
    const char *rundir = NULL;
    int c;
    static const struct option opts[] = {RUNDIR_OPT, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'R') rundir = optarg;
        else goto usage;
    }
    if (optind != argc) goto usage;
    zp_msg_metrics_t m = {.format = 0};
    uint8_t *buf; size_t len;
    int rc = zp_msg_metrics_encode(&buf, &len, &m);
    return rc < 0 ? call_err(rc) : text_call(rundir, buf, len, stdout);
usage:
    fprintf(stderr, "usage: zkpipe metrics [--runtime-dir DIR]   (Prometheus text exposition format)\n");
    return 2;
}
