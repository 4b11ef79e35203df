/* journal.c - the broker's write-ahead store: one SQLite database per deployment in WAL mode.
 *
 * Schema (PRAGMA user_version = BRK_JR_SCHEMA):
 *   jobs  (id PK, request_id UNIQUE, zkey, r1cs, priority, n_parts, created_us, state, finished_us, wasm)
 *         wasm: '' or the circuit's witness generator; then parts.wtns is the input.json (issue 28).
 *         Schema 1 (without wasm) is upgraded in place at open (ALTER TABLE ... DEFAULT '').
 *   parts (job, idx, wtns, state, attempts, reasons, proof_json, public_json, proof_bin; PK (job, idx))
 *   meta  (key PK, value): "arena_epoch" = epoch of the arena whose slots this journal describes
 * Part state: 0 pending (queued or running: in-flight detail lives in the shm slot table),
 * 2 done, 3 failed, 4 canceled (brk_pstate_t values). Job state: zp_job_state_t.
 *
 * Invariants: a SUBMIT is committed (job row + all part rows in one transaction) before the
 * broker replies with the job id; a partition's proof is committed when its DONE is handled,
 * before any AWAIT sees it; attempts/reasons on each requeue, failures and cancels too.
 * Durability: journal_mode=WAL with synchronous=FULL, so each commit fsyncs the WAL: an
 * acknowledged job id survives a power loss, not only a broker crash (NORMAL would only
 * survive process crashes). Commits are per job or per partition (seconds of proving work
 * each), so one fsync per commit costs nothing measurable. locking_mode=EXCLUSIVE: a second
 * broker on the same journal fails at open instead of interleaving writes.
 * A new journal is built in <path>.new and renamed into place, so an existing file is always
 * a complete journal: an empty, truncated or foreign file is an error at start, never a
 * silent empty start (unless --reset-state moves it aside).
 * Bounded (doc/slot-protocol.md, "Bounded state"): finished jobs past the broker's retention
 * are deleted (brk_jr_job_delete; their pages are reused) and the WAL is checkpointed and
 * truncated (brk_jr_compact); meta "next_job_id" keeps ids from being reused. At start only unfinished
 * jobs are loaded with their partitions; finished ones as a summary (their results are read
 * on demand: brk_jr_parts_load). Tests: tests/test_model.c, tests/ipc/durable*.sh. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/journal.h"
#include "lib/util/util.h"

enum { ST_JOB_ADD, ST_PART_ADD, ST_JOB_STATE, ST_PARTS_CANCEL, ST_PART, ST_META_GET, ST_META_SET, ST_BEGIN, ST_COMMIT,
       ST_ROLLBACK, ST_DEL_PARTS, ST_DEL_JOB, ST_LOAD_PARTS, ST_N };

static const char *const k_sql[ST_N] = {
    [ST_JOB_ADD] = "INSERT INTO jobs (id, request_id, zkey, r1cs, priority, n_parts, created_us, state, finished_us, wasm) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, 0, ?8)",
    [ST_PART_ADD] = "INSERT INTO parts (job, idx, wtns, state, attempts) VALUES (?1, ?2, ?3, 0, ?4)",
    [ST_JOB_STATE] = "UPDATE jobs SET state = ?2, finished_us = ?3 WHERE id = ?1",
    [ST_PARTS_CANCEL] = "UPDATE parts SET state = 4 WHERE job = ?1 AND state = 0",
    [ST_PART] = "UPDATE parts SET state = ?3, attempts = ?4, reasons = ?5, proof_json = ?6, public_json = ?7, "
                "proof_bin = ?8 WHERE job = ?1 AND idx = ?2",
    [ST_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [ST_META_SET] = "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2",
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_DEL_PARTS] = "DELETE FROM parts WHERE job = ?1",
    [ST_DEL_JOB] = "DELETE FROM jobs WHERE id = ?1",
    [ST_LOAD_PARTS] = "SELECT idx, wtns, state, attempts, reasons, proof_json, public_json, proof_bin "
                      "FROM parts WHERE job = ?1 ORDER BY idx",
};

static const char k_schema[] =
    "CREATE TABLE jobs (id INTEGER PRIMARY KEY, request_id TEXT NOT NULL UNIQUE, zkey TEXT NOT NULL, "
    "  r1cs TEXT NOT NULL, priority INTEGER NOT NULL, n_parts INTEGER NOT NULL, created_us INTEGER NOT NULL, "
    "  state INTEGER NOT NULL, finished_us INTEGER NOT NULL, wasm TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE parts (job INTEGER NOT NULL REFERENCES jobs(id), idx INTEGER NOT NULL, wtns TEXT NOT NULL, "
    "  state INTEGER NOT NULL, attempts INTEGER NOT NULL, reasons TEXT, proof_json TEXT, public_json TEXT, "
    "  proof_bin BLOB, PRIMARY KEY (job, idx)) WITHOUT ROWID;"
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);";

struct brk_journal {
    sqlite3 *db;
    sqlite3_stmt *st[ST_N];
    char path[PATH_MAX];
};

static int db_err(brk_journal_t *jr, sqlite3 *db, int rc, const char *what)
{
    const char *m = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    int code = (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB ? ZP_EFORMAT
             : (rc & 0xff) == SQLITE_NOMEM ? -ENOMEM
             : (rc & 0xff) == SQLITE_FULL ? -ENOSPC
             : (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED ? -EBUSY : -EIO;
    return zp_err_set(code, "journal %s: %s: %s (sqlite code %d)", jr ? jr->path : "?", what, m, rc);
}

static int mkdirs(const char *dir)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp) return zp_err_set(-ENAMETOOLONG, "path too long: %s", dir);
    for (char *s = tmp + 1; ; s++) {
        if (*s == '/' || !*s) {
            char c = *s;
            *s = 0;
            if (mkdir(tmp, 0700) < 0 && errno != EEXIST) return zp_err_set(-errno, "mkdir %s: %s", tmp, strerror(errno));
            *s = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(dir, &st) < 0) return zp_err_set(-errno, "state directory %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return zp_err_set(-ENOTDIR, "state directory %s is not a directory", dir);
    return 0;
}

int brk_jr_state_dir(char *buf, size_t n, const char *override, bool create)
{
    const char *e;
    int k;
    if (override && *override) k = snprintf(buf, n, "%s", override);
    else if ((e = getenv("ZP_STATE_DIR")) && *e) k = snprintf(buf, n, "%s", e);
    else if ((e = getenv("XDG_STATE_HOME")) && *e) k = snprintf(buf, n, "%s/zkpipe", e);
    else if ((e = getenv("HOME")) && *e) k = snprintf(buf, n, "%s/.local/state/zkpipe", e);
    else return zp_err_set(-ENOENT, "no state directory: set --state-dir, ZP_STATE_DIR, XDG_STATE_HOME or HOME");
    if (k < 0 || (size_t)k >= n - 64) return zp_err_set(-ENAMETOOLONG, "state directory path too long");
    return create ? mkdirs(buf) : 0;
}

static int exec_sql(brk_journal_t *jr, sqlite3 *db, const char *sql, const char *what)
{
    char *em = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &em);
    if (rc != SQLITE_OK) {
        int r = zp_err_set(db_err(jr, db, rc, what), "journal %s: %s: %s", jr->path, what, em ? em : sqlite3_errstr(rc));
        sqlite3_free(em);
        return r;
    }
    return 0;
}

/* one-row integer pragma */
static int pragma_int(brk_journal_t *jr, sqlite3 *db, const char *sql, long long *out)
{
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return db_err(jr, db, rc, sql);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : db_err(jr, db, rc, sql);
}

static int pragma_text(brk_journal_t *jr, sqlite3 *db, const char *sql, char *out, size_t n)
{
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return db_err(jr, db, rc, sql);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) snprintf(out, n, "%s", sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : "");
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : db_err(jr, db, rc, sql);
}

static int configure(brk_journal_t *jr, sqlite3 *db)
{
    char mode[32];
    int rc;
    sqlite3_extended_result_codes(db, 1);
    if ((rc = exec_sql(jr, db, "PRAGMA locking_mode=EXCLUSIVE", "locking_mode")) < 0) return rc;
    if ((rc = pragma_text(jr, db, "PRAGMA journal_mode=WAL", mode, sizeof mode)) < 0) return rc;
    if (strcmp(mode, "wal"))
        return zp_err_set(-EIO, "journal %s: cannot switch to WAL mode (got '%s')", jr->path, mode);
    if ((rc = exec_sql(jr, db, "PRAGMA synchronous=FULL", "synchronous")) < 0) return rc;
    return exec_sql(jr, db, "PRAGMA foreign_keys=ON", "foreign_keys");
}

static void fsync_dir(const char *path)
{
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", path);
    char *sl = strrchr(d, '/');
    if (sl == d) sl[1] = 0; else if (sl) *sl = 0; else snprintf(d, sizeof d, ".");
    int fd = open(d, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) { fsync(fd); close(fd); }
}

/* build a fresh journal in <path>.new, then rename it into place */
static int create_fresh(brk_journal_t *jr)
{
    char tmp[PATH_MAX + 8], side[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.new", jr->path);
    unlink(tmp);
    snprintf(side, sizeof side, "%s-wal", tmp); unlink(side);
    snprintf(side, sizeof side, "%s-shm", tmp); unlink(side);
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) { rc = db_err(jr, db, rc, "create"); goto out; }
    if (chmod(tmp, 0600) < 0) { rc = zp_err_set(-errno, "chmod %s: %s", tmp, strerror(errno)); goto out; }
    char sql[sizeof k_schema + 128];
    snprintf(sql, sizeof sql, "BEGIN; %s PRAGMA user_version=%d; COMMIT;", k_schema, BRK_JR_SCHEMA);
    if ((rc = configure(jr, db)) < 0 || (rc = exec_sql(jr, db, sql, "create schema")) < 0) goto out;
    rc = sqlite3_close(db);   /* checkpoints the WAL into the file and removes it */
    db = NULL;
    if (rc != SQLITE_OK) { rc = db_err(jr, NULL, rc, "close new journal"); goto out; }
    int fd = open(tmp, O_RDONLY);
    if (fd >= 0) { fsync(fd); close(fd); }
    if (rename(tmp, jr->path) < 0) { rc = zp_err_set(-errno, "rename %s -> %s: %s", tmp, jr->path, strerror(errno)); goto out; }
    fsync_dir(jr->path);
    rc = 0;
out:
    if (db) sqlite3_close(db);
    if (rc < 0) unlink(tmp);
    return rc;
}

static void move_aside(const char *path)
{
    char to[PATH_MAX + 64], a[PATH_MAX + 8], b2[PATH_MAX + 80];
    unsigned long long t = (unsigned long long)(zp_wall_us() / 1000000u);
    snprintf(to, sizeof to, "%s.bad-%llu", path, t);
    if (rename(path, to) == 0) zp_log(ZP_LOG_WARN, "--reset-state: moved the old journal to %s", to);
    static const char *const sfx[] = {"-wal", "-shm"};
    for (unsigned i = 0; i < 2; i++) {
        snprintf(a, sizeof a, "%s%s", path, sfx[i]);
        snprintf(b2, sizeof b2, "%s%s", to, sfx[i]);
        if (rename(a, b2) < 0 && errno != ENOENT) unlink(a);
    }
}

/* open an existing journal and check it thoroughly */
static int open_existing(brk_journal_t *jr)
{
    int rc = sqlite3_open_v2(jr->path, &jr->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) return db_err(jr, jr->db, rc, "open");
    if ((rc = configure(jr, jr->db)) < 0) return rc;
    long long ver = -1;
    if ((rc = pragma_int(jr, jr->db, "PRAGMA user_version", &ver)) < 0) return rc;
    if (ver == 0)
        return zp_err_set(ZP_EFORMAT, "journal %s: not a zkpipe journal (empty, truncated or foreign file; "
                          "user_version 0)", jr->path);
    if (ver == 1) {   /* schema 1 -> 2: jobs.wasm (issue 28) */
        if ((rc = exec_sql(jr, jr->db, "BEGIN; ALTER TABLE jobs ADD COLUMN wasm TEXT NOT NULL DEFAULT ''; "
                                       "PRAGMA user_version=2; COMMIT;", "upgrade to schema 2")) < 0)
            return rc;
        zp_log(ZP_LOG_INFO, "journal %s: upgraded from schema 1 to 2 (jobs.wasm)", jr->path);
        ver = 2;
    }
    if (ver != BRK_JR_SCHEMA)
        return zp_err_set(ZP_EVERSION, "journal %s: schema version %lld, this broker knows %d", jr->path, ver,
                          BRK_JR_SCHEMA);
    char ok[256] = "";
    if ((rc = pragma_text(jr, jr->db, "PRAGMA quick_check", ok, sizeof ok)) < 0) return rc;
    if (strcmp(ok, "ok")) return zp_err_set(ZP_EFORMAT, "journal %s: integrity check failed: %s", jr->path, ok);
    long long nt = 0;
    if ((rc = pragma_int(jr, jr->db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                                     "name IN ('jobs', 'parts', 'meta')", &nt)) < 0) return rc;
    if (nt != 3) return zp_err_set(ZP_EFORMAT, "journal %s: tables jobs/parts/meta missing", jr->path);
    return 0;
}

int brk_jr_open(brk_journal_t **jp, const char *path, bool reset)
{
    *jp = NULL;
    brk_journal_t *jr = calloc(1, sizeof *jr);
    if (!jr) return zp_err_set(-ENOMEM, "out of memory");
    int rc;
    if (snprintf(jr->path, sizeof jr->path, "%s", path) >= (int)sizeof jr->path) {
        rc = zp_err_set(-ENAMETOOLONG, "journal path too long");
        goto fail;
    }
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT) { rc = zp_err_set(-errno, "journal %s: %s", path, strerror(errno)); goto fail; }
    if (exists && reset) { move_aside(path); exists = false; }
    if (!exists && (rc = create_fresh(jr)) < 0) goto fail;
    if ((rc = open_existing(jr)) < 0) goto fail;
    for (unsigned i = 0; i < ST_N; i++) {
        int r = sqlite3_prepare_v3(jr->db, k_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &jr->st[i], NULL);
        if (r != SQLITE_OK) { rc = db_err(jr, jr->db, r, k_sql[i]); goto fail; }
    }
    *jp = jr;
    return 0;
fail:
    brk_jr_close(&jr);
    return rc;
}

void brk_jr_close(brk_journal_t **jp)
{
    brk_journal_t *jr = jp ? *jp : NULL;
    if (!jr) return;
    for (unsigned i = 0; i < ST_N; i++) sqlite3_finalize(jr->st[i]);
    if (jr->db && sqlite3_close(jr->db) != SQLITE_OK)
        zp_log(ZP_LOG_ERROR, "journal %s: close: %s", jr->path, sqlite3_errmsg(jr->db));
    free(jr);
    *jp = NULL;
}

/* ---------------------------------------------------------------- writes */
static int step_done(brk_journal_t *jr, unsigned which, const char *what)
{
    sqlite3_stmt *s = jr->st[which];
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? 0 : db_err(jr, jr->db, rc, what);
}

static int begin(brk_journal_t *jr) { return step_done(jr, ST_BEGIN, "begin"); }
static int commit(brk_journal_t *jr, int rc)
{
    if (rc == 0 && (rc = step_done(jr, ST_COMMIT, "commit")) == 0) return 0;
    if (!sqlite3_get_autocommit(jr->db)) {
        char keep[512];
        snprintf(keep, sizeof keep, "%s", zp_err_msg());
        step_done(jr, ST_ROLLBACK, "rollback");
        zp_err_set(rc, "%s", keep);
    }
    return rc;
}

static int bind_text(sqlite3_stmt *s, int i, const char *z)
{
    return z ? sqlite3_bind_text(s, i, z, -1, SQLITE_STATIC) : sqlite3_bind_null(s, i);
}

int brk_jr_job_add(brk_journal_t *jr, const brk_job_t *j)
{
    int rc = begin(jr);
    if (rc < 0) return rc;
    sqlite3_stmt *s = jr->st[ST_JOB_ADD];
    int b = sqlite3_bind_int64(s, 1, (sqlite3_int64)j->id);
    b |= bind_text(s, 2, j->request_id); b |= bind_text(s, 3, j->zkey); b |= bind_text(s, 4, j->r1cs);
    b |= sqlite3_bind_int(s, 5, (int)j->priority); b |= sqlite3_bind_int64(s, 6, j->n_parts);
    b |= sqlite3_bind_int64(s, 7, (sqlite3_int64)zp_wall_us());
    b |= bind_text(s, 8, j->wasm ? j->wasm : "");
    rc = b ? db_err(jr, jr->db, b, "bind job") : step_done(jr, ST_JOB_ADD, "insert job");
    for (uint32_t i = 0; rc == 0 && i < j->n_parts; i++) {
        s = jr->st[ST_PART_ADD];
        b = sqlite3_bind_int64(s, 1, (sqlite3_int64)j->id);
        b |= sqlite3_bind_int64(s, 2, i);
        b |= bind_text(s, 3, j->parts[i].wtns);
        b |= sqlite3_bind_int64(s, 4, j->parts[i].attempt);
        rc = b ? db_err(jr, jr->db, b, "bind part") : step_done(jr, ST_PART_ADD, "insert part");
    }
    return commit(jr, rc);
}

int brk_jr_job_state(brk_journal_t *jr, const brk_job_t *j)
{
    int rc = begin(jr);
    if (rc < 0) return rc;
    sqlite3_stmt *s = jr->st[ST_JOB_STATE];
    int b = sqlite3_bind_int64(s, 1, (sqlite3_int64)j->id);
    b |= sqlite3_bind_int(s, 2, (int)j->state);
    b |= sqlite3_bind_int64(s, 3, (sqlite3_int64)zp_wall_us());
    rc = b ? db_err(jr, jr->db, b, "bind job state") : step_done(jr, ST_JOB_STATE, "update job state");
    if (rc == 0 && j->state == ZP_JOB_CANCELED) {
        s = jr->st[ST_PARTS_CANCEL];
        b = sqlite3_bind_int64(s, 1, (sqlite3_int64)j->id);
        rc = b ? db_err(jr, jr->db, b, "bind cancel") : step_done(jr, ST_PARTS_CANCEL, "cancel parts");
    }
    return commit(jr, rc);
}

int brk_jr_part(brk_journal_t *jr, const brk_part_t *p)
{
    sqlite3_stmt *s = jr->st[ST_PART];
    int st = p->state == PS_DONE || p->state == PS_FAILED || p->state == PS_CANCELED ? (int)p->state : 0;
    int b = sqlite3_bind_int64(s, 1, (sqlite3_int64)p->job->id);
    b |= sqlite3_bind_int64(s, 2, p->idx);
    b |= sqlite3_bind_int(s, 3, st);
    b |= sqlite3_bind_int64(s, 4, p->attempt);
    b |= bind_text(s, 5, p->reasons);
    b |= bind_text(s, 6, st == PS_DONE ? p->proof_json : NULL);
    b |= bind_text(s, 7, st == PS_DONE ? p->public_json : NULL);
    b |= st == PS_DONE && p->proof_bin_len ? sqlite3_bind_blob(s, 8, p->proof_bin, (int)p->proof_bin_len, SQLITE_STATIC)
                                           : sqlite3_bind_null(s, 8);
    if (b) { sqlite3_reset(s); sqlite3_clear_bindings(s); return db_err(jr, jr->db, b, "bind part update"); }
    int rc = step_done(jr, ST_PART, "update part");   /* autocommit: one statement, one transaction */
    if (rc == 0 && sqlite3_changes(jr->db) != 1)
        rc = zp_err_set(ZP_EFORMAT, "journal %s: job %llu part %u is not in the journal", jr->path,
                        (unsigned long long)p->job->id, p->idx);
    return rc;
}

int brk_jr_meta_get(brk_journal_t *jr, const char *key, uint64_t *val)
{
    sqlite3_stmt *s = jr->st[ST_META_GET];
    int b = sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    if (b) return db_err(jr, jr->db, b, "bind meta");
    int rc = sqlite3_step(s);
    *val = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_err(jr, jr->db, rc, "read meta");
}

int brk_jr_meta_set(brk_journal_t *jr, const char *key, uint64_t val)
{
    sqlite3_stmt *s = jr->st[ST_META_SET];
    int b = sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    b |= sqlite3_bind_int64(s, 2, (sqlite3_int64)val);
    if (b) { sqlite3_reset(s); sqlite3_clear_bindings(s); return db_err(jr, jr->db, b, "bind meta"); }
    return step_done(jr, ST_META_SET, "write meta");
}

int brk_jr_job_delete(brk_journal_t *jr, uint64_t id)
{
    int rc = begin(jr);
    if (rc < 0) return rc;
    sqlite3_stmt *s = jr->st[ST_DEL_PARTS];
    int b = sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    rc = b ? db_err(jr, jr->db, b, "bind delete") : step_done(jr, ST_DEL_PARTS, "delete parts");
    if (rc == 0) {
        s = jr->st[ST_DEL_JOB];
        b = sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
        rc = b ? db_err(jr, jr->db, b, "bind delete") : step_done(jr, ST_DEL_JOB, "delete job");
    }
    return commit(jr, rc);
}

void brk_jr_compact(brk_journal_t *jr)
{
    /* deleted rows' pages are reused by later inserts (the file stays as large as the retained
     * jobs need); the WAL is checkpointed into the file and truncated */
    char *em = NULL;
    if (sqlite3_exec(jr->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, &em) != SQLITE_OK)
        zp_log(ZP_LOG_WARN, "journal %s: wal_checkpoint: %s", jr->path, em ? em : "?");
    sqlite3_free(em);
}

/* ---------------------------------------------------------------- load */
static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? strdup((const char *)t) : NULL;
}

static int load_parts(brk_journal_t *jr, sqlite3_stmt *s, brk_job_t *j)
{
    uint32_t n = 0;
    int rc;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)j->id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        long long idx = sqlite3_column_int64(s, 0), st = sqlite3_column_int64(s, 2), att = sqlite3_column_int64(s, 3);
        if (idx != n || n >= j->n_parts)
            return zp_err_set(ZP_EFORMAT, "journal %s: job %llu: partition %lld out of order or beyond %u", jr->path,
                              (unsigned long long)j->id, idx, j->n_parts);
        if (!(st == 0 || st == PS_DONE || st == PS_FAILED || st == PS_CANCELED) || att < 1 || att > 1000000)
            return zp_err_set(ZP_EFORMAT, "journal %s: job %llu part %lld: bad state %lld / attempts %lld", jr->path,
                              (unsigned long long)j->id, idx, st, att);
        brk_part_t *p = &j->parts[n];
        p->job = j; p->idx = n; p->slot = -1; p->attempt = (uint32_t)att; p->state = (brk_pstate_t)st;
        p->stage = ZP_ROLE_SYNTH; p->t_submit = j->t_submit;
        if (!(p->wtns = col_dup(s, 1))) return zp_err_set(ZP_EFORMAT, "journal %s: job %llu part %u: no witness",
                                                          jr->path, (unsigned long long)j->id, n);
        p->reasons = col_dup(s, 4);
        if (st == PS_DONE) {
            int bl = sqlite3_column_bytes(s, 7);
            p->proof_json = col_dup(s, 5);
            p->public_json = col_dup(s, 6);
            if (!p->proof_json || !p->public_json || bl < 0 || bl > ZP_MSG_BIN_MAX)
                return zp_err_set(ZP_EFORMAT, "journal %s: job %llu part %u: finished without a proof", jr->path,
                                  (unsigned long long)j->id, n);
            if (bl) memcpy(p->proof_bin, sqlite3_column_blob(s, 7), (size_t)bl);
            p->proof_bin_len = (size_t)bl;
            j->n_done++;
        } else if (st == PS_FAILED) j->n_failed++;
        n++;
    }
    if (rc != SQLITE_DONE) return db_err(jr, jr->db, rc, "read parts");
    if (n != j->n_parts)
        return zp_err_set(ZP_EFORMAT, "journal %s: job %llu has %u of its %u partitions", jr->path,
                          (unsigned long long)j->id, n, j->n_parts);
    return 0;
}

int brk_jr_parts_load(brk_journal_t *jr, brk_job_t *j, brk_part_t *parts)
{
    sqlite3_stmt *s = jr->st[ST_LOAD_PARTS];
    brk_part_t *keep = j->parts;
    uint32_t nd = j->n_done, nf = j->n_failed;
    memset(parts, 0, j->n_parts * sizeof *parts);
    j->parts = parts;
    int rc = load_parts(jr, s, j);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    j->parts = keep;
    j->n_done = nd; j->n_failed = nf;
    return rc;
}

int brk_jr_load(brk_journal_t *jr, brk_t *b)
{
    sqlite3_stmt *sj = NULL, *sp = NULL;
    brk_job_t *j = NULL;
    int rc = sqlite3_prepare_v2(jr->db, "SELECT id, request_id, zkey, r1cs, priority, n_parts, state, finished_us, wasm "
                                        "FROM jobs ORDER BY id", -1, &sj, NULL);
    if (rc != SQLITE_OK) { rc = db_err(jr, jr->db, rc, "prepare load"); goto out; }
    rc = sqlite3_prepare_v2(jr->db, "SELECT idx, wtns, state, attempts, reasons, proof_json, public_json, proof_bin "
                                    "FROM parts WHERE job = ?1 ORDER BY idx", -1, &sp, NULL);
    if (rc != SQLITE_OK) { rc = db_err(jr, jr->db, rc, "prepare load"); goto out; }
    uint64_t now = zp_now_ns(), next_id = 0;
    long long last = 0;
    if ((rc = brk_jr_meta_get(jr, "next_job_id", &next_id)) < 0) goto out;
    while ((rc = sqlite3_step(sj)) == SQLITE_ROW) {
        long long id = sqlite3_column_int64(sj, 0), prio = sqlite3_column_int64(sj, 4), np = sqlite3_column_int64(sj, 5),
                  st = sqlite3_column_int64(sj, 6), fin = sqlite3_column_int64(sj, 7);
        if (id <= last) {
            rc = zp_err_set(ZP_EFORMAT, "journal %s: job ids not increasing (found %lld after %lld)", jr->path, id, last);
            goto out;
        }
        last = id;
        if (prio < 0 || prio >= ZP_NPRIO || np < 1 || np > 1000000 || st < ZP_JOB_RUNNING || st > ZP_JOB_CANCELED) {
            rc = zp_err_set(ZP_EFORMAT, "journal %s: job %lld: bad priority %lld, partition count %lld or state %lld",
                            jr->path, id, prio, np, st);
            goto out;
        }
        /* a finished job comes back as a summary; its results stay in the journal */
        if (!(j = calloc(1, sizeof *j)) || (st == ZP_JOB_RUNNING && !(j->parts = calloc((size_t)np, sizeof *j->parts)))) {
            rc = zp_err_set(-ENOMEM, "out of memory");
            goto out;
        }
        j->id = (uint64_t)id; j->seq = ++b->job_seq; j->priority = (uint32_t)prio; j->n_parts = (uint32_t)np;
        j->state = (zp_job_state_t)st; j->t_submit = now;
        if (j->state != ZP_JOB_RUNNING) { j->t_finish = now; j->finish_wall_us = fin > 0 ? (uint64_t)fin : zp_wall_us(); }
        j->request_id = col_dup(sj, 1); j->zkey = col_dup(sj, 2); j->r1cs = col_dup(sj, 3); j->wasm = col_dup(sj, 8);
        if (!j->request_id || !j->zkey || !j->r1cs || !j->wasm) {
            rc = zp_err_set(ZP_EFORMAT, "journal %s: job %lld: missing request id, zkey or r1cs", jr->path, id);
            goto out;
        }
        rc = j->parts ? load_parts(jr, sp, j) : 0;
        sqlite3_reset(sp);
        sqlite3_clear_bindings(sp);
        if (rc < 0) goto out;
        if (brk_job_insert(b, j) < 0) { rc = zp_err_set(-ENOMEM, "out of memory"); goto out; }
        j = NULL;
    }
    if (rc != SQLITE_DONE) { rc = db_err(jr, jr->db, rc, "read jobs"); goto out; }
    if (next_id > b->next_job_id) b->next_job_id = next_id;
    rc = 0;
out:
    brk_job_free(j);
    sqlite3_finalize(sj);
    sqlite3_finalize(sp);
    return rc;
}
