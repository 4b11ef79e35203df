/* bench_c2.c [POWER [THREADS [REPS [ZKPIPE]]]] - libzkpipe_c2 in-process against the prover it wraps, on one
 * circuit: an INSECURE test key of 2^POWER (zp_testkey_write: circuit.params + r1cs + witness in
 * a temporary directory), the assignment from r1cs/wtns (zp_g16_assign_from_r1cs), then
 *   direct   zp_g16_bellman_prove (the code path of `zkpipe prove` with a .params, files open)
 *   c2       generate_groth16_proofs_c (validation + a/b/c copy + thread + proof)
 *   c2-alloc the same with a, b, c from zkpipe_c2_alloc_abc (no copy)
 *   group, group-alloc (env ZP_BENCH_C2_GROUP=1, a `zkpipe up` at ZP_RUNTIME_DIR: tests/
 *            bench_c2_group.sh) the same two through the group (ZKPIPE_C2_MODE=group: vectors
 *            files, one job, awaited); the key's import is done by a warm-up proof before the
 *            timing; the caller's r = 5, s = 9 reach the group's finalizer (no test hook), so
 *            every group proof is compared with the direct one byte for byte
 *   cli      (with ZKPIPE) `ZP_TEST_FIXED_RS=1 zkpipe prove circuit.params witness.wtns --r1cs ...
 *            --r 5 --s 9` as a process: files read, assignment built, proof written
 * measured alternately (one of each per round, REPS rounds, default 3): the median and the best of
 * each in milliseconds per partition (a batch of 1 = one partition), the overheads from the
 * medians, the bytes of a, b, c copied per partition with and without zkpipe_c2_alloc_abc, and
 * the load average before and after; every proof equal to the direct one at r = 5, s = 9 (the
 * CLI's 192 bytes too; exit 1 otherwise).
 * Registered as test 'bench_c2' (suite slow) at 2^12. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* the median of n values (sorted in place) */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double loadavg1(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

#include "c2/zkpipe_c2.h"
#include "lib/groth16/assignment.h"
#include "lib/groth16/testkey.h"
#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #c, zp_err_msg()); exit(1); } } while (0)

int main(int argc, char **argv)
{
    unsigned power = argc > 1 ? (unsigned)atoi(argv[1]) : 16, threads = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    const char *zkpipe = argc > 4 ? argv[4] : NULL;
    if (reps < 1) reps = 1;
    char dir[] = "/tmp/zp_bench_c2_XXXXXX", p[256], th[16];
    CHECK(mkdtemp(dir));
    snprintf(th, sizeof th, "%u", threads);
    setenv("ZKPIPE_C2_THREADS", th, 1);
    setenv("ZKPIPE_C2_MODE", "inprocess", 1);
    zp_pool_t *pool = zp_pool_new(threads);
    CHECK(pool);
    zp_testkey_cfg_t cfg = {.curve = ZP_CURVE_BLS12_381, .power = power, .n_public = 1, .n_witness = 1,
                            .write_r1cs = true, .insecure_known_tau = true, .out_dir = dir,
                            .write_bellman = true, .has_seed = true, .seed = 30};
    CHECK(zp_testkey_write(&cfg, pool, NULL) == 0);
    zp_r1cs_t r1 = {0};
    zp_wtns_t wt = {0};
    snprintf(p, sizeof p, "%s/circuit.r1cs", dir);
    CHECK(zp_r1cs_open(&r1, p) == 0);
    snprintf(p, sizeof p, "%s/witness.wtns", dir);
    CHECK(zp_wtns_open(&wt, p) == 0);
    zp_g16_assign_buf_t ab;
    CHECK(zp_g16_assign_from_r1cs(&ab, &r1, &wt, pool) == 0);
    const zp_g16_assignment_t *as = &ab.v;
    snprintf(p, sizeof p, "%s/circuit.params", dir);
    zp_bkey_t bk;
    CHECK(zp_bkey_open(&bk, p, ZP_BKEY_USE_RECORD) == 0);   /* the record: create_SRS and the group do not check the subgroups again */
    zp_g16_bkey_t k;
    zp_g16_bkey_from_fmt(&k, &bk);
    SRS srs;
    RustError e = create_SRS(&srs, p, false);
    CHECK(e.code == 0);

    zp_scalar_t r = {{5}}, s = {{9}};
    zp_fr_bls12_381_t rm, sm;
    zp_fr_bls12_381_set_u64(&rm, 5);
    zp_fr_bls12_381_set_u64(&sm, 9);
    fr_t rf, sf;
    memcpy(&rf, &rm, sizeof rf);
    memcpy(&sf, &sm, sizeof sf);
    zp_g16_proof_t ref;
    groth16_proof pr;
    double best[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
    double *all = calloc((size_t)reps * 6, sizeof *all);   /* all[i * reps + rep] */
    CHECK(all);
    size_t copied[5] = {0};
    bool group = getenv("ZP_BENCH_C2_GROUP") != NULL;
    SRS gsrs = {NULL};
    if (group) {
        setenv("ZKPIPE_C2_MODE", "group", 1);
        e = create_SRS(&gsrs, p, false);
        if (e.code) { fprintf(stderr, "group: %s\n", e.message); return 1; }
        setenv("ZKPIPE_C2_MODE", "inprocess", 1);
    }
    fr_t *a, *b, *c;
    size_t n = as->abc_size;
    e = zkpipe_c2_alloc_abc(n, &a, &b, &c);
    CHECK(e.code == 0);
    Assignment mine;
    memcpy(&mine, as, sizeof mine);
    uint8_t refbin[192];
    size_t rl;
    CHECK(zp_g16_bellman_prove(&ref, &k, as, &r, &s, pool, NULL) == 0);
    CHECK(zp_g16_conv_bellman.proof_encode(refbin, 192, &rl, &ref) == 0 && rl == 192);
    if (group) {   /* warm-up: the group imports the key with the first job */
        uint64_t tw = zp_now_ns();
        e = generate_groth16_proofs_c((const Assignment *)as, 1, &rf, &sf, &pr, &gsrs, NULL, -1);
        if (e.code) { fprintf(stderr, "group warm-up: %s\n", e.message); return 1; }
        fprintf(stderr, "group warm-up (key import + proof): %.1f ms\n", (zp_now_ns() - tw) / 1e6);
    }
    double load0 = loadavg1();
    for (int rep = 0; rep < reps; rep++) {
        uint64_t t0 = zp_now_ns();
        CHECK(zp_g16_bellman_prove(&ref, &k, as, &r, &s, pool, NULL) == 0);
        uint64_t t1 = zp_now_ns();
        size_t c0 = zkpipe_c2_bytes_copied();
        e = generate_groth16_proofs_c(&mine, 1, &rf, &sf, &pr, &srs, NULL, -1);
        uint64_t t2 = zp_now_ns();
        CHECK(e.code == 0);
        copied[1] = zkpipe_c2_bytes_copied() - c0;
        CHECK(!memcmp(&pr.a, &ref.a.bls12_381, sizeof pr.a) && !memcmp(&pr.b, &ref.b.bls12_381, sizeof pr.b) &&
              !memcmp(&pr.c, &ref.c.bls12_381, sizeof pr.c));
        /* the allocator: the caller's synthesis would write here; the copy is outside the timing */
        memcpy(a, as->a, n * 32);
        memcpy(b, as->b, n * 32);
        memcpy(c, as->c, n * 32);
        Assignment z = mine;
        z.a = a;
        z.b = b;
        z.c = c;
        c0 = zkpipe_c2_bytes_copied();
        uint64_t t3 = zp_now_ns();
        e = generate_groth16_proofs_c(&z, 1, &rf, &sf, &pr, &srs, NULL, -1);
        uint64_t t4 = zp_now_ns();
        CHECK(e.code == 0);
        copied[2] = zkpipe_c2_bytes_copied() - c0;
        CHECK(!memcmp(&pr.a, &ref.a.bls12_381, sizeof pr.a) && !memcmp(&pr.c, &ref.c.bls12_381, sizeof pr.c));
        double d[6] = {(t1 - t0) / 1e6, (t2 - t1) / 1e6, (t4 - t3) / 1e6, 1e30, 1e30, 1e30};
        if (group) {
            size_t g0 = zkpipe_c2_bytes_copied();
            uint64_t t6 = zp_now_ns();
            e = generate_groth16_proofs_c(&mine, 1, &rf, &sf, &pr, &gsrs, NULL, -1);
            d[4] = (zp_now_ns() - t6) / 1e6;
            CHECK(e.code == 0);
            copied[3] = zkpipe_c2_bytes_copied() - g0;
            CHECK(!memcmp(&pr.a, &ref.a.bls12_381, sizeof pr.a) && !memcmp(&pr.b, &ref.b.bls12_381, sizeof pr.b) &&
                  !memcmp(&pr.c, &ref.c.bls12_381, sizeof pr.c));
            /* a block in /dev/shm, one per partition; the caller's synthesis would write it */
            fr_t *ga, *gb, *gc;
            setenv("ZKPIPE_C2_MODE", "group", 1);
            e = zkpipe_c2_alloc_abc(n, &ga, &gb, &gc);
            setenv("ZKPIPE_C2_MODE", "inprocess", 1);
            CHECK(e.code == 0);
            memcpy(ga, as->a, n * 32);
            memcpy(gb, as->b, n * 32);
            memcpy(gc, as->c, n * 32);
            Assignment gz = mine;
            gz.a = ga;
            gz.b = gb;
            gz.c = gc;
            g0 = zkpipe_c2_bytes_copied();
            uint64_t t7 = zp_now_ns();
            e = generate_groth16_proofs_c(&gz, 1, &rf, &sf, &pr, &gsrs, NULL, -1);
            d[5] = (zp_now_ns() - t7) / 1e6;
            CHECK(e.code == 0);
            copied[4] = zkpipe_c2_bytes_copied() - g0;
            zkpipe_c2_free_abc(ga);
            CHECK(!memcmp(&pr.a, &ref.a.bls12_381, sizeof pr.a) && !memcmp(&pr.b, &ref.b.bls12_381, sizeof pr.b) &&
                  !memcmp(&pr.c, &ref.c.bls12_381, sizeof pr.c));
        }
        if (zkpipe) {
            char cmd[1200];
            snprintf(cmd, sizeof cmd, "ZP_TEST_FIXED_RS=1 '%s' prove '%s/circuit.params' '%s/witness.wtns' '%s/cli.bin' "
                     "'%s/cli.json' --r1cs '%s/circuit.r1cs' --r 5 --s 9 --threads %u >/dev/null 2>&1", zkpipe, dir, dir,
                     dir, dir, dir, zp_pool_size(pool));
            uint64_t t5 = zp_now_ns();
            CHECK(system(cmd) == 0);
            d[3] = (zp_now_ns() - t5) / 1e6;
            snprintf(cmd, sizeof cmd, "%s/cli.bin", dir);
            FILE *f = fopen(cmd, "rb");
            uint8_t cb[193];
            CHECK(f && fread(cb, 1, sizeof cb, f) == 192);
            fclose(f);
            CHECK(!memcmp(cb, refbin, 192));
        }
        for (int i = 0; i < 6; i++) {
            if (d[i] < best[i]) best[i] = d[i];
            all[i * reps + rep] = d[i];
        }
        fprintf(stderr, "round %d: direct %.1f, c2 %.1f, c2-alloc %.1f, cli %.1f, group %.1f, group-alloc %.1f ms\n", rep,
                d[0], d[1], d[2], zkpipe ? d[3] : -1.0, group ? d[4] : -1.0, group ? d[5] : -1.0);
    }
    double med[6];
    for (int i = 0; i < 6; i++) med[i] = median(all + i * reps, reps);
    free(all);
    double load1 = loadavg1();
    /* per partition (a batch of 1): medians, then the best of each; overheads from the medians */
    printf("{\"power\": %u, \"abc_size\": %zu, \"threads\": %u, \"reps\": %d, \"loadavg1_before\": %.2f, "
           "\"loadavg1_after\": %.2f, \"direct_ms\": %.1f, \"c2_ms\": %.1f, \"c2_alloc_ms\": %.1f, \"cli_ms\": %.1f, "
           "\"group_ms\": %.1f, \"group_alloc_ms\": %.1f, \"best_ms\": [%.1f, %.1f, %.1f, %.1f, %.1f, %.1f], "
           "\"c2_overhead_pct\": %.2f, \"group_overhead_pct\": %.2f, \"group_alloc_overhead_pct\": %.2f, "
           "\"group_vs_c2_pct\": %.2f, \"bytes_copied_c2\": %zu, \"bytes_copied_alloc\": %zu, "
           "\"bytes_copied_group\": %zu, \"bytes_copied_group_alloc\": %zu, \"group_proofs_compared\": %s}\n",
           power, n, zp_pool_size(pool), reps, load0, load1, med[0], med[1], med[2], zkpipe ? med[3] : -1.0,
           group ? med[4] : -1.0, group ? med[5] : -1.0, best[0], best[1], best[2], zkpipe ? best[3] : -1.0,
           group ? best[4] : -1.0, group ? best[5] : -1.0, 100.0 * (med[1] - med[0]) / med[0],
           group ? 100.0 * (med[4] - med[0]) / med[0] : 0.0, group ? 100.0 * (med[5] - med[0]) / med[0] : 0.0,
           group ? 100.0 * (med[4] - med[1]) / med[1] : 0.0, copied[1], copied[2], copied[3], copied[4],
           group ? "true" : "false");
    if (group) drop_SRS(&gsrs);
    zkpipe_c2_free_abc(a);
    drop_SRS(&srs);
    zp_bkey_close(&bk);
    zp_g16_assign_free(&ab);
    zp_r1cs_close(&r1);
    zp_wtns_close(&wt);
    zp_pool_destroy(&pool);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
