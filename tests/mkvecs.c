/* mkvecs.c ZKEY WTNS OUT [ok|row|wbig|nw|rs|rssum|rsbig] [R S] - test tool (issue 30): a pre-synthesized partition
 * (lib/fmt/vecs.h) for a snarkjs circuit, made the way a client would: w from the witness,
 * a, b, c by zp_g16_synth (what zkpipe-synth itself would put in the slot), abc_size = the
 * domain. Damaged on purpose for the bad-input tests: row (c[1] changed: a row with a * b != c),
 * wbig (w[1] = r: not canonical), nw (one value of w fewer than the key's nVars). rs: the
 * caller's blinding R, S (decimal u64; ZP_VECS_F_RS) in the file; rssum: the same with one
 * byte of r changed after the checksum (a torn r/s field); rsbig: r = the field's modulus with
 * a valid checksum (not canonical).
 * Used by tests/ipc/vectors.sh and tests/test_vecs.c's callers. Exit 0 written, 1 failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fmt/fmt.h"
#include "lib/fmt/vecs.h"
#include "lib/groth16/groth16.h"
#include "lib/util/util.h"

static int die(const char *what)
{
    fprintf(stderr, "mkvecs: %s: %s\n", what, zp_err_msg());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: mkvecs ZKEY WTNS OUT [ok|row|wbig|nw|rs|rssum|rsbig] [R S]\n");
        return 2;
    }
    const char *mode = argc > 4 ? argv[4] : "ok";
    zp_zkey_t z;
    zp_wtns_t wt;
    zp_g16_key_t k;
    if (zp_zkey_open(&z, argv[1])) return die("zkey");
    if (zp_g16_key_load(&k, &z)) return die("key");
    if (zp_wtns_open(&wt, argv[2])) return die("wtns");
    zp_scalar_t *w = NULL;
    if (zp_g16_witness_load(&w, &wt)) return die("witness");
    size_t n = k.domain_size;
    zp_scalar_t *abc = calloc(3 * n, sizeof *abc);
    if (!abc) return die("memory");
    if (zp_g16_synth(&k, w, NULL, abc, abc + n, abc + 2 * n, NULL)) return die("synth");
    unlink(argv[3]);
    zp_vecs_t v;
    uint64_t n_w = k.n_vars - (strcmp(mode, "nw") ? 0 : 1);
    if (zp_vecs_create(&v, argv[3], k.curve, n, k.n_vars) || zp_vecs_set_w(&v, n_w, k.n_public + 1, n)) return die("vectors");
    memcpy(v.a, abc, n * 32);
    memcpy(v.b, abc + n, n * 32);
    memcpy(v.c, abc + 2 * n, n * 32);
    memcpy(v.w, w, n_w * 32);
    if (!strcmp(mode, "row")) v.c[4 * 1] ^= 1;
    if (!strcmp(mode, "wbig")) memset(v.w + 4, 0xff, 32);
    if (!strncmp(mode, "rs", 2)) {
        uint64_t r[4] = {argc > 5 ? strtoull(argv[5], NULL, 10) : 5}, s[4] = {argc > 6 ? strtoull(argv[6], NULL, 10) : 9};
        if (!strcmp(mode, "rsbig"))
            memcpy(r, k.curve == ZP_CURVE_BN254 ? zp_fr_bn254_modulus.l : zp_fr_bls12_381_modulus.l, sizeof r);
        if (zp_vecs_set_rs(&v, r, s)) return die("r, s");
        if (!strcmp(mode, "rssum")) ((uint8_t *)v.map)[v.len - 64 + 3] ^= 0x10;
    }
    zp_vecs_close(&v);
    free(abc);
    free(w);
    zp_wtns_close(&wt);
    zp_g16_key_close(&k);
    zp_zkey_close(&z);
    return 0;
}
