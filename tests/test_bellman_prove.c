/* test_bellman_prove.c - the prover with bellman's conventions (lib/groth16/assignment.h)
 * against upstream bellman 0.14's own output (tests/fixtures/bellman/<name>/, README.md there):
 *   - bellman's roots: ROOT_OF_UNITY of zkcrypto/bls12_381 at 2^32, primitive at each size;
 *   - zp_g16_assign_from_r1cs(circuit.r1cs, witness.wtns) == dump/ (a, b, c, inp, aux and the
 *     three density bitmaps), byte for byte, with the counts and popcounts of meta.json;
 *   - the proof at r = 5, s = 9 == proof_r5_s9.bin byte for byte; a proof with fresh r, s
 *     passes the pairing check and differs; a tampered proof fails it;
 *   - bad input: popcount, bit length, |L|, |A|, |B|, |IC|, |H| disagreeing; a witness that
 *     does not satisfy the r1cs (ZP_EUNSAT naming the constraint); the conventions table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_slurp.h"
#include "lib/fmt/bellman.h"
#include "lib/groth16/assignment.h"
#include "lib/ntt/ntt.h"
#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #c, zp_err_msg()); exit(1); } } while (0)

/* dir/name, whole (tests/test_slurp.h); a missing fixture ends the test */
static uint8_t *slurp(const char *dir, const char *name, size_t *len)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    char *b = test_slurp(p, len);
    if (!b) { fprintf(stderr, "cannot read %s\n", p); exit(1); }
    return (uint8_t *)b;
}

static void same_bytes(const char *dir, const char *name, const void *mine, size_t len)
{
    size_t n;
    uint8_t *ref = slurp(dir, name, &n);
    if (n != len || memcmp(ref, mine, len)) {
        size_t i = 0;
        while (i < n && i < len && ref[i] == ((const uint8_t *)mine)[i]) i++;
        fprintf(stderr, "%s/%s: %zu bytes, mine %zu; first difference at byte %zu\n", dir, name, n, len, i);
        exit(1);
    }
    free(ref);
}

static void test_roots(void)
{
    /* zkcrypto/bls12_381 scalar.rs ROOT_OF_UNITY (standard form limbs, Scalar::from_raw) */
    static const uint64_t root32[4] = {0x3829971F439F0D2Bull, 0xB63683508C2280B9ull, 0xD09B681922C813B4ull,
                                       0x16A2A19EDFE81F20ull};
    zp_fr_bls12_381_t w, x, neg1;
    CHECK(zp_ntt_bls12_381_root_bellman(&w, 32) == 0);
    zp_fr_bls12_381_from_mont(&x, &w);
    CHECK(!memcmp(x.l, root32, sizeof root32));
    CHECK(zp_ntt_bls12_381_root_bellman(&w, 33) == -EINVAL);
    zp_fr_bls12_381_neg(&neg1, &zp_fr_bls12_381_one);
    for (unsigned k = 1; k <= 32; k += 7) {
        CHECK(zp_ntt_bls12_381_root_bellman(&w, k) == 0);
        x = w;
        for (unsigned i = 1; i < k; i++) zp_fr_bls12_381_sqr(&x, &x);
        CHECK(zp_fr_bls12_381_eq(&x, &neg1));   /* order exactly 2^k */
    }
    /* a domain on that root round-trips */
    zp_ntt_bls12_381_domain_t d;
    CHECK(zp_ntt_bls12_381_root_bellman(&w, 6) == 0);
    CHECK(zp_ntt_bls12_381_domain_init_root(&d, 6, NULL, &w) == 0);
    zp_fr_bls12_381_t v[64], v0[64];
    for (int i = 0; i < 64; i++) zp_fr_bls12_381_set_u64(&v[i], (uint64_t)i * i + 3);
    memcpy(v0, v, sizeof v);
    zp_ntt_bls12_381_forward(&d, v, NULL);
    /* X_1 = sum x_k w^k */
    zp_fr_bls12_381_t acc = {{0}}, p = zp_fr_bls12_381_one, t;
    for (int i = 0; i < 64; i++) {
        zp_fr_bls12_381_mul(&t, &v0[i], &p);
        zp_fr_bls12_381_add(&acc, &acc, &t);
        zp_fr_bls12_381_mul(&p, &p, &w);
    }
    CHECK(zp_fr_bls12_381_eq(&acc, &v[1]));
    zp_ntt_bls12_381_inverse(&d, v, NULL);
    CHECK(!memcmp(v, v0, sizeof v));
    zp_ntt_bls12_381_domain_close(&d);
    /* the conventions table */
    CHECK(zp_g16_conv(ZP_G16_CONV_BELLMAN)->h_len(512) == 511);
    CHECK(zp_g16_conv(ZP_G16_CONV_SNARKJS)->h_len(512) == 512);
    CHECK(zp_g16_conv(ZP_G16_CONV_BELLMAN)->compact_queries && !zp_g16_conv(ZP_G16_CONV_SNARKJS)->compact_queries);
    CHECK(zp_g16_conv(ZP_G16_CONV_SNARKJS)->root(&x, 6) == 0 && !zp_fr_bls12_381_eq(&x, &w));
    CHECK(zp_g16_conv(ZP_G16_CONV_BELLMAN)->root(&x, 6) == 0 && zp_fr_bls12_381_eq(&x, &w));
    printf("bellman roots: ok\n");
}

static void test_bad(const zp_g16_bkey_t *k0, const zp_g16_assignment_t *as0)
{
    zp_g16_proof_t pr;
    zp_scalar_t r = {{5}}, s = {{9}};
    zp_g16_assignment_t as = *as0;
    as.a_aux_popcount++;
    CHECK(zp_g16_bellman_prove(&pr, k0, &as, &r, &s, NULL, NULL) == ZP_EFORMAT);
    CHECK(strstr(zp_err_msg(), "popcount"));
    as = *as0;
    as.b_inp_bit_len++;
    CHECK(zp_g16_bellman_prove(&pr, k0, &as, &r, &s, NULL, NULL) == ZP_EMISMATCH);
    CHECK(strstr(zp_err_msg(), "b_inp_bit_len"));
    as = *as0;
    as.a = NULL;
    CHECK(zp_g16_bellman_prove(&pr, k0, &as, &r, &s, NULL, NULL) == ZP_EFORMAT);
    zp_g16_bkey_t k = *k0;
    k.n_l--;
    CHECK(zp_g16_bellman_prove(&pr, &k, as0, &r, &s, NULL, NULL) == ZP_EMISMATCH);
    CHECK(strstr(zp_err_msg(), "|L|"));
    k = *k0;
    k.n_a++;
    CHECK(zp_g16_bellman_prove(&pr, &k, as0, &r, &s, NULL, NULL) == ZP_EMISMATCH);
    CHECK(strstr(zp_err_msg(), "|A|"));
    k = *k0;
    k.n_b_g2--;
    CHECK(zp_g16_bellman_prove(&pr, &k, as0, &r, &s, NULL, NULL) == ZP_EMISMATCH);
    k = *k0;
    k.n_ic++;
    CHECK(zp_g16_bellman_prove(&pr, &k, as0, &r, &s, NULL, NULL) == ZP_EMISMATCH);
    CHECK(strstr(zp_err_msg(), "IC"));
    k = *k0;
    k.n_h = 3;
    CHECK(zp_g16_bellman_prove(&pr, &k, as0, &r, &s, NULL, NULL) == ZP_EMISMATCH);
    CHECK(strstr(zp_err_msg(), "|H|"));
    zp_scalar_t big = {{~0ull, ~0ull, ~0ull, ~0ull}};
    CHECK(zp_g16_bellman_prove(&pr, k0, as0, &big, &s, NULL, NULL) == ZP_EFORMAT);
    /* the two stages on their own: the same proof; a corrupt partial result is refused */
    zp_g1_any_t part[ZP_G16_NMSM];
    uint8_t b1[192], b2[192];
    CHECK(zp_g16_bellman_prove(&pr, k0, as0, &r, &s, NULL, NULL) == 0 && zp_g16_proof_to_bin(b1, &pr) == 0);
    CHECK(zp_g16_bellman_prove_g1(part, k0, as0, 0, NULL, NULL) == 0);
    CHECK(zp_g16_bellman_finalize(&pr, k0, as0, part, &r, &s, 0, NULL, NULL) == 0 && zp_g16_proof_to_bin(b2, &pr) == 0);
    CHECK(!memcmp(b1, b2, 192));
    zp_g1_bls12_381_dbl(&part[ZP_G16_C].bls12_381, &part[ZP_G16_C].bls12_381);
    CHECK(zp_g16_bellman_finalize(&pr, k0, as0, part, &r, &s, 0, NULL, NULL) == ZP_EVERIFY);
    /* an assignment that fits the key's sizes but not the circuit: the pairing check refuses */
    as = *as0;
    zp_fr_bls12_381_t *c2 = malloc(as.abc_size * sizeof *c2);
    CHECK(c2);
    memcpy(c2, as.c, as.abc_size * sizeof *c2);
    zp_fr_bls12_381_add(&c2[0], &c2[0], &zp_fr_bls12_381_one);
    as.c = c2;
    CHECK(zp_g16_bellman_prove(&pr, k0, &as, &r, &s, NULL, NULL) == ZP_EVERIFY);
    uint8_t zero[sizeof pr];
    memset(zero, 0, sizeof zero);
    CHECK(!memcmp(&pr, zero, sizeof pr));
    free(c2);
}

static void test_fixture(const char *dir, const char *name, bool bad)
{
    char p[2100];
    zp_r1cs_t r1 = {0};
    zp_wtns_t wt = {0};
    snprintf(p, sizeof p, "%s/circuit.r1cs", dir);
    CHECK(zp_r1cs_open(&r1, p) == 0);
    snprintf(p, sizeof p, "%s/witness.wtns", dir);
    CHECK(zp_wtns_open(&wt, p) == 0);
    zp_g16_assign_buf_t ab;
    uint64_t t0 = zp_now_ns();
    CHECK(zp_g16_assign_from_r1cs(&ab, &r1, &wt, NULL) == 0);
    uint64_t t1 = zp_now_ns();
    const zp_g16_assignment_t *as = &ab.v;
    {   /* the same on a pool of 3 (chunks of constraints, atomic density bits): the same bytes */
        zp_pool_t *p3 = zp_pool_new(3);
        zp_g16_assign_buf_t ab3;
        CHECK(p3 && zp_g16_assign_from_r1cs(&ab3, &r1, &wt, p3) == 0);
        CHECK(ab3.mem_len == ab.mem_len);
        size_t fr_bytes = (3 * as->abc_size + as->inp_assignment_size + as->aux_assignment_size) * 32;
        CHECK(!memcmp(ab3.mem, ab.mem, fr_bytes));
        CHECK(!memcmp(ab3.v.a_aux_density, as->a_aux_density, (as->a_aux_bit_len + 63) / 64 * 8));
        CHECK(!memcmp(ab3.v.b_aux_density, as->b_aux_density, (as->b_aux_bit_len + 63) / 64 * 8));
        CHECK(!memcmp(ab3.v.b_inp_density, as->b_inp_density, (as->b_inp_bit_len + 63) / 64 * 8));
        CHECK(ab3.v.a_aux_popcount == as->a_aux_popcount && ab3.v.b_aux_popcount == as->b_aux_popcount);
        zp_g16_assign_free(&ab3);
        zp_pool_destroy(&p3);
    }
    char dd[2100];
    snprintf(dd, sizeof dd, "%s/dump", dir);
    same_bytes(dd, "a.bin", as->a, as->abc_size * 32);
    same_bytes(dd, "b.bin", as->b, as->abc_size * 32);
    same_bytes(dd, "c.bin", as->c, as->abc_size * 32);
    same_bytes(dd, "inp.bin", as->inp_assignment_data, as->inp_assignment_size * 32);
    same_bytes(dd, "aux.bin", as->aux_assignment_data, as->aux_assignment_size * 32);
    same_bytes(dd, "a_aux.bits", as->a_aux_density, (as->a_aux_bit_len + 63) / 64 * 8);
    same_bytes(dd, "b_inp.bits", as->b_inp_density, (as->b_inp_bit_len + 63) / 64 * 8);
    same_bytes(dd, "b_aux.bits", as->b_aux_density, (as->b_aux_bit_len + 63) / 64 * 8);
    /* the counts of meta.json */
    size_t ml;
    char *meta = (char *)slurp(dd, "meta.json", &ml);
    meta[ml] = 0;
    char want[128];
    snprintf(want, sizeof want, "\"a_aux_popcount\": %zu,", as->a_aux_popcount);
    CHECK(strstr(meta, want));
    snprintf(want, sizeof want, "\"b_inp_popcount\": %zu,", as->b_inp_popcount);
    CHECK(strstr(meta, want));
    snprintf(want, sizeof want, "\"b_aux_popcount\": %zu,", as->b_aux_popcount);
    CHECK(strstr(meta, want));
    snprintf(want, sizeof want, "\"abc_size\": %zu,", as->abc_size);
    CHECK(strstr(meta, want));
    free(meta);

    zp_bkey_t bk;
    snprintf(p, sizeof p, "%s/circuit.params", dir);
    CHECK(zp_bkey_open(&bk, p, 0) == 0);
    zp_g16_bkey_t k;
    zp_g16_bkey_from_fmt(&k, &bk);
    zp_g16_proof_t pr;
    zp_g16_bprove_times_t tm;
    zp_scalar_t r = {{5}}, s = {{9}};
    zp_pool_t *pool = zp_pool_new(2);
    CHECK(pool);
    CHECK(zp_g16_bellman_prove(&pr, &k, as, &r, &s, pool, &tm) == 0);
    uint8_t bin[192], bin2[192];
    size_t bl;
    CHECK(zp_g16_conv_bellman.proof_encode(bin, sizeof bin, &bl, &pr) == 0 && bl == 192);
    same_bytes(dir, "proof_r5_s9.bin", bin, 192);
    /* without lib/msm's 0/1 classes (scalars k + r): the same bytes */
    CHECK(zp_g16_bellman_prove_ex(&pr, &k, as, &r, &s, ZP_G16_BPROVE_NO_SPLIT, pool, NULL) == 0);
    CHECK(zp_g16_proof_to_bin(bin2, &pr) == 0 && !memcmp(bin, bin2, 192));
    CHECK(zp_g16_bellman_prove_ex(&pr, &k, as, &r, &s, ZP_G16_BPROVE_NO_ENDO, pool, NULL) == 0);
    CHECK(zp_g16_proof_to_bin(bin2, &pr) == 0 && !memcmp(bin, bin2, 192));
    /* the same through one thread: identical */
    CHECK(zp_g16_bellman_prove(&pr, &k, as, &r, &s, NULL, NULL) == 0);
    CHECK(zp_g16_proof_to_bin(bin2, &pr) == 0 && !memcmp(bin, bin2, 192));
    /* fresh r, s: verifies (checked inside), differs; verify on its own and tampered */
    CHECK(zp_g16_bellman_prove(&pr, &k, as, NULL, NULL, pool, NULL) == 0);
    CHECK(zp_g16_proof_to_bin(bin2, &pr) == 0 && memcmp(bin, bin2, 192));
    zp_g16_vk_t vk;
    CHECK(zp_g16_vk_from_bkey(&vk, &k) == 0);
    zp_scalar_t pub[8];
    CHECK(as->inp_assignment_size - 1 <= 8);
    for (size_t i = 1; i < as->inp_assignment_size; i++)
        zp_fr_bls12_381_from_mont((zp_fr_bls12_381_t *)&pub[i - 1], &as->inp_assignment_data[i]);
    CHECK(zp_g16_verify(&vk, pub, as->inp_assignment_size - 1, &pr) == 0);
    if (as->inp_assignment_size > 1) {
        pub[0].l[0] ^= 1;
        CHECK(zp_g16_verify(&vk, pub, as->inp_assignment_size - 1, &pr) == ZP_EVERIFY);
    }
    zp_g16_vk_free(&vk);
    if (bad) test_bad(&k, as);
    printf("bellman %s: assignment == dump/ (%zu constraints, A %zu/%zu aux, B %zu inp + %zu aux), proof r=5 s=9 == "
           "bellman's; synth %.1f ms, prove %.1f ms (ntt %.1f, msm A %.1f B1 %.1f B2 %.1f L+H %.1f, check %.1f)\n",
           name, as->abc_size, as->a_aux_popcount, as->aux_assignment_size, as->b_inp_popcount, as->b_aux_popcount,
           (t1 - t0) / 1e6, tm.total_ns / 1e6, tm.ntt_ns / 1e6, tm.msm_a_ns / 1e6, tm.msm_b1_ns / 1e6,
           tm.msm_b2_ns / 1e6, tm.msm_lh_ns / 1e6, tm.check_ns / 1e6);
    zp_pool_destroy(&pool);
    zp_bkey_close(&bk);

    /* a witness that does not satisfy the circuit: refused at synthesis, naming the constraint */
    if (bad) {
        uint8_t *vals = (uint8_t *)wt.values;
        size_t last = (size_t)wt.n_witness - 1;
        zp_wtns_t w2 = wt;
        uint8_t *copy = malloc((size_t)wt.n_witness * 32);
        CHECK(copy);
        memcpy(copy, vals, (size_t)wt.n_witness * 32);
        copy[last * 32] ^= 1;
        w2.values = copy;
        zp_g16_assign_buf_t bad_ab;
        CHECK(zp_g16_assign_from_r1cs(&bad_ab, &r1, &w2, NULL) == ZP_EUNSAT);
        CHECK(strstr(zp_err_msg(), "constraint"));
        zp_pool_t *p2 = zp_pool_new(2);   /* found by a chunk on the pool: the same message */
        CHECK(p2 && zp_g16_assign_from_r1cs(&bad_ab, &r1, &w2, p2) == ZP_EUNSAT);
        CHECK(strstr(zp_err_msg(), "constraint"));
        zp_pool_destroy(&p2);
        w2.n_witness--;
        CHECK(zp_g16_assign_from_r1cs(&bad_ab, &r1, &w2, NULL) == ZP_EMISMATCH);
        free(copy);
    }
    zp_g16_assign_free(&ab);
    zp_wtns_close(&wt);
    zp_r1cs_close(&r1);
}

int main(void)
{
    test_roots();
    char dir[1024];
    const char *names[] = {"chain300", "poseidon2"};
    for (int i = 0; i < 2; i++) {
        snprintf(dir, sizeof dir, "%s/bellman/%s", ZP_FIXTURES_DIR, names[i]);
        test_fixture(dir, names[i], i == 0);
    }
    printf("bellman_prove: ok\n");
    return 0;
}
