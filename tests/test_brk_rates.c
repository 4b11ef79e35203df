/* test_brk_rates.c - the broker's busy ratio and stage rates count overlapping task intervals
 * once (broker/report.c brk_union_ns / brk_busy_ratio, broker/metrics.c brk_mx_stage_rates).
 * A GPU worker stages task k+1 while task k computes, so their reported [t_start, t_end]
 * overlap; a batch of B tasks reports one interval B times. Before the union the busy ratio
 * summed the intervals (capped at 1) and the GPU stage's rate was workers / mean(t_end -
 * t_start): with double buffering it under-counted the GPU stage by up to 2x, with --batch B
 * by B, and `zkpipe status` could name the GPU stage as the limit when it was not.
 *   1. brk_union_ns against a brute-force union on random interval sets (incl. empty and
 *      reversed intervals);
 *   2. the busy ratio of a worker whose tasks overlap pairwise;
 *   3. stage rates: a GPU worker with staged (overlapping) tasks and a batch of 4 through the
 *      real DONE hook: rate = tasks / busy time, not 1 / mean interval; two workers' unions
 *      are separate (their overlap is real parallelism). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_int.h"
#include "lib/util/util.h"

static int fails;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); fails++; } } while (0)
#define NEAR(a, b) (((a) - (b)) < 1e-9 * ((b) > 0 ? (b) : 1) + 1e-12 && ((b) - (a)) < 1e-9 * ((b) > 0 ? (b) : 1) + 1e-12)

#include "brk_stubs.h"   /* brk_send, brk_worker_dead: nothing sent, nobody dies */

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(uint64_t m)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng % m;
}

static void test_union(void)
{
    for (unsigned round = 0; round < 2000; round++) {
        unsigned n = (unsigned)rnd(12);
        brk_interval_t iv[12];
        static unsigned char cover[200];
        memset(cover, 0, sizeof cover);
        for (unsigned i = 0; i < n; i++) {
            iv[i].s = rnd(200);
            iv[i].e = rnd(4) ? iv[i].s + rnd(200 - iv[i].s) : rnd(200);   /* some reversed */
            for (uint64_t x = iv[i].s; x < iv[i].e; x++) cover[x] = 1;
        }
        uint64_t want = 0;
        for (unsigned x = 0; x < 200; x++) want += cover[x];
        uint64_t got = brk_union_ns(iv, n);
        if (got != want) { fprintf(stderr, "round %u: union %llu, want %llu\n", round, (unsigned long long)got, (unsigned long long)want); fails++; }
    }
}

static brk_t *new_broker(unsigned nw)
{
    brk_t *b = calloc(1, sizeof *b);
    brk_config_defaults(b);
    CHECK(brk_mx_init(b, NULL) == 0);
    for (unsigned i = 0; i < nw; i++) {
        brk_worker_t *w = &b->workers[i];
        w->used = w->alive = true;
        w->role = ZP_ROLE_GPU;
        w->credits = 8;
        w->instance = i;
    }
    return b;
}

/* a DONE for a running GPU partition on slot `slot` through the metrics hook */
static void report(brk_t *b, brk_worker_t *w, brk_part_t *p, uint32_t slot, uint64_t s, uint64_t e)
{
    memset(p, 0, sizeof *p);
    p->state = PS_RUNNING;
    p->stage = ZP_ROLE_GPU;
    p->slot = (int32_t)slot;
    p->word_gen = 7;
    p->worker = w;
    w->inflight[0] = (brk_inflight_t){slot, 7, p};
    w->n_inflight = 1;
    zp_msg_done_t m;
    memset(&m, 0, sizeof m);
    m.slot = slot;
    m.gen = 7;
    m.t_start = s;
    m.t_end = e;
    brk_mx_on_done(b, w, &m);
    w->n_inflight = 0;
}

static void test_busy_ratio(void)
{
    brk_t *b = new_broker(1);
    brk_worker_t *w = &b->workers[0];
    const uint64_t S = 1000000000ull, t0 = 100 * S;
    w->first_seen = t0;
    /* ten tasks of 2 s each starting every 1 s: [t0 + i, t0 + i + 2): busy 11 s of 12 */
    for (unsigned i = 0; i < 10; i++) {
        w->busy[w->busy_head] = (brk_interval_t){t0 + i * S, t0 + (i + 2) * S};
        w->busy_head = (w->busy_head + 1) % BRK_BUSY_RING;
        w->busy_n++;
    }
    double r = brk_busy_ratio(w, t0 + 12 * S, 60 * S);
    CHECK(NEAR(r, 11.0 / 12.0));   /* the old sum said 20 s of 12: capped at 1 */
    /* a window that cuts the intervals: the last 4 s [t0 + 8, t0 + 12): busy [8, 11) = 3 s */
    r = brk_busy_ratio(w, t0 + 12 * S, 4 * S);
    CHECK(NEAR(r, 3.0 / 4.0));
    brk_mx_close(b);
    free(b);
}

static void test_stage_rates(void)
{
    const uint64_t S = 1000000000ull;
    uint64_t now = zp_now_ns();
    uint64_t t0 = now - 50 * S;
    brk_part_t p;
    brk_stage_rate_t out[ZP_NROLES];
    const char *why;

    /* one GPU worker, double buffered: 8 tasks, each staged 1 s before the previous one ends,
     * computing 3 s: interval i = [t0 + 3i - 1, t0 + 3i + 3) (4 s each), busy 1 + 24 s */
    brk_t *b = new_broker(1);
    b->qn[ZP_ROLE_GPU] = 1;   /* work queued: the rates are computed */
    for (unsigned i = 0; i < 8; i++) report(b, &b->workers[0], &p, i, t0 + 3 * i * S - S, t0 + (3 * i + 3) * S);
    brk_mx_stage_rates(b, now, out, &why);
    CHECK(out[ZP_ROLE_GPU].tasks == 8);
    CHECK(NEAR(out[ZP_ROLE_GPU].mean_task_s, 25.0 / 8));   /* not the 4 s mean interval */
    CHECK(NEAR(out[ZP_ROLE_GPU].rate, 8.0 / 25));
    brk_mx_close(b);
    free(b);

    /* a batch of 4: four DONEs with the same 8 s interval, twice (two batches back to back) */
    b = new_broker(1);
    b->qn[ZP_ROLE_GPU] = 1;
    for (unsigned k = 0; k < 2; k++)
        for (unsigned i = 0; i < 4; i++) report(b, &b->workers[0], &p, 4 * k + i, t0 + 8 * k * S, t0 + 8 * (k + 1) * S);
    brk_mx_stage_rates(b, now, out, &why);
    CHECK(out[ZP_ROLE_GPU].tasks == 8);
    CHECK(NEAR(out[ZP_ROLE_GPU].rate, 8.0 / 16));   /* 0.5 partitions/s, not 1/8 */
    brk_mx_close(b);
    free(b);

    /* two workers in parallel over the same 10 s: their overlap is not merged */
    b = new_broker(2);
    b->qn[ZP_ROLE_GPU] = 1;
    for (unsigned i = 0; i < 5; i++) {
        report(b, &b->workers[0], &p, i, t0 + 2 * i * S, t0 + 2 * (i + 1) * S);
        report(b, &b->workers[1], &p, 10 + i, t0 + 2 * i * S, t0 + 2 * (i + 1) * S);
    }
    brk_mx_stage_rates(b, now, out, &why);
    CHECK(out[ZP_ROLE_GPU].workers == 2 && out[ZP_ROLE_GPU].tasks == 10);
    CHECK(NEAR(out[ZP_ROLE_GPU].mean_task_s, 2.0));
    CHECK(NEAR(out[ZP_ROLE_GPU].rate, 1.0));   /* 2 workers / 2 s */
    brk_mx_close(b);
    free(b);
}

int main(void)
{
    test_union();
    test_busy_ratio();
    test_stage_rates();
    if (fails) { fprintf(stderr, "test_brk_rates: %d failure(s)\n", fails); return 1; }
    printf("test_brk_rates: ok\n");
    return 0;
}
