/* proto.h - the messages of zkpipe's control plane, on top of the strict frame codec (codec.h).
 *
 * Every message is one frame: tag | command byte | msgpack map {0: version, 1..: fields}.
 * zp_msg_<name>_encode() builds the frame into a malloc'd buffer (caller frees);
 * zp_msg_<name>_decode() validates every field (type, range, length) of a frame that
 * zp_frame_decode() accepted, and fills a struct whose strings are VIEWS into the frame
 * (zp_strref_t: pointer + length, not NUL-terminated): the frame buffer must outlive them.
 *
 * Who sends what:
 *   worker -> broker  HELLO, HEARTBEAT, DONE, FAIL
 *   broker -> worker  ASSIGN, ACK, REVOKE, RESET, HEARTBEAT
 *   client -> broker  SUBMIT, STATUS, AWAIT, CANCEL, TRACE, METRICS
 *   broker -> client  SUBMITTED, TEXT (status/trace/metrics), RESULT, CANCELED, ERROR
 * Times in messages are CLOCK_MONOTONIC nanoseconds (zp_now_ns): all processes of a group run
 * on one host, so they share the clock.
 * Tests: tests/ipc/ (real processes) and tests/test_proto.c. */
#ifndef ZP_PROTO_H
#define ZP_PROTO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

#define ZP_PROTO_VERSION 1

enum zp_cmd {
    ZP_CMD_HELLO = 1, ZP_CMD_HEARTBEAT = 2, ZP_CMD_DONE = 3, ZP_CMD_FAIL = 4,
    ZP_CMD_ASSIGN = 10, ZP_CMD_ACK = 11, ZP_CMD_REVOKE = 12, ZP_CMD_RESET = 13,
    ZP_CMD_SUBMIT = 20, ZP_CMD_STATUS = 21, ZP_CMD_AWAIT = 22, ZP_CMD_CANCEL = 23, ZP_CMD_TRACE = 24,
    ZP_CMD_METRICS = 25,
    ZP_CMD_SUBMITTED = 30, ZP_CMD_TEXT = 31, ZP_CMD_RESULT = 32, ZP_CMD_CANCELED = 33,
    ZP_CMD_ERROR = 34,
};
#define ZP_CMDS_FROM_WORKER ((1ull << ZP_CMD_HELLO) | (1ull << ZP_CMD_HEARTBEAT) | (1ull << ZP_CMD_DONE) | (1ull << ZP_CMD_FAIL))
#define ZP_CMDS_FROM_CLIENT ((1ull << ZP_CMD_SUBMIT) | (1ull << ZP_CMD_STATUS) | (1ull << ZP_CMD_AWAIT) | (1ull << ZP_CMD_CANCEL) | (1ull << ZP_CMD_TRACE) | (1ull << ZP_CMD_METRICS))
#define ZP_CMDS_TO_BROKER (ZP_CMDS_FROM_WORKER | ZP_CMDS_FROM_CLIENT)
#define ZP_CMDS_TO_WORKER ((1ull << ZP_CMD_ASSIGN) | (1ull << ZP_CMD_ACK) | (1ull << ZP_CMD_REVOKE) | (1ull << ZP_CMD_RESET) | (1ull << ZP_CMD_HEARTBEAT))
#define ZP_CMDS_TO_CLIENT ((1ull << ZP_CMD_SUBMITTED) | (1ull << ZP_CMD_TEXT) | (1ull << ZP_CMD_RESULT) | (1ull << ZP_CMD_CANCELED) | (1ull << ZP_CMD_ERROR))

/* roles = stages; a worker has exactly one */
typedef enum { ZP_ROLE_SYNTH = 0, ZP_ROLE_GPU = 1, ZP_ROLE_FINAL = 2, ZP_NROLES = 3 } zp_role_t;
const char *zp_role_name(unsigned role);                 /* "synth", "gpu", "final", "?" */

typedef enum { ZP_PRIO_CRITICAL = 0, ZP_PRIO_HIGH = 1, ZP_PRIO_NORMAL = 2, ZP_PRIO_LOW = 3, ZP_NPRIO = 4 } zp_prio_t;
const char *zp_prio_name(unsigned prio);                 /* "critical", ... */

/* Failure classes (DESIGN "Faults, leases and failure classes"): what happens next is decided
 * by the class, never by the partition's attempt count alone.
 *   TRANSIENT  retry with backoff (charged as an attempt)
 *   INPUT      deterministic (bad or unsatisfying witness, mismatched files): fail the
 *              partition with the reason after at most one confirmation
 *   WORKER     the process died, hung or was killed: requeue, not charged to the partition
 *   DEVICE     a GPU error: the worker exits and restarts clean; not charged */
typedef enum { ZP_FAIL_TRANSIENT = 0, ZP_FAIL_INPUT = 1, ZP_FAIL_WORKER = 2, ZP_FAIL_DEVICE = 3,
               ZP_NFAIL_CLASSES = 4 } zp_fail_class_t;
const char *zp_fail_class_name(unsigned cls);            /* "transient", "input", "worker", "device", "?" */
int zp_prio_parse(const char *s);                        /* case-insensitive name or 0..3; -1 */

/* partition / job states as reported to clients */
typedef enum {
    ZP_PART_QUEUED = 0, ZP_PART_RUNNING = 1, ZP_PART_DONE = 2, ZP_PART_FAILED = 3, ZP_PART_CANCELED = 4
} zp_part_state_t;
typedef enum { ZP_JOB_RUNNING = 0, ZP_JOB_DONE = 1, ZP_JOB_FAILED = 2, ZP_JOB_CANCELED = 3 } zp_job_state_t;
const char *zp_part_state_name(unsigned s);
const char *zp_job_state_name(unsigned s);

/* capability bits in HELLO */
#define ZP_CAP_CUDA 1u              /* GPU worker runs the CUDA backend */
#define ZP_CAP_R1CS_CHECK 2u        /* synth checks C·w = a∘b when given the r1cs */

/* limits (also enforced by the decoders) */
#define ZP_MSG_PATH_MAX 4096
#define ZP_MSG_TEXT_MAX 4096        /* error messages */
#define ZP_MSG_NAME_MAX 128
#define ZP_MSG_MAX_HELD 64
#define ZP_MSG_MAX_PARTS 1024       /* partitions per job */
#define ZP_MSG_MAX_CREDITS 64
#define ZP_MSG_JSON_MAX 8192        /* proof.json / public.json of one partition */
#define ZP_MSG_BIN_MAX 512          /* binary proof */
#define ZP_MSG_INPUT_MAX (4u << 20)  /* one inline input.json (SUBMIT key 6 with key 7) */
#define ZP_ID_TOKEN_LEN 16          /* HELLO identity token (proto/identity.h) */

typedef zp_strref_t zp_str_t;      /* a view: p, len (not NUL-terminated) */
static inline zp_str_t zp_str(const char *s);

/* ---- worker -> broker ---- */
typedef struct { uint32_t slot; uint64_t gen; } zp_held_t;
/* the proving keys a worker holds (HELLO key 10, HEARTBEAT key 3; optional, absent from an
 * older worker: present = false). doc/keys.md. Untrusted: the broker only uses them to prefer
 * a worker (routing), never to trust a result. */
#define ZP_MSG_MAX_KEYS 16
#define ZP_MSG_KEY_TIERS 15u        /* tier bits: 1 shm, 2 pinned, 4 on the device, 8 private */
typedef struct { zp_str_t path; uint64_t bytes; uint32_t tier; } zp_msg_key_t;
typedef struct {
    bool present;
    uint64_t loads, evictions;      /* since the process started */
    uint64_t budget;                /* --key-budget bytes (0: none) */
    size_t n;
    zp_msg_key_t k[ZP_MSG_MAX_KEYS];/* most recently used first; paths absolute */
} zp_msg_keys_t;
typedef struct {
    uint32_t role, instance;
    uint64_t incarnation;     /* random per process start, non-zero */
    uint32_t pid;
    uint32_t capabilities;    /* ZP_CAP_* */
    uint32_t credits;         /* 1..ZP_MSG_MAX_CREDITS */
    zp_str_t name;            /* free text: "gpu-worker cuda:0", "synth" */
    size_t n_held;
    zp_held_t held[ZP_MSG_MAX_HELD];
    /* optional key 9: the secret the process's supervisor handed it (proto/identity.h); the
     * broker takes a worker's identity from it and from the connection's peer credentials,
     * never from role/instance/pid above */
    bool has_token;
    uint8_t token[ZP_ID_TOKEN_LEN];
    zp_msg_keys_t keys;       /* optional key 10: the keys it holds */
} zp_msg_hello_t;

typedef struct {
    uint64_t incarnation;
    uint32_t busy;            /* assignments held now */
    zp_msg_keys_t keys;       /* optional key 3: the keys it holds */
} zp_msg_heartbeat_t;

/* DONE: the stage committed slot `slot` from generation gen to new_gen (the seal/commit
 * generation, which the next stage reads with). */
enum { ZP_DT_H2D = 0, ZP_DT_NTT = 1, ZP_DT_MSM = 2, ZP_DT_D2H = 3, ZP_DT_MSM_G2 = 4, ZP_DT_CHECK = 5,
       ZP_DT_VERIFY_IN = 6, ZP_DT_WITNESS = 7, ZP_DT_N = 8 };   /* WITNESS: the synth's witness
                                                                     generation from input.json (issue 28) */
enum { ZP_TM_STAGE_START = 0, ZP_TM_STAGE_END = 1, ZP_TM_COMPUTE_START = 2, ZP_TM_COMPUTE_END = 3, ZP_TM_VERIFY_END = 4,
       ZP_TM_RUN_START = 5, ZP_TM_RUN_END = 6, ZP_TM_N = 7 };
typedef struct {
    uint32_t slot;
    uint64_t gen, new_gen;
    uint64_t job;
    uint32_t part;
    uint64_t t_start, t_end;  /* monotonic ns: work began (assignment taken) / committed */
    uint64_t dt[ZP_DT_N];     /* stage detail durations, ns (ZP_DT_*) */
    zp_str_t proof_json, public_json; /* finalizer only (else len 0) */
    const uint8_t *proof_bin; size_t proof_bin_len;
    /* optional (key 12; absent = 0): absolute monotonic ns of the task's phases (ZP_TM_*):
     * staging start and end (a staging stage: the GPU worker; t_start..t_end is then the work
     * thread's part) and the backend compute's start and end; (added) the end of the deferred
     * payload verify that gates the commit (GPU worker: it runs beside the compute); (added)
     * the compute's own start and end on the backend's compute thread (a detached CPU backend:
     * inside [compute start, compute end], which are the work thread's dispatch and wake-up) */
    uint64_t tm[ZP_TM_N];
} zp_msg_done_t;

typedef struct {
    uint32_t slot;
    uint64_t gen;
    uint64_t job;
    uint32_t part;
    bool retryable;
    int32_t code;             /* ZP_E* / -errno */
    bool payload_bad;         /* the slot's input vectors are unusable: redo from synthesis */
    uint64_t t_start, t_end;
    zp_str_t message;
    /* optional (absent = false): the stage harness handed the task back without starting it
     * (revoked, or the worker is shutting down): no attempt was spent on it */
    bool unstarted;
    bool stopping;            /* the worker is shutting down: give it no more work */
    /* optional (absent: INPUT when !retryable, else TRANSIENT) */
    uint8_t fail_class;       /* zp_fail_class_t */
} zp_msg_fail_t;

/* ---- broker -> worker ---- */
typedef struct {
    uint32_t slot;
    uint64_t gen;             /* the worker holds the slot at (stage's busy state, gen) */
    uint64_t in_gen;          /* commit generation of the previous stage's output (0 for synth) */
    uint64_t payload_gen;     /* the synth's seal generation (0 for synth) */
    uint32_t stage;           /* zp_role_t */
    uint64_t job;
    uint32_t part, attempt, priority;
    zp_str_t zkey, r1cs, wtns;/* r1cs, wtns may be empty */
    uint64_t epoch;           /* the arena's epoch: a worker re-opens the arena when it changed */
    /* optional (absent = 0 = no lease): CLOCK_MONOTONIC ns by which the worker must have
     * reported; a stage whose work thread is still on it then exits (stage/stage_loop.c) */
    uint64_t lease_deadline;
    /* optional key 15 (absent = empty): the circuit's witness generator (circom's .wasm,
     * absolute path). When set, wtns names the partition's input.json, and the synthesizer
     * computes the witness from it into the slot (issue 28) */
    zp_str_t wasm;
} zp_msg_assign_t;

typedef struct { uint32_t slot; uint64_t gen; bool accepted; } zp_msg_ack_t;
typedef struct { uint32_t slot; uint64_t gen; } zp_msg_revoke_t;
typedef struct { zp_str_t reason; } zp_msg_reset_t;

/* ---- client -> broker ---- */
typedef struct {
    zp_str_t request_id;      /* 1..128 bytes; the idempotency key */
    zp_str_t zkey, r1cs;      /* absolute paths (the daemons run elsewhere); r1cs may be empty */
    uint32_t priority;
    size_t n_wtns;
    zp_str_t wtns[ZP_MSG_MAX_PARTS];
    /* optional key 6 (absent: every witness is a path): an array of n_wtns bins; a non-empty
     * bin is partition i's witness file itself (wtns[i] is then empty), sent inline by a client
     * without shared storage. The broker writes it to its state directory before queueing. */
    const uint8_t *wtns_data[ZP_MSG_MAX_PARTS];
    size_t wtns_data_len[ZP_MSG_MAX_PARTS];
    /* optional key 7 (absent = empty): the circuit's witness generator, circom's .wasm
     * (absolute path). When set, every entry of key 5 / key 6 is the partition's input.json
     * (a path, or the JSON text inline, at most ZP_MSG_INPUT_MAX bytes) instead of a .wtns:
     * the synthesizer computes the witness (issue 28). */
    zp_str_t wasm;
} zp_msg_submit_t;
typedef struct { bool json; } zp_msg_status_t;
typedef struct { uint64_t job; uint32_t timeout_ms; } zp_msg_await_t;   /* 0 = poll */
typedef struct { uint64_t job; } zp_msg_cancel_t;
typedef struct { uint32_t max_parts; } zp_msg_trace_t;
typedef struct { uint32_t format; } zp_msg_metrics_t;  /* 0: Prometheus text 0.0.4 (the only one) */

/* ---- broker -> client ---- */
typedef struct { uint64_t job; uint32_t n_parts; bool existed; } zp_msg_submitted_t;
typedef struct { zp_str_t text; } zp_msg_text_t;
typedef struct {
    uint32_t state;           /* zp_part_state_t */
    uint32_t attempts;
    zp_str_t error;           /* FAILED: the collected reasons */
    zp_str_t proof_json, public_json;
    const uint8_t *proof_bin; size_t proof_bin_len;
} zp_msg_part_result_t;
typedef struct {
    uint64_t job;
    uint32_t state;           /* zp_job_state_t */
    bool timed_out;           /* the await ran out before the job finished */
    size_t n_parts;
    zp_msg_part_result_t *parts; /* decode: malloc'd array (zp_msg_result_free); encode: caller's */
} zp_msg_result_t;
typedef struct { uint64_t job; uint32_t freed; } zp_msg_canceled_t;
typedef struct { int32_t code; zp_str_t message; } zp_msg_error_t;

/* encoders: 0 or negative (ZP_ETOOBIG when the frame would exceed max; 0 = default max) */
int zp_msg_hello_encode(uint8_t **buf, size_t *len, const zp_msg_hello_t *m);
int zp_msg_heartbeat_encode(uint8_t **buf, size_t *len, const zp_msg_heartbeat_t *m);
int zp_msg_done_encode(uint8_t **buf, size_t *len, const zp_msg_done_t *m);
int zp_msg_fail_encode(uint8_t **buf, size_t *len, const zp_msg_fail_t *m);
int zp_msg_assign_encode(uint8_t **buf, size_t *len, const zp_msg_assign_t *m);
int zp_msg_ack_encode(uint8_t **buf, size_t *len, const zp_msg_ack_t *m);
int zp_msg_revoke_encode(uint8_t **buf, size_t *len, const zp_msg_revoke_t *m);
int zp_msg_reset_encode(uint8_t **buf, size_t *len, const zp_msg_reset_t *m);
int zp_msg_submit_encode(uint8_t **buf, size_t *len, const zp_msg_submit_t *m);
int zp_msg_status_encode(uint8_t **buf, size_t *len, const zp_msg_status_t *m);
int zp_msg_await_encode(uint8_t **buf, size_t *len, const zp_msg_await_t *m);
int zp_msg_cancel_encode(uint8_t **buf, size_t *len, const zp_msg_cancel_t *m);
int zp_msg_trace_encode(uint8_t **buf, size_t *len, const zp_msg_trace_t *m);
int zp_msg_metrics_encode(uint8_t **buf, size_t *len, const zp_msg_metrics_t *m);
int zp_msg_submitted_encode(uint8_t **buf, size_t *len, const zp_msg_submitted_t *m);
int zp_msg_text_encode(uint8_t **buf, size_t *len, const zp_msg_text_t *m);
int zp_msg_result_encode(uint8_t **buf, size_t *len, const zp_msg_result_t *m);
int zp_msg_canceled_encode(uint8_t **buf, size_t *len, const zp_msg_canceled_t *m);
int zp_msg_error_encode(uint8_t **buf, size_t *len, const zp_msg_error_t *m);

/* decoders: f must carry the matching command (else ZP_EPROTO); every field validated. */
int zp_msg_hello_decode(zp_msg_hello_t *m, const zp_frame_t *f);
int zp_msg_heartbeat_decode(zp_msg_heartbeat_t *m, const zp_frame_t *f);
int zp_msg_done_decode(zp_msg_done_t *m, const zp_frame_t *f);
int zp_msg_fail_decode(zp_msg_fail_t *m, const zp_frame_t *f);
int zp_msg_assign_decode(zp_msg_assign_t *m, const zp_frame_t *f);
int zp_msg_ack_decode(zp_msg_ack_t *m, const zp_frame_t *f);
int zp_msg_revoke_decode(zp_msg_revoke_t *m, const zp_frame_t *f);
int zp_msg_reset_decode(zp_msg_reset_t *m, const zp_frame_t *f);
int zp_msg_submit_decode(zp_msg_submit_t *m, const zp_frame_t *f);
int zp_msg_status_decode(zp_msg_status_t *m, const zp_frame_t *f);
int zp_msg_await_decode(zp_msg_await_t *m, const zp_frame_t *f);
int zp_msg_cancel_decode(zp_msg_cancel_t *m, const zp_frame_t *f);
int zp_msg_trace_decode(zp_msg_trace_t *m, const zp_frame_t *f);
int zp_msg_metrics_decode(zp_msg_metrics_t *m, const zp_frame_t *f);
int zp_msg_submitted_decode(zp_msg_submitted_t *m, const zp_frame_t *f);
int zp_msg_text_decode(zp_msg_text_t *m, const zp_frame_t *f);
int zp_msg_result_decode(zp_msg_result_t *m, const zp_frame_t *f);   /* mallocs m->parts */
void zp_msg_result_free(zp_msg_result_t *m);
int zp_msg_canceled_decode(zp_msg_canceled_t *m, const zp_frame_t *f);
int zp_msg_error_decode(zp_msg_error_t *m, const zp_frame_t *f);

/* helpers */
char *zp_str_dup(zp_str_t s);                 /* malloc'd NUL-terminated copy; NULL on ENOMEM */
bool zp_str_eq(zp_str_t s, const char *z);
static inline zp_str_t zp_str(const char *s)
{
    zp_str_t r = {s, 0};
    if (s) while (s[r.len]) r.len++;
    return r;
}
#endif
