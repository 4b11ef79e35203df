/* msm_g2_bn254.c - the MSM of G2 of BN254 (msm.h): msm_impl.h instantiated once, on the shared
 * group-independent part (msm_common.h). One group per translation unit: see msm_common.h.
 * Tests: tests/test_msm.c */
#include "lib/msm/msm_common.h"

#define MSM_COST_FQ MSM_COST_FQ2
#define MSM_G g2
#define MSM_GLS 1
#define MSM_C bn254
#define MSM_F fq2_bn254
#include "lib/msm/msm_impl.h"
