/* pairing.h - optimal ate pairing on BN254 and BLS12-381.
 *
 * e(P, Q) with P in G1, Q in G2 (affine; infinity allowed, giving 1). The value equals
 * snarkjs/ffjavascript's pairing, so that e(alpha1, beta2) equals snarkjs's vk_alphabeta_12:
 * the optimal ate Miller loop followed by the final exponentiation f^(lambda (q^12-1)/r) with
 * lambda = 2x(6x^2+3x+1) on BN254 and lambda = 3 on BLS12-381 (the exponents of their hard
 * parts). That is the textbook pairing (lambda = 1) raised to a fixed power coprime to r: the
 * same bilinear, non-degenerate map up to that power, and identical for product checks.
 * Points must lie in G1 x G2 (callers check untrusted input with zp_g*a_*_in_subgroup); for
 * other points the value is unspecified, but nothing faults. Nothing allocates.
 * zp_pairing_C_check computes prod_i e(P_i, Q_i) with one shared final exponentiation and
 * returns true iff it is 1 (the Groth16 verifier's product check).
 * Tests: tests/test_pairing.c (bilinearity, known values) */
#ifndef ZP_PAIRING_H
#define ZP_PAIRING_H
#include "../ec/ec.h"

#define ZP_PAIRING_API(C)                                                                       \
    void zp_pairing_##C(zp_fq12_##C##_t *r, const zp_g1a_##C##_t *p, const zp_g2a_##C##_t *q);  \
    void zp_miller_loop_##C(zp_fq12_##C##_t *r, const zp_g1a_##C##_t *p, const zp_g2a_##C##_t *q, size_t n); \
    void zp_final_exp_##C(zp_fq12_##C##_t *r, const zp_fq12_##C##_t *a);                         \
    bool zp_pairing_##C##_check(const zp_g1a_##C##_t *p, const zp_g2a_##C##_t *q, size_t n);

ZP_PAIRING_API(bn254)
ZP_PAIRING_API(bls12_381)
#endif
