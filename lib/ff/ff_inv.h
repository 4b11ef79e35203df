/* ff_inv.h - variable-time modular inversion by Bernstein-Yang "safegcd" divsteps, for the
 * prime fields of ff.c (included by ff_impl.h; static functions, no state).
 *
 * Numbers are held in L signed 62-bit limbs ("signed62": value = sum v[i] 2^(62 i), limbs
 * 0..L-2 in [0, 2^62) when normalized, the top limb signed). One round runs 62 divsteps on the
 * low limbs of f and g only (ffi_divsteps62: a 2x2 matrix t, entries |.| <= 2^62, with
 * 2^62 (f', g') = t (f, g)), then applies t to the full f, g (exact division by 2^62) and to
 * d, e modulo p (adding the multiple of p that clears the low 62 bits: p^-1 mod 2^62).
 * Invariants (x the input, c the initial e): d x = c f, e x = c g (mod p); d, e in (-2p, p);
 * f odd. The loop ends when g = 0; then f = +-1 (gcd(p, x) = 1 for a prime p and x != 0 mod
 * p) and c / x = +-d. Variable time (the number of rounds and the divsteps' skips depend
 * on x): only for public inputs (the MSM's batched inversions).
 * With c = R^2 mod p and x = a R (Montgomery form), the result d = R^2 / (a R) = a^-1 R is
 * the Montgomery form of a^-1 with no conversion product.
 * Needs L limbs with 62 L >= bits(p) + 2 (BN254 / BLS12-381 Fr, Fq: L = 5 for 4 limbs,
 * 7 for 6). Tests: tests/test_ff.c (test_inv_vartime against Fermat). */
#ifndef ZP_FF_INV_H
#define ZP_FF_INV_H
#include <stdint.h>

#define FFI_M62 (UINT64_MAX >> 2)
#define FFI_INLINE static inline __attribute__((always_inline))

typedef struct { int64_t u, v, q, r; } ffi_t2;

/* 62 divsteps on the low bits of f and g (f odd); eta = -delta; returns the new eta. The
 * runs of zeros of g are skipped at once (ctz), and each odd step cancels up to 6 (eta < 0,
 * after the swap) or 4 low bits of g with one multiple of f (w f + g = 0 mod 2^k). */
static int64_t ffi_divsteps62(int64_t eta, uint64_t f, uint64_t g, ffi_t2 *t)
{
    uint64_t u = 1, v = 0, q = 0, r = 1, m, w;
    int i = 62;
    for (;;) {
        int zeros = __builtin_ctzll(g | (UINT64_MAX << i));   /* sentinel: at most i */
        g >>= zeros;
        u <<= zeros;
        v <<= zeros;
        eta -= zeros;
        i -= zeros;
        if (i == 0) break;
        int limit;
        if (eta < 0) {                           /* swap: (f, g) = (g, -f) */
            uint64_t tmp;
            eta = -eta;
            tmp = f; f = g; g = -tmp;
            tmp = u; u = q; q = -tmp;
            tmp = v; v = r; r = -tmp;
            limit = (int)eta + 1 > i ? i : (int)eta + 1;
            m = (UINT64_MAX >> (64 - limit)) & 63u;
            w = (f * g * (f * f - 2)) & m;       /* -g / f mod 2^6 */
        } else {
            limit = (int)eta + 1 > i ? i : (int)eta + 1;
            m = (UINT64_MAX >> (64 - limit)) & 15u;
            w = f + (((f + 1) & 4) << 1);        /* 1 / f mod 2^4 */
            w = (-w * g) & m;
        }
        g += f * w;
        q += u * w;
        r += v * w;
    }
    t->u = (int64_t)u;
    t->v = (int64_t)v;
    t->q = (int64_t)q;
    t->r = (int64_t)r;
    return eta;
}

/* (d, e) = t (d, e) / 2^62 mod p; p in signed62, pinv = p^-1 mod 2^64 */
FFI_INLINE void ffi_update_de(int64_t *d, int64_t *e, const ffi_t2 *t, const int64_t *p, uint64_t pinv, int L)
{
    const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
    const int64_t sd = d[L - 1] >> 63, se = e[L - 1] >> 63;
    /* md, me: start with u, q (v, r) where d (e) is negative: keeps the result in (-2p, p) */
    int64_t md = (u & sd) + (v & se), me = (q & sd) + (r & se);
    __int128 cd = (__int128)u * d[0] + (__int128)v * e[0];
    __int128 ce = (__int128)q * d[0] + (__int128)r * e[0];
    md -= (int64_t)((pinv * (uint64_t)cd + (uint64_t)md) & FFI_M62);
    me -= (int64_t)((pinv * (uint64_t)ce + (uint64_t)me) & FFI_M62);
    cd += (__int128)p[0] * md;
    ce += (__int128)p[0] * me;
    cd >>= 62;                                   /* the low 62 bits are 0 now */
    ce >>= 62;
    for (int i = 1; i < L; i++) {
        cd += (__int128)u * d[i] + (__int128)v * e[i] + (__int128)p[i] * md;
        ce += (__int128)q * d[i] + (__int128)r * e[i] + (__int128)p[i] * me;
        d[i - 1] = (int64_t)((uint64_t)cd & FFI_M62);
        e[i - 1] = (int64_t)((uint64_t)ce & FFI_M62);
        cd >>= 62;
        ce >>= 62;
    }
    d[L - 1] = (int64_t)cd;
    e[L - 1] = (int64_t)ce;
}

/* (f, g) = t (f, g) / 2^62 (exact) over their first len limbs */
FFI_INLINE void ffi_update_fg(int64_t *f, int64_t *g, const ffi_t2 *t, int len)
{
    const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
    __int128 cf = (__int128)u * f[0] + (__int128)v * g[0];
    __int128 cg = (__int128)q * f[0] + (__int128)r * g[0];
    cf >>= 62;
    cg >>= 62;
    for (int i = 1; i < len; i++) {
        cf += (__int128)u * f[i] + (__int128)v * g[i];
        cg += (__int128)q * f[i] + (__int128)r * g[i];
        f[i - 1] = (int64_t)((uint64_t)cf & FFI_M62);
        g[i - 1] = (int64_t)((uint64_t)cg & FFI_M62);
        cf >>= 62;
        cg >>= 62;
    }
    f[len - 1] = (int64_t)cf;
    g[len - 1] = (int64_t)cg;
}

/* N 64-bit limbs -> L signed62 limbs (a non-negative value) */
FFI_INLINE void ffi_to62(int64_t *r, const uint64_t *a, int N, int L)
{
    for (int i = 0; i < L; i++) {
        unsigned bit = 62u * (unsigned)i, w = bit / 64, s = bit % 64;
        uint64_t x = (int)w < N ? a[w] >> s : 0;
        if (s > 2 && (int)w + 1 < N) x |= a[w + 1] << (64 - s);
        r[i] = (int64_t)(x & FFI_M62);
    }
}

/* r += p where r is negative (sign from the top limb), limb-wise (no carry: limbs stay within
 * (-2^63, 2^63)) */
FFI_INLINE void ffi_add_if_neg(int64_t *r, const int64_t *p, int L)
{
    const int64_t neg = r[L - 1] >> 63;
    for (int i = 0; i < L; i++) r[i] += p[i] & neg;
}

FFI_INLINE void ffi_carry(int64_t *r, int L)
{
    for (int i = 0; i + 1 < L; i++) {
        r[i + 1] += r[i] >> 62;
        r[i] &= (int64_t)FFI_M62;
    }
}

/* out (N limbs, Montgomery form) = c / x mod p for x (N limbs) != 0, x < p; c < p in
 * signed62 (R^2 mod p for Montgomery inputs); p odd, p in N limbs and in signed62 p62 */
FFI_INLINE void ffi_inv(uint64_t *out, const uint64_t *x, const uint64_t *pl, const int64_t *p62,
                        const int64_t *c62, int N, int L)
{
    int64_t d[8] = {0}, e[8], f[8], g[8];
    for (int i = 0; i < L; i++) {
        e[i] = c62[i];
        f[i] = p62[i];
    }
    ffi_to62(g, x, N, L);
    uint64_t pinv = pl[0];                       /* p^-1 mod 2^64 by Newton: 3, 6, ..., 96 bits */
    for (int k = 0; k < 5; k++) pinv *= 2 - pl[0] * pinv;
    int len = L;
    int64_t eta = -1;
    for (;;) {
        ffi_t2 t;
        eta = ffi_divsteps62(eta, (uint64_t)f[0], (uint64_t)g[0], &t);
        ffi_update_de(d, e, &t, p62, pinv, L);
        ffi_update_fg(f, g, &t, len);
        if (g[0] == 0) {
            int64_t nz = 0;
            for (int j = 1; j < len; j++) nz |= g[j];
            if (!nz) break;
        }
        /* drop the top limb when it is only sign in both f and g */
        const int64_t fn = f[len - 1], gn = g[len - 1];
        if (len >= 2 && !((fn ^ (fn >> 63)) | (gn ^ (gn >> 63)))) {
            f[len - 2] = (int64_t)((uint64_t)f[len - 2] | ((uint64_t)fn << 62));
            g[len - 2] = (int64_t)((uint64_t)g[len - 2] | ((uint64_t)gn << 62));
            len--;
        }
    }
    /* d in (-2p, p) -> (-p, p); times sign(f) = +-1; -> [0, p) */
    ffi_add_if_neg(d, p62, L);
    if (f[len - 1] < 0)
        for (int i = 0; i < L; i++) d[i] = -d[i];
    ffi_carry(d, L);
    ffi_add_if_neg(d, p62, L);
    ffi_carry(d, L);
    zp_u128 acc = 0;                             /* signed62 (non-negative) -> 64-bit limbs */
    int bits = 0, j = 0;
    for (int i = 0; i < L; i++) {
        acc |= (zp_u128)(uint64_t)d[i] << bits;
        bits += 62;
        if (bits >= 64) {
            if (j < N) out[j++] = (uint64_t)acc;
            acc >>= 64;
            bits -= 64;
        }
    }
    while (j < N) {
        out[j++] = (uint64_t)acc;
        acc >>= 64;
    }
}

#endif
