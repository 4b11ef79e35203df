/* msm_g2_bls12_381.c - the MSM of G2 of BLS12-381 (msm.h): msm_impl.h instantiated once, on the shared
 * group-independent part (msm_common.h). One group per translation unit: see msm_common.h.
 * Tests: tests/test_msm.c */
#include "lib/msm/msm_common.h"

#define MSM_COST_FQ MSM_COST_FQ2
#define MSM_G g2
#define MSM_GLS 1
#define MSM_VEC_NC2 1
/* the 4-dimensional psi split by default from 2^17 points: 63-bit parts fill 4 windows of 16
 * (measured at 2^18: 0.98x of GLV, within noise; at 2^16, where c = 13, GLV is as fast:
 * doc/msm.md) */
#define MSM_GLS_MIN_N ((size_t)1 << 17)
#define MSM_C bls12_381
#define MSM_F fq2_bls12_381
#define MSM_VEC_NL 8
#include "lib/msm/msm_impl.h"
