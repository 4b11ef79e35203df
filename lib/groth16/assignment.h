/* assignment.h - bellman's conventions for Groth16 on BLS12-381 (Filecoin's .params keys):
 * the synthesized assignment in supraseal-c2's `Assignment` layout, the key view the prover
 * reads, the prover that takes both, and the table of per-convention operations.
 *
 * zp_g16_assignment_t is supraseal-c2's C struct (curio extern/supraseal-c2, issue 30): 17
 * machine words, nothing owned. fr values are zp_fr_bls12_381_t: 4 little-endian u64 limbs,
 * Montgomery form (R = 2^256), exactly bls12_381's Scalar in memory. Density bit i is bit i%64
 * of word i/64. What it holds mirrors bellman's ProvingAssignment after create_proof's input
 * constraints: a, b, c per constraint (abc_size of them, unpadded), inputs (ONE first), aux,
 * and the densities (A over aux; B over inputs and over aux).
 * Filled from circom files by zp_g16_assign_from_r1cs (bellman_synth.c), or by a caller of
 * the C interface (libzkpipe_c2, next issue); both go through zp_g16_bellman_prove.
 * Tests: tests/test_bellman_prove.c (byte-equal to upstream bellman's dump and proofs). */
#ifndef ZP_G16_ASSIGNMENT_H
#define ZP_G16_ASSIGNMENT_H
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "../ec/ec.h"
#include "../fmt/bellman.h"
#include "../fmt/fmt.h"
#include "../ntt/ntt.h"
#include "../util/util.h"
#include "groth16.h"

typedef struct zp_g16_assignment {
    const uint64_t *a_aux_density;
    size_t a_aux_bit_len, a_aux_popcount;
    const uint64_t *b_inp_density;
    size_t b_inp_bit_len, b_inp_popcount;
    const uint64_t *b_aux_density;
    size_t b_aux_bit_len, b_aux_popcount;
    const zp_fr_bls12_381_t *a, *b, *c;
    size_t abc_size;
    const zp_fr_bls12_381_t *inp_assignment_data;
    size_t inp_assignment_size;
    const zp_fr_bls12_381_t *aux_assignment_data;
    size_t aux_assignment_size;
} zp_g16_assignment_t;
static_assert(sizeof(zp_g16_assignment_t) == 17 * sizeof(void *), "supraseal-c2 Assignment: 17 words");
static_assert(offsetof(zp_g16_assignment_t, b_inp_density) == 3 * sizeof(void *), "b_inp_density");
static_assert(offsetof(zp_g16_assignment_t, b_aux_density) == 6 * sizeof(void *), "b_aux_density");
static_assert(offsetof(zp_g16_assignment_t, a) == 9 * sizeof(void *), "a");
static_assert(offsetof(zp_g16_assignment_t, abc_size) == 12 * sizeof(void *), "abc_size");
static_assert(offsetof(zp_g16_assignment_t, inp_assignment_data) == 13 * sizeof(void *), "inp");
static_assert(offsetof(zp_g16_assignment_t, aux_assignment_size) == 16 * sizeof(void *), "aux size");
static_assert(sizeof(zp_fr_bls12_381_t) == 32, "fr_t: 4 limbs");

/* An assignment that owns its memory (one block), as built from circom files. */
typedef struct zp_g16_assign_buf {
    zp_g16_assignment_t v;
    void *mem;
    size_t mem_len;
} zp_g16_assign_buf_t;

/* bellman's ProvingAssignment from circom's r1cs and witness (both BLS12-381): wire 0 is
 * ONE (input 0), wires 1..nPublic the other inputs, the rest aux in wire order; every r1cs
 * constraint's A, B, C evaluated in order, then `input_i * 0 = 0` for each input (ONE
 * first); densities set where a variable appears in A (aux) or B (inputs, aux) of an r1cs
 * constraint. Checks: curves, witness length == wires, and every constraint satisfied
 * (ZP_EUNSAT naming the constraint). pool may be NULL. Errors name the file and field. */
int zp_g16_assign_from_r1cs(zp_g16_assign_buf_t *out, const zp_r1cs_t *r1cs, const zp_wtns_t *wt,
                            zp_pool_t *pool);
void zp_g16_assign_free(zp_g16_assign_buf_t *a);

/* A bellman key as the prover reads it: Parameters's points, affine Montgomery as lib/ec
 * holds them ((0,0) = identity; bellman's files have none in these arrays). Nothing owned;
 * filled from the .params reader (lib/fmt, bellman-api) or a keystore block. */
typedef struct zp_g16_bkey {
    zp_g1a_bls12_381_t alpha_g1, beta_g1, delta_g1;
    zp_g2a_bls12_381_t beta_g2, gamma_g2, delta_g2;
    const zp_g1a_bls12_381_t *ic, *h, *l, *a, *b_g1;
    const zp_g2a_bls12_381_t *b_g2;
    size_t n_ic, n_h, n_l, n_a, n_b_g1, n_b_g2;
} zp_g16_bkey_t;

/* the view of a key opened by lib/fmt's bellman reader (b stays open while k is used) */
void zp_g16_bkey_from_fmt(zp_g16_bkey_t *k, const zp_bkey_t *b);

/* supraseal-c2's preconditions of assignment as against key k (|IC| = inputs, |L| = aux,
 * |A| = inputs + a_aux popcount, |B| = b_inp + b_aux popcounts, bit lengths = sizes,
 * popcounts = the bits set, |H| >= domain - 1, domain <= 2^32): 0 or ZP_EMISMATCH/ZP_EFORMAT
 * naming the field. */
int zp_g16_bellman_check(const zp_g16_bkey_t *k, const zp_g16_assignment_t *as);

typedef struct { uint64_t prep_ns, ntt_ns, msm_a_ns, msm_b1_ns, msm_b2_ns, msm_lh_ns, assemble_ns, check_ns, total_ns; }
    zp_g16_bprove_times_t;

/* One Groth16 proof with bellman's conventions (create_proof of zkcrypto/bellman 0.14 and
 * bellperson): H by iNTT, coset NTT (generator 7), (ab - c)/(7^n - 1), coset iNTT, n - 1
 * coefficients; A over inputs ++ aux[a density], B over inp[b_inp] ++ aux[b_aux], L over aux;
 * A = alpha + a + r delta, B = beta + b + s delta, C = L + H + sA + rB1 - rs delta.
 * r, s: standard form < r; NULL = fresh from getrandom. The proof is pairing-checked against
 * k's verifying key (inputs 1.. as public) before it is returned: ZP_EVERIFY otherwise (proof
 * zeroed). The MSMs drop zero scalars and sum the ones as additions (lib/msm's classes). */
int zp_g16_bellman_prove(zp_g16_proof_t *proof, const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                         const zp_scalar_t *r, const zp_scalar_t *s,
                         zp_pool_t *pool, zp_g16_bprove_times_t *t);

/* the same with flags (benchmarks; the proof is the same bytes either way):
 * ZP_G16_BPROVE_NO_ENDO: lib/msm's plain 256-bit Pippenger (no GLV/GLS split);
 * ZP_G16_BPROVE_NO_SPLIT: that, with the witness scalars given as k + r (full length, unreduced:
 * the same multiples), so lib/msm's zero / one / short classes never apply (supraseal-c2's split
 * off). The endomorphism's split reduces scalars, hence NO_SPLIT implies NO_ENDO. */
enum { ZP_G16_BPROVE_NO_ENDO = 1, ZP_G16_BPROVE_NO_SPLIT = 2 };
int zp_g16_bellman_prove_ex(zp_g16_proof_t *proof, const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                            const zp_scalar_t *r, const zp_scalar_t *s, unsigned flags, zp_pool_t *pool,
                            zp_g16_bprove_times_t *t);

/* The two stages of zp_g16_bellman_prove_ex, for the process group (GPU worker, finalizer):
 * prove_g1: H and the G1 MSMs: part[ZP_G16_A] = sum A, part[ZP_G16_B1] = sum B_g1,
 *   part[ZP_G16_C] = L + H (one MSM), part[ZP_G16_H] = identity;
 * finalize: the B_g2 MSM, r and s (as prove; NULL = getrandom), assembly, pairing check.
 * Both check the assignment against the key first (zp_g16_bellman_check). */
int zp_g16_bellman_prove_g1(zp_g1_any_t part[ZP_G16_NMSM], const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                            unsigned flags, zp_pool_t *pool, zp_g16_bprove_times_t *t);
int zp_g16_bellman_finalize(zp_g16_proof_t *proof, const zp_g16_bkey_t *k, const zp_g16_assignment_t *as,
                            const zp_g1_any_t part[ZP_G16_NMSM], const zp_scalar_t *r, const zp_scalar_t *s,
                            unsigned flags, zp_pool_t *pool, zp_g16_bprove_times_t *t);

/* the verifying key of k (n_public = n_ic - 1; ic malloc'd: zp_g16_vk_free) */
int zp_g16_vk_from_bkey(zp_g16_vk_t *vk, const zp_g16_bkey_t *k);

/* ---- the per-convention operations, chosen when a key is opened ---- */
typedef enum { ZP_G16_CONV_SNARKJS = 0, ZP_G16_CONV_BELLMAN = 1 } zp_g16_conv_id_t;
typedef struct zp_g16_conv {
    zp_g16_conv_id_t id;
    const char *name;
    /* the domain's primitive 2^log_n-th root (Montgomery) on BLS12-381 */
    int (*root)(zp_fr_bls12_381_t *w, unsigned log_n);
    /* H: the number of H points for a domain of n, and whether H is the coset quotient's
     * coefficients (bellman) or the odd 2n-th root evaluations (snarkjs) */
    size_t (*h_len)(size_t n);
    bool h_coefficients;
    /* A, B queries compacted by the density bitmaps (bellman) or dense over wires (snarkjs) */
    bool compact_queries;
    /* inputs carry an `x * 0 = 0` constraint each (ONE included) */
    bool input_constraints;
    /* the proof as the convention writes it: bytes into out (cap >= 192), its length */
    int (*proof_encode)(uint8_t *out, size_t cap, size_t *len, const zp_g16_proof_t *p);
} zp_g16_conv_t;
extern const zp_g16_conv_t zp_g16_conv_snarkjs, zp_g16_conv_bellman;

/* H as bellman computes it (zp_g16_bellman_prove's): a, b, c (2^log_n Montgomery each, zero
 * past the constraints) clobbered; the n - 1 standard-form coefficients in a[0..n-1) */
int zp_g16_bellman_h(zp_fr_bls12_381_t *a, zp_fr_bls12_381_t *b, zp_fr_bls12_381_t *c, unsigned log_n,
                     zp_pool_t *pool);
/* the same over a domain the caller keeps (the CPU backend: one per log_n, not per proof):
 * d from zp_g16_bellman_domain_new (bellman's roots); the inverse NTTs read a_in, b_in, c_in
 * and write the work buffers a, b, c (a source equal to its buffer: in place); h[0..n-1) = the
 * standard-form coefficients (h may be a or c), written by the conversion pass (no copy) */
int zp_g16_bellman_domain_new(zp_ntt_bls12_381_domain_t *d, unsigned log_n, zp_pool_t *pool);
int zp_g16_bellman_h_dom(const zp_ntt_bls12_381_domain_t *d, zp_fr_bls12_381_t *h, const zp_fr_bls12_381_t *a_in,
                         const zp_fr_bls12_381_t *b_in, const zp_fr_bls12_381_t *c_in, zp_fr_bls12_381_t *a,
                         zp_fr_bls12_381_t *b, zp_fr_bls12_381_t *c, zp_pool_t *pool);

/* ---- a bellman key in the process group's key shape (bellman_key.c, issue 29 item 4) ----
 * The stages (synth, GPU worker, finalizer) take zp_g16_key_t; a bellman key is laid into it
 * once, at import (keystore fill / key cache), COMPACTED as in the file (k->compact = 1): A,
 * B1, B2 bellman's a, b_g1, b_g2 with wire-level density bitmaps and prefix counts (the
 * stages gather their scalars: zp_g16_gather), C = L, H = bellman's n - 1 points + the
 * identity, coefs
 * from the r1cs (zkey form, input rows included), k->conv = ZP_G16_CONV_BELLMAN. The densities
 * come from the r1cs (zp_g16_bellman_density, as bellman_synth.c sets them) or from a caller
 * that has them (libzkpipe_c2: the Assignment's three bitmaps). Costs: doc/filecoin.md. */
typedef struct zp_g16_bdensity {
    const uint64_t *a_aux, *b_inp, *b_aux;  /* bit i = bit i%64 of word i/64 */
    size_t n_inp, n_aux;                    /* bit lengths (inputs: ONE included) */
    size_t abc_size;                        /* constraints + inputs: the domain is the next 2^k */
} zp_g16_bdensity_t;
/* densities (and abc_size) of r1cs; *mem: the bitmaps' one allocation (free it) */
int zp_g16_bellman_density(zp_g16_bdensity_t *d, uint64_t **mem, const zp_r1cs_t *r1cs);
/* bytes the key needs (64 of them alignment room); every count of bk checked against
 * d (ic = inputs, l = aux, a = inputs + A popcount, b_g1 = b_g2 = B popcounts, h >= domain - 1):
 * ZP_EMISMATCH naming the field. r1cs NULL: no coefficients (pre-synthesized vector jobs only).
 * name: the key file, for messages. */
int zp_g16_key_bellman_bytes(size_t *bytes, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d,
                             const zp_r1cs_t *r1cs, const char *name);
/* the key into caller memory (mem, len >= bytes; k does not own it), bk's points copied;
 * pool may be NULL (unused) */
int zp_g16_key_from_bellman(zp_g16_key_t *k, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d,
                            const zp_r1cs_t *r1cs, void *mem, size_t len, zp_pool_t *pool, const char *name);
/* The same in two steps, for a reader that converts the file's points straight into the
 * key (keystore_bellman.c: no converted copy of the .params besides the store's): place lays
 * k out over mem from bk's counts and header points alone (bk's arrays unused), writes the
 * bitmaps, prefix counts and coefficients, and returns where each section's points go:
 * into[] / cap[] (room in points) in the file's order ic, h, l, a, b_g1, b_g2; finish checks
 * that bk (opened into those places) has the same counts and arrays there, takes its header
 * points and puts the identity at h[n-1]. */
int zp_g16_key_bellman_place(zp_g16_key_t *k, const zp_g16_bkey_t *counts, const zp_g16_bdensity_t *d,
                             const zp_r1cs_t *r1cs, void *mem, size_t len, const char *name, void *into[6],
                             uint64_t cap[6]);
int zp_g16_key_bellman_finish(zp_g16_key_t *k, const zp_g16_bkey_t *bk, const char *name);
/* The density file: the three bitmaps and abc_size for a key imported without its r1cs (a
 * job then names it where the r1cs goes: --r1cs FILE; the key has no coefficients, so only
 * pre-synthesized vector jobs can use it). Little-endian "ZPBDENS1", u64 n_inp, n_aux,
 * abc_size, then the words of a_aux, b_inp, b_aux; bits past a length 0; nothing after.
 * read: untrusted (sizes against the file, every rule checked; *mem the bitmaps, free it). */
int zp_g16_bdensity_write(const char *path, const zp_g16_bdensity_t *d);
int zp_g16_bdensity_read(zp_g16_bdensity_t *d, uint64_t **mem, const char *path);
bool zp_g16_bdensity_sniff(const char *path);   /* the file starts with the magic */
/* the same into memory of its own (zp_g16_key_close frees it) */
int zp_g16_key_load_bellman(zp_g16_key_t *k, const zp_g16_bkey_t *bk, const zp_g16_bdensity_t *d,
                            const zp_r1cs_t *r1cs, zp_pool_t *pool, const char *name);
const zp_g16_conv_t *zp_g16_conv(zp_g16_conv_id_t id);
#endif
