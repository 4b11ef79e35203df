/* bench_wakeup.c - `zkpipe bench wakeup [--wakes N] [--sleep-us U] [--spinners K] [--nice N]
 * [--slice US] [--fifo P] [--json]`: how late a mostly-sleeping control thread (a GPU worker's
 * socket loop, staging or work thread on a device box, which sleeps while the device computes)
 * wakes up while every core is busy with host-stage work, in each scheduling tier of
 * lib/util/rt.c: the kernel's default, the short slice (US microseconds, default 100: the
 * default tier of `zkpipe up`), and SCHED_FIFO P (default 10; only where the kernel permits it).
 * The host stages are K spinning threads (default: cores + 1) at nice N (default 5, as
 * `zkpipe up --host-nice`). Each tier runs in its own child process: K spinners, then the
 * control thread sleeps U us (default 2000) N times (default 2000) and records how late each
 * wake-up was. Printed (p50, p99, max in ms), never asserted; --json ends with one JSON line. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/util/util.h"

typedef struct { unsigned wakes, sleep_us, spinners, slice_us; int nice, fifo; } wk_opts_t;
typedef struct { double p50, p99, max; int entered; } wk_res_t;

static atomic_bool wk_stop;

static void *wk_spin(void *arg)
{
    int nice = *(const int *)arg;
    (void)setpriority(PRIO_PROCESS, 0, nice);   /* this thread only (Linux: per thread) */
    volatile uint64_t x = 0;
    while (!atomic_load_explicit(&wk_stop, memory_order_relaxed)) x++;
    return NULL;
}

static int wk_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* in a child: K spinners, then the tier (prio, slice_us; both 0: the kernel's default) on this
 * thread, N timed sleeps; the result on fd */
static int wk_child(const wk_opts_t *o, int prio, unsigned slice_us, int fd)
{
    pthread_t *th = calloc(o->spinners, sizeof *th);
    double *late = calloc(o->wakes, sizeof *late);
    if (!th || !late) return 1;
    unsigned started = 0;
    for (; started < o->spinners; started++)
        if (pthread_create(&th[started], NULL, wk_spin, (void *)&o->nice) != 0) break;
    wk_res_t r = {.entered = 0};
    zp_rt_setup(prio, slice_us);
    r.entered = (prio || slice_us) ? zp_rt_enter() : 1;
    usleep(200000);   /* the spinners settle on every core */
    for (unsigned i = 0; i < o->wakes; i++) {
        uint64_t want = zp_now_ns() + (uint64_t)o->sleep_us * 1000u;
        struct timespec d = {(time_t)(o->sleep_us / 1000000u), (long)(o->sleep_us % 1000000u) * 1000L};
        while (nanosleep(&d, &d) < 0 && errno == EINTR) {}
        uint64_t now = zp_now_ns();
        late[i] = now > want ? (double)(now - want) / 1e6 : 0.0;
    }
    atomic_store(&wk_stop, true);
    for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
    qsort(late, o->wakes, sizeof *late, wk_cmp);
    r.p50 = late[o->wakes / 2];
    r.p99 = late[(size_t)o->wakes * 99 / 100];
    r.max = late[o->wakes - 1];
    ssize_t w = write(fd, &r, sizeof r);
    free(th);
    free(late);
    return w == (ssize_t)sizeof r ? 0 : 1;
}

static int wk_run(const wk_opts_t *o, int prio, unsigned slice_us, wk_res_t *r)
{
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(NULL);
    pid_t c = fork();
    if (c < 0) { close(p[0]); close(p[1]); return -1; }
    if (c == 0) { close(p[0]); _exit(wk_child(o, prio, slice_us, p[1])); }
    close(p[1]);
    ssize_t n = read(p[0], r, sizeof *r);
    close(p[0]);
    int st = 0;
    while (waitpid(c, &st, 0) < 0 && errno == EINTR) {}
    return n == (ssize_t)sizeof *r && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int wk_num(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *e;
    errno = 0;
    long x = v ? strtol(v, &e, 10) : 0;
    if (!v || errno || e == v || *e || x < lo || x > hi) {
        fprintf(stderr, "zkpipe bench wakeup: %s '%s': expected a number from %ld to %ld\n", opt, v ? v : "",
                lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int zp_bench_wakeup(int argc, char **argv)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    wk_opts_t o = {2000, 2000, (unsigned)(cores > 0 ? cores : 1) + 1, 100, 5, 10};
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (!strcmp(a, "--json")) { json = true; continue; }
        if (!strcmp(a, "--wakes")) { if (wk_num(a, v, 100, 1000000, &x)) return 2; o.wakes = (unsigned)x; }
        else if (!strcmp(a, "--sleep-us")) { if (wk_num(a, v, 10, 1000000, &x)) return 2; o.sleep_us = (unsigned)x; }
        else if (!strcmp(a, "--spinners")) { if (wk_num(a, v, 0, 1024, &x)) return 2; o.spinners = (unsigned)x; }
        else if (!strcmp(a, "--nice")) { if (wk_num(a, v, 0, 19, &x)) return 2; o.nice = (int)x; }
        else if (!strcmp(a, "--slice")) { if (wk_num(a, v, 100, 100000, &x)) return 2; o.slice_us = (unsigned)x; }
        else if (!strcmp(a, "--fifo")) { if (wk_num(a, v, 1, 99, &x)) return 2; o.fifo = (int)x; }
        else {
            fprintf(stderr, "usage: zkpipe bench wakeup [--wakes N] [--sleep-us U] [--spinners K] [--nice N] "
                            "[--slice US] [--fifo P] [--json]\n");
            return 2;
        }
        i++;
    }
    FILE *out = json ? stderr : stdout;
    fprintf(out, "== wake-up lateness of a sleeping control thread: %u sleeps of %u us, %u spinning threads at "
            "nice %d on %ld core(s)\n", o.wakes, o.sleep_us, o.spinners, o.nice, cores);
    struct { const char *name; int prio; unsigned slice; wk_res_t r; int ok; } tier[3] = {
        {.name = "default"}, {.name = "slice", .slice = o.slice_us}, {.name = "fifo", .prio = o.fifo}};
    for (int t = 0; t < 3; t++) {
        tier[t].ok = wk_run(&o, tier[t].prio, tier[t].slice, &tier[t].r) == 0 && tier[t].r.entered;
        if (!tier[t].ok) { fprintf(out, "   %-8s not permitted or failed here\n", tier[t].name); continue; }
        fprintf(out, "   %-8s p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", tier[t].name, tier[t].r.p50, tier[t].r.p99,
                tier[t].r.max);
    }
    if (json) {
        printf("{\"bench\": \"wakeup\", \"wakes\": %u, \"sleep_us\": %u, \"spinners\": %u, \"nice\": %d, "
               "\"cores\": %ld, \"slice_us\": %u, \"fifo\": %d", o.wakes, o.sleep_us, o.spinners, o.nice, cores,
               o.slice_us, o.fifo);
        for (int t = 0; t < 3; t++) {
            if (tier[t].ok)
                printf(", \"%s_ms\": {\"p50\": %.4f, \"p99\": %.4f, \"max\": %.4f}", tier[t].name, tier[t].r.p50,
                       tier[t].r.p99, tier[t].r.max);
            else
                printf(", \"%s_ms\": null", tier[t].name);
        }
        printf("}\n");
    }
    return 0;
}
