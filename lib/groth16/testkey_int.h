/* testkey_int.h - private to testkey.c / testkey_curves.c: the per-curve operations the test
 * key generator needs, as a table of plain functions over void pointers, so that the generator
 * (fixed-base tables, Lagrange values, file layout) is written once in testkey.c. Every call
 * does at least one field multiplication or a whole group addition, so the indirect call
 * costs nothing measurable. Fr values are zp_scalar_t (4 LE limbs), Montgomery unless named
 * _std. Points: affine (zkey bytes, (0,0) = infinity) and Jacobian, sizes in the table. */
#ifndef ZP_TESTKEY_INT_H
#define ZP_TESTKEY_INT_H
#include "testkey.h"

typedef struct {
    size_t pa_size, pj_size, fe_size;            /* affine, Jacobian, coordinate field element */
    void (*set_inf)(void *r);
    void (*from_affine)(void *r, const void *a);
    void (*add_affine)(void *r, const void *a, const void *b);   /* r = a (Jacobian) + b (affine) */
    void (*dbl)(void *r, const void *a);
    void (*batch_to_affine)(void *r, const void *p, size_t n, void *scratch);  /* scratch: n fe */
    void (*mul_gen)(void *ra, const zp_scalar_t *k_std);          /* affine k * generator */
    /* out[i] = k[i] * G (affine) for i < m from a fixed-base table tab[win][d] = d 2^(w win) G
     * (2^w affine entries per window, nwin windows, k standard form): batch-affine additions,
     * one inversion per window step for the whole chunk; equal x (impossible for k < r: the partial
 * sum is below 2^(w win) and the entry a multiple of it) falls back to a Jacobian add.
     * scratch: fb_scratch(m) bytes, 64-aligned */
    void (*fb_chunk)(void *out, const zp_scalar_t *k, size_t m, const void *tab, unsigned w, unsigned nwin,
                     void *scratch);
    size_t (*fb_scratch)(size_t m);
} tk_grp_t;

typedef struct {
    void (*add)(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b);
    void (*sub)(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b);
    void (*mul)(zp_scalar_t *r, const zp_scalar_t *a, const zp_scalar_t *b);
    void (*inv)(zp_scalar_t *r, const zp_scalar_t *a);
    void (*batch_inv)(zp_scalar_t *a, size_t n, zp_scalar_t *scratch);
    void (*set_u64)(zp_scalar_t *r, uint64_t v);
    void (*to_mont)(zp_scalar_t *r, const zp_scalar_t *a);
    void (*from_mont)(zp_scalar_t *r, const zp_scalar_t *a);
    bool (*is_zero)(const zp_scalar_t *a);
    bool (*is_canonical)(const zp_scalar_t *a);  /* plain integer < r */
    void (*to_dec)(char *buf, size_t cap, const zp_scalar_t *a);
    const zp_scalar_t *(*root)(unsigned k);      /* w[k] = 5^((r-1)/2^k), snarkjs's roots */
    const zp_scalar_t *r2;                       /* R^2 mod r */
} tk_fr_t;

typedef struct {
    zp_curve_id_t id;
    const char *name;
    unsigned two_adicity;
    uint32_t n8q;
    const void *q, *r;                           /* moduli, n8q / 32 LE bytes */
    tk_fr_t fr;
    const tk_grp_t *g1, *g2;
    /* decimal coordinates of affine points (Montgomery coordinates in); infinity as snarkjs
     * writes it ("0","1","0") */
    void (*g1_dec)(char (*xyz)[128], const void *pa);          /* 3 strings */
    void (*g2_dec)(char (*xyz)[2][128], const void *pa);       /* 3 x 2 strings */
    /* e(p, q) as the 12 decimal Fq values in snarkjs's vk_alphabeta_12 order */
    void (*pairing_dec)(char (*v)[128], const void *g1a, const void *g2a);
} tk_curve_t;

extern const tk_curve_t tk_curve_bn254, tk_curve_bls12_381;
#endif
