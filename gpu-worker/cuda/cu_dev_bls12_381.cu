/* cu_dev_bls12_381.cu - the device drivers of cu_dev.cuh for BLS12-381 (G1 MSM, Fr NTT work).
 * Tests: tests/test_cuda.c (needs a GPU); the same templates on the CPU: tests/test_cuda_host.c */
#include <string.h>

#include "cu_dev.cuh"

ZP_CU_DEV_DEFINE(bls12_381)
