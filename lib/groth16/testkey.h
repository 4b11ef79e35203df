/* testkey.h - INSECURE test-only Groth16 keys of any size in seconds (issue 10 item 9).
 *
 * zp_testkey_write builds, for a synthetic circuit of 2^power - n_public - 1 constraints, a
 * snarkjs-format circuit.zkey, witnesses, circuit.r1cs and verification_key.json directly from
 * a KNOWN tau, alpha, beta, delta (written to toxic_waste.json): anyone who reads that file can
 * forge proofs for the key. It exists so that benchmarks and tests at 2^20+ need no ceremony
 * (the snarkjs ceremony tools take hours there). It refuses to run unless the caller sets
 * insecure_known_tau (the CLI's --insecure-known-tau).
 *
 * The circuit (wires: 0 = one, 1..K public inputs p_j, K+1+i = s_i for i = 0..M, M = 2^power-K-1):
 *   constraint i < M:  (s_i + 2*q_i) * (s_i + 7*one) = s_{i+1},  q_i = p_{1 + i mod K} (one if K = 0)
 * so A, B and C are all non-empty, nVars = 2^power + 1, domainSize = 2^power exactly.
 * Every zkey section is the one `snarkjs groth16 setup` writes for this r1cs and a ptau with the
 * same tau/alpha/beta (pointsH included: the odd-index Lagrange points of the 2n domain from
 * tau^0..tau^(2n-2), tau^(2n-1) taken as 0, as ptau prepare phase2 computes them), then C and H
 * divided by delta as `zkey contribute` does; sections are written in id order 1..10; section 10
 * holds a zero circuit hash and no contribution records (the prover and `zkey export
 * verificationkey` ignore it; `zkey verify` would not accept it).
 * Points come from fixed-base windowed tables of G1/G2 (affine, one table per group) and the
 * Lagrange values in closed form L_c(tau) = w^c (tau^n - 1) / (n (tau - w^c)) with one batch
 * inversion per thread chunk; every pass runs on the pool.
 * Tests: tests/test_testkey.c (our prover and verifier; refusal), tests/oracle/test_testkey.sh
 * (snarkjs verifies our proofs; setup over a fake ptau gives the same sections 1..9). */
#ifndef ZP_TESTKEY_H
#define ZP_TESTKEY_H
#include "../fmt/fmt.h"
#include "../ff/ff.h"
#include "../util/util.h"

typedef struct {
    zp_curve_id_t curve;
    unsigned power;             /* domain 2^power; 2..26 and < the curve's 2-adicity */
    unsigned n_public;          /* K public inputs (<= 1024, < 2^power - 1) */
    unsigned n_witness;         /* witnesses to write (>= 1): witness.wtns, and witness-<i>.wtns when > 1 */
    bool write_r1cs;            /* circuit.r1cs */
    bool insecure_known_tau;    /* must be true: the caller accepts a key whose toxic waste is public */
    const char *out_dir;        /* existing directory */
    /* toxic waste: standard-form values < r (tau must not be a 2n-th root of unity, alpha,
     * beta, delta non-zero); each one not given (has_* false) is drawn from the seed */
    bool has_tau, has_alpha, has_beta, has_delta;
    zp_scalar_t tau, alpha, beta, delta;
    /* (added, issue 29) BLS12-381 only: also circuit.params and circuit.vk for the same r1cs
     * exactly as bellman's generate_parameters makes them (lib/fmt/bellman.h formats): Lagrange
     * values at bellman's omega (7^((r-1)/2^32) squared down), h_i = tau^i Z(tau) / delta for
     * i < n-1, a / b_g1 / b_g2 without identity points, IC over inputs / L over aux, gamma = 1
     * (as toxic_waste.json says). The bellman circuit is the r1cs plus one input_i * 0 = 0
     * constraint per input (ONE included) - the rows snarkjs adds too - so n = 2^power. */
    bool write_bellman;
    bool has_seed;              /* false: seed from the OS's random source */
    uint64_t seed;              /* deterministic stream for toxic waste and witnesses */
} zp_testkey_cfg_t;

typedef struct {
    uint64_t tables_ns, lagrange_ns, points_ns, witness_ns, r1cs_ns, total_ns;
    uint64_t zkey_bytes;
} zp_testkey_times_t;

/* Writes the files into cfg->out_dir (each one to a temporary name, renamed when complete).
 * 0, or ZP_ESTATE without insecure_known_tau, ZP_EFORMAT / ZP_ETOOBIG for bad parameters,
 * -errno for I/O; zp_err_msg() names what was wrong. pool may be NULL. t may be NULL. */
int zp_testkey_write(const zp_testkey_cfg_t *cfg, zp_pool_t *pool, zp_testkey_times_t *t);
#endif
