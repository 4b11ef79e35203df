/* fleet.c - the broker-thread side of fleet mode: claimed partitions become local jobs,
 * finished local jobs go to the outbox and the fleet thread, lost leases cancel local jobs.
 *
 * NOTES
 * A claimed partition runs as a one-partition local job through brk_submit, the path of a
 * client SUBMIT, with request id "fleet/<partition id>/<lease epoch>": the local journal
 * records it like any job, so a restarted broker recovers it and hands its lease back to the
 * fleet thread (FL_ADOPT) to renew. Capacity: partitions the box can start now = free slots no
 * partition is bound to minus partitions already waiting for synthesis, and 0 while a stage
 * has no live worker. The thread never claims more than (capacity - claims not yet consumed).
 * A finished fleet job is written to the outbox file (fsync'd) before the thread sees it, so a
 * box that loses the database, or dies, keeps every finished result until the database
 * answers. The broker never waits for the database. Tests: tests/fleet/. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/fleet.h"
#include "broker/fleet_int.h"
#include "lib/util/util.h"
#include "proto/peer.h"

static brk_fleet_t *g_fl;   /* one fleet per broker process */

/* the local jobs that run fleet partitions and have not been reported yet: a job canceled
 * locally (`zkpipe cancel` on the box) is handed back to the fleet by the sweep */
typedef struct { brk_job_t *j; uint64_t part, epoch; } fl_local_t;
static fl_local_t *g_local;
static size_t g_n_local, g_cap_local;

static void local_add(brk_job_t *j, uint64_t part, uint64_t epoch)
{
    if (g_n_local == g_cap_local) {
        size_t nc = g_cap_local ? 2 * g_cap_local : 64;
        fl_local_t *n = realloc(g_local, nc * sizeof *n);
        if (!n) return;   /* not swept: a local cancel then waits for the lease to expire */
        g_local = n;
        g_cap_local = nc;
    }
    g_local[g_n_local++] = (fl_local_t){j, part, epoch};
}

static void local_del(const brk_job_t *j)
{
    for (size_t i = 0; i < g_n_local; i++)
        if (g_local[i].j == j) { g_local[i] = g_local[--g_n_local]; return; }
}

/* ---------------------------------------------------------------- items and pipes */
void fl_item_free(fl_item_t *it)
{
    if (!it) return;
    free(it->zkey); free(it->r1cs); free(it->wtns); free(it->proof_json); free(it->public_json);
    free(it->reason); free(it->outbox); free(it);
}

void fl_wake(int fd)
{
    char c = 1;
    while (write(fd, &c, 1) < 0 && errno == EINTR) {}   /* full pipe: a wake-up is pending anyway */
}

void fl_drain(int fd)
{
    char buf[256];
    while (read(fd, buf, sizeof buf) > 0) {}
}

void fl_push(brk_fleet_t *fl, fl_item_t **list, int wake_fd, fl_item_t *it)
{
    pthread_mutex_lock(&fl->mu);
    it->next = *list;
    *list = it;
    pthread_mutex_unlock(&fl->mu);
    fl_wake(wake_fd);
}

fl_item_t *fl_take(brk_fleet_t *fl, fl_item_t **list)
{
    pthread_mutex_lock(&fl->mu);
    fl_item_t *l = *list, *r = NULL;
    *list = NULL;
    pthread_mutex_unlock(&fl->mu);
    while (l) { fl_item_t *n = l->next; l->next = r; r = l; l = n; }
    return r;
}

/* ---------------------------------------------------------------- outbox */
#define OB_MAGIC "ZPFO1\n"
typedef struct __attribute__((packed)) {
    char magic[6];
    uint8_t kind, final;
    uint64_t part, epoch;
    uint32_t len[3];
} ob_hdr_t;

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -errno;
        c += w; n -= (size_t)w;
    }
    return 0;
}

int fl_outbox_write(const brk_fleet_t *fl, const fl_item_t *it, char **path)
{
    char fin[1200], tmp[1220];
    snprintf(fin, sizeof fin, "%s/%" PRIu64 "-%" PRIu64 ".res", fl->outbox_dir, it->part, it->epoch);
    snprintf(tmp, sizeof tmp, "%s.tmp", fin);
    const char *d0 = it->kind == FL_RESULT ? it->proof_json : it->reason, *d1 = it->kind == FL_RESULT ? it->public_json : "";
    ob_hdr_t h = {.kind = (uint8_t)it->kind, .final = it->final, .part = it->part, .epoch = it->epoch};
    memcpy(h.magic, OB_MAGIC, 6);
    h.len[0] = (uint32_t)strlen(d0); h.len[1] = (uint32_t)strlen(d1);
    h.len[2] = it->kind == FL_RESULT ? (uint32_t)it->bin_len : 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;
    if (fd < 0) return zp_err_set(-errno, "open %s: %s", tmp, strerror(errno));
    if ((rc = write_all(fd, &h, sizeof h)) < 0 || (rc = write_all(fd, d0, h.len[0])) < 0 ||
        (rc = write_all(fd, d1, h.len[1])) < 0 || (rc = write_all(fd, it->bin, h.len[2])) < 0 ||
        (fsync(fd) < 0 && (rc = -errno))) {
        close(fd);
        unlink(tmp);
        return zp_err_set(rc, "write %s: %s", tmp, strerror(-rc));
    }
    close(fd);
    if (rename(tmp, fin) < 0) { rc = -errno; unlink(tmp); return zp_err_set(rc, "rename %s: %s", tmp, strerror(-rc)); }
    int dfd = open(fl->outbox_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { fsync(dfd); close(dfd); }
    if (!(*path = strdup(fin))) return -ENOMEM;
    return 0;
}

int fl_outbox_read(fl_item_t **itp, const char *path)
{
    *itp = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
    if (fd < 0) return zp_err_set(-errno, "open %s: %s", path, strerror(errno));
    struct stat st;
    ob_hdr_t h;
    fl_item_t *it = calloc(1, sizeof *it);
    char *d[2] = {0};
    if (!it || fstat(fd, &st) < 0) { rc = zp_err_set(-ENOMEM, "%s: cannot read", path); goto out; }
    if (st.st_size < (off_t)sizeof h || read(fd, &h, sizeof h) != (ssize_t)sizeof h || memcmp(h.magic, OB_MAGIC, 6) ||
        (h.kind != FL_RESULT && h.kind != FL_FAIL) || h.final > 1 || h.len[0] > 65536 || h.len[1] > 65536 ||
        h.len[2] > ZP_MSG_BIN_MAX || (uint64_t)st.st_size != sizeof h + (uint64_t)h.len[0] + h.len[1] + h.len[2]) {
        rc = zp_err_set(ZP_EFORMAT, "%s: not an outbox entry (bad header or size %lld)", path, (long long)st.st_size);
        goto out;
    }
    for (int i = 0; i < 2; i++) {
        if (!(d[i] = malloc(h.len[i] + 1))) { rc = -ENOMEM; goto out; }
        if (read(fd, d[i], h.len[i]) != (ssize_t)h.len[i] || memchr(d[i], 0, h.len[i])) {
            rc = zp_err_set(ZP_EFORMAT, "%s: truncated or binary text field", path);
            goto out;
        }
        d[i][h.len[i]] = 0;
    }
    if (read(fd, it->bin, h.len[2]) != (ssize_t)h.len[2]) { rc = zp_err_set(ZP_EFORMAT, "%s: truncated", path); goto out; }
    it->kind = h.kind; it->final = h.final; it->part = h.part; it->epoch = h.epoch; it->bin_len = h.len[2];
    if (it->kind == FL_RESULT) { it->proof_json = d[0]; it->public_json = d[1]; }
    else { it->reason = d[0]; free(d[1]); }
    d[0] = d[1] = NULL;
    if (!(it->outbox = strdup(path))) { rc = -ENOMEM; goto out; }
    *itp = it;
    it = NULL;
out:
    free(d[0]); free(d[1]);
    fl_item_free(it);
    close(fd);
    return rc;
}

/* ---------------------------------------------------------------- start / stop */
static int mkdir_p(const char *d)
{
    if (mkdir(d, 0700) < 0 && errno != EEXIST) return zp_err_set(-errno, "mkdir %s: %s", d, strerror(errno));
    return 0;
}

static bool parse_rid(const char *rid, uint64_t *part, uint64_t *epoch)
{
    int n = 0;
    if (strncmp(rid, "fleet/", 6)) return false;
    if (sscanf(rid, "fleet/%" SCNu64 "/%" SCNu64 "%n", part, epoch, &n) != 2) return false;
    return rid[n] == 0;
}

int brk_fleet_start(brk_t *b, const char *url_env, const char *box_name, const char *state_dir)
{
    const char *url = getenv(url_env);
    if (!url || !*url)
        return zp_err_set(-EINVAL, "--fleet-env %s: that environment variable holds no connection string", url_env);
    brk_fleet_t *fl = calloc(1, sizeof *fl);
    if (!fl || !(fl->url = strdup(url))) { free(fl); return -ENOMEM; }
    unsetenv(url_env);   /* the broker starts no children; keep it out of /proc/<pid>/environ readers' way */
    char host[64] = "box";
    if (!box_name || !*box_name) { gethostname(host, sizeof host - 1); box_name = host; }
    if (strlen(box_name) >= sizeof fl->box || strchr(box_name, '/')) {
        free(fl->url); free(fl);
        return zp_err_set(-EINVAL, "--box-name '%s': at most %zu bytes, no '/'", box_name, sizeof fl->box - 1);
    }
    snprintf(fl->box, sizeof fl->box, "%s", box_name);
    snprintf(fl->outbox_dir, sizeof fl->outbox_dir, "%s/%s.fleet-outbox", state_dir, b->arena_name + 1);
    snprintf(fl->wtns_dir, sizeof fl->wtns_dir, "%s/fleet-wtns", b->rundir);
    int rc;
    if ((rc = mkdir_p(fl->outbox_dir)) < 0 || (rc = mkdir_p(fl->wtns_dir)) < 0) { free(fl->url); free(fl); return rc; }
    const char *e;
    fl->lease_ms = (e = getenv("ZP_FLEET_LEASE_MS")) ? atoi(e) : 30000;
    fl->poll_ms = (e = getenv("ZP_FLEET_POLL_MS")) ? atoi(e) : 10000;
    if (fl->lease_ms < 500 || fl->lease_ms > 3600000) fl->lease_ms = 30000;
    if (fl->poll_ms < 100 || fl->poll_ms > 600000) fl->poll_ms = 10000;
    if ((e = getenv("ZP_FLEET_TEST_HOLD")) && *e) fl->test_hold = strdup(e);
    fl->test_steal = (e = getenv("ZP_FLEET_TEST_STEAL")) && !strcmp(e, "1");
    if (fl->test_hold) zp_log(ZP_LOG_WARN, "fleet TEST HOOK: while %s exists this box neither renews, reaps nor commits (nor claims when it is not empty)", fl->test_hold);
    if (fl->test_steal) zp_log(ZP_LOG_WARN, "fleet TEST HOOK: this box claims partitions under other boxes' live leases");
    fl->incarnation = zp_incarnation_new();
    fl->n_slots = (int)b->n_slots;
    pthread_mutex_init(&fl->mu, NULL);
    if (pipe2(fl->wake_b, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(fl->wake_t, O_NONBLOCK | O_CLOEXEC) < 0) {
        rc = zp_err_set(-errno, "pipe2: %s", strerror(errno));
        free(fl->url); free(fl);
        return rc;
    }
    /* the journal brought back fleet partitions still running: their leases are ours to renew */
    unsigned adopted = 0;
    for (brk_job_t *j = b->live; j; j = j->next) {   /* running jobs (jobs.c) */
        uint64_t part, epoch;
        if (j->state != ZP_JOB_RUNNING || !parse_rid(j->request_id, &part, &epoch)) continue;
        fl_item_t *it = calloc(1, sizeof *it);
        if (!it) continue;
        it->kind = FL_ADOPT; it->part = part; it->epoch = epoch;
        local_add(j, part, epoch);
        it->next = fl->to_t;
        fl->to_t = it;
        adopted++;
    }
    g_fl = fl;
    if ((rc = pthread_create(&fl->th, NULL, fl_thread_main, fl)) != 0) {
        g_fl = NULL;
        return zp_err_set(-rc, "pthread_create: %s", strerror(rc));
    }
    fl->started = true;
    zp_log(ZP_LOG_INFO, "fleet: box '%s' joins the fleet (lease %d ms, poll %d ms, outbox %s); %u recovered partition(s) adopted",
           fl->box, fl->lease_ms, fl->poll_ms, fl->outbox_dir, adopted);
    return 0;
}

void brk_fleet_stop(brk_t *b)
{
    (void)b;
    brk_fleet_t *fl = g_fl;
    if (!fl) return;
    pthread_mutex_lock(&fl->mu);
    fl->stop = 1;
    pthread_mutex_unlock(&fl->mu);
    fl_wake(fl->wake_t[1]);
    if (fl->started) pthread_join(fl->th, NULL);
    zp_log(ZP_LOG_INFO, "fleet: stopped; %" PRIu64 " claimed, %" PRIu64 " committed, %" PRIu64 " refused, %" PRIu64
           " handed back, %" PRIu64 " leases lost, %" PRIu64 " reconnects; %" PRIu64 " round trips, %" PRIu64
           " bytes out, %" PRIu64 " bytes in", fl->claims, fl->commits, fl->refused, fl->handbacks, fl->lost,
           fl->reconnects, fl->io.round_trips, fl->io.bytes_out, fl->io.bytes_in);
    for (fl_item_t *l = fl_take(fl, &fl->to_b); l;) { fl_item_t *n = l->next; fl_item_free(l); l = n; }
    for (fl_item_t *l = fl_take(fl, &fl->to_t); l;) { fl_item_t *n = l->next; fl_item_free(l); l = n; }
    close(fl->wake_b[0]); close(fl->wake_b[1]); close(fl->wake_t[0]); close(fl->wake_t[1]);
    pthread_mutex_destroy(&fl->mu);
    free(fl->url); free(fl->test_hold); free(fl);
    g_fl = NULL;
    free(g_local);
    g_local = NULL;
    g_n_local = g_cap_local = 0;
}

int brk_fleet_pollitem(brk_t *b, zmq_pollitem_t *it)
{
    (void)b;
    if (!g_fl) return 0;
    *it = (zmq_pollitem_t){NULL, g_fl->wake_b[0], ZMQ_POLLIN, 0};
    return 1;
}

/* ---------------------------------------------------------------- the broker loop's side */
static brk_job_t *job_by_rid(brk_t *b, const char *rid)
{
    return brk_job_by_request(b, rid, strlen(rid));   /* O(1) (jobs.c) */
}

static bool in_wtns_dir(const brk_fleet_t *fl, const char *path)
{
    size_t n = strlen(fl->wtns_dir);
    return !strncmp(path, fl->wtns_dir, n) && path[n] == '/';
}

static void handback(brk_fleet_t *fl, const fl_item_t *c, const char *why)
{
    fl_item_t *it = calloc(1, sizeof *it);
    if (!it) return;   /* the lease expires and the fleet requeues it */
    it->kind = FL_HANDBACK; it->part = c->part; it->epoch = c->epoch;
    it->reason = strdup(why);
    fl_push(fl, &fl->to_t, fl->wake_t[1], it);
}

static void on_claim(brk_t *b, brk_fleet_t *fl, fl_item_t *c)
{
    static zp_msg_submit_t m;   /* large (ZP_MSG_MAX_PARTS views); one broker thread */
    char rid[64];
    snprintf(rid, sizeof rid, "fleet/%" PRIu64 "/%" PRIu64, c->part, c->epoch);
    memset(&m, 0, offsetof(zp_msg_submit_t, wtns) + sizeof m.wtns[0]);
    m.request_id = zp_str(rid);
    m.zkey = zp_str(c->zkey);
    m.r1cs = zp_str(c->r1cs);
    m.priority = c->priority;
    m.n_wtns = 1;
    m.wtns[0] = zp_str(c->wtns);
    m.wasm = zp_str("");
    brk_job_t *j = NULL;
    bool existed = false;
    int rc = brk_submit(b, &m, &j, &existed);
    if (rc < 0) {
        char why[400];
        snprintf(why, sizeof why, "box could not queue it: %s", zp_err_msg());
        zp_log(ZP_LOG_ERROR, "fleet: partition %" PRIu64 ": %s; handing it back", c->part, why);
        handback(fl, c, why);
        return;
    }
    if (!existed) local_add(j, c->part, c->epoch);
    zp_log(ZP_LOG_INFO, "fleet: partition %" PRIu64 " (job %" PRIu64 " #%u, attempt %u, epoch %" PRIu64 ") is local job %llu",
           c->part, c->job, c->idx, c->attempt, c->epoch, (unsigned long long)j->id);
}

static void on_lost(brk_t *b, fl_item_t *c)
{
    char rid[64];
    snprintf(rid, sizeof rid, "fleet/%" PRIu64 "/%" PRIu64, c->part, c->epoch);
    brk_job_t *j = job_by_rid(b, rid);
    if (!j || j->state != ZP_JOB_RUNNING) return;
    uint32_t freed = 0;
    zp_log(ZP_LOG_WARN, "fleet: lease of partition %" PRIu64 " (epoch %" PRIu64 ") is gone: canceling local job %llu",
           c->part, c->epoch, (unsigned long long)j->id);
    local_del(j);
    brk_cancel(b, j, &freed);
    if (in_wtns_dir(g_fl, j->parts[0].wtns)) unlink(j->parts[0].wtns);
}

/* local jobs that ended without a report (canceled on this box): back to the fleet */
static void sweep(brk_fleet_t *fl)
{
    for (size_t i = g_n_local; i-- > 0;) {
        fl_local_t l = g_local[i];
        if (l.j->state != ZP_JOB_CANCELED) continue;
        g_local[i] = g_local[--g_n_local];
        fl_item_t c = {.part = l.part, .epoch = l.epoch};
        zp_log(ZP_LOG_INFO, "fleet: local job %llu (partition %" PRIu64 ") was canceled on this box: handing it back",
               (unsigned long long)l.j->id, l.part);
        handback(fl, &c, "canceled on the box");
        if (in_wtns_dir(fl, l.j->parts[0].wtns)) unlink(l.j->parts[0].wtns);
    }
}

static int capacity_now(brk_t *b)
{
    bool have[ZP_NROLES] = {0};
    for (unsigned i = 0; i < BRK_MAX_WORKERS; i++)
        if (b->workers[i].used && b->workers[i].alive && b->workers[i].role < ZP_NROLES) have[b->workers[i].role] = true;
    for (unsigned r = 0; r < ZP_NROLES; r++)
        if (!have[r]) return 0;
    long free_slots = 0;
    for (uint32_t s = 0; s < b->n_slots; s++)
        if (!b->slots[s].part && brk_slot_usable(b, s) && zp_shm_word_state(zp_shm_slot_word_load(b->arena, s)) == ZP_SLOT_FREE) free_slots++;
    long cap = free_slots - (long)b->qn[ZP_ROLE_SYNTH];
    return cap > 0 ? (int)cap : 0;
}

void brk_fleet_service(brk_t *b)
{
    brk_fleet_t *fl = g_fl;
    if (!fl) return;
    fl_drain(fl->wake_b[0]);
    uint64_t n = 0;
    for (fl_item_t *it = fl_take(fl, &fl->to_b); it;) {
        fl_item_t *next = it->next;
        if (it->kind == FL_CLAIM) { on_claim(b, fl, it); n++; }
        else if (it->kind == FL_LOST) on_lost(b, it);
        fl_item_free(it);
        it = next;
    }
    sweep(fl);
    int cap = capacity_now(b);
    pthread_mutex_lock(&fl->mu);
    bool more = cap > fl->capacity;
    fl->capacity = cap;
    fl->consumed += n;
    pthread_mutex_unlock(&fl->mu);
    if (more || n) fl_wake(fl->wake_t[1]);
}

void brk_fleet_job_finished(brk_t *b, brk_job_t *j)
{
    brk_fleet_t *fl = g_fl;
    (void)b;
    uint64_t part, epoch;
    if (!fl || !parse_rid(j->request_id, &part, &epoch) || j->n_parts != 1) return;
    local_del(j);
    brk_part_t *p = &j->parts[0];
    fl_item_t *it = calloc(1, sizeof *it);
    if (!it) { zp_log(ZP_LOG_ERROR, "fleet: partition %" PRIu64 ": out of memory; its lease will expire", part); return; }
    it->part = part; it->epoch = epoch;
    if (j->state == ZP_JOB_DONE && p->proof_json && p->public_json) {
        it->kind = FL_RESULT;
        it->proof_json = strdup(p->proof_json);
        it->public_json = strdup(p->public_json);
        it->bin_len = p->proof_bin_len;
        memcpy(it->bin, p->proof_bin, p->proof_bin_len);
    } else {
        it->kind = FL_FAIL;
        /* final (no other box retries it) only when the partition failed for its input: a
         * transient failure that used up the attempts, or workers dying on it, may well pass on
         * another box */
        it->final = p->state == PS_FAILED && p->last_class == ZP_FAIL_INPUT;
        it->reason = strdup(p->reasons ? p->reasons : "failed");
    }
    int rc = -ENOMEM;
    if ((it->kind == FL_RESULT ? it->proof_json && it->public_json : it->reason != NULL) &&
        (rc = fl_outbox_write(fl, it, &it->outbox)) == 0) {
        fl_push(fl, &fl->to_t, fl->wake_t[1], it);
    } else {
        zp_log(ZP_LOG_ERROR, "fleet: partition %" PRIu64 ": outbox: %s; sending without a local copy", part,
               rc == -ENOMEM ? "out of memory" : zp_err_msg());
        if (it->kind == FL_RESULT ? it->proof_json && it->public_json : it->reason != NULL)
            fl_push(fl, &fl->to_t, fl->wake_t[1], it);
        else fl_item_free(it);
    }
    if (p->wtns && in_wtns_dir(fl, p->wtns)) unlink(p->wtns);
}
