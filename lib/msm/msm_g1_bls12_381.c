/* msm_g1_bls12_381.c - the MSM of G1 of BLS12-381 (msm.h): msm_impl.h instantiated once, on the shared
 * group-independent part (msm_common.h). One group per translation unit: see msm_common.h.
 * Tests: tests/test_msm.c */
#include "lib/msm/msm_common.h"

#define MSM_COST_FQ MSM_COST_FQ1
#define MSM_G g1
#define MSM_C bls12_381
#define MSM_F fq_bls12_381
#define MSM_VEC_NL 8
#include "lib/msm/msm_impl.h"
