/* test_groth16.c - the Groth16 prover against snarkjs's own proofs, for every fixture in
 * tests/fixtures/ (or $ZP_FIXTURES):
 *   - r = s = 0: the proof JSON equals proof_rs0.json byte for byte (and proof_rs0-<i>.json for
 *     the extra witnesses), public signals equal public_rs0.json;
 *   - meta.json's fixed r, s: equals proof_rs.json;
 *   - random r, s: verifies (vk from the key, from the zkey, from verification_key.json);
 *     snarkjs's proof.json verifies; tampered proofs / public signals / binary encodings are
 *     rejected; the binary encoding round-trips;
 *   - witness-bad.wtns: rejected by synth with the r1cs (ZP_EUNSAT naming the first constraint
 *     that uses the changed wire, found here independently), and by finalize's pairing check
 *     without it (ZP_EVERIFY, no proof);
 *   - a corrupted point in the zkey is rejected by zp_g16_key_load; a zkey with its coefficient
 *     entries reversed (unsorted rows) still gives proof_rs0.json;
 *   - the backend's generic msm_g1 (a test verb, backend_test.h) against a naive sum;
 *   - prove_g1_batch (same-circuit batching) gives each job prove_g1's 4 points (test_batch).
 * Exit 77 (skip) only when there is no fixture at all. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/ec/ec.h"
#include "lib/fmt/fmt.h"
#include "lib/fmt/fmt_int.h"
#include "lib/groth16/backend_test.h"
#include "lib/groth16/groth16.h"
#include "lib/groth16/groth16_int.h"
#include "lib/util/util.h"
#include "test_slurp.h"

static int failures;
#define CHECK(c)                                                                                          \
    do {                                                                                                  \
        if (!(c)) {                                                                                       \
            fprintf(stderr, "%s:%d: [%s] CHECK(%s) failed (%s)\n", __FILE__, __LINE__, cur, #c, zp_err_msg()); \
            failures++;                                                                                   \
        }                                                                                                 \
    } while (0)
static const char *cur = "";

static bool exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* value of "key2": "..." (string) or number inside the object that follows "key1" */
static bool json_find(char *out, size_t cap, const char *text, const char *key1, const char *key2)
{
    char k[64];
    const char *p = text;
    if (key1) {
        snprintf(k, sizeof k, "\"%s\"", key1);
        if (!(p = strstr(p, k))) return false;
    }
    snprintf(k, sizeof k, "\"%s\"", key2);
    if (!(p = strstr(p, k))) return false;
    p += strlen(k);
    while (*p == ' ' || *p == ':' || *p == '\n' || *p == '"') p++;
    size_t n = 0;
    while (p[n] && p[n] != '"' && p[n] != ',' && p[n] != '\n' && p[n] != '}' && n + 1 < cap) n++;
    memcpy(out, p, n);
    out[n] = 0;
    return n > 0;
}

typedef struct {
    char dir[1024];
    zp_zkey_t z;
    zp_g16_key_t key;
    zp_backend_t *be;
    zp_pool_t *pool;
} fx_t;

static const zp_backend_ops_t *ops = &zp_backend_cpu;

static int load_witness(zp_scalar_t **w, const fx_t *fx, const char *name)
{
    char p[1200];
    zp_wtns_t wt;
    snprintf(p, sizeof p, "%s/%s", fx->dir, name);
    int rc = zp_wtns_open(&wt, p);
    if (rc) return rc;
    rc = zp_check_wtns_zkey(&wt, &fx->z);
    if (!rc) rc = zp_g16_witness_load(w, &wt);
    zp_wtns_close(&wt);
    return rc;
}

static int prove(zp_g16_proof_t *proof, fx_t *fx, const zp_scalar_t *w, const zp_r1cs_t *r1, const zp_scalar_t *r,
                 const zp_scalar_t *s)
{
    return zp_g16_prove(proof, &fx->key, w, r1, r, s, ops, fx->be, fx->pool, NULL);
}

static bool proof_json_equals(const zp_g16_proof_t *proof, const fx_t *fx, const char *name)
{
    char p[1200], buf[4096];
    zp_proof_json_t pj;
    snprintf(p, sizeof p, "%s/%s", fx->dir, name);
    size_t len;
    char *want = test_slurp(p, &len);
    if (!want) return false;
    bool ok = zp_g16_proof_to_json(&pj, proof) == 0;
    size_t n = ok ? zp_proof_json_format(buf, sizeof buf, &pj) : 0;
    ok = ok && n == len && !memcmp(buf, want, len);
    if (!ok) fprintf(stderr, "[%s] %s differs:\n got: %.*s\nwant: %s\n", cur, name, (int)n, buf, want);
    free(want);
    return ok;
}

static bool public_json_equals(const fx_t *fx, const zp_scalar_t *w, const char *name)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", fx->dir, name);
    size_t len, cap = 256 + (size_t)fx->key.n_public * 110;
    char *want = test_slurp(p, &len), *buf = malloc(cap);
    char (*sig)[100] = calloc((size_t)fx->key.n_public + 1, sizeof *sig);
    bool ok = want && buf && sig && zp_g16_public_to_json(sig, &fx->key, w) == 0;
    size_t n = ok ? zp_public_json_format(buf, cap, sig, fx->key.n_public) : 0;
    ok = ok && n == len && !memcmp(buf, want, len);
    if (!ok) fprintf(stderr, "[%s] %s differs\n", cur, name);
    free(want);
    free(buf);
    free(sig);
    return ok;
}

/* first constraint of the r1cs whose A, B or C uses wire (independent of synth.c) */
static long first_constraint_using(const zp_r1cs_t *r, uint32_t wire)
{
    size_t pos = 0;
    for (uint32_t i = 0; i < r->n_constraints; i++) {
        bool uses = false;
        for (int m = 0; m < 3; m++) {
            uint32_t nt;
            memcpy(&nt, r->constraints + pos, 4);
            pos += 4;
            for (uint32_t t = 0; t < nt; t++, pos += 4 + r->n8) {
                uint32_t wi;
                memcpy(&wi, r->constraints + pos, 4);
                if (wi == wire) uses = true;
            }
        }
        if (uses) return i;
    }
    return -1;
}

static void test_verify_paths(fx_t *fx, const zp_g16_proof_t *proof, const zp_scalar_t *w)
{
    const zp_scalar_t *pub = w + 1;
    uint32_t np = fx->key.n_public;
    zp_g16_vk_t vk, vkz, vkj;
    char p[1200];
    CHECK(zp_g16_vk_from_key(&vk, &fx->key) == 0);
    CHECK(zp_g16_vk_from_zkey(&vkz, &fx->z) == 0);
    CHECK(zp_g16_verify(&vk, pub, np, proof) == 0);
    CHECK(zp_g16_verify(&vkz, pub, np, proof) == 0);
    zp_vk_json_t vj;
    snprintf(p, sizeof p, "%s/verification_key.json", fx->dir);
    int rc = zp_vk_json_read(&vj, p);
    CHECK(rc == 0);
    if (!rc) {
        CHECK(zp_g16_vk_from_json(&vkj, &vj) == 0);
        CHECK(vkj.n_public == np);
        CHECK(zp_g16_verify(&vkj, pub, np, proof) == 0);
        zp_g16_vk_free(&vkj);
        zp_vk_json_free(&vj);
    }

    /* snarkjs's own random-r,s proof */
    zp_proof_json_t pj;
    zp_g16_proof_t sp;
    snprintf(p, sizeof p, "%s/proof.json", fx->dir);
    CHECK(zp_proof_json_read(&pj, p) == 0);
    CHECK(zp_g16_proof_from_json(&sp, &pj) == 0);
    CHECK(zp_g16_verify(&vk, pub, np, &sp) == 0);

    /* JSON round trip of ours */
    zp_g16_proof_t rt;
    CHECK(zp_g16_proof_to_json(&pj, proof) == 0);
    CHECK(zp_g16_proof_from_json(&rt, &pj) == 0);
    CHECK(!memcmp(&rt, proof, sizeof rt));

    /* tampering */
    zp_scalar_t *pub2 = calloc((size_t)np + 1, sizeof *pub2);
    if (np) {
        memcpy(pub2, pub, np * sizeof *pub2);
        /* another canonical value (a fixture may hold r-1 there: r-1 ^ 1 would be r itself) */
        if (pub2[np - 1].l[0]) pub2[np - 1].l[0]--;
        else pub2[np - 1].l[0]++;
        CHECK(zp_g16_verify(&vk, pub2, np, proof) == ZP_EVERIFY);
        pub2[np - 1] = pub[np - 1];
        pub2[0].l[3] = ~(uint64_t)0;   /* >= r: bad input */
        CHECK(zp_g16_verify(&vk, pub2, np, proof) == ZP_EFORMAT);
    }
    CHECK(zp_g16_verify(&vk, pub, np + 1, proof) == ZP_EMISMATCH);
    free(pub2);
    zp_g16_proof_t t = *proof;
    t.a = proof->c;
    t.c = proof->a;
    CHECK(zp_g16_verify(&vk, pub, np, &t) == ZP_EVERIFY);
    t = sp;                  /* snarkjs's A with our B and C */
    t.b = proof->b;
    t.c = proof->c;
    CHECK(zp_g16_verify(&vk, pub, np, &t) == ZP_EVERIFY);
    /* a JSON coordinate changed: off the curve -> rejected at parse */
    CHECK(zp_g16_proof_to_json(&pj, proof) == 0);
    size_t l = strlen(pj.c[1]);
    pj.c[1][l - 1] = pj.c[1][l - 1] == '0' ? '1' : '0';
    CHECK(zp_g16_proof_from_json(&rt, &pj) == ZP_EFORMAT);

    /* binary encoding */
    uint8_t bin[256];
    size_t bl = zp_g16_proof_bin_size(fx->key.curve);
    CHECK(bl == (fx->key.curve == ZP_CURVE_BLS12_381 ? 192u : 128u));
    CHECK(zp_g16_proof_to_bin(bin, proof) == 0);
    CHECK(zp_g16_proof_from_bin(&rt, fx->key.curve, bin) == 0);
    CHECK(!memcmp(&rt, proof, sizeof rt));
    for (size_t off = 0; off < bl; off += bl / 4) {
        bin[off + 5] ^= 0x10;
        int r2 = zp_g16_proof_from_bin(&rt, fx->key.curve, bin);
        CHECK(r2 == ZP_EFORMAT || (r2 == 0 && zp_g16_verify(&vk, pub, np, &rt) == ZP_EVERIFY));
        bin[off + 5] ^= 0x10;
    }
    zp_g16_vk_free(&vk);
    zp_g16_vk_free(&vkz);
}

static void test_bad_witness(fx_t *fx)
{
    char p[1200], *meta;
    snprintf(p, sizeof p, "%s/witness-bad.wtns", fx->dir);
    if (!exists(p)) return;
    snprintf(p, sizeof p, "%s/meta.json", fx->dir);
    meta = test_slurp(p, NULL);
    char wire_s[32];
    CHECK(meta && json_find(wire_s, sizeof wire_s, meta, "witness_bad", "wire"));
    free(meta);
    uint32_t wire = (uint32_t)strtoul(wire_s, NULL, 10);

    zp_r1cs_t r1;
    snprintf(p, sizeof p, "%s/circuit.r1cs", fx->dir);
    if (zp_r1cs_open(&r1, p)) {
        CHECK(!"r1cs opens");
        return;
    }
    CHECK(zp_check_r1cs_zkey(&r1, &fx->z) == 0);
    long want = first_constraint_using(&r1, wire);
    CHECK(want >= 0);
    zp_scalar_t *w = NULL, *wg = NULL;
    CHECK(load_witness(&w, fx, "witness-bad.wtns") == 0);
    CHECK(load_witness(&wg, fx, "witness.wtns") == 0);
    size_t n = fx->key.domain_size;
    zp_scalar_t *buf = calloc(3 * n, sizeof *buf);
    if (w && wg && buf) {
        int rc = zp_g16_synth(&fx->key, w, &r1, buf, buf + n, buf + 2 * n, fx->pool);
        CHECK(rc == ZP_EUNSAT);
        char expect[64];
        snprintf(expect, sizeof expect, "constraint %ld ", want);
        CHECK(strstr(zp_err_msg(), expect) != NULL);
        if (!strstr(zp_err_msg(), expect)) fprintf(stderr, "  message: %s (want %s)\n", zp_err_msg(), expect);
        /* single thread gives the same index */
        CHECK(zp_g16_synth(&fx->key, w, &r1, buf, buf + n, buf + 2 * n, NULL) == ZP_EUNSAT);
        CHECK(strstr(zp_err_msg(), expect) != NULL);
        CHECK(zp_g16_synth(&fx->key, wg, &r1, buf, buf + n, buf + 2 * n, fx->pool) == 0);
        /* without the r1cs the pairing self-check refuses it */
        zp_g16_proof_t proof;
        memset(&proof, 0x5a, sizeof proof);
        CHECK(prove(&proof, fx, w, NULL, NULL, NULL) == ZP_EVERIFY);
        zp_g16_proof_t zero;
        memset(&zero, 0, sizeof zero);
        CHECK(!memcmp(&proof, &zero, sizeof proof));
        /* and with it, before any MSM */
        CHECK(prove(&proof, fx, w, &r1, NULL, NULL) == ZP_EUNSAT);
    }
    free(buf);
    free(w);
    free(wg);
    zp_r1cs_close(&r1);
}

static void test_corrupt_key(fx_t *fx)
{
    size_t len;
    char p[1200];
    snprintf(p, sizeof p, "%s/circuit.zkey", fx->dir);
    uint8_t *buf = (uint8_t *)test_slurp(p, &len);
    if (!buf) return;
    zp_zkey_t z;
    zp_g16_key_t k;
    const struct { const uint8_t *const *sec; size_t idx; const char *what; } cases[] = {
        {&fx->z.points_a, 1, "pointsA"}, {&fx->z.points_h, 3, "pointsH"}, {&fx->z.points_b2, 0, "pointsB2"},
        {&fx->z.delta1, 0, "delta1"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t psz = cases[c].sec == &fx->z.points_b2 ? zp_g2a_size(fx->key.curve) : zp_g1a_size(fx->key.curve);
        size_t count = cases[c].sec == &fx->z.points_h ? fx->z.domain_size
                     : cases[c].sec == &fx->z.delta1 ? 1 : fx->z.n_vars;
        size_t idx = cases[c].idx < count ? cases[c].idx : count - 1;  /* small keys: nVars may be 1 */
        size_t off = (size_t)(*cases[c].sec - fx->z.f.map) + idx * psz + psz - 3; /* inside y */
        buf[off] ^= 0x01;
        CHECK(zp_zkey_parse(&z, buf, len, "corrupt.zkey") == 0);
        int rc = zp_g16_key_load(&k, &z);
        CHECK(rc == ZP_EFORMAT);
        CHECK(strstr(zp_err_msg(), cases[c].what) != NULL);
        if (!rc) zp_g16_key_close(&k);
        rc = zp_g16_key_load_inplace(&k, &z, NULL);       /* checked in place as well */
        CHECK(rc == ZP_EFORMAT);
        CHECK(strstr(zp_err_msg(), cases[c].what) != NULL);
        if (!rc) zp_g16_key_close(&k);
        zp_zkey_close(&z);
        buf[off] ^= 0x01;
    }
    /* G1 arrays: x + q, the same residue but
     * not below q (so on the curve all the same), is refused naming the array; a point set
     * to (0, 0), infinity, is accepted there; (0, 1) is not on the curve */
    if (fx->z.n_vars > 2) {
        size_t psz = zp_g1a_size(fx->key.curve), fe = psz / 2;
        size_t off = (size_t)(fx->z.points_b1 - fx->z.f.map) + 2 * psz;
        uint8_t save[128];
        memcpy(save, buf + off, psz);
        uint32_t n8 = 0;
        const uint8_t *q = zp_fmt_curve_q(fx->z.curve, &n8);
        CHECK(q && n8 == fe);
        unsigned carry = 0;
        for (size_t i = 0; q && i < fe; i++) {   /* x += q, little-endian bytes */
            carry += (unsigned)buf[off + i] + q[i];
            buf[off + i] = (uint8_t)carry;
            carry >>= 8;
        }
        CHECK(carry == 0);
        CHECK(zp_zkey_parse(&z, buf, len, "noncanonical.zkey") == 0);
        int rc = zp_g16_key_load_inplace(&k, &z, NULL);
        CHECK(rc == ZP_EFORMAT && strstr(zp_err_msg(), "pointsB1[2]") != NULL);
        if (!rc) zp_g16_key_close(&k);
        zp_zkey_close(&z);
        memset(buf + off, 0, psz);
        CHECK(zp_zkey_parse(&z, buf, len, "infinity.zkey") == 0);
        CHECK(zp_g16_key_load_inplace(&k, &z, NULL) == 0);
        zp_g16_key_close(&k);
        zp_zkey_close(&z);
        buf[off + psz - 1] = 0x01;   /* (0, y), y != 0: not on the curve */
        CHECK(zp_zkey_parse(&z, buf, len, "zero_x.zkey") == 0);
        rc = zp_g16_key_load_inplace(&k, &z, NULL);
        CHECK(rc == ZP_EFORMAT && strstr(zp_err_msg(), "pointsB1[2]") != NULL);
        if (!rc) zp_g16_key_close(&k);
        zp_zkey_close(&z);
        memcpy(buf + off, save, psz);
    }
    CHECK(zp_zkey_parse(&z, buf, len, "ok.zkey") == 0);
    CHECK(zp_g16_key_load(&k, &z) == 0);
    zp_g16_key_close(&k);
    zp_zkey_close(&z);
    free(buf);
}

/* the coefficients decoded on a pool of 3 (key.c, session 16): the same entries and order flag
 * as one thread; two bad entries in different slices: the error names the first; a row that
 * goes down exactly at a slice's edge clears coefs_sorted */
static void test_coefs_pool(fx_t *fx)
{
    size_t len;
    char p[1200];
    snprintf(p, sizeof p, "%s/circuit.zkey", fx->dir);
    uint8_t *buf = (uint8_t *)test_slurp(p, &len);
    zp_pool_t *pool = zp_pool_new(3);
    CHECK(pool != NULL);
    if (!buf || !pool) {
        free(buf);
        zp_pool_destroy(&pool);
        return;
    }
    zp_zkey_t z;
    zp_g16_key_t k1, k3;
    CHECK(zp_zkey_parse(&z, buf, len, "coefs.zkey") == 0);
    size_t n = z.n_coefs, esz = 12 + (size_t)z.n8r, off = (size_t)(z.coefs - (const uint8_t *)buf);
    CHECK(zp_g16_key_load(&k1, &z) == 0);
    CHECK(zp_g16_key_load_pool(&k3, &z, NULL, 0, pool) == 0);
    CHECK(k1.n_coefs == k3.n_coefs && k1.coefs_sorted == k3.coefs_sorted &&
          !memcmp(k1.coefs, k3.coefs, n * sizeof *k1.coefs));
    zp_g16_key_close(&k1);
    zp_g16_key_close(&k3);
    zp_zkey_close(&z);
    if (n >= 6) {
        size_t lo2, hi2, lo3, hi3;
        zp_split(n, 1, 3, &lo2, &hi2);
        zp_split(n, 2, 3, &lo3, &hi3);
        /* corrupted after the parse (which checks values too): the load's own check, on the
         * pool, as if the bytes changed under the mapping */
        uint8_t save[2][32];
        const size_t at[2] = {lo3 + (hi3 - lo3) / 2, lo2 + 1};   /* slice 3's middle, slice 2's second */
        CHECK(zp_zkey_parse(&z, buf, len, "coefs.zkey") == 0);
        for (int b = 0; b < 2; b++) {
            memcpy(save[b], buf + off + at[b] * esz + 12, 32);
            memset(buf + off + at[b] * esz + 12, 0xff, 32);   /* value >= r */
        }
        char want[64];
        snprintf(want, sizeof want, "coefficient %zu (", at[1]);
        int rc = zp_g16_key_load_pool(&k3, &z, NULL, 0, pool);
        CHECK(rc == ZP_EFORMAT && strstr(zp_err_msg(), want) != NULL);
        if (!rc) zp_g16_key_close(&k3);
        zp_zkey_close(&z);
        for (int b = 0; b < 2; b++) memcpy(buf + off + at[b] * esz + 12, save[b], 32);
        /* the row at slice 3's first entry below its predecessor's (the last of slice 2) */
        uint32_t prev_row, row, zero = 0;
        memcpy(&prev_row, buf + off + (lo3 - 1) * esz + 4, 4);
        memcpy(&row, buf + off + lo3 * esz + 4, 4);
        if (prev_row == 0) memcpy(buf + off + (lo3 - 1) * esz + 4, &(uint32_t){1}, 4);
        memcpy(buf + off + lo3 * esz + 4, &zero, 4);
        CHECK(zp_zkey_parse(&z, buf, len, "coefs.zkey") == 0);
        CHECK(zp_g16_key_load(&k1, &z) == 0);
        CHECK(zp_g16_key_load_pool(&k3, &z, NULL, 0, pool) == 0);
        CHECK(k1.coefs_sorted == 0 && k3.coefs_sorted == 0);
        zp_g16_key_close(&k1);
        zp_g16_key_close(&k3);
        zp_zkey_close(&z);
        memcpy(buf + off + (lo3 - 1) * esz + 4, &prev_row, 4);
        memcpy(buf + off + lo3 * esz + 4, &row, 4);
    }
    zp_pool_destroy(&pool);
    free(buf);
}

/* zp_g16_key_load_inplace: the same arrays as the copying load; aligned arrays are used where
 * they are in the zkey's memory, misaligned ones (the file read at an odd address) copied */
static void test_inplace_key(fx_t *fx)
{
    size_t len;
    char p[1200];
    snprintf(p, sizeof p, "%s/circuit.zkey", fx->dir);
    uint8_t *buf = (uint8_t *)test_slurp(p, &len), *odd = buf ? malloc(len + 1) : NULL;
    if (!buf || !odd) {
        free(buf);
        free(odd);
        return;
    }
    memcpy(odd + 1, buf, len);
    size_t g1 = zp_g1a_size(fx->key.curve), g2 = zp_g2a_size(fx->key.curve);
    size_t nv = fx->key.n_vars, nc = nv - fx->key.n_public - 1;
    for (int m = 0; m < 2; m++) {
        const uint8_t *base = m ? odd + 1 : buf;
        zp_zkey_t z;
        zp_g16_key_t k;
        CHECK(zp_zkey_parse(&z, base, len, "inplace.zkey") == 0);
        CHECK(zp_g16_key_load_inplace(&k, &z, NULL) == 0);
        CHECK(!memcmp(k.a, fx->key.a, nv * g1) && !memcmp(k.b1, fx->key.b1, nv * g1));
        CHECK(!memcmp(k.c, fx->key.c, nc * g1) && !memcmp(k.h, fx->key.h, fx->key.domain_size * g1));
        CHECK(!memcmp(k.b2, fx->key.b2, nv * g2) && !memcmp(k.ic, fx->key.ic, (fx->key.n_public + 1) * g1));
        /* the coefficients are not decoded: read where the zkey has them (session 17) */
        CHECK(k.n_coefs == fx->key.n_coefs && k.coefs == NULL && k.coefs_raw == z.coefs &&
              k.coefs_sorted == fx->key.coefs_sorted);
        for (uint32_t i = 0; k.coefs_raw && i < k.n_coefs; i++) {
            const uint8_t *e = k.coefs_raw + (size_t)i * 44;
            const struct zp_g16_coef *r = &fx->key.coefs[i];
            uint32_t m, row, wire;
            memcpy(&m, e, 4);
            memcpy(&row, e + 4, 4);
            memcpy(&wire, e + 8, 4);
            if (m != r->matrix || row != r->row || wire != r->wire || memcmp(e + 12, &r->v, 32)) {
                CHECK(!"in-place coefficient differs from the decoded one");
                break;
            }
        }
        /* A, B1, C, H, B2 in place at any alignment (session 18: read by memcpy); IC only
         * where 8-byte aligned */
        bool inside = (const uint8_t *)k.a >= base && (const uint8_t *)k.a < base + len;
        bool ic_inside = (const uint8_t *)k.ic >= base && (const uint8_t *)k.ic < base + len;
        CHECK(inside && (const uint8_t *)k.a == z.points_a && (const uint8_t *)k.b2 == z.points_b2);
        CHECK(ic_inside == !((uintptr_t)z.ic % 8));
        zp_g16_key_close(&k);
        zp_zkey_close(&z);
    }
    free(buf);
    free(odd);
}

/* a copy of a binfile (zkey / wtns) with a skipped section (id 40) of pad bytes first, so that
 * every later section moves by 12 + pad bytes: written to dir/name */
static bool write_padded(const char *path, const uint8_t *buf, size_t len, size_t pad)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    uint8_t hdr[12], sec[12] = {40, 0, 0, 0}, zero[8] = {0};
    memcpy(hdr, buf, 12);
    uint32_t ns;
    memcpy(&ns, hdr + 8, 4);
    ns++;
    memcpy(hdr + 8, &ns, 4);
    uint64_t pl = pad;
    memcpy(sec + 4, &pl, 8);
    bool ok = fwrite(hdr, 1, 12, f) == 12 && fwrite(sec, 1, 12, f) == 12 && fwrite(zero, 1, pad, f) == pad &&
              fwrite(buf + 12, 1, len - 12, f) == len - 12;
    return fclose(f) == 0 && ok;
}

/* zp_zkey_align_points / zp_g16_witness_inplace / zp_g16_prove_once (`zkpipe prove`): for
 * every misalignment 0..7 of the sections, with the points moved onto 8 bytes first (al = 1:
 * they end up 8-byte aligned inside the mapping) and without (al = 0, what `zkpipe prove`
 * does since session 18: A, B1, C, H, B2 used at the file's own offsets, the MSMs and the
 * checks reading them at any alignment), none copied but a misaligned IC, the key equals the
 * copying load, the proof is snarkjs's, the file is unchanged; a one-shot proof gives the same
 * proof and the consumed key refuses a second one */
static void test_misaligned_files(fx_t *fx)
{
    size_t zlen, wlen;
    char p[1200], dir[] = "/tmp/zp-g16-misalign-XXXXXX";
    snprintf(p, sizeof p, "%s/circuit.zkey", fx->dir);
    uint8_t *zb = (uint8_t *)test_slurp(p, &zlen);
    snprintf(p, sizeof p, "%s/witness.wtns", fx->dir);
    uint8_t *wb = (uint8_t *)test_slurp(p, &wlen);
    bool made = zb && wb && mkdtemp(dir);
    CHECK(made);
    if (!made) goto out;
    size_t g1 = zp_g1a_size(fx->key.curve), g2 = zp_g2a_size(fx->key.curve);
    size_t nv = fx->key.n_vars, nc = nv - fx->key.n_public - 1;
    unsigned moved = 0, misaligned = 0;
    for (size_t run = 0; run < 16; run++) {
        size_t pad = run / 2;
        bool al = run % 2;
        char zp[1300], wp[1300];
        snprintf(zp, sizeof zp, "%s/k%zu.zkey", dir, pad);
        snprintf(wp, sizeof wp, "%s/w%zu.wtns", dir, pad);
        CHECK(write_padded(zp, zb, zlen, pad) && write_padded(wp, wb, wlen, pad));
        zp_zkey_t z;
        zp_wtns_t wt;
        zp_g16_key_t k;
        if (zp_zkey_open(&z, zp)) { CHECK(!"open padded zkey"); continue; }
        CHECK(zp_wtns_open(&wt, wp) == 0);
        const uint8_t *before[6] = {z.ic, z.points_a, z.points_b1, z.points_b2, z.points_c, z.points_h};
        if (al) CHECK(zp_zkey_align_points(&z) == 0);
        const uint8_t *after[6] = {z.ic, z.points_a, z.points_b1, z.points_b2, z.points_c, z.points_h};
        const size_t cnt[6] = {fx->key.n_public + 1, nv, nv, nv, nc, fx->key.domain_size};
        for (int i = 0; i < 6; i++) {
            if (!cnt[i]) continue;   /* an empty array (no C points) is never read */
            if (al) {
                CHECK(!((uintptr_t)after[i] % 8) && after[i] <= before[i] && before[i] - after[i] < 8);
                if (after[i] != before[i]) moved++;
            } else {
                CHECK(after[i] == before[i]);
                if (i && (uintptr_t)after[i] % 8) misaligned++;
            }
        }
        CHECK(zp_g16_key_load_inplace(&k, &z, fx->pool) == 0);
        const uint8_t *lo = z.f.map, *hi = z.f.map + z.f.size;
        const void *arr[6] = {k.ic, k.a, k.b1, k.b2, k.c, k.h};
        for (int i = 0; i < 6; i++)
            CHECK(!cnt[i] || (i == 0 && (uintptr_t)after[0] % 8) ||
                  ((const uint8_t *)arr[i] == after[i] && (const uint8_t *)arr[i] >= lo && (const uint8_t *)arr[i] < hi));
        CHECK(!memcmp(k.a, fx->key.a, nv * g1) && !memcmp(k.b1, fx->key.b1, nv * g1));
        CHECK(!memcmp(k.c, fx->key.c, nc * g1) && !memcmp(k.h, fx->key.h, fx->key.domain_size * g1));
        CHECK(!memcmp(k.b2, fx->key.b2, nv * g2) && !memcmp(k.ic, fx->key.ic, (fx->key.n_public + 1) * g1));
        const zp_scalar_t *w = NULL;
        zp_scalar_t *copy = NULL, *ref = NULL;
        CHECK(zp_g16_witness_inplace(&w, &copy, &wt) == 0);
        CHECK(w && !copy && (const uint8_t *)w >= wt.f.map && !((uintptr_t)w % 8));
        CHECK(load_witness(&ref, fx, "witness.wtns") == 0);
        CHECK(w && ref && !memcmp(w, ref, (size_t)wt.n_witness * sizeof *w));
        zp_g16_proof_t proof;
        zp_scalar_t zero = {{0}};
        if (w) {
            CHECK(zp_g16_prove(&proof, &k, w, NULL, &zero, &zero, ops, fx->be, fx->pool, NULL) == 0);
            CHECK(proof_json_equals(&proof, fx, "proof_rs0.json"));
            memset(&proof, 0, sizeof proof);
            CHECK(zp_g16_prove_once(&proof, &k, w, NULL, &zero, &zero, ops, fx->be, fx->pool, NULL) == 0);
            CHECK(proof_json_equals(&proof, fx, "proof_rs0.json"));
            CHECK(zp_g16_prove(&proof, &k, w, NULL, &zero, &zero, ops, fx->be, fx->pool, NULL) == -EINVAL);
            CHECK(strstr(zp_err_msg(), "consumed") != NULL);
        }
        free(ref);
        zp_g16_key_close(&k);
        zp_wtns_close(&wt);
        zp_zkey_close(&z);
        /* the files themselves are unchanged */
        size_t l2;
        uint8_t *again = (uint8_t *)test_slurp(zp, &l2);
        CHECK(again && l2 == zlen + 12 + pad && !memcmp(again + 24 + pad, zb + 12, zlen - 12));
        free(again);
        again = (uint8_t *)test_slurp(wp, &l2);
        CHECK(again && l2 == wlen + 12 + pad && !memcmp(again + 24 + pad, wb + 12, wlen - 12));
        free(again);
        remove(zp);
        remove(wp);
    }
    CHECK(moved > 0 && misaligned > 0);   /* some pads did misalign arrays */
    rmdir(dir);
out:
    free(zb);
    free(wb);
}

/* the same proof from a zkey whose coefficient entries are stored in reverse order (rows not
 * sorted: synth's scan-all path instead of the binary search) */
static void test_unsorted_coefs(fx_t *fx, const zp_scalar_t *w)
{
    size_t len;
    char p[1200];
    snprintf(p, sizeof p, "%s/circuit.zkey", fx->dir);
    uint8_t *buf = (uint8_t *)test_slurp(p, &len);
    if (!buf || fx->z.n_coefs < 2) {
        free(buf);
        return;
    }
    size_t esz = 12 + fx->z.n8r, off = (size_t)(fx->z.coefs - fx->z.f.map), nc = fx->z.n_coefs;
    uint8_t tmp[64];
    for (size_t i = 0; i < nc / 2; i++) {
        memcpy(tmp, buf + off + i * esz, esz);
        memcpy(buf + off + i * esz, buf + off + (nc - 1 - i) * esz, esz);
        memcpy(buf + off + (nc - 1 - i) * esz, tmp, esz);
    }
    zp_zkey_t z;
    fx_t f2 = *fx;
    CHECK(zp_zkey_parse(&z, buf, len, "reversed.zkey") == 0);
    CHECK(zp_g16_key_load(&f2.key, &z) == 0);
    CHECK(!f2.key.coefs_sorted);
    zp_g16_proof_t proof;
    zp_scalar_t zero = {{0}};
    CHECK(zp_g16_prove(&proof, &f2.key, w, NULL, &zero, &zero, ops, fx->be, fx->pool, NULL) == 0);
    CHECK(proof_json_equals(&proof, fx, "proof_rs0.json"));
    zp_g16_key_close(&f2.key);
    zp_zkey_close(&z);
    free(buf);
}

static void test_msm(fx_t *fx, const zp_scalar_t *w)
{
    /* backend msm_g1 over the first pointsH with witness scalars vs a naive sum */
    size_t n = fx->key.domain_size < 7 ? fx->key.domain_size : 7;
    if (n > fx->key.n_vars) n = fx->key.n_vars;
    zp_g1_any_t got;
    CHECK(zp_backend_cpu_test_ops()->msm_g1(fx->be, fx->key.curve, &got, fx->key.h, w, n) == 0);
    if (fx->key.curve == ZP_CURVE_BN254) {
        zp_g1_bn254_t acc, t;
        zp_g1_bn254_set_inf(&acc);
        for (size_t i = 0; i < n; i++) {
            zp_g1_bn254_from_affine(&t, &((const zp_g1a_bn254_t *)fx->key.h)[i]);
            zp_g1_bn254_mul(&t, &t, &w[i]);
            zp_g1_bn254_add(&acc, &acc, &t);
        }
        CHECK(zp_g1_bn254_eq(&acc, &got.bn254));
    } else {
        zp_g1_bls12_381_t acc, t;
        zp_g1_bls12_381_set_inf(&acc);
        for (size_t i = 0; i < n; i++) {
            zp_g1_bls12_381_from_affine(&t, &((const zp_g1a_bls12_381_t *)fx->key.h)[i]);
            zp_g1_bls12_381_mul(&t, &t, &w[i]);
            zp_g1_bls12_381_add(&acc, &acc, &t);
        }
        CHECK(zp_g1_bls12_381_eq(&acc, &got.bls12_381));
    }
}

/* prove_g1_batch (same-circuit batching) == prove_g1 per job, the same 4 points, for batches of
 * 1..5 jobs over the fixture's witnesses (repeated when there are fewer), with every MSM
 * batched, the witness MSMs batched and H per job, every MSM per job, AUTO and the production
 * op; 0 jobs is a no-op */
static bool g1_eq(zp_curve_id_t c, const zp_g1_any_t *x, const zp_g1_any_t *y)
{
    return c == ZP_CURVE_BN254 ? zp_g1_bn254_eq(&x->bn254, &y->bn254) : zp_g1_bls12_381_eq(&x->bls12_381, &y->bls12_381);
}

static void test_batch(fx_t *fx, zp_scalar_t *const *ws, unsigned nw)
{
    enum { NJ = 5 };
    const zp_g16_key_t *k = &fx->key;
    const size_t d = k->domain_size;
    zp_g16_g1_job_t jobs[NJ], want[NJ];
    zp_scalar_t *buf = malloc(NJ * 4 * d * sizeof *buf);
    CHECK(buf != NULL);
    if (!buf) return;
    for (unsigned j = 0; j < NJ; j++) {
        zp_scalar_t *a = buf + 4 * d * j;
        jobs[j] = (zp_g16_g1_job_t){.w = ws[j % nw], .a = a, .b = a + d, .c = a + 2 * d, .h = a + 3 * d};
        CHECK(zp_g16_synth(k, jobs[j].w, NULL, jobs[j].a, jobs[j].b, a + 2 * d, fx->pool) == 0);
        want[j] = jobs[j];
        CHECK(ops->prove_g1(fx->be, k, jobs[j].w, jobs[j].a, jobs[j].b, jobs[j].c, jobs[j].h, want[j].out, NULL) == 0);
    }
    const zp_backend_test_ops_t *to = zp_backend_cpu_test_ops();
    CHECK(ops->prove_g1_batch != NULL && to->prove_g1_batch_mode != NULL);
    if (!ops->prove_g1_batch || !to->prove_g1_batch_mode) goto out;
    CHECK(ops->prove_g1_batch(fx->be, k, 0, NULL, NULL) == 0);
    for (int mode = 0; mode < 5; mode++)   /* the 4 forced modes, then the production op */
        for (unsigned n = 1; n <= NJ; n++) {
            for (unsigned j = 0; j < n; j++) {
                zp_scalar_t *a = buf + 4 * d * j;
                CHECK(zp_g16_synth(k, jobs[j].w, NULL, a, a + d, a + 2 * d, fx->pool) == 0);
                memset(jobs[j].out, 0xa5, sizeof jobs[j].out);
            }
            zp_g16_times_t t;
            int rc = mode == 4 ? ops->prove_g1_batch(fx->be, k, n, jobs, &t)
                               : to->prove_g1_batch_mode(fx->be, k, n, jobs, &t, mode);
            CHECK(rc == 0);
            for (unsigned j = 0; j < n && rc == 0; j++)
                for (int i = 0; i < ZP_G16_NMSM; i++)
                    if (!g1_eq(k->curve, &jobs[j].out[i], &want[j].out[i])) {
                        fprintf(stderr, "[%s] prove_g1_batch mode %d n=%u job %u msm %d differs from prove_g1\n",
                                cur, mode, n, j, i);
                        failures++;
                    }
        }
out:
    free(buf);
}

/* zp_g16_prove on the CPU backend runs C and H as one MSM (its prove_g1_sum: part C =
 * C + H, part H = infinity): A and B1 as the backend verb's, C + H equal to the verb's C and
 * H added, and the proof byte-identical to the verb's four parts + zp_g16_finalize for the
 * same r, s */
static void test_sum_path(fx_t *fx, const zp_scalar_t *w, const zp_scalar_t *r, const zp_scalar_t *s)
{
    const zp_g16_key_t *k = &fx->key;
    const size_t d = k->domain_size;
    zp_scalar_t *buf = malloc(3 * d * sizeof *buf);
    CHECK(buf != NULL);
    if (!buf) return;
    zp_g1_any_t part[ZP_G16_NMSM], sum[ZP_G16_NMSM];
    CHECK(zp_g16_synth(k, w, NULL, buf, buf + d, buf + 2 * d, fx->pool) == 0);
    CHECK(ops->prove_g1(fx->be, k, w, buf, buf + d, buf + 2 * d, buf + 2 * d, part, NULL) == 0);
    CHECK(zp_g16_synth(k, w, NULL, buf, buf + d, buf + 2 * d, fx->pool) == 0);
    memset(sum, 0xa5, sizeof sum);
    CHECK(ops->prove_g1_sum != NULL);
    CHECK(ops->prove_g1_sum(fx->be, k, w, buf, buf + d, buf + 2 * d, buf + 2 * d, sum, NULL, false) == 0);
    free(buf);
    CHECK(g1_eq(k->curve, &sum[ZP_G16_A], &part[ZP_G16_A]));
    CHECK(g1_eq(k->curve, &sum[ZP_G16_B1], &part[ZP_G16_B1]));
    zp_g1_any_t ch;
    if (k->curve == ZP_CURVE_BN254) {
        zp_g1_bn254_add(&ch.bn254, &part[ZP_G16_C].bn254, &part[ZP_G16_H].bn254);
        CHECK(zp_g1_bn254_is_inf(&sum[ZP_G16_H].bn254));
    } else {
        zp_g1_bls12_381_add(&ch.bls12_381, &part[ZP_G16_C].bls12_381, &part[ZP_G16_H].bls12_381);
        CHECK(zp_g1_bls12_381_is_inf(&sum[ZP_G16_H].bls12_381));
    }
    CHECK(g1_eq(k->curve, &sum[ZP_G16_C], &ch));
    zp_g16_proof_t want, got;
    CHECK(zp_g16_finalize(k, w, part, r, s, &want, fx->pool, NULL) == 0);
    CHECK(prove(&got, fx, w, NULL, r, s) == 0);
    CHECK(memcmp(&want, &got, sizeof got) == 0);
}

static void test_fixture(const char *dir, const char *name)
{
    fx_t fx;
    memset(&fx, 0, sizeof fx);
    snprintf(fx.dir, sizeof fx.dir, "%s", dir);
    cur = name;
    char p[1200];
    int before = failures;
    snprintf(p, sizeof p, "%s/circuit.zkey", dir);
    int rc = zp_zkey_open(&fx.z, p);
    CHECK(rc == 0);
    if (rc) return;
    zp_backend_cfg_t cfg = {.threads = 2};
    uint64_t t0 = zp_now_ns();
    CHECK((rc = zp_g16_key_load(&fx.key, &fx.z)) == 0);
    uint64_t t_load = zp_now_ns() - t0;
    if (!rc) CHECK((rc = ops->open(&fx.be, &cfg)) == 0);
    if (!rc) CHECK((rc = ops->load_key(fx.be, &fx.key)) == 0);
    fx.pool = zp_pool_new(2);
    zp_scalar_t *w = NULL;
    if (!rc) CHECK((rc = load_witness(&w, &fx, "witness.wtns")) == 0);
    if (!rc) {
        zp_g16_proof_t proof;
        zp_scalar_t zero = {{0}}, r, s;
        /* r = s = 0 */
        CHECK(prove(&proof, &fx, w, NULL, &zero, &zero) == 0);
        CHECK(proof_json_equals(&proof, &fx, "proof_rs0.json"));
        CHECK(public_json_equals(&fx, w, "public_rs0.json"));   /* JSON.stringify bytes (the CLI writes "[\n]" for an empty array) */
        /* fixed r, s from meta.json */
        snprintf(p, sizeof p, "%s/meta.json", dir);
        char *meta = test_slurp(p, NULL), rs_r[128], rs_s[128];
        CHECK(meta && json_find(rs_r, sizeof rs_r, meta, "proof_rs", "r") && json_find(rs_s, sizeof rs_s, meta, "proof_rs", "s"));
        if (meta && zp_g16_scalar_from_dec(&r, fx.key.curve, rs_r) == 0 && zp_g16_scalar_from_dec(&s, fx.key.curve, rs_s) == 0) {
            CHECK(prove(&proof, &fx, w, NULL, &r, &s) == 0);
            CHECK(proof_json_equals(&proof, &fx, "proof_rs.json"));
            test_sum_path(&fx, w, &r, &s);
        } else {
            CHECK(!"meta.json r/s parse");
        }
        free(meta);
        /* blinding values >= r are refused */
        zp_scalar_t big = {{~0ull, ~0ull, ~0ull, ~0ull}};
        CHECK(prove(&proof, &fx, w, NULL, &big, &zero) == ZP_EFORMAT);
        /* random r, s: valid, and different each time */
        zp_g16_proof_t p2;
        CHECK(prove(&proof, &fx, w, NULL, NULL, NULL) == 0);
        CHECK(prove(&p2, &fx, w, NULL, NULL, NULL) == 0);
        CHECK(memcmp(&proof.a, &p2.a, sizeof p2.a) != 0);
        test_verify_paths(&fx, &proof, w);
        test_msm(&fx, w);
        test_unsorted_coefs(&fx, w);
        /* the extra witnesses */
        zp_scalar_t *bw[5] = {w};
        unsigned nbw = 1;
        for (int i = 0; i < 16; i++) {
            char wn[64], pn[64];
            snprintf(wn, sizeof wn, "witness-%d.wtns", i);
            snprintf(pn, sizeof pn, "proof_rs0-%d.json", i);
            snprintf(p, sizeof p, "%s/%s", dir, wn);
            if (!exists(p)) break;
            zp_scalar_t *wi = NULL;
            CHECK(load_witness(&wi, &fx, wn) == 0);
            if (wi) {
                CHECK(prove(&proof, &fx, wi, NULL, &zero, &zero) == 0);
                CHECK(proof_json_equals(&proof, &fx, pn));
            }
            if (wi && nbw < 5) bw[nbw++] = wi;
            else free(wi);
        }
        test_batch(&fx, bw, nbw);
        for (unsigned i = 1; i < nbw; i++) free(bw[i]);
        test_bad_witness(&fx);
        test_corrupt_key(&fx);
        test_coefs_pool(&fx);
        test_inplace_key(&fx);
        test_misaligned_files(&fx);
    }
    printf("%-24s %s  (nVars %u, nPublic %u, domain %u, key load %.1f ms)\n", name,
           failures == before ? "ok" : "FAILED", fx.key.n_vars, fx.key.n_public, fx.key.domain_size, t_load / 1e6);
    free(w);
    zp_pool_destroy(&fx.pool);
    if (fx.be) ops->close(&fx.be);
    zp_g16_key_close(&fx.key);
    zp_zkey_close(&fx.z);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void)
{
    const char *root = getenv("ZP_FIXTURES") ? getenv("ZP_FIXTURES") : ZP_FIXTURES_DIR;
    DIR *d = opendir(root);
    if (!d) {
        printf("groth16: no fixtures in %s: skipped\n", root);
        return 77;
    }
    char *names[256];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nn < 256) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s/circuit.zkey", root, e->d_name);
        if (e->d_name[0] != '.' && exists(p)) names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    if (nn == 0) {
        printf("groth16: no fixtures in %s: skipped\n", root);
        return 77;
    }
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    for (int i = 0; i < nn; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", root, names[i]);
        test_fixture(p, names[i]);
        free(names[i]);
    }
    if (failures) {
        fprintf(stderr, "groth16: %d check(s) FAILED\n", failures);
        return 1;
    }
    printf("groth16: all %d fixtures ok\n", nn);
    return 0;
}
