/* test_util.c - errors, pool, runner, split, /proc stat, real-time control threads. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sched.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); exit(1); } } while (0)

static void add_tid(void *arg, unsigned tid, unsigned n)
{
    unsigned long *sum = arg;
    __atomic_fetch_add(sum, tid + 1, __ATOMIC_RELAXED);
    (void)n;
}

static bool is_marked(const void *arg, size_t i) { return ((const unsigned char *)arg)[i] != 0; }

/* zp_pool_first: the smallest marked index whatever the pool size, n when none */
static void test_pool_first(void)
{
    enum { N = 1000 };
    static unsigned char mark[N];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (unsigned nt = 1; nt <= 5; nt++) {
        zp_pool_t *p = zp_pool_new(nt);
        CHECK(p);
        for (unsigned round = 0; round < 200; round++) {
            memset(mark, 0, sizeof mark);
            unsigned k = round % 5;   /* 0..4 marks, anywhere */
            size_t want = N;
            for (unsigned m = 0; m < k; m++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                size_t i = (size_t)(x % N);
                mark[i] = 1;
                if (i < want) want = i;
            }
            CHECK(zp_pool_first(p, N, is_marked, mark) == want);
        }
        mark[N - 1] = 1;
        CHECK(zp_pool_first(p, 0, is_marked, mark) == 0);   /* empty range */
        zp_pool_destroy(&p);
    }
    CHECK(zp_pool_first(NULL, 3, is_marked, (const unsigned char[]){0, 1, 1}) == 1);
}

/* zp_proc_stat: a child whose command name holds ") S 1 (" parses to its real state and start
 * time (not fooled by the name); a zombie reads Z; a reaped pid is -ENOENT */
static void test_proc_stat(void)
{
    char st, st2;
    uint64_t me, t, t2;
    CHECK(zp_proc_stat((uint32_t)getpid(), &st, &me) == 0 && st == 'R' && me > 0);
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t c = fork();
    if (c == 0) {
        prctl(PR_SET_NAME, "x) Z 1 (9 9");
        char ch;
        close(go[1]);
        (void)!read(go[0], &ch, 1);   /* until the parent closes its end */
        _exit(0);
    }
    CHECK(c > 0);
    close(go[0]);
    for (int i = 0; i < 2000; i++) {   /* until the child has renamed itself and sleeps in read */
        char path[64], comm[32] = "";
        snprintf(path, sizeof path, "/proc/%d/comm", (int)c);
        FILE *f = fopen(path, "r");
        if (f) { if (!fgets(comm, sizeof comm, f)) comm[0] = 0; fclose(f); }
        if (!strncmp(comm, "x) Z 1 (9 9", 11) && zp_proc_stat((uint32_t)c, &st, &t) == 0 && st == 'S') break;
        usleep(1000);
    }
    CHECK(zp_proc_stat((uint32_t)c, &st, &t) == 0 && st == 'S' && t >= me);
    close(go[1]);
    siginfo_t si;
    while (waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    CHECK(zp_proc_stat((uint32_t)c, &st2, &t2) == 0 && st2 == 'Z' && t2 == t);
    CHECK(waitpid(c, NULL, 0) == c);
    CHECK(zp_proc_stat((uint32_t)c, &st2, &t2) == -ENOENT);
}

/* the kernel's struct sched_attr (linux/sched/types.h clashes with glibc's) */
struct test_sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t prio;
    uint64_t runtime, deadline, period;
    uint32_t umin, umax;
};

/* thread tid's (0: the caller's) scheduling slice in ns: sched_getattr's runtime (0 on kernels
 * without custom slices) */
static uint64_t slice_ns(pid_t tid)
{
    struct test_sched_attr a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, tid, &a, sizeof a, 0) != 0) return UINT64_MAX;
    return a.runtime;
}

static void record_slice(void *arg, unsigned tid, unsigned n)
{
    uint64_t *sl = arg;
    if (tid < n && tid < 4) sl[tid] = slice_ns(0);
}

struct named_arg { const char *name; int fd; pid_t *tid; };

static void *named_thread(void *arg)   /* names itself, says its tid, sleeps until fd closes */
{
    struct named_arg *a = arg;
    char ch;
    prctl(PR_SET_NAME, a->name);
    __atomic_store_n(a->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    (void)!read(a->fd, &ch, 1);
    return NULL;
}

static void record_policy(void *arg, unsigned tid, unsigned n)
{
    int *pol = arg;
    if (tid < n && tid < 4) pol[tid] = sched_getscheduler(0);
}

/* the permitted path, in a child (the policy is per thread; nothing leaks into this process):
 * enter -> FIFO at the priority; pause/resume nest; a pool made by a real-time thread runs its
 * threads at the normal policy; leave -> normal. Exit 0 pass, 1 fail, 77 not permitted here. */
static int rt_permitted_child(void)
{
    struct sched_param sp;
    zp_rt_setup(3, 0);
    if (!zp_rt_enter()) return 77;
    if (sched_getscheduler(0) != SCHED_FIFO || sched_getparam(0, &sp) != 0 || sp.sched_priority != 3) return 1;
    if (!zp_rt_active()) return 1;
    zp_rt_pause();
    if (sched_getscheduler(0) != SCHED_OTHER || zp_rt_active()) return 1;
    zp_rt_pause();   /* nested: one resume does not end the outer pause */
    zp_rt_resume();
    if (sched_getscheduler(0) != SCHED_OTHER) return 1;
    zp_rt_resume();
    if (sched_getscheduler(0) != SCHED_FIFO || !zp_rt_active()) return 1;
    zp_rt_resume();  /* unbalanced: ignored */
    if (sched_getscheduler(0) != SCHED_FIFO) return 1;
    zp_rt_wake_quiet(true);    /* FIFO: not needed, not done */
    if (sched_getscheduler(0) != SCHED_FIFO) return 1;
    zp_rt_wake_quiet(false);
    int pol[4] = {-1, -1, -1, -1};
    zp_pool_t *p = zp_pool_new(3);
    if (!p) return 1;
    zp_pool_run(p, record_policy, pol);
    zp_pool_destroy(&p);
    if (pol[0] != SCHED_FIFO || pol[1] != SCHED_OTHER || pol[2] != SCHED_OTHER) return 1;
    zp_rt_leave();
    if (sched_getscheduler(0) != SCHED_OTHER || zp_rt_active()) return 1;
    zp_rt_pause();   /* not a real-time thread any more: no-ops */
    zp_rt_resume();
    return sched_getscheduler(0) == SCHED_OTHER ? 0 : 1;
}

/* the refused path, in a child without the right (no RLIMIT_RTPRIO; root drops to nobody):
 * enter is false, the policy stays normal, one log line names the priority and the fix, the
 * setting turns itself off (a second enter neither tries nor logs) */
static int rt_refused_child(const char *logpath)
{
    FILE *f = freopen(logpath, "w", stderr);   /* before dropping to nobody: the file is ours */
    if (!f) return 1;
    struct rlimit rl = {0, 0};
    if (setrlimit(RLIMIT_RTPRIO, &rl) != 0) return 1;
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return 77;
    zp_log_init("rt-test");
    zp_rt_setup(5, 0);
    if (zp_rt_priority() != 5) return 1;
    if (zp_rt_enter() || zp_rt_active() || sched_getscheduler(0) != SCHED_OTHER || zp_rt_priority() != 0) return 1;
    if (zp_rt_enter()) return 1;
    zp_rt_pause();   /* not entered: no-ops */
    zp_rt_resume();
    /* refused with a short slice configured: the slice tier instead (logged as such) */
    zp_rt_setup(6, 250);
    if (!zp_rt_enter() || sched_getscheduler(0) != SCHED_OTHER || zp_rt_priority() != 0 || !zp_rt_active()) return 1;
    if (slice_ns(0) != 0 && slice_ns(0) != 250000) return 1;   /* 0: a kernel without custom slices */
    fflush(stderr);
    return sched_getscheduler(0) == SCHED_OTHER ? 0 : 1;
}

/* the short-slice tier, unprivileged (root drops to nobody), niced: enter sets the slice and
 * keeps the nice value; pause/resume nest; a pool's threads and leave get the kernel's default;
 * adopt gives the slice to the named threads only. 77: a kernel without custom slices. */
static int rt_slice_child(void)
{
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return 1;
    /* a nice value of at least 3, kept through every change below (the suite may already run
     * under `nice`, and an unprivileged process cannot lower it) */
    errno = 0;
    int nv = getpriority(PRIO_PROCESS, 0);
    if (errno) return 1;
    if (nv < 3) nv = 3;
    if (setpriority(PRIO_PROCESS, 0, nv) != 0) return 1;
    uint64_t dflt = slice_ns(0);
    zp_rt_setup(0, 100);
    if (zp_rt_priority() != 0 || zp_rt_slice_us() != 100 || !zp_rt_enter() || !zp_rt_active()) return 1;
    if (slice_ns(0) != 100000) return dflt == 0 ? 77 : 1;
    if (getpriority(PRIO_PROCESS, 0) != nv || sched_getscheduler(0) != SCHED_OTHER) return 1;
    zp_rt_pause();
    zp_rt_pause();
    zp_rt_resume();
    if (slice_ns(0) != dflt || zp_rt_active()) return 1;
    zp_rt_resume();
    if (slice_ns(0) != 100000 || getpriority(PRIO_PROCESS, 0) != nv) return 1;
    zp_rt_wake_quiet(true);   /* SCHED_BATCH with the nice value kept, then back to the slice */
    if (sched_getscheduler(0) != SCHED_BATCH || getpriority(PRIO_PROCESS, 0) != nv) return 1;
    zp_rt_wake_quiet(true);
    zp_rt_wake_quiet(false);
    if (sched_getscheduler(0) != SCHED_OTHER || slice_ns(0) != 100000 || getpriority(PRIO_PROCESS, 0) != nv) return 1;
    zp_rt_wake_quiet(true);
    zp_rt_pause();             /* the normal policy: no longer quiet */
    if (sched_getscheduler(0) != SCHED_OTHER || slice_ns(0) != dflt) return 1;
    zp_rt_wake_quiet(false);   /* nothing to undo: still paused */
    if (sched_getscheduler(0) != SCHED_OTHER || slice_ns(0) != dflt) return 1;
    zp_rt_resume();
    if (slice_ns(0) != 100000) return 1;
    uint64_t pool_slice[4] = {0, 0, 0, 0};
    zp_pool_t *p = zp_pool_new(3);
    if (!p) return 1;
    zp_pool_run(p, record_slice, pool_slice);
    zp_pool_destroy(&p);
    if (pool_slice[0] != 100000 || pool_slice[1] != dflt || pool_slice[2] != dflt) return 1;
    pthread_t named[2];
    pid_t tids[2] = {0, 0};
    int go[2];
    if (pipe(go) != 0) return 1;
    struct named_arg na[2] = {{"ZMQbg/IO/0", go[0], &tids[0]}, {"other", go[0], &tids[1]}};
    zp_rt_pause();   /* created at the default slice (a thread inherits its creator's) */
    for (int i = 0; i < 2; i++)
        if (pthread_create(&named[i], NULL, named_thread, &na[i]) != 0) return 1;
    for (int i = 0; i < 2000 && (!__atomic_load_n(&tids[0], __ATOMIC_ACQUIRE) || !__atomic_load_n(&tids[1], __ATOMIC_ACQUIRE)); i++)
        usleep(1000);
    zp_rt_resume();
    int adopted = zp_rt_adopt_threads("ZMQbg");
    bool ok = adopted == 1 && slice_ns(tids[0]) == 100000 && slice_ns(tids[1]) == dflt;
    close(go[1]);
    for (int i = 0; i < 2; i++) pthread_join(named[i], NULL);
    if (!ok) return 1;
    zp_rt_leave();
    if (slice_ns(0) != dflt || zp_rt_active() || zp_rt_adopt_threads("ZMQbg") != 0) return 1;
    zp_rt_wake_quiet(true);    /* outside the tier too: batch, then the kernel's default */
    if (sched_getscheduler(0) != SCHED_BATCH) return 1;
    zp_rt_wake_quiet(false);
    if (sched_getscheduler(0) != SCHED_OTHER || slice_ns(0) != dflt) return 1;
    return getpriority(PRIO_PROCESS, 0) == nv ? 0 : 1;
}

static void test_rt(void)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) _exit(rt_permitted_child());
    int st;
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st));
    bool root = getuid() == 0;
    if (root) CHECK(WEXITSTATUS(st) == 0);   /* root may always: the path must have been run */
    else CHECK(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77);
    char logpath[] = "/tmp/zp-test-rt-XXXXXX";
    int fd = mkstemp(logpath);
    CHECK(fd >= 0);
    close(fd);
    if ((c = fork()) == 0) _exit(rt_refused_child(logpath));
    CHECK(c >= 0 && waitpid(c, &st, 0) == c && WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0 || (!root && WEXITSTATUS(st) == 77));
    if (WEXITSTATUS(st) == 0) {
        char buf[2048] = "";
        FILE *f = fopen(logpath, "r");
        CHECK(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *a = strstr(buf, "real-time priority 5 refused");
        CHECK(a && strstr(a, "RLIMIT_RTPRIO >= 5") && strstr(a, "run at the normal policy;"));
        CHECK(!strstr(a + 1, "real-time priority 5 refused"));   /* logged once */
        CHECK(strstr(buf, "real-time priority 6 refused") && strstr(buf, "the normal policy with a 250 us slice"));
    }
    unlink(logpath);
    if ((c = fork()) == 0) _exit(rt_slice_child());
    CHECK(c >= 0 && waitpid(c, &st, 0) == c && WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77);
    if (WEXITSTATUS(st) == 77) fprintf(stderr, "rt: this kernel has no custom scheduling slices (Linux < 6.12)\n");
}

/* the runner: the call runs on its own (named) thread with the caller's log context, the caller
 * sleeps meanwhile, rc / error / span come back, a pool's thread 0 may be the runner */
typedef struct {
    pid_t tid;
    uint64_t job, cpu_ns, t_in;
    int64_t part;
    unsigned calls;
    zp_pool_t *pool;
    unsigned long pool_sum;
    char comm[32];
} runner_probe_t;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int runner_probe(void *arg)
{
    runner_probe_t *p = arg;
    p->t_in = zp_now_ns();
    p->tid = (pid_t)syscall(SYS_gettid);
    zp_log_ctx_get(&p->job, &p->part);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)p->tid);
    FILE *f = fopen(path, "r");
    if (f) { if (!fgets(p->comm, sizeof p->comm, f)) p->comm[0] = 0; fclose(f); }
    uint64_t c0 = thread_cpu_ns();
    volatile uint64_t x = 0;
    while (thread_cpu_ns() - c0 < 40000000u) x = x + 1;   /* 40 ms of this thread's CPU */
    p->cpu_ns = thread_cpu_ns() - c0;
    if (p->pool) zp_pool_run(p->pool, add_tid, &p->pool_sum);
    p->calls++;
    return zp_err_set(-EIO, "probe call %u failed on purpose", p->calls);
}

static int runner_count(void *arg) { return (int)++*(unsigned *)arg; }

/* a posted call: takes the next sequence number, after its gate opened and spin_ms of wall time */
typedef struct {
    unsigned *seq, *slot, *dones;
    int *gate;                  /* non-NULL: wait until *gate is set first */
    unsigned spin_ms, spun_ms;
    uint64_t job;
    int64_t part;
    bool ran, done_after, started, next_queued;
} posted_t;
static zp_run_t c_[3];

static int posted_fn(void *v)
{
    posted_t *q = v;
    __atomic_store_n(&q->started, true, __ATOMIC_RELEASE);
    while (q->gate && !__atomic_load_n(q->gate, __ATOMIC_ACQUIRE)) sched_yield();
    uint64_t t0 = zp_now_ns();
    while (zp_now_ns() - t0 < (uint64_t)q->spin_ms * 1000000u) { /* spin */ }
    q->spun_ms = (unsigned)((zp_now_ns() - t0) / 1000000u);
    zp_log_ctx_get(&q->job, &q->part);
    q->ran = true;
    return (int)(*q->slot = ++*q->seq);
}

static void posted_done(void *v)
{
    posted_t *q = v;
    q->done_after = q->ran;
    q->next_queued = zp_runner_next_queued();
    ++*q->dones;
}

static void test_runner(void)
{
    zp_runner_t *r = zp_runner_new("zp-test-run", false);
    CHECK(r);
    runner_probe_t p = {.pool = zp_pool_new(2)};
    CHECK(p.pool);
    zp_log_ctx(77, 5);
    zp_err_set(-ENOENT, "stale");
    uint64_t before = zp_now_ns(), c0 = thread_cpu_ns(), t_run = 0, t_done = 0;
    int rc = zp_runner_call(r, runner_probe, &p, &t_run, &t_done);
    uint64_t caller_cpu = thread_cpu_ns() - c0, after = zp_now_ns();
    CHECK(rc == -EIO && strcmp(zp_err_msg(), "probe call 1 failed on purpose") == 0);
    CHECK(p.tid != (pid_t)syscall(SYS_gettid) && strcmp(p.comm, "zp-test-run\n") == 0);
    CHECK(p.job == 77 && p.part == 5);
    CHECK(before <= t_run && t_run <= p.t_in && p.t_in < t_done && t_done <= after);
    CHECK(p.cpu_ns >= 40000000u && caller_cpu * 4 < p.cpu_ns);   /* the caller slept through it */
    CHECK(p.pool_sum == 3);   /* the pool ran with the runner as its thread 0 (tids 0 and 1, +1 each) */
    zp_log_ctx(0, -1);
    p.pool_sum = 0;
    CHECK(zp_runner_call(r, runner_probe, &p, NULL, NULL) == -EIO && p.part == -1 && p.pool_sum == 3);
    unsigned n = 0;
    for (unsigned i = 1; i <= 2000; i++) CHECK(zp_runner_call(r, runner_count, &n, NULL, NULL) == (int)i);
    CHECK(zp_err_msg()[0] == 0);   /* a call that set no message clears the caller's */
    zp_pool_destroy(&p.pool);
    /* posted calls: in order, one after another, each done callback after its call; the
     * second starts after the first ended with no wait on the poster (it never woke) */
    unsigned seq = 0, order[3] = {0}, dones = 0;
    posted_t q[3];
    for (unsigned i = 0; i < 3; i++) {
        q[i] = (posted_t){.seq = &seq, .slot = &order[i], .spin_ms = i == 0 ? 30 : 0, .dones = &dones};
        c_[i] = (zp_run_t){.fn = posted_fn, .arg = &q[i], .done = posted_done, .done_arg = &q[i]};
    }
    zp_log_ctx(9, 3);
    for (unsigned i = 0; i < 3; i++) zp_runner_post(r, &c_[i]);
    zp_log_ctx(0, -1);
    CHECK(zp_runner_wait(r, &c_[2]) == 3 && zp_err_msg()[0] == 0);
    CHECK(zp_runner_wait(r, &c_[0]) == 1 && zp_runner_wait(r, &c_[1]) == 2);
    CHECK(order[0] == 1 && order[1] == 2 && order[2] == 3 && q[1].job == 9 && q[1].part == 3);
    CHECK(c_[0].t_run < c_[0].t_done && c_[0].t_done <= c_[1].t_run && c_[1].t_done <= c_[2].t_run);
    CHECK(q[0].spun_ms >= 30);   /* the first really ran 30 ms before the second began */
    zp_runner_destroy(&r);   /* joins the thread: every done callback has run */
    CHECK(dones == 3 && q[0].done_after && q[1].done_after && q[2].done_after);
    CHECK(q[0].next_queued && q[1].next_queued && !q[2].next_queued && !zp_runner_next_queued());
    CHECK(r == NULL);
    zp_runner_destroy(&r);   /* NULL: a no-op */
    /* cancel: a call that has not begun is taken back (never runs, no done call); one that has
     * begun is not */
    r = zp_runner_new("zp-test-run", false);
    CHECK(r);
    seq = dones = 0;
    int gate = 0;
    q[0] = (posted_t){.seq = &seq, .slot = &order[0], .gate = &gate, .dones = &dones};
    q[1] = (posted_t){.seq = &seq, .slot = &order[1], .dones = &dones};
    for (unsigned i = 0; i < 2; i++)
        c_[i] = (zp_run_t){.fn = posted_fn, .arg = &q[i], .done = posted_done, .done_arg = &q[i]};
    CHECK(!zp_runner_busy(r) && !zp_runner_busy(NULL));   /* busy: a call's fn is running */
    CHECK(zp_runner_begun(r) == 0 && zp_runner_begun(NULL) == 0);
    zp_runner_post(r, &c_[0]);
    zp_runner_post(r, &c_[1]);
    CHECK(zp_runner_cancel(r, &c_[1]));    /* behind a call held at its gate: not begun */
    CHECK(!zp_runner_cancel(r, &c_[1]));   /* not queued any more */
    while (!__atomic_load_n(&q[0].started, __ATOMIC_ACQUIRE)) sched_yield();
    CHECK(!zp_runner_cancel(r, &c_[0]));   /* begun */
    CHECK(zp_runner_busy(r) && zp_runner_begun(r) == 1);   /* held at its gate, inside fn */
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    CHECK(zp_runner_wait(r, &c_[0]) == 1);
    CHECK(!zp_runner_busy(r) && zp_runner_begun(r) == 1);   /* fn returned before the call finished */
    zp_runner_destroy(&r);
    CHECK(!q[1].ran && dones == 1 && seq == 1);
    /* destroy runs what was posted first */
    r = zp_runner_new("zp-test-run", false);
    CHECK(r);
    seq = dones = 0;
    q[0] = (posted_t){.seq = &seq, .slot = &order[0], .spin_ms = 5, .dones = &dones};
    c_[0] = (zp_run_t){.fn = posted_fn, .arg = &q[0], .done = posted_done, .done_arg = &q[0]};
    zp_runner_post(r, &c_[0]);
    zp_runner_destroy(&r);
    CHECK(dones == 1 && seq == 1);
}

int main(void)
{
    test_pool_first();
    test_runner();
    test_proc_stat();
    test_rt();
    /* a poll's step: 1/div of the wait so far, clamped; a clock behind `since` gives the floor */
    CHECK(zp_poll_step_ns(1000, 1000, 8, 50, 500) == 50 && zp_poll_step_ns(2000, 1000, 8, 50, 500) == 50);
    CHECK(zp_poll_step_ns(1000, 3400, 8, 50, 500) == 300 && zp_poll_step_ns(0, 80000, 8, 50, 500) == 500);
    CHECK(zp_poll_step_ns(0, 700, 0, 1, 1000) == 700);
    CHECK(strcmp(zp_strerror(ZP_EFORMAT), "malformed or corrupt input") == 0);
    CHECK(strcmp(zp_strerror(-2), "No such file or directory") == 0);
    CHECK(zp_err_set(ZP_EUNSAT, "constraint %d", 7) == ZP_EUNSAT);
    CHECK(strcmp(zp_err_msg(), "constraint 7") == 0);
    for (unsigned nt = 1; nt <= 5; nt++) {
        zp_pool_t *p = zp_pool_new(nt);
        CHECK(p && zp_pool_size(p) == nt);
        for (int rep = 0; rep < 200; rep++) {
            unsigned long sum = 0;
            zp_pool_run(p, add_tid, &sum);
            CHECK(sum == (unsigned long)nt * (nt + 1) / 2);
        }
        zp_pool_destroy(&p);
        CHECK(p == NULL);
    }
    for (unsigned n = 1; n < 7; n++)
        for (size_t total = 0; total < 50; total++) {
            size_t prev = 0;
            for (unsigned t = 0; t < n; t++) {
                size_t lo, hi;
                zp_split(total, t, n, &lo, &hi);
                CHECK(lo == prev && hi >= lo);
                prev = hi;
            }
            CHECK(prev == total);
        }
    unsigned char b[64] = {0};
    CHECK(zp_random_bytes(b, sizeof b) == 0);
    /* log lines: ISO-8601 time, level, role[pid], job/partition context; JSON on request */
    {
        char line[512];
        zp_log_init("tester");
        zp_log_json = false;
        size_t n = zp_log_format(line, sizeof line, ZP_LOG_WARN, "plain");
        CHECK(n > 30 && line[n - 1] == '\n' && line[4] == '-' && line[7] == '-' && line[10] == 'T' && line[23] == 'Z');
        char pidtag[40];
        snprintf(pidtag, sizeof pidtag, " tester[%d] warn: plain\n", (int)getpid());
        CHECK(strstr(line, pidtag) == line + 24);
        zp_log_ctx(42, 3);
        zp_log_format(line, sizeof line, ZP_LOG_INFO, "in a task");
        CHECK(strstr(line, "] info: in a task [job=42 part=3]\n") != NULL);
        zp_log_json = true;
        n = zp_log_format(line, sizeof line, ZP_LOG_ERROR, "say \"hi\"\n\\");
        CHECK(line[0] == '{' && line[n - 1] == '\n' && line[n - 2] == '}');
        CHECK(strstr(line, "\"level\":\"error\",\"role\":\"tester\"") && strstr(line, ",\"job\":42,\"part\":3,"));
        CHECK(strstr(line, "\"msg\":\"say \\\"hi\\\"\\u000a\\\\\"}") != NULL);
        zp_log_ctx(0, -1);
        zp_log_format(line, sizeof line, ZP_LOG_INFO, "x");
        CHECK(!strstr(line, "job"));
        char big[3000];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = 0;
        n = zp_log_format(line, sizeof line, ZP_LOG_INFO, big);   /* truncated, still one JSON line */
        CHECK(n < sizeof line && line[n - 1] == '\n' && line[n - 2] == '}' && line[n - 3] == '"');
        zp_log_json = false;
    }
    {   /* the phase trace (issue 31): off records nothing; on, marks in order with both clocks */
        zp_trace_mark_t t0, m[ZP_TRACE_MAX];
        size_t dropped = 99;
        zp_trace_stop();
        zp_trace_mark("off");
        zp_trace_start();
        CHECK(zp_trace_on() && zp_trace_get(&t0, m, ZP_TRACE_MAX, &dropped) == 0 && dropped == 0);
        volatile uint64_t spin = 0;
        uint64_t until = zp_now_ns() + 2000000;   /* ~2 ms of this thread's CPU */
        while (zp_now_ns() < until) spin++;
        zp_trace_mark("one");
        zp_trace_mark("two");
        CHECK(zp_trace_get(&t0, m, ZP_TRACE_MAX, &dropped) == 2 && dropped == 0);
        CHECK(!strcmp(m[0].name, "one") && !strcmp(m[1].name, "two"));
        CHECK(m[0].wall_ns >= t0.wall_ns + 2000000 && m[1].wall_ns >= m[0].wall_ns);
        CHECK(m[0].cpu_ns > t0.cpu_ns && m[1].cpu_ns >= m[0].cpu_ns);
        CHECK(zp_trace_get(NULL, m, 1, NULL) == 1 && !strcmp(m[0].name, "one"));   /* cap */
        for (int i = 0; i < ZP_TRACE_MAX; i++) zp_trace_mark("many");
        CHECK(zp_trace_get(&t0, m, ZP_TRACE_MAX, &dropped) == ZP_TRACE_MAX && dropped == 2);
        CHECK(!strcmp(m[1].name, "two") && !strcmp(m[ZP_TRACE_MAX - 1].name, "many"));
        zp_trace_stop();
        zp_trace_mark("after");
        CHECK(!zp_trace_on() && zp_trace_get(NULL, m, ZP_TRACE_MAX, &dropped) == ZP_TRACE_MAX && dropped == 2);
        zp_trace_start();                              /* clears */
        CHECK(zp_trace_get(NULL, m, ZP_TRACE_MAX, &dropped) == 0 && dropped == 0);
        zp_trace_stop();
    }
    printf("util: ok\n");
    return 0;
}
