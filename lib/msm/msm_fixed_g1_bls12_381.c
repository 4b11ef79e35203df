/* msm_fixed_g1_bls12_381.c - the fixed-base MSM of G1 of BLS12-381 (msm_fixed.h): msm_impl.h's static
 * internals (MSM_IMPL_INTERNAL: its public entry points live in the single MSM's units) with
 * msm_fixed_impl.h on top, a translation unit of its own (see msm_common.h).
 * Tests: tests/test_msm_fixed.c */
#include <stdio.h>

#include "lib/msm/msm_common.h"
#include "lib/msm/msm_fixed.h"

/* the single MSM's internals not used here (its task, worker and entry logic) */
#pragma GCC diagnostic ignored "-Wunused-function"
#define MSM_IMPL_INTERNAL
#define MSM_COST_FQ MSM_COST_FQ1
#define MSM_G g1
#define MSM_C bls12_381
#define MSM_F fq_bls12_381
#define MSM_VEC_NL 8
#include "lib/msm/msm_impl.h"
#define MSM_FX_GROUP ZP_MSM_FIXED_G1_BLS12_381
#include "lib/msm/msm_fixed_impl.h"
