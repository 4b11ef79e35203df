/* up_size.c - how many finalizers `zkpipe up` starts, and with how many threads each, so that
 * the finalizer stage keeps up with the GPU workers it serves (issue 10 item 8; up.h).
 *
 * NOTES
 * The rule (doc/readme-stages.md has it with the numbers behind the constants):
 *   R   = G / t_g            partitions per second the G GPU workers produce (t_g: one GPU
 *                            stage task, seconds)
 *   W_f = t_f * T_f          finalizer thread-seconds per partition (t_f measured with T_f
 *                            threads; the G2 MSM, most of it, scales about linearly)
 *   N   = ceil(h * R * W_f)  finalizer threads needed, h = UP_HEADROOM
 *   T   = --final-threads, else min(N, cores, UP_FINAL_THREADS_MAX)
 *   n   = --finalizers, else ceil(min(N, cores) / T)   (threads beyond the host's cores add
 *                            nothing; when N > cores the finalizer stage will limit: a warning
 *                            names the rate it can reach)
 * Where t_g and W_f come from, first that applies:
 *   1. --stage-ms gpu=MS,final=MS@T: measured task times (what `zkpipe status` prints for a
 *      running group, from the broker's recent task times);
 *   2. the CPU backend's model: the finalizer's one G2 MSM over n_vars costs UP_CPU_FINAL_RATIO
 *      of the GPU stage's four G1 MSMs + NTTs at the same thread count (measured, see the doc),
 *      so W_f = UP_CPU_FINAL_RATIO * t_g * T_g with T_g the GPU worker's threads;
 *   3. CUDA devices without measurements: a device is taken to do the G1 stage as fast as
 *      --device-speedup D host threads (default UP_DEVICE_SPEEDUP, a guess until measured),
 *      W_f = UP_CPU_FINAL_RATIO * t_g * D.
 * A running group re-sizes (up_resize_want, called by up.c every --resize-every seconds with the
 * broker's measured stage rates): while the finalizer stage limits, n = ceil(h * n_f * R_gpu /
 * R_final) finalizers of the same threads, within the cores; it only grows (a finalizer that
 * is not needed costs an idle process, one that is missing costs GPU time).
 * Tests: tests/ipc/stages_limit.sh (`zkpipe up --dry-run` plans and a running group),
 * tests/ipc/up_resize.sh (a group whose finalizer is slow grows). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/up.h"

int up_parse_stage_ms(up_rates_t *r, const char *s)
{
    memset(r, 0, sizeof *r);
    char buf[256];
    if (!s || strlen(s) >= sizeof buf) return -1;
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '='), *e;
        if (!eq) return -1;
        *eq = 0;
        double ms = strtod(eq + 1, &e);
        if (e == eq + 1 || !(ms > 0) || ms > 1e9) return -1;
        if (!strcmp(t, "gpu") && !*e) r->gpu_task_s = ms / 1e3;
        else if (!strcmp(t, "final")) {
            r->final_task_s = ms / 1e3;
            r->final_threads = 1;
            if (*e == '@') {
                char *e2;
                long th = strtol(e + 1, &e2, 10);
                if (e2 == e + 1 || *e2 || th < 1 || th > 4096) return -1;
                r->final_threads = (unsigned)th;
            } else if (*e) return -1;
        } else return -1;
    }
    return r->gpu_task_s > 0 && r->final_task_s > 0 ? 0 : -1;
}

void up_size_finalizers(up_size_t *o, const up_size_in_t *in)
{
    memset(o, 0, sizeof *o);
    unsigned cores = in->cores ? in->cores : 1, g = in->n_gpu ? in->n_gpu : 1;
    double tg, wf;
    const char *src;
    if (in->measured) {
        tg = in->rates.gpu_task_s;
        wf = in->rates.final_task_s * in->rates.final_threads;
        src = "measured task times (--stage-ms)";
    } else if (!in->device) {
        unsigned tg_threads = in->gpu_threads ? in->gpu_threads : cores;
        tg = 1;   /* the ratio is what matters: R * W_f = G * ratio * T_g */
        wf = UP_CPU_FINAL_RATIO * tg_threads;
        src = "CPU-backend model (G2 MSM vs the G1 stage at equal threads)";
    } else {
        tg = 1;
        wf = UP_CPU_FINAL_RATIO * (in->device_speedup > 0 ? in->device_speedup : UP_DEVICE_SPEEDUP);
        src = "device model (--device-speedup: a guess until measured; pass --stage-ms)";
    }
    double need = UP_HEADROOM * (g / tg) * wf;
    unsigned n_th = need < 1 ? 1 : need > 1e6 ? 1000000u : (unsigned)ceil(need - 1e-9);
    unsigned t = in->final_threads;
    if (!t) {
        t = n_th < cores ? n_th : cores;
        if (t > UP_FINAL_THREADS_MAX) t = UP_FINAL_THREADS_MAX;
    }
    unsigned usable = n_th < cores ? n_th : cores, n = in->n_final;
    if (!n) {
        n = (usable + t - 1) / t;
        if (n < 1) n = 1;
        if (n > UP_FINAL_MAX) n = UP_FINAL_MAX;
    }
    o->n_final = n;
    o->final_threads = t;
    o->need_threads = need;
    o->short_of_cores = n_th > cores;
    /* what the finalizers reach against what the devices produce (linear-scaling model) */
    double have = (double)n * t < cores ? (double)n * t : cores;
    o->final_rate = have / wf * (tg > 0 ? 1 : 0);
    o->gpu_rate = g / tg;
    if (in->measured)
        snprintf(o->why, sizeof o->why, "%s: %u gpu worker(s) x 1 partition / %.4g s; finalizer %.4g thread-s a "
                 "partition; x %.2f headroom = %.1f thread(s) needed; %u core(s)", src, g, tg, wf, UP_HEADROOM, need, cores);
    else
        snprintf(o->why, sizeof o->why, "%s: %u gpu worker(s); finalizer work a partition = %.4g host thread(s) for "
                 "one GPU task's time; x %.2f headroom = %.1f thread(s) needed; %u core(s)", src, g, wf, UP_HEADROOM, need,
                 cores);
}

unsigned up_resize_want(unsigned n_final, unsigned final_threads, unsigned cores, double gpu_rate, double final_rate,
                        bool final_limiting, bool *capped)
{
    *capped = false;
    if (!final_limiting || !(gpu_rate > 0) || !(final_rate > 0) || !n_final || gpu_rate > 1e9 || final_rate > 1e9)
        return n_final;
    double need = ceil(UP_HEADROOM * n_final * gpu_rate / final_rate - 1e-9);
    unsigned t = final_threads ? final_threads : 1, c = cores ? cores : 1;
    unsigned max = c / t ? c / t : 1;
    if (max > UP_FINAL_MAX) max = UP_FINAL_MAX;
    if (need > max) { *capped = true; need = max; }
    return need > n_final ? (unsigned)need : n_final;
}
