/* ec.c - G1 and G2 of BN254 and BLS12-381: instantiates ec_impl.h four times.
 *
 * Holds the per-curve constants (Montgomery form: R = 2^256 for BN254 Fq, 2^384 for BLS12-381
 * Fq, little-endian 64-bit limbs, the layout of ff.h) and the serialisation helpers of the
 * compressed encodings (ec.h). Constants were computed offline from the standard generators
 * and are checked by tests/test_ec.c (on curve, in subgroup, b' * xi == b).
 * Tests: tests/test_ec.c */
#include <string.h>

#include "lib/ec/ec.h"
#include "lib/util/util.h"

/* ---- serialisation helpers: F_to_be / F_from_be / F_lexmax for Fq and Fq2 --------------- */

/* "lexicographically largest": the standard integer y is > (p-1)/2 */
#define EC_FQ_HELPERS(C, NL)                                                               \
    static bool ecf_fq_##C##_lexmax(const zp_fq_##C##_t *y)                                 \
    {                                                                                       \
        zp_fq_##C##_t s;                                                                    \
        zp_fq_##C##_from_mont(&s, y);                                                       \
        for (int i = NL - 1; i >= 0; i--) {                                                 \
            uint64_t h = (zp_fq_##C##_modulus.l[i] >> 1) |                                  \
                         (i + 1 < NL ? zp_fq_##C##_modulus.l[i + 1] << 63 : 0);             \
            if (s.l[i] != h) return s.l[i] > h;                                             \
        }                                                                                   \
        return false;                                                                       \
    }                                                                                       \
    static void ecf_fq_##C##_to_be(uint8_t *out, const zp_fq_##C##_t *a)                    \
    {                                                                                       \
        zp_fq_##C##_to_bytes_be(out, a);                                                    \
    }                                                                                       \
    static int ecf_fq_##C##_from_be(zp_fq_##C##_t *r, const uint8_t *in)                    \
    {                                                                                       \
        return zp_fq_##C##_from_bytes_be(r, in);                                            \
    }                                                                                       \
    /* Fq2 = c0 + c1 u: big-endian c1 then c0; lexicographic order compares c1 first */    \
    static bool ecf_fq2_##C##_lexmax(const zp_fq2_##C##_t *y)                               \
    {                                                                                       \
        return zp_fq_##C##_is_zero(&y->c1) ? ecf_fq_##C##_lexmax(&y->c0)                    \
                                           : ecf_fq_##C##_lexmax(&y->c1);                   \
    }                                                                                       \
    static void ecf_fq2_##C##_to_be(uint8_t *out, const zp_fq2_##C##_t *a)                  \
    {                                                                                       \
        zp_fq_##C##_to_bytes_be(out, &a->c1);                                               \
        zp_fq_##C##_to_bytes_be(out + 8 * NL, &a->c0);                                      \
    }                                                                                       \
    static int ecf_fq2_##C##_from_be(zp_fq2_##C##_t *r, const uint8_t *in)                  \
    {                                                                                       \
        int e = zp_fq_##C##_from_bytes_be(&r->c1, in);                                      \
        return e ? e : zp_fq_##C##_from_bytes_be(&r->c0, in + 8 * NL);                      \
    }

EC_FQ_HELPERS(bn254, 4)
EC_FQ_HELPERS(bls12_381, 6)

/* ---- constants ------------------------------------------------------------------------- */

#define L4(a, b, c, d) {{a, b, c, d}}
#define L6(a, b, c, d, e, f) {{a, b, c, d, e, f}}

static const zp_fq_bn254_t bn_one =
    L4(0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL);
static const zp_fq2_bn254_t bn_one2 = {
    L4(0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL),
    L4(0, 0, 0, 0)};
static const zp_fq_bn254_t bn_b1 =      /* 3 */
    L4(0x7a17caa950ad28d7ULL, 0x1f6ac17ae15521b9ULL, 0x334bea4e696bd284ULL, 0x2a1f6744ce179d8eULL);
static const zp_fq2_bn254_t bn_b2 = {   /* 3 / (9 + u) */
    L4(0x3bf938e377b802a8ULL, 0x020b1b273633535dULL, 0x26b7edf049755260ULL, 0x2514c6324384a86dULL),
    L4(0x38e7ecccd1dcff67ULL, 0x65f0b37d93ce0d3eULL, 0xd749d0dd22ac00aaULL, 0x0141b9ce4a688d4dULL)};
static const zp_g1a_bn254_t bn_gen1 = { /* (1, 2) */
    L4(0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL),
    L4(0xa6ba871b8b1e1b3aULL, 0x14f1d651eb8e167bULL, 0xccdd46def0f28c58ULL, 0x1c14ef83340fbe5eULL)};
static const zp_g2a_bn254_t bn_gen2 = {
    {L4(0x8e83b5d102bc2026ULL, 0xdceb1935497b0172ULL, 0xfbb8264797811adfULL, 0x19573841af96503bULL),
     L4(0xafb4737da84c6140ULL, 0x6043dd5a5802d8c4ULL, 0x09e950fc52a02f86ULL, 0x14fef0833aea7b6bULL)},
    {L4(0x619dfa9d886be9f6ULL, 0xfe7fd297f59e9b78ULL, 0xff9e1a62231b7dfeULL, 0x28fd7eebae9e4206ULL),
     L4(0x64095b56c71856eeULL, 0xdc57f922327d3cbbULL, 0x55f935be33351076ULL, 0x0da4a0e693fd6482ULL)}};

static const zp_fq_bls12_381_t bls_one =
    L6(0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL, 0x77ce585370525745ULL,
       0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL);
static const zp_fq2_bls12_381_t bls_one2 = {
    L6(0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL, 0x77ce585370525745ULL,
       0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL),
    L6(0, 0, 0, 0, 0, 0)};
static const zp_fq_bls12_381_t bls_b1 = /* 4 */
    L6(0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL,
       0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL);
static const zp_fq2_bls12_381_t bls_b2 = { /* 4 (1 + u) */
    L6(0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL,
       0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL),
    L6(0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL,
       0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL)};
static const zp_g1a_bls12_381_t bls_gen1 = {
    L6(0x5cb38790fd530c16ULL, 0x7817fc679976fff5ULL, 0x154f95c7143ba1c1ULL, 0xf0ae6acdf3d0e747ULL,
       0xedce6ecc21dbf440ULL, 0x120177419e0bfb75ULL),
    L6(0xbaac93d50ce72271ULL, 0x8c22631a7918fd8eULL, 0xdd595f13570725ceULL, 0x51ac582950405194ULL,
       0x0e1c8c3fad0059c0ULL, 0x0bbc3efc5008a26aULL)};
static const zp_g2a_bls12_381_t bls_gen2 = {
    {L6(0xf5f28fa202940a10ULL, 0xb3f5fb2687b4961aULL, 0xa1a893b53e2ae580ULL, 0x9894999d1a3caee9ULL,
        0x6f67b7631863366bULL, 0x058191924350bcd7ULL),
     L6(0xa5a9c0759e23f606ULL, 0xaaa0c59dbccd60c3ULL, 0x3bb17e18e2867806ULL, 0x1b1ab6cc8541b367ULL,
        0xc2b6ed0ef2158547ULL, 0x11922a097360edf3ULL)},
    {L6(0x4c730af860494c4aULL, 0x597cfa1f5e369c5aULL, 0xe7e6856caa0a635aULL, 0xbbefb5e96e0d495fULL,
        0x07d3a975f0ef25a2ULL, 0x0083fd8e7e80dae5ULL),
     L6(0xadc0fc92df64b05dULL, 0x18aa270a2b1461dcULL, 0x86adac6a3be4eba0ULL, 0x79495c4ec93da33aULL,
        0xe7175850a43ccaedULL, 0x0b2bc2a163de1bf2ULL)}};

/* The group orders r are the Fr moduli (same 4-limb layout as zp_scalar_t). */
#define EC_ORDER(C) ((const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus)

/* ---- instantiations -------------------------------------------------------------------- */

/* gnark (BN254): top two bits 10 y smallest, 11 y largest, 01 infinity */
#define EC_FLAG_MASK 0xc0
#define EC_FLAG_INF 0x40
#define EC_FLAG_SMALL 0x80
#define EC_FLAG_LARGE 0xc0

#define EC_G g1
#define EC_C bn254
#define EC_F fq_bn254
#define EC_NAME "G1 BN254"
#define EC_B (&bn_b1)
#define EC_ONE (&bn_one)
#define EC_GEN bn_gen1
#define EC_R EC_ORDER(bn254)
#define EC_COFACTOR1 1
#define EC_NBYTES ZP_G1_BN254_COMPRESSED
#define EC_F_TO_BE ecf_fq_bn254_to_be
#define EC_F_FROM_BE ecf_fq_bn254_from_be
#define EC_F_LEXMAX ecf_fq_bn254_lexmax
#include "lib/ec/ec_impl.h"
#undef EC_G
#undef EC_F
#undef EC_NAME
#undef EC_B
#undef EC_ONE
#undef EC_GEN
#undef EC_COFACTOR1
#undef EC_NBYTES
#undef EC_F_TO_BE
#undef EC_F_FROM_BE
#undef EC_F_LEXMAX

#define EC_G g2
#define EC_F fq2_bn254
#define EC_NAME "G2 BN254"
#define EC_B (&bn_b2)
#define EC_ONE (&bn_one2)
#define EC_GEN bn_gen2
#define EC_COFACTOR1 0
#define EC_NBYTES ZP_G2_BN254_COMPRESSED
#define EC_F_TO_BE ecf_fq2_bn254_to_be
#define EC_F_FROM_BE ecf_fq2_bn254_from_be
#define EC_F_LEXMAX ecf_fq2_bn254_lexmax
#include "lib/ec/ec_impl.h"
#undef EC_G
#undef EC_C
#undef EC_F
#undef EC_NAME
#undef EC_B
#undef EC_ONE
#undef EC_GEN
#undef EC_R
#undef EC_COFACTOR1
#undef EC_NBYTES
#undef EC_F_TO_BE
#undef EC_F_FROM_BE
#undef EC_F_LEXMAX
#undef EC_FLAG_MASK
#undef EC_FLAG_INF
#undef EC_FLAG_SMALL
#undef EC_FLAG_LARGE

/* zcash (BLS12-381): 0x80 compressed, 0x40 infinity, 0x20 y larger */
#define EC_FLAG_MASK 0xe0
#define EC_FLAG_INF 0xc0
#define EC_FLAG_SMALL 0x80
#define EC_FLAG_LARGE 0xa0

#define EC_G g1
#define EC_C bls12_381
#define EC_F fq_bls12_381
#define EC_NAME "G1 BLS12-381"
#define EC_B (&bls_b1)
#define EC_ONE (&bls_one)
#define EC_GEN bls_gen1
#define EC_R EC_ORDER(bls12_381)
#define EC_COFACTOR1 0
#define EC_NBYTES ZP_G1_BLS12_381_COMPRESSED
#define EC_F_TO_BE ecf_fq_bls12_381_to_be
#define EC_F_FROM_BE ecf_fq_bls12_381_from_be
#define EC_F_LEXMAX ecf_fq_bls12_381_lexmax
#include "lib/ec/ec_impl.h"
#undef EC_G
#undef EC_F
#undef EC_NAME
#undef EC_B
#undef EC_ONE
#undef EC_GEN
#undef EC_NBYTES
#undef EC_F_TO_BE
#undef EC_F_FROM_BE
#undef EC_F_LEXMAX

#define EC_G g2
#define EC_F fq2_bls12_381
#define EC_NAME "G2 BLS12-381"
#define EC_B (&bls_b2)
#define EC_ONE (&bls_one2)
#define EC_GEN bls_gen2
#define EC_NBYTES ZP_G2_BLS12_381_COMPRESSED
#define EC_F_TO_BE ecf_fq2_bls12_381_to_be
#define EC_F_FROM_BE ecf_fq2_bls12_381_from_be
#define EC_F_LEXMAX ecf_fq2_bls12_381_lexmax
#include "lib/ec/ec_impl.h"
