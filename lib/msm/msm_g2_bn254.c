/* msm_g2_bn254.c - the MSM of G2 of BN254 (msm.h): msm_impl.h instantiated once, on the shared
 * group-independent part (msm_common.h). One group per translation unit: see msm_common.h.
 * Tests: tests/test_msm.c */
#include "lib/msm/msm_common.h"

#define MSM_COST_FQ MSM_COST_FQ2
#define MSM_G g2
#define MSM_GLS 1
#define MSM_VEC_NC2 1
/* the 4-dimensional psi split never by default: its 64-bit parts need a carry window at
 * c = 16; measured at 2^16 and 2^18 no faster than GLV (doc/msm.md); opts.dim = 4 runs it */
#define MSM_GLS_MIN_N ((size_t)-1)
#define MSM_C bn254
#define MSM_F fq2_bn254
#define MSM_VEC_NL 5
#include "lib/msm/msm_impl.h"
