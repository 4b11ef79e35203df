/* rt.c - scheduling for a process's latency-critical threads (issue 10: the GPU worker's control
 * threads). A thread that is asleep nearly always (the loop waiting on the socket, the staging
 * thread on its queue, the work thread on the device) but whose wake-up sits on the path between
 * two device computes must not wait for a core behind the host's other stages. Two tiers:
 *  - short slice (the default, no privilege): SCHED_OTHER with a custom EEVDF slice
 *    (sched_setattr's sched_runtime, Linux >= 6.12; 100 us by default against the kernel's
 *    ~1.4 ms). A woken thread with a shorter slice than the running one preempts it
 *    (PREEMPT_SHORT), so the wake-up is served within ~a slice instead of behind a finalizer
 *    thread's whole slice; the thread's share of the CPU is unchanged (same weight, same nice).
 *    Older kernels accept the call and ignore the slice: nothing changes there.
 *  - SCHED_FIFO at prio (opt-in, --rt-priority: CAP_SYS_NICE or RLIMIT_RTPRIO), the strongest:
 *    the thread runs as soon as it wakes. Refused: one log line with the fix, then the short
 *    slice (when configured) or the normal policy.
 * zp_rt_setup(prio, slice_us) configures the process; zp_rt_enter() makes the calling thread one
 * of the latency-critical threads; zp_rt_pause() / zp_rt_resume() bracket any O(n) host work
 * such a thread does (a key load, the payload checksum, pinning an arena), which runs at the
 * normal policy and slice so that it never hogs a core or preempts the host's other stages.
 * The one exception is the CPU backend's compute: there the work thread (thread 0 of the
 * compute's pool) stands in for the device and keeps the policy for its share (the pool's other
 * threads run at the normal policy; for FIFO the kernel's RT throttling, sched_rt_runtime_us,
 * 95% of a core by default, bounds it). Dropping it for the compute was measured: the switch
 * back reschedules, and the compute then began up to 5 ms late behind a finalizer thread (the
 * gap the policy exists to remove; doc/gpu-hot-path.md).
 * Pause and resume are O(1) (a few system calls each) and nest (a depth counter).
 * zp_rt_wake_quiet(true) / (false) bracket a wait whose wake-up comes from a thread that must not
 * be pre-empted by it: the work thread waiting for a chained compute's end, which the compute
 * thread signals between two computes. A woken thread at the normal policy pre-empts the waker
 * (the more so with the short slice); and once pre-empted, the compute thread (which has used
 * more than its share) waited for a finalizer thread's whole slice: 3.7-6.5 ms at 2^20 on 3 of
 * 9 pairs (measured, doc/gpu-hot-path.md). SCHED_BATCH threads never pre-empt on wake-up (the
 * tick or a free core runs them). (With a compute queued behind, the compute thread now wakes
 * nobody at all and the work thread polls: stage_loop.c quiet_wait; the quiet policy still
 * covers the poll's own wake-ups and a compute with nothing behind it.) Under FIFO it is not
 * needed (the compute thread is FIFO at the same priority) and not done.
 * A thread inherits its creator's policy and slice: zp_pool creates its threads with an explicit
 * normal policy, and they reset the slice when they start (the attributes do not: measured).
 * Threads this code does not create (libzmq's) take the short slice through
 * zp_rt_adopt_threads. Tests: tests/test_util.c (rt), tests/ipc/stage_rt.sh, stage_slice.sh. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* the kernel's struct sched_attr (linux/sched/types.h clashes with glibc's sched_param) */
struct zp_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

static _Atomic int rt_prio;                   /* FIFO priority; 0: not FIFO (off or refused) */
static _Atomic unsigned rt_slice_us;          /* short slice; 0: none (off or refused) */
static _Thread_local int rt_mine;             /* this thread entered */
static _Thread_local int rt_depth;            /* pauses outstanding */
static _Thread_local bool rt_quiet;           /* zp_rt_wake_quiet: at SCHED_BATCH */

/* policy (SCHED_OTHER or SCHED_BATCH) on thread tid (0: the caller) with slice_us (0: the
 * kernel's default), its nice value kept (sched_setattr would otherwise set nice 0, which an
 * unprivileged niced process may not) */
static int set_fair(pid_t tid, unsigned policy, unsigned slice_us)
{
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)(tid ? tid : (pid_t)syscall(SYS_gettid)));
    if (nice == -1 && errno) return errno;
    struct zp_sched_attr a = {.size = sizeof a, .sched_policy = policy, .sched_nice = nice,
                              .sched_runtime = (uint64_t)slice_us * 1000u};
    return syscall(SYS_sched_setattr, tid, &a, 0) == 0 ? 0 : errno;
}

static int set_slice(pid_t tid, unsigned slice_us) { return set_fair(tid, SCHED_OTHER, slice_us); }

/* the calling thread at the configured policy (on) or the normal one (!on) */
static int set_policy(bool on)
{
    rt_quiet = false;   /* either way not SCHED_BATCH after this */
    int prio = on ? atomic_load(&rt_prio) : 0;
    if (prio > 0) {
        struct sched_param sp = {.sched_priority = prio};
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    }
    int pol;
    struct sched_param sp;
    if (pthread_getschedparam(pthread_self(), &pol, &sp) == 0 && pol != SCHED_OTHER) {
        sp.sched_priority = 0;
        (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
    }
    return set_slice(0, on ? atomic_load(&rt_slice_us) : 0);
}

void zp_rt_setup(int prio, unsigned slice_us)
{
    atomic_store(&rt_prio, prio < 0 ? 0 : prio > 99 ? 99 : prio);
    atomic_store(&rt_slice_us, slice_us == 0                    ? 0
                               : slice_us < ZP_RT_SLICE_MIN_US ? ZP_RT_SLICE_MIN_US
                               : slice_us > ZP_RT_SLICE_MAX_US ? ZP_RT_SLICE_MAX_US
                                                               : slice_us);
}

int zp_rt_priority(void) { return atomic_load(&rt_prio); }
unsigned zp_rt_slice_us(void) { return atomic_load(&rt_slice_us); }

bool zp_rt_enter(void)
{
    int prio = atomic_load(&rt_prio);
    if (prio > 0) {
        int rc = set_policy(true);
        if (rc == 0) goto entered;
        int expect = prio;
        if (atomic_compare_exchange_strong(&rt_prio, &expect, 0)) {  /* log once, then the slice */
            unsigned us = atomic_load(&rt_slice_us);
            char also[64] = "the normal policy";
            if (us) snprintf(also, sizeof also, "the normal policy with a %u us slice", us);
            zp_log(ZP_LOG_WARN, "real-time priority %d refused (%s): the control threads run at %s; grant "
                   "CAP_SYS_NICE or an RLIMIT_RTPRIO >= %d (systemd: LimitRTPRIO=%d) to use it",
                   prio, strerror(rc), also, prio, prio);
        }
    }
    unsigned us = atomic_load(&rt_slice_us);
    if (us == 0) return false;
    int rc = set_slice(0, us);
    if (rc != 0) {
        unsigned expect = us;
        if (atomic_compare_exchange_strong(&rt_slice_us, &expect, 0))
            zp_log(ZP_LOG_WARN, "a %u us scheduling slice refused (%s): the control threads run at the "
                   "kernel's default slice", us, strerror(rc));
        return false;
    }
entered:
    rt_mine = 1;
    rt_depth = 0;
    return true;
}

bool zp_rt_active(void) { return rt_mine && rt_depth == 0; }

void zp_rt_pause(void)
{
    if (!rt_mine) return;
    if (rt_depth++ == 0) (void)set_policy(false);
}

void zp_rt_resume(void)
{
    if (!rt_mine || rt_depth == 0) return;
    if (--rt_depth == 0) (void)set_policy(true);
}

void zp_rt_wake_quiet(bool on)
{
    if (rt_quiet == on || (zp_rt_active() && atomic_load(&rt_prio) > 0))
        return;   /* (at FIFO: an equal priority's wake-up does not pre-empt the compute thread) */
    int rc = on ? set_fair(0, SCHED_BATCH, 0) : set_policy(zp_rt_active());
    rt_quiet = on && rc == 0;
}

void zp_rt_leave(void)
{
    (void)set_policy(false);   /* also a policy or slice inherited from the creator */
    rt_mine = 0;
    rt_depth = 0;
}

int zp_rt_adopt_threads(const char *comm_prefix)
{
    unsigned us = atomic_load(&rt_slice_us);
    if (!zp_rt_active() || atomic_load(&rt_prio) > 0 || us == 0) return 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    int n = 0;
    size_t pl = strlen(comm_prefix);
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[320], comm[32] = "";
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        bool named = fgets(comm, sizeof comm, f) && strncmp(comm, comm_prefix, pl) == 0;
        fclose(f);
        if (named && set_slice((pid_t)atoi(e->d_name), us) == 0) n++;
    }
    closedir(d);
    return n;
}
