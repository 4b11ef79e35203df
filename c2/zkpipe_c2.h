/* zkpipe_c2.h - libzkpipe_c2: supraseal-c2's C interface (issue 30), so that Filecoin's Rust
 * stack (bellperson, cuzk, Curio) proves through zkpipe with its Rust and Go code unchanged.
 * Same symbols and layouts as curio's extern/supraseal-c2 (src/lib.rs, cuda/groth16_cuda.cu,
 * cuda/groth16_srs.cuh) and sppark's RustError; nothing else is exported (c2/c2.map).
 *
 * Layouts (all checked by static_assert in c2.c against zkpipe's own types):
 *   RustError      {int code; char *message}, returned BY VALUE; code 0 = success (message
 *                  NULL); otherwise message is malloc'd (strdup, as sppark's C++ side does)
 *                  and the caller frees it with free() (sppark's Rust Error::drop does).
 *   SRS            {const void *ptr}: a refcounted handle on an opened bellman .params.
 *   fr_t           4 little-endian u64 limbs, Montgomery form (R = 2^256) - bls12_381 Scalar.
 *   Assignment     17 machine words (zp_g16_assignment_t of lib/groth16/assignment.h).
 *   groth16_proof  blst affine A (G1), B (G2), C (G1): Fp = 6 little-endian u64 limbs,
 *                  Montgomery (R = 2^384), x then y, Fp2 c0 then c1, (0,0) = infinity; 384 B.
 *
 * Mode: ZKPIPE_C2_MODE = inprocess | group | auto (default auto).
 *   inprocess  proves in the calling process on the CPU backend (zp_g16_bellman_prove, the
 *              code path of `zkpipe prove` with a .params); ZKPIPE_C2_THREADS = pool size
 *              (default: the CPUs this process may run on).
 *   group      through a running `zkpipe up` (found as libzkpipe-client finds it): each circuit
 *              a pre-synthesized partition (a vectors file in /dev/shm, lib/fmt/vecs.h) of
 *              one job; a RustError when no group answers. Fixed per SRS at create_SRS.
 *              The group draws its own r, s (the caller's do not reach its finalizer).
 *   auto       the group when one answers (checked at create_SRS), else in-process.
 *
 * Handles: a pending proof and an SRS are kept in registries of live handles, so a pointer
 * finalized twice, destroyed, dropped or never issued is answered with a RustError (or
 * ignored, for the void functions) and never dereferenced.
 * Tests: tests/test_c2.c (meson test 'c2'). Doc: doc/c2.md. */
#ifndef ZKPIPE_C2_H
#define ZKPIPE_C2_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct RustError { int code; char *message; } RustError;
typedef struct SRS { const void *ptr; } SRS;
typedef struct fr_t { uint64_t l[4]; } fr_t;
typedef struct fp_t { uint64_t l[6]; } fp_t;
typedef struct { fp_t x, y; } zkpipe_c2_g1_affine_t;
typedef struct { fp_t x_c0, x_c1, y_c0, y_c1; } zkpipe_c2_g2_affine_t;
typedef struct groth16_proof { zkpipe_c2_g1_affine_t a; zkpipe_c2_g2_affine_t b; zkpipe_c2_g1_affine_t c; } groth16_proof;

typedef struct Assignment {
    const uint64_t *a_aux_density;
    size_t a_aux_bit_len, a_aux_popcount;
    const uint64_t *b_inp_density;
    size_t b_inp_bit_len, b_inp_popcount;
    const uint64_t *b_aux_density;
    size_t b_aux_bit_len, b_aux_popcount;
    const fr_t *a, *b, *c;
    size_t abc_size;
    const fr_t *inp_assignment_data;
    size_t inp_assignment_size;
    const fr_t *aux_assignment_data;
    size_t aux_assignment_size;
} Assignment;

/* Opens the bellman .params at path (format sniffed, points converted once, subgroup-checked)
 * into *ret. cache: share one opened key per path (kept until evict_SRS). */
RustError create_SRS(SRS *ret, const char *path, bool cache);
void evict_SRS(const SRS *srs);          /* removes srs's key from the cache (handles stay valid) */
void drop_SRS(const SRS *srs);           /* releases one reference; a NULL ptr is a no-op */
SRS clone_SRS(const SRS *srs);           /* one more reference on the same key */

/* n circuits sharing srs, r_s[i], s_s[i] per circuit; proofs[n] written. gpu_mtx accepted
 * and ignored; gpu_index >= -1 (ignored in-process). */
RustError generate_groth16_proofs_c(const Assignment provers[], size_t n, const fr_t r_s[], const fr_t s_s[],
                                    groth16_proof proofs[], SRS *srs, void *gpu_mtx, int gpu_index);
/* Validates everything, copies a, b, c (the caller may free them on return; densities and
 * assignments must stay valid until finalize/destroy), starts the proofs on a thread. */
RustError generate_groth16_proofs_start_c(const Assignment provers[], size_t n, const fr_t r_s[],
                                          const fr_t s_s[], SRS *srs, void *gpu_mtx, int gpu_index,
                                          void **pending_out);
/* Waits for the proofs, writes proofs[n] and releases the handle (also on error). */
RustError finalize_groth16_proof_c(void *pending, groth16_proof proofs[]);
void destroy_pending_proof(void *pending);  /* abandons: stops after the circuit in progress */
void *create_gpu_mutex(void);
void destroy_gpu_mutex(void *mtx);

/* zkpipe's additions (not in supraseal-c2): a, b, c of n elements each in one block the library
 * hands out (64-byte aligned), for bellperson's pinned-buffer hook (new_with_pinned): start
 * recognises such buffers (a, b, c exactly as handed out, abc_size <= n) and holds them by
 * reference instead of copying; zkpipe_c2_free_abc(a) releases the caller's reference (allowed
 * right after start returns). In-process the block is heap memory; in group mode it is a, b, c
 * of a vectors file in /dev/shm that the group's synthesizer maps (start writes only w). zkpipe_c2_bytes_copied: the bytes of
 * a, b, c that start has copied since the library was loaded. */
RustError zkpipe_c2_alloc_abc(size_t n, fr_t **a, fr_t **b, fr_t **c);
void zkpipe_c2_free_abc(fr_t *a);
size_t zkpipe_c2_bytes_copied(void);

#ifdef __cplusplus
}
#endif
#endif
