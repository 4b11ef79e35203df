/* test_cuda_bellman.c - the CUDA backend on bellman-convention keys (issue 29 item 4), run on
 * the host-emulated device runtime (cu_hostemu.cu: the device templates of cu_ntt.cuh and
 * cu_msm.cuh as loops on the CPU). No GPU needed.
 *   - synthetic BLS12-381 keys with k->conv = bellman (H's last point the identity, as the
 *     expansion makes it): compute_h == the CPU backend's (zp_g16_bellman_h_dom: bellman's
 *     roots, coset 7, n - 1 coefficients, h[n-1] = 0) and != the snarkjs H of the same vectors;
 *     prove_g1 and the staged verbs (stage_in, prove_staged, release_set) == CPU prove_g1, at
 *     odd and even log_n (the power tables split differently);
 *   - a snarkjs and a bellman key of the same domain alternating on one backend (the twiddle
 *     cache and the power tables are kept per conventions): every proof == CPU;
 *   - compacted keys (A / B1 as in a .params, random bitmaps): the emulated device's gather +
 *     MSMs, unstaged and staged, == the CPU backend == the same key expanded with identities;
 *   - upstream bellman's chain300 (.params + r1cs laid out as the key store does, witness):
 *     zp_g16_prove on the emulated CUDA backend at r = 5, s = 9 is proof_r5_s9.bin, byte for
 *     byte (upstream bellman's proof);
 *   - bellman conventions on BN254 refused by the backend (ZP_EFORMAT). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SEED 0x3c6ef372fe94f82bULL
#include "tests/test_common.h"
#include "tests/test_cuda_common.h"
#include "tests/test_slurp.h"
#include "lib/groth16/assignment.h"
#include "shm/keystore.h"

static zp_backend_t *cpu;

static zp_backend_t *emu_open(void)
{
    zp_backend_t *be = NULL;
    int rc = zp_cuda_open_emulated(&be, NULL, NULL);
    if (rc) {
        fprintf(stderr, "emulated open: %s: %s\n", zp_strerror(rc), zp_err_msg());
        abort();
    }
    return be;
}

static int emu_clean(zp_backend_t *be)
{
    zp_cu_emu_stats_t st;
    if (zp_cu_emu_stats(zp_cuda_cu(be), &st)) return 0;
    if (st.violations) fprintf(stderr, "stream-order violation: %s\n", st.first_violation);
    return st.violations == 0 && st.pending == 0;
}

/* a synthetic key of 2^lg with bellman's conventions: H's last point the identity */
static synth_t *bellman_synth(unsigned lg)
{
    synth_t *s = synth_new(ZP_CURVE_BLS12_381, lg);
    s->key.conv = ZP_G16_CONV_BELLMAN;
    memset((zp_g1a_bls12_381_t *)s->pts[3] + (s->key.domain_size - 1), 0, sizeof(zp_g1a_bls12_381_t));
    return s;
}

static int staged_prove(zp_backend_t *be, unsigned set, const synth_t *s, zp_g1_any_t got[ZP_G16_NMSM])
{
    zp_g16_times_t t;
    int rc = zp_backend_cuda.stage_in(be, set, &s->key, s->w, s->a, s->b, s->c);
    if (rc) return rc;
    rc = zp_backend_cuda.prove_staged(be, set, &s->key, got, &t);
    int r2 = zp_backend_cuda.release_set(be, set);
    return rc ? rc : r2;
}

static int same_g1(const zp_g1_any_t *want, const zp_g1_any_t *got)
{
    int ok = 1;
    for (int m = 0; m < ZP_G16_NMSM; m++) ok &= g1_eq(ZP_CURVE_BLS12_381, &want[m], &got[m]);
    return ok;
}

static void test_synth(void)
{
    static const unsigned lgs[] = {1, 2, 5, 8};
    for (size_t i = 0; i < sizeof lgs / sizeof *lgs; i++) {
        synth_t *s = bellman_synth(lgs[i]);
        zp_backend_t *be = emu_open();
        zp_g16_times_t t;
        int rc = -1, kept = 0;
        /* H itself */
        int eq = h_equal(cpu, be, s, &rc, &t);
        if (rc) fprintf(stderr, "bellman compute_h 2^%u: %s: %s\n", lgs[i], zp_strerror(rc), zp_err_msg());
        CHECK(rc == 0 && eq);
        s->key.conv = ZP_G16_CONV_SNARKJS;   /* the same vectors by snarkjs's H: another result */
        CHECK(h_equal(cpu, be, s, &rc, &t) == 1 && rc == 0);
        s->key.conv = ZP_G16_CONV_BELLMAN;
        size_t n = s->key.domain_size;
        zp_scalar_t *v = malloc(6 * n * sizeof *v);
        CHECK(v != NULL);
        memcpy(v, s->a, 2 * n * sizeof *v);
        memcpy(v + 3 * n, s->a, 2 * n * sizeof *v);
        s->key.conv = ZP_G16_CONV_SNARKJS;
        CHECK(zp_backend_cpu_test_ops()->compute_h(cpu, &s->key, v, v + n, s->c, v + 2 * n, &t) == 0);
        s->key.conv = ZP_G16_CONV_BELLMAN;
        CHECK(zp_backend_cuda_test_ops()->compute_h(be, &s->key, v + 3 * n, v + 4 * n, s->c, v + 5 * n, &t) == 0);
        CHECK(memcmp(v + 2 * n, v + 5 * n, n * sizeof *v) != 0);
        free(v);
        /* the G1 part: unstaged and staged */
        zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM];
        CHECK(cpu_prove_ref(cpu, s, want) == 0);
        rc = cuda_prove(be, s, got, &kept, &t);
        if (rc) fprintf(stderr, "bellman prove_g1 2^%u: %s: %s\n", lgs[i], zp_strerror(rc), zp_err_msg());
        CHECK(rc == 0 && kept && same_g1(want, got));
        for (unsigned set = 0; set < 2; set++) {
            memset(got, 0, sizeof got);
            rc = staged_prove(be, set, s, got);
            if (rc) fprintf(stderr, "bellman staged 2^%u set %u: %s: %s\n", lgs[i], set, zp_strerror(rc), zp_err_msg());
            CHECK(rc == 0 && same_g1(want, got));
        }
        CHECK(emu_clean(be));
        zp_backend_cuda.close(&be);
        synth_destroy(&s);
    }
    printf("  bellman keys: compute_h, prove_g1, staged == CPU backend (2^1, 2^2, 2^5, 2^8); != snarkjs's H\n");
}

/* a snarkjs and a bellman key of one domain, alternating on one backend */
static void test_alternate(void)
{
    synth_t *sj = synth_new(ZP_CURVE_BLS12_381, 6), *bl = bellman_synth(6);
    zp_g1_any_t want_sj[ZP_G16_NMSM], want_bl[ZP_G16_NMSM], got[ZP_G16_NMSM];
    CHECK(cpu_prove_ref(cpu, sj, want_sj) == 0);
    CHECK(cpu_prove_ref(cpu, bl, want_bl) == 0);
    zp_backend_t *be = emu_open();
    zp_g16_times_t t;
    for (int r = 0; r < 2; r++) {
        CHECK(cuda_prove(be, sj, got, NULL, &t) == 0 && same_g1(want_sj, got));
        CHECK(cuda_prove(be, bl, got, NULL, &t) == 0 && same_g1(want_bl, got));
        CHECK(staged_prove(be, 0, sj, got) == 0 && same_g1(want_sj, got));
        CHECK(staged_prove(be, 1, bl, got) == 0 && same_g1(want_bl, got));
    }
    CHECK(emu_clean(be));
    zp_backend_cuda.close(&be);
    synth_destroy(&sj);
    synth_destroy(&bl);
    printf("  a snarkjs and a bellman key of 2^6 alternating (unstaged and staged) == CPU\n");
}

/* faults on a compacted key: the k-th runtime call of load_key + prove_g1 fails (every k up to
 * the sequence's length; the bitmaps' upload with the key included), as a sticky device error
 * or as out-of-memory: an error or the right result, never a wrong one; after a failed allocation
 * (not sticky) the same backend proves the key right (a key left without its bitmaps uploads them at
 * its proof). Returns the sequence's length. */
static unsigned long compact_faults(const synth_t *sc, const zp_g1_any_t want[ZP_G16_NMSM])
{
    zp_g1_any_t got[ZP_G16_NMSM];
    zp_g16_times_t t;
    zp_cu_emu_stats_t st;
    zp_backend_t *be = emu_open();
    CHECK(cuda_prove(be, sc, got, NULL, &t) == 0 && same_g1(want, got));
    CHECK(zp_cu_emu_stats(zp_cuda_cu(be), &st) == 0);
    zp_backend_cuda.close(&be);
    unsigned long calls = st.calls;
    for (unsigned long k = 1; k <= calls; k++)
        for (int oom = 0; oom < 2; oom++) {
            zp_cu_emu_cfg_t cfg = {.fail_at = k, .fail_oom = oom};
            be = NULL;
            CHECK(zp_cuda_open_emulated(&be, NULL, &cfg) == 0 || k == 1);
            if (!be) continue;
            memset(got, 0, sizeof got);
            int rc = cuda_prove(be, sc, got, NULL, &t);
            if (rc == 0) CHECK(same_g1(want, got));
            else if (!oom) CHECK(rc == ZP_EDEVICE);
            zp_cu_emu_stats_t fs;
            CHECK(zp_cu_emu_stats(zp_cuda_cu(be), &fs) == 0);
            if (rc && !fs.poisoned) {   /* an allocation failed (not sticky): the key (its bitmaps too) makes it now */
                memset(got, 0, sizeof got);
                rc = cuda_prove(be, sc, got, NULL, &t);
                if (rc) fprintf(stderr, "compact fault %lu (oom) retry: %s: %s\n", k, zp_strerror(rc), zp_err_msg());
                CHECK(rc == 0 && same_g1(want, got));
            }
            zp_backend_cuda.close(&be);
        }
    return calls;
}

/* A compacted key (bellman's A / B as in the .params, k->compact): random bitmaps over the
 * wires (word edges included), A and B1 holding the selected wires' points only. The emulated
 * device's gather + MSMs (unstaged and staged) == the CPU backend's gather + MSMs == the CPU
 * backend on the same key expanded (the other wires' points the identity): a scalar paired
 * with the wrong point would change A or B1. */
static void test_compact(void)
{
    static const unsigned lgs[] = {5, 8};
    for (size_t li = 0; li < sizeof lgs / sizeof *lgs; li++) {
        synth_t *s = bellman_synth(lgs[li]);
        size_t nv = s->key.n_vars, words = (nv + 63) / 64, g1 = sizeof(zp_g1a_bls12_381_t);
        uint64_t *dens = calloc(2 * words, 8);
        uint32_t *pfx = calloc(2 * (words + 1), 4);
        uint8_t *ac = malloc(nv * g1), *bc = malloc(nv * g1), *ae = calloc(nv, g1), *be1 = calloc(nv, g1);
        CHECK(dens && pfx && ac && bc && ae && be1);
        size_t cnt[2] = {0, 0};
        for (int q = 0; q < 2; q++) {
            uint64_t *d = dens + q * words;
            uint32_t *p = pfx + q * (words + 1);
            const uint8_t *src = q ? s->key.b1 : s->key.a;
            uint8_t *cmp = q ? bc : ac, *exp = q ? be1 : ae;
            for (size_t w = 0; w < nv; w++) {
                bool on = (rnd64() & 1) || w == 0 || w == 64 || w == nv - 1;
                if (q && w == 63) on = false;
                if (!on) continue;
                d[w / 64] |= (uint64_t)1 << (w % 64);
                memcpy(cmp + cnt[q] * g1, src + w * g1, g1);
                memcpy(exp + w * g1, src + w * g1, g1);
                cnt[q]++;
            }
            uint32_t run = 0;
            for (size_t i = 0; i <= words; i++) {
                p[i] = run;
                if (i < words) run += (uint32_t)__builtin_popcountll(d[i]);
            }
        }
        CHECK(cnt[0] < nv && cnt[1] < nv);
        synth_t sc = *s, se = *s;   /* (views of s: never destroyed themselves) */
        sc.key.compact = 1;
        sc.key.n_a = (uint32_t)cnt[0];
        sc.key.n_b = (uint32_t)cnt[1];
        sc.key.a = ac;
        sc.key.b1 = bc;
        sc.key.dens_a = dens;
        sc.key.dens_b = dens + words;
        sc.key.pfx_a = pfx;
        sc.key.pfx_b = pfx + words + 1;
        se.key.a = ae;
        se.key.b1 = be1;
        zp_g1_any_t want[ZP_G16_NMSM], cpuc[ZP_G16_NMSM], got[ZP_G16_NMSM], dense[ZP_G16_NMSM];
        CHECK(cpu_prove_ref(cpu, &se, want) == 0);
        CHECK(cpu_prove_ref(cpu, &sc, cpuc) == 0 && same_g1(want, cpuc));
        CHECK(cpu_prove_ref(cpu, s, dense) == 0 && !same_g1(want, dense));   /* the bitmaps matter */
        zp_backend_t *be = emu_open();
        zp_g16_times_t t;
        int rc = cuda_prove(be, &sc, got, NULL, &t);
        if (rc) fprintf(stderr, "compact prove_g1 2^%u: %s: %s\n", lgs[li], zp_strerror(rc), zp_err_msg());
        CHECK(rc == 0 && same_g1(want, got));
        for (unsigned set = 0; set < 2; set++) {
            memset(got, 0, sizeof got);
            rc = staged_prove(be, set, &sc, got);
            if (rc) fprintf(stderr, "compact staged 2^%u set %u: %s: %s\n", lgs[li], set, zp_strerror(rc), zp_err_msg());
            CHECK(rc == 0 && same_g1(want, got));
        }
        CHECK(emu_clean(be));
        zp_backend_cuda.close(&be);
        unsigned long fcalls = li == 0 ? compact_faults(&sc, want) : 0;
        be = emu_open();
        sc.key.dens_b = NULL;   /* a compacted key without its bitmaps: refused, not read */
        CHECK(zp_backend_cuda.load_key(be, &sc.key) == ZP_EFORMAT);
        CHECK(emu_clean(be));
        zp_backend_cuda.close(&be);
        if (fcalls) printf("  compacted key 2^%u: a fault at each of %lu runtime calls (sticky, out of memory): an error "
                           "or the right result\n", lgs[li], fcalls);
        printf("  compacted key 2^%u: |A| %zu, |B| %zu of %zu wires: emulated gather + MSMs (unstaged, staged) == CPU "
               "== the expanded key\n", lgs[li], cnt[0], cnt[1], nv);
        free(dens); free(pfx); free(ac); free(bc); free(ae); free(be1);
        synth_destroy(&s);
    }
}

/* bellman's conventions are BLS12-381's only */
static void test_refused(void)
{
    synth_t *s = synth_new(ZP_CURVE_BN254, 3);
    s->key.conv = ZP_G16_CONV_BELLMAN;
    zp_backend_t *be = emu_open();
    zp_g1_any_t got[ZP_G16_NMSM];
    zp_g16_times_t t;
    CHECK(zp_backend_cuda.load_key(be, &s->key) == ZP_EFORMAT);
    CHECK(cuda_prove(be, s, got, NULL, &t) == ZP_EFORMAT);
    CHECK(zp_backend_cuda.stage_in(be, 0, &s->key, s->w, s->a, s->b, s->c) == ZP_EFORMAT);
    s->key.conv = 7;
    CHECK(zp_backend_cuda.load_key(be, &s->key) == ZP_EFORMAT);
    zp_backend_cuda.close(&be);
    synth_destroy(&s);
    printf("  bellman conventions on BN254, unknown conventions: refused\n");
}

/* upstream bellman's proof of chain300 from the compacted key on the emulated device */
static void test_chain300(void)
{
    char dir[1024], p[1100], rp[1100];
    snprintf(dir, sizeof dir, "%s/bellman/chain300", ZP_FIXTURES_DIR);
    snprintf(p, sizeof p, "%s/circuit.params", dir);
    snprintf(rp, sizeof rp, "%s/circuit.r1cs", dir);
    zp_g16_key_t k;
    int rc = zp_key_load_bellman_private(&k, p, rp, NULL);
    if (rc) fprintf(stderr, "chain300 key: %s: %s\n", zp_strerror(rc), zp_err_msg());
    CHECK(rc == 0);
    if (rc) return;
    CHECK(k.conv == ZP_G16_CONV_BELLMAN);
    zp_r1cs_t r1;
    zp_wtns_t wt;
    zp_scalar_t *w = NULL, rs[2];
    CHECK(zp_r1cs_open(&r1, rp) == 0);
    snprintf(p, sizeof p, "%s/witness.wtns", dir);
    CHECK(zp_wtns_open(&wt, p) == 0);
    CHECK(zp_g16_witness_load(&w, &wt) == 0);
    CHECK(zp_g16_scalar_from_dec(&rs[0], ZP_CURVE_BLS12_381, "5") == 0);
    CHECK(zp_g16_scalar_from_dec(&rs[1], ZP_CURVE_BLS12_381, "9") == 0);
    zp_backend_t *be = emu_open();
    CHECK(zp_backend_cuda.load_key(be, &k) == 0);
    zp_g16_proof_t proof;
    rc = zp_g16_prove(&proof, &k, w, &r1, &rs[0], &rs[1], &zp_backend_cuda, be, NULL, NULL);
    if (rc) fprintf(stderr, "chain300 prove: %s: %s\n", zp_strerror(rc), zp_err_msg());
    CHECK(rc == 0);
    uint8_t out[192];
    size_t len = 0, n = 0;
    CHECK(rc == 0 && zp_g16_conv((zp_g16_conv_id_t)k.conv)->proof_encode(out, sizeof out, &len, &proof) == 0 &&
          len == 192);
    snprintf(p, sizeof p, "%s/proof_r5_s9.bin", dir);
    char *ref = test_slurp(p, &n);
    CHECK(ref && n == 192 && !memcmp(ref, out, 192));
    free(ref);
    CHECK(emu_clean(be));
    zp_backend_cuda.close(&be);
    free(w);
    zp_wtns_close(&wt);
    zp_r1cs_close(&r1);
    printf("  chain300 (upstream bellman's .params, domain %u) on the emulated device: proof_r5_s9.bin byte for byte\n",
           k.domain_size);
    zp_g16_key_close(&k);
}

int main(int argc, char **argv)
{
    zp_log_init("test_cuda_bellman");
    (void)points_of;   /* helpers of test_cuda_common.h this test does not need */
    (void)modulus_of;
    if (!getenv("ZP_LOG")) zp_log_level = ZP_LOG_ERROR;
    zp_backend_cfg_t cfg = {.threads = 1, .device = 0};
    CHECK(zp_backend_cpu.open(&cpu, &cfg) == 0);
    const char *only = argc > 1 ? argv[1] : NULL;
    if (!only || !strcmp(only, "synth")) test_synth();
    if (!only || !strcmp(only, "alternate")) test_alternate();
    if (!only || !strcmp(only, "refused")) test_refused();
    if (!only || !strcmp(only, "compact")) test_compact();
    if (!only || !strcmp(only, "chain300")) test_chain300();
    zp_backend_cpu.close(&cpu);
    if (fails) {
        printf("test_cuda_bellman: %d failures\n", fails);
        return 1;
    }
    printf("test_cuda_bellman: ok\n");
    return 0;
}
