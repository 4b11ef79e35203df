/* groth16_int.h - private to lib/groth16: the per-curve operation table.
 *
 * Everything that depends on the curve (field and group types, MSM, NTT, pairing, decimal
 * and compressed encodings) is written once in g16_impl.h and instantiated for BN254 and
 * BLS12-381 in g16_curves.c, which fills one g16_curve_t per curve. The stage functions
 * (key.c, synth.c, backend_cpu.c, finalize.c) are curve-generic and dispatch through
 * g16_curve(id) once per call, never per element.
 * Buffers of Fr values are zp_scalar_t arrays (4 little-endian limbs); the Montgomery or
 * standard form of each buffer is stated at each entry. */
#ifndef ZP_GROTH16_INT_H
#define ZP_GROTH16_INT_H
#include <string.h>
#include "groth16.h"

typedef struct g16_curve {
    zp_curve_id_t id;
    const char *name;
    size_t g1a_size, g2a_size;            /* affine bytes: 64/96, 128/192 */
    size_t g1c_size, g2c_size;            /* compressed bytes */
    unsigned two_adicity;
    /* points: index of the first point that is not canonical / not on the curve / (subgroup)
     * not in the r-torsion / (!allow_inf) infinity; n if all are fine */
    size_t (*g1_check)(const void *pts, size_t n, bool subgroup, bool allow_inf);
    size_t (*g2_check)(const void *pts, size_t n, bool subgroup, bool allow_inf);
    bool (*fr_canonical)(const zp_scalar_t *v);
    /* synth: for coefs [clo, chi) whose row is in [rlo, rhi): X_m[row] += v (x) w[wire]
     * (Montgomery product of the R^2 coef with the standard-form witness -> Montgomery) */
    void (*synth_coefs)(const zp_g16_key_t *k, const zp_scalar_t *w, zp_scalar_t *a, zp_scalar_t *b,
                        size_t clo, size_t chi, uint32_t rlo, uint32_t rhi);
    /* c[i] = a[i] * b[i] for i in [lo, hi) (Montgomery) */
    void (*mul_pw)(zp_scalar_t *c, const zp_scalar_t *a, const zp_scalar_t *b, size_t lo, size_t hi);
    /* (C.w) of one r1cs constraint whose C linear combination starts at lc (unaligned bytes,
     * validated by fmt), compared with c (Montgomery): true if equal */
    bool (*r1cs_c_matches)(const uint8_t *lc, uint32_t nterms, const zp_scalar_t *w, const zp_scalar_t *c);
    /* NTT domain (heap object) for log_n */
    int (*dom_new)(void **dom, unsigned log_n, zp_pool_t *pool);   /* tables built on pool (may be NULL) */
    void (*dom_free)(void *dom);
    /* a, b: Montgomery evaluations (clobbered); h: in c (Montgomery), out h (standard) */
    void (*compute_h)(const void *dom, unsigned log_n, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *h,
                      zp_pool_t *pool);
    /* (added) the same out of place: a_in, b_in, c read only (by the first NTT pass), a, b work
     * buffers (clobbered), h out; a source may equal its destination (in place) */
    void (*compute_h_from)(const void *dom, unsigned log_n, const zp_scalar_t *a_in, const zp_scalar_t *b_in,
                           const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *h, zp_pool_t *pool);
    size_t (*msm_g1_scratch)(size_t n, unsigned nthreads);
    void (*msm_g1)(zp_g1_any_t *out, const void *pts, const zp_scalar_t *s, size_t n, void *scratch,
                   zp_pool_t *pool);
    /* (added, issue 12) out = sum s1[i] p1[i] + sum s2[i] p2[i] as one MSM of n1 + n2 points
     * (lib/msm: zp_msm_g1_<C>_sum2_ex): Groth16's C and H, which only pi_C's sum needs */
    size_t (*msm_g1_sum2_scratch)(size_t n1, size_t n2, unsigned nthreads);
    void (*msm_g1_sum2)(zp_g1_any_t *out, const void *p1, const zp_scalar_t *s1, size_t n1, const void *p2,
                        const zp_scalar_t *s2, size_t n2, void *scratch, zp_pool_t *pool);
    size_t (*msm_g2_scratch)(size_t n, unsigned nthreads);
    void (*msm_g2)(zp_g2_any_t *out, const void *pts, const zp_scalar_t *s, size_t n, void *scratch,
                   zp_pool_t *pool);
    /* blinding and assembly exactly as snarkjs; r, s standard form */
    void (*assemble)(zp_g16_proof_t *p, const zp_g16_key_t *k, const zp_g1_any_t part[ZP_G16_NMSM],
                     const zp_g2_any_t *b2, const zp_scalar_t *r, const zp_scalar_t *s);
    /* the pairing product check; pub validated (< r, count) by the caller */
    bool (*verify)(const zp_g16_vk_t *vk, const zp_scalar_t *pub, const zp_g16_proof_t *p);
    void (*proof_to_json)(zp_proof_json_t *j, const zp_g16_proof_t *p);
    int (*proof_from_json)(zp_g16_proof_t *p, const zp_proof_json_t *j);
    int (*vk_from_json)(zp_g16_vk_t *vk, const zp_vk_json_t *j);
    /* decimal string of a standard-form scalar (< r) */
    void (*scalar_to_dec)(char *buf, size_t cap, const zp_scalar_t *v);
    int (*scalar_from_dec)(zp_scalar_t *v, const char *s);  /* standard form out; < r checked */
    int (*random_scalar)(zp_scalar_t *v);                   /* uniform < r, standard form */
    void (*proof_to_bin)(uint8_t *out, const zp_g16_proof_t *p);
    int (*proof_from_bin)(zp_g16_proof_t *p, const uint8_t *in);
} g16_curve_t;

extern const g16_curve_t g16_curve_bn254, g16_curve_bls12_381;
/* NULL (and ZP_ECURVE in zp_err_msg) for an unsupported curve */
const g16_curve_t *g16_curve(zp_curve_id_t id);
/* a blinding scalar: the caller's (checked < r; "r" or "s" in the message) or a fresh random one
 * (finalize.c; both provers) */
int g16_blinding(zp_scalar_t *out, const g16_curve_t *cv, const zp_scalar_t *given, const char *name);

/* (added, issue 12) the CPU backend's MSM scratch, grown to at least len bytes, for an MSM its
 * caller runs between two of its calls (zp_g16_prove: the G2 MSM in the pages the G1 MSMs
 * touched); the backend keeps owning it. NULL (message set) if it cannot grow. */
void *g16_cpu_scratch(zp_backend_t *be, size_t len);

/* (added, issue 12) gives back the whole pages inside [p, p + n) (madvise DONTNEED): a private
 * file mapping's pages are read again from the file when touched, shared memory keeps its
 * content, anonymous memory reads as zeros afterwards (only for bytes that are dead) */
void g16_drop_pages(const void *p, size_t n);

/* 64-byte aligned allocation whose size is rounded up; free with free() */
void *g16_alloc(size_t len);
/* coefficient entry i of k, decoded or raw (zp_g16_key_t.coefs_raw) */
enum { G16_RAW_COEF = 44 };
static inline void g16_coef_at(const zp_g16_key_t *k, size_t i, struct zp_g16_coef *c)
{
    if (!k->coefs_raw) {
        *c = k->coefs[i];
        return;
    }
    const uint8_t *e = k->coefs_raw + i * G16_RAW_COEF;
    memcpy(&c->matrix, e, 4);
    memcpy(&c->row, e + 4, 4);
    memcpy(&c->wire, e + 8, 4);
    c->pad = 0;
    memcpy(&c->v, e + 12, sizeof c->v);
}
static inline uint32_t g16_coef_row(const zp_g16_key_t *k, size_t i)
{
    uint32_t row;
    if (!k->coefs_raw) return k->coefs[i].row;
    memcpy(&row, k->coefs_raw + i * G16_RAW_COEF + 4, 4);
    return row;
}
#endif
