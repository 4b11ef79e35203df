/* wtns.c - `zkpipe wtns calculate <circuit.wasm> <input.json> <witness.wtns>` (snarkjs's
 * `wtns calculate`, byte-identical output) and `zkpipe fullprove <input.json> <circuit.wasm>
 * <circuit.zkey> <proof.json> <public.json>` (snarkjs's `groth16 fullprove`: the witness in
 * memory, no .wtns file, then `zkpipe prove`'s path). With a bellman key (issue 29):
 * `zkpipe fullprove <circuit.params> <circuit.wasm> <input.json> <proof.bin> <public.json>
 * --r1cs circuit.r1cs [--recheck]` (the key first, as `zkpipe prove`; a .params in the zkey's
 * place works too), then `zkpipe prove`'s bellman path (cli/prove_bellman.c). The wasm is registered once (translated
 * to C and compiled, cached by content: --cache DIR, default zp_wc_default_cache) and run in a
 * child process with --timeout-ms and --max-memory limits (lib/witness).
 * Exit: 0 done, 2 bad input (input.json, a signal the circuit refuses, a failed circom
 * assertion, a module that is no circom generator), 1 anything else.
 * Tests: tests/oracle/test_witness.sh, tests/test_witness.c, tests/bellman_prove_cli.sh (bellman) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/fmt/bellman.h"
#include "lib/util/util.h"
#include "lib/witness/witness.h"

#define WTNS_HDR(n8) (44u + (n8))     /* zp_wc_wtns_header's length */
#define OUT_CAP (1ull << 38)          /* reserved, not committed: 2^32 values of 64 bytes */

typedef struct {
    const char *cache;
    zp_wc_limits_t lim;
    bool quiet, json;
} wc_opts_t;

static int bad(int rc)
{
    return rc == ZP_EFORMAT || rc == ZP_EUNSAT || rc == ZP_EVERSION || rc == ZP_ETOOBIG || rc == -ENOENT ? 2 : 1;
}

static int fail(const char *cmd, int rc, const char *what)
{
    const char *m = zp_err_msg();
    fprintf(stderr, "zkpipe %s: %s: %s\n", cmd, what, *m ? m : zp_strerror(rc));
    return bad(rc);
}

/* common options; returns -1 when argv[i] is not one of them, else how many args it took */
static int common_opt(wc_opts_t *o, int argc, char **argv, int i, const char *cmd)
{
    const char *a = argv[i];
    if (!strcmp(a, "--cache") && i + 1 < argc) { o->cache = argv[i + 1]; return 2; }
    if ((!strcmp(a, "--timeout-ms") || !strcmp(a, "--max-memory-mib")) && i + 1 < argc) {
        char *end;
        unsigned long long v = strtoull(argv[i + 1], &end, 10);
        if (end == argv[i + 1] || *end || v == 0 || v > 4096ull * 1000000) {
            fprintf(stderr, "zkpipe %s: %s takes a positive whole number, got '%s'\n", cmd, a, argv[i + 1]);
            return -2;
        }
        if (a[2] == 't') o->lim.timeout_ms = (uint32_t)(v > UINT32_MAX ? UINT32_MAX : v);
        else o->lim.mem_bytes = v << 20;
        return 2;
    }
    if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) { o->quiet = true; return 1; }
    return -1;
}

/* register + open + calculate into a fresh shared buffer at offset off */
static int calc(const char *cmd, const wc_opts_t *o, const char *wasm, const char *input, uint8_t **buf, size_t off,
                zp_wc_result_t *res, double *reg_ms, bool *cached)
{
    char dir[4096], so[4600];
    int rc;
    zp_wc_input_t *inp = NULL;
    zp_wc_t *wc = NULL;
    if ((rc = zp_wc_input_load(&inp, input))) return fail(cmd, rc, "reading the input");
    if (o->cache) snprintf(dir, sizeof dir, "%s", o->cache);
    else if ((rc = zp_wc_default_cache(dir, sizeof dir))) { zp_wc_input_free(&inp); return fail(cmd, rc, "wasm cache"); }
    if ((rc = zp_wc_register(so, sizeof so, cached, reg_ms, dir, wasm, &o->lim))) {
        zp_wc_input_free(&inp);
        return fail(cmd, rc, "registering the witness generator");
    }
    if ((rc = zp_wc_open(&wc, so))) {
        zp_wc_input_free(&inp);
        return fail(cmd, rc, "loading the witness generator");
    }
    char *sym = zp_wc_find_sym(wasm);   /* names the missing inputs, when circom's .sym is there */
    if (sym) {
        zp_wc_set_sym(wc, sym);
        free(sym);
    }
    *buf = zp_wc_shared_alloc(OUT_CAP);
    if (!*buf) {
        zp_wc_close(&wc);
        zp_wc_input_free(&inp);
        return fail(cmd, -ENOMEM, "reserving the witness buffer");
    }
    rc = zp_wc_calculate(res, *buf + off, OUT_CAP - off, wc, inp, &o->lim, o->quiet ? -1 : STDOUT_FILENO);
    zp_wc_close(&wc);
    zp_wc_input_free(&inp);
    if (rc) {
        zp_wc_shared_free(*buf, OUT_CAP);
        *buf = NULL;
        return fail(cmd, rc, "calculating the witness");
    }
    return 0;
}

int zp_cmd_wtns(int argc, char **argv)
{
    static const char use[] = "usage: zkpipe wtns calculate <circuit.wasm> <input.json> <witness.wtns> [--cache DIR] "
                              "[--timeout-ms N] [--max-memory-mib N] [--quiet] [--json]\n";
    if (argc < 2 || strcmp(argv[1], "calculate")) {
        fputs(use, stderr);
        return 2;
    }
    wc_opts_t o = {0};
    const char *pos[3];
    int npos = 0;
    for (int i = 2; i < argc; i++) {
        int k = common_opt(&o, argc, argv, i, "wtns calculate");
        if (k == -2) return 2;
        if (k > 0) { i += k - 1; continue; }
        if (!strcmp(argv[i], "--json")) o.json = true;
        else if (argv[i][0] == '-' && argv[i][1]) { fprintf(stderr, "zkpipe wtns calculate: unknown option %s\n%s", argv[i], use); return 2; }
        else if (npos < 3) pos[npos++] = argv[i];
        else { fputs(use, stderr); return 2; }
    }
    if (npos != 3) { fputs(use, stderr); return 2; }
    uint64_t t0 = zp_now_ns();
    uint8_t *buf;
    zp_wc_result_t res;
    double reg_ms;
    bool cached;
    int ret = calc("wtns calculate", &o, pos[0], pos[1], &buf, 0, &res, &reg_ms, &cached);
    if (ret) return ret;
    int rc = zp_wc_write_wtns(pos[2], &res, buf);
    zp_wc_shared_free(buf, OUT_CAP);
    if (rc) return fail("wtns calculate", rc, "writing the witness");
    double all = (double)(zp_now_ns() - t0) / 1e6;
    if (o.json)
        printf("{\"witness\": \"%s\", \"values\": %u, \"register_ms\": %.3f, \"cached\": %s, \"witness_ms\": %.3f, \"total_ms\": %.3f}\n",
               pos[2], res.n_witness, reg_ms, cached ? "true" : "false", res.ms, all);
    else if (!o.quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "zkpipe wtns calculate: %u values; register %.1f ms (%s), witness %.1f ms, total %.1f ms\n", res.n_witness,
                reg_ms, cached ? "cached" : "compiled", res.ms, all);
    return 0;
}

/* a bellman .params / .vk: sniffed as one and its verifying-key block reads (on the curve; no
 * subgroup checks here, the prover's open does them). A JSON input never reads as one. */
static bool is_bellman_key(const char *path)
{
    zp_keyfmt_t kf;
    if (zp_key_format_of_file(&kf, path) || kf != ZP_KEYFMT_BELLMAN) return false;
    zp_bkey_t k;
    if (zp_bkey_open(&k, path, ZP_BKEY_VK_ONLY | ZP_BKEY_NO_SUBGROUP)) return false;
    zp_bkey_close(&k);
    return true;
}

int zp_cmd_fullprove(int argc, char **argv)
{
    static const char use[] = "usage: zkpipe fullprove <input.json> <circuit.wasm> <circuit.zkey> <proof.json> <public.json> "
                              "[--r1cs FILE] [--threads N] [--cache DIR] [--timeout-ms N] [--max-memory-mib N] [--json] [--quiet]\n"
                              "       zkpipe fullprove <circuit.params> <circuit.wasm> <input.json> <proof.bin> <public.json> "
                              "--r1cs FILE [--recheck] [options as above]   (bellman key: 192-byte proof)\n";
    wc_opts_t o = {0};
    zp_prove_args_t a = {0};
    const char *pos[5];
    int npos = 0;
    const char *fixed = getenv("ZP_TEST_FIXED_RS");
    bool allow_rs = fixed && !strcmp(fixed, "1");
    for (int i = 1; i < argc; i++) {
        int k = common_opt(&o, argc, argv, i, "fullprove");
        if (k == -2) return 2;
        if (k > 0) { i += k - 1; continue; }
        const char *s = argv[i];
        if (!strcmp(s, "--r1cs") && i + 1 < argc) a.r1cs = argv[++i];
        else if (!strcmp(s, "--threads") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end || v < 0 || v > 4096) { fprintf(stderr, "zkpipe fullprove: bad --threads '%s'\n", argv[i]); return 2; }
            a.threads = (unsigned)v;
        } else if (allow_rs && !strcmp(s, "--r") && i + 1 < argc) a.r = argv[++i];
        else if (allow_rs && !strcmp(s, "--s") && i + 1 < argc) a.s = argv[++i];
        else if (!strcmp(s, "--json")) o.json = true;
        else if (!strcmp(s, "--recheck")) a.recheck = true;
        else if (s[0] == '-' && s[1]) { fprintf(stderr, "zkpipe fullprove: unknown option %s\n%s", s, use); return 2; }
        else if (npos < 5) pos[npos++] = s;
        else { fputs(use, stderr); return 2; }
    }
    if (npos != 5 || (!a.r != !a.s)) { fputs(use, stderr); return 2; }
    /* which order: a bellman key first (its verifying-key block reads), else snarkjs's */
    const char *key = pos[2], *wasm = pos[1], *input = pos[0];
    bool bellman = is_bellman_key(pos[0]);
    if (bellman) key = pos[0], input = pos[2];
    else bellman = is_bellman_key(pos[2]);
    if (bellman && !a.r1cs) {
        fprintf(stderr, "zkpipe fullprove: %s is a bellman .params key: give the circuit with --r1cs circuit.r1cs\n", key);
        return 2;
    }
    a.t0 = zp_now_ns();
    uint8_t *buf;
    zp_wc_result_t res;
    double reg_ms;
    bool cached;
    /* values land after room for the .wtns header (44 + n8 bytes; n8 is 32 on both curves,
     * moved if the module's field differs), so the prover reads one .wtns image in memory */
    size_t off = WTNS_HDR(32);
    int ret = calc("fullprove", &o, wasm, input, &buf, off, &res, &reg_ms, &cached);
    if (ret) return ret;
    size_t hdr = WTNS_HDR(res.n8), vlen = (size_t)res.n_witness * res.n8;
    if (hdr != off) memmove(buf + hdr, buf + off, vlen);
    uint8_t h[ZP_WC_WTNS_HDR_MAX];
    size_t hl = zp_wc_wtns_header(h, &res);      /* = hdr */
    memcpy(buf, h, hl);
    a.zkey = key;
    a.wtns = input;
    a.proof = pos[3];
    a.pub = pos[4];
    a.json = o.json;
    a.quiet = o.quiet || !isatty(STDERR_FILENO);
    a.wtns_buf = buf;
    a.wtns_len = hdr + vlen;
    if (!a.quiet)
        fprintf(stderr, "zkpipe fullprove: witness %u values in %.1f ms (register %.1f ms, %s)\n", res.n_witness, res.ms, reg_ms,
                cached ? "cached" : "compiled");
    ret = zp_prove_run(&a);
    zp_wc_shared_free(buf, OUT_CAP);
    return ret;
}
