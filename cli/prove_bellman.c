/* prove_bellman.c - `zkpipe prove circuit.params witness.wtns proof.bin public.json --r1cs
 * circuit.r1cs [--recheck]` and `zkpipe fullprove circuit.params circuit.wasm input.json proof.bin
 * public.json --r1cs circuit.r1cs`: cli/prove.c's zp_prove_run hands over here when the key file
 * is a bellman / bellperson .params (lib/fmt/bellman.h recognises it); fullprove gives the
 * witness as a .wtns image in memory. bellman's conventions (lib/groth16/assignment.h): the r1cs
 * and witness become bellman's ProvingAssignment (supraseal-c2's Assignment layout), the proof
 * is pairing-checked against the key's verifying key, then written as Proof::write's 192 bytes;
 * public.json as snarkjs writes it (inputs 1.., decimal).
 * The key's subgroup checks run once per file: the key is opened with ZP_BKEY_USE_RECORD (the
 * user's check record, lib/fmt/bellman_record.c; what it trusts: doc/filecoin.md); --recheck
 * checks fully again. The always-on checks (canonical, on-curve, identity) run every time.
 * Test hook as on the zkey path: ZP_TEST_FIXED_RS=1 with --r V --s V fixes the blinding.
 * Exit: 0 written, 1 failure (message on stderr). Tests: tests/bellman_prove_cli.sh */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "lib/fmt/bellman.h"
#include "lib/fmt/fmt.h"
#include "lib/groth16/assignment.h"
#include "lib/groth16/groth16.h"
#include "lib/util/util.h"

static int fail(int rc, const char *what)
{
    const char *m = zp_err_msg();
    fprintf(stderr, "zkpipe prove: %s: %s%s%s\n", what, zp_strerror(rc), *m ? ": " : "", m);
    return 1;
}

int zp_prove_bellman(const zp_prove_args_t *a)
{
    const char *pos[4] = {a->zkey, a->wtns, a->proof, a->pub}, *r1cs_path = a->r1cs, *r_str = a->r, *s_str = a->s;
    bool json = a->json;
    if (!r1cs_path) {
        fprintf(stderr, "zkpipe prove: %s is a bellman .params key: give the circuit with --r1cs circuit.r1cs "
                        "(bellman's assignment is built from the r1cs and the witness)\n", pos[0]);
        return 2;
    }
    int ret = 1, rc;
    zp_bkey_t bk;
    zp_r1cs_t r1 = {0};
    zp_wtns_t wt = {0};
    zp_g16_assign_buf_t ab = {0};
    zp_pool_t *pool = NULL;
    char (*sig)[100] = NULL;
    bool key_open = false;
    zp_scalar_t rs[2];
    uint64_t t0 = a->t0 ? a->t0 : zp_now_ns();
    if (!(pool = zp_pool_new(a->threads))) { fail(-ENOMEM, "thread pool"); goto out; }
    zp_bkey_opts_t ko = {.flags = ZP_BKEY_USE_RECORD | (a->recheck ? ZP_BKEY_RECHECK : 0), .pool = pool};
    if ((rc = zp_bkey_open_opts(&bk, pos[0], &ko))) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", zp_err_msg());
        struct stat st;   /* a .vk (its verifying-key block is the whole file): say so */
        bool vk = false;
        if (zp_bkey_open(&bk, pos[0], ZP_BKEY_VK_ONLY | ZP_BKEY_NO_SUBGROUP) == 0) {
            vk = stat(pos[0], &st) == 0 && (uint64_t)st.st_size == bk.end;
            zp_bkey_close(&bk);
        }
        if (vk) {
            fprintf(stderr, "zkpipe prove: %s is a bellman verifying key (.vk), not proving parameters (.params)\n",
                    pos[0]);
            goto out;
        }
        zp_err_set(rc, "%s", msg);
        fail(rc, "reading the bellman parameters");
        goto out;
    }
    key_open = true;
    if (!a->quiet && bk.record_note[0]) fprintf(stderr, "zkpipe prove: %s: %s\n", pos[0], bk.record_note);
    if (!bk.has_params) {
        fprintf(stderr, "zkpipe prove: %s holds only a verifying key, not proving parameters\n", pos[0]);
        goto out;
    }
    if ((rc = a->wtns_buf ? zp_wtns_parse(&wt, a->wtns_buf, a->wtns_len, pos[1]) : zp_wtns_open(&wt, pos[1]))) {
        fail(rc, "reading the witness");
        goto out;
    }
    if ((rc = zp_r1cs_open(&r1, r1cs_path))) { fail(rc, "reading the r1cs"); goto out; }
    if (r_str && ((rc = zp_g16_scalar_from_dec(&rs[0], ZP_CURVE_BLS12_381, r_str)) ||
                  (rc = zp_g16_scalar_from_dec(&rs[1], ZP_CURVE_BLS12_381, s_str)))) {
        fail(rc, "--r/--s");
        goto out;
    }
    uint64_t t1 = zp_now_ns();
    if ((rc = zp_g16_assign_from_r1cs(&ab, &r1, &wt, pool))) { fail(rc, "building bellman's assignment"); goto out; }
    uint64_t t2 = zp_now_ns();
    zp_g16_bkey_t k;
    zp_g16_bkey_from_fmt(&k, &bk);
    zp_g16_proof_t proof;
    zp_g16_bprove_times_t tm;
    rc = zp_g16_bellman_prove(&proof, &k, &ab.v, r_str ? &rs[0] : NULL, r_str ? &rs[1] : NULL, pool, &tm);
    if (rc) {
        char what[1200];
        snprintf(what, sizeof what, "proving with %s and %s", pos[0], r1cs_path);
        fail(rc, what);
        goto out;
    }
    uint8_t bin[256];
    size_t bl;
    if ((rc = zp_g16_conv_bellman.proof_encode(bin, sizeof bin, &bl, &proof))) { fail(rc, "encoding the proof"); goto out; }
    FILE *f = fopen(pos[2], "wb");
    if (!f) { fprintf(stderr, "zkpipe prove: %s: %s\n", pos[2], strerror(errno)); goto out; }
    size_t wr = fwrite(bin, 1, bl, f);
    if (fclose(f) != 0 || wr != bl) { fprintf(stderr, "zkpipe prove: %s: write failed\n", pos[2]); goto out; }
    size_t npub = ab.v.inp_assignment_size - 1;
    sig = calloc(npub + 1, sizeof *sig);
    if (!sig) { fail(-ENOMEM, "public signals"); goto out; }
    for (size_t i = 0; i < npub; i++)
        zp_fr_bls12_381_to_dec(sig[i], sizeof sig[i], &ab.v.inp_assignment_data[i + 1]);
    if ((rc = zp_public_json_write(pos[3], sig, npub))) { fail(rc, "writing the public signals"); goto out; }
    static const char *const sg[] = {"skipped", "checked", "record"};
    if (json)
        printf("{\"proof\": \"%s\", \"public\": \"%s\", \"format\": \"bellman\", \"key_subgroup\": \"%s\", "
               "\"key_record_written\": %s, \"seconds\": {\"load\": %.6f, "
               "\"synth\": %.6f, \"ntt\": %.6f, \"msm_g1\": %.6f, \"msm_a\": %.6f, \"msm_b1\": %.6f, \"msm_l_h\": %.6f, "
               "\"msm_g2\": %.6f, \"check\": %.6f, \"prove\": %.6f, "
               "\"total\": %.6f}}\n", pos[2], pos[3], sg[bk.subgroup % 3], bk.record_written ? "true" : "false",
               (t1 - t0) / 1e9, (t2 - t1) / 1e9, tm.ntt_ns / 1e9,
               (tm.msm_a_ns + tm.msm_b1_ns + tm.msm_lh_ns) / 1e9, tm.msm_a_ns / 1e9, tm.msm_b1_ns / 1e9,
               tm.msm_lh_ns / 1e9, tm.msm_b2_ns / 1e9, tm.check_ns / 1e9,
               tm.total_ns / 1e9, (zp_now_ns() - t0) / 1e9);
    ret = 0;
out:
    free(sig);
    zp_pool_destroy(&pool);
    zp_g16_assign_free(&ab);
    zp_r1cs_close(&r1);
    zp_wtns_close(&wt);
    if (key_open) zp_bkey_close(&bk);
    return ret;
}
