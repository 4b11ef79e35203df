/* test_testkey.c - the INSECURE test key generator (lib/groth16/testkey.h) against our own
 * readers, prover and verifier: refusal without insecure_known_tau (and nothing written), bad
 * parameters, then for both curves and several sizes / public counts: the zkey, r1cs and wtns
 * parse with every point checked, each witness satisfies the r1cs, proofs made over the key
 * verify with the key's vk and with verification_key.json, a wrong public signal and a
 * changed witness are rejected, the same seed gives the same bytes, given toxic waste is used.
 * snarkjs's view of these keys: tests/oracle/test_testkey.sh. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/groth16/groth16.h"
#include "lib/groth16/testkey.h"
#define TEST_SEED 0x7e57c0de5eedULL
#include "test_common.h"

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, ".."))) n++;
    if (d) closedir(d);
    return n;
}

static void test_refusal(const char *dir)
{
    zp_testkey_cfg_t c = {.curve = ZP_CURVE_BN254, .power = 4, .n_public = 1, .n_witness = 1, .out_dir = dir};
    int rc = zp_testkey_write(&c, NULL, NULL);
    CHECK(rc == ZP_ESTATE);
    CHECK(strstr(zp_err_msg(), "INSECURE") != NULL);
    CHECK(count_files(dir) == 0);
    c.insecure_known_tau = true;
    c.power = 1;
    CHECK(zp_testkey_write(&c, NULL, NULL) == ZP_ETOOBIG);
    c.power = 27;
    CHECK(zp_testkey_write(&c, NULL, NULL) == ZP_ETOOBIG);
    c.power = 4;
    c.n_public = 15;   /* needs M >= 1 constraint: K + 2 <= 16 */
    CHECK(zp_testkey_write(&c, NULL, NULL) == ZP_ETOOBIG);
    c.n_public = 1;
    c.n_witness = 0;
    CHECK(zp_testkey_write(&c, NULL, NULL) == ZP_ETOOBIG);
    c.n_witness = 1;
    c.curve = ZP_CURVE_NONE;
    CHECK(zp_testkey_write(&c, NULL, NULL) == ZP_ECURVE);
    CHECK(count_files(dir) == 0);
}

/* prove witness `wname` over dir's key; checks r1cs satisfaction, both verifiers, a bad public */
static void prove_verify(const char *dir, const char *wname, zp_curve_id_t curve, unsigned K, zp_pool_t *pool,
                         zp_backend_t *be)
{
    char p[1200];
    zp_zkey_t z;
    zp_g16_key_t k;
    zp_r1cs_t r1;
    zp_wtns_t wt;
    zp_scalar_t *w = NULL;
    snprintf(p, sizeof p, "%s/circuit.zkey", dir);
    if (zp_zkey_open(&z, p)) {
        fprintf(stderr, "zkey: %s\n", zp_err_msg());
        fails++;
        return;
    }
    CHECK(z.curve == curve && z.n_public == K && z.domain_size * 2 == 2 * (z.n_vars - 1));
    CHECK(zp_zkey_check_points(&z) == 0);
    int rc = zp_g16_key_load_pool(&k, &z, NULL, 0, pool);   /* every point on its curve, header in G */
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "key load: %s\n", zp_err_msg());
    snprintf(p, sizeof p, "%s/circuit.r1cs", dir);
    CHECK(zp_r1cs_open(&r1, p) == 0);
    CHECK(r1.n_wires == z.n_vars && r1.n_pub_in == K && r1.n_constraints == z.domain_size - K - 1);
    snprintf(p, sizeof p, "%s/%s", dir, wname);
    CHECK(zp_wtns_open(&wt, p) == 0);
    CHECK(zp_check_wtns_zkey(&wt, &z) == 0);
    CHECK(zp_g16_witness_load(&w, &wt) == 0);
    if (rc || !w) goto out;
    CHECK(zp_backend_cpu.load_key(be, &k) == 0);
    zp_g16_proof_t proof;
    rc = zp_g16_prove(&proof, &k, w, &r1, NULL, NULL, &zp_backend_cpu, be, pool, NULL);   /* r1cs checked */
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "prove %s: %s: %s\n", dir, zp_strerror(rc), zp_err_msg());
    zp_g16_vk_t vk, vkj;
    zp_vk_json_t vj;
    CHECK(zp_g16_vk_from_key(&vk, &k) == 0);
    CHECK(zp_g16_verify(&vk, w + 1, K, &proof) == 0);
    snprintf(p, sizeof p, "%s/verification_key.json", dir);
    CHECK(zp_vk_json_read(&vj, p) == 0);
    CHECK(zp_g16_vk_from_json(&vkj, &vj) == 0);
    CHECK(vkj.n_public == K && zp_g16_verify(&vkj, w + 1, K, &proof) == 0);
    if (K) {
        zp_scalar_t *bad = malloc(K * sizeof *bad);
        memcpy(bad, w + 1, K * sizeof *bad);
        bad[K - 1].l[0] ^= 1;
        CHECK(zp_g16_verify(&vkj, bad, K, &proof) == ZP_EVERIFY);
        free(bad);
    }
    /* a changed internal signal no longer satisfies the r1cs (the check names a constraint) */
    w[z.n_vars / 2].l[0] ^= 2;
    rc = zp_g16_prove(&proof, &k, w, &r1, NULL, NULL, &zp_backend_cpu, be, pool, NULL);
    CHECK(rc == ZP_EUNSAT);
    zp_g16_vk_free(&vk);
    zp_g16_vk_free(&vkj);
    zp_vk_json_free(&vj);
out:
    free(w);
    zp_wtns_close(&wt);
    zp_r1cs_close(&r1);
    zp_g16_key_close(&k);
    zp_zkey_close(&z);
}

int main(void)
{
    char tmpl[] = "/tmp/zp-test-testkey.XXXXXX";
    char *root = mkdtemp(tmpl);
    if (!root) return 1;
    char dir[1100], dir2[1100];
    snprintf(dir, sizeof dir, "%s/k", root);
    snprintf(dir2, sizeof dir2, "%s/k2", root);
    mkdir(dir, 0755);
    test_refusal(dir);
    zp_pool_t *pool = zp_pool_new(2);
    zp_backend_t *be = NULL;
    zp_backend_cfg_t bcfg = {.threads = 2};
    CHECK(zp_backend_cpu.open(&be, &bcfg) == 0);
    static const struct { zp_curve_id_t c; unsigned p, k, nw; } cases[] = {
        {ZP_CURVE_BN254, 4, 1, 1},      {ZP_CURVE_BN254, 5, 0, 1},      {ZP_CURVE_BN254, 7, 3, 2},
        {ZP_CURVE_BLS12_381, 4, 1, 1},  {ZP_CURVE_BLS12_381, 6, 0, 1},  {ZP_CURVE_BLS12_381, 8, 2, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zp_testkey_cfg_t c = {.curve = cases[i].c, .power = cases[i].p, .n_public = cases[i].k,
                              .n_witness = cases[i].nw, .write_r1cs = true, .insecure_known_tau = true,
                              .out_dir = dir, .has_seed = true, .seed = 1000 + i};
        zp_testkey_times_t t;
        int rc = zp_testkey_write(&c, pool, &t);
        CHECK(rc == 0);
        if (rc) {
            fprintf(stderr, "testkey case %zu: %s\n", i, zp_err_msg());
            continue;
        }
        prove_verify(dir, "witness.wtns", c.curve, c.n_public, pool, be);
        if (c.n_witness > 1) {
            char a[1200], b[1200];
            snprintf(a, sizeof a, "%s/witness-0.wtns", dir);
            snprintf(b, sizeof b, "%s/witness-1.wtns", dir);
            size_t la, lb, l0;
            char *wa = test_slurp(a, &la), *wb = test_slurp(b, &lb);
            snprintf(a, sizeof a, "%s/witness.wtns", dir);
            char *w0 = test_slurp(a, &l0);
            CHECK(wa && wb && w0 && la == lb && l0 == la && memcmp(wa, wb, la) != 0 && memcmp(wa, w0, la) == 0);
            free(wa);
            free(wb);
            free(w0);
            prove_verify(dir, "witness-1.wtns", c.curve, c.n_public, pool, be);
        }
    }
    /* same seed, same bytes; given toxic waste lands in toxic_waste.json */
    zp_testkey_cfg_t c = {.curve = ZP_CURVE_BN254, .power = 4, .n_public = 2, .n_witness = 1,
                          .insecure_known_tau = true, .out_dir = dir, .has_seed = true, .seed = 42,
                          .has_tau = true, .tau = {{123456789, 0, 0, 0}}, .has_delta = true, .delta = {{1, 0, 0, 0}}};
    CHECK(zp_testkey_write(&c, NULL, NULL) == 0);
    mkdir(dir2, 0755);
    c.out_dir = dir2;
    CHECK(zp_testkey_write(&c, pool, NULL) == 0);
    char pa[1200], pb[1200];
    snprintf(pa, sizeof pa, "%s/circuit.zkey", dir);
    snprintf(pb, sizeof pb, "%s/circuit.zkey", dir2);
    size_t la = 0, lb = 0;
    char *za = test_slurp(pa, &la), *zb = test_slurp(pb, &lb);
    CHECK(za && zb && la == lb && memcmp(za, zb, la) == 0);
    free(za);
    free(zb);
    snprintf(pa, sizeof pa, "%s/circuit.r1cs", dir2);
    CHECK(access(pa, F_OK) != 0);   /* write_r1cs false */
    snprintf(pa, sizeof pa, "%s/toxic_waste.json", dir2);
    char *tx = test_slurp(pa, NULL);
    CHECK(tx && strstr(tx, "\"tau\": \"123456789\"") && strstr(tx, "\"delta\": \"1\"") && strstr(tx, "INSECURE"));
    free(tx);
    zp_backend_cpu.close(&be);
    zp_pool_destroy(&pool);
    test_rm_dir(dir);
    test_rm_dir(dir2);
    rmdir(root);
    return fails ? (fprintf(stderr, "testkey: %d failure(s)\n", fails), 1) : (printf("testkey: ok\n"), 0);
}
