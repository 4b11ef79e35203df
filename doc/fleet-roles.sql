-- fleet-roles.sql - least-privilege roles for a zkpipe fleet (run once, as the owner of the
-- zkpipe schema, after `zkpipe fleet init`). Boxes and clients change the queue only through
-- the SECURITY DEFINER functions of the schema; neither can UPDATE or DELETE a row directly.
-- Set passwords with \password ROLE (or use peer/cert authentication); keep them out of URLs
-- (~/.pgpass or PGPASSFILE), so no command line ever carries them.
-- tests/fleet/ applies this file as it is and runs its boxes and clients under these roles.

CREATE ROLE zkpipe_box LOGIN;      -- `zkpipe up --fleet`
CREATE ROLE zkpipe_client LOGIN;   -- `zkpipe submit|await|status|cancel --fleet`

GRANT USAGE ON SCHEMA zkpipe TO zkpipe_box, zkpipe_client;
GRANT SELECT ON zkpipe.migrations TO zkpipe_box, zkpipe_client;   -- the schema version check

-- a box: claim, renew (also its heartbeat), commit, fail, hand back, requeue expired leases
GRANT EXECUTE ON FUNCTION
  zkpipe.claim(text, int, int),
  zkpipe.renew(text, bigint, int, bigint[], bigint[], int, bigint, bigint, bigint),
  zkpipe.commit(text, bigint, bigint, text, text, bytea),
  zkpipe.fail(text, bigint, bigint, text, boolean),
  zkpipe.handback(text, bigint, bigint, text, boolean),
  zkpipe.reap()
TO zkpipe_box;

-- a client: submit and cancel; read jobs, results and the status columns (not the witnesses)
GRANT EXECUTE ON FUNCTION
  zkpipe.submit(text, text, text, int, int, text[], bytea[]),
  zkpipe.cancel(bigint)
TO zkpipe_client;
GRANT SELECT ON zkpipe.jobs, zkpipe.results, zkpipe.boxes TO zkpipe_client;
GRANT SELECT (id, job_id, idx, priority, state, attempts, reasons, handback) ON zkpipe.partitions TO zkpipe_client;
