/* bench_ff.c - micro-benchmark of the field arithmetic: ns per operation, as the best of many
 * short runs (robust against a busy machine). "lat" chains dependent operations, "thr" runs
 * 8 independent chains interleaved. Not a test; numbers only.
 * Build: ninja -C <build> lib/ff/bench_ff; run pinned: taskset -c 0 <build>/lib/ff/bench_ff */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/ff/ff.h"
#include "lib/ff/ff_inline.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

#define BENCH(T, NAME, SETUP, OP)                                                              \
    do {                                                                                       \
        T a[8], b;                                                                             \
        memset(a, 0, sizeof(a));                                                               \
        memset(&b, 0, sizeof(b));                                                              \
        SETUP;                                                                                 \
        const int n = 2000;                                                                    \
        double lat = 1e30, thr = 1e30;                                                         \
        for (int rep = 0; rep < 200; rep++) {                                                  \
            double t0 = now_ns();                                                              \
            for (int i = 0; i < n; i++) {                                                      \
                OP(&a[0], &a[0], &b);                                                          \
            }                                                                                  \
            double t1 = now_ns();                                                              \
            for (int i = 0; i < n / 8; i++) {                                                  \
                for (int j = 0; j < 8; j++) {                                                  \
                    OP(&a[j], &a[j], &b);                                                      \
                }                                                                              \
            }                                                                                  \
            double t2 = now_ns();                                                              \
            if ((t1 - t0) / n < lat)                                                           \
                lat = (t1 - t0) / n;                                                           \
            if ((t2 - t1) / n < thr)                                                           \
                thr = (t2 - t1) / n;                                                           \
        }                                                                                      \
        unsigned char sink = 0;                                                                \
        const unsigned char *pb = (const unsigned char *)a;                                    \
        for (size_t i = 0; i < sizeof(a); i++)                                                 \
            sink ^= pb[i];                                                                     \
        printf("%-28s lat %7.2f ns  thr %7.2f ns  (%02x)\n", NAME, lat, thr, sink);            \
    } while (0)

#define SET1(F) for (int i = 0; i < 8; i++) zp_##F##_set_u64(&a[i], 1234567 + i); zp_##F##_set_u64(&b, 987654321)
#define SET2(C) for (int i = 0; i < 8; i++) { zp_fq_##C##_set_u64(&a[i].c0, 12345 + i); zp_fq_##C##_set_u64(&a[i].c1, 7 + i); } \
    zp_fq_##C##_set_u64(&b.c0, 98765); zp_fq_##C##_set_u64(&b.c1, 3)
#define SET12(C) for (int i = 0; i < 8; i++) { zp_fq12_##C##_one(&a[i]); zp_fq_##C##_set_u64(&a[i].c1.c2.c1, 5 + i); } zp_fq12_##C##_one(&b); \
    zp_fq_##C##_set_u64(&b.c1.c0.c0, 3)

#define FIELD(F)                                                                               \
    static void F##_sqr3(zp_##F##_t *r, const zp_##F##_t *a, const zp_##F##_t *b) { (void)b; zp_##F##_sqr(r, a); } \
    static void F##_inv3(zp_##F##_t *r, const zp_##F##_t *a, const zp_##F##_t *b) { (void)b; zp_##F##_inv(r, a); } \
    static void F##_invv3(zp_##F##_t *r, const zp_##F##_t *a, const zp_##F##_t *b) { (void)b; zp_##F##_inv_vartime(r, a); } \
    static void bench_##F(void)                                                                \
    {                                                                                          \
        BENCH(zp_##F##_t, #F " mul", SET1(F), zp_##F##_mul);                                   \
        BENCH(zp_##F##_t, #F " mul_inl", SET1(F), zp_##F##_mul_inl);                           \
        BENCH(zp_##F##_t, #F " mul_ref (C)", SET1(F), zp_##F##_mul_ref);                       \
        BENCH(zp_##F##_t, #F " sqr", SET1(F), F##_sqr3);                                       \
        BENCH(zp_##F##_t, #F " add_inl", SET1(F), zp_##F##_add_inl);                           \
        BENCH(zp_##F##_t, #F " sub_inl", SET1(F), zp_##F##_sub_inl);                           \
        BENCH(zp_##F##_t, #F " inv", SET1(F), F##_inv3);                                       \
        BENCH(zp_##F##_t, #F " inv_vartime", SET1(F), F##_invv3);                               \
    }
FIELD(fr_bn254)
FIELD(fq_bn254)
FIELD(fr_bls12_381)
FIELD(fq_bls12_381)

#define TOWER(C)                                                                               \
    static void fq2_##C##_sqr3(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b) { (void)b; zp_fq2_##C##_sqr(r, a); } \
    static void fq12_##C##_sqr3(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a, const zp_fq12_##C##_t *b) { (void)b; zp_fq12_##C##_sqr(r, a); } \
    static void bench_tower_##C(void)                                                          \
    {                                                                                          \
        BENCH(zp_fq2_##C##_t, "fq2_" #C " mul", SET2(C), zp_fq2_##C##_mul);                    \
        BENCH(zp_fq2_##C##_t, "fq2_" #C " sqr", SET2(C), fq2_##C##_sqr3);                      \
        BENCH(zp_fq12_##C##_t, "fq12_" #C " mul", SET12(C), zp_fq12_##C##_mul);                \
        BENCH(zp_fq12_##C##_t, "fq12_" #C " sqr", SET12(C), fq12_##C##_sqr3);                  \
    }
TOWER(bn254)
TOWER(bls12_381)

int main(void)
{
#ifdef ZP_FF_ASM
    printf("ff: x86-64 mulx/adx assembly\n");
#else
    printf("ff: portable C\n");
#endif
    bench_fr_bn254();
    bench_fq_bn254();
    bench_fr_bls12_381();
    bench_fq_bls12_381();
    bench_tower_bn254();
    bench_tower_bls12_381();
    return 0;
}
