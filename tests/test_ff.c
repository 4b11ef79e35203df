/* test_ff.c - unit tests of lib/ff: known answers (computed independently with python3 big
 * integers), random property tests of the four prime fields, the asm/C paths against each
 * other, and the Fq2/Fq6/Fq12 towers (products against schoolbook, inverses, Frobenius against
 * pow(p^k), square roots). Deterministic (fixed seed) unless ZP_TEST_SEED is set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ff/ff.h"
#include "lib/ff/ff_inline.h"
#include "lib/util/util.h"

#define CHECK(c)                                                                              \
    do {                                                                                      \
        if (!(c)) {                                                                           \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c);             \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

enum { ITERS = 300 };

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int rnd(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    uint8_t *b = buf;
    for (size_t i = 0; i < len; i++)
        b[i] = (uint8_t)rng_next();
    return 0;
}

static int rnd_fail(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return -1;
}

/* name, p, a, b, a*b, 1/a, a^12345678901234567 (python3 pow) */
static const char *const known[4][7] = {
    {"fr_bn254", "21888242871839275222246405745257275088548364400416034343698204186575808495617", "6215087815076330926179520016461010917137519558660815034878824735059242618923", "15951728188012883138265176510482648277956245750475693862477712774865526280408", "1643441802524787827559163890712235711671909221173544096132336086782385592001", "11109078075244869595412947418246913188390325954951825438817877506839880925715", "18973964781064576392882189860450286743132815687006016302205208336025176162266"},
    {"fq_bn254", "21888242871839275222246405745257275088696311157297823662689037894645226208583", "18255373109897049727130802781095089727510501583111313296332426910213270751782", "1435512539167240917174679779456826558986830378504343210022207924205747402421", "19759449788492687518629862282876766429315232696095977721068985130437132505471", "2998356542330684218389334637531887856075644067020104566418118728149637177130", "14582508845116488302451324858323137267434972523159775895055470293883934266305"},
    {"fr_bls12_381", "52435875175126190479447740508185965837690552500527637822603658699938581184513", "24266492740577285727199634512037192814044758714990412188236620208088204171980", "39485258659583971773155502423369987505176877560415206932462727122655579596452", "31065354535221428147115033856045440226494527916488870834540173180557126655182", "18039384216178080417168703032495380573863044019829976215066712209658084586843", "10843462895890459345143592104618852925194139115943702259202935294934518928507"},
    {"fq_bls12_381", "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787", "2779655371275187554123407334704777245364363702447057529417738873010418671681678628521028777419588625726943667688843", "1478802208019738610114292969273120509552323226998965139407788295348848457438390191761179729730669124962980762739760", "2284775167006807962205293363884273651085198570356148963796301872539463570386901863347288903394973108862275523854509", "1823414470244675649780206804028247746234982810230707167121641263526465902527601225339133581151633614122242313790993", "3094552166866285893821425142479019236705517684169021009509334633248049947080801607039555086071443480060209102855870"},
};

/* decimal string minus one (s > 0, no leading zeros) */
static void dec_minus_one(char *out, const char *s)
{
    size_t n = strlen(s);
    memcpy(out, s, n + 1);
    for (size_t i = n; i-- > 0;) {
        if (out[i] > '0') {
            out[i]--;
            break;
        }
        out[i] = '9';
    }
    if (out[0] == '0' && n > 1)
        memmove(out, out + 1, n);
}

/* Tests of one prime field F with N limbs; KI = row of known[], NQR = a small non-residue,
 * BITS = bit length of p. */
#define FIELD_TESTS(F, N, KI, NQR)                                                             \
    static void test_##F(void)                                                                 \
    {                                                                                          \
        typedef zp_##F##_t T;                                                                  \
        const char *const *kn = known[KI];                                                     \
        T a, b, c, d, e, z, one = zp_##F##_one;                                                \
        char buf[200], buf2[200];                                                              \
        memset(&z, 0, sizeof(z));                                                              \
        /* constants: R and R^2 */                                                             \
        T plain1 = {{1}};                                                                      \
        zp_##F##_from_mont(&a, &one);                                                          \
        CHECK(zp_##F##_eq(&a, &plain1));                                                       \
        zp_##F##_from_mont(&a, &zp_##F##_r2);                                                  \
        CHECK(zp_##F##_eq(&a, &one));                                                          \
        CHECK(!zp_##F##_is_canonical(&zp_##F##_modulus));                                      \
        CHECK(zp_##F##_is_one(&one) && !zp_##F##_is_one(&z) && zp_##F##_is_zero(&z));         \
        /* modulus decimal: p rejected, p-1 == -1 */                                           \
        CHECK(zp_##F##_from_dec(&a, kn[1]) == ZP_EFORMAT);                                     \
        dec_minus_one(buf, kn[1]);                                                             \
        CHECK(zp_##F##_from_dec(&a, buf) == 0);                                                \
        zp_##F##_neg(&b, &one);                                                                \
        CHECK(zp_##F##_eq(&a, &b));                                                            \
        CHECK(zp_##F##_to_dec(buf2, sizeof(buf2), &a) == strlen(buf));                         \
        CHECK(strcmp(buf, buf2) == 0);                                                         \
        CHECK(zp_##F##_from_dec(&a, "") == ZP_EFORMAT);                                        \
        CHECK(zp_##F##_from_dec(&a, "12a") == ZP_EFORMAT);                                     \
        CHECK(zp_##F##_from_dec(&a, "-1") == ZP_EFORMAT);                                      \
        CHECK(zp_##F##_from_dec(&a, "0x") == ZP_EFORMAT);                                      \
        CHECK(zp_##F##_from_dec(&a, "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000") == ZP_EFORMAT); \
        CHECK(zp_##F##_from_dec(&a, "0") == 0 && zp_##F##_is_zero(&a));                       \
        CHECK(zp_##F##_to_dec(buf2, sizeof(buf2), &a) == 1 && strcmp(buf2, "0") == 0);         \
        CHECK(zp_##F##_from_dec(&a, "0x1F") == 0);                                             \
        zp_##F##_set_u64(&b, 31);                                                              \
        CHECK(zp_##F##_eq(&a, &b));                                                            \
        CHECK(zp_##F##_from_dec(&a, "10000000000000000000") == 0);                             \
        CHECK(zp_##F##_to_dec(buf2, sizeof(buf2), &a) == 20 && strcmp(buf2, "10000000000000000000") == 0); \
        CHECK(zp_##F##_to_dec(buf2, 5, &a) == 20 && strcmp(buf2, "1000") == 0);                \
        /* known answers */                                                                    \
        CHECK(zp_##F##_from_dec(&a, kn[2]) == 0);                                              \
        CHECK(zp_##F##_from_dec(&b, kn[3]) == 0);                                              \
        zp_##F##_mul(&c, &a, &b);                                                              \
        zp_##F##_to_dec(buf2, sizeof(buf2), &c);                                               \
        CHECK(strcmp(buf2, kn[4]) == 0);                                                       \
        zp_##F##_inv(&c, &a);                                                                  \
        zp_##F##_to_dec(buf2, sizeof(buf2), &c);                                               \
        CHECK(strcmp(buf2, kn[5]) == 0);                                                       \
        {                                                                                      \
            uint64_t ex[2] = {12345678901234567ULL, 0};                                        \
            zp_##F##_pow(&c, &a, ex, 2);                                                       \
            zp_##F##_to_dec(buf2, sizeof(buf2), &c);                                           \
            CHECK(strcmp(buf2, kn[6]) == 0);                                                   \
            zp_##F##_pow(&c, &a, ex, 0);                                                       \
            CHECK(zp_##F##_is_one(&c));                                                        \
        }                                                                                      \
        zp_##F##_to_dec(buf2, sizeof(buf2), &a);                                               \
        CHECK(strcmp(buf2, kn[2]) == 0);                                                       \
        zp_##F##_inv(&c, &z);                                                                  \
        CHECK(zp_##F##_is_zero(&c));                                                           \
        /* a non-residue */                                                                    \
        zp_##F##_set_u64(&a, NQR);                                                             \
        CHECK(!zp_##F##_is_square(&a) && !zp_##F##_sqrt(&b, &a));                              \
        CHECK(zp_##F##_sqrt(&b, &z) && zp_##F##_is_zero(&b) && zp_##F##_is_square(&z));        \
        /* non-canonical bytes rejected (p, and all ones) */                                   \
        {                                                                                      \
            uint8_t by[8 * N], be[8 * N];                                                      \
            for (int j = 0; j < N; j++)                                                        \
                for (int k = 0; k < 8; k++) {                                                  \
                    by[8 * j + k] = (uint8_t)(zp_##F##_modulus.l[j] >> (8 * k));               \
                    be[8 * N - 1 - (8 * j + k)] = by[8 * j + k];                               \
                }                                                                              \
            CHECK(zp_##F##_from_bytes_le(&a, by) == ZP_EFORMAT);                               \
            CHECK(zp_##F##_from_bytes_be(&a, be) == ZP_EFORMAT);                               \
            by[0]--;                                                                           \
            be[8 * N - 1]--;                                                                   \
            CHECK(zp_##F##_from_bytes_le(&a, by) == 0 && zp_##F##_eq(&a, &b) == false);         \
            zp_##F##_neg(&b, &one);                                                            \
            CHECK(zp_##F##_eq(&a, &b));                                                        \
            CHECK(zp_##F##_from_bytes_be(&a, be) == 0 && zp_##F##_eq(&a, &b));                 \
            memset(by, 0xff, sizeof(by));                                                      \
            CHECK(zp_##F##_from_bytes_le(&a, by) == ZP_EFORMAT);                               \
            zp_##F##_random(&a, rnd_fail, NULL);                                               \
            CHECK(zp_##F##_is_zero(&a));                                                       \
        }                                                                                      \
        /* edge values: all pairs, asm/inline against the C reference */                      \
        {                                                                                      \
            T sp[16];                                                                          \
            int ns = 0;                                                                        \
            memset(&sp[ns++], 0, sizeof(T));                                                   \
            sp[ns++] = plain1;                                                                 \
            sp[ns++] = one;                                                                    \
            sp[ns] = zp_##F##_modulus; sp[ns++].l[0] -= 1;                                     \
            sp[ns] = zp_##F##_modulus; sp[ns++].l[0] -= 2;                                     \
            for (int j = 0; j < N; j++) {                                                      \
                memset(&sp[ns], 0, sizeof(T));                                                 \
                sp[ns++].l[j] = 1;                                                             \
            }                                                                                  \
            sp[ns] = zp_##F##_modulus; /* p with low limbs all ones: still < p */              \
            for (int j = 0; j < N - 1; j++) sp[ns].l[j] = ~(uint64_t)0;                        \
            sp[ns].l[N - 1] -= 1;                                                              \
            ns++;                                                                              \
            sp[ns] = zp_##F##_modulus; sp[ns].l[0] = 0; ns++;                                  \
            for (int i = 0; i < ns; i++) {                                                     \
                CHECK(zp_##F##_is_canonical(&sp[i]));                                          \
                for (int j = 0; j < ns; j++) {                                                 \
                    T x, y;                                                                    \
                    zp_##F##_mul(&x, &sp[i], &sp[j]);                                          \
                    zp_##F##_mul_ref(&y, &sp[i], &sp[j]);                                      \
                    CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&x));                   \
                    zp_##F##_add(&x, &sp[i], &sp[j]);                                          \
                    zp_##F##_add_ref(&y, &sp[i], &sp[j]);                                      \
                    CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&x));                   \
                    zp_##F##_sub(&x, &sp[i], &sp[j]);                                          \
                    zp_##F##_sub_ref(&y, &sp[i], &sp[j]);                                      \
                    CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&x));                   \
                }                                                                              \
                T x, y;                                                                        \
                zp_##F##_sqr(&x, &sp[i]);                                                      \
                zp_##F##_sqr_ref(&y, &sp[i]);                                                  \
                CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&x));                       \
                zp_##F##_neg(&x, &sp[i]);                                                      \
                zp_##F##_sub_ref(&y, &z, &sp[i]);                                              \
                CHECK(zp_##F##_eq(&x, &y));                                                    \
            }                                                                                  \
        }                                                                                      \
        /* random properties */                                                                \
        T arr[40], arr2[40], scr[40];                                                          \
        for (int it = 0; it < ITERS; it++) {                                                   \
            zp_##F##_random(&a, rnd, NULL);                                                    \
            zp_##F##_random(&b, rnd, NULL);                                                    \
            zp_##F##_random(&c, rnd, NULL);                                                    \
            CHECK(zp_##F##_is_canonical(&a) && zp_##F##_is_canonical(&b));                     \
            if (it == 0) { a.l[0] = 0; a.l[N - 1] = 0; } /* an edge case */                     \
            T x, y, w;                                                                         \
            /* asm / inline / ref agree, canonical */                                          \
            zp_##F##_mul(&x, &a, &b);                                                          \
            zp_##F##_mul_ref(&y, &a, &b);                                                      \
            CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&x));                           \
            zp_##F##_mul_inl(&y, &a, &b);                                                      \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            /* double-width helpers: asm/inline against the C reference */                    \
            {                                                                                  \
                uint64_t w1[2 * N], w2[2 * N], w3[2 * N], w4[2 * N];                           \
                zp_##F##_mul_wide_inl(w1, &a, &b);                                             \
                zp_##F##_mul_wide_ref(w2, &a, &b);                                             \
                CHECK(memcmp(w1, w2, sizeof(w1)) == 0);                                        \
                zp_##F##_redc_inl(&x, w1);                                                     \
                zp_##F##_redc_ref(&y, w1);                                                     \
                CHECK(zp_##F##_eq(&x, &y));                                                    \
                zp_##F##_mul(&y, &a, &b);                                                      \
                CHECK(zp_##F##_eq(&x, &y));                                                    \
                zp_##F##_mul_wide_inl(w3, &c, &b);                                             \
                zp_##F##_wsubp_inl(w4, w1, w3);                                                \
                zp_##F##_wsubp_ref(w2, w1, w3);                                                \
                CHECK(memcmp(w4, w2, sizeof(w4)) == 0);                                        \
                zp_##F##_redc_inl(&x, w4);                                                     \
                zp_##F##_mul(&y, &c, &b);                                                      \
                zp_##F##_mul(&w, &a, &b);                                                      \
                zp_##F##_sub(&y, &w, &y);                                                      \
                CHECK(zp_##F##_eq(&x, &y)); /* ab - cb */                                      \
                zp_##F##_add_nr_inl(&x, &a, &c);                                               \
                zp_##F##_add_nr_ref(&y, &a, &c);                                               \
                CHECK(memcmp(&x, &y, sizeof(x)) == 0);                                         \
                zp_##F##_mul_wide_inl(w4, &x, &b); /* (a+c)b - ab = cb, exactly */             \
                zp_##F##_wsub_inl(w2, w4, w1);                                                 \
                zp_##F##_wsub_ref(w4, w4, w1);                                                 \
                CHECK(memcmp(w4, w2, sizeof(w4)) == 0 && memcmp(w2, w3, sizeof(w2)) == 0);    \
            }                                                                                  \
            zp_##F##_add(&x, &a, &b);                                                          \
            zp_##F##_add_ref(&y, &a, &b);                                                      \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_sub(&x, &a, &b);                                                          \
            zp_##F##_sub_ref(&y, &a, &b);                                                      \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_sub_inl(&x, &b, &a);                                                      \
            zp_##F##_sub_ref(&y, &b, &a);                                                      \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_sqr(&x, &a);                                                              \
            zp_##F##_sqr_ref(&y, &a);                                                          \
            CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&x));                           \
            zp_##F##_mul(&y, &a, &a);                                                          \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_sqr_inl(&y, &a);                                                          \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            /* commutativity, associativity, distributivity */                                 \
            zp_##F##_mul(&y, &b, &a);                                                          \
            zp_##F##_mul(&x, &a, &b);                                                          \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_mul(&x, &x, &c);                                                          \
            zp_##F##_mul(&y, &b, &c);                                                          \
            zp_##F##_mul(&y, &a, &y);                                                          \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_add(&x, &b, &c);                                                          \
            CHECK(zp_##F##_is_canonical(&x));                                                  \
            zp_##F##_mul(&x, &a, &x);                                                          \
            zp_##F##_mul(&y, &a, &b);                                                          \
            zp_##F##_mul(&w, &a, &c);                                                          \
            zp_##F##_add(&y, &y, &w);                                                          \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_add(&x, &a, &b);                                                          \
            zp_##F##_add(&y, &b, &a);                                                          \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_sub(&x, &x, &b);                                                          \
            CHECK(zp_##F##_eq(&x, &a));                                                        \
            zp_##F##_sub(&x, &a, &b);                                                          \
            CHECK(zp_##F##_is_canonical(&x));                                                  \
            zp_##F##_add(&x, &x, &b);                                                          \
            CHECK(zp_##F##_eq(&x, &a));                                                        \
            zp_##F##_neg(&x, &a);                                                              \
            CHECK(zp_##F##_is_canonical(&x));                                                  \
            zp_##F##_add(&x, &x, &a);                                                          \
            CHECK(zp_##F##_is_zero(&x));                                                       \
            zp_##F##_sub(&x, &z, &a);                                                          \
            zp_##F##_neg(&y, &a);                                                              \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_dbl(&x, &a);                                                              \
            zp_##F##_add(&y, &a, &a);                                                          \
            CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&x));                           \
            zp_##F##_mul(&x, &a, &one);                                                        \
            CHECK(zp_##F##_eq(&x, &a));                                                        \
            /* inverse */                                                                      \
            zp_##F##_inv(&x, &a);                                                              \
            zp_##F##_mul(&x, &x, &a);                                                          \
            CHECK(zp_##F##_is_one(&x) || zp_##F##_is_zero(&a));                                \
            /* sqrt of squares; non-residue times square */                                    \
            zp_##F##_sqr(&x, &a);                                                              \
            CHECK(zp_##F##_is_square(&x));                                                     \
            CHECK(zp_##F##_sqrt(&y, &x));                                                      \
            zp_##F##_sqr(&y, &y);                                                              \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
            zp_##F##_set_u64(&w, NQR);                                                         \
            zp_##F##_mul(&x, &x, &w);                                                          \
            CHECK(zp_##F##_is_zero(&a) || (!zp_##F##_is_square(&x) && !zp_##F##_sqrt(&y, &x))); \
            CHECK(zp_##F##_is_square(&b) == zp_##F##_sqrt(&y, &b));                            \
            /* pow vs repeated mul */                                                          \
            {                                                                                  \
                uint64_t k = rng_next() % 70;                                                  \
                T acc = one;                                                                   \
                for (uint64_t i = 0; i < k; i++)                                               \
                    zp_##F##_mul(&acc, &acc, &a);                                              \
                zp_##F##_pow(&x, &a, &k, 1);                                                   \
                CHECK(zp_##F##_eq(&x, &acc));                                                  \
                uint64_t e2[3] = {rng_next(), rng_next(), 0};                                  \
                uint64_t e1[1] = {e2[1]};                                                      \
                zp_##F##_pow(&x, &a, e2, 3); /* a^(e0 + e1 2^64) = a^e0 * (a^e1)^(2^64) */     \
                zp_##F##_pow(&y, &a, e1, 1);                                                   \
                for (int i = 0; i < 64; i++)                                                   \
                    zp_##F##_sqr(&y, &y);                                                      \
                zp_##F##_pow(&w, &a, e2, 1);                                                   \
                zp_##F##_mul(&y, &y, &w);                                                      \
                CHECK(zp_##F##_eq(&x, &y));                                                    \
                /* Fermat: a^(p-1) = 1 */                                                      \
                uint64_t pm1[N];                                                               \
                memcpy(pm1, zp_##F##_modulus.l, sizeof(pm1));                                  \
                pm1[0] -= 1;                                                                   \
                zp_##F##_pow(&x, &a, pm1, N);                                                  \
                CHECK(zp_##F##_is_one(&x) || zp_##F##_is_zero(&a));                            \
            }                                                                                  \
            /* bytes and decimal round trips */                                                \
            {                                                                                  \
                uint8_t le[8 * N], be[8 * N];                                                  \
                zp_##F##_to_bytes_le(le, &a);                                                  \
                zp_##F##_to_bytes_be(be, &a);                                                  \
                for (int i = 0; i < 8 * N; i++)                                                \
                    CHECK(le[i] == be[8 * N - 1 - i]);                                         \
                zp_##F##_from_mont(&x, &a);                                                    \
                for (int i = 0; i < 8 * N; i++)                                                \
                    CHECK(le[i] == (uint8_t)(x.l[i / 8] >> (8 * (i % 8))));                    \
                CHECK(zp_##F##_from_bytes_le(&x, le) == 0 && zp_##F##_eq(&x, &a));             \
                CHECK(zp_##F##_from_bytes_be(&x, be) == 0 && zp_##F##_eq(&x, &a));             \
                size_t len = zp_##F##_to_dec(buf, sizeof(buf), &a);                            \
                CHECK(len == strlen(buf) && len < 120);                                        \
                CHECK(zp_##F##_from_dec(&x, buf) == 0 && zp_##F##_eq(&x, &a));                 \
                zp_##F##_from_mont(&x, &a);                                                    \
                zp_##F##_to_mont(&y, &x);                                                      \
                CHECK(zp_##F##_eq(&y, &a));                                                    \
                /* hex */                                                                      \
                char hx[8 * N * 2 + 3] = "0x";                                                 \
                for (int i = 0; i < 8 * N; i++)                                                \
                    snprintf(hx + 2 + 2 * i, 3, "%02x", be[i]);                                \
                CHECK(zp_##F##_from_dec(&y, hx) == 0 && zp_##F##_eq(&y, &a));                  \
            }                                                                                  \
        }                                                                                      \
        /* batch inverse with zeros */                                                         \
        for (int i = 0; i < 40; i++) {                                                         \
            if (i % 7 == 3)                                                                    \
                memset(&arr[i], 0, sizeof(arr[i]));                                            \
            else                                                                               \
                zp_##F##_random(&arr[i], rnd, NULL);                                           \
            arr2[i] = arr[i];                                                                  \
        }                                                                                      \
        zp_##F##_batch_inv(arr2, 40, scr);                                                     \
        for (int i = 0; i < 40; i++) {                                                         \
            zp_##F##_inv(&d, &arr[i]);                                                         \
            CHECK(zp_##F##_eq(&d, &arr2[i]));                                                  \
        }                                                                                      \
        zp_##F##_batch_inv(arr2, 0, scr);                                                      \
        /* the variable-time one (the MSM's vector path) gives the same, zeros kept */          \
        for (int i = 0; i < 40; i++) arr2[i] = arr[i];                                         \
        zp_##F##_batch_inv_vartime(arr2, 40, scr);                                             \
        for (int i = 0; i < 40; i++) {                                                         \
            zp_##F##_inv(&d, &arr[i]);                                                         \
            CHECK(zp_##F##_eq(&d, &arr2[i]));                                                  \
        }                                                                                      \
        (void)e;                                                                               \
        printf("ff %s ok\n", #F);                                                              \
    }

FIELD_TESTS(fr_bn254, 4, 0, 5)
FIELD_TESTS(fq_bn254, 4, 1, 3)
FIELD_TESTS(fr_bls12_381, 4, 2, 5)
FIELD_TESTS(fq_bls12_381, 6, 3, 2)

static void test_roots(void)
{
    zp_fr_bn254_t a, b;
    CHECK(zp_fr_bn254_from_dec(&a, "19103219067921713944291392827692070036145651957329286315305642004821462161904") == 0);
    CHECK(zp_fr_bn254_eq(&a, zp_fr_bn254_root(28)));
    CHECK(zp_fr_bn254_is_one(zp_fr_bn254_root(0)));
    zp_fr_bn254_neg(&b, &zp_fr_bn254_one);
    CHECK(zp_fr_bn254_eq(&b, zp_fr_bn254_root(1)));
    CHECK(zp_fr_bn254_root(29) == NULL);
    for (unsigned k = 1; k <= 28; k++) {
        zp_fr_bn254_sqr(&a, zp_fr_bn254_root(k));
        CHECK(zp_fr_bn254_eq(&a, zp_fr_bn254_root(k - 1)));
    }
    /* w[28] = 5^((r-1)/2^28) computed here by pow */
    {
        uint64_t t[4];
        memcpy(t, zp_fr_bn254_modulus.l, sizeof(t));
        t[0] -= 1;
        for (int i = 0; i < 28; i++) {
            for (int j = 0; j < 3; j++)
                t[j] = (t[j] >> 1) | (t[j + 1] << 63);
            t[3] >>= 1;
        }
        zp_fr_bn254_set_u64(&a, 5);
        zp_fr_bn254_pow(&a, &a, t, 4);
        CHECK(zp_fr_bn254_eq(&a, zp_fr_bn254_root(28)));
    }
    zp_fr_bls12_381_t c, d;
    CHECK(zp_fr_bls12_381_from_dec(&c, "937917089079007706106976984802249742464848817460758522850752807661925904159") == 0);
    CHECK(zp_fr_bls12_381_eq(&c, zp_fr_bls12_381_root(32)));
    CHECK(zp_fr_bls12_381_is_one(zp_fr_bls12_381_root(0)));
    zp_fr_bls12_381_neg(&d, &zp_fr_bls12_381_one);
    CHECK(zp_fr_bls12_381_eq(&d, zp_fr_bls12_381_root(1)));
    CHECK(zp_fr_bls12_381_root(33) == NULL);
    for (unsigned k = 1; k <= 32; k++) {
        zp_fr_bls12_381_sqr(&c, zp_fr_bls12_381_root(k));
        CHECK(zp_fr_bls12_381_eq(&c, zp_fr_bls12_381_root(k - 1)));
    }
    printf("ff roots ok\n");
}

/* Tower tests of curve C over base field FQ with xi = XI0 + u. Schoolbook references:
 * fq6 = sum x_i v^i with v^3 = xi; fq12 = sum y_j w^j (j = 0..5) with w^6 = xi, where
 * c0 = (x0, x1, x2) -> w^0, w^2, w^4 and c1 = (y0, y1, y2) -> w^1, w^3, w^5. */
#define TOWER_TESTS(C, FQ, N, XI0)                                                             \
    typedef zp_fq2_##C##_t C##_e2;                                                             \
    static void C##_rand2(C##_e2 *r)                                                           \
    {                                                                                          \
        zp_##FQ##_random(&r->c0, rnd, NULL);                                                   \
        zp_##FQ##_random(&r->c1, rnd, NULL);                                                   \
    }                                                                                          \
    static void C##_rand12(zp_fq12_##C##_t *r)                                                 \
    {                                                                                          \
        C##_e2 *e = &r->c0.c0;                                                                 \
        for (int i = 0; i < 6; i++)                                                            \
            C##_rand2(&e[i]);                                                                  \
    }                                                                                          \
    /* schoolbook fq2 product */                                                               \
    static void C##_mul2_sb(C##_e2 *r, const C##_e2 *a, const C##_e2 *b)                       \
    {                                                                                          \
        zp_##FQ##_t t0, t1, t2, t3;                                                            \
        zp_##FQ##_mul(&t0, &a->c0, &b->c0);                                                    \
        zp_##FQ##_mul(&t1, &a->c1, &b->c1);                                                    \
        zp_##FQ##_mul(&t2, &a->c0, &b->c1);                                                    \
        zp_##FQ##_mul(&t3, &a->c1, &b->c0);                                                    \
        zp_##FQ##_sub(&r->c0, &t0, &t1);                                                       \
        zp_##FQ##_add(&r->c1, &t2, &t3);                                                       \
    }                                                                                          \
    static void C##_xi(C##_e2 *r)                                                              \
    {                                                                                          \
        zp_##FQ##_set_u64(&r->c0, XI0);                                                        \
        zp_##FQ##_set_u64(&r->c1, 1);                                                          \
    }                                                                                          \
    /* product of polynomials over fq2 of n terms, reduced by x^n = xi (n = 3 or 6) */         \
    static void C##_polymul(C##_e2 *r, const C##_e2 *a, const C##_e2 *b, int n)                \
    {                                                                                          \
        C##_e2 acc[12], t, xi;                                                                 \
        memset(acc, 0, sizeof(acc));                                                           \
        C##_xi(&xi);                                                                           \
        for (int i = 0; i < n; i++)                                                            \
            for (int j = 0; j < n; j++) {                                                      \
                C##_mul2_sb(&t, &a[i], &b[j]);                                                 \
                zp_fq2_##C##_add(&acc[i + j], &acc[i + j], &t);                                \
            }                                                                                  \
        for (int i = 0; i < n; i++) {                                                          \
            C##_mul2_sb(&t, &acc[i + n], &xi);                                                 \
            zp_fq2_##C##_add(&r[i], &acc[i], &t);                                              \
        }                                                                                      \
    }                                                                                          \
    static void C##_to_w(C##_e2 *w, const zp_fq12_##C##_t *a)                                  \
    {                                                                                          \
        w[0] = a->c0.c0; w[2] = a->c0.c1; w[4] = a->c0.c2;                                     \
        w[1] = a->c1.c0; w[3] = a->c1.c1; w[5] = a->c1.c2;                                     \
    }                                                                                          \
    static void test_tower_##C(void)                                                           \
    {                                                                                          \
        C##_e2 a, b, x, y, xi;                                                                 \
        zp_fq6_##C##_t a6, b6, x6, y6;                                                         \
        zp_fq12_##C##_t a12, b12, x12, y12, one12;                                             \
        zp_fq12_##C##_one(&one12);                                                             \
        CHECK(zp_fq12_##C##_is_one(&one12));                                                   \
        C##_xi(&xi);                                                                           \
        for (int it = 0; it < ITERS / 3; it++) {                                               \
            C##_rand2(&a);                                                                     \
            C##_rand2(&b);                                                                     \
            if (it == 0) memset(&a.c1, 0, sizeof(a.c1));                                       \
            if (it == 1) memset(&a.c0, 0, sizeof(a.c0));                                       \
            /* fq2 */                                                                          \
            zp_fq2_##C##_mul(&x, &a, &b);                                                      \
            C##_mul2_sb(&y, &a, &b);                                                           \
            CHECK(zp_fq2_##C##_eq(&x, &y));                                                    \
            zp_fq2_##C##_sqr(&x, &a);                                                          \
            C##_mul2_sb(&y, &a, &a);                                                           \
            CHECK(zp_fq2_##C##_eq(&x, &y));                                                    \
            zp_fq2_##C##_mul_xi(&x, &a);                                                       \
            C##_mul2_sb(&y, &a, &xi);                                                          \
            CHECK(zp_fq2_##C##_eq(&x, &y));                                                    \
            zp_fq2_##C##_mul_fq(&x, &a, &b.c0);                                                \
            y = b; memset(&y.c1, 0, sizeof(y.c1));                                             \
            C##_mul2_sb(&y, &a, &y);                                                           \
            CHECK(zp_fq2_##C##_eq(&x, &y));                                                    \
            zp_fq2_##C##_inv(&x, &a);                                                          \
            zp_fq2_##C##_mul(&x, &x, &a);                                                      \
            CHECK(zp_##FQ##_is_one(&x.c0) && zp_##FQ##_is_zero(&x.c1));                        \
            zp_fq2_##C##_add(&x, &a, &b);                                                      \
            zp_fq2_##C##_sub(&x, &x, &b);                                                      \
            CHECK(zp_fq2_##C##_eq(&x, &a));                                                    \
            zp_fq2_##C##_neg(&x, &a);                                                          \
            zp_fq2_##C##_add(&x, &x, &a);                                                      \
            CHECK(zp_fq2_##C##_is_zero(&x));                                                   \
            zp_fq2_##C##_dbl(&x, &a);                                                          \
            zp_fq2_##C##_add(&y, &a, &a);                                                      \
            CHECK(zp_fq2_##C##_eq(&x, &y));                                                    \
            zp_fq2_##C##_conj(&x, &a);                                                         \
            zp_fq2_##C##_frobenius(&y, &a, 1);                                                 \
            CHECK(zp_fq2_##C##_eq(&x, &y));                                                    \
            /* sqrt: of a square; a iff norm square */                                         \
            zp_fq2_##C##_sqr(&x, &a);                                                          \
            CHECK(zp_fq2_##C##_sqrt(&y, &x));                                                  \
            zp_fq2_##C##_sqr(&y, &y);                                                          \
            CHECK(zp_fq2_##C##_eq(&x, &y));                                                    \
            {                                                                                  \
                zp_##FQ##_t n0, n1;                                                            \
                zp_##FQ##_sqr(&n0, &b.c0);                                                     \
                zp_##FQ##_sqr(&n1, &b.c1);                                                     \
                zp_##FQ##_add(&n0, &n0, &n1);                                                  \
                bool sq = zp_##FQ##_is_square(&n0);                                            \
                CHECK(zp_fq2_##C##_sqrt(&y, &b) == sq);                                        \
                if (sq) {                                                                      \
                    zp_fq2_##C##_sqr(&y, &y);                                                  \
                    CHECK(zp_fq2_##C##_eq(&y, &b));                                            \
                }                                                                              \
            }                                                                                  \
            /* fq6 */                                                                          \
            C##_rand2(&a6.c0); C##_rand2(&a6.c1); C##_rand2(&a6.c2);                           \
            C##_rand2(&b6.c0); C##_rand2(&b6.c1); C##_rand2(&b6.c2);                           \
            zp_fq6_##C##_mul(&x6, &a6, &b6);                                                   \
            C##_polymul(&y6.c0, &a6.c0, &b6.c0, 3);                                            \
            CHECK(memcmp(&x6, &y6, sizeof(x6)) == 0);                                          \
            zp_fq6_##C##_sqr(&x6, &a6);                                                        \
            C##_polymul(&y6.c0, &a6.c0, &a6.c0, 3);                                            \
            CHECK(memcmp(&x6, &y6, sizeof(x6)) == 0);                                          \
            zp_fq6_##C##_mul_v(&x6, &a6);                                                      \
            memset(&b6, 0, sizeof(b6));                                                        \
            b6.c1.c0 = zp_##FQ##_one;                                                          \
            zp_fq6_##C##_mul(&y6, &a6, &b6);                                                   \
            CHECK(memcmp(&x6, &y6, sizeof(x6)) == 0);                                          \
            zp_fq6_##C##_inv(&x6, &a6);                                                        \
            zp_fq6_##C##_mul(&x6, &x6, &a6);                                                   \
            memset(&y6, 0, sizeof(y6));                                                        \
            y6.c0.c0 = zp_##FQ##_one;                                                          \
            CHECK(memcmp(&x6, &y6, sizeof(x6)) == 0);                                          \
            zp_fq6_##C##_neg(&x6, &a6);                                                        \
            zp_fq6_##C##_add(&x6, &x6, &a6);                                                   \
            zp_fq6_##C##_sub(&x6, &x6, &x6);                                                   \
            memset(&y6, 0, sizeof(y6));                                                        \
            CHECK(memcmp(&x6, &y6, sizeof(x6)) == 0);                                          \
            /* fq12 */                                                                         \
            C##_rand12(&a12);                                                                  \
            C##_rand12(&b12);                                                                  \
            {                                                                                  \
                C##_e2 wa[6], wb[6], wr[6], wx[6];                                             \
                C##_to_w(wa, &a12);                                                            \
                C##_to_w(wb, &b12);                                                            \
                C##_polymul(wr, wa, wb, 6);                                                    \
                zp_fq12_##C##_mul(&x12, &a12, &b12);                                           \
                C##_to_w(wx, &x12);                                                            \
                CHECK(memcmp(wx, wr, sizeof(wr)) == 0);                                        \
                C##_polymul(wr, wa, wa, 6);                                                    \
                zp_fq12_##C##_sqr(&x12, &a12);                                                 \
                C##_to_w(wx, &x12);                                                            \
                CHECK(memcmp(wx, wr, sizeof(wr)) == 0);                                        \
            }                                                                                  \
            zp_fq12_##C##_inv(&x12, &a12);                                                     \
            zp_fq12_##C##_mul(&x12, &x12, &a12);                                               \
            CHECK(zp_fq12_##C##_is_one(&x12));                                                 \
            CHECK(!zp_fq12_##C##_eq(&a12, &b12));                                              \
            /* conj = frobenius^6 */                                                           \
            zp_fq12_##C##_conj(&x12, &a12);                                                    \
            zp_fq12_##C##_frobenius(&y12, &a12, 6);                                            \
            CHECK(zp_fq12_##C##_eq(&x12, &y12));                                               \
        }                                                                                      \
        /* Frobenius^k = pow(p) k times, k = 0..12, on fq12 (covers fq6 and fq2 too) */        \
        for (int it = 0; it < 3; it++) {                                                       \
            C##_rand12(&a12);                                                                  \
            zp_fq12_##C##_t pk = a12;                                                          \
            for (unsigned k = 0; k <= 12; k++) {                                               \
                zp_fq12_##C##_frobenius(&x12, &a12, k);                                        \
                CHECK(zp_fq12_##C##_eq(&x12, &pk));                                            \
                zp_fq6_##C##_frobenius(&x6, &a12.c0, k);                                       \
                CHECK(memcmp(&x6, &pk.c0, sizeof(x6)) == 0);                                   \
                zp_fq2_##C##_frobenius(&x, &a12.c0.c0, k);                                     \
                CHECK(zp_fq2_##C##_eq(&x, &pk.c0.c0));                                         \
                zp_fq12_##C##_pow(&pk, &pk, zp_##FQ##_modulus.l, N);                           \
            }                                                                                  \
            /* pow vs repeated mul */                                                          \
            uint64_t e[2] = {rng_next() % 40, 0};                                              \
            zp_fq12_##C##_pow(&x12, &a12, e, 2);                                               \
            zp_fq12_##C##_one(&y12);                                                           \
            for (uint64_t i = 0; i < e[0]; i++)                                                \
                zp_fq12_##C##_mul(&y12, &y12, &a12);                                           \
            CHECK(zp_fq12_##C##_eq(&x12, &y12));                                               \
        }                                                                                      \
        (void)one12;                                                                           \
        printf("ff tower %s ok\n", #C);                                                        \
    }

TOWER_TESTS(bn254, fq_bn254, 4, 9)
TOWER_TESTS(bls12_381, fq_bls12_381, 6, 1)

/* the variable-time (safegcd) inversion against Fermat's a^(p-2), and a a^-1 = 1, on 0, 1,
 * 2, 3, p-1, p-2, (p-1)/2, (p+1)/2, 2^k - 1, 2^k, 2^k + 1 for every k below p's bit length,
 * the Montgomery one and R^2, single-limb values, and random elements */
static bool inv_edge(uint64_t *l, unsigned nl, const uint64_t *p, unsigned i)
{
    memset(l, 0, nl * sizeof *l);
    unsigned bits = 64 * nl;
    while (!((p[(bits - 1) / 64] >> ((bits - 1) % 64)) & 1)) bits--;
    if (i < 4) { l[0] = i; return true; }
    i -= 4;
    if (i < 4) {                                 /* p-1, p-2, (p-1)/2, (p+1)/2 */
        memcpy(l, p, nl * sizeof *l);
        l[0] -= i == 1 ? 2 : 1;
        if (i >= 2) {
            for (unsigned j = 0; j < nl; j++) l[j] = (l[j] >> 1) | (j + 1 < nl ? l[j + 1] << 63 : 0);
            if (i == 3) l[0] += 1;
        }
        return true;
    }
    i -= 4;
    unsigned k = 1 + i / 3, v = i % 3;
    if (k >= bits) return false;
    l[k / 64] = (uint64_t)1 << (k % 64);         /* 2^k */
    if (v == 1) l[0] += 1;
    if (v == 2) {                                /* 2^k - 1 */
        for (unsigned j = 0; j < nl; j++) {
            bool borrow = l[j] == 0;
            l[j]--;
            if (!borrow) break;
        }
    }
    return true;
}

#define INV_TEST(F)                                                                            \
    static void test_inv_vartime_##F(void)                                                     \
    {                                                                                          \
        enum { NL = ZP_##F##_LIMBS };                                                          \
        zp_##F##_t a, x, y, t;                                                                 \
        unsigned n = 0;                                                                        \
        for (unsigned i = 0; inv_edge(a.l, NL, zp_##F##_modulus.l, i); i++, n++) {            \
            CHECK(zp_##F##_is_canonical(&a));                                                  \
            zp_##F##_inv(&x, &a);                                                              \
            zp_##F##_inv_vartime(&y, &a);                                                      \
            CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&y));                           \
            zp_##F##_mul(&t, &a, &y);                                                          \
            CHECK(i == 0 ? zp_##F##_is_zero(&y) : zp_##F##_is_one(&t));                        \
        }                                                                                      \
        CHECK(n > 3 * 250);                                                                    \
        const zp_##F##_t special[2] = {zp_##F##_one, zp_##F##_r2};                             \
        for (unsigned i = 0; i < 2; i++) {                                                     \
            zp_##F##_inv(&x, &special[i]);                                                     \
            zp_##F##_inv_vartime(&y, &special[i]);                                             \
            CHECK(zp_##F##_eq(&x, &y));                                                        \
        }                                                                                      \
        for (unsigned i = 0; i < 20 * ITERS; i++) {                                            \
            zp_##F##_random(&a, rnd, NULL);                                                    \
            if (i % 4 == 1) for (unsigned j = 1; j < NL; j++) a.l[j] = 0;  /* one limb */      \
            if (i % 4 == 2) a.l[NL - 1] = 0;             /* shorter */                         \
            zp_##F##_inv(&x, &a);                                                              \
            zp_##F##_inv_vartime(&y, &a);                                                      \
            CHECK(zp_##F##_eq(&x, &y) && zp_##F##_is_canonical(&y));                           \
            zp_##F##_inv_vartime(&t, &y);                /* (a^-1)^-1 = a */                   \
            CHECK(zp_##F##_eq(&t, &a));                                                        \
        }                                                                                      \
    }
INV_TEST(fr_bn254)
INV_TEST(fq_bn254)
INV_TEST(fr_bls12_381)
INV_TEST(fq_bls12_381)

int main(void)
{
    const char *seed = getenv("ZP_TEST_SEED");
    if (seed)
        rng_state = strtoull(seed, NULL, 0);
    test_roots();
    test_fr_bn254();
    test_fq_bn254();
    test_fr_bls12_381();
    test_fq_bls12_381();
    test_tower_bn254();
    test_tower_bls12_381();
    test_inv_vartime_fr_bn254();
    test_inv_vartime_fq_bn254();
    test_inv_vartime_fr_bls12_381();
    test_inv_vartime_fq_bls12_381();
    printf("test_ff: all ok\n");
    return 0;
}
