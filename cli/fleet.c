/* fleet.c - `zkpipe fleet init URL` and the fleet clients `zkpipe submit|await|status|cancel
 * --fleet URL` (or with $ZP_FLEET set): the same commands as for a local broker, against the
 * PostgreSQL queue that boxes (`zkpipe up --fleet URL`) take work from.
 * The connection string is never printed; messages name user@host/db only.
 * Inputs: zkey, r1cs and witness paths are made absolute and must be readable by every box
 * (shared storage); --witness-in-db stores the witness bytes in the database instead (up to
 * the fleet's limit, `zkpipe fleet init URL --max-db-witness BYTES`).
 * Exit status as the local commands: 0 ok; 1 failure; 2 usage; 3 await timed out; 4 canceled.
 * Tests: tests/fleet/. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lib/util/util.h"
#include "proto/peer.h"
#include "proto/proto.h"

static const char *const client_cmds[] = {"submit", "await", "status", "cancel"};

bool zp_fleet_wanted(int argc, char **argv)
{
    bool cmd = false, rundir = false;
    for (size_t i = 0; i < sizeof client_cmds / sizeof client_cmds[0]; i++)
        if (argc > 0 && !strcmp(argv[0], client_cmds[i])) cmd = true;
    if (!cmd) return false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fleet") || !strncmp(argv[i], "--fleet=", 8)) return true;
        if (!strcmp(argv[i], "--runtime-dir") || !strncmp(argv[i], "--runtime-dir=", 14)) rundir = true;
    }
    const char *e = getenv("ZP_FLEET");
    return e && *e && !rundir;   /* $ZP_FLEET: the fleet, unless a local runtime dir is named */
}

#ifndef ZP_HAVE_FLEET
static int no_fleet(void)
{
    fprintf(stderr, "zkpipe: this zkpipe was built without PostgreSQL (libpq-dev was missing): fleet mode is not "
                    "available; install libpq-dev and rebuild\n");
    return 1;
}
int zp_cmd_fleet(int argc, char **argv) { (void)argc; (void)argv; return no_fleet(); }
int zp_cmd_fleet_client(int argc, char **argv) { (void)argc; (void)argv; return no_fleet(); }
#else
#include "broker/fleet_db.h"

static PGconn *open_db(const char *url, const char *who)
{
    char err[1024];
    if (!url || !*url) url = getenv("ZP_FLEET");
    if (!url || !*url) { fprintf(stderr, "zkpipe %s: no fleet URL (--fleet URL or $ZP_FLEET)\n", who); return NULL; }
    PGconn *c = zp_fleet_connect(url, "zkpipe-client", true, err, sizeof err);
    if (!c) fprintf(stderr, "zkpipe %s: %s\n", who, err);
    return c;
}

static PGresult *q(PGconn *c, const char *who, const char *sql, int n, const char *const *v)
{
    char err[1024];
    PGresult *r = zp_fleet_exec(c, NULL, sql, n, v, NULL, 0, err, sizeof err);
    if (!r) fprintf(stderr, "zkpipe %s: %s\n", who, err);
    return r;
}

static int parse_job(const char *s, char *out, size_t n)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || e == s || *e || v == 0 || v > INT64_MAX) { fprintf(stderr, "zkpipe: '%s' is not a job id\n", s); return -1; }
    snprintf(out, n, "%llu", v);
    return 0;
}

static int read_file(const char *path, uint8_t **data, size_t *len, size_t limit)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "zkpipe submit: %s: %s\n", path, strerror(errno)); return -1; }
    struct stat st;
    if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > limit) {
        fprintf(stderr, "zkpipe submit: %s: not a regular file of at most %zu bytes (--max-db-witness)\n", path, limit);
        fclose(f);
        return -1;
    }
    *len = (size_t)st.st_size;
    *data = malloc(*len ? *len : 1);
    if (!*data || fread(*data, 1, *len, f) != *len) {
        fprintf(stderr, "zkpipe submit: %s: read failed\n", path);
        free(*data);
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

/* ---------------------------------------------------------------- submit */
static int fleet_submit(int argc, char **argv)
{
    const char *url = NULL, *zkey = NULL, *r1cs = NULL, *rid = NULL;
    int prio = ZP_PRIO_NORMAL, attempts = 3, c, rc = 1;
    bool in_db = false;
    static const struct option opts[] = {{"fleet", 1, 0, 'F'}, {"zkey", 1, 0, 'z'}, {"r1cs", 1, 0, 'r'},
                                         {"priority", 1, 0, 'p'}, {"request-id", 1, 0, 'i'},
                                         {"max-attempts", 1, 0, 'k'}, {"witness-in-db", 0, 0, 'D'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'F': url = optarg; break;
        case 'z': zkey = optarg; break;
        case 'r': r1cs = optarg; break;
        case 'i': rid = optarg; break;
        case 'D': in_db = true; break;
        case 'k': attempts = atoi(optarg); if (attempts < 1 || attempts > 100) goto usage; break;
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
    if (rid && (strlen(rid) < 1 || strlen(rid) > 128)) { fprintf(stderr, "zkpipe submit: --request-id: 1 to 128 bytes\n"); return 2; }
    char zk[PATH_MAX], rc1[PATH_MAX] = "", ridbuf[40];
    if (!realpath(zkey, zk)) { fprintf(stderr, "zkpipe submit: %s: %s\n", zkey, strerror(errno)); return 1; }
    if (r1cs && !realpath(r1cs, rc1)) { fprintf(stderr, "zkpipe submit: %s: %s\n", r1cs, strerror(errno)); return 1; }
    char **paths = calloc((size_t)nw, sizeof *paths);
    uint8_t **data = calloc((size_t)nw, sizeof *data);
    size_t *lens = calloc((size_t)nw, sizeof *lens);
    char *pa = NULL, *da = NULL;
    PGconn *db = NULL;
    if (!paths || !data || !lens) goto out;
    for (int i = 0; i < nw; i++) {
        if (in_db) {
            if (read_file(argv[optind + i], &data[i], &lens[i], 1u << 30) < 0) goto out;
        } else if (!(paths[i] = realpath(argv[optind + i], NULL))) {
            fprintf(stderr, "zkpipe submit: %s: %s\n", argv[optind + i], strerror(errno));
            goto out;
        }
    }
    if (!rid) {
        snprintf(ridbuf, sizeof ridbuf, "auto-%016llx", (unsigned long long)zp_incarnation_new());
        rid = ridbuf;
    }
    if (!(pa = zp_fleet_text_array((const char *const *)paths, (size_t)nw)) ||
        !(da = zp_fleet_bytea_array((const uint8_t *const *)data, lens, (size_t)nw)))
        goto out;
    if (!(db = open_db(url, "submit"))) goto out;
    char pr[16], at[16];
    snprintf(pr, sizeof pr, "%d", prio);
    snprintf(at, sizeof at, "%d", attempts);
    const char *v[] = {rid, zk, rc1, pr, at, pa, da};
    PGresult *r = q(db, "submit", "SELECT o_job, o_existed, o_n_parts FROM zkpipe.submit($1, $2, $3, $4::int, $5::int, "
                                  "$6::text[], $7::bytea[])", 7, v);
    if (!r) goto out;
    printf("%s\n", PQgetvalue(r, 0, 0));
    if (!strcmp(PQgetvalue(r, 0, 1), "t"))
        fprintf(stderr, "zkpipe submit: request id '%s' was already submitted: job %s\n", rid, PQgetvalue(r, 0, 0));
    PQclear(r);
    rc = 0;
out:
    for (int i = 0; paths && data && i < nw; i++) { free(paths[i]); free(data[i]); }
    free(paths); free(data); free(lens); free(pa); free(da);
    if (db) PQfinish(db);
    return rc;
usage:
    fprintf(stderr, "usage: zkpipe submit --fleet URL --zkey Z [--r1cs R] [--priority critical|high|normal|low]\n"
                    "                     [--request-id ID] [--max-attempts K] [--witness-in-db] W1.wtns [W2.wtns ...]\n");
    return 2;
}

/* ---------------------------------------------------------------- await */
static int write_out(const char *dir, const char *name, const char *idx, const char *ext, const void *d, size_t n)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s-%s.%s", dir, name, idx, ext);
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "zkpipe await: %s: %s\n", path, strerror(errno)); return -1; }
    size_t w = fwrite(d, 1, n, f);
    if (fclose(f) != 0 || w != n) { fprintf(stderr, "zkpipe await: writing %s failed\n", path); return -1; }
    return 0;
}

static int await_results(PGconn *db, const char *job, const char *out, const char *state, int n_parts, bool timed_out)
{
    const char *v[] = {job};
    int status = 0;
    unsigned nd = 0, nf = 0;
    PGresult *r = q(db, "await", "SELECT p.idx, p.state, p.attempts, p.reasons, r.proof_json, r.public_json, "
                                 "encode(r.proof_bin, 'hex') FROM zkpipe.partitions p LEFT JOIN zkpipe.results r "
                                 "ON r.partition_id = p.id WHERE p.job_id = $1::bigint ORDER BY p.idx", 1, v);
    if (!r) return 1;
    for (int t = 0; t < PQntuples(r); t++) {
        const char *idx = PQgetvalue(r, t, 0), *st = PQgetvalue(r, t, 1);
        if (!strcmp(st, "done") && !PQgetisnull(r, t, 4)) {
            nd++;
            if (!out) continue;
            const char *hex = PQgetvalue(r, t, 6);
            size_t hl = strlen(hex), bl = hl / 2;
            uint8_t bin[4096];
            for (size_t k = 0; k < bl && k < sizeof bin; k++) {
                unsigned x;
                sscanf(hex + 2 * k, "%2x", &x);
                bin[k] = (uint8_t)x;
            }
            if (write_out(out, "proof", idx, "json", PQgetvalue(r, t, 4), (size_t)PQgetlength(r, t, 4)) < 0 ||
                write_out(out, "public", idx, "json", PQgetvalue(r, t, 5), (size_t)PQgetlength(r, t, 5)) < 0 ||
                (bl && bl <= sizeof bin && write_out(out, "proof", idx, "bin", bin, bl) < 0))
                status = 1;
        } else if (!strcmp(st, "failed")) {
            nf++;
            fprintf(stderr, "partition %s failed after %s attempt(s): %s\n", idx, PQgetvalue(r, t, 2), PQgetvalue(r, t, 3));
        }
    }
    PQclear(r);
    printf("job %s: %s, %u/%d partitions proved%s\n", job, state, nd, n_parts, timed_out ? " (timed out waiting)" : "");
    if (timed_out) { fprintf(stderr, "zkpipe await: timed out; job %s is still running\n", job); return 3; }
    if (!strcmp(state, "canceled")) return 4;
    if (nf || !strcmp(state, "failed")) return 1;
    return status;
}

static int fleet_await(int argc, char **argv)
{
    const char *url = NULL, *out = NULL;
    double timeout = -1;
    int c;
    static const struct option opts[] = {{"fleet", 1, 0, 'F'}, {"timeout", 1, 0, 't'}, {"out", 1, 0, 'o'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'F': url = optarg; break;
        case 't': timeout = strtod(optarg, NULL); if (timeout < 0) goto usage; break;
        case 'o': out = optarg; break;
        default: goto usage;
        }
    }
    char job[24];
    if (argc - optind != 1 || parse_job(argv[optind], job, sizeof job) < 0) goto usage;
    if (out && mkdir(out, 0755) < 0 && errno != EEXIST) { fprintf(stderr, "zkpipe await: %s: %s\n", out, strerror(errno)); return 1; }
    PGconn *db = open_db(url, "await");
    if (!db) return 1;
    int rc = 1;
    PGresult *l = q(db, "await", "LISTEN zkpipe_done", 0, NULL);
    if (!l) goto out;
    PQclear(l);
    uint64_t deadline = timeout < 0 ? UINT64_MAX : zp_now_ns() + (uint64_t)(timeout * 1e9);
    const char *v[] = {job};
    for (;;) {
        PGresult *r = q(db, "await", "SELECT state, n_parts FROM zkpipe.jobs WHERE id = $1::bigint", 1, v);
        if (!r) goto out;
        if (PQntuples(r) == 0) { fprintf(stderr, "zkpipe await: no job %s\n", job); PQclear(r); goto out; }
        char state[16];
        snprintf(state, sizeof state, "%s", PQgetvalue(r, 0, 0));
        int n = atoi(PQgetvalue(r, 0, 1));
        PQclear(r);
        uint64_t now = zp_now_ns();
        if (strcmp(state, "running") || now >= deadline) {
            rc = await_results(db, job, out, state, n, !strcmp(state, "running"));
            break;
        }
        /* a NOTIFY zkpipe_done wakes us; a slow poll is the safety net */
        uint64_t left = deadline == UINT64_MAX ? 2000 : (deadline - now) / 1000000u;
        struct pollfd pf = {PQsocket(db), POLLIN, 0};
        poll(&pf, 1, left > 2000 ? 2000 : (int)left + 1);
        if (!PQconsumeInput(db)) { fprintf(stderr, "zkpipe await: lost the database: %s", PQerrorMessage(db)); goto out; }
        PGnotify *nt;
        while ((nt = PQnotifies(db))) PQfreemem(nt);
    }
out:
    PQfinish(db);
    return rc;
usage:
    fprintf(stderr, "usage: zkpipe await --fleet URL JOB [--timeout SECONDS] [--out DIR]\n");
    return 2;
}

/* ---------------------------------------------------------------- status / cancel */
static const char status_json_sql[] =
    "SELECT json_build_object("
    " 'schema', (SELECT max(version) FROM zkpipe.migrations),"
    " 'boxes', coalesce((SELECT json_agg(json_build_object('name', b.name, 'capacity', b.capacity, 'claimed', b.claimed,"
    "   'done_per_minute', (SELECT count(*) FROM zkpipe.results r WHERE r.box = b.name"
    "                       AND r.finished_at > clock_timestamp() - interval '1 minute'),"
    "   'done', b.done_total, 'refused', b.refused_total, 'handbacks', b.handbacks_total, 'expired', b.expired_total,"
    "   'heartbeat_age_s', round(extract(epoch FROM clock_timestamp() - b.heartbeat)::numeric, 3),"
    "   'round_trips', b.round_trips, 'bytes_out', b.bytes_out, 'bytes_in', b.bytes_in) ORDER BY b.name)"
    "   FROM zkpipe.boxes b), '[]'),"
    " 'queue', (SELECT json_build_object('critical', count(*) FILTER (WHERE priority = 0),"
    "   'high', count(*) FILTER (WHERE priority = 1), 'normal', count(*) FILTER (WHERE priority = 2),"
    "   'low', count(*) FILTER (WHERE priority = 3)) FROM zkpipe.partitions WHERE state = 'queued'),"
    " 'running', (SELECT count(*) FROM zkpipe.partitions WHERE state = 'running'),"
    " 'jobs', (SELECT json_build_object('running', count(*) FILTER (WHERE state = 'running'),"
    "   'done', count(*) FILTER (WHERE state = 'done'), 'failed', count(*) FILTER (WHERE state = 'failed'),"
    "   'canceled', count(*) FILTER (WHERE state = 'canceled')) FROM zkpipe.jobs),"
    " 'handed_back', coalesce((SELECT json_agg(json_build_object('job', job_id, 'partition', idx, 'state', state,"
    "   'attempts', attempts, 'why', handback) ORDER BY id) FROM (SELECT id, job_id, idx, state, attempts, handback FROM zkpipe.partitions"
    "   WHERE handback <> '' AND state IN ('queued', 'running') ORDER BY id LIMIT 50) h), '[]'))";

static int fleet_status(int argc, char **argv)
{
    const char *url = NULL;
    bool json = false;
    int c;
    static const struct option opts[] = {{"fleet", 1, 0, 'F'}, {"json", 0, 0, 'j'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'F') url = optarg;
        else if (c == 'j') json = true;
        else { fprintf(stderr, "usage: zkpipe status --fleet URL [--json]\n"); return 2; }
    }
    if (optind != argc) { fprintf(stderr, "usage: zkpipe status --fleet URL [--json]\n"); return 2; }
    PGconn *db = open_db(url, "status");
    if (!db) return 1;
    int rc = 1;
    PGresult *r = q(db, "status", status_json_sql, 0, NULL);
    if (!r) goto out;
    if (json) { printf("%s\n", PQgetvalue(r, 0, 0)); rc = 0; PQclear(r); goto out; }
    PQclear(r);
    char where[300];
    zp_fleet_describe(db, where, sizeof where);
    printf("fleet %s\n", where);
    r = q(db, "status", "SELECT b.name, b.capacity, b.claimed, (SELECT count(*) FROM zkpipe.results x WHERE x.box = b.name "
                        "AND x.finished_at > clock_timestamp() - interval '1 minute'), "
                        "round(extract(epoch FROM clock_timestamp() - b.heartbeat)::numeric, 1), b.done_total, "
                        "b.refused_total, b.handbacks_total, b.expired_total FROM zkpipe.boxes b ORDER BY b.name", 0, NULL);
    if (!r) goto out;
    printf("boxes: %d\n  %-20s %8s %8s %9s %10s %8s %8s %9s %8s\n", PQntuples(r), "name", "capacity", "claimed",
           "done/min", "heartbeat", "done", "refused", "handbacks", "expired");
    for (int t = 0; t < PQntuples(r); t++)
        printf("  %-20s %8s %8s %9s %8ss ago %6s %8s %9s %8s\n", PQgetvalue(r, t, 0), PQgetvalue(r, t, 1),
               PQgetvalue(r, t, 2), PQgetvalue(r, t, 3), PQgetvalue(r, t, 4), PQgetvalue(r, t, 5), PQgetvalue(r, t, 6),
               PQgetvalue(r, t, 7), PQgetvalue(r, t, 8));
    PQclear(r);
    r = q(db, "status", "SELECT p, (SELECT count(*) FROM zkpipe.partitions WHERE state = 'queued' AND priority = p) "
                        "FROM generate_series(0, 3) p", 0, NULL);
    if (!r) goto out;
    printf("queued partitions by priority:");
    for (int t = 0; t < PQntuples(r); t++) printf(" %s %s", zp_prio_name((unsigned)atoi(PQgetvalue(r, t, 0))), PQgetvalue(r, t, 1));
    printf("\n");
    PQclear(r);
    r = q(db, "status", "SELECT job_id, idx, handback FROM zkpipe.partitions WHERE handback <> '' AND state IN "
                        "('queued', 'running') ORDER BY id LIMIT 20", 0, NULL);
    if (!r) goto out;
    for (int t = 0; t < PQntuples(r); t++)
        printf("handed back: job %s partition %s: %s\n", PQgetvalue(r, t, 0), PQgetvalue(r, t, 1), PQgetvalue(r, t, 2));
    PQclear(r);
    rc = 0;
out:
    PQfinish(db);
    return rc;
}

static int fleet_cancel(int argc, char **argv)
{
    const char *url = NULL;
    int c;
    static const struct option opts[] = {{"fleet", 1, 0, 'F'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'F') url = optarg;
        else goto usage;
    }
    char job[24];
    if (argc - optind != 1 || parse_job(argv[optind], job, sizeof job) < 0) goto usage;
    PGconn *db = open_db(url, "cancel");
    if (!db) return 1;
    const char *v[] = {job};
    PGresult *r = q(db, "cancel", "SELECT zkpipe.cancel($1::bigint)", 1, v);
    int rc = 1;
    if (r) {
        int n = atoi(PQgetvalue(r, 0, 0));
        if (n < 0) fprintf(stderr, "zkpipe cancel: no job %s\n", job);
        else { printf("job %s canceled (%d partition(s) stopped)\n", job, n); rc = 0; }
        PQclear(r);
    }
    PQfinish(db);
    return rc;
usage:
    fprintf(stderr, "usage: zkpipe cancel --fleet URL JOB\n");
    return 2;
}

int zp_cmd_fleet_client(int argc, char **argv)
{
    /* --fleet=URL is spelled as two arguments for getopt below; "--fleet" alone is an error */
    if (!strcmp(argv[0], "submit")) return fleet_submit(argc, argv);
    if (!strcmp(argv[0], "await")) return fleet_await(argc, argv);
    if (!strcmp(argv[0], "status")) return fleet_status(argc, argv);
    return fleet_cancel(argc, argv);
}

/* ---------------------------------------------------------------- fleet init */
int zp_cmd_fleet(int argc, char **argv)
{
    long long maxw = -1;
    int c;
    static const struct option opts[] = {{"max-db-witness", 1, 0, 'w'}, {0, 0, 0, 0}};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'w') {
            char *e;
            maxw = strtoll(optarg, &e, 10);
            if (*e || maxw < 0 || maxw > (1ll << 30)) { fprintf(stderr, "zkpipe fleet init: --max-db-witness: 0..2^30 bytes\n"); return 2; }
        } else goto usage;
    }
    if (argc - optind < 1 || strcmp(argv[optind], "init") || argc - optind > 2) goto usage;
    const char *url = argc - optind == 2 ? argv[optind + 1] : getenv("ZP_FLEET");
    if (!url || !*url) goto usage;
    char err[1024], where[300];
    PGconn *db = zp_fleet_connect(url, "zkpipe-init", false, err, sizeof err);
    if (!db) { fprintf(stderr, "zkpipe fleet init: %s\n", err); return 1; }
    zp_fleet_describe(db, where, sizeof where);
    int from, to, rc = zp_fleet_migrate(db, &from, &to, err, sizeof err);
    if (rc < 0) { fprintf(stderr, "zkpipe fleet init: %s: %s\n", where, err); PQfinish(db); return 1; }
    if (maxw >= 0) {
        char v[24];
        snprintf(v, sizeof v, "%lld", maxw);
        const char *vals[] = {v};
        PGresult *r = q(db, "fleet init", "UPDATE zkpipe.meta SET value = $1 WHERE key = 'max_db_witness_bytes'", 1, vals);
        if (!r) { PQfinish(db); return 1; }
        PQclear(r);
    }
    printf("fleet %s: schema version %d%s\n", where, to, from == to ? " (already current)" : "");
    if (from != to) printf("migrated from version %d\n", from);
    PQfinish(db);
    return 0;
usage:
    fprintf(stderr, "usage: zkpipe fleet init [URL] [--max-db-witness BYTES]   (URL default: $ZP_FLEET)\n");
    return 2;
}
#endif
