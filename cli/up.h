/* up.h - pieces of `zkpipe up` (up.c) that live in up_group.c: the runtime directory's group
 * lock, finding and stopping a group left by a dead `zkpipe up`, and the restart backoff.
 * Tests: tests/ipc/orphan.sh, tests/ipc/backoff.sh. */
#ifndef ZP_CLI_UP_H
#define ZP_CLI_UP_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Take <rundir>/up.lock (flock, held until exit). Another live up holds it: a clear message,
 * -1. A record of a dead up is there: stop the processes of its group that are still running
 * (only processes of ours: same uid, in the recorded process group, running one of bins) and
 * say so. A broker that no up of this directory started holds broker.pid: a clear message, -1. */
int up_group_lock(const char *rundir, const char *const *bins, int nbins);
/* record our pid and the children's process group in the lock file */
void up_group_record(pid_t pgid);
/* clean stop: the record goes (the lock goes with the process) */
void up_group_unlock(void);

/* next restart delay in ms: a child that started cleanly comes back at once (0); one that died
 * before it was ready backs off 200 ms doubling to 5 s (prev: the last delay) */
uint64_t up_backoff_next(uint64_t prev_ms, bool started_cleanly);

/* ---- finalizer sizing (up_size.c: the rule is in its NOTES) ---- */
#define UP_HEADROOM 1.2             /* finalizers sized for 1.2x the devices' rate */
#define UP_CPU_FINAL_RATIO 0.75     /* finalizer / GPU-stage thread-seconds on the CPU backend */
#define UP_DEVICE_SPEEDUP 64.0      /* a device's G1 stage = this many host threads (a guess) */
#define UP_FINAL_THREADS_MAX 8      /* threads per finalizer when the rule picks them */
#define UP_FINAL_MAX 64
typedef struct { double gpu_task_s, final_task_s; unsigned final_threads; } up_rates_t;
typedef struct {
    unsigned n_gpu, gpu_threads, cores;   /* gpu_threads 0: all cores */
    bool device;                          /* the GPU workers drive CUDA devices */
    bool measured;                        /* rates holds --stage-ms */
    up_rates_t rates;
    double device_speedup;                /* 0: UP_DEVICE_SPEEDUP */
    unsigned n_final, final_threads;      /* explicit overrides; 0: the rule picks */
} up_size_in_t;
typedef struct {
    unsigned n_final, final_threads;
    double need_threads, final_rate, gpu_rate;   /* partitions/s: finalizers reach, devices make */
    bool short_of_cores;                  /* the host cannot run the threads needed */
    char why[400];
} up_size_t;
/* "gpu=MS,final=MS[@THREADS]" -> r; -1 if malformed */
int up_parse_stage_ms(up_rates_t *r, const char *s);
void up_size_finalizers(up_size_t *o, const up_size_in_t *in);
/* The running group's resize (--finalizers auto, every --resize-every seconds): from the
 * broker's measured stage rates (partitions/s: what the live GPU workers and the n_final
 * finalizers sustain) the finalizers the GPU workers need, x UP_HEADROOM; never fewer than
 * n_final (the group only grows), at most what `cores` threads and UP_FINAL_MAX allow
 * (*capped then). n_final when the finalizer stage is not the limit or a rate is unmeasured. */
unsigned up_resize_want(unsigned n_final, unsigned final_threads, unsigned cores, double gpu_rate, double final_rate,
                        bool final_limiting, bool *capped);
#endif
