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

/* libpq is loaded when the first connection is made (zp_fleet_connect: dlopen of libpq.so.5,
 * or $ZP_LIBPQ), not linked: a process that never uses fleet mode (every `zkpipe prove`) does
 * not pay its ~11 ms of loading and relocating (libpq and the TLS, LDAP and Kerberos libraries
 * behind it; session 17, measured on a 2-core VM where a page fault costs ~10 us). Every PQ
 * function these files call goes through this table; a call before the first connection would
 * be a NULL call, and none exists (every other PQ call takes the connection). */
#define ZP_PQ_FNS(X) \
    X(PQclear) \
    X(PQconnectdbParams) \
    X(PQconsumeInput) \
    X(PQdb) \
    X(PQerrorMessage) \
    X(PQexec) \
    X(PQexecParams) \
    X(PQfinish) \
    X(PQfreemem) \
    X(PQgetisnull) \
    X(PQgetlength) \
    X(PQgetvalue) \
    X(PQhost) \
    X(PQnfields) \
    X(PQnotifies) \
    X(PQntuples) \
    X(PQport) \
    X(PQresultErrorField) \
    X(PQresultErrorMessage) \
    X(PQresultStatus) \
    X(PQsocket) \
    X(PQstatus) \
    X(PQunescapeBytea) \
    X(PQuser)
struct zp_pq_fns {
#define ZP_PQ_MEMBER(f) __typeof__(f) *f##_;
    ZP_PQ_FNS(ZP_PQ_MEMBER)
#undef ZP_PQ_MEMBER
};
extern struct zp_pq_fns zp_pq;
/* 0, or -1 with the reason in err (the library's name and dlerror's text) */
int zp_pq_load(char *err, size_t n);
#define PQclear (*zp_pq.PQclear_)
#define PQconnectdbParams (*zp_pq.PQconnectdbParams_)
#define PQconsumeInput (*zp_pq.PQconsumeInput_)
#define PQdb (*zp_pq.PQdb_)
#define PQerrorMessage (*zp_pq.PQerrorMessage_)
#define PQexec (*zp_pq.PQexec_)
#define PQexecParams (*zp_pq.PQexecParams_)
#define PQfinish (*zp_pq.PQfinish_)
#define PQfreemem (*zp_pq.PQfreemem_)
#define PQgetisnull (*zp_pq.PQgetisnull_)
#define PQgetlength (*zp_pq.PQgetlength_)
#define PQgetvalue (*zp_pq.PQgetvalue_)
#define PQhost (*zp_pq.PQhost_)
#define PQnfields (*zp_pq.PQnfields_)
#define PQnotifies (*zp_pq.PQnotifies_)
#define PQntuples (*zp_pq.PQntuples_)
#define PQport (*zp_pq.PQport_)
#define PQresultErrorField (*zp_pq.PQresultErrorField_)
#define PQresultErrorMessage (*zp_pq.PQresultErrorMessage_)
#define PQresultStatus (*zp_pq.PQresultStatus_)
#define PQsocket (*zp_pq.PQsocket_)
#define PQstatus (*zp_pq.PQstatus_)
#define PQunescapeBytea (*zp_pq.PQunescapeBytea_)
#define PQuser (*zp_pq.PQuser_)

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
