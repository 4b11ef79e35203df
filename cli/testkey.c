/* testkey.c - `zkpipe testkey --curve bn128|bls12381 --power P [--publics K] [--witnesses N]
 *            [--seed S] [--tau V --alpha V --beta V --delta V] [--no-r1cs] [--threads N]
 *            --out DIR --insecure-known-tau`
 * Writes an INSECURE test key (lib/groth16/testkey.h): circuit.zkey, witness.wtns (and
 * witness-<i>.wtns for N > 1), circuit.r1cs, verification_key.json, toxic_waste.json for a
 * synthetic circuit with domain 2^P. Refuses without --insecure-known-tau and says why.
 * Prints the phase timings on stderr. Exit: 0 written, 1 failure, 2 usage or refusal.
 * Tests: tests/test_testkey.c (library), tests/testkey_cli.sh, tests/oracle/test_testkey.sh */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lib/groth16/groth16.h"
#include "lib/groth16/testkey.h"
#include "lib/util/util.h"

static int usage(void)
{
    fprintf(stderr, "usage: zkpipe testkey --curve bn128|bls12381 --power P [--publics K] [--witnesses N] "
                    "[--seed S] [--tau V] [--alpha V] [--beta V] [--delta V] [--no-r1cs] [--no-bellman] [--threads N] "
                    "--out DIR --insecure-known-tau\n");
    return 2;
}

static int parse_uint(unsigned *out, const char *s, unsigned max, const char *what)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v > max) {
        fprintf(stderr, "zkpipe testkey: %s '%s' is not a number in 0..%u\n", what, s, max);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int zp_cmd_testkey(int argc, char **argv)
{
    zp_testkey_cfg_t cfg = {.n_public = 1, .n_witness = 1, .write_r1cs = true};
    const char *curve = NULL, *val[4] = {NULL, NULL, NULL, NULL};
    unsigned threads = 0, power = 0;
    bool have_power = false, no_bellman = false;
    static const char *const vname[4] = {"--tau", "--alpha", "--beta", "--delta"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k = -1;
        for (int j = 0; j < 4; j++)
            if (!strcmp(a, vname[j])) k = j;
        if (!strcmp(a, "--insecure-known-tau")) { cfg.insecure_known_tau = true; continue; }
        if (!strcmp(a, "--no-r1cs")) { cfg.write_r1cs = false; continue; }
        if (!strcmp(a, "--no-bellman")) { no_bellman = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(); return 0; }
        if (!v) {
            fprintf(stderr, "zkpipe testkey: %s needs a value\n", a);
            return usage();
        }
        i++;
        if (k >= 0) val[k] = v;
        else if (!strcmp(a, "--curve")) curve = v;
        else if (!strcmp(a, "--out")) cfg.out_dir = v;
        else if (!strcmp(a, "--power")) { if (parse_uint(&power, v, 64, "--power")) return 2; have_power = true; }
        else if (!strcmp(a, "--publics")) { if (parse_uint(&cfg.n_public, v, 1u << 20, "--publics")) return 2; }
        else if (!strcmp(a, "--witnesses")) { if (parse_uint(&cfg.n_witness, v, 1u << 20, "--witnesses")) return 2; }
        else if (!strcmp(a, "--threads")) { if (parse_uint(&threads, v, 4096, "--threads")) return 2; }
        else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            cfg.seed = strtoull(v, &end, 0);
            if (errno || end == v || *end) { fprintf(stderr, "zkpipe testkey: --seed '%s' is not a number\n", v); return 2; }
            cfg.has_seed = true;
        } else {
            fprintf(stderr, "zkpipe testkey: unknown option %s\n", a);
            return usage();
        }
    }
    if (!cfg.insecure_known_tau) {
        fprintf(stderr, "zkpipe testkey: refusing: this writes a Groth16 key from a KNOWN tau, alpha, beta and delta "
                        "(saved in toxic_waste.json). Anyone who knows them can forge proofs that verify, so the key "
                        "is INSECURE and only good for tests and benchmarks. Pass --insecure-known-tau to confirm.\n");
        return 2;
    }
    if (!curve || !have_power || !cfg.out_dir) {
        fprintf(stderr, "zkpipe testkey: --curve, --power and --out are required\n");
        return usage();
    }
    if (!strcmp(curve, "bn128") || !strcmp(curve, "bn254")) cfg.curve = ZP_CURVE_BN254;
    else if (!strcmp(curve, "bls12381") || !strcmp(curve, "bls12-381")) cfg.curve = ZP_CURVE_BLS12_381;
    else {
        fprintf(stderr, "zkpipe testkey: --curve '%s': bn128 or bls12-381\n", curve);
        return 2;
    }
    cfg.power = power;
    /* issue 29: on BLS12-381 also bellman's circuit.params / circuit.vk for the same r1cs */
    cfg.write_bellman = cfg.curve == ZP_CURVE_BLS12_381 && !no_bellman;
    zp_scalar_t *dst[4] = {&cfg.tau, &cfg.alpha, &cfg.beta, &cfg.delta};
    bool *has[4] = {&cfg.has_tau, &cfg.has_alpha, &cfg.has_beta, &cfg.has_delta};
    for (int j = 0; j < 4; j++) {
        if (!val[j]) continue;
        if (zp_g16_scalar_from_dec(dst[j], cfg.curve, val[j])) {
            fprintf(stderr, "zkpipe testkey: %s: %s\n", vname[j], zp_err_msg());
            return 2;
        }
        *has[j] = true;
    }
    struct stat st;
    if (stat(cfg.out_dir, &st) != 0 && mkdir(cfg.out_dir, 0755) != 0) {
        fprintf(stderr, "zkpipe testkey: cannot create %s: %s\n", cfg.out_dir, strerror(errno));
        return 1;
    }
    zp_pool_t *pool = zp_pool_new(threads);
    if (!pool) {
        fprintf(stderr, "zkpipe testkey: cannot start threads\n");
        return 1;
    }
    zp_testkey_times_t t;
    int rc = zp_testkey_write(&cfg, pool, &t);
    unsigned nt = zp_pool_size(pool);
    zp_pool_destroy(&pool);
    if (rc) {
        const char *m = zp_err_msg();
        fprintf(stderr, "zkpipe testkey: %s%s%s\n", zp_strerror(rc), *m ? ": " : "", m);
        return 1;
    }
    fprintf(stderr,
            "zkpipe testkey: INSECURE key (toxic waste in %s/toxic_waste.json) %s 2^%u, %u public, %u witness(es), "
            "%u threads: total %.3f s (lagrange %.3f, tables %.3f, points %.3f, witnesses %.3f, r1cs %.3f); "
            "zkey %.1f MiB\n",
            cfg.out_dir, curve, power, cfg.n_public, cfg.n_witness, nt, t.total_ns / 1e9, t.lagrange_ns / 1e9,
            t.tables_ns / 1e9, t.points_ns / 1e9, t.witness_ns / 1e9, t.r1cs_ns / 1e9, t.zkey_bytes / 1048576.0);
    return 0;
}
