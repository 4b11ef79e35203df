/* test_cuda_common.h - inputs shared by the CUDA backend's tests (tests/test_cuda.c on a device
 * or the host emulation, tests/test_cuda_exec.c on the host emulation): points with the special
 * cases an MSM must handle, scalar mixes, a synthetic proving key with its a, b, c, w, and the
 * GPU == CPU comparisons. Include after test_common.h. */
#ifndef ZP_TEST_CUDA_COMMON_H
#define ZP_TEST_CUDA_COMMON_H
#include <stdlib.h>
#include <string.h>

#include "gpu-worker/cuda/backend_cuda.h"
#include "lib/groth16/backend_test.h"

/* mode 0: mixed specials and random; 1: binary witness (0/1, rare random); 2: uniform */
static void scalars_fill(zp_scalar_t *k, size_t n, const uint64_t *r, int mode)
{
    zp_scalar_t rep = {{rnd64(), rnd64(), rnd64(), rnd64() & (r[3] >> 1)}};
    for (size_t i = 0; i < n; i++) {
        memset(&k[i], 0, sizeof k[i]);
        unsigned sel = mode == 2 ? 9 : (unsigned)(rnd64() % 10);
        if (mode == 1) sel = sel < 5 ? 0 : sel < 9 ? 1 : 9;
        switch (sel) {
        case 0: break;
        case 1: k[i].l[0] = 1; break;
        case 2: memcpy(k[i].l, r, 32); k[i].l[0] -= 1; break;
        case 3: k[i].l[0] = rnd64() % 1000; break;
        case 4: k[i] = rep; break;
        default:
            for (int j = 0; j < 4; j++) k[i].l[j] = rnd64();
            k[i].l[3] &= r[3] >> 1;
            break;
        }
    }
}

/* a synthetic key of 2^lg (n_vars = 3/4 n, 3 public) with its proof inputs: w (binary-like),
 * a, b random, c = a * b (Montgomery) */
typedef struct {
    zp_g16_key_t key;
    void *pts[4];
    zp_scalar_t *w, *a, *b, *c, *h;
} synth_t;

static void synth_free(synth_t *s)
{
    for (int i = 0; i < 4; i++) free(s->pts[i]);
    free(s->w);
    free(s->a);
    memset(s, 0, sizeof *s);
}

#define CUDA_TEST_CURVE(C, CU)                                                                      \
    static zp_g1a_##C##_t *points_##C(size_t n)                                                     \
    {                                                                                               \
        size_t nd = n < ((size_t)1 << 16) ? n : ((size_t)1 << 16);                                  \
        zp_g1a_##C##_t *a = malloc((n ? n : 1) * sizeof *a), g;                                     \
        zp_g1_##C##_t *j = malloc((nd ? nd : 1) * sizeof *j), p, step;                              \
        zp_fq_##C##_t *scr = malloc((nd ? nd : 1) * sizeof *scr);                                   \
        zp_scalar_t k = {{rnd64(), rnd64(), rnd64(), rnd64() >> 8}};                                \
        if (!a || !j || !scr) abort();                                                              \
        zp_g1_##C##_generator(&g);                                                                  \
        zp_g1_##C##_from_affine(&p, &g);                                                            \
        zp_g1_##C##_mul(&step, &p, &k);                                                             \
        for (size_t i = 0; i < nd; i++) {                                                           \
            j[i] = p;                                                                               \
            zp_g1_##C##_add(&p, &p, &step);                                                         \
        }                                                                                           \
        zp_g1_##C##_batch_to_affine(a, j, nd, scr);                                                 \
        for (size_t i = 0; i < nd; i++) {                                                           \
            unsigned s = (unsigned)(rnd64() % 64);                                                  \
            if (s == 0) memset(&a[i], 0, sizeof a[i]);                                              \
            else if (s == 1 && i) a[i] = a[rnd64() % i];                                            \
            else if (s == 2 && i) zp_g1a_##C##_neg(&a[i], &a[rnd64() % i]);                         \
        }                                                                                           \
        for (size_t i = nd; i < n; i++) a[i] = a[i % nd];                                           \
        free(j);                                                                                    \
        free(scr);                                                                                  \
        return a;                                                                                   \
    }                                                                                               \
    static void synth_##C(synth_t *s, unsigned lg)                                                  \
    {                                                                                               \
        size_t n = (size_t)1 << lg;                                                                 \
        memset(s, 0, sizeof *s);                                                                    \
        s->key.curve = ZP_CURVE_##CU;                                                               \
        s->key.n_vars = (uint32_t)(n - n / 4 > 5 ? n - n / 4 : 5);                                  \
        s->key.n_public = 3;                                                                        \
        s->key.domain_size = (uint32_t)n;                                                           \
        s->key.log_n = lg;                                                                          \
        size_t np = s->key.n_vars > n ? s->key.n_vars : n;                                          \
        for (int i = 0; i < 4; i++) s->pts[i] = points_##C(np);                                     \
        s->key.a = s->pts[0];                                                                       \
        s->key.b1 = s->pts[1];                                                                      \
        s->key.c = s->pts[2];                                                                       \
        s->key.h = s->pts[3];                                                                       \
        s->w = malloc(np * sizeof *s->w);                                                           \
        scalars_fill(s->w, s->key.n_vars, zp_fr_##C##_modulus.l, 1);                                \
        zp_scalar_t *v = malloc(4 * n * sizeof *v);                                                 \
        if (!s->w || !v) abort();                                                                   \
        s->a = v;                                                                                   \
        s->b = v + n;                                                                               \
        s->c = v + 2 * n;                                                                           \
        s->h = v + 3 * n;                                                                           \
        zp_fr_##C##_t *fa = (zp_fr_##C##_t *)s->a, *fb = (zp_fr_##C##_t *)s->b,                     \
                      *fc = (zp_fr_##C##_t *)s->c;                                                  \
        for (size_t i = 0; i < n; i++) {                                                            \
            zp_fr_##C##_random(&fa[i], rnd_cb, NULL);                                               \
            zp_fr_##C##_random(&fb[i], rnd_cb, NULL);                                               \
            zp_fr_##C##_mul(&fc[i], &fa[i], &fb[i]);                                                \
        }                                                                                           \
    }                                                                                               \
    static int g1_eq_##C(const zp_g1_any_t *x, const zp_g1_any_t *y) { return zp_g1_##C##_eq(&x->C, &y->C); }

CUDA_TEST_CURVE(bn254, BN254)
CUDA_TEST_CURVE(bls12_381, BLS12_381)

static synth_t *synth_new(zp_curve_id_t curve, unsigned lg)
{
    synth_t *s = malloc(sizeof *s);
    if (!s) abort();
    if (curve == ZP_CURVE_BN254)
        synth_bn254(s, lg);
    else
        synth_bls12_381(s, lg);
    return s;
}

static void synth_destroy(synth_t **sp)
{
    if (!*sp) return;
    synth_free(*sp);
    free(*sp);
    *sp = NULL;
}

static int g1_eq(zp_curve_id_t curve, const zp_g1_any_t *x, const zp_g1_any_t *y)
{
    return curve == ZP_CURVE_BN254 ? g1_eq_bn254(x, y) : g1_eq_bls12_381(x, y);
}

static void *points_of(zp_curve_id_t curve, size_t n)
{
    return curve == ZP_CURVE_BN254 ? (void *)points_bn254(n) : (void *)points_bls12_381(n);
}

static const uint64_t *modulus_of(zp_curve_id_t curve)
{
    return curve == ZP_CURVE_BN254 ? zp_fr_bn254_modulus.l : zp_fr_bls12_381_modulus.l;
}

/* the 4 G1 MSMs of prove_g1 on the CPU backend (a, b copied: it clobbers them) */
static int cpu_prove_ref(zp_backend_t *cpu, const synth_t *s, zp_g1_any_t want[ZP_G16_NMSM])
{
    size_t n = s->key.domain_size;
    zp_scalar_t *v = malloc(3 * n * sizeof *v);
    if (!v) return -1;
    memcpy(v, s->a, 2 * n * sizeof *v);
    zp_g16_times_t t;
    int rc = zp_backend_cpu.load_key(cpu, &s->key);
    if (rc == 0) rc = zp_backend_cpu.prove_g1(cpu, &s->key, s->w, v, v + n, s->c, v + 2 * n, want, &t);
    free(v);
    return rc;
}

/* prove_g1 on a cuda backend (device or emulated) on copies of a, b; *h_kept = h's buffer was
 * not written (it is filled with a pattern first) */
static int cuda_prove(zp_backend_t *gpu, const synth_t *s, zp_g1_any_t got[ZP_G16_NMSM], int *h_kept,
                      zp_g16_times_t *t)
{
    size_t n = s->key.domain_size;
    zp_scalar_t *v = malloc(3 * n * sizeof *v);
    if (!v) return -1;
    memcpy(v, s->a, 2 * n * sizeof *v);
    memset(v + 2 * n, 0x5a, n * sizeof *v);
    int rc = zp_backend_cuda.load_key(gpu, &s->key);
    if (rc == 0) rc = zp_backend_cuda.prove_g1(gpu, &s->key, s->w, v, v + n, s->c, v + 2 * n, got, t);
    if (h_kept) {
        *h_kept = 1;
        for (size_t i = 0; i < n * sizeof *v; i++)
            if (((const uint8_t *)(v + 2 * n))[i] != 0x5a) *h_kept = 0;
    }
    free(v);
    return rc;
}

/* compute_h on both backends: 1 if equal */
static int h_equal(zp_backend_t *cpu, zp_backend_t *gpu, const synth_t *s, int *rc_out, zp_g16_times_t *t)
{
    size_t n = s->key.domain_size;
    zp_scalar_t *v = malloc(6 * n * sizeof *v);
    if (!v) return 0;
    memcpy(v, s->a, 2 * n * sizeof *v);
    memcpy(v + 3 * n, s->a, 2 * n * sizeof *v);
    zp_g16_times_t tc;
    int eq = 0;
    int rc = zp_backend_cpu_test_ops()->compute_h(cpu, &s->key, v, v + n, s->c, v + 2 * n, &tc);
    if (rc == 0) {
        rc = zp_backend_cuda_test_ops()->compute_h(gpu, &s->key, v + 3 * n, v + 4 * n, s->c, v + 5 * n, t);
        eq = rc == 0 && memcmp(v + 2 * n, v + 5 * n, n * sizeof *v) == 0;
    }
    *rc_out = rc;
    free(v);
    return eq;
}
#endif
