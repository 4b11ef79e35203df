/* test_bellman_key.c - a bellman key in the process group's key shape (issue 29 item 4;
 * lib/groth16/bellman_key.c, shm/keystore_bellman.c):
 *   - the compacted key: upstream bellman's chain300 .params + r1cs laid out (private memory
 *     and key store) with the file's a, b_g1, b_g2 and wire-level bitmaps / prefix counts; the
 *     stages' path on it (zp_g16_prove: synth with the key's coefs, the CPU backend's H by the
 *     key's conventions, the gathered MSMs, finalize) at r = 5, s = 9 gives proof_r5_s9.bin
 *     byte for byte (upstream bellman's); H's last point is the identity;
 *   - zp_g16_gather against a plain loop; the CPU backend's sums = the bellman prover's, and a
 *     bitmap off by one wire changes A's or B's sum (and B2's proof fails its check);
 *   - bind: tampered bitmaps, prefix counts, n_a / n_b, offsets refused naming them (block and
 *     key store with a valid header checksum);
 *   - counts that do not fit (a density of another circuit, |H| short) are ZP_EMISMATCH naming
 *     the field;
 *   - bind validation: a key-store header whose conventions id is unknown (7), bellman on
 *     BN254, or whose wire count runs past the block is refused even with a valid header
 *     checksum; a store object whose conventions differ from the key's is rebuilt;
 *   - the density file: round trip, and truncated / trailing / out-of-range / stray-bit files
 *     refused; a key from a density file has no coefficients;
 *   - the key cache: one entry per (params, circuit file), a .params without a readable circuit
 *     refused naming it, a zkey unaffected by an r1cs. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/test_slurp.h"
#include "lib/fmt/bellman.h"
#include "lib/groth16/assignment.h"
#include "lib/util/util.h"
#include "shm/keycache.h"
#include "shm/keystore.h"
#include "shm/shm.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #c, zp_err_msg()); exit(1); } } while (0)

static char g_prefix[64], g_tmp[256];
static void cleanup(void)
{
    if (g_prefix[0]) zp_keystore_unlink_all(g_prefix);
    if (g_tmp[0]) test_rm_dir(g_tmp);
}

static bool is_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return false;
    return true;
}

static bool bit(const uint64_t *d, size_t i) { return (d[i / 64] >> (i % 64)) & 1; }

/* the stages' proof on k at r = 5, s = 9 equals upstream bellman's bytes */
static void prove_equals_bellman(const zp_g16_key_t *k, const char *dir)
{
    char p[1100];
    zp_r1cs_t r1;
    zp_wtns_t wt;
    snprintf(p, sizeof p, "%s/circuit.r1cs", dir);
    CHECK(zp_r1cs_open(&r1, p) == 0);
    snprintf(p, sizeof p, "%s/witness.wtns", dir);
    CHECK(zp_wtns_open(&wt, p) == 0);
    zp_scalar_t *w;
    CHECK(zp_g16_witness_load(&w, &wt) == 0);
    zp_scalar_t rs[2];
    CHECK(zp_g16_scalar_from_dec(&rs[0], ZP_CURVE_BLS12_381, "5") == 0);
    CHECK(zp_g16_scalar_from_dec(&rs[1], ZP_CURVE_BLS12_381, "9") == 0);
    zp_backend_cfg_t cfg = {.threads = 2};
    zp_backend_t *be;
    CHECK(zp_backend_cpu.open(&be, &cfg) == 0);
    CHECK(zp_backend_cpu.load_key(be, k) == 0);
    zp_g16_proof_t proof;
    CHECK(zp_g16_prove(&proof, k, w, &r1, &rs[0], &rs[1], &zp_backend_cpu, be, NULL, NULL) == 0);
    uint8_t out[192];
    size_t len = 0;
    CHECK(zp_g16_conv((zp_g16_conv_id_t)k->conv)->proof_encode(out, sizeof out, &len, &proof) == 0 && len == 192);
    size_t n;
    snprintf(p, sizeof p, "%s/proof_r5_s9.bin", dir);
    char *ref = test_slurp(p, &n);
    CHECK(ref && n == 192 && !memcmp(ref, out, 192));
    free(ref);
    zp_backend_cpu.close(&be);
    free(w);
    zp_wtns_close(&wt);
    zp_r1cs_close(&r1);
}

static void test_compacted(const char *dir)
{
    char pp[1100], rp[1100];
    snprintf(pp, sizeof pp, "%s/circuit.params", dir);
    snprintf(rp, sizeof rp, "%s/circuit.r1cs", dir);
    zp_g16_key_t k;
    CHECK(zp_key_load_bellman_private(&k, pp, rp, NULL) == 0);
    CHECK(k.conv == ZP_G16_CONV_BELLMAN && k.curve == ZP_CURVE_BLS12_381 && k.n_coefs > 0);
    /* identity exactly where the density says */
    zp_bkey_t bk;
    zp_r1cs_t r1;
    CHECK(zp_bkey_open(&bk, pp, ZP_BKEY_NO_SUBGROUP) == 0);
    CHECK(zp_r1cs_open(&r1, rp) == 0);
    zp_g16_bdensity_t d;
    uint64_t *dm;
    CHECK(zp_g16_bellman_density(&d, &dm, &r1) == 0);
    CHECK(d.n_inp == (size_t)k.n_public + 1 && d.n_inp + d.n_aux == k.n_vars);
    /* compacted as in the file: the same arrays, wire-level bitmaps (A: every input + a_aux;
     * B: b_inp + b_aux) and their prefix counts */
    const zp_g1a_bls12_381_t *h = k.h;
    CHECK(k.compact == 1 && k.n_a == bk.n_a && k.n_b == bk.n_b_g1 && k.n_b == bk.n_b_g2);
    CHECK(!memcmp(k.a, bk.a, bk.n_a * sizeof *bk.a) && !memcmp(k.b1, bk.b_g1, bk.n_b_g1 * sizeof *bk.b_g1) &&
          !memcmp(k.b2, bk.b_g2, bk.n_b_g2 * sizeof *bk.b_g2));
    size_t ia = 0, ib = 0, zeros_a = 0, zeros_b = 0;
    for (size_t wv = 0; wv < k.n_vars; wv++) {
        bool ina = wv < d.n_inp || bit(d.a_aux, wv - d.n_inp);
        bool inb = wv < d.n_inp ? bit(d.b_inp, wv) : bit(d.b_aux, wv - d.n_inp);
        if (wv % 64 == 0) CHECK(k.pfx_a[wv / 64] == ia && k.pfx_b[wv / 64] == ib);
        CHECK(bit(k.dens_a, wv) == ina && bit(k.dens_b, wv) == inb);
        ia += ina;
        ib += inb;
        zeros_a += !ina;
        zeros_b += !inb;
    }
    size_t words = ((size_t)k.n_vars + 63) / 64;
    CHECK(k.pfx_a[words] == ia && k.pfx_b[words] == ib);
    CHECK(ia == bk.n_a && ib == bk.n_b_g1 && zeros_b > 0);   /* chain300: B is compacted */
    CHECK(is_zero(&h[k.domain_size - 1], sizeof h[0]) && !memcmp(h, bk.h, sizeof h[0]));
    printf("  compacted: %u wires, A %u points (%zu wires left out), B %u (%zu left out), %u coefs, domain %u\n",
           k.n_vars, k.n_a, zeros_a, k.n_b, zeros_b, k.n_coefs, k.domain_size);
    prove_equals_bellman(&k, dir);
    const uint32_t n_vars = k.n_vars;
    zp_g16_key_close(&k);

    /* counts that do not fit: ZP_EMISMATCH naming the field */
    zp_g16_bkey_t gk;
    zp_g16_bkey_from_fmt(&gk, &bk);
    size_t bytes;
    zp_g16_bdensity_t d2 = d;
    d2.n_aux--;
    CHECK(zp_g16_key_bellman_bytes(&bytes, &gk, &d2, NULL, "K") == ZP_EMISMATCH && strstr(zp_err_msg(), "K: l has"));
    zp_g16_bkey_t g2 = gk;
    g2.n_b_g2--;
    CHECK(zp_g16_key_bellman_bytes(&bytes, &g2, &d, NULL, "K") == ZP_EMISMATCH && strstr(zp_err_msg(), "b_g2 has"));
    g2 = gk;
    g2.n_h = 5;
    CHECK(zp_g16_key_bellman_bytes(&bytes, &g2, &d, NULL, "K") == ZP_EMISMATCH && strstr(zp_err_msg(), "h has 5"));
    uint64_t save = dm[0];
    dm[0] ^= 1;   /* one more (or fewer) A bit: |A| does not match */
    CHECK(zp_g16_key_bellman_bytes(&bytes, &gk, &d, NULL, "K") == ZP_EMISMATCH && strstr(zp_err_msg(), "K: a has"));
    dm[0] = save;

    /* the density file: round trip; a key from it has no coefficients, and the same points */
    char df[512];
    snprintf(df, sizeof df, "%s/c.dens", g_tmp);
    CHECK(zp_g16_bdensity_write(df, &d) == 0 && zp_g16_bdensity_sniff(df) && !zp_g16_bdensity_sniff(rp));
    zp_g16_bdensity_t d3;
    uint64_t *dm3;
    CHECK(zp_g16_bdensity_read(&d3, &dm3, df) == 0 && d3.n_inp == d.n_inp && d3.n_aux == d.n_aux &&
          d3.abc_size == d.abc_size && !memcmp(d3.a_aux, d.a_aux, (d.n_aux + 63) / 64 * 8));
    free(dm3);
    zp_g16_key_t kd;
    CHECK(zp_key_load_bellman_private(&kd, pp, df, NULL) == 0 && kd.n_coefs == 0 && kd.n_vars == n_vars);
    zp_g16_key_close(&kd);
    size_t flen;
    char *fb = test_slurp(df, &flen);
    CHECK(fb);
    struct { const char *what; size_t len; size_t at; uint8_t x; const char *msg; } bad[] = {
        {"truncated", flen - 1, 0, 0, "bytes, the header wants"},
        {"stray bit", flen, 32 + ((d.n_aux + 63) / 64) * 8 - 1, 0x80, "bits set past"},
        {"n_inp 0", flen, 8, 0xff, "out of range"},
        {"magic", flen, 0, 'X', "not a density file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char bp[600];
        snprintf(bp, sizeof bp, "%s/bad%zu.dens", g_tmp, i);
        FILE *f = fopen(bp, "wb");
        CHECK(f);
        char *c = malloc(flen);
        memcpy(c, fb, flen);
        if (!strcmp(bad[i].what, "n_inp 0")) memset(c + 8, 0, 8);
        else if (bad[i].x) c[bad[i].at] = (char)(c[bad[i].at] | bad[i].x);
        if (!strcmp(bad[i].what, "magic")) c[0] = 'X';
        CHECK(fwrite(c, 1, bad[i].len, f) == bad[i].len);
        fclose(f);
        free(c);
        if (d.n_aux % 64 == 0 && !strcmp(bad[i].what, "stray bit")) continue;   /* no tail bits to set */
        CHECK(zp_g16_bdensity_read(&d3, &dm3, bp) == ZP_EFORMAT && strstr(zp_err_msg(), bad[i].msg));
    }
    free(fb);
    free(dm);
    zp_r1cs_close(&r1);
    zp_bkey_close(&bk);
}

/* zp_g16_gather against a plain loop, over word edges, a partial last word and enough words
 * for the pool to split them */
static void test_gather(void)
{
    const size_t nv = 1024 * 64 + 37, words = (nv + 63) / 64;
    uint64_t *d = calloc(words, 8);
    uint32_t *pfx = calloc(words + 1, 4);
    zp_scalar_t *w = calloc(nv, sizeof *w), *got = calloc(nv, sizeof *w), *want = calloc(nv, sizeof *w);
    CHECK(d && pfx && w && got && want);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < nv; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        w[i].l[0] = i + 1;
        w[i].l[3] = x;
        if ((x & 3) == 0 || i == 0 || i == 63 || i == 64 || i == nv - 1) d[i / 64] |= (uint64_t)1 << (i % 64);
    }
    size_t n = 0;
    for (size_t i = 0; i < words; i++) {
        pfx[i] = (uint32_t)n;
        n += (size_t)__builtin_popcountll(d[i]);
    }
    pfx[words] = (uint32_t)n;
    size_t j = 0;
    for (size_t i = 0; i < nv; i++)
        if (bit(d, i)) want[j++] = w[i];
    zp_pool_t *pool = zp_pool_new(2);
    CHECK(pool);
    zp_g16_gather(got, w, d, pfx, nv, pool);
    CHECK(j == n && !memcmp(got, want, n * sizeof *got) && got[0].l[0] == 1 && got[n - 1].l[0] == nv);
    memset(got, 0, nv * sizeof *got);
    zp_g16_gather(got, w, d, pfx, nv, NULL);
    CHECK(!memcmp(got, want, n * sizeof *got));
    zp_pool_destroy(&pool);
    printf("  gather: %zu of %zu wires, as a plain loop\n", n, nv);
    free(d); free(pfx); free(w); free(got); free(want);
}

static bool g1_eq(const zp_g1_any_t *x, const zp_g1_any_t *y)
{
    return zp_g1_bls12_381_eq(&x->bls12_381, &y->bls12_381);
}

/* one A (or B) bit moved to a neighbouring wire (from n_inp on) whose witness value differs: popcount
 * and prefixes stay valid, only the pairing of scalars to points is off by one */
static void shift_one_bit(uint64_t *d, uint32_t *pfx, size_t n_inp, size_t nv, const zp_scalar_t *w)
{
    for (size_t i = n_inp; i < nv; i++) {
        size_t to = i + 1 < nv && !bit(d, i + 1) ? i + 1 : i > n_inp && !bit(d, i - 1) ? i - 1 : i;
        if (bit(d, i) && to != i && memcmp(&w[i], &w[to], sizeof *w)) {
            d[i / 64] &= ~((uint64_t)1 << (i % 64));
            d[to / 64] |= (uint64_t)1 << (to % 64);
            size_t words = (nv + 63) / 64, run = 0;
            for (size_t q = 0; q <= words; q++) {
                pfx[q] = (uint32_t)run;
                if (q < words) run += (size_t)__builtin_popcountll(d[q]);
            }
            return;
        }
    }
    CHECK(!"no bit to shift");
}

/* The CPU backend's G1 sums over the compacted key (scalars gathered from the stage's w)
 * equal the in-process bellman prover's (scalars compacted from bellman's Assignment), and a
 * key whose A or B bitmap pairs one scalar with its neighbour's point gives other sums (so
 * these checks, and the byte-equal proofs, would catch an off-by-one). */
static void test_pairing(const char *dir)
{
    char pp[1100], rp[1100], wp[1100];
    snprintf(pp, sizeof pp, "%s/circuit.params", dir);
    snprintf(rp, sizeof rp, "%s/circuit.r1cs", dir);
    snprintf(wp, sizeof wp, "%s/witness.wtns", dir);
    zp_g16_key_t k;
    CHECK(zp_key_load_bellman_private(&k, pp, rp, NULL) == 0);
    zp_r1cs_t r1;
    zp_wtns_t wt;
    CHECK(zp_r1cs_open(&r1, rp) == 0 && zp_wtns_open(&wt, wp) == 0);
    zp_scalar_t *w;
    CHECK(zp_g16_witness_load(&w, &wt) == 0);
    size_t n = k.domain_size;
    zp_scalar_t *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b), *c = calloc(n, sizeof *c);
    zp_scalar_t *a0 = calloc(n, sizeof *a), *b0 = calloc(n, sizeof *b), *c0 = calloc(n, sizeof *c);
    CHECK(a && b && c && a0 && b0 && c0);
    CHECK(zp_g16_synth(&k, w, &r1, a0, b0, c0, NULL) == 0);
    zp_backend_cfg_t cfg = {.threads = 2};
    zp_backend_t *be;
    CHECK(zp_backend_cpu.open(&be, &cfg) == 0 && zp_backend_cpu.load_key(be, &k) == 0);
    zp_g1_any_t part[ZP_G16_NMSM], ref[ZP_G16_NMSM], bad[ZP_G16_NMSM];
    memcpy(a, a0, n * sizeof *a); memcpy(b, b0, n * sizeof *b); memcpy(c, c0, n * sizeof *c);
    CHECK(zp_backend_cpu.prove_g1(be, &k, w, a, b, c, c, part, NULL) == 0);
    zp_g16_assign_buf_t as;
    CHECK(zp_g16_assign_from_r1cs(&as, &r1, &wt, NULL) == 0);
    zp_bkey_t bk;
    CHECK(zp_bkey_open(&bk, pp, ZP_BKEY_NO_SUBGROUP) == 0);
    zp_g16_bkey_t gk;
    zp_g16_bkey_from_fmt(&gk, &bk);
    CHECK(zp_g16_bellman_prove_g1(ref, &gk, &as.v, 0, NULL, NULL) == 0);
    zp_g1_any_t ch;
    zp_g1_bls12_381_add(&ch.bls12_381, &part[ZP_G16_C].bls12_381, &part[ZP_G16_H].bls12_381);
    CHECK(g1_eq(&part[ZP_G16_A], &ref[ZP_G16_A]) && g1_eq(&part[ZP_G16_B1], &ref[ZP_G16_B1]) &&
          g1_eq(&ch, &ref[ZP_G16_C]));
    /* off by one in A, then in B: the sums change */
    size_t words = ((size_t)k.n_vars + 63) / 64;
    uint64_t *d2 = malloc(2 * words * 8);
    uint32_t *p2 = malloc(2 * (words + 1) * 4);
    CHECK(d2 && p2);
    for (int q = 0; q < 2; q++) {
        zp_g16_key_t kb = k;
        memcpy(d2, q ? k.dens_b : k.dens_a, words * 8);
        memcpy(p2, q ? k.pfx_b : k.pfx_a, (words + 1) * 4);
        shift_one_bit(d2, p2, q ? 0 : (size_t)k.n_public + 1, k.n_vars, w);
        if (q) { kb.dens_b = d2; kb.pfx_b = p2; }
        else { kb.dens_a = d2; kb.pfx_a = p2; }
        memcpy(a, a0, n * sizeof *a); memcpy(b, b0, n * sizeof *b); memcpy(c, c0, n * sizeof *c);
        CHECK(zp_backend_cpu.prove_g1(be, &kb, w, a, b, c, c, bad, NULL) == 0);
        CHECK(q ? (g1_eq(&bad[ZP_G16_A], &ref[ZP_G16_A]) && !g1_eq(&bad[ZP_G16_B1], &ref[ZP_G16_B1]))
                : (!g1_eq(&bad[ZP_G16_A], &ref[ZP_G16_A]) && g1_eq(&bad[ZP_G16_B1], &ref[ZP_G16_B1])));
        if (q) {   /* the finalizer's B2 over the shifted B: the proof no longer verifies */
            zp_g16_proof_t proof;
            zp_scalar_t rs[2];
            CHECK(zp_g16_scalar_from_dec(&rs[0], ZP_CURVE_BLS12_381, "5") == 0);
            CHECK(zp_g16_scalar_from_dec(&rs[1], ZP_CURVE_BLS12_381, "9") == 0);
            CHECK(zp_g16_finalize(&kb, w, part, &rs[0], &rs[1], &proof, NULL, NULL) == ZP_EVERIFY);
            CHECK(zp_g16_finalize(&k, w, part, &rs[0], &rs[1], &proof, NULL, NULL) == 0);
        }
    }
    printf("  pairing: the CPU backend's A, B1, C + H over the compacted key = the bellman prover's; an "
           "off-by-one bitmap changes them\n");
    free(d2); free(p2);
    zp_bkey_close(&bk);
    zp_g16_assign_free(&as);
    zp_backend_cpu.close(&be);
    free(a); free(b); free(c); free(a0); free(b0); free(c0);
    free(w);
    zp_wtns_close(&wt);
    zp_r1cs_close(&r1);
    zp_g16_key_close(&k);
}

/* zp_g16_key_bind over a compacted key's block refuses bitmaps and prefix counts that do not
 * agree (what its gathers index with), naming them */
static void test_bind_dens(const char *dir)
{
    char pp[1100], rp[1100];
    snprintf(pp, sizeof pp, "%s/circuit.params", dir);
    snprintf(rp, sizeof rp, "%s/circuit.r1cs", dir);
    zp_g16_key_t k;
    CHECK(zp_key_load_bellman_private(&k, pp, rp, NULL) == 0);
    uint8_t *base = (uint8_t *)(((uintptr_t)k.mem + 63) & ~(uintptr_t)63);
    size_t len = k.mem_len - (size_t)(base - (uint8_t *)k.mem), words = ((size_t)k.n_vars + 63) / 64;
    zp_g16_key_offs_t o;
    zp_g16_key_offsets(&o, &k, base);
    zp_g16_key_t v;
#define FRESH() do { v = k; v.ic = v.a = v.b1 = v.c = v.h = v.b2 = NULL; v.coefs = NULL; } while (0)
    FRESH();
    CHECK(zp_g16_key_bind(&v, &o, base, len) == 0 && v.dens_a == k.dens_a && v.pfx_b == k.pfx_b);
    uint32_t *pa = (uint32_t *)k.pfx_a;
    uint64_t *db = (uint64_t *)k.dens_b, *da = (uint64_t *)k.dens_a;
    pa[1]++;
    FRESH();
    CHECK(zp_g16_key_bind(&v, &o, base, len) == ZP_EFORMAT && strstr(zp_err_msg(), "density A: prefix count [1]"));
    pa[1]--;
    da[0] ^= 2;   /* a bit flipped: the prefix counts after it disagree */
    FRESH();
    CHECK(zp_g16_key_bind(&v, &o, base, len) == ZP_EFORMAT && strstr(zp_err_msg(), "density A: prefix count"));
    da[0] ^= 2;
    if (k.n_vars % 64) {
        db[words - 1] |= (uint64_t)1 << 63;
        FRESH();
        CHECK(zp_g16_key_bind(&v, &o, base, len) == ZP_EFORMAT && strstr(zp_err_msg(), "density B has bits set past"));
        db[words - 1] &= ~((uint64_t)1 << 63);
    }
    FRESH();
    v.n_b = k.n_b - 1;
    CHECK(zp_g16_key_bind(&v, &o, base, len) == ZP_EFORMAT && strstr(zp_err_msg(), "density B has"));
    FRESH();
    v.n_a = k.n_vars + 1;
    CHECK(zp_g16_key_bind(&v, &o, base, len) == ZP_EFORMAT && strstr(zp_err_msg(), "points in A / B"));
    FRESH();
    v.compact = 0;
    CHECK(zp_g16_key_bind(&v, &o, base, len) == ZP_EFORMAT && strstr(zp_err_msg(), "bellman keys are compacted"));
    zp_g16_key_offs_t ob = o;
    ob.pfx_b = len;   /* past the block (nothing of it fits) */
    FRESH();
    CHECK(zp_g16_key_bind(&v, &ob, base, len) == ZP_EFORMAT && strstr(zp_err_msg(), "prefix counts B at offset"));
    FRESH();
    CHECK(zp_g16_key_bind(&v, &o, base, len) == 0);   /* all restored */
#undef FRESH
    printf("  bind: tampered bitmaps, prefix counts, counts and offsets refused\n");
    zp_g16_key_close(&k);
}

/* checksum the header as keystore.c does (state, creator_pid, hdr_sum zeroed) */
static uint64_t hdr_sum(const zp_keystore_hdr_t *h)
{
    zp_keystore_hdr_t c;
    memcpy(&c, h, sizeof c);
    atomic_store_explicit(&c.state, 0, memory_order_relaxed);
    c.creator_pid = 0;
    c.hdr_sum = 0;
    return zp_shm_checksum(&c, sizeof c, ZP_KEYSTORE_MAGIC);
}

/* rewrite a field of the object's header with a valid checksum (a tamperer who knows the format) */
static void tamper(const char *name, void (*fn)(zp_keystore_hdr_t *h))
{
    int fd = shm_open(name, O_RDWR, 0);
    CHECK(fd >= 0);
    zp_keystore_hdr_t *h = mmap(NULL, ZP_KEYSTORE_HDR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(h != MAP_FAILED);
    fn(h);
    h->hdr_sum = hdr_sum(h);
    munmap(h, ZP_KEYSTORE_HDR_BYTES);
    close(fd);
}
static uint32_t g_saved;
static void conv7(zp_keystore_hdr_t *h) { g_saved = h->conv; h->conv = 7; }
static void conv_back(zp_keystore_hdr_t *h) { h->conv = g_saved; }
static void conv0(zp_keystore_hdr_t *h) { h->conv = 0; }
static void bn254(zp_keystore_hdr_t *h) { g_saved = h->curve; h->curve = ZP_CURVE_BN254; }
static void curve_back(zp_keystore_hdr_t *h) { h->curve = g_saved; }
static void vars_up(zp_keystore_hdr_t *h) { g_saved = h->n_vars; h->n_vars = h->n_vars * 4 + 1000; }
static void vars_back(zp_keystore_hdr_t *h) { h->n_vars = g_saved; }
static void na_up(zp_keystore_hdr_t *h) { g_saved = h->n_a; h->n_a = h->n_a + 1; }
static void na_back(zp_keystore_hdr_t *h) { h->n_a = g_saved; }
static void pfx_off(zp_keystore_hdr_t *h) { h->offs.pfx_a += 64; }
static void pfx_back(zp_keystore_hdr_t *h) { h->offs.pfx_a -= 64; }

static void test_store(const char *dir)
{
    char pp[1100], rp[1100];
    snprintf(pp, sizeof pp, "%s/circuit.params", dir);
    snprintf(rp, sizeof rp, "%s/circuit.r1cs", dir);
    zp_keystore_key_t ks, k2;
    CHECK(zp_keystore_get_bellman(&ks, g_prefix, pp, rp, NULL) == 0 && !ks.hot && ks.key.conv == ZP_G16_CONV_BELLMAN);
    char name[ZP_KEYSTORE_NAME_MAX], zname[ZP_KEYSTORE_NAME_MAX];
    snprintf(name, sizeof name, "%s", ks.name);
    CHECK(zp_keystore_name(zname, sizeof zname, g_prefix, pp) == 0 && strcmp(zname, name));   /* named after both files */
    prove_equals_bellman(&ks.key, dir);
    zp_keystore_release(&ks);
    CHECK(zp_keystore_get_bellman(&ks, g_prefix, pp, rp, NULL) == 0 && ks.hot);   /* mapped, not parsed */
    zp_keystore_release(&ks);

    /* bind validation with a valid header checksum */
    tamper(name, conv7);
    CHECK(zp_keystore_open_name(&k2, name, false) == ZP_EFORMAT && strstr(zp_err_msg(), "conventions id 7"));
    tamper(name, conv_back);
    CHECK(zp_keystore_open_name(&k2, name, false) == 0 && k2.key.conv == ZP_G16_CONV_BELLMAN);
    zp_keystore_release(&k2);
    tamper(name, bn254);
    CHECK(zp_keystore_open_name(&k2, name, false) < 0);
    tamper(name, curve_back);
    tamper(name, vars_up);
    CHECK(zp_keystore_open_name(&k2, name, false) == ZP_EFORMAT && strstr(zp_err_msg(), "outside"));
    tamper(name, vars_back);
    /* the compacted arrays' count and the prefix counts' offset (v4): refused at bind */
    tamper(name, na_up);
    CHECK(zp_keystore_open_name(&k2, name, false) == ZP_EFORMAT && strstr(zp_err_msg(), "density A has"));
    tamper(name, na_back);
    tamper(name, pfx_off);
    CHECK(zp_keystore_open_name(&k2, name, false) == ZP_EFORMAT && strstr(zp_err_msg(), "density A: prefix count"));
    tamper(name, pfx_back);
    CHECK(zp_keystore_open_name(&k2, name, false) == 0 && k2.key.compact && k2.key.n_a > 0);
    zp_keystore_release(&k2);
    /* conventions changed to a valid but wrong id: the lookup by key file refuses it and rebuilds */
    tamper(name, conv0);
    CHECK(zp_keystore_get_bellman(&ks, g_prefix, pp, rp, NULL) == 0 && !ks.hot && ks.key.conv == ZP_G16_CONV_BELLMAN);
    zp_keystore_release(&ks);

    /* key_bind itself */
    zp_g16_key_t k = {0};
    zp_g16_key_offs_t o = {0};
    uint8_t blk[4096] __attribute__((aligned(64)));
    k.curve = ZP_CURVE_BN254;
    k.conv = 1;
    CHECK(zp_g16_key_bind(&k, &o, blk, sizeof blk) == ZP_EFORMAT && strstr(zp_err_msg(), "conventions id 1"));
    k.curve = ZP_CURVE_BLS12_381;
    k.conv = 2;
    CHECK(zp_g16_key_bind(&k, &o, blk, sizeof blk) == ZP_EFORMAT && strstr(zp_err_msg(), "conventions id 2"));

    /* no r1cs at all, an r1cs of another circuit */
    CHECK(zp_keystore_get_bellman(&ks, g_prefix, pp, NULL, NULL) == ZP_EFORMAT && strstr(zp_err_msg(), "needs its circuit"));
    char other[1100];
    snprintf(other, sizeof other, "%s/../poseidon2/circuit.r1cs", dir);
    CHECK(zp_keystore_get_bellman(&ks, g_prefix, pp, other, NULL) == ZP_EMISMATCH && strstr(zp_err_msg(), "circuit.params"));
}

/* the stages' key cache: one entry per (params, circuit file); a .params without one refused */
static void test_keycache(const char *dir)
{
    char pp[1100], rp[1100], df[600], zk[1100];
    snprintf(pp, sizeof pp, "%s/circuit.params", dir);
    snprintf(rp, sizeof rp, "%s/circuit.r1cs", dir);
    snprintf(df, sizeof df, "%s/c.dens", g_tmp);   /* written by test_compacted */
    snprintf(zk, sizeof zk, "%s/bls12381_chain/circuit.zkey", ZP_FIXTURES_DIR);
    zp_keycache_t *kc = zp_keycache_new();
    CHECK(kc);
    zp_keyent_t *e1, *e2, *e3, *ez;
    CHECK(zp_keycache_key_r1cs(kc, pp, rp, true, &e1) == 0 && e1->r1cs && e1->key.conv == ZP_G16_CONV_BELLMAN &&
          e1->key.n_coefs > 0 && e1->zkey.n_vars == e1->key.n_vars);
    CHECK(zp_keycache_key_r1cs(kc, pp, rp, true, &e2) == 0 && e2 == e1);
    CHECK(zp_keycache_key_r1cs(kc, pp, df, true, &e3) == 0 && e3 != e1 && e3->key.n_coefs == 0);
    CHECK(zp_keycache_key_r1cs(kc, pp, NULL, true, &ez) == ZP_EFORMAT && strstr(zp_err_msg(), "needs its circuit"));
    CHECK(zp_keycache_key_r1cs(kc, pp, "/nonexistent/c.r1cs", true, &ez) < 0 && strstr(zp_err_msg(), "/nonexistent/c.r1cs"));
    CHECK(zp_keycache_key_r1cs(kc, zk, rp, true, &ez) == 0 && !ez->r1cs && ez->key.conv == 0);   /* a zkey ignores it */
    /* a --preload spec: PARAMS:R1CS is the same entry; a .params alone is refused by name; a
     * zkey path with a colon in it is a file, never split */
    zp_keyent_t *es, *ec;
    char spec[2300], colon[1024];
    snprintf(spec, sizeof spec, "%s:%s", pp, rp);
    CHECK(zp_keycache_key_spec(kc, spec, true, &es) == 0 && es == e1);
    CHECK(zp_keycache_preload(kc, spec) == 0);
    CHECK(zp_keycache_preload(kc, pp) == ZP_EFORMAT && strstr(zp_err_msg(), "--preload") && strstr(zp_err_msg(), "needs its circuit"));
    snprintf(spec, sizeof spec, "%s:/nonexistent/c.r1cs", pp);
    CHECK(zp_keycache_preload(kc, spec) < 0 && strstr(zp_err_msg(), "/nonexistent/c.r1cs"));
    snprintf(colon, sizeof colon, "%s/a:b.zkey", g_tmp);
    CHECK(symlink(zk, colon) == 0);
    CHECK(zp_keycache_key_spec(kc, colon, true, &ec) == 0 && ec->key.conv == 0 && !ec->r1cs);
    zp_keycache_release(kc, es);
    zp_keycache_release(kc, ec);
    unlink(colon);
    zp_keycache_release(kc, e1);
    zp_keycache_release(kc, e2);
    zp_keycache_release(kc, e3);
    zp_keycache_release(kc, ez);
    zp_keycache_destroy(&kc);
}

int main(void)
{
    snprintf(g_prefix, sizeof g_prefix, "/zp-test-bkey-%d", (int)getpid());
    snprintf(g_tmp, sizeof g_tmp, "/tmp/zp-test-bkey-XXXXXX");
    CHECK(mkdtemp(g_tmp));
    atexit(cleanup);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bellman/chain300", ZP_FIXTURES_DIR);
    test_compacted(dir);
    test_gather();
    test_pairing(dir);
    test_bind_dens(dir);
    test_store(dir);
    test_keycache(dir);
    printf("bellman_key: ok\n");
    return 0;
}
