/* zkpipe-client.h - libzkpipe-client: talk to a running zkpipe broker from C (or through FFI
 * from Go, Rust, Python...). The `zkpipe submit|await|status|cancel|trace|metrics` commands
 * are built on this library; its result codes ARE the command's exit statuses.
 *
 *   zp_client_t *c = zp_client_new(NULL);              // default runtime directory
 *   zp_client_job_t *j = zp_client_job_new("/keys/circuit.zkey");
 *   zp_client_job_add_wtns(j, "/data/w1.wtns");        // a path the daemons can read, or
 *   zp_client_job_add_wtns_data(j, bytes, n);          // the witness bytes themselves
 *   uint64_t id;
 *   int rc = zp_client_submit(c, j, &id, NULL);
 *   zp_client_result_t *r = NULL;
 *   rc = zp_client_await(c, id, 60000, &r);            // ZP_CLIENT_OK: every partition proved
 *   const char *proof = zp_client_result_proof(r, 0);  // snarkjs proof.json text
 *   zp_client_result_free(&r); zp_client_job_free(&j); zp_client_destroy(&c);
 *
 * Connection. The broker listens on ipc://<runtime dir>/broker.sock. The runtime directory is
 * the one given to zp_client_new, else $ZP_RUNTIME_DIR, else $XDG_RUNTIME_DIR/zkpipe, else
 * /tmp/zkpipe-<uid>. Before connecting, the library checks it the way the broker does: a
 * directory not writable by group or others, owned by the calling user (a directory named
 * explicitly, by argument or $ZP_RUNTIME_DIR, may also belong to the service's user, e.g.
 * /run/zkpipe of the systemd units); the socket must be a socket owned by the directory's
 * owner. A directory or socket the caller may not enter is reported as "permission denied".
 *
 * Restarts. Every call here is idempotent (a SUBMIT carries a request id: the broker answers a
 * repeated one with the job it already made, across its own restarts), so when the broker
 * does not answer, the library reconnects and repeats the call until the call's deadline:
 * zp_client_set_timeout() for submit/status/cancel/metrics/trace (default 30 s), the await's
 * own timeout for zp_client_await. A missing socket (no broker, or one restarting cleanly) is
 * waited for at most 5 s before the call says "no broker socket".
 *
 * Threads: a zp_client_t is used by one thread at a time; separate clients are independent.
 * Strings returned by the library stay valid until the object that holds them is freed. */
#ifndef ZKPIPE_CLIENT_H
#define ZKPIPE_CLIENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(ZP_CLIENT_STATIC_ONLY)
#define ZP_CLIENT_API __attribute__((visibility("default")))
#else
#define ZP_CLIENT_API
#endif

#define ZP_CLIENT_VERSION "0.1.0"

/* Result codes, the same numbers as the `zkpipe` client commands' exit statuses. */
enum zp_client_code {
    ZP_CLIENT_OK = 0,          /* done: the call succeeded; await: every partition proved */
    ZP_CLIENT_FAILED = 1,      /* await: the job ended with at least one failed partition */
    ZP_CLIENT_USAGE = 2,       /* bad usage or unusable input (missing file, witness too big) */
    ZP_CLIENT_TIMEOUT = 3,     /* await: the deadline passed while the job was still running */
    ZP_CLIENT_CANCELED = 4,    /* await: the job was canceled */
    ZP_CLIENT_UNREACHABLE = 5, /* no broker answered before the deadline: not running, permission
                                  denied, or a runtime directory that is not trusted */
    ZP_CLIENT_REFUSED = 6,     /* the broker refused the request (unknown job, bad field...) */
    ZP_CLIENT_SYSTEM = 7,      /* a local failure: out of memory, ZeroMQ error */
};

/* Largest witness accepted in memory (zp_client_job_add_wtns_data); the broker may set a
 * lower limit (zkpipe-broker --max-inline-wtns). Larger witnesses go by path. */
#define ZP_CLIENT_INLINE_WTNS_MAX (8u << 20)

typedef struct zp_client zp_client_t;
typedef struct zp_client_job zp_client_job_t;
typedef struct zp_client_result zp_client_result_t;

/* the fixed text of a code ("done", "broker unreachable", ...) */
ZP_CLIENT_API const char *zp_client_strerror(int code);

/* A client for the broker of runtime_dir (NULL: the default, see above). Never connects by
 * itself; NULL only when out of memory. */
ZP_CLIENT_API zp_client_t *zp_client_new(const char *runtime_dir);
ZP_CLIENT_API void zp_client_destroy(zp_client_t **cp);
/* deadline of one call, retries across broker restarts included (ms, > 0; default 30000) */
ZP_CLIENT_API void zp_client_set_timeout(zp_client_t *c, int timeout_ms);
/* what went wrong in the last call that did not return ZP_CLIENT_OK ("" otherwise) */
ZP_CLIENT_API const char *zp_client_errmsg(const zp_client_t *c);
/* Check the runtime directory and socket and connect (the calls below connect on demand;
 * this only lets a program fail early). Waits up to 5 s for a missing socket. */
ZP_CLIENT_API int zp_client_connect(zp_client_t *c);
/* Progress during zp_client_await: fn(ctx, done, failed, total) after each answer from the
 * broker (at least every interval_ms while the job runs; 0: only when the job ends). */
typedef void (*zp_client_progress_fn)(void *ctx, uint32_t done, uint32_t failed, uint32_t total);
ZP_CLIENT_API void zp_client_set_progress(zp_client_t *c, zp_client_progress_fn fn, void *ctx, int interval_ms);

/* ---- a job to submit ---- */
ZP_CLIENT_API zp_client_job_t *zp_client_job_new(const char *zkey_path);
ZP_CLIENT_API void zp_client_job_free(zp_client_job_t **jp);
ZP_CLIENT_API int zp_client_job_set_r1cs(zp_client_job_t *j, const char *r1cs_path);   /* synth checks the witness */
ZP_CLIENT_API int zp_client_job_set_priority(zp_client_job_t *j, const char *priority); /* critical|high|normal|low */
/* the idempotency key, 1..128 bytes (default: a random "auto-..." id made at submit) */
ZP_CLIENT_API int zp_client_job_set_request_id(zp_client_job_t *j, const char *request_id);
/* one partition per witness, in order: a path (made absolute here: the daemons run elsewhere)
 * or the witness bytes (copied; at most ZP_CLIENT_INLINE_WTNS_MAX) */
ZP_CLIENT_API int zp_client_job_add_wtns(zp_client_job_t *j, const char *wtns_path);
ZP_CLIENT_API int zp_client_job_add_wtns_data(zp_client_job_t *j, const void *data, size_t len);
/* Pre-synthesized partitions (issue 30): a vectors file (lib/fmt/vecs.h: w, a, b, c computed
 * by the caller, e.g. libzkpipe_c2 for bellperson) instead of a witness; a path the daemons
 * can read (made absolute here), normally in /dev/shm. The synthesizer checks it against the
 * key and copies it into the slot; it may read it again after a requeue, so the file must stay
 * until the job has ended. Witnesses and vectors may be mixed in one job. */
ZP_CLIENT_API int zp_client_job_add_vectors(zp_client_job_t *j, const char *vectors_path);
/* Inputs instead of witnesses (issue 28): the synthesizers compute each partition's witness
 * from its input.json with the circuit's witness generator (the .wasm `circom --wasm` emits;
 * a path the daemons can read, made absolute here). Inputs go inline (the JSON text, copied;
 * at most ZP_CLIENT_INPUT_MAX bytes each; the broker checks that it is one JSON object, the
 * synthesizer checks the signals). A job has either witnesses or inputs, never both; inputs
 * need the wasm. */
#define ZP_CLIENT_INPUT_MAX (4u << 20)
ZP_CLIENT_API int zp_client_job_set_wasm(zp_client_job_t *j, const char *wasm_path);
ZP_CLIENT_API int zp_client_job_add_input(zp_client_job_t *j, const char *json, size_t len);
ZP_CLIENT_API int zp_client_job_add_input_file(zp_client_job_t *j, const char *input_json_path);
/* why the last job call failed ("" if none) */
ZP_CLIENT_API const char *zp_client_job_errmsg(const zp_client_job_t *j);
/* the request id the job was (or will be) submitted with */
ZP_CLIENT_API const char *zp_client_job_request_id(const zp_client_job_t *j);

/* Submit: *job gets the job id; *existed (may be NULL) is true when the broker already had
 * this request id (the job it made then is returned, nothing new is queued). */
ZP_CLIENT_API int zp_client_submit(zp_client_t *c, zp_client_job_t *j, uint64_t *job, bool *existed);

/* Wait for the job until timeout_ms (< 0: no limit; 0: poll once). Returns OK, FAILED,
 * CANCELED, TIMEOUT (the job is still running; *out holds its state so far), UNREACHABLE or
 * REFUSED. *out (may be NULL) gets the result whenever the broker answered. */
ZP_CLIENT_API int zp_client_await(zp_client_t *c, uint64_t job, int64_t timeout_ms, zp_client_result_t **out);
ZP_CLIENT_API void zp_client_result_free(zp_client_result_t **rp);
ZP_CLIENT_API uint64_t zp_client_result_job(const zp_client_result_t *r);
ZP_CLIENT_API const char *zp_client_result_state(const zp_client_result_t *r);  /* running|done|failed|canceled */
ZP_CLIENT_API uint32_t zp_client_result_parts(const zp_client_result_t *r);
ZP_CLIENT_API uint32_t zp_client_result_done(const zp_client_result_t *r);     /* partitions proved */
ZP_CLIENT_API uint32_t zp_client_result_failed(const zp_client_result_t *r);
/* partition i: state (queued|running|done|failed|canceled), attempts, and when done its
 * snarkjs proof.json / public.json text; when failed the reasons. NULL / 0 when i is out of range
 * or the field does not apply. */
ZP_CLIENT_API const char *zp_client_result_part_state(const zp_client_result_t *r, uint32_t i);
ZP_CLIENT_API uint32_t zp_client_result_part_attempts(const zp_client_result_t *r, uint32_t i);
ZP_CLIENT_API const char *zp_client_result_proof(const zp_client_result_t *r, uint32_t i);
ZP_CLIENT_API const char *zp_client_result_public(const zp_client_result_t *r, uint32_t i);
ZP_CLIENT_API const char *zp_client_result_error(const zp_client_result_t *r, uint32_t i);
/* the binary proof of partition i (*len = 0 when there is none) */
ZP_CLIENT_API const uint8_t *zp_client_result_proof_bin(const zp_client_result_t *r, uint32_t i, size_t *len);

/* Cancel a job: *freed (may be NULL) gets the number of arena slots freed. */
ZP_CLIENT_API int zp_client_cancel(zp_client_t *c, uint64_t job, uint32_t *freed);
/* The broker's status (text, or JSON with json = true), its metrics (Prometheus text) and a
 * Chrome trace (JSON; max_parts 0 = the broker's default): *text is malloc'd, release it with
 * zp_client_free. */
ZP_CLIENT_API int zp_client_status(zp_client_t *c, bool json, char **text);
ZP_CLIENT_API int zp_client_metrics(zp_client_t *c, char **text);
ZP_CLIENT_API int zp_client_trace(zp_client_t *c, uint32_t max_parts, char **text);
ZP_CLIENT_API void zp_client_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
