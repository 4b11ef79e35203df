/* msm.c - the MSM of G1 of BN254 (msm.h): msm_impl.h instantiated once, on the shared
 * group-independent part (msm_common.h). One group per translation unit: see msm_common.h.
 * Tests: tests/test_msm.c */
#include "lib/msm/msm_common.h"

#define MSM_COST_FQ MSM_COST_FQ1
#define MSM_G g1
#define MSM_C bn254
#define MSM_F fq_bn254
#define MSM_VEC_NL 5
#include "lib/msm/msm_impl.h"

atomic_int msm_vec_state;

static bool msm_vec_cpu(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
#else
    return false;
#endif
}

__attribute__((constructor)) static void msm_vec_init(void)
{
    const char *e = getenv("ZP_MSM_VECTOR");
    atomic_store(&msm_vec_state, msm_vec_cpu() && !(e && !strcmp(e, "0")));
}

bool zp_msm_set_vector(bool on)
{
    atomic_store(&msm_vec_state, on && msm_vec_cpu());
    return zp_msm_vector();
}

bool zp_msm_vector(void) { return msm_vec_on(); }
