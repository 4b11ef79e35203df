/* fleet_db.c - connecting, counted statements and the versioned schema of the fleet queue.
 *
 * NOTES
 * Schema `zkpipe` (migration 1):
 *   jobs        one row per submitted job; request_id UNIQUE fleet-wide (idempotent submit)
 *   partitions  state queued|running|done|failed|canceled, priority (copied from the job for
 *               the claim index), attempts, lease owner/epoch/deadline, reasons, handback text and
 *               the boxes that could not read its inputs (shunned_by), witness path or bytes
 *   boxes       name, incarnation, capacity, claimed, heartbeat, counters
 *   results     at most one per partition (PRIMARY KEY), with the box and epoch that made it
 * Every transition is a function (one statement, one round trip, one transaction):
 *   submit, cancel (clients); claim, renew, commit, fail, handback, reap (boxes).
 * The lease epoch is the fencing token: claim bumps it; renew/commit/fail/handback match
 * (id, epoch, state running), so a box that lost its lease changes nothing. Deadlines use the
 * database clock (clock_timestamp()), never a box's. NOTIFY zkpipe_work on new or requeued
 * work (idle boxes wake), zkpipe_done with the job id when a job finishes (await wakes).
 * Tests: tests/fleet/. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/fleet_db.h"
#include "lib/util/util.h"

/* ---------------------------------------------------------------- migrations */
static const char m1_sql[] =
    "CREATE TABLE zkpipe.meta (key text PRIMARY KEY, value text NOT NULL);\n"
    "INSERT INTO zkpipe.meta VALUES ('max_db_witness_bytes', '1048576');\n"
    "CREATE TABLE zkpipe.jobs (\n"
    "  id bigserial PRIMARY KEY,\n"
    "  request_id text NOT NULL UNIQUE CHECK (length(request_id) BETWEEN 1 AND 128),\n"
    "  zkey text NOT NULL CHECK (length(zkey) BETWEEN 1 AND 4096),\n"
    "  r1cs text NOT NULL DEFAULT '' CHECK (length(r1cs) <= 4096),\n"
    "  priority smallint NOT NULL CHECK (priority BETWEEN 0 AND 3),\n"
    "  max_attempts int NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),\n"
    "  n_parts int NOT NULL CHECK (n_parts >= 1),\n"
    "  n_done int NOT NULL DEFAULT 0, n_failed int NOT NULL DEFAULT 0,\n"
    "  state text NOT NULL DEFAULT 'running' CHECK (state IN ('running','done','failed','canceled')),\n"
    "  submitted_at timestamptz NOT NULL DEFAULT clock_timestamp(),\n"
    "  finished_at timestamptz);\n"
    "CREATE TABLE zkpipe.partitions (\n"
    "  id bigserial PRIMARY KEY,\n"
    "  job_id bigint NOT NULL REFERENCES zkpipe.jobs(id) ON DELETE CASCADE,\n"
    "  idx int NOT NULL,\n"
    "  priority smallint NOT NULL,\n"
    "  wtns_path text CHECK (length(wtns_path) BETWEEN 1 AND 4096), wtns_data bytea,\n"
    "  state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','running','done','failed','canceled')),\n"
    "  attempts int NOT NULL DEFAULT 0,\n"
    "  lease_owner text, lease_epoch bigint NOT NULL DEFAULT 0, lease_deadline timestamptz,\n"
    "  queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),\n"
    "  claimed_at timestamptz, first_claimed_at timestamptz,\n"
    "  reasons text NOT NULL DEFAULT '', handback text NOT NULL DEFAULT '',\n"
    "  shunned_by text[] NOT NULL DEFAULT '{}',\n"
    "  UNIQUE (job_id, idx),\n"
    "  CHECK ((wtns_path IS NULL) <> (wtns_data IS NULL)));\n"
    "CREATE INDEX partitions_claim ON zkpipe.partitions (priority, id) WHERE state = 'queued';\n"
    "CREATE INDEX partitions_lease ON zkpipe.partitions (lease_deadline) WHERE state = 'running';\n"
    "CREATE INDEX partitions_job ON zkpipe.partitions (job_id);\n"
    "CREATE TABLE zkpipe.boxes (\n"
    "  name text PRIMARY KEY, incarnation bigint NOT NULL, capacity int NOT NULL DEFAULT 0,\n"
    "  claimed int NOT NULL DEFAULT 0,\n"
    "  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),\n"
    "  heartbeat timestamptz NOT NULL DEFAULT clock_timestamp(),\n"
    "  done_total bigint NOT NULL DEFAULT 0, refused_total bigint NOT NULL DEFAULT 0,\n"
    "  handbacks_total bigint NOT NULL DEFAULT 0, expired_total bigint NOT NULL DEFAULT 0,\n"
    "  round_trips bigint NOT NULL DEFAULT 0, bytes_out bigint NOT NULL DEFAULT 0,\n"
    "  bytes_in bigint NOT NULL DEFAULT 0);\n"
    "CREATE TABLE zkpipe.results (\n"
    "  partition_id bigint PRIMARY KEY REFERENCES zkpipe.partitions(id) ON DELETE CASCADE,\n"
    "  job_id bigint NOT NULL, idx int NOT NULL, box text NOT NULL, epoch bigint NOT NULL,\n"
    "  proof_json text NOT NULL, public_json text NOT NULL, proof_bin bytea,\n"
    "  finished_at timestamptz NOT NULL DEFAULT clock_timestamp());\n"
    "CREATE INDEX results_job ON zkpipe.results (job_id, idx);\n"
    "CREATE INDEX results_box_time ON zkpipe.results (box, finished_at);\n"
    /* a job's counters and final state; NOTIFY when it finished */
    "CREATE FUNCTION zkpipe._job_add(p_job bigint, p_done int, p_failed int) RETURNS void\n"
    "LANGUAGE plpgsql SET search_path = zkpipe, pg_temp AS $$\n"
    "DECLARE st text;\n"
    "BEGIN\n"
    "  UPDATE jobs SET n_done = n_done + p_done, n_failed = n_failed + p_failed,\n"
    "    state = CASE WHEN n_done + p_done + n_failed + p_failed >= n_parts\n"
    "                 THEN CASE WHEN n_failed + p_failed > 0 THEN 'failed' ELSE 'done' END ELSE state END,\n"
    "    finished_at = CASE WHEN n_done + p_done + n_failed + p_failed >= n_parts THEN clock_timestamp() END\n"
    "  WHERE id = p_job AND state = 'running' RETURNING state INTO st;\n"
    "  IF st IN ('done', 'failed') THEN PERFORM pg_notify('zkpipe_done', p_job::text); END IF;\n"
    "END $$;\n"
    "CREATE FUNCTION zkpipe.submit(p_request_id text, p_zkey text, p_r1cs text, p_priority int,\n"
    "    p_max_attempts int, p_paths text[], p_data bytea[],\n"
    "    OUT o_job bigint, OUT o_existed boolean, OUT o_n_parts int)\n"
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "DECLARE n int := coalesce(cardinality(p_paths), 0); lim bigint;\n"
    "BEGIN\n"
    "  SELECT j.id, j.n_parts INTO o_job, o_n_parts FROM jobs j WHERE j.request_id = p_request_id;\n"
    "  IF FOUND THEN o_existed := true; RETURN; END IF;\n"
    "  IF n < 1 OR n > 1000000 THEN RAISE EXCEPTION 'a job needs 1 to 1000000 witnesses, not %', n; END IF;\n"
    "  IF coalesce(cardinality(p_data), 0) <> n THEN RAISE EXCEPTION 'paths and data arrays differ in length'; END IF;\n"
    "  IF EXISTS (SELECT 1 FROM unnest(p_paths, p_data) u(p, d) WHERE (p IS NULL) = (d IS NULL)) THEN\n"
    "    RAISE EXCEPTION 'each witness needs exactly one of a path and data'; END IF;\n"
    "  SELECT value::bigint INTO lim FROM meta WHERE key = 'max_db_witness_bytes';\n"
    "  IF EXISTS (SELECT 1 FROM unnest(p_data) d WHERE octet_length(d) > lim) THEN\n"
    "    RAISE EXCEPTION 'a witness stored in the database may have at most % bytes (zkpipe fleet init --max-db-witness)', lim\n"
    "      USING ERRCODE = '22001'; END IF;\n"
    "  INSERT INTO jobs (request_id, zkey, r1cs, priority, max_attempts, n_parts)\n"
    "    VALUES (p_request_id, p_zkey, p_r1cs, p_priority, p_max_attempts, n)\n"
    "    ON CONFLICT (request_id) DO NOTHING RETURNING id INTO o_job;\n"
    "  IF o_job IS NULL THEN\n"
    "    SELECT j.id, j.n_parts INTO o_job, o_n_parts FROM jobs j WHERE j.request_id = p_request_id;\n"
    "    o_existed := true; RETURN;\n"
    "  END IF;\n"
    "  INSERT INTO partitions (job_id, idx, priority, wtns_path, wtns_data)\n"
    "    SELECT o_job, (u.o - 1)::int, p_priority, u.p, u.d FROM unnest(p_paths, p_data) WITH ORDINALITY u(p, d, o);\n"
    "  o_existed := false; o_n_parts := n;\n"
    "  PERFORM pg_notify('zkpipe_work', '');\n"
    "END $$;\n"
    "CREATE FUNCTION zkpipe.cancel(p_job bigint) RETURNS int\n"
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "DECLARE n int;\n"
    "BEGIN\n"
    "  PERFORM 1 FROM jobs WHERE id = p_job FOR UPDATE;\n"
    "  IF NOT FOUND THEN RETURN -1; END IF;\n"
    "  UPDATE jobs SET state = 'canceled', finished_at = clock_timestamp() WHERE id = p_job AND state = 'running';\n"
    "  UPDATE partitions SET state = 'canceled', lease_deadline = NULL\n"
    "    WHERE job_id = p_job AND state IN ('queued', 'running');\n"
    "  GET DIAGNOSTICS n = ROW_COUNT;\n"
    "  PERFORM pg_notify('zkpipe_done', p_job::text);\n"
    "  PERFORM pg_notify('zkpipe_cancel', p_job::text);\n"
    "  RETURN n;\n"
    "END $$;\n"
    "CREATE FUNCTION zkpipe.claim(p_box text, p_n int, p_lease_ms int)\n"
    "RETURNS TABLE (part_id bigint, epoch bigint, job_id bigint, idx int, attempt int, priority int,\n"
    "               zkey text, r1cs text, wtns_path text, wtns_data bytea)\n"
    "LANGUAGE sql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "  WITH c AS (SELECT p.id FROM partitions p WHERE p.state = 'queued' AND NOT (p_box = ANY (p.shunned_by))\n"
    "             ORDER BY p.priority, p.id LIMIT greatest(p_n, 0) FOR UPDATE SKIP LOCKED),\n"
    "  u AS (UPDATE partitions p SET state = 'running', lease_owner = p_box, lease_epoch = p.lease_epoch + 1,\n"
    "          lease_deadline = clock_timestamp() + p_lease_ms * interval '1 millisecond',\n"
    "          claimed_at = clock_timestamp(), first_claimed_at = coalesce(p.first_claimed_at, clock_timestamp())\n"
    "        FROM c WHERE p.id = c.id RETURNING p.*)\n"
    "  SELECT u.id, u.lease_epoch, u.job_id, u.idx, u.attempts + 1, u.priority::int, j.zkey, j.r1cs,\n"
    "         u.wtns_path, u.wtns_data\n"
    "  FROM u JOIN jobs j ON j.id = u.job_id ORDER BY u.priority, u.id\n"
    "$$;\n"
    /* test hook only (ZP_FLEET_TEST_STEAL): claim partitions running under another box's live
     * lease, as a box with a wrong clock would; never granted to the box role */
    "CREATE FUNCTION zkpipe.test_claim_steal(p_box text, p_n int, p_lease_ms int)\n"
    "RETURNS TABLE (part_id bigint, epoch bigint, job_id bigint, idx int, attempt int, priority int,\n"
    "               zkey text, r1cs text, wtns_path text, wtns_data bytea)\n"
    "LANGUAGE sql SET search_path = zkpipe, pg_temp AS $$\n"
    "  WITH c AS (SELECT p.id FROM partitions p WHERE (p.state = 'running' AND p.lease_owner <> p_box)\n"
    "               OR (p.state = 'queued' AND NOT (p_box = ANY (p.shunned_by)))\n"
    "             ORDER BY p.priority, p.id LIMIT greatest(p_n, 0) FOR UPDATE SKIP LOCKED),\n"
    "  u AS (UPDATE partitions p SET state = 'running', lease_owner = p_box, lease_epoch = p.lease_epoch + 1,\n"
    "          lease_deadline = clock_timestamp() + p_lease_ms * interval '1 millisecond', claimed_at = clock_timestamp(),\n"
    "          first_claimed_at = coalesce(p.first_claimed_at, clock_timestamp())\n"
    "        FROM c WHERE p.id = c.id RETURNING p.*)\n"
    "  SELECT u.id, u.lease_epoch, u.job_id, u.idx, u.attempts + 1, u.priority::int, j.zkey, j.r1cs,\n"
    "         u.wtns_path, u.wtns_data\n"
    "  FROM u JOIN jobs j ON j.id = u.job_id ORDER BY u.priority, u.id\n"
    "$$;\n"
    /* heartbeat + lease renewal in one statement: returns the leases still held */
    "CREATE FUNCTION zkpipe.renew(p_box text, p_incarnation bigint, p_capacity int, p_ids bigint[],\n"
    "    p_epochs bigint[], p_lease_ms int, p_rt bigint, p_out bigint, p_in bigint)\n"
    "RETURNS TABLE (part_id bigint)\n"
    "LANGUAGE sql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "  WITH b AS (INSERT INTO boxes AS x (name, incarnation, capacity, claimed, heartbeat, round_trips, bytes_out, bytes_in)\n"
    "             VALUES (p_box, p_incarnation, p_capacity, coalesce(cardinality(p_ids), 0), clock_timestamp(),\n"
    "                     p_rt, p_out, p_in)\n"
    "             ON CONFLICT (name) DO UPDATE SET capacity = EXCLUDED.capacity, claimed = EXCLUDED.claimed,\n"
    "               heartbeat = EXCLUDED.heartbeat, incarnation = EXCLUDED.incarnation,\n"
    "               started_at = CASE WHEN x.incarnation <> EXCLUDED.incarnation THEN clock_timestamp() ELSE x.started_at END,\n"
    "               round_trips = EXCLUDED.round_trips, bytes_out = EXCLUDED.bytes_out, bytes_in = EXCLUDED.bytes_in\n"
    "             RETURNING 1)\n"
    "  UPDATE partitions p SET lease_deadline = clock_timestamp() + p_lease_ms * interval '1 millisecond'\n"
    "  FROM unnest(p_ids, p_epochs) AS h(id, ep)\n"
    "  WHERE p.id = h.id AND p.lease_epoch = h.ep AND p.state = 'running'\n"
    "  RETURNING p.id\n"
    "$$;\n"
    "CREATE FUNCTION zkpipe.commit(p_box text, p_part bigint, p_epoch bigint, p_proof text, p_public text,\n"
    "    p_bin bytea) RETURNS boolean\n"
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "DECLARE j bigint; i int;\n"
    "BEGIN\n"
    "  IF length(p_proof) > 65536 OR length(p_public) > 65536 OR octet_length(p_bin) > 4096 THEN\n"
    "    RAISE EXCEPTION 'proof too large'; END IF;\n"
    "  UPDATE partitions SET state = 'done', lease_deadline = NULL\n"
    "    WHERE id = p_part AND lease_epoch = p_epoch AND state = 'running' RETURNING job_id, idx INTO j, i;\n"
    "  IF NOT FOUND THEN\n"
    "    UPDATE boxes SET refused_total = refused_total + 1 WHERE name = p_box;\n"
    "    RETURN false;\n"
    "  END IF;\n"
    "  INSERT INTO results (partition_id, job_id, idx, box, epoch, proof_json, public_json, proof_bin)\n"
    "    VALUES (p_part, j, i, p_box, p_epoch, p_proof, p_public, p_bin);\n"
    "  UPDATE boxes SET done_total = done_total + 1 WHERE name = p_box;\n"
    "  PERFORM _job_add(j, 1, 0);\n"
    "  RETURN true;\n"
    "END $$;\n"
    /* p_final: a deterministic (input-class) failure, no retry; else attempts + 1 */
    "CREATE FUNCTION zkpipe.fail(p_box text, p_part bigint, p_epoch bigint, p_reason text, p_final boolean)\n"
    "RETURNS text\n"
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "DECLARE j bigint; st text;\n"
    "BEGIN\n"
    "  UPDATE partitions p SET attempts = p.attempts + 1,\n"
    "      reasons = left(p.reasons || CASE WHEN p.reasons = '' THEN '' ELSE '; ' END || 'attempt ' ||\n"
    "                     (p.attempts + 1) || ' on ' || p_box || ': ' || left(p_reason, 2000), 8000),\n"
    "      state = CASE WHEN p_final OR p.attempts + 1 >= (SELECT max_attempts FROM jobs WHERE id = p.job_id)\n"
    "                   THEN 'failed' ELSE 'queued' END,\n"
    "      lease_owner = NULL, lease_deadline = NULL, queued_at = clock_timestamp()\n"
    "    WHERE p.id = p_part AND p.lease_epoch = p_epoch AND p.state = 'running' RETURNING p.job_id, p.state INTO j, st;\n"
    "  IF NOT FOUND THEN\n"
    "    UPDATE boxes SET refused_total = refused_total + 1 WHERE name = p_box;\n"
    "    RETURN 'refused';\n"
    "  END IF;\n"
    "  IF st = 'failed' THEN PERFORM _job_add(j, 0, 1); ELSE PERFORM pg_notify('zkpipe_work', ''); END IF;\n"
    "  RETURN st;\n"
    "END $$;\n"
    /* the box cannot start it (an input it cannot read; p_shun: never offer it to this box
     * again): back to the queue, no attempt spent, the reason kept for status */
    "CREATE FUNCTION zkpipe.handback(p_box text, p_part bigint, p_epoch bigint, p_reason text, p_shun boolean)\n"
    "RETURNS boolean\n"
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "BEGIN\n"
    "  UPDATE partitions SET state = 'queued', lease_owner = NULL, lease_deadline = NULL,\n"
    "      queued_at = clock_timestamp(), handback = left(p_box || ': ' || p_reason, 2000),\n"
    "      shunned_by = CASE WHEN p_shun THEN array_append(shunned_by, p_box) ELSE shunned_by END\n"
    "    WHERE id = p_part AND lease_epoch = p_epoch AND state = 'running';\n"
    "  IF NOT FOUND THEN RETURN false; END IF;\n"
    "  UPDATE boxes SET handbacks_total = handbacks_total + 1 WHERE name = p_box;\n"
    "  PERFORM pg_notify('zkpipe_work', '');\n"
    "  RETURN true;\n"
    "END $$;\n"
    /* expired leases (a dead or cut-off box): requeue with attempts + 1, or fail at the limit */
    "CREATE FUNCTION zkpipe.reap() RETURNS int\n"
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = zkpipe, pg_temp AS $$\n"
    "DECLARE r record; st text; n int := 0;\n"
    "BEGIN\n"
    "  FOR r IN SELECT p.id, p.job_id, p.lease_owner, j.max_attempts FROM partitions p JOIN jobs j ON j.id = p.job_id\n"
    "           WHERE p.state = 'running' AND p.lease_deadline < clock_timestamp()\n"
    "           ORDER BY p.lease_deadline LIMIT 1000 FOR UPDATE OF p SKIP LOCKED LOOP\n"
    "    UPDATE partitions p SET attempts = p.attempts + 1,\n"
    "        reasons = left(p.reasons || CASE WHEN p.reasons = '' THEN '' ELSE '; ' END || 'attempt ' ||\n"
    "                       (p.attempts + 1) || ': lease of box ' || coalesce(r.lease_owner, '?') || ' expired', 8000),\n"
    "        state = CASE WHEN p.attempts + 1 >= r.max_attempts THEN 'failed' ELSE 'queued' END,\n"
    "        lease_owner = NULL, lease_deadline = NULL, queued_at = clock_timestamp()\n"
    "      WHERE p.id = r.id RETURNING p.state INTO st;\n"
    "    IF st = 'failed' THEN PERFORM _job_add(r.job_id, 0, 1); END IF;\n"
    "    UPDATE boxes SET expired_total = expired_total + 1 WHERE name = r.lease_owner;\n"
    "    n := n + 1;\n"
    "  END LOOP;\n"
    "  IF n > 0 THEN PERFORM pg_notify('zkpipe_work', ''); END IF;\n"
    "  RETURN n;\n"
    "END $$;\n"
    "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA zkpipe FROM PUBLIC;\n";

static const struct { int version; const char *what, *sql; } migrations[] = {
    {1, "jobs, partitions, boxes, results; queue functions", m1_sql},
};
#define N_MIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

/* ---------------------------------------------------------------- connecting */
struct zp_pq_fns zp_pq;

int zp_pq_load(char *err, size_t n)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static void *lib;
    pthread_mutex_lock(&mu);
    if (lib) {
        pthread_mutex_unlock(&mu);
        return 0;
    }
    const char *name = getenv("ZP_LIBPQ");
    if (!name || !*name) name = "libpq.so.5";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    const char *why = h ? NULL : dlerror();
    const char *missing = NULL;
#define ZP_PQ_SYM(f) \
    if (h && !missing && !(*(void **)&zp_pq.f##_ = dlsym(h, #f))) missing = #f;
    ZP_PQ_FNS(ZP_PQ_SYM)
#undef ZP_PQ_SYM
    if (!h || missing) {
        if (err && n)
            snprintf(err, n, "fleet mode needs libpq (Debian: libpq5): %s: %s%s", name, why ? why : "no symbol ",
                     why ? "" : missing);
        if (h) dlclose(h);
        memset(&zp_pq, 0, sizeof zp_pq);
        pthread_mutex_unlock(&mu);
        return -1;
    }
    lib = h;
    pthread_mutex_unlock(&mu);
    return 0;
}

static void set_err(char *err, size_t n, const char *what, const char *pgmsg)
{
    if (!err || !n) return;
    size_t l = (size_t)snprintf(err, n, "%s%s%s", what, pgmsg && *pgmsg ? ": " : "", pgmsg ? pgmsg : "");
    while (l > 0 && l < n && (err[l - 1] == '\n' || err[l - 1] == ' ')) err[--l] = 0;   /* libpq ends in \n */
    for (char *p = err; *p; p++)
        if (*p == '\n') *p = ' ';
}

void zp_fleet_describe(PGconn *c, char *buf, size_t n)
{
    const char *h = PQhost(c), *p = PQport(c);
    snprintf(buf, n, "%s@%s%s%s/%s", PQuser(c) ? PQuser(c) : "?", h && *h ? h : "local", p && *p ? ":" : "",
             p ? p : "", PQdb(c) ? PQdb(c) : "?");
}

PGconn *zp_fleet_connect(const char *url, const char *app, bool check_schema, char *err, size_t n)
{
    const char *keys[] = {"dbname", "application_name", "connect_timeout", NULL};
    const char *vals[] = {url, app, "10", NULL};
    if (zp_pq_load(err, n)) return NULL;
    PGconn *c = PQconnectdbParams(keys, vals, 1);   /* expand_dbname: url may be a URI or key=value */
    if (!c) { set_err(err, n, "cannot connect to the fleet database", "out of memory"); return NULL; }
    if (PQstatus(c) != CONNECTION_OK) {
        set_err(err, n, "cannot connect to the fleet database", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    if (check_schema) {
        char e[512];
        int v = zp_fleet_schema_version(c, e, sizeof e);
        if (v != ZP_FLEET_SCHEMA) {
            char d[300];
            zp_fleet_describe(c, d, sizeof d);
            if (v < 0) set_err(err, n, "fleet database", e);
            else if (v == 0) snprintf(err, n, "the fleet database %s has no zkpipe schema: run `zkpipe fleet init URL`", d);
            else if (v < ZP_FLEET_SCHEMA)
                snprintf(err, n, "the fleet database %s has schema version %d, this zkpipe needs %d: run `zkpipe fleet init URL`",
                         d, v, ZP_FLEET_SCHEMA);
            else snprintf(err, n, "the fleet database %s has schema version %d, newer than this zkpipe (%d): upgrade zkpipe",
                          d, v, ZP_FLEET_SCHEMA);
            PQfinish(c);
            return NULL;
        }
    }
    return c;
}

PGresult *zp_fleet_exec(PGconn *c, zp_fleet_io_t *io, const char *sql, int n, const char *const *vals,
                        const int *lens, unsigned bin_mask, char *err, size_t errn)
{
    int fmts[16], ln[16];
    if (n > 16) { set_err(err, errn, "internal", "too many parameters"); return NULL; }
    uint64_t out = strlen(sql);
    for (int i = 0; i < n; i++) {
        fmts[i] = (bin_mask >> i) & 1;
        ln[i] = fmts[i] ? lens[i] : 0;
        out += !vals[i] ? 0 : fmts[i] ? (uint64_t)lens[i] : strlen(vals[i]);
    }
    PGresult *r = PQexecParams(c, sql, n, NULL, vals, ln, fmts, 0);
    if (io) io->round_trips++, io->bytes_out += out;
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        const char *m = r && *PQresultErrorMessage(r) ? PQresultErrorMessage(r) : PQerrorMessage(c);
        const char *code = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        set_err(err, errn, "fleet database", m);
        if (code && err) {   /* callers tell transient classes (08, 40, 53, 57, 58) from bad statements */
            size_t l = strlen(err);
            snprintf(err + l, errn - l, " (SQLSTATE %s)", code);
        }
        PQclear(r);
        return NULL;
    }
    if (io)
        for (int t = 0; t < PQntuples(r); t++)
            for (int f = 0; f < PQnfields(r); f++) io->bytes_in += (uint64_t)PQgetlength(r, t, f);
    return r;
}

/* ---------------------------------------------------------------- migrations */
int zp_fleet_schema_version(PGconn *c, char *err, size_t n)
{
    PGresult *r = zp_fleet_exec(c, NULL,
                                "SELECT CASE WHEN to_regclass('zkpipe.migrations') IS NULL THEN 0 ELSE "
                                "(SELECT coalesce(max(version), 0) FROM zkpipe.migrations) END", 0, NULL, NULL, 0, err, n);
    if (!r) return -EIO;
    int v = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

static int exec_simple(PGconn *c, const char *sql, char *err, size_t n)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        set_err(err, n, "fleet database", r && *PQresultErrorMessage(r) ? PQresultErrorMessage(r) : PQerrorMessage(c));
        PQclear(r);
        return -EIO;
    }
    PQclear(r);
    return 0;
}

int zp_fleet_migrate(PGconn *c, int *from, int *to, char *err, size_t n)
{
    int rc;
    *from = *to = 0;
    if ((rc = exec_simple(c, "BEGIN; SELECT pg_advisory_xact_lock(7451001); CREATE SCHEMA IF NOT EXISTS zkpipe; "
                             "CREATE TABLE IF NOT EXISTS zkpipe.migrations (version int PRIMARY KEY, "
                             "applied_at timestamptz NOT NULL DEFAULT clock_timestamp(), what text NOT NULL)", err, n)) < 0)
        goto out_rollback;
    int v = zp_fleet_schema_version(c, err, n);
    if (v < 0) { rc = v; goto out_rollback; }
    *from = *to = v;
    if (v > ZP_FLEET_SCHEMA) {
        snprintf(err, n, "the database has schema version %d, newer than this zkpipe (%d)", v, ZP_FLEET_SCHEMA);
        rc = ZP_EFORMAT;
        goto out_rollback;
    }
    for (int i = 0; i < N_MIGRATIONS; i++) {
        if (migrations[i].version <= v) continue;
        if ((rc = exec_simple(c, migrations[i].sql, err, n)) < 0) goto out_rollback;
        char ver[16];
        snprintf(ver, sizeof ver, "%d", migrations[i].version);
        const char *vals[] = {ver, migrations[i].what};
        PGresult *r = zp_fleet_exec(c, NULL, "INSERT INTO zkpipe.migrations (version, what) VALUES ($1::int, $2)", 2,
                                    vals, NULL, 0, err, n);
        if (!r) { rc = -EIO; goto out_rollback; }
        PQclear(r);
        *to = migrations[i].version;
    }
    if ((rc = exec_simple(c, "COMMIT", err, n)) < 0) goto out_rollback;
    return 0;
out_rollback:
    PQclear(PQexec(c, "ROLLBACK"));
    *to = *from;
    return rc;
}

/* ---------------------------------------------------------------- array literals */
/* {"a","b",NULL}: text elements escaped for the array syntax; bytea elements as "\\x<hex>" */
static char *array_literal(const void *const *v, const size_t *lens, size_t n, bool bytea)
{
    static const char hx[] = "0123456789abcdef";
    size_t cap = 3;
    for (size_t i = 0; i < n; i++) cap += (!v[i] ? 4 : bytea ? 2 * lens[i] + 6 : 2 * strlen(v[i]) + 3) + 1;
    char *s = malloc(cap), *o = s;
    if (!s) return NULL;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i) *o++ = ',';
        if (!v[i]) { memcpy(o, "NULL", 4); o += 4; continue; }
        *o++ = '"';
        if (bytea) {
            const uint8_t *b = v[i];
            memcpy(o, "\\\\x", 3);   /* \\x in the literal: the element text is \x<hex> */
            o += 3;
            for (size_t k = 0; k < lens[i]; k++) { *o++ = hx[b[k] >> 4]; *o++ = hx[b[k] & 15]; }
        } else {
            for (const char *p = v[i]; *p; p++) {
                if (*p == '"' || *p == '\\') *o++ = '\\';
                *o++ = *p;
            }
        }
        *o++ = '"';
    }
    *o++ = '}';
    *o = 0;
    return s;
}

char *zp_fleet_text_array(const char *const *v, size_t n)
{
    return array_literal((const void *const *)v, NULL, n, false);
}

char *zp_fleet_bytea_array(const uint8_t *const *v, const size_t *lens, size_t n)
{
    return array_literal((const void *const *)v, lens, n, true);
}
