/* verify.c - `zkpipe verify <verification_key.json|circuit.zkey> <public.json> <proof.json>`
 * and `zkpipe verify <circuit.vk|circuit.params> <public.json> <proof.bin>` (bellman, issue 29):
 * the Groth16 check e(A,B) = e(alpha,beta)·e(IC(pub),gamma)·e(C,delta) (one 4-pairing product).
 * The first argument may be a .zkey (recognised by its "zkey" magic): the verification key is
 * then taken from its header and IC section.
 * Exit: 0 valid ("OK!"), 1 invalid (pairing fails, or a proof point off the curve / outside the
 * subgroup: snarkjs's "Proof commitments are not valid"), 2 bad input (unreadable or malformed
 * files, public count != nPublic, public value >= r, curve mismatch), usage errors.
 * A bellman key (no magic: lib/fmt/bellman.h zp_key_format_sniff) takes bellman's 192-byte
 * Proof::write binary; its IC count must be the number of public inputs + 1 (IC_0 for ONE), else
 * bad input naming the key's ic. A proof point that does not decode (or is the identity, which
 * bellman's Proof::read refuses) is an invalid proof (exit 1).
 * Tests: tests/oracle/test_prove.sh, tests/bellman_cli.sh */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/fmt/bellman.h"
#include "lib/fmt/fmt.h"
#include "lib/groth16/groth16.h"
#include "lib/util/util.h"

static int bad(int rc, const char *what)
{
    const char *m = zp_err_msg();
    fprintf(stderr, "zkpipe verify: %s: %s%s%s\n", what, zp_strerror(rc), *m ? ": " : "", m);
    return 2;
}

static bool is_zkey(const char *path)
{
    char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    return n == 4 && !memcmp(magic, "zkey", 4);
}

/* the verifying key of a bellman .vk / .params; n_ic >= 1 */
static int vk_from_bellman(zp_g16_vk_t *vk, const char *path)
{
    zp_bkey_t k;
    int rc = zp_bkey_open(&k, path, ZP_BKEY_VK_ONLY);
    if (rc) return rc;
    if (k.n_ic == 0) {
        zp_bkey_close(&k);
        return zp_err_set(ZP_EFORMAT, "%s: ic: 0 points (IC_0 for ONE is required)", path);
    }
    memset(vk, 0, sizeof *vk);
    vk->curve = ZP_CURVE_BLS12_381;
    vk->n_public = k.n_ic - 1;
    vk->alpha1.bls12_381 = k.alpha_g1;
    vk->beta2.bls12_381 = k.beta_g2;
    vk->gamma2.bls12_381 = k.gamma_g2;
    vk->delta2.bls12_381 = k.delta_g2;
    vk->ic = calloc(k.n_ic, sizeof *vk->ic);
    if (!vk->ic) {
        zp_bkey_close(&k);
        return zp_err_set(-ENOMEM, "%s: ic: %u points", path, k.n_ic);
    }
    for (uint32_t i = 0; i < k.n_ic; i++) vk->ic[i].bls12_381 = k.ic[i];
    zp_bkey_close(&k);
    return 0;
}

/* bellman's 192-byte proof; 2 bad input, 1 invalid encoding, 0 read */
static int bellman_proof(zp_g16_proof_t *proof, const char *path)
{
    uint8_t buf[ZP_BPROOF_SIZE + 1];
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "zkpipe verify: reading the proof: %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n != ZP_BPROOF_SIZE) {
        fprintf(stderr, "zkpipe verify: %s: %s%zu bytes, a bellman proof (Proof::write) has %d\n", path,
                n > ZP_BPROOF_SIZE ? "more than " : "", n > ZP_BPROOF_SIZE ? (size_t)ZP_BPROOF_SIZE : n, ZP_BPROOF_SIZE);
        return 2;
    }
    zp_bproof_t bp;
    if (zp_bproof_read(&bp, buf)) {
        fprintf(stderr, "zkpipe verify: invalid proof: %s: %s\n", path, zp_err_msg());
        return 1;
    }
    memset(proof, 0, sizeof *proof);
    proof->curve = ZP_CURVE_BLS12_381;
    proof->a.bls12_381 = bp.a;
    proof->b.bls12_381 = bp.b;
    proof->c.bls12_381 = bp.c;
    return 0;
}

int zp_cmd_verify(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: zkpipe verify <verification_key.json|circuit.zkey> <public.json> <proof.json>\n"
               "       zkpipe verify <circuit.vk|circuit.params> <public.json> <proof.bin>   (bellman, BLS12-381)\n");
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: zkpipe verify <verification_key.json|circuit.zkey> <public.json> <proof.json>\n"
               "       zkpipe verify <circuit.vk|circuit.params> <public.json> <proof.bin>   (bellman, BLS12-381)\n");
        return 2;
    }
    int ret = 2, rc;
    zp_g16_vk_t vk = {0};
    char (*sig)[100] = NULL;
    size_t nsig = 0;
    zp_scalar_t *pub = NULL;

    zp_keyfmt_t kf = ZP_KEYFMT_UNKNOWN;
    bool bellman = !is_zkey(argv[1]) && !zp_key_format_of_file(&kf, argv[1]) && kf == ZP_KEYFMT_BELLMAN;
    if (bellman) {
        if ((rc = vk_from_bellman(&vk, argv[1]))) { bad(rc, "reading the verifying key"); goto out; }
    } else if (is_zkey(argv[1])) {
        zp_zkey_t z;
        if ((rc = zp_zkey_open(&z, argv[1]))) { bad(rc, "reading the proving key"); goto out; }
        rc = zp_g16_vk_from_zkey(&vk, &z);
        zp_zkey_close(&z);
        if (rc) { bad(rc, "verification key from the zkey"); goto out; }
    } else {
        zp_vk_json_t vj;
        if ((rc = zp_vk_json_read(&vj, argv[1]))) { bad(rc, "reading the verification key"); goto out; }
        rc = zp_g16_vk_from_json(&vk, &vj);
        zp_vk_json_free(&vj);
        if (rc) { bad(rc, "verification key"); goto out; }
    }
    if ((rc = zp_public_json_read(&sig, &nsig, argv[2]))) { bad(rc, "reading the public signals"); goto out; }
    pub = calloc(nsig + 1, sizeof *pub);
    if (!pub) { bad(-ENOMEM, "public signals"); goto out; }
    for (size_t i = 0; i < nsig; i++)
        if ((rc = zp_g16_scalar_from_dec(&pub[i], vk.curve, sig[i]))) {
            fprintf(stderr, "zkpipe verify: public signal %zu: %s\n", i, zp_err_msg());
            goto out;
        }
    if (bellman && nsig != vk.n_public) {
        fprintf(stderr, "zkpipe verify: %s: ic has %u points (%u public inputs + ONE), %s has %zu public signals\n",
                argv[1], vk.n_public + 1, vk.n_public, argv[2], nsig);
        goto out;
    }
    zp_g16_proof_t proof;
    if (bellman) {
        if ((ret = bellman_proof(&proof, argv[3]))) goto out;
        ret = 2;
        goto check;
    }
    zp_proof_json_t pj;
    if ((rc = zp_proof_json_read(&pj, argv[3]))) { bad(rc, "reading the proof"); goto out; }
    if (pj.curve == ZP_CURVE_NONE) pj.curve = vk.curve;   /* snarkjs takes the curve from the vk */
    if (pj.curve != vk.curve) {
        fprintf(stderr, "zkpipe verify: the proof is for %s, the verification key for %s\n", zp_curve_name(pj.curve),
                zp_curve_name(vk.curve));
        goto out;
    }
    if ((rc = zp_g16_proof_from_json(&proof, &pj))) {
        fprintf(stderr, "zkpipe verify: invalid proof: %s\n", zp_err_msg());
        ret = 1;
        goto out;
    }
check:
    rc = zp_g16_verify(&vk, pub, nsig, &proof);
    if (rc == 0) {
        printf("OK!\n");
        ret = 0;
    } else if (rc == ZP_EVERIFY) {
        fprintf(stderr, "zkpipe verify: Invalid proof\n");
        ret = 1;
    } else {
        bad(rc, "verifying");
    }
out:
    free(pub);
    free(sig);
    zp_g16_vk_free(&vk);
    return ret;
}
