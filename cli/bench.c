/* bench.c - `zkpipe bench prove ZKEY WTNS [--reps N] [--threads N]`: times every stage of a
 * local proof (CPU backend) over N repetitions (default 3, random r,s) and prints the median,
 * min and max of each: key load, synth, NTT/h, MSM A/B1/C/H, G2 MSM, assembly, pairing check,
 * and the whole proof. `zkpipe bench arith ...` forwards to zp_bench_arith (cli/bench_arith.c).
 * Numbers are printed, never asserted (speed is not a test). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/fmt/fmt.h"
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

static void row(const char *name, uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    printf("  %-22s %10.2f %10.2f %10.2f\n", name, v[n / 2] / 1e6, v[0] / 1e6, v[n - 1] / 1e6);
}

static int bench_prove(int argc, char **argv)
{
    const char *pos[2];
    int npos = 0, reps = 3;
    unsigned threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (unsigned)atoi(argv[++i]);
        else if (argv[i][0] != '-' && npos < 2) pos[npos++] = argv[i];
        else npos = 99;
    }
    if (npos != 2 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: zkpipe bench prove ZKEY WTNS [--reps N] [--threads N]\n");
        return 2;
    }
    int ret = 1, rc;
    zp_zkey_t z = {0};
    zp_wtns_t wt = {0};
    zp_g16_key_t key = {0};
    zp_scalar_t *w = NULL;
    zp_backend_t *be = NULL;
    zp_pool_t *pool = NULL;
    const zp_backend_ops_t *ops = &zp_backend_cpu;
    zp_backend_cfg_t cfg = {.threads = threads};
    enum { S_SYNTH, S_NTT, S_A, S_B1, S_C, S_H, S_G1, S_G2, S_ASM, S_CHECK, S_FIN, S_TOTAL, S_N };
    static const char *names[S_N] = {"synth (a,b,c)", "ntt + h", "msm A", "msm B1", "msm C", "msm H",
                                     "g1 part total", "msm B2 (G2)", "assemble", "pairing check",
                                     "finalize total", "PROVE TOTAL"};
    uint64_t *v = calloc((size_t)S_N * reps, sizeof *v);
    if (!v) return 1;

    uint64_t t0 = zp_now_ns();
    if ((rc = zp_zkey_open(&z, pos[0])) || (rc = zp_wtns_open(&wt, pos[1])) || (rc = zp_check_wtns_zkey(&wt, &z)) ||
        (rc = zp_g16_key_load(&key, &z)) || (rc = zp_g16_witness_load(&w, &wt))) {
        fprintf(stderr, "zkpipe bench: %s: %s\n", zp_strerror(rc), zp_err_msg());
        goto out;
    }
    uint64_t t_load = zp_now_ns() - t0;
    if ((rc = ops->open(&be, &cfg)) || (rc = ops->load_key(be, &key))) {
        fprintf(stderr, "zkpipe bench: backend: %s: %s\n", zp_strerror(rc), zp_err_msg());
        goto out;
    }
    if (!(pool = zp_pool_new(threads))) goto out;
    printf("bench prove: %s curve %s, nVars %u, nPublic %u, domain 2^%u, %u threads, %d reps\n", pos[0],
           zp_curve_name(key.curve), key.n_vars, key.n_public, key.log_n, zp_pool_size(pool), reps);
    printf("  key load (open+copy+point checks) %.2f ms\n", t_load / 1e6);
    for (int r = 0; r < reps; r++) {
        zp_g16_proof_t proof;
        zp_g16_prove_times_t tm;
        if ((rc = zp_g16_prove(&proof, &key, w, NULL, NULL, NULL, ops, be, pool, &tm))) {
            fprintf(stderr, "zkpipe bench: prove: %s: %s\n", zp_strerror(rc), zp_err_msg());
            goto out;
        }
        uint64_t *x = v + (size_t)r;
        x[S_SYNTH * reps] = tm.synth_ns;
        x[S_NTT * reps] = tm.g1.ntt_ns;
        x[S_A * reps] = tm.g1.msm_ns[ZP_G16_A];
        x[S_B1 * reps] = tm.g1.msm_ns[ZP_G16_B1];
        x[S_C * reps] = tm.g1.msm_ns[ZP_G16_C];
        x[S_H * reps] = tm.g1.msm_ns[ZP_G16_H];
        x[S_G1 * reps] = tm.g1.total_ns;
        x[S_G2 * reps] = tm.fin.msm_g2_ns;
        x[S_ASM * reps] = tm.fin.assemble_ns;
        x[S_CHECK * reps] = tm.fin.check_ns;
        x[S_FIN * reps] = tm.fin.total_ns;
        x[S_TOTAL * reps] = tm.total_ns;
    }
    printf("  %-22s %10s %10s %10s\n", "stage (ms)", "median", "min", "max");
    for (int s = 0; s < S_N; s++) row(names[s], v + (size_t)s * reps, reps);
    ret = 0;
out:
    free(v);
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
    fprintf(stderr, "usage: zkpipe bench prove ZKEY WTNS [--reps N] [--threads N]\n"
                    "       zkpipe bench arith ...\n");
    return 2;
}
