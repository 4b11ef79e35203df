/* groth16.h - the Groth16 prover of snarkjs, split into stage functions, and the backend
 * ops table that the CPU backend (reference, lib/groth16/backend_cpu.c) and the CUDA backend
 * (gpu-worker/cuda/) implement.
 *
 * Stages (each a plain function over caller-owned buffers; no I/O, no globals):
 *   1. zp_g16_synth     witness -> a, b, c = a∘b (Montgomery), optional r1cs satisfaction check
 *   2. zp_g16_prove_g1  via a backend: iNTT/coset/NTT -> h; G1 MSMs A, B1, C, H -> 4 Jacobian points
 *   3. zp_g16_finalize  G2 MSM B2, blinding r,s, assembly, pairing self-check -> proof
 *   4. zp_g16_verify    the Groth16 pairing equation
 * Fr values of either curve are stored as zp_scalar_t (4 limbs); whether a buffer holds
 * Montgomery or standard form is stated at each function.
 * Tests: tests/test_groth16.c, tests/oracle/ */
#ifndef ZP_GROTH16_H
#define ZP_GROTH16_H
#include "../ec/ec.h"
#include "../fmt/fmt.h"
#include "../util/util.h"

/* a point of either curve (POD, fits in a shm slot's result area) */
typedef union { zp_g1a_bn254_t bn254; zp_g1a_bls12_381_t bls12_381; } zp_g1a_any_t;
typedef union { zp_g1_bn254_t bn254; zp_g1_bls12_381_t bls12_381; } zp_g1_any_t;
typedef union { zp_g2a_bn254_t bn254; zp_g2a_bls12_381_t bls12_381; } zp_g2a_any_t;
typedef union { zp_g2_bn254_t bn254; zp_g2_bls12_381_t bls12_381; } zp_g2_any_t;

enum { ZP_G16_A = 0, ZP_G16_B1 = 1, ZP_G16_C = 2, ZP_G16_H = 3, ZP_G16_NMSM = 4 };

/* The proving key in memory: every point array copied once, aligned, from the zkey (same
 * bytes: affine Montgomery), coefficients decoded and validated. Built by zp_g16_key_load;
 * the arrays may also live in a shared-memory region (zp_g16_key_load_into). */
typedef struct zp_g16_key {
    zp_curve_id_t curve;
    uint32_t n_vars, n_public, domain_size, log_n;
    zp_g1a_any_t alpha1, beta1, delta1;
    zp_g2a_any_t beta2, gamma2, delta2;
    void *ic;            /* n_public+1 G1 affine (curve's type) */
    void *a, *b1, *c, *h;/* G1 affine arrays: n_vars, n_vars, n_vars-n_public-1, domain_size */
    void *b2;            /* G2 affine, n_vars */
    struct zp_g16_coef { uint32_t matrix, row, wire, pad; zp_scalar_t v; } *coefs; /* v: as in the zkey (R^2 Montgomery) */
    uint32_t n_coefs;
    int coefs_sorted;    /* rows non-decreasing (snarkjs order): synth splits rows by binary search */
    /* (added, session 17) zp_g16_key_load_inplace: coefs is NULL and the entries are read where
     * the zkey has them: n_coefs x 44 bytes (matrix, row, wire: u32 LE; value: 32 bytes, as
     * in coefs[].v), checked by the load like decoded ones. Decoding them cost a 2^18 proof
     * ~40 ms (37 MB of fresh pages zeroed, written, read once). Readers: g16_coef_at. */
    const uint8_t *coefs_raw;
    void *mem; size_t mem_len; int mem_owned; /* backing store */
    /* (added, issue 29 item 4) the key's conventions, zp_g16_conv_id_t of assignment.h: 0
     * snarkjs (a zkey), 1 bellman (a .params expanded by zp_g16_key_from_bellman: the GPU stage
     * computes H by bellman's coset method, the proof is written in bellman's encoding) */
    uint32_t conv;
    /* (added: bellman keys kept compacted, as in the .params) compact = 1: a and b1 hold n_a,
     * b2 n_b points, those of the wires whose bit is set in dens_a / dens_b (n_vars bits each,
     * bit w%64 of word w/64), in wire order: the j-th set bit pairs with the j-th point;
     * pfx_*[i] = bits set in words 0..i-1 (ceil(n_vars/64) + 1 entries, the last = n_a / n_b).
     * compact = 0 (zkeys, and every key built before this): one point per wire, n_vars. The
     * MSMs gather their scalars with zp_g16_gather (the backends, the finalizer). */
    uint32_t compact, n_a, n_b;
    const uint64_t *dens_a, *dens_b;
    const uint32_t *pfx_a, *pfx_b;
} zp_g16_key_t;
/* points in a / b1 (and b2) of k: n_vars unless compacted */
static inline size_t zp_g16_key_n_a(const zp_g16_key_t *k) { return k->compact ? k->n_a : k->n_vars; }
static inline size_t zp_g16_key_n_b(const zp_g16_key_t *k) { return k->compact ? k->n_b : k->n_vars; }
/* out[j] = w[wire of the j-th set bit of dens] (n_vars bits; pfx as in the key), on pool
 * (threads take ranges of words; may be NULL). Reads |set bits| scalars, writes as many. */
void zp_g16_gather(zp_scalar_t *out, const zp_scalar_t *w, const uint64_t *dens, const uint32_t *pfx,
                   size_t n_vars, zp_pool_t *pool);

size_t zp_g16_key_bytes(const zp_zkey_t *z);                 /* size needed by load_into */
int zp_g16_key_load(zp_g16_key_t *k, const zp_zkey_t *z);    /* mallocs (aligned) */
int zp_g16_key_load_into(zp_g16_key_t *k, const zp_zkey_t *z, void *mem, size_t len);
/* the same on pool's threads (copy + point checks); mem NULL = allocate (as key_load) (added) */
int zp_g16_key_load_pool(zp_g16_key_t *k, const zp_zkey_t *z, void *mem, size_t len, zp_pool_t *pool);
/* the same, but the point arrays stay in z's mapping where their alignment allows (checked
 * there, never copied): z must stay open (and its file unchanged) until k is closed. Only
 * the coefficients (decoded) and misaligned arrays take memory of their own. (added) */
int zp_g16_key_load_inplace(zp_g16_key_t *k, const zp_zkey_t *z, zp_pool_t *pool);
void zp_g16_key_close(zp_g16_key_t *k);
/* A key kept in memory that other processes map at other addresses (shm/keystore.c): the
 * arrays are described by offsets from the block's start, never pointers (added by keystore).
 * key_offsets: offsets of k's arrays from base (k built by load_into inside [base, ...)).
 * key_bind: k's curve, conv, counts and header points set by the caller (untrusted); checks the
 * conventions id (known, and bellman only on BLS12-381),
 * counts (as load does), that every array lies inside [base, base+len) and is 64-aligned,
 * and every coefficient's matrix/row/wire (what synth indexes with; values and points are
 * not re-checked: the caller's checksum covers them), recomputes coefs_sorted, sets the
 * pointers; mem = base, mem_owned = 0 (close only forgets). ZP_EFORMAT with a message. */
/* (dens_a, dens_b, pfx_a, pfx_b: a compacted key's bitmaps and prefix counts, 0 otherwise;
 * bind checks them as untrusted: in range, bits past n_vars clear, every prefix the running
 * popcount, the totals k->n_a / k->n_b, which must not exceed n_vars) */
typedef struct { uint64_t ic, a, b1, c, h, b2, coefs, dens_a, dens_b, pfx_a, pfx_b; } zp_g16_key_offs_t;
void zp_g16_key_offsets(zp_g16_key_offs_t *o, const zp_g16_key_t *k, const void *base);
int zp_g16_key_bind(zp_g16_key_t *k, const zp_g16_key_offs_t *o, void *base, size_t len);
size_t zp_g1a_size(zp_curve_id_t c);                         /* 64 / 96 */
size_t zp_g2a_size(zp_curve_id_t c);                         /* 128 / 192 */

/* ---- stage 1: synth ----
 * w: n_vars witness values, STANDARD form (wtns). a, b, c: domain_size each, Montgomery out.
 * With r1cs: checks C·w == a∘b for every constraint; on the first failure returns ZP_EUNSAT
 * and sets the message with the constraint index. */
int zp_g16_synth(const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                 zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *c, zp_pool_t *pool);
/* Synth context (added, issue 10 item 7): the r1cs check's index (where each of up to
 * ZP_G16_SYNTH_CHUNKS constraint chunks starts in section 2) kept between calls, so a
 * synthesizer checks partition after partition with no heap allocation and no serial scan.
 * Fixed size; init never fails, nothing to close. The index is rebuilt when the r1cs differs
 * and re-validated as it is used (a stale one is noticed, never trusted). One call at a time. */
#define ZP_G16_SYNTH_CHUNKS 256
typedef struct zp_g16_synth_ctx {
    const void *r1cs;
    const uint8_t *cons;
    size_t cons_len;
    uint32_t n_cons;
    unsigned n_chunks;          /* 0: no index */
    uint64_t builds;            /* index scans done (tests, stats) */
    uint32_t chunk_first[ZP_G16_SYNTH_CHUNKS + 1];
    size_t chunk_off[ZP_G16_SYNTH_CHUNKS + 1];
} zp_g16_synth_ctx_t;
void zp_g16_synth_ctx_init(zp_g16_synth_ctx_t *ctx);
/* zp_g16_synth with ctx's index (zp_g16_synth = this with a temporary context) */
int zp_g16_synth_ctx(zp_g16_synth_ctx_t *ctx, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                     zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *c, zp_pool_t *pool);

/* ---- backend ops table ----
 * Production verbs only: what the stage runtime (stage/backend.c) and the GPU worker call.
 * The test and bench verbs (compute_h, msm_g1 on their own) are in a separate table,
 * zp_backend_test_ops_t of backend_test.h. */
typedef struct zp_backend zp_backend_t;
typedef struct {
    uint64_t h2d_ns, ntt_ns, msm_ns[ZP_G16_NMSM], d2h_ns, total_ns;
} zp_g16_times_t;
typedef struct {
    unsigned threads;     /* CPU threads (0 = all cores) */
    int device;           /* CUDA device ordinal */
} zp_backend_cfg_t;
/* one partition of a prove_g1_batch: the prove_g1 arguments */
typedef struct zp_g16_g1_job {
    const zp_scalar_t *w;
    zp_scalar_t *a, *b;
    const zp_scalar_t *c;
    zp_scalar_t *h;
    zp_g1_any_t out[ZP_G16_NMSM];
    /* (added, issue 10 item 1) non-NULL: a and b are read from here (never written) by the
     * first NTT pass, which writes them into a and b, the job's work buffers (prove_g1_from);
     * only for a backend with prove_g1_from (the stage wrapper copies for the others) */
    const zp_scalar_t *a_in, *b_in;
} zp_g16_g1_job_t;
/* a job's sources of a and b: a_in / b_in when given, else a / b themselves (in place) */
static inline const zp_scalar_t *zp_g16_job_a(const zp_g16_g1_job_t *j) { return j->a_in ? j->a_in : j->a; }
static inline const zp_scalar_t *zp_g16_job_b(const zp_g16_g1_job_t *j) { return j->b_in ? j->b_in : j->b; }
typedef struct zp_backend_ops {
    const char *name;     /* "cpu", "cuda" */
    int (*open)(zp_backend_t **be, const zp_backend_cfg_t *cfg);   /* ZP_ENODEV: no device */
    void (*close)(zp_backend_t **be);
    /* pin host memory for DMA (cudaHostRegister); no-op on CPU */
    int (*host_register)(zp_backend_t *be, void *p, size_t len);
    int (*host_unregister)(zp_backend_t *be, void *p);
    /* make the key's bases resident (upload once); called before prove_g1 for that key */
    int (*load_key)(zp_backend_t *be, const zp_g16_key_t *k);
    /* the whole G1 part: h from a, b, c (h written into h, which may be c; the CUDA backend
     * keeps h on the device and leaves it unwritten), then the 4 MSMs
     * (A, B1 over w; C over w[n_public+1..]; H over h) into out[ZP_G16_*] */
    int (*prove_g1)(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w,
                    zp_scalar_t *a, zp_scalar_t *b, const zp_scalar_t *c, zp_scalar_t *h,
                    zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t);
    /* n partitions of one key at once (same-circuit batching, issue 10 item 5): the MSMs over
     * the same bases share the point reads; job i's result equals prove_g1 on its vectors.
     * May be NULL (callers then run prove_g1 per job). t: the batch's total times. */
    int (*prove_g1_batch)(zp_backend_t *be, const zp_g16_key_t *k, unsigned n, zp_g16_g1_job_t *jobs,
                          zp_g16_times_t *t);
    /* (added, issue 10 item 2) device double buffering; NULL on the CPU backend. stage_in: the
     * key made ready (uploaded once, referenced) and the H2D of one partition's w, a, b, c (host
     * memory that stays unchanged until release_set) into device buffer set `set` queued on the
     * copy stream; returns without waiting (it may run while another set computes, on another
     * thread). prove_staged: the prove_g1 result of that set (the compute waits for the set's
     * copies); h is not written. release_set: the set back, after prove_staged or instead of it
     * (then its copies are waited for first); always called once a stage_in succeeded; a failed
     * stage_in leaves nothing to release. */
    int (*stage_in)(zp_backend_t *be, unsigned set, const zp_g16_key_t *k, const zp_scalar_t *w,
                    const zp_scalar_t *a, const zp_scalar_t *b, const zp_scalar_t *c);
    int (*prove_staged)(zp_backend_t *be, unsigned set, const zp_g16_key_t *k, zp_g1_any_t out[ZP_G16_NMSM],
                        zp_g16_times_t *t);
    int (*release_set)(zp_backend_t *be, unsigned set);
    /* (added) 1 if key k's bases are resident in the device's memory now (a later proof of k
     * uploads nothing), 0 if not; O(1) in the key's size, thread-safe (the heartbeat's key
     * listing asks it while a proof runs). NULL: the backend keeps nothing on a device (CPU). */
    int (*key_resident)(zp_backend_t *be, const zp_g16_key_t *k);
    /* (added, issue 10 item 1) prove_g1 on vectors that stay intact, with no copy before the
     * compute: a_in, b_in and c are only read, by the compute's first pass (the inverse NTTs'
     * out-of-place bit reversal), which writes them into the caller's work buffers a, b and h
     * (domain_size each; a and b are clobbered, h gets h). out equals prove_g1 on copies of
     * a_in, b_in (bit for bit). NULL (CUDA: its prove_g1 writes nothing on the host): the
     * caller copies and calls prove_g1. */
    int (*prove_g1_from)(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_scalar_t *a_in,
                         const zp_scalar_t *b_in, const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b,
                         zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM], zp_g16_times_t *t);
    /* (added, issue 12) optional, NULL: the caller runs prove_g1. prove_g1 for a caller that
     * only ever adds out[C] and out[H] (a whole proof's pi_C): out[C] = C + H, out[H] =
     * infinity (the CPU backend: one MSM of n_vars - n_public - 1 + domain_size points).
     * key_done: the caller never reads k's A and B1 point arrays again (a one-shot proof), so
     * their pages may go back right after their MSM. */
    int (*prove_g1_sum)(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a,
                        zp_scalar_t *b, const zp_scalar_t *c, zp_scalar_t *h, zp_g1_any_t out[ZP_G16_NMSM],
                        zp_g16_times_t *t, bool key_done);
} zp_backend_ops_t;
extern const zp_backend_ops_t zp_backend_cpu;

/* ---- stage 3: finalize ----
 * r, s: NULL = fresh from the OS's random source; given = deterministic (tests only).
 * The proof is checked with the pairing against the key's verification key before it is
 * returned: ZP_EVERIFY if it does not verify (nothing is produced then). */
typedef struct {
    zp_curve_id_t curve;
    zp_g1a_any_t a, c;
    zp_g2a_any_t b;
} zp_g16_proof_t;
typedef struct { uint64_t msm_g2_ns, assemble_ns, check_ns, total_ns; } zp_g16_fin_times_t;
int zp_g16_finalize(const zp_g16_key_t *k, const zp_scalar_t *w, const zp_g1_any_t part[ZP_G16_NMSM],
                    const zp_scalar_t *r, const zp_scalar_t *s, zp_g16_proof_t *proof,
                    zp_pool_t *pool, zp_g16_fin_times_t *t);

/* Finalizer context (added): keeps the G2 MSM scratch between calls (grown as needed, never
 * shrunk), so a finalizer serving many proofs does not allocate it per proof. init never
 * fails; close frees; one call at a time per context; the pool passed to every call should
 * keep its size (the scratch is sized for it, and regrown if it changes). */
typedef struct zp_g16_fin_ctx { void *scratch; size_t scratch_len; } zp_g16_fin_ctx_t;
void zp_g16_fin_ctx_init(zp_g16_fin_ctx_t *ctx);
void zp_g16_fin_ctx_close(zp_g16_fin_ctx_t *ctx);
/* zp_g16_finalize with ctx's scratch (zp_g16_finalize = this with a temporary context) */
int zp_g16_finalize_ctx(zp_g16_fin_ctx_t *ctx, const zp_g16_key_t *k, const zp_scalar_t *w,
                        const zp_g1_any_t part[ZP_G16_NMSM], const zp_scalar_t *r, const zp_scalar_t *s,
                        zp_g16_proof_t *proof, zp_pool_t *pool, zp_g16_fin_times_t *t);

/* ---- verification ---- */
typedef struct {
    zp_curve_id_t curve;
    uint32_t n_public;
    zp_g1a_any_t alpha1;
    zp_g2a_any_t beta2, gamma2, delta2;
    zp_g1a_any_t *ic;     /* n_public + 1, malloc'd */
} zp_g16_vk_t;
int zp_g16_vk_from_key(zp_g16_vk_t *vk, const zp_g16_key_t *k);
/* straight from an opened zkey (header points and IC only; subgroup-checked), without
 * loading the whole key (added by the groth16 module) */
int zp_g16_vk_from_zkey(zp_g16_vk_t *vk, const zp_zkey_t *z);
int zp_g16_vk_from_json(zp_g16_vk_t *vk, const zp_vk_json_t *j);   /* checks points on curve / in subgroup */
void zp_g16_vk_free(zp_g16_vk_t *vk);
/* pub: n_public values STANDARD form. Returns 0 valid, ZP_EVERIFY invalid, other < 0 bad input. */
int zp_g16_verify(const zp_g16_vk_t *vk, const zp_scalar_t *pub, size_t npub, const zp_g16_proof_t *p);

/* ---- encodings ---- */
int zp_g16_proof_to_json(zp_proof_json_t *j, const zp_g16_proof_t *p);
int zp_g16_proof_from_json(zp_g16_proof_t *p, const zp_proof_json_t *j); /* on-curve + subgroup checked */
/* public signals w[1..n_public] as decimal strings */
int zp_g16_public_to_json(char (*sig)[100], const zp_g16_key_t *k, const zp_scalar_t *w);
/* compressed binary: A (G1) | B (G2) | C (G1): 192 bytes BLS12-381 (Filecoin layout), 128 BN254 */
size_t zp_g16_proof_bin_size(zp_curve_id_t c);
int zp_g16_proof_to_bin(uint8_t *out, const zp_g16_proof_t *p);
int zp_g16_proof_from_bin(zp_g16_proof_t *p, zp_curve_id_t c, const uint8_t *in);

/* ---- helpers (added by the groth16 module) ---- */
/* decimal (or 0x hex) scalar < r of curve c -> standard form; ZP_EFORMAT otherwise */
int zp_g16_scalar_from_dec(zp_scalar_t *v, zp_curve_id_t c, const char *s);
/* w: n_witness aligned scalars (standard form) copied from the wtns; caller frees (free()) */
int zp_g16_witness_load(zp_scalar_t **w, const zp_wtns_t *wt);
/* (added, issue 12) the witness used where it is: a mapped wtns's values are moved onto an
 * 8-byte boundary inside its private mapping (zp_wtns_align_values) and checked there, *w
 * points into it (valid while wt is open) and *copy = NULL; values in caller memory at an
 * odd address are copied as zp_g16_witness_load does (*w = *copy, the caller frees *copy). */
int zp_g16_witness_inplace(const zp_scalar_t **w, zp_scalar_t **copy, zp_wtns_t *wt);
/* The whole proof in one process: synth (+ r1cs check) -> be's prove_g1 -> finalize.
 * be: an open backend of ops whose load_key was called for k; pool: for synth and finalize
 * (may be NULL). r, s as zp_g16_finalize. Buffers are allocated per call (3 x domain_size
 * scalars: h is computed in c's place) and freed before the G2 MSM, which runs in the CPU
 * backend's MSM scratch when ops is zp_backend_cpu (be is busy for the whole call). */
typedef struct {
    uint64_t synth_ns;
    zp_g16_times_t g1;
    zp_g16_fin_times_t fin;
    uint64_t total_ns;
} zp_g16_prove_times_t;
int zp_g16_prove(zp_g16_proof_t *proof, const zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                 const zp_scalar_t *r, const zp_scalar_t *s, const zp_backend_ops_t *ops, zp_backend_t *be,
                 zp_pool_t *pool, zp_g16_prove_times_t *t);
/* (added, issue 12) zp_g16_prove for a key used for one proof (`zkpipe prove`): its memory
 * goes back as the proof goes (the decoded coefficients after synthesis, the G1 point arrays
 * A, B1, C, H after the G1 MSMs, before the G2 MSM). The key is consumed: afterwards only
 * zp_g16_key_close; a second proof with it is refused (-EINVAL), never computed on zeros. */
int zp_g16_prove_once(zp_g16_proof_t *proof, zp_g16_key_t *k, const zp_scalar_t *w, const zp_r1cs_t *r1cs,
                      const zp_scalar_t *r, const zp_scalar_t *s, const zp_backend_ops_t *ops, zp_backend_t *be,
                      zp_pool_t *pool, zp_g16_prove_times_t *t);
#endif
