/* fleet_db.h - the PostgreSQL side of fleet mode, shared by the broker (a box) and the
 * `zkpipe ... --fleet` clients: connecting without ever printing the connection string,
 * counted round trips, versioned schema migrations, and the SQL text of the schema.
 * The schema lives in its own PostgreSQL schema `zkpipe`; every state change is one call of a
 * SECURITY DEFINER function (one round trip each), so boxes and clients need only EXECUTE on
 * the functions their role uses (doc/fleet.md). Tests: tests/fleet/. */
#ifndef ZP_FLEET_DB_H
#define ZP_FLEET_DB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#define ZP_FLEET_SCHEMA 1          /* the migration version this build needs */

typedef struct zp_fleet_io {
    uint64_t round_trips;
    uint64_t bytes_out;             /* query text + parameter values */
    uint64_t bytes_in;              /* result values (no protocol framing) */
} zp_fleet_io_t;

/* Connect to url (a libpq URI or key=value string). On failure: NULL, and a message in err
 * that never contains the connection string (libpq's own message names host and user, never a
 * password). app: application_name. check_schema: refuse a database whose schema version is
 * not ZP_FLEET_SCHEMA (with the fix in the message: `zkpipe fleet init`). */
PGconn *zp_fleet_connect(const char *url, const char *app, bool check_schema, char *err, size_t n);
/* "user@host:port/db" of an open connection, for logs (no password) */
void zp_fleet_describe(PGconn *c, char *buf, size_t n);

/* One statement with text parameters (bin_mask: bit i = parameter i is binary, lens used),
 * results in text (result_binary false) or binary. Counts one round trip into io (may be NULL).
 * Returns the result (PGRES_TUPLES_OK / COMMAND_OK) or NULL with the error in err. */
PGresult *zp_fleet_exec(PGconn *c, zp_fleet_io_t *io, const char *sql, int n, const char *const *vals,
                        const int *lens, unsigned bin_mask, char *err, size_t errn);

/* Apply every migration newer than the database's, in one transaction under an advisory lock.
 * from, to: the versions before and after. A database newer than this build: ZP_EFORMAT. */
int zp_fleet_migrate(PGconn *c, int *from, int *to, char *err, size_t n);
/* the schema version of the database (0: not initialized), or negative on error */
int zp_fleet_schema_version(PGconn *c, char *err, size_t n);

/* a PostgreSQL array literal of n strings (NULL entries stay NULL); malloc'd */
char *zp_fleet_text_array(const char *const *v, size_t n);
/* the same for bytea values (hex format) */
char *zp_fleet_bytea_array(const uint8_t *const *v, const size_t *lens, size_t n);
#endif
