/* msm_batch_g1_bls12_381.c - the same-base batched MSM of G1 of BLS12-381 (msm_batch.h): msm_impl.h's
 * static internals (MSM_IMPL_INTERNAL: no public entry points of its own here, msm.c and
 * its siblings define those) with msm_batch_impl.h on top. A translation unit of its own, so
 * the single MSM's units keep their inlining budget (see msm_common.h).
 * Tests: tests/test_msm_batch.c */
#include "lib/msm/msm_common.h"
#include "lib/msm/msm_batch.h"

/* the single MSM's internals not used by the batch (its task, worker and entry logic) */
#pragma GCC diagnostic ignored "-Wunused-function"
#define MSM_IMPL_INTERNAL
#define MSM_COST_FQ MSM_COST_FQ1
#define MSM_G g1
#define MSM_C bls12_381
#define MSM_F fq_bls12_381
#define MSM_VEC_NL 8
#include "lib/msm/msm_impl.h"
#include "lib/msm/msm_batch_impl.h"
