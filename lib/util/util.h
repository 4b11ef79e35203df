/* util.h - errors, logging, timing and the thread pool shared by every zkpipe module.
 *
 * Errors: actions return int, 0 on success, negative on failure: -errno for system failures,
 * ZP_E* codes (below) for project failures. zp_err_set() records a human-readable detail
 * ("witness.wtns: section 2 is 96 bytes, 13 values of 32 bytes need 416") in a thread-local
 * buffer that zp_err_msg() returns; callers print it next to zp_strerror(code).
 * Logging: zp_log() checks the level before formatting; each line carries role and pid.
 * Timing: zp_now_ns() is CLOCK_MONOTONIC in nanoseconds.
 * Pool: a fixed set of pthreads that run one function on every thread (SPMD style); the
 * calling thread takes part as thread 0. A NULL pool means "run on the caller only".
 * Tests: tests/test_util.c */
#ifndef ZP_UTIL_H
#define ZP_UTIL_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZP_ERRNO_MAP(X)                                                   \
    X(EFORMAT, 1000, "malformed or corrupt input")                        \
    X(ECURVE, 1001, "curve not supported")                                \
    X(EMISMATCH, 1002, "inputs do not belong together")                   \
    X(EVERIFY, 1003, "proof does not verify")                             \
    X(EUNSAT, 1004, "witness does not satisfy the circuit")               \
    X(ESTALE, 1005, "stale slot generation")                              \
    X(EPROTO, 1006, "protocol error")                                     \
    X(EDEVICE, 1007, "device (CUDA) error")                               \
    X(ENODEV, 1008, "no usable device")                                   \
    X(ETOOBIG, 1009, "input larger than configured limits")               \
    X(ESTATE, 1010, "operation not valid in the current state")           \
    X(ETIMEDOUT, 1011, "timed out")                                       \
    X(ECANCELED, 1012, "canceled")                                        \
    X(EVERSION, 1013, "unsupported version")

enum {
#define ZP_ERR_ENUM(name, num, msg) ZP_##name = -(num),
    ZP_ERRNO_MAP(ZP_ERR_ENUM)
#undef ZP_ERR_ENUM
};

const char *zp_strerror(int err);                       /* ZP_E* or -errno */
int zp_err_set(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* returns err */
const char *zp_err_msg(void);                           /* detail of the last zp_err_set on this thread, "" if none */
void zp_err_clear(void);

enum { ZP_LOG_ERROR = 0, ZP_LOG_WARN = 1, ZP_LOG_INFO = 2, ZP_LOG_DEBUG = 3 };
extern int zp_log_level;                                /* process-wide; default ZP_LOG_INFO (env ZP_LOG=debug|info|warn|error) */
void zp_log_init(const char *role);                     /* role printed on each line; reads ZP_LOG */
void zp_log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Each line: ISO-8601 UTC time, role[pid], level, text, the job/partition this thread works on:
 *   2026-12-01T10:22:33.123Z synth[4242] info: message [job=5 part=2]
 * or with ZP_LOG_FORMAT=json (`zkpipe --log-format json ...`), one JSON object per line:
 *   {"time":"...Z","level":"info","role":"synth","pid":4242,"job":5,"part":2,"msg":"message"} */
extern bool zp_log_json;
void zp_log_ctx(uint64_t job, int64_t part);            /* this thread's job/partition; (0, -1): none */
void zp_log_ctx_get(uint64_t *job, int64_t *part);      /* this thread's, as zp_log_ctx set them */
size_t zp_log_format(char *line, size_t cap, int level, const char *msg);  /* one line with '\n'; its length */
#define zp_log(level, ...) do { if ((level) <= zp_log_level) zp_log_write((level), __VA_ARGS__); } while (0)

uint64_t zp_now_ns(void);                               /* CLOCK_MONOTONIC */
/* a poll's next step: 1/div of the time waited so far (now - since; 0 if since is later),
 * clamped to [lo_ns, hi_ns] (div >= 1) */
uint64_t zp_poll_step_ns(uint64_t since, uint64_t now, unsigned div, uint64_t lo_ns, uint64_t hi_ns);
uint64_t zp_wall_us(void);                              /* CLOCK_REALTIME, microseconds since the epoch */
uint64_t zp_cpu_ns(void);                               /* CLOCK_PROCESS_CPUTIME_ID: every thread's CPU time */

/* Phase trace (issue 31: where a proof's time goes). Off until zp_trace_start; then each
 * zp_trace_mark(name) records the end of phase `name`: wall (CLOCK_MONOTONIC) and process CPU
 * time at the mark, so a phase runs from the previous mark (or the start) to its own. Marks
 * come from the thread that runs the proof's phases one after another (the pool's workers
 * never mark); at most ZP_TRACE_MAX are kept, later ones are counted in *dropped. `name` must
 * outlive the trace (a string literal). Off: one load and branch per mark. */
enum { ZP_TRACE_MAX = 64 };
typedef struct { const char *name; uint64_t wall_ns, cpu_ns; } zp_trace_mark_t;
void zp_trace_start(void);                               /* clears and turns the trace on */
void zp_trace_stop(void);
bool zp_trace_on(void);
void zp_trace_mark(const char *name);
/* the start (t0: wall and CPU at zp_trace_start) and the marks so far; returns their count */
size_t zp_trace_get(zp_trace_mark_t *t0, zp_trace_mark_t *marks, size_t cap, size_t *dropped);

typedef struct zp_pool zp_pool_t;
zp_pool_t *zp_pool_new(unsigned nthreads);              /* nthreads >= 1 (caller included); 0 = the CPUs this process may run on */
void zp_pool_destroy(zp_pool_t **pp);
unsigned zp_pool_size(const zp_pool_t *p);              /* 1 for NULL */
/* Run fn(arg, tid, n) on all n threads of the pool (tid 0 = caller) and wait for all.
 * Not reentrant: fn must not call zp_pool_run on the same pool. */
void zp_pool_run(zp_pool_t *p, void (*fn)(void *arg, unsigned tid, unsigned n), void *arg);
/* Split [0, total) into n near-equal parts; part tid is [*lo, *hi). */
void zp_split(size_t total, unsigned tid, unsigned n, size_t *lo, size_t *hi);
/* The smallest i in [0, n) with bad(arg, i) true, checked on the pool (each thread scans its
 * zp_split range up to its first hit); n when there is none. Same answer for any pool size. */
size_t zp_pool_first(zp_pool_t *p, size_t n, bool (*bad)(const void *arg, size_t i), const void *arg);
/* A runner (pool.c): one thread that runs calls one after another while their callers sleep or
 * go on, as a GPU stream runs what was queued on it (issue 10: the CPU backend's compute off the
 * GPU worker's work thread, so that thread is asleep, not pre-empted, when a compute ends; and a
 * compute posted behind the running one starts the moment it ends, with nobody to wake). The
 * thread is named `name` (<= 15 chars) and runs at the normal policy and slice (zp_rt_leave), or
 * with `tier` in the process's control-thread tier (zp_rt_enter before a call, once zp_rt_setup
 * has set one up: for a compute that stands in for a device, which a control thread must not
 * wait to start on). zp_runner_post: queue c (the caller's storage, untouched by the caller until
 * zp_runner_wait returned); c->fn(c->arg) runs after every call posted before it, with the
 * poster's log context; then c->done(c->done_arg) (may be NULL) on the runner's thread, after c
 * finished (c may be gone by then). zp_runner_wait: until c finished; fn's value, with its
 * zp_err message copied to the caller; c->t_run / c->t_done: CLOCK_MONOTONIC ns when the thread
 * began fn and when fn returned. zp_runner_cancel: take c back if it has not begun (true: it
 * never runs, no done call, no wait); false: it has begun or ended (wait for it). zp_runner_call: post and wait (*t_run / *t_done may be NULL).
 * zp_runner_destroy runs what was posted, then ends the thread. NULL from zp_runner_new: no
 * thread. */
typedef struct zp_runner zp_runner_t;
typedef struct zp_run {
    int (*fn)(void *arg);
    void *arg;
    void (*done)(void *arg);
    void *done_arg;
    int rc;                     /* after zp_runner_wait: fn's value and its span */
    uint64_t t_run, t_done;
    /* the runner's */
    struct zp_run *next_;
    uint64_t job_;
    int64_t part_;
    bool finished_;
    char err_[512];
} zp_run_t;
zp_runner_t *zp_runner_new(const char *name, bool tier);
void zp_runner_destroy(zp_runner_t **rp);
void zp_runner_post(zp_runner_t *r, zp_run_t *c);
int zp_runner_wait(zp_runner_t *r, zp_run_t *c);
bool zp_runner_cancel(zp_runner_t *r, zp_run_t *c);
int zp_runner_call(zp_runner_t *r, int (*fn)(void *arg), void *arg, uint64_t *t_run, uint64_t *t_done);
/* In a done callback: true when another call was already queued behind the one that ended (the
 * runner goes on with it next), so that the callback may skip waking anyone: a wake-up there
 * can take the runner off its core between the two calls (the waiter then polls). Else false. */
bool zp_runner_next_queued(void);
/* A call's fn is running on r now (false for NULL); zp_runner_begun: how many calls' fn began so
 * far (0 for NULL), so that a poller also sees a call that began and ended between two looks.
 * For pollers: the runner updates both with plain atomics, no system call, so that a poller
 * costs the running call nothing. */
bool zp_runner_busy(zp_runner_t *r);
uint64_t zp_runner_begun(zp_runner_t *r);

/* A growing text buffer: printf appends; on allocation failure it stops growing and
 * zp_sbuf_take returns NULL. zp_sbuf_take hands the NUL-terminated text to the caller
 * ("" when nothing was written). */
typedef struct { char *p; size_t n, cap; bool oom; } zp_sbuf_t;
void zp_sbuf_printf(zp_sbuf_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *zp_sbuf_take(zp_sbuf_t *s);

/* Large working memory: 64-byte aligned; from 2 MiB up 2 MiB aligned with a transparent-huge-
 * page hint (madvise MADV_HUGEPAGE), so that first touches fault 2 MiB at a time. Measured on
 * a 2-core VM (session 17): 4 KiB faults cost ~10 us each there (64 MiB touched: 173 ms with
 * 4 KiB pages, 4 ms with huge ones); a 2^18 proof took 34,000 faults. Freed with free().
 * NULL on failure (errno ENOMEM) or len 0 -> 64 bytes. */
void *zp_alloc_big(size_t len);
/* the hint alone, for memory mapped elsewhere: the 2 MiB-aligned part of [p, p + len) */
void zp_advise_huge(void *p, size_t len);

/* Fill buf with len bytes from the OS's random source (getrandom). */
int zp_random_bytes(void *buf, size_t len);

/* A local process's state letter and start time (clock ticks after boot), from /proc/PID/stat:
 * what tells a process from a later one that got the same pid. 0; -ENOENT: no such process;
 * other negative: unreadable or malformed (zp_err names the file). */
int zp_proc_stat(uint32_t pid, char *state, uint64_t *start);
/* A per-user cache directory: $env if set, else $XDG_CACHE_HOME/zkpipe/<sub>, else
 * ~/.cache/zkpipe/<sub>, else /tmp/zkpipe-<sub>-<euid>. ZP_ETOOBIG if it does not fit. */
int zp_user_cache_dir(char *dir, size_t cap, const char *env, const char *sub);
/* mkdir -p dir (0700 for what is created); dir itself must be a directory owned by this euid
 * and writable by nobody else (what is kept there is trusted later). what names it in errors. */
int zp_private_dir_ready(const char *dir, const char *what);
/* Scheduling of a process's latency-critical threads (rt.c): zp_rt_setup(prio, slice_us) once
 * (prio 1..99: SCHED_FIFO at prio for the threads that enter, 0: not; slice_us: otherwise, or
 * when FIFO is refused, SCHED_OTHER with that EEVDF slice, 100..100000 us, 0: not);
 * zp_rt_enter() on each such thread (false: neither, or refused, the first refusal logged with
 * the fix); zp_rt_pause() / zp_rt_resume() around O(n) host work on such a thread (nests; no-ops
 * on other threads); zp_rt_active(): the calling thread runs at the policy now; zp_rt_leave():
 * back to the normal policy and slice (also a thread that inherited them from its creator);
 * zp_rt_adopt_threads(prefix): from an active thread in the short-slice tier, give the slice to
 * this process's threads whose name starts with prefix (libzmq's), the number adopted. */
enum { ZP_RT_SLICE_MIN_US = 100, ZP_RT_SLICE_MAX_US = 100000 };   /* the kernel's sched_runtime range */
/* a --rt-slice value the tier takes as given: 0 (off) or MIN..MAX (the parsers refuse others) */
static inline bool zp_rt_slice_ok(long us) { return us == 0 || (us >= ZP_RT_SLICE_MIN_US && us <= ZP_RT_SLICE_MAX_US); }
void zp_rt_setup(int prio, unsigned slice_us);
int zp_rt_priority(void);
unsigned zp_rt_slice_us(void);
bool zp_rt_enter(void);
bool zp_rt_active(void);
void zp_rt_pause(void);
void zp_rt_resume(void);
void zp_rt_leave(void);
/* the calling thread at SCHED_BATCH while on (its wake-ups do not pre-empt the running thread),
 * back to its policy and slice when off; a no-op under FIFO and when already so (rt.c) */
void zp_rt_wake_quiet(bool on);
int zp_rt_adopt_threads(const char *comm_prefix);
#endif
