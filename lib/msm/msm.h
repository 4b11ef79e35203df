/* msm.h - multi-scalar multiplication sum_i k_i * P_i (Pippenger, signed digits, threads).
 *
 * Points are affine (zkey layout; (0,0) = infinity, skipped). Scalars are zp_scalar_t in
 * STANDARD form (not Montgomery), < r. n may be 0 (result: infinity).
 * Scratch is owned by the caller: zp_msm_<G>_<C>_scratch_size(n, nthreads) bytes, 64-byte
 * aligned, with nthreads == zp_pool_size(pool) (the plan, and so the layout, depends on it).
 * pool may be NULL (single thread). Never allocates, never fails. Scalars are read as full
 * 256-bit integers, so unreduced scalars give sum k_i P_i all the same. Zero scalars cost
 * nothing, scalars equal to 1 one batched affine addition, short scalars only the windows
 * their bit length reaches (witness vectors are mostly 0/1/small).
 * Endomorphism split or plain, and the window: chosen per MSM from a measured table
 * (zp_msm_calib_init below; issue 31): the split where it was measured faster for the group,
 * curve, scalar shape, size and thread class (witness-like scalars: every size; uniform ones:
 * up to 2^14-2^18, see doc/msm.md), the window the model's or one bit either side.
 * The split (GLV, G1 and G2 of both curves): each scalar k is split as
 * k = k1 + k2 lambda with |k1|, |k2| < 2^126 / 2^127 (lib/ec/ec_glv.c) and the MSM runs over the 2n
 * points P_i, phi(P_i) with 128-bit scalars (signs as point negations): half the windows, so
 * half the bucket reductions, and a window one bit wider for the same work. Scalars already
 * short (or short negated: -1, -2, ...) are not split. The scratch holds the halves, their
 * signs and beta x of the points whose k2 is not 0.
 * On BLS12-381's G2 from 2^17 points up (MSM_GLS_MIN_N, msm_g2_*.c) the split is the
 * 4-dimensional GLS split instead (opts.dim = 4 asks for it on both curves; lib/ec:
 * zp_gls_<C>_split): k = k0 + k1 mu + k2 mu^2 + k3 mu^3 with |k_i| < 2^64 (BN254) / 2^63 (BLS12-381), psi = [mu];
 * the MSM runs over the 4n points psi^i(P_j) with ~64-bit scalars; the scratch holds the
 * parts, their signs and psi(P) of the points that are split (psi^2 and psi^3 are derived
 * from P and psi(P) by one Fq x Fq2 product when read).
 * Tests: tests/test_msm.c (against a naive sum). Bench: zkpipe bench */
#ifndef ZP_MSM_H
#define ZP_MSM_H
#include "../ec/ec.h"
#include "../util/util.h"

#define ZP_MSM_API(G, C)                                                                       \
    size_t zp_msm_##G##_##C##_scratch_size(size_t n, unsigned nthreads);                       \
    void zp_msm_##G##_##C(zp_##G##_##C##_t *out, const zp_##G##a_##C##_t *points,             \
                          const zp_scalar_t *scalars, size_t n, void *scratch, zp_pool_t *pool);

/* Several MSMs over the SAME scalars (e.g. Groth16's A and B1 over the witness): out[j] =
 * sum_i scalars[i] points[j][i] for j < m. The scalars are classified once (zeros dropped,
 * ones summed without windows, the rest sorted by bit length) and the m MSMs' tasks share
 * one pool run. Scratch: zp_msm_<G>_<C>_multi_scratch_size(n, m, nthreads) bytes, same
 * rules as above (m = 1 needs the same as the plain MSM). (added) */
#define ZP_MSM_MULTI_API(G, C)                                                                 \
    size_t zp_msm_##G##_##C##_multi_scratch_size(size_t n, unsigned m, unsigned nthreads);     \
    void zp_msm_##G##_##C##_multi(zp_##G##_##C##_t *out, const zp_##G##a_##C##_t *const *points, \
                                  unsigned m, const zp_scalar_t *scalars, size_t n, void *scratch, \
                                  zp_pool_t *pool);

/* The same with options (NULL = the defaults above): no_endo turns the endomorphism off (the
 * plain 256-bit Pippenger); c forces the window size (tuning; 0 = the plan's choice, clamped
 * to 2..16); dim picks the split; method forces endo or plain (ZP_MSM_AUTO: the table's). Scratch: zp_msm_<G>_<C>_ex_scratch_size(n, m, nthreads, opts)
 * bytes; the plain scratch_size covers every opts with c = 0 and dim != 4. (added) */
typedef enum {
    ZP_MSM_AUTO = 0,   /* the calibrated choice (below), or ZP_MSM_METHOD's when that is set */
    ZP_MSM_ENDO = 1,   /* the split: GLV (dim 2), BLS12-381's G2 from 2^17 points GLS (dim 4) */
    ZP_MSM_PLAIN = 2,  /* the 256-bit Pippenger (as no_endo) */
} zp_msm_method_t;

typedef struct {
    bool no_endo;
    unsigned c;
    unsigned dim;  /* 0: the default (2; BLS12-381's G2: 4 from 2^17 points up); 2: the
                    * GLV split; 4: the GLS split on G2 (on G1 it means 2). (added) */
    zp_msm_method_t method;  /* no_endo and dim override it (issue 31) */
    /* the window when c is 0 (issue 31): the plan's operation-count model's choice shifted
     * by the calibrated offset (-1, 0, +1 bits) for the method, group, curve, shape, size and
     * thread class; model_window: the model's shifted by window_delta (clamped to -1..1)
     * instead (what `zkpipe msm calibrate` measures). The scratch covers every offset. */
    bool model_window;
    int window_delta;
    /* (added, session 17; tuning: what a calibration of them would alternate in one process)
     * k: batched additions per inversion K, p: point ranges per window P; 0 = the plan's. K is
     * clamped to 16..1024, P to a power of two 1..64. The scratch sized with these opts
     * covers them. */
    unsigned k, p;
    /* (added, session 19) g: full windows per task, 1 or 2 (two windows' buckets side by
     * side, one batch of 2K additions over both); 0 = the plan's. 2 is taken only where 2K
     * fits the batch limit (1024). */
    unsigned g;
    /* (added, session 20) with model_window: K and P as the plan's times 2^k_delta and
     * 2^p_delta (-1..1; clamped as k and p are): the candidates `zkpipe msm calibrate`
     * measures for the table's `kp` rows; k and p, when set, still override them. Without
     * model_window the table's offsets for the MSM are used (zp_msm_pick_t.dk / dp). The
     * scratch covers every offset. */
    int k_delta, p_delta;
} zp_msm_opts_t;

/* what the calibration table says for one MSM (zp_msm_auto_pick): the method, and for each
 * method (0 endo, 1 plain) the window offset from the model's choice and, at that window, the
 * offsets of the batch size K (dk: K * 2^dk) and of the point ranges per window P (dp: P *
 * 2^dp) from the plan's (session 20: the table's `kp` rows; 0 where none was measured at
 * least 2% faster) */
typedef struct {
    zp_msm_method_t method;
    int dc[2];
    int dk[2], dp[2];
} zp_msm_pick_t;

/* the plan one MSM takes (zp_msm_<G>_<C>_plan_info; `zkpipe msm which`): method, split
 * dimension (1: plain), window c (for full-size scalars: witness-like ones are planned on
 * their bit lengths, with the same offset), the offset dc from the model's window in effect
 * (0 where the table's was clamped to the window range 2..16), windows W, point
 * ranges per window P, batched additions per inversion K, full windows per task wpt (1, or 2:
 * window pairs sharing one batch of 2K) */
typedef struct {
    zp_msm_method_t method;
    unsigned dim, c, W, P, K, wpt;  /* wpt: full windows per task (msm_plan_t.G) */
    int dc;
    int dk, dp;   /* the K and P offsets in effect (K, P over the plan's at this window, as
                   * powers of two; 0 where clamped) */
} zp_msm_info_t;

/* Endomorphism split or plain, and the window, per MSM (issue 31; doc/msm.md). With
 * ZP_MSM_AUTO (NULL opts: every MSM of the prover) the choice is read from a calibration
 * table: for each group (g1|g2), curve, scalar shape ("uniform" and "witness"-like: the share
 * of a sample of the scalars longer than 128 bits places a call between the two) and thread
 * class (one thread; the machine's threads), the measured time of both methods at a few
 * sizes log2n, each at the model's window and one bit either side, measured on the arithmetic
 * path (scalar or AVX-512 IFMA vector) the MSM runs on (zp_msm_calib_rows: the other path's
 * rows where that one has none); per method the fastest window counts. The ratio endo/plain (of the methods' best times) is interpolated linearly
 * in log2n between the measured sizes (held constant outside them) and the split is used
 * where it is below 0.98 (a tie goes to plain, which touches less memory); each method's
 * window offset is interpolated the same way and rounded, and so are the batch size K's and
 * the point split P's offsets at that window (format 4's kp rows, session 20: ratios to the
 * plan's K and P measured alongside; the method is chosen on the window rows alone). MSMs with more than one thread
 * use the many-thread rows where the table has them, else the one-thread rows (and one-thread
 * MSMs the many-thread rows where a key has none; zp_msm_calib_rows below).
 * The table is the built-in one (measured on the machine named in zp_msm_calib_source), or a
 * file written by `zkpipe msm calibrate`: zp_msm_calib_init() looks for it at $ZKPIPE_MSM_CALIB,
 * then at ZP_MSM_CALIB_SHARE (the install's share dir); a missing file means the built-in
 * table, a malformed one is refused (ZP_EFORMAT, zp_err naming file and line). Keys the file
 * does not have keep the built-in rows. ZP_MSM_METHOD=endo|plain|auto in the environment
 * forces the method of every AUTO MSM (benchmarks); ZP_MSM_WINDOW=model the model's window
 * (offset 0) and the plan's K and P for every MSM without a forced c. Called lazily by the first MSM (which, if it
 * fails there, prints the error once on stderr and uses the built-in table); processes call
 * it at start to refuse a bad file. Thread-safe; the first call decides. The table is
 * process-wide and immutable once published (msm_calib.c): loads and resets publish a new
 * one atomically, so an MSM running on another thread reads either the old or the new. */
int zp_msm_calib_init(void);
/* parse path and use it (tests, `zkpipe msm calibrate --check`): 0, or ZP_EFORMAT / -errno
 * with zp_err "PATH:LINE: what"; a failed load leaves the table in use unchanged */
int zp_msm_calib_load(const char *path);
/* the window offset (-1..1) the table takes from the three times ms[dc + 1] of one method at
 * the model's window + dc (0: not measured): 0 unless another is more than 2% faster, the
 * fastest of those then (`msm calibrate` measures the K / P candidates at it) */
int zp_msm_calib_offset(const double ms[3]);
/* the built-in table again (tests) */
void zp_msm_calib_reset(void);
/* an empty table: no rows on either path (tests of the fallbacks; then loads add to it) */
void zp_msm_calib_clear(void);
/* what the table in use is: "built-in (MACHINE)" or the file's path and its machine line */
const char *zp_msm_calib_source(void);
/* the method an AUTO MSM of group g (1 or 2) on curve (0 bn254, 1 bls12_381) takes for n
 * scalars of the shape witness (false: uniform): ZP_MSM_ENDO or ZP_MSM_PLAIN */
zp_msm_method_t zp_msm_auto_method(unsigned g, unsigned curve, bool witness, size_t n);
/* the same for a mix with long_frac of the scalars longer than 128 bits (what an AUTO MSM
 * samples): the ratio endo/plain is interpolated linearly between the witness rows' mix (0.15
 * long: 10% uniform, 5% r - small) and the uniform rows' (1.0), clamped to that range */
zp_msm_method_t zp_msm_auto_method_mix(unsigned g, unsigned curve, double long_frac, size_t n);
/* the method and both methods' window offsets for n scalars, nthreads threads */
zp_msm_pick_t zp_msm_auto_pick(unsigned g, unsigned curve, double long_frac, size_t n, unsigned nthreads);
/* the same on the arithmetic path vector (true: the AVX-512 IFMA rows, false: the scalar
 * path's) whatever path is in use: zp_msm_auto_pick passes zp_msm_vector(), the path an MSM
 * started now runs on (tests, `zkpipe msm which`) */
zp_msm_pick_t zp_msm_auto_pick_path(unsigned g, unsigned curve, double long_frac, size_t n, unsigned nthreads,
                                    bool vector);
/* the many-thread class's thread count in the table in use, for the path in use (1: one-thread
 * rows only) */
unsigned zp_msm_calib_threads(void);
/* Which rows the table's pick reads (zp_msm_calib_rows) for group g, curve, shape and thread
 * count on the path vector. The table holds rows per arithmetic path (file format 3's `path
 * scalar|vector` lines; format 1 and 2 rows count for both paths): an MSM takes, per (group,
 * curve, shape), its thread class's rows measured on the path it runs on, else that path's
 * rows of the other thread class, else, as a fallback where the path in use has no rows for
 * the key, the other path's (its own class first), so a table measured on one path still
 * decides on the other. */
typedef struct {
    bool vector;     /* the rows were measured on the vector path (false: scalar) */
    bool fallback;   /* they are the other path's: the path asked for has none for this key */
    bool none;       /* no rows at all: the split, at the model's window */
    unsigned threads;/* the rows' thread class: 1, or the many-thread rows' count */
} zp_msm_rows_t;
void zp_msm_calib_rows(zp_msm_rows_t *r, unsigned g, unsigned curve, bool witness, unsigned nthreads, bool vector);

/* The batched affine additions of G1 and G2 on AVX-512 IFMA (eight per instruction; msm_vec_impl.h),
 * both curves, on by default where the CPU has AVX512F and AVX512IFMA; ZP_MSM_VECTOR=0 in the
 * environment turns it off. zp_msm_set_vector(false) turns it off, (true) back on where the
 * CPU has it; returns whether it is in use now. Results are identical either way. */
bool zp_msm_set_vector(bool on);
bool zp_msm_vector(void);
#define ZP_MSM_EX_API(G, C)                                                                    \
    size_t zp_msm_##G##_##C##_ex_scratch_size(size_t n, unsigned m, unsigned nthreads,         \
                                              const zp_msm_opts_t *opts);                      \
    void zp_msm_##G##_##C##_multi_ex(zp_##G##_##C##_t *out, const zp_##G##a_##C##_t *const *points, \
                                     unsigned m, const zp_scalar_t *scalars, size_t n,         \
                                     void *scratch, zp_pool_t *pool, const zp_msm_opts_t *opts); \
    void zp_msm_##G##_##C##_plan_info(zp_msm_info_t *info, size_t n, unsigned nthreads,        \
                                      bool witness, const zp_msm_opts_t *opts);

/* One MSM over two point arrays with their own scalars, when only the sum is wanted (Groth16's
 * C and H, both only ever added into pi_C): out = sum_i s1[i] p1[i] + sum_i s2[i] p2[i], run
 * as one MSM of n1 + n2 points (one pre-pass, one plan for the larger size, one bucket
 * reduction per window instead of two; measured in doc/msm.md). Without the endomorphism
 * (opts->no_endo, or the method chosen for n1 + n2 points is plain), or with n1 or n2 0, it
 * runs the two MSMs (each choosing its own method) and adds them. Scratch:
 * zp_msm_<G>_<C>_sum2_scratch_size(n1, n2, nthreads, opts) bytes (that of one MSM of n1 + n2
 * points), otherwise the rules above. (added) */
#define ZP_MSM_SUM2_API(G, C)                                                                  \
    size_t zp_msm_##G##_##C##_sum2_scratch_size(size_t n1, size_t n2, unsigned nthreads,       \
                                                const zp_msm_opts_t *opts);                    \
    void zp_msm_##G##_##C##_sum2_ex(zp_##G##_##C##_t *out, const zp_##G##a_##C##_t *p1,        \
                                    const zp_scalar_t *s1, size_t n1, const zp_##G##a_##C##_t *p2, \
                                    const zp_scalar_t *s2, size_t n2, void *scratch,           \
                                    zp_pool_t *pool, const zp_msm_opts_t *opts);

/* (added, session 17) the key load's point check on the vector path (AVX-512 IFMA, when the
 * MSMs use it): points [0, *done) are examined, *done a multiple of 8 (0: no vector path or
 * n < 8; the caller checks the rest). Returns the index of the first that is neither (0,0) nor
 * canonical (coordinates < p) and on the curve, else *done. */
#define ZP_MSM_CHECK_API(G, C) \
    size_t zp_msm_##G##_##C##_check_v(const zp_##G##a_##C##_t *pts, size_t n, size_t *done);
ZP_MSM_CHECK_API(g1, bn254)
ZP_MSM_CHECK_API(g2, bn254)
ZP_MSM_CHECK_API(g1, bls12_381)
ZP_MSM_CHECK_API(g2, bls12_381)

ZP_MSM_SUM2_API(g1, bn254)
ZP_MSM_SUM2_API(g2, bn254)
ZP_MSM_SUM2_API(g1, bls12_381)
ZP_MSM_SUM2_API(g2, bls12_381)

ZP_MSM_EX_API(g1, bn254)
ZP_MSM_EX_API(g2, bn254)
ZP_MSM_EX_API(g1, bls12_381)
ZP_MSM_EX_API(g2, bls12_381)

ZP_MSM_MULTI_API(g1, bn254)
ZP_MSM_MULTI_API(g2, bn254)
ZP_MSM_MULTI_API(g1, bls12_381)
ZP_MSM_MULTI_API(g2, bls12_381)

ZP_MSM_API(g1, bn254)
ZP_MSM_API(g2, bn254)
ZP_MSM_API(g1, bls12_381)
ZP_MSM_API(g2, bls12_381)
#endif
