/* bench.c - `zkpipe bench prove ZKEY WTNS [--reps N] [--threads N]` (or PARAMS WTNS --r1cs R1CS:
 * a bellman key as the stages hold it, compacted; its A / B1 scalars gathered from w in a stage
 * of their own, "gather A,B1", the MSMs then over |A| and |B| points): times every stage of a
 * local proof (CPU backend) over N repetitions (default 3, random r,s) and prints the median,
 * min and max wall time of each stage and its median process CPU time (all threads; the fairer
 * number on a busy machine): key load, synth, NTT/h, MSM A/B1/C/H, finalize (G2 MSM, assembly,
 * pairing check) and the whole proof; NTT/h and the MSMs one by one through the backend's test
 * verbs (lib/groth16/backend_test.h). `zkpipe bench arith ...` forwards to zp_bench_arith (cli/bench_arith.c).
 * Numbers are printed, never asserted (speed is not a test). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "lib/fmt/bellman.h"
#include "lib/fmt/fmt.h"
#include "lib/groth16/assignment.h"
#include "lib/groth16/backend_test.h"
#include "lib/groth16/groth16.h"
#include "lib/util/util.h"

/* until cli/bench_arith.c is built in */
__attribute__((weak)) int zp_bench_arith(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "zkpipe bench arith: not available in this build\n");
    return 2;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum { S_SYNTH, S_NTT, S_GATHER, S_A, S_B1, S_C, S_H, S_FIN, S_G2, S_ASM, S_CHECK, S_TOTAL, S_N };
static const char *stage_names[S_N] = {"synth (a,b,c)", "ntt + h", "gather A,B1", "msm A (G1)", "msm B1 (G1)", "msm C (G1)",
                                       "msm H (G1)", "finalize", "  msm B2 (G2)", "  assemble", "  pairing check",
                                       "PROVE TOTAL"};

/* one proof, stage by stage, wall and process-CPU time of each (CPU time counts every thread
 * and not the time spent waiting for a core: the fairer number on a busy machine) */
static int one_proof(uint64_t *wall, uint64_t *cpu, const zp_g16_key_t *k, const zp_scalar_t *w,
                     const zp_backend_test_ops_t *tops, zp_backend_t *be, zp_pool_t *pool, zp_scalar_t *buf,
                     zp_scalar_t *ga, zp_scalar_t *gb)
{
    size_t n = k->domain_size, nc = (size_t)k->n_vars - k->n_public - 1;
    zp_scalar_t *a = buf, *b = buf + n, *c = buf + 2 * n, *h = buf + 3 * n;
    zp_g1_any_t part[ZP_G16_NMSM];
    zp_g16_proof_t proof;
    zp_g16_fin_times_t ft;
    uint64_t w0 = zp_now_ns(), c0 = cpu_ns(), w1, c1;
    int rc = 0;
#define STAGE(id, call)                                  \
    if (!rc) {                                           \
        w1 = zp_now_ns(); c1 = cpu_ns();                 \
        rc = (call);                                     \
        wall[id] = zp_now_ns() - w1; cpu[id] = cpu_ns() - c1; \
    }
    STAGE(S_SYNTH, zp_g16_synth(k, w, NULL, a, b, c, pool))
    STAGE(S_NTT, tops->compute_h(be, k, a, b, c, h, NULL))
    const zp_scalar_t *sa = w, *sb = w;
    wall[S_GATHER] = cpu[S_GATHER] = 0;
    if (k->compact) {   /* a bellman key: the MSMs' scalars gathered as the backends do */
        STAGE(S_GATHER, (zp_g16_gather(ga, w, k->dens_a, k->pfx_a, k->n_vars, pool),
                         zp_g16_gather(gb, w, k->dens_b, k->pfx_b, k->n_vars, pool), 0))
        sa = ga;
        sb = gb;
    }
    STAGE(S_A, tops->msm_g1(be, k->curve, &part[ZP_G16_A], k->a, sa, zp_g16_key_n_a(k)))
    STAGE(S_B1, tops->msm_g1(be, k->curve, &part[ZP_G16_B1], k->b1, sb, zp_g16_key_n_b(k)))
    STAGE(S_C, tops->msm_g1(be, k->curve, &part[ZP_G16_C], k->c, w + k->n_public + 1, nc))
    STAGE(S_H, tops->msm_g1(be, k->curve, &part[ZP_G16_H], k->h, h, n))
    STAGE(S_FIN, zp_g16_finalize(k, w, part, NULL, NULL, &proof, pool, &ft))
#undef STAGE
    if (rc) return rc;
    wall[S_G2] = ft.msm_g2_ns;
    wall[S_ASM] = ft.assemble_ns;
    wall[S_CHECK] = ft.check_ns;
    cpu[S_G2] = cpu[S_ASM] = cpu[S_CHECK] = 0;
    wall[S_TOTAL] = zp_now_ns() - w0;
    cpu[S_TOTAL] = cpu_ns() - c0;
    return 0;
}

static void row(const char *name, uint64_t *v, uint64_t *c, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    qsort(c, (size_t)n, sizeof *c, cmp_u64);
    if (c[n - 1]) printf("  %-18s %9.2f %9.2f %9.2f %9.2f\n", name, v[n / 2] / 1e6, v[0] / 1e6, v[n - 1] / 1e6, c[n / 2] / 1e6);
    else printf("  %-18s %9.2f %9.2f %9.2f %9s\n", name, v[n / 2] / 1e6, v[0] / 1e6, v[n - 1] / 1e6, "");
}

static int bench_prove(int argc, char **argv)
{
    const char *pos[2], *r1cs_path = NULL;
    int npos = 0, reps = 3;
    unsigned threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--r1cs") && i + 1 < argc) r1cs_path = argv[++i];
        else if (argv[i][0] != '-' && npos < 2) pos[npos++] = argv[i];
        else npos = 99;
    }
    if (npos != 2 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: zkpipe bench prove ZKEY WTNS [--reps N] [--threads N]\n"
                        "       zkpipe bench prove PARAMS WTNS --r1cs R1CS [--reps N] [--threads N]\n");
        return 2;
    }
    int ret = 1, rc;
    zp_zkey_t z = {0};
    zp_wtns_t wt = {0};
    zp_g16_key_t key = {0};
    zp_scalar_t *w = NULL, *buf = NULL, *ga = NULL, *gb = NULL;
    zp_bkey_t bk;
    zp_r1cs_t r1;
    uint64_t *dm = NULL;
    bool bk_open = false, r1_open = false;
    zp_backend_t *be = NULL;
    zp_pool_t *pool = NULL;
    const zp_backend_ops_t *ops = &zp_backend_cpu;
    zp_backend_cfg_t cfg = {.threads = threads};
    uint64_t *v = calloc((size_t)2 * S_N * reps, sizeof *v), *cv = v + (size_t)S_N * reps;
    if (!v) return 1;

    if (!(pool = zp_pool_new(threads))) goto out;
    uint64_t t0 = zp_now_ns(), c0 = cpu_ns();
    if (r1cs_path) {   /* a bellman key, laid out as the stages hold it (compacted) */
        /* no subgroup checks (a bench; minutes at 2^20): the proof's pairing check still
         * refuses a key whose points are off the subgroup */
        zp_bkey_opts_t ko = {.flags = ZP_BKEY_NO_SUBGROUP, .pool = pool};
        zp_g16_bdensity_t d;
        zp_g16_bkey_t gk;
        if (!(rc = zp_bkey_open_opts(&bk, pos[0], &ko))) bk_open = true;
        if (!rc && !bk.has_params) rc = zp_err_set(ZP_EFORMAT, "%s: a verifying key, not proving parameters", pos[0]);
        if (!rc && !(rc = zp_r1cs_open(&r1, r1cs_path))) r1_open = true;
        if (!rc) rc = zp_g16_bellman_density(&d, &dm, &r1);
        if (!rc) {
            zp_g16_bkey_from_fmt(&gk, &bk);
            rc = zp_g16_key_load_bellman(&key, &gk, &d, &r1, pool, pos[0]);
        }
        if (!rc && !(rc = zp_wtns_open(&wt, pos[1])) && (wt.n_witness != key.n_vars || wt.curve != key.curve))
            rc = zp_err_set(ZP_EMISMATCH, "%s: %u values of %s, the key has %u wires of %s", pos[1], wt.n_witness,
                           zp_curve_name(wt.curve), key.n_vars, zp_curve_name(key.curve));
        if (!rc) rc = zp_g16_witness_load(&w, &wt);
        if (!rc && (!(ga = calloc(zp_g16_key_n_a(&key) + 1, sizeof *ga)) || !(gb = calloc(zp_g16_key_n_b(&key) + 1, sizeof *gb))))
            rc = zp_err_set(-ENOMEM, "gathered scalars");
        if (rc) {
            fprintf(stderr, "zkpipe bench: %s: %s\n", zp_strerror(rc), zp_err_msg());
            goto out;
        }
    } else if ((rc = zp_zkey_open(&z, pos[0])) || (rc = zp_wtns_open(&wt, pos[1])) ||
               (rc = zp_check_wtns_zkey(&wt, &z)) || (rc = zp_g16_key_load_pool(&key, &z, NULL, 0, pool)) ||
               (rc = zp_g16_witness_load(&w, &wt))) {
        fprintf(stderr, "zkpipe bench: %s: %s\n", zp_strerror(rc), zp_err_msg());
        goto out;
    }
    uint64_t t_load = zp_now_ns() - t0, c_load = cpu_ns() - c0;
    if ((rc = ops->open(&be, &cfg)) || (rc = ops->load_key(be, &key))) {
        fprintf(stderr, "zkpipe bench: backend: %s: %s\n", zp_strerror(rc), zp_err_msg());
        goto out;
    }
    if (!(buf = calloc(4 * (size_t)key.domain_size, sizeof *buf))) goto out;
    printf("bench prove: %s: %s, nVars %u, nPublic %u, domain 2^%u, %u threads, %d reps\n", pos[0],
           zp_curve_name(key.curve), key.n_vars, key.n_public, key.log_n, zp_pool_size(pool), reps);
    if (key.compact) printf("  compacted (bellman) key: |A| %u, |B| %u of %u wires\n", key.n_a, key.n_b, key.n_vars);
    printf("  key load (open + copy + point checks): %.2f ms wall, %.2f ms cpu\n", t_load / 1e6, c_load / 1e6);
    for (int r = 0; r < reps; r++) {
        uint64_t wall[S_N], cpu[S_N];
        if ((rc = one_proof(wall, cpu, &key, w, zp_backend_cpu_test_ops(), be, pool, buf, ga, gb))) {
            fprintf(stderr, "zkpipe bench: prove: %s: %s\n", zp_strerror(rc), zp_err_msg());
            goto out;
        }
        for (int s = 0; s < S_N; s++) {
            v[(size_t)s * reps + r] = wall[s];
            cv[(size_t)s * reps + r] = cpu[s];
        }
    }
    printf("  %-18s %9s %9s %9s %9s\n", "stage (ms)", "median", "min", "max", "cpu");
    for (int s = 0; s < S_N; s++)
        if (s != S_GATHER || key.compact) row(stage_names[s], v + (size_t)s * reps, cv + (size_t)s * reps, reps);
    ret = 0;
out:
    free(v);
    free(buf);
    free(ga);
    free(gb);
    free(dm);
    if (bk_open) zp_bkey_close(&bk);
    if (r1_open) zp_r1cs_close(&r1);
    zp_pool_destroy(&pool);
    if (be) ops->close(&be);
    free(w);
    zp_g16_key_close(&key);
    zp_wtns_close(&wt);
    zp_zkey_close(&z);
    return ret;
}

int zp_cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "arith")) return zp_bench_arith(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "prove")) return bench_prove(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "wakeup")) return zp_bench_wakeup(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "filecoin")) return zp_bench_filecoin(argc - 1, argv + 1);
    fprintf(stderr, "usage: zkpipe bench prove ZKEY WTNS [--reps N] [--threads N]\n"
                    "       zkpipe bench arith ...\n"
                    "       zkpipe bench wakeup ...   (cli/bench_wakeup.c)\n"
                    "       zkpipe bench filecoin [--log N] [--reps N] [--threads N] [--full-pct P]   (cli/bench_filecoin.c)\n");
    return 2;
}
