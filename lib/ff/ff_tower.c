/* ff_tower.c - Fq2/Fq6/Fq12 towers of BN254 and BLS12-381: instantiates ff_tower_impl.h
 * once per curve. fq2 = fq[u]/(u^2+1), fq6 = fq2[v]/(v^3-xi), fq12 = fq6[w]/(w^2-v),
 * xi = 9+u (BN254), 1+u (BLS12-381). Frobenius tables in ff_consts.h (gen_consts.py).
 * Tests: tests/test_ff.c */
#include <string.h>

#include "lib/ff/ff.h"
#include "lib/ff/ff_inline.h"

#define C bn254
#define FQ fq_bn254
#define XI0 9
#define ZP_FQ_N 4
#include "lib/ff/ff_tower_impl.h"
#undef C
#undef FQ
#undef XI0
#undef ZP_FQ_N

#define C bls12_381
#define FQ fq_bls12_381
#define XI0 1
#define ZP_FQ_N 6
#include "lib/ff/ff_tower_impl.h"
#undef C
#undef FQ
#undef XI0
#undef ZP_FQ_N
