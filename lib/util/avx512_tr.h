/* avx512_tr.h - the 4 x 8 transpose of 64-bit words the AVX-512 IFMA paths share (lib/msm
 * msm_vec_impl.h, lib/ntt ntt_vec.h): four rows z[r], each two four-word elements (its low
 * and high 256 bits), to four word vectors w[k] (word k of the eight elements), and back.
 * 4 unpacks and 4 two-source permutes each way (on AMD Zen 4 a 512-bit gather costs ~5 cycles
 * and a scatter ~11, a shuffle ~1). The element order in the lanes is fixed by the rows' layout;
 * zp_tr48_out is zp_tr48_in's exact inverse. x86-64 with GCC or clang only. */
#ifndef ZP_AVX512_TR_H
#define ZP_AVX512_TR_H
#include <immintrin.h>

#define ZP_TR_ATTR __attribute__((target("avx512f"), always_inline)) static inline

ZP_TR_ATTR void zp_tr48_in(__m512i *w, const __m512i *z)
{
    const __m512i ia = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), ib = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    __m512i t0 = _mm512_unpacklo_epi64(z[0], z[1]), t1 = _mm512_unpackhi_epi64(z[0], z[1]);
    __m512i t2 = _mm512_unpacklo_epi64(z[2], z[3]), t3 = _mm512_unpackhi_epi64(z[2], z[3]);
    w[0] = _mm512_permutex2var_epi64(t0, ia, t2);
    w[1] = _mm512_permutex2var_epi64(t1, ia, t3);
    w[2] = _mm512_permutex2var_epi64(t0, ib, t2);
    w[3] = _mm512_permutex2var_epi64(t1, ib, t3);
}

ZP_TR_ATTR void zp_tr48_out(__m512i *z, const __m512i *w)
{
    const __m512i ia = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), ib = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    __m512i t0 = _mm512_permutex2var_epi64(w[0], ia, w[2]), t2 = _mm512_permutex2var_epi64(w[0], ib, w[2]);
    __m512i t1 = _mm512_permutex2var_epi64(w[1], ia, w[3]), t3 = _mm512_permutex2var_epi64(w[1], ib, w[3]);
    z[0] = _mm512_unpacklo_epi64(t0, t1);
    z[1] = _mm512_unpackhi_epi64(t0, t1);
    z[2] = _mm512_unpacklo_epi64(t2, t3);
    z[3] = _mm512_unpackhi_epi64(t2, t3);
}
#endif
