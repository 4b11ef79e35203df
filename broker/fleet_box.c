/* fleet_box.c - the fleet thread of a box: the only code of the broker that talks to
 * PostgreSQL (blocking libpq calls, on this thread only).
 *
 * NOTES
 * Loop: take items from the broker; (re)connect with backoff (100 ms doubling to 5 s); then,
 * unless cut off by the test hook: renew leases + heartbeat (every lease/3), send finished
 * results and failures (the outbox), reap expired leases (every lease/2), claim up to the
 * free capacity when there may be work (a NOTIFY zkpipe_work, a full previous claim, the slow
 * poll, or a reconnect). Then poll() on the connection's socket (notifications) and the wake
 * pipe. A lost connection drops nothing: held leases and pending results stay in memory (and
 * results in the outbox files) and go out after the reconnect; leases the database let expire
 * meanwhile come back as lost (the local job is canceled) and results for them are refused.
 * Inputs are checked here at claim time: a box that cannot read the zkey, r1cs or witness
 * hands the partition back without spending an attempt and is not offered it again.
 * Tests: tests/fleet/. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/fleet_int.h"
#include "lib/util/util.h"

typedef struct { uint64_t part, epoch; } fl_lease_t;

typedef struct {
    brk_fleet_t *fl;
    PGconn *c;
    char where[300];            /* user@host/db, for logs */
    uint64_t backoff_ms, next_connect, tries;
    bool was_connected, maybe_work;
    uint64_t next_renew, next_reap, next_poll;
    fl_lease_t *held;
    size_t n_held, cap_held;
    fl_item_t *pending;         /* results, failures, handbacks to send (FIFO) */
    uint64_t delivered;         /* claims handed to the broker */
    char err[1024];
} fl_box_t;

static uint64_t ms_now(void) { return zp_now_ns() / 1000000u; }

static void held_add(fl_box_t *x, uint64_t part, uint64_t epoch)
{
    for (size_t i = 0; i < x->n_held; i++)
        if (x->held[i].part == part && x->held[i].epoch == epoch) return;
    if (x->n_held == x->cap_held) {
        size_t nc = x->cap_held ? 2 * x->cap_held : 64;
        fl_lease_t *h = realloc(x->held, nc * sizeof *h);
        if (!h) return;   /* not renewed: the lease expires, the fleet requeues it */
        x->held = h;
        x->cap_held = nc;
    }
    x->held[x->n_held++] = (fl_lease_t){part, epoch};
}

static void held_del(fl_box_t *x, uint64_t part, uint64_t epoch)
{
    for (size_t i = 0; i < x->n_held; i++)
        if (x->held[i].part == part && x->held[i].epoch == epoch) { x->held[i] = x->held[--x->n_held]; return; }
}

static void pending_append(fl_box_t *x, fl_item_t *it)
{
    fl_item_t **t = &x->pending;
    while (*t) t = &(*t)->next;
    it->next = NULL;
    *t = it;
}

static void count(fl_box_t *x, uint64_t *ctr)
{
    pthread_mutex_lock(&x->fl->mu);
    (*ctr)++;
    pthread_mutex_unlock(&x->fl->mu);
}

/* ---------------------------------------------------------------- connection */
static void drop(fl_box_t *x, const char *why)
{
    if (!x->c) return;
    zp_log(ZP_LOG_WARN, "fleet: lost the database %s: %s; holding %zu lease(s) and the outbox, retrying with backoff",
           x->where, why, x->n_held);
    PQfinish(x->c);
    x->c = NULL;
    x->backoff_ms = 100;
    x->next_connect = ms_now() + x->backoff_ms;
    pthread_mutex_lock(&x->fl->mu);
    x->fl->connected = false;
    pthread_mutex_unlock(&x->fl->mu);
}

/* retry later (connection-level or transient server error) vs. the statement is wrong */
static bool transient(const fl_box_t *x)
{
    static const char *const classes[] = {"(SQLSTATE 08", "(SQLSTATE 40", "(SQLSTATE 53", "(SQLSTATE 57", "(SQLSTATE 58"};
    if (!x->c || PQstatus(x->c) != CONNECTION_OK || !strstr(x->err, "(SQLSTATE ")) return true;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strstr(x->err, classes[i])) return true;
    return false;
}

static PGresult *exec(fl_box_t *x, const char *sql, int n, const char *const *vals, const int *lens, unsigned bin)
{
    pthread_mutex_lock(&x->fl->mu);
    zp_fleet_io_t io = x->fl->io;
    pthread_mutex_unlock(&x->fl->mu);
    PGresult *r = zp_fleet_exec(x->c, &io, sql, n, vals, lens, bin, x->err, sizeof x->err);
    pthread_mutex_lock(&x->fl->mu);
    x->fl->io = io;
    pthread_mutex_unlock(&x->fl->mu);
    if (!r && PQstatus(x->c) != CONNECTION_OK) drop(x, x->err);
    return r;
}

static void try_connect(fl_box_t *x)
{
    char app[200];
    snprintf(app, sizeof app, "zkpipe-box %s", x->fl->box);
    x->tries++;
    x->c = zp_fleet_connect(x->fl->url, app, true, x->err, sizeof x->err);
    if (x->c) {
        PGresult *r = PQexec(x->c, "LISTEN zkpipe_work; LISTEN zkpipe_cancel");
        bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok) { snprintf(x->err, sizeof x->err, "LISTEN: %s", PQerrorMessage(x->c)); PQfinish(x->c); x->c = NULL; }
    }
    if (!x->c) {
        if (x->tries == 1 || x->tries % 20 == 0)
            zp_log(ZP_LOG_WARN, "fleet: %s (try %" PRIu64 "; retrying in %" PRIu64 " ms)", x->err, x->tries, x->backoff_ms);
        x->next_connect = ms_now() + x->backoff_ms;
        x->backoff_ms = x->backoff_ms * 2 > 5000 ? 5000 : x->backoff_ms * 2;
        return;
    }
    zp_fleet_describe(x->c, x->where, sizeof x->where);
    zp_log(ZP_LOG_INFO, "fleet: %s %s as box '%s' after %" PRIu64 " tr%s", x->was_connected ? "reconnected to" : "connected to",
           x->where, x->fl->box, x->tries, x->tries == 1 ? "y" : "ies");
    pthread_mutex_lock(&x->fl->mu);
    x->fl->connected = true;
    if (x->was_connected) x->fl->reconnects++;
    pthread_mutex_unlock(&x->fl->mu);
    x->was_connected = true;
    x->tries = 0;
    x->backoff_ms = 100;
    x->maybe_work = true;
    x->next_renew = 0;        /* renew first: our leases before anybody reaps them */
    x->next_reap = ms_now() + (uint64_t)x->fl->lease_ms / 2;
}

/* ---------------------------------------------------------------- leases */
static char *id_array(const fl_box_t *x, bool epochs)
{
    char *s = malloc(x->n_held * 24 + 3), *o = s;
    if (!s) return NULL;
    *o++ = '{';
    for (size_t i = 0; i < x->n_held; i++)
        o += sprintf(o, "%s%" PRIu64, i ? "," : "", epochs ? x->held[i].epoch : x->held[i].part);
    *o++ = '}';
    *o = 0;
    return s;
}

static void lost(fl_box_t *x, uint64_t part, uint64_t epoch)
{
    fl_item_t *it = calloc(1, sizeof *it);
    count(x, &x->fl->lost);
    if (!it) return;
    it->kind = FL_LOST; it->part = part; it->epoch = epoch;
    fl_push(x->fl, &x->fl->to_b, x->fl->wake_b[1], it);
}

static void renew(fl_box_t *x)
{
    char *ids = id_array(x, false), *eps = id_array(x, true), inc[24], cap[16], lease[16], rt[24], bo[24], bi[24];
    if (!ids || !eps) { free(ids); free(eps); return; }
    snprintf(inc, sizeof inc, "%" PRId64, (int64_t)(x->fl->incarnation >> 1));
    snprintf(cap, sizeof cap, "%d", x->fl->n_slots);
    snprintf(lease, sizeof lease, "%d", x->fl->lease_ms);
    pthread_mutex_lock(&x->fl->mu);
    snprintf(rt, sizeof rt, "%" PRIu64, x->fl->io.round_trips + 1);
    snprintf(bo, sizeof bo, "%" PRIu64, x->fl->io.bytes_out);
    snprintf(bi, sizeof bi, "%" PRIu64, x->fl->io.bytes_in);
    pthread_mutex_unlock(&x->fl->mu);
    const char *v[] = {x->fl->box, inc, cap, ids, eps, lease, rt, bo, bi};
    PGresult *r = exec(x, "SELECT part_id FROM zkpipe.renew($1, $2::bigint, $3::int, $4::bigint[], $5::bigint[], $6::int, "
                          "$7::bigint, $8::bigint, $9::bigint)", 9, v, NULL, 0);
    free(ids); free(eps);
    x->next_renew = ms_now() + (uint64_t)x->fl->lease_ms / 3;
    if (!r) { if (x->c) zp_log(ZP_LOG_ERROR, "fleet: renew: %s", x->err); return; }
    /* every held lease not returned is gone */
    bool *kept = calloc(x->n_held + 1, 1);
    if (!kept) { PQclear(r); return; }
    for (int t = 0; t < PQntuples(r); t++) {
        uint64_t id = strtoull(PQgetvalue(r, t, 0), NULL, 10);
        for (size_t i = 0; i < x->n_held; i++)
            if (x->held[i].part == id) kept[i] = true;
    }
    PQclear(r);
    for (size_t i = x->n_held; i-- > 0;)
        if (!kept[i]) {
            fl_lease_t l = x->held[i];
            bool has_result = false;
            for (fl_item_t *p = x->pending; p; p = p->next)
                if (p->part == l.part && p->epoch == l.epoch) has_result = true;
            if (has_result) continue;   /* its commit goes out and is refused (counted) */
            x->held[i] = x->held[--x->n_held];
            lost(x, l.part, l.epoch);
        }
    free(kept);
}

static void reap(fl_box_t *x)
{
    PGresult *r = exec(x, "SELECT zkpipe.reap()", 0, NULL, NULL, 0);
    x->next_reap = ms_now() + (uint64_t)x->fl->lease_ms / 2;
    if (!r) { if (x->c) zp_log(ZP_LOG_ERROR, "fleet: reap: %s", x->err); return; }
    int n = atoi(PQgetvalue(r, 0, 0));
    if (n > 0) { zp_log(ZP_LOG_INFO, "fleet: %d expired lease(s) requeued", n); x->maybe_work = true; }
    PQclear(r);
}

/* ---------------------------------------------------------------- results */
static void finish_item(fl_box_t *x, fl_item_t *it)
{
    if (it->outbox) unlink(it->outbox);
    held_del(x, it->part, it->epoch);
}

/* 1: sent (accepted or refused), 0: keep it for later, the connection is gone */
static int send_one(fl_box_t *x, fl_item_t *it)
{
    char part[24], ep[24];
    snprintf(part, sizeof part, "%" PRIu64, it->part);
    snprintf(ep, sizeof ep, "%" PRIu64, it->epoch);
    PGresult *r;
    if (it->kind == FL_RESULT) {
        const char *v[] = {x->fl->box, part, ep, it->proof_json, it->public_json, (const char *)it->bin};
        int lens[] = {0, 0, 0, 0, 0, (int)it->bin_len};
        r = exec(x, "SELECT zkpipe.commit($1, $2::bigint, $3::bigint, $4, $5, $6::bytea)", 6, v, lens, 1u << 5);
    } else if (it->kind == FL_FAIL) {
        const char *v[] = {x->fl->box, part, ep, it->reason, it->final ? "true" : "false"};
        r = exec(x, "SELECT zkpipe.fail($1, $2::bigint, $3::bigint, $4, $5::boolean)", 5, v, NULL, 0);
    } else {
        const char *v[] = {x->fl->box, part, ep, it->reason, it->final ? "true" : "false"};
        r = exec(x, "SELECT zkpipe.handback($1, $2::bigint, $3::bigint, $4, $5::boolean)", 5, v, NULL, 0);
    }
    if (!r) {
        if (transient(x)) return 0;
        zp_log(ZP_LOG_ERROR, "fleet: partition %" PRIu64 ": the database refused the report: %s; dropped (its lease expires)",
               it->part, x->err);
        finish_item(x, it);
        return 1;
    }
    const char *v = PQgetvalue(r, 0, 0);
    if (it->kind == FL_RESULT && !strcmp(v, "t")) {
        count(x, &x->fl->commits);
        zp_log(ZP_LOG_INFO, "fleet: partition %" PRIu64 " committed (epoch %" PRIu64 ")", it->part, it->epoch);
    } else if (it->kind == FL_HANDBACK) {
        count(x, &x->fl->handbacks);
    } else if (it->kind == FL_RESULT || !strcmp(v, "refused")) {
        count(x, &x->fl->refused);
        zp_log(ZP_LOG_WARN, "fleet: partition %" PRIu64 ": %s REFUSED (epoch %" PRIu64 " is no longer the lease): work discarded",
               it->part, it->kind == FL_RESULT ? "result" : "failure report", it->epoch);
    } else {
        zp_log(ZP_LOG_WARN, "fleet: partition %" PRIu64 " failed on this box (%s): now %s", it->part,
               it->final ? "input class" : "retryable", v);
    }
    PQclear(r);
    finish_item(x, it);
    return 1;
}

static void flush(fl_box_t *x)
{
    while (x->pending && x->c) {
        fl_item_t *it = x->pending;
        if (!send_one(x, it)) return;
        x->pending = it->next;
        fl_item_free(it);
    }
}

/* ---------------------------------------------------------------- claims */
static int readable(const char *path, char *why, size_t n)
{
    if (path[0] != '/') { snprintf(why, n, "%s: not an absolute path", path); return -1; }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char c;
    if (fd < 0) { snprintf(why, n, "cannot read %s: %s", path, strerror(errno)); return -1; }
    int rc = fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ? -1 : pread(fd, &c, 1, 0) == 1 ? 0 : -1;
    if (rc < 0) snprintf(why, n, "cannot read %s: not a regular non-empty file", path);
    close(fd);
    return rc;
}

static int write_wtns(fl_box_t *x, fl_item_t *it, const char *data, int len, char *why, size_t n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%" PRIu64 "-%" PRIu64 ".wtns", x->fl->wtns_dir, it->part, it->epoch);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, data, (size_t)len) != len) {
        snprintf(why, n, "cannot write the witness from the database to %.400s: %s", path, strerror(errno));
        if (fd >= 0) { close(fd); unlink(path); }
        return -1;
    }
    close(fd);
    return (it->wtns = strdup(path)) ? 0 : -1;
}

static void claim(fl_box_t *x, int want)
{
    char box[200], nb[16], lease[16];
    snprintf(box, sizeof box, "%s", x->fl->box);
    snprintf(nb, sizeof nb, "%d", want);
    snprintf(lease, sizeof lease, "%d", x->fl->lease_ms);
    const char *v[] = {box, nb, lease};
    /* results: binary, so wtns_data comes as raw bytes (every other column is text-cast) */
    PGresult *r = exec(x, x->fl->test_steal ?
        "SELECT part_id::text, epoch::text, job_id::text, idx::text, attempt::text, priority::text, zkey, r1cs, "
        "coalesce(wtns_path, ''), wtns_data FROM zkpipe.test_claim_steal($1, $2::int, $3::int)" :
        "SELECT part_id::text, epoch::text, job_id::text, idx::text, attempt::text, priority::text, zkey, r1cs, "
        "coalesce(wtns_path, ''), wtns_data FROM zkpipe.claim($1, $2::int, $3::int)", 3, v, NULL, 0);
    x->next_poll = ms_now() + (uint64_t)x->fl->poll_ms;
    if (!r) {   /* retried at the next wake-up or poll, not in a loop */
        x->maybe_work = false;
        if (x->c) zp_log(ZP_LOG_ERROR, "fleet: claim: %s", x->err);
        return;
    }
    int n = PQntuples(r);
    x->maybe_work = n == want;   /* a full claim: there may be more */
    for (int t = 0; t < n; t++) {
        fl_item_t *it = calloc(1, sizeof *it);
        char why[700] = "";
        if (!it) break;
        it->kind = FL_CLAIM;
        it->part = strtoull(PQgetvalue(r, t, 0), NULL, 10);
        it->epoch = strtoull(PQgetvalue(r, t, 1), NULL, 10);
        it->job = strtoull(PQgetvalue(r, t, 2), NULL, 10);
        it->idx = (uint32_t)strtoul(PQgetvalue(r, t, 3), NULL, 10);
        it->attempt = (uint32_t)strtoul(PQgetvalue(r, t, 4), NULL, 10);
        unsigned long prio = strtoul(PQgetvalue(r, t, 5), NULL, 10);
        it->zkey = strdup(PQgetvalue(r, t, 6));
        it->r1cs = strdup(PQgetvalue(r, t, 7));
        const char *wp = PQgetvalue(r, t, 8);
        held_add(x, it->part, it->epoch);
        count(x, &x->fl->claims);
        int bad = !it->zkey || !it->r1cs || prio > 3;
        if (bad) snprintf(why, sizeof why, "bad claim row (priority %lu)", prio);
        it->priority = (uint32_t)prio;
        if (!bad) bad = readable(it->zkey, why, sizeof why) < 0 || (*it->r1cs && readable(it->r1cs, why, sizeof why) < 0);
        if (!bad && !*wp && PQgetisnull(r, t, 9)) bad = 1, snprintf(why, sizeof why, "neither a witness path nor data");
        if (!bad && *wp) bad = readable(wp, why, sizeof why) < 0 || !(it->wtns = strdup(wp));
        else if (!bad) {
            size_t dl = 0;
            unsigned char *d = PQunescapeBytea((const unsigned char *)PQgetvalue(r, t, 9), &dl);
            bad = !d || write_wtns(x, it, (const char *)d, (int)dl, why, sizeof why) < 0;
            PQfreemem(d);
        }
        if (bad) {
            /* handed back without spending an attempt; this box is not offered it again */
            zp_log(ZP_LOG_WARN, "fleet: partition %" PRIu64 ": %s; handing it back", it->part, why);
            it->kind = FL_HANDBACK;
            it->final = true;
            free(it->reason);
            if (!(it->reason = strdup(why)) || !send_one(x, it)) { if (it->reason) { pending_append(x, it); continue; } }
            fl_item_free(it);
            continue;
        }
        x->delivered++;
        fl_push(x->fl, &x->fl->to_b, x->fl->wake_b[1], it);
    }
    PQclear(r);
}

/* ---------------------------------------------------------------- outbox at start */
static void outbox_scan(fl_box_t *x)
{
    DIR *d = opendir(x->fl->outbox_dir);
    struct dirent *e;
    unsigned n = 0;
    if (!d) return;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        char path[1400];
        if (l < 5 || strcmp(e->d_name + l - 4, ".res")) continue;
        snprintf(path, sizeof path, "%s/%s", x->fl->outbox_dir, e->d_name);
        fl_item_t *it;
        if (fl_outbox_read(&it, path) < 0) {
            char bad[1420];
            snprintf(bad, sizeof bad, "%s.bad", path);
            zp_log(ZP_LOG_ERROR, "fleet: %s; moved aside to %s", zp_err_msg(), bad);
            rename(path, bad);
            continue;
        }
        held_add(x, it->part, it->epoch);
        pending_append(x, it);
        n++;
    }
    closedir(d);
    if (n) zp_log(ZP_LOG_INFO, "fleet: %u finished result(s) in the outbox from before: sending them first", n);
}

static void take_items(fl_box_t *x)
{
    for (fl_item_t *it = fl_take(x->fl, &x->fl->to_t); it;) {
        fl_item_t *next = it->next;
        if (it->kind == FL_ADOPT) { held_add(x, it->part, it->epoch); fl_item_free(it); }
        else pending_append(x, it);
        it = next;
    }
}

/* test hook: 0 off; 1 the hold file exists and is empty (claim, send nothing else); 2 it has
 * content (claim nothing either: fully cut off) */
/* notifications libpq read while it waited for a result are queued: take them every turn,
 * not only when the socket is readable */
static void take_notifies(fl_box_t *x)
{
    PGnotify *nt;
    while (x->c && (nt = PQnotifies(x->c))) {
        if (!strcmp(nt->relname, "zkpipe_work")) x->maybe_work = true;
        else if (!strcmp(nt->relname, "zkpipe_cancel")) x->next_renew = 0;
        PQfreemem(nt);
    }
}

static int cut_off(const fl_box_t *x)
{
    struct stat st;
    if (!x->fl->test_hold || stat(x->fl->test_hold, &st) < 0) return 0;
    return st.st_size > 0 ? 2 : 1;
}

void *fl_thread_main(void *arg)
{
    fl_box_t X = {.fl = arg, .backoff_ms = 100}, *x = &X;
    zp_rt_leave();   /* database work: never at the loop's real-time policy (inherited: lib/util/rt.c) */
    zp_log_init("broker");
    outbox_scan(x);
    for (;;) {
        pthread_mutex_lock(&x->fl->mu);
        int stop = x->fl->stop, cap = x->fl->capacity;
        uint64_t consumed = x->fl->consumed;
        pthread_mutex_unlock(&x->fl->mu);
        take_items(x);
        uint64_t now = ms_now();
        if (!x->c && now >= x->next_connect) try_connect(x);
        int held_off = cut_off(x);
        if (x->c) {
            if (!held_off && now >= x->next_renew) renew(x);
            if (!held_off && x->c) flush(x);
            if (!held_off && x->c && now >= x->next_reap) reap(x);
            long avail = (long)cap - (long)(x->delivered - consumed);
            if (x->c && !stop && held_off < 2 && avail > 0 && (x->maybe_work || now >= x->next_poll)) claim(x, (int)avail);
            if (x->c && PQstatus(x->c) != CONNECTION_OK) drop(x, PQerrorMessage(x->c));
        }
        if (stop) break;
        take_notifies(x);
        /* wait: the next deadline, a notification, or the broker */
        now = ms_now();
        uint64_t until = now + 1000;
        if (!x->c) until = x->next_connect;
        else {
            if (held_off) until = now + 100;
            if (x->next_renew < until) until = x->next_renew;
            if (x->next_reap < until) until = x->next_reap;
            if (x->next_poll < until) until = x->next_poll;
        }
        /* a notification came during the work above and there is room: claim at once */
        if (x->maybe_work && x->c && !stop && held_off < 2 && (long)cap - (long)(x->delivered - consumed) > 0) until = now;
        struct pollfd pf[2] = {{x->fl->wake_t[0], POLLIN, 0}, {x->c ? PQsocket(x->c) : -1, POLLIN, 0}};
        int tmo = until > now ? (int)(until - now) : 0;
        if (poll(pf, x->c ? 2 : 1, tmo) < 0 && errno != EINTR) zp_log(ZP_LOG_ERROR, "fleet: poll: %s", strerror(errno));
        if (pf[0].revents) fl_drain(x->fl->wake_t[0]);
        if (x->c && pf[1].revents && !PQconsumeInput(x->c)) drop(x, PQerrorMessage(x->c));
        take_notifies(x);
    }
    /* stopping: finished results stay in the outbox for the next start; leases of work not
     * finished go back to the fleet now (no attempt spent) instead of waiting to expire */
    if (x->c && !cut_off(x)) {
        flush(x);
        for (size_t i = x->n_held; i-- > 0 && x->c;) {   /* from the end: send_one swaps the last in */
            bool pend = false;
            for (fl_item_t *p = x->pending; p; p = p->next)
                if (p->part == x->held[i].part && p->epoch == x->held[i].epoch) pend = true;
            if (pend) continue;
            fl_item_t it = {.kind = FL_HANDBACK, .part = x->held[i].part, .epoch = x->held[i].epoch,
                            .reason = "box stopping"};
            send_one(x, &it);
        }
    }
    for (fl_item_t *p = x->pending; p;) { fl_item_t *n = p->next; fl_item_free(p); p = n; }
    free(x->held);
    if (x->c) PQfinish(x->c);
    return NULL;
}
