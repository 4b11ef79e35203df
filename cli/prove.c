/* prove.c - `zkpipe prove <circuit.zkey> <witness.wtns> <proof.json> <public.json>
 *            [--r1cs FILE] [--threads N] [--bin FILE] [--times]`: one proof in this process with the CPU
 * backend (rapidsnark's arguments). Writes snarkjs-identical proof.json / public.json, and with
 * --bin the compressed binary proof. The proof is pairing-checked before it is written.
 * Test-only: with env ZP_TEST_FIXED_RS=1, `--r V --s V` (decimal or 0x hex) fix the blinding.
 * --times: the phase table (wall and process-CPU ms of each phase from the key mapping to the
 * output, lib/util zp_trace) on stderr; with --json the phases are in the JSON line too.
 * Exit: 0 proof written, 1 failure (message on stderr), 2 usage. Tests: tests/oracle/test_prove.sh */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/fmt/bellman.h"
#include "lib/fmt/fmt.h"
#include "lib/groth16/groth16.h"
#include "lib/util/util.h"

static int usage(void)
{
    fprintf(stderr, "usage: zkpipe prove <circuit.zkey> <witness.wtns> <proof.json> <public.json> "
                    "[--r1cs FILE] [--threads N] [--bin FILE]\n"
                    "       zkpipe prove <circuit.params> <witness.wtns> <proof.bin> <public.json> --r1cs FILE "
                    "[--recheck] (bellman: 192-byte proof; --recheck: subgroup checks even if the key's check "
                    "record matches)\n"
                    "                    [--stages|--quiet] [--json] [--times]   (stages on stderr on a terminal; --json: timings;\n"
                    "                    --times: wall and CPU ms of every phase on stderr)\n");
    return 2;
}

static int fail(int rc, const char *what)
{
    const char *m = zp_err_msg();
    fprintf(stderr, "zkpipe prove: %s: %s%s%s\n", what, zp_strerror(rc), *m ? ": " : "", m);
    return 1;
}

static int write_bin(const char *path, const zp_g16_proof_t *p)
{
    uint8_t buf[256];
    size_t n = zp_g16_proof_bin_size(p->curve);
    int rc = zp_g16_proof_to_bin(buf, p);
    if (rc) return rc;
    FILE *f = fopen(path, "wb");
    if (!f) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    size_t wr = fwrite(buf, 1, n, f);
    if (fclose(f) != 0 || wr != n) return zp_err_set(-EIO, "%s: write failed", path);
    return 0;
}

/* progress: each stage on stderr as it starts, with the time since the start; on when stderr
 * is a terminal or with --stages, never with --quiet */
static bool g_quiet = true;
static uint64_t g_t0;
/* resident memory now and at its peak (VmRSS, VmHWM of /proc/self/status), MiB; -1 unknown */
static void rss_mib(double *now, double *peak)
{
    *now = *peak = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned long kb;
        if (sscanf(line, "VmRSS: %lu kB", &kb) == 1) *now = kb / 1024.0;
        else if (sscanf(line, "VmHWM: %lu kB", &kb) == 1) *peak = kb / 1024.0;
    }
    fclose(f);
}

static void stage(const char *what)
{
    if (g_quiet) return;
    double now, peak;
    rss_mib(&now, &peak);
    fprintf(stderr, "zkpipe prove: [%6.2f s, rss %6.1f MiB, peak %6.1f] %s\n", (double)(zp_now_ns() - g_t0) / 1e9,
            now, peak, what);
}

/* the phase trace (zp_trace): a table on stderr (table) and the JSON line's "phases" (json:
 * the line's opening part is printed already; this closes it) */
static void print_phases(bool table, bool json)
{
    zp_trace_mark_t t0, m[ZP_TRACE_MAX];
    size_t dropped, n = zp_trace_get(&t0, m, ZP_TRACE_MAX, &dropped);
    if (table) {
        fprintf(stderr, "%-44s %10s %10s %6s\n", "phase", "wall ms", "cpu ms", "cores");
        zp_trace_mark_t prev = t0;
        for (size_t i = 0; i < n; i++) {
            double w = (double)(m[i].wall_ns - prev.wall_ns) / 1e6, c = (double)(m[i].cpu_ns - prev.cpu_ns) / 1e6;
            fprintf(stderr, "%-44s %10.2f %10.2f %6.2f\n", m[i].name, w, c, w > 0 ? c / w : 0.0);
            prev = m[i];
        }
        if (n) {
            double w = (double)(m[n - 1].wall_ns - t0.wall_ns) / 1e6, c = (double)(m[n - 1].cpu_ns - t0.cpu_ns) / 1e6;
            fprintf(stderr, "%-44s %10.2f %10.2f %6.2f\n", "TOTAL (in process)", w, c, w > 0 ? c / w : 0.0);
        }
        if (dropped) fprintf(stderr, "(%zu later marks not kept)\n", dropped);
    }
    if (json) {
        printf(", \"phases\": [");
        zp_trace_mark_t prev = t0;
        for (size_t i = 0; i < n; i++) {
            printf("%s{\"name\": \"%s\", \"wall_ms\": %.3f, \"cpu_ms\": %.3f}", i ? ", " : "", m[i].name,
                   (double)(m[i].wall_ns - prev.wall_ns) / 1e6, (double)(m[i].cpu_ns - prev.cpu_ns) / 1e6);
            prev = m[i];
        }
        printf("]}\n");
    }
}

int zp_cmd_prove(int argc, char **argv)
{
    bool json = false, times = false, recheck = false;
    g_quiet = !isatty(STDERR_FILENO);
    const char *pos[4], *r1cs_path = NULL, *bin_path = NULL, *r_str = NULL, *s_str = NULL;
    int npos = 0;
    unsigned threads = 0;
    const char *fixed = getenv("ZP_TEST_FIXED_RS");
    int allow_rs = fixed && !strcmp(fixed, "1");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--r1cs") && i + 1 < argc) r1cs_path = argv[++i];
        else if (!strcmp(a, "--bin") && i + 1 < argc) bin_path = argv[++i];
        else if (!strcmp(a, "--threads") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end || v < 0 || v > 4096) {
                fprintf(stderr, "zkpipe prove: --threads must be a whole number from 0 (all CPUs) to 4096, got '%s'\n",
                        argv[i]);
                return usage();
            }
            threads = (unsigned)v;
        } else if (allow_rs && !strcmp(a, "--r") && i + 1 < argc) r_str = argv[++i];
        else if (allow_rs && !strcmp(a, "--s") && i + 1 < argc) s_str = argv[++i];
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(); return 0; }
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) g_quiet = true;
        else if (!strcmp(a, "--stages")) g_quiet = false;
        else if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--times")) times = true;
        else if (!strcmp(a, "--recheck")) recheck = true;
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "zkpipe prove: unknown option %s\n", a); return usage(); }
        else if (npos < 4) pos[npos++] = a;
        else return usage();
    }
    if (npos != 4 || (!r_str != !s_str)) return usage();
    zp_prove_args_t a = {.zkey = pos[0], .wtns = pos[1], .proof = pos[2], .pub = pos[3], .r1cs = r1cs_path,
                         .bin = bin_path, .r = r_str, .s = s_str, .threads = threads, .json = json, .quiet = g_quiet,
                         .times = times, .recheck = recheck};
    return zp_prove_run(&a);
}

int zp_prove_run(const zp_prove_args_t *a)
{
    zp_keyfmt_t kf;   /* a bellman / bellperson .params: bellman's conventions (cli/prove_bellman.c) */
    if (zp_key_format_of_file(&kf, a->zkey) == 0 && kf == ZP_KEYFMT_BELLMAN) return zp_prove_bellman(a);
    const char *pos[4] = {a->zkey, a->wtns, a->proof, a->pub}, *r1cs_path = a->r1cs, *bin_path = a->bin,
               *r_str = a->r, *s_str = a->s;
    unsigned threads = a->threads;
    bool json = a->json;
    g_quiet = a->quiet;
    int ret = 1, rc;
    zp_zkey_t z = {0};
    zp_wtns_t wt = {0};
    zp_r1cs_t r1 = {0};
    zp_g16_key_t key = {0};
    zp_scalar_t *wcopy = NULL, rs[2];
    const zp_scalar_t *w = NULL;
    zp_backend_t *be = NULL;
    zp_pool_t *pool = NULL;
    char (*sig)[100] = NULL;
    const zp_backend_ops_t *ops = &zp_backend_cpu;
    zp_backend_cfg_t cfg = {.threads = threads, .device = 0};
    uint64_t t0 = a->t0 ? a->t0 : zp_now_ns();
    g_t0 = t0;
    if (a->times || json) zp_trace_start();
    stage("reading the proving key and witness");

    /* the coefficient entries are checked by the key load below, on the pool */
    if ((rc = zp_zkey_open_unchecked(&z, pos[0]))) { fail(rc, "reading the proving key"); goto out; }
    zp_trace_mark("zkey: map, section headers");
    if ((rc = a->wtns_buf ? zp_wtns_parse(&wt, a->wtns_buf, a->wtns_len, pos[1]) : zp_wtns_open_unchecked(&wt, pos[1]))) {
        fail(rc, "reading the witness");
        goto out;
    }
    if ((rc = zp_check_wtns_zkey(&wt, &z))) { fail(rc, "witness and proving key"); goto out; }
    zp_trace_mark("witness: map, header");
    if (r1cs_path) {
        if ((rc = zp_r1cs_open(&r1, r1cs_path))) { fail(rc, "reading the r1cs"); goto out; }
        if ((rc = zp_check_r1cs_zkey(&r1, &z))) { fail(rc, "r1cs and proving key"); goto out; }
    }
    if (r_str && ((rc = zp_g16_scalar_from_dec(&rs[0], z.curve, r_str)) ||
                  (rc = zp_g16_scalar_from_dec(&rs[1], z.curve, s_str)))) {
        fail(rc, "--r/--s");
        goto out;
    }
    if (!(pool = zp_pool_new(threads))) { fail(-ENOMEM, "thread pool"); goto out; }
    zp_trace_mark("r1cs, thread pool");
    if ((rc = zp_wtns_check_values(&wt, pool))) { fail(rc, "reading the witness"); goto out; }   /* on the pool */
    zp_trace_mark("witness: values < r");
    stage("loading the proving key");
    /* every point array used where it is in the zkey's mapping, at whatever alignment the
     * file gives it (session 18: the MSMs read points through memcpy; before, the misaligned
     * ones were moved onto 8-byte boundaries into fresh pages first, ~16 MB at 2^16), the
     * witness's values moved onto 8 bytes in place: nothing copied twice */
    if ((rc = zp_g16_key_load_inplace(&key, &z, pool))) { fail(rc, "loading the proving key"); goto out; }
    zp_trace_mark("key: coefficients checked (in place)");
    if ((rc = zp_g16_witness_inplace(&w, &wcopy, &wt))) { fail(rc, "loading the witness"); goto out; }
    zp_trace_mark("witness: align, values in place");
    uint64_t t1 = zp_now_ns();
    if ((rc = ops->open(&be, &cfg))) { fail(rc, "starting the cpu backend"); goto out; }
    if ((rc = ops->load_key(be, &key))) { fail(rc, "preparing the backend"); goto out; }
    zp_trace_mark("backend: pool, NTT domain, MSM scratch");

    zp_g16_proof_t proof;
    zp_g16_prove_times_t tm;
    stage(r1cs_path ? "proving (checking the witness, synthesis, NTT, MSMs)" : "proving (synthesis, NTT, MSMs)");
    rc = zp_g16_prove_once(&proof, &key, w, r1cs_path ? &r1 : NULL, r_str ? &rs[0] : NULL, r_str ? &rs[1] : NULL,
                      ops, be, pool, &tm);
    if (rc) { fail(rc, "proving"); goto out; }

    zp_proof_json_t pj;
    stage("writing proof and public signals");
    if ((rc = zp_g16_proof_to_json(&pj, &proof)) || (rc = zp_proof_json_write(pos[2], &pj))) {
        fail(rc, "writing the proof");
        goto out;
    }
    zp_trace_mark("output: proof.json");
    sig = calloc((size_t)key.n_public + 1, sizeof *sig);
    if (!sig) { fail(-ENOMEM, "public signals"); goto out; }
    if ((rc = zp_g16_public_to_json(sig, &key, w)) || (rc = zp_public_json_write(pos[3], sig, key.n_public))) {
        fail(rc, "writing the public signals");
        goto out;
    }
    if (bin_path && (rc = write_bin(bin_path, &proof))) { fail(rc, "writing the binary proof"); goto out; }
    zp_trace_mark("output: public.json, --bin");
    zp_log(ZP_LOG_DEBUG, "prove: load %.1f ms, synth %.1f, ntt %.1f, msm A %.1f B1 %.1f C %.1f H %.1f, G2 %.1f, "
           "assemble %.1f, check %.1f, prove total %.1f, all %.1f ms",
           (t1 - t0) / 1e6, tm.synth_ns / 1e6, tm.g1.ntt_ns / 1e6, tm.g1.msm_ns[ZP_G16_A] / 1e6,
           tm.g1.msm_ns[ZP_G16_B1] / 1e6, tm.g1.msm_ns[ZP_G16_C] / 1e6, tm.g1.msm_ns[ZP_G16_H] / 1e6,
           tm.fin.msm_g2_ns / 1e6, tm.fin.assemble_ns / 1e6, tm.fin.check_ns / 1e6, tm.total_ns / 1e6,
           (zp_now_ns() - t0) / 1e6);
    if (json)
        printf("{\"proof\": \"%s\", \"public\": \"%s\", \"seconds\": {\"load\": %.6f, \"synth\": %.6f, \"ntt\": %.6f, "
               "\"msm_g1\": %.6f, \"msm_g2\": %.6f, \"prove\": %.6f, \"total\": %.6f}", pos[2], pos[3], (t1 - t0) / 1e9,
               tm.synth_ns / 1e9, tm.g1.ntt_ns / 1e9,
               (tm.g1.msm_ns[ZP_G16_A] + tm.g1.msm_ns[ZP_G16_B1] + tm.g1.msm_ns[ZP_G16_C] + tm.g1.msm_ns[ZP_G16_H]) / 1e9,
               tm.fin.msm_g2_ns / 1e9, tm.total_ns / 1e9, (zp_now_ns() - t0) / 1e9);
    stage("done");
    ret = 0;
out:
    free(sig);
    zp_pool_destroy(&pool);
    if (be) ops->close(&be);
    free(wcopy);
    zp_g16_key_close(&key);
    if (r1cs_path) zp_r1cs_close(&r1);
    zp_wtns_close(&wt);
    zp_zkey_close(&z);
    zp_trace_mark("cleanup: unmap, free");
    if (ret == 0 && (a->times || json)) print_phases(a->times, json);
    zp_trace_stop();
    return ret;
}
