/* g16_curves.c - instantiates g16_impl.h (the curve-dependent half of the Groth16 prover)
 * for BN254 and BLS12-381, and the lookup g16_curve(). Nothing curve-specific is written
 * here. Invariants and tests: see g16_impl.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groth16_int.h"
#include "../util/util.h"
#include "../ff/ff_inline.h"
#include "../msm/msm.h"
#include "../ntt/ntt.h"
#include "../pairing/pairing.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "zkpipe reads zkey/wtns bytes as little-endian limbs: little-endian hosts only"
#endif

#define ZC bn254
#define ZC_UP BN254
#define ZC_NAME "bn128"
#include "g16_impl.h"
#undef ZC
#undef ZC_UP
#undef ZC_NAME

#define ZC bls12_381
#define ZC_UP BLS12_381
#define ZC_NAME "bls12381"
#include "g16_impl.h"
#undef ZC
#undef ZC_UP
#undef ZC_NAME

const g16_curve_t *g16_curve(zp_curve_id_t id)
{
    switch (id) {
    case ZP_CURVE_BN254: return &g16_curve_bn254;
    case ZP_CURVE_BLS12_381: return &g16_curve_bls12_381;
    default: zp_err_set(ZP_ECURVE, "curve id %d is not supported (bn128, bls12381)", (int)id); return NULL;
    }
}

void *g16_alloc(size_t len)
{
    return zp_alloc_big(len);
}
