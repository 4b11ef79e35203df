/* verify.c - `zkpipe verify <verification_key.json|circuit.zkey> <public.json> <proof.json>`:
 * the Groth16 check e(A,B) = e(alpha,beta)·e(IC(pub),gamma)·e(C,delta) (one 4-pairing product).
 * The first argument may be a .zkey (recognised by its "zkey" magic): the verification key is
 * then taken from its header and IC section.
 * Exit: 0 valid ("OK!"), 1 invalid (pairing fails, or a proof point off the curve / outside the
 * subgroup: snarkjs's "Proof commitments are not valid"), 2 bad input (unreadable or malformed
 * files, public count != nPublic, public value >= r, curve mismatch), usage errors.
 * Tests: tests/oracle/test_prove.sh */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
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

int zp_cmd_verify(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: zkpipe verify <verification_key.json|circuit.zkey> <public.json> <proof.json>\n");
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: zkpipe verify <verification_key.json|circuit.zkey> <public.json> <proof.json>\n");
        return 2;
    }
    int ret = 2, rc;
    zp_g16_vk_t vk = {0};
    char (*sig)[100] = NULL;
    size_t nsig = 0;
    zp_scalar_t *pub = NULL;

    if (is_zkey(argv[1])) {
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
    zp_proof_json_t pj;
    if ((rc = zp_proof_json_read(&pj, argv[3]))) { bad(rc, "reading the proof"); goto out; }
    if (pj.curve == ZP_CURVE_NONE) pj.curve = vk.curve;   /* snarkjs takes the curve from the vk */
    if (pj.curve != vk.curve) {
        fprintf(stderr, "zkpipe verify: the proof is for %s, the verification key for %s\n", zp_curve_name(pj.curve),
                zp_curve_name(vk.curve));
        goto out;
    }
    zp_g16_proof_t proof;
    if ((rc = zp_g16_proof_from_json(&proof, &pj))) {
        fprintf(stderr, "zkpipe verify: invalid proof: %s\n", zp_err_msg());
        ret = 1;
        goto out;
    }
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
