/* cu_consts.h - field constants of the CUDA backend, shared by device code (cu_field.cuh) and
 * the host tests (tests/test_cuda_host.c). Plain C, no CUDA needed.
 *
 * Same representation as lib/ff (ff.h): little-endian 64-bit limbs, Montgomery form with
 * R = 2^256 (Fr of both curves, Fq BN254) or 2^384 (Fq BLS12-381).
 *   P    the modulus (plain integer)       ONE  R mod p (Montgomery 1)
 *   R2   R^2 mod p (to_mont multiplier)    INV  -p^-1 mod 2^64 (CIOS reduction factor)
 * Generated once with Python big integers; tests/test_cuda_host.c checks every value against
 * zp_<field>_modulus / _one / _r2 of lib/ff, and cu_field.cuh checks p[0]*INV == -1 mod 2^64
 * at compile time. Curve ids are the values of zp_curve_id_t (lib/fmt/fmt.h). */
#ifndef ZP_CU_CONSTS_H
#define ZP_CU_CONSTS_H

/* fr_bn254: p = 21888242871839275222246405745257275088548364400416034343698204186575808495617 (254 bits) */
#define ZP_CU_FR_BN254_LIMBS 4
#define ZP_CU_FR_BN254_BITS 254
#define ZP_CU_FR_BN254_P {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL}
#define ZP_CU_FR_BN254_ONE {0xac96341c4ffffffbULL, 0x36fc76959f60cd29ULL, 0x666ea36f7879462eULL, 0x0e0a77c19a07df2fULL}
#define ZP_CU_FR_BN254_R2 {0x1bb8e645ae216da7ULL, 0x53fe3ab1e35c59e3ULL, 0x8c49833d53bb8085ULL, 0x0216d0b17f4e44a5ULL}
#define ZP_CU_FR_BN254_INV 0xc2e1f593efffffffULL

/* fq_bn254: p = 21888242871839275222246405745257275088696311157297823662689037894645226208583 (254 bits) */
#define ZP_CU_FQ_BN254_LIMBS 4
#define ZP_CU_FQ_BN254_BITS 254
#define ZP_CU_FQ_BN254_P {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL}
#define ZP_CU_FQ_BN254_ONE {0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL}
#define ZP_CU_FQ_BN254_R2 {0xf32cfc5b538afa89ULL, 0xb5e71911d44501fbULL, 0x47ab1eff0a417ff6ULL, 0x06d89f71cab8351fULL}
#define ZP_CU_FQ_BN254_INV 0x87d20782e4866389ULL

/* fr_bls12_381: p = 52435875175126190479447740508185965837690552500527637822603658699938581184513 (255 bits) */
#define ZP_CU_FR_BLS12_381_LIMBS 4
#define ZP_CU_FR_BLS12_381_BITS 255
#define ZP_CU_FR_BLS12_381_P {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL}
#define ZP_CU_FR_BLS12_381_ONE {0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL, 0x1824b159acc5056fULL}
#define ZP_CU_FR_BLS12_381_R2 {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL, 0x0748d9d99f59ff11ULL}
#define ZP_CU_FR_BLS12_381_INV 0xfffffffeffffffffULL

/* fq_bls12_381: p = 4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787 (381 bits) */
#define ZP_CU_FQ_BLS12_381_LIMBS 6
#define ZP_CU_FQ_BLS12_381_BITS 381
#define ZP_CU_FQ_BLS12_381_P {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL, 0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL}
#define ZP_CU_FQ_BLS12_381_ONE {0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL, 0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}
#define ZP_CU_FQ_BLS12_381_R2 {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL, 0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL}
#define ZP_CU_FQ_BLS12_381_INV 0x89f3fffcfffcfffdULL
/* fields by index (the host-emulation entry points of cu_api.h take these) */
enum { ZP_CU_FR_BN254 = 0, ZP_CU_FQ_BN254 = 1, ZP_CU_FR_BLS12_381 = 2, ZP_CU_FQ_BLS12_381 = 3 };
/* most limbs of any field, and of a Jacobian G1 point (x, y, z) of either curve */
enum { ZP_CU_MAX_LIMBS = 6, ZP_CU_JAC_LIMBS = 18 };
#endif
