/* rt.c - real-time scheduling for a process's latency-critical threads (issue 10: the GPU
 * worker's control threads). A thread that is asleep nearly always (the loop waiting on the
 * socket, the staging thread on its queue, the work thread on the device) but whose wake-up sits
 * on the path between two device computes must not wait for a core behind the host's other
 * stages. zp_rt_setup(prio) configures the process (prio 1..99: SCHED_FIFO at prio; 0: off);
 * zp_rt_enter() makes the calling thread one of the real-time threads; zp_rt_pause() /
 * zp_rt_resume() bracket any O(n) host work such a thread does (a key load, the payload
 * checksum, pinning an arena), which runs at the normal policy so that it never hogs a core.
 * The one exception is the CPU backend's compute: there the work thread (thread 0 of the
 * compute's pool) stands in for the device and keeps the priority for its share (the pool's
 * other threads run at the normal policy; the kernel's RT throttling, sched_rt_runtime_us,
 * 95% of a core by default, bounds it). Dropping it for the compute was measured: the switch
 * back to the normal policy reschedules, and the compute then began up to 5 ms late behind a
 * finalizer thread (the gap the priority exists to remove; doc/gpu-hot-path.md).
 * Pause and resume are O(1) (one sched_setscheduler each) and nest (a depth counter).
 * When the kernel refuses (no CAP_SYS_NICE, RLIMIT_RTPRIO below prio) the first refusal is
 * logged with the reason and the fix, and the process carries on at the normal policy (never
 * a failure: the threads still run, only their wake-up is not preferred).
 * Threads created by a real-time thread would inherit its policy: zp_pool creates its threads
 * with an explicit normal policy. Tests: tests/test_util.c (rt). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "util.h"

static _Atomic int rt_prio;                   /* 0: off (or refused) */
static _Thread_local int rt_mine;             /* this thread entered */
static _Thread_local int rt_depth;            /* pauses outstanding */

static int set_policy(int prio)
{
    struct sched_param sp = {.sched_priority = prio};
    return pthread_setschedparam(pthread_self(), prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp);
}

void zp_rt_setup(int prio)
{
    atomic_store(&rt_prio, prio < 0 ? 0 : prio > 99 ? 99 : prio);
}

int zp_rt_priority(void) { return atomic_load(&rt_prio); }

bool zp_rt_enter(void)
{
    int prio = atomic_load(&rt_prio);
    if (prio <= 0) return false;
    int rc = set_policy(prio);
    if (rc != 0) {
        int expect = prio;
        if (atomic_compare_exchange_strong(&rt_prio, &expect, 0))   /* log once, then off */
            zp_log(ZP_LOG_WARN, "real-time priority %d refused (%s): the control threads run at the normal "
                   "policy; grant CAP_SYS_NICE or an RLIMIT_RTPRIO >= %d (systemd: LimitRTPRIO=%d) to use it",
                   prio, strerror(rc), prio, prio);
        return false;
    }
    rt_mine = 1;
    rt_depth = 0;
    return true;
}

bool zp_rt_active(void) { return rt_mine && rt_depth == 0; }

void zp_rt_pause(void)
{
    if (!rt_mine) return;
    if (rt_depth++ == 0) (void)set_policy(0);
}

void zp_rt_resume(void)
{
    if (!rt_mine || rt_depth == 0) return;
    if (--rt_depth == 0) {
        int prio = atomic_load(&rt_prio);
        if (prio > 0) (void)set_policy(prio);
    }
}

void zp_rt_leave(void)
{
    int pol;
    struct sched_param sp;
    if (rt_mine || (pthread_getschedparam(pthread_self(), &pol, &sp) == 0 && pol != SCHED_OTHER)) (void)set_policy(0);
    rt_mine = 0;
    rt_depth = 0;
}
