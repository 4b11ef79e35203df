/* pairing.c - optimal ate pairing on BN254 and BLS12-381 (pairing.h).
 * The Miller loop and final exponentiation are written once in pairing_impl.h and
 * instantiated here with each curve's loop digits, twist type and hard part.
 *   BN254:     loop 6x+2 (x = 4965661367192848881) in NAF, D-type twist, two Frobenius lines.
 *   BLS12-381: loop |x| = 0xd201000000010000 in binary, x < 0, M-type twist.
 * Field elements are Montgomery form (ff.h); points affine with (0,0) = infinity (ec.h).
 * Tests: tests/test_pairing.c */
#include <string.h>

#include "lib/ec/ec.h"
#include "lib/ff/ff.h"
#include "lib/pairing/pairing.h"

#define PAIR_CAT3_(a, b, c) a##b##c
#define PAIR_XCAT3(a, b, c) PAIR_CAT3_(a, b, c)
#define PAIR_CAT4_(a, b, c, d) a##b##c##d
#define PAIR_XCAT4(a, b, c, d) PAIR_CAT4_(a, b, c, d)

/* 6x+2 = 29793968203157093288 in non-adjacent form, most significant digit first */
#define PAIR_LOOP                                                                             \
    {1, 0, -1, 0, 1, 0, 0, 0, -1, 0, -1, 0, 0, 0, -1, 0, 1, 0, -1, 0, 0, -1, 0, 0, 0, 0, 0, 1,  \
     0, 0, -1, 0, 1, 0, 0, -1, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0, -1, 0, -1, 0, 0, 1, 0, 0, 0, -1, \
     0, 0, -1, 0, 1, 0, 1, 0, 0, 0}
#define PC bn254
#define PAIR_DTYPE 1
#define PAIR_BN 1
#define PAIR_XNEG 0
#define PAIR_XABS 4965661367192848881ull
#include "lib/pairing/pairing_impl.h"
#undef PAIR_LOOP
#undef PC
#undef PAIR_DTYPE
#undef PAIR_BN
#undef PAIR_XNEG
#undef PAIR_XABS

/* |x| = 0xd201000000010000, most significant bit first */
#define PAIR_LOOP                                                                             \
    {1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  \
     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  \
     0, 0, 0, 0}
#define PC bls12_381
#define PAIR_DTYPE 0
#define PAIR_BN 0
#define PAIR_XNEG 1
#define PAIR_XABS 0xd201000000010000ull
#include "lib/pairing/pairing_impl.h"
