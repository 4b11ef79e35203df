/* cu_msm.cuh - G1 multi-scalar multiplication as a GPU bucket method, written once over an
 * executor E (device: kernels + CUB on a stream, cu_device.cu; host: plain loops, cu_hostemu.cu
 * for the CPU tests) and a curve C.
 *
 * Algorithm (per batch of windows, so the sort buffers stay within a memory budget):
 *   1. digits:  thread per point computes its signed c-bit digits (carry from window to
 *      window) and writes one (key, value) pair per window of the batch:
 *      key = window_in_batch * 2^(c-1) + |d| - 1, value = point index | sign << 31;
 *      digit 0 (or an infinity point) gets the sentinel key NB (sorted last, ignored).
 *   2. sort the pairs by key (CUB radix sort on the device, only the key bits in use).
 *   3. bounds:  run start / end per bucket from the sorted keys (no atomics).
 *   4. accumulate in levels: every bucket run is cut into tasks of at most S entries, one
 *      thread per task sums its entries (level 0: affine bases, mixed adds, sign applied;
 *      later levels: the xyzz partial sums of the level before), until each bucket holds one
 *      sum. Heavy buckets (e.g. all the w_i = 1 of a real witness) are so split over many
 *      threads instead of one.
 *   5. reduce:  thread per (window, group of buckets) computes sum_j (j+1) B_j over its group
 *      with a running sum (groups chosen so that windows x groups threads fill the device),
 *      then a tree of 16-way sums over each window's groups, converted to Jacobian. The host
 *      combines the windows (2^c Horner) with lib/ec.
 * Memory: msm_make_plan computes every buffer size from n and the knobs (the budget of
 * cu_exec.c and this driver agree through it).
 * Scalars are standard form, < 2^R_BITS (any value < r). Points with index >= 2^31 are
 * rejected by the caller (the value packs the sign in bit 31). */
#ifndef ZP_CU_MSM_CUH
#define ZP_CU_MSM_CUH
#include <stddef.h>
#include <stdint.h>

#include "cu_curve.cuh"

namespace zpcu {

struct msm_tune {
    unsigned c;              /* window bits; 0 = choose from n */
    unsigned task;           /* S: entries per accumulation task; 0 = default */
    unsigned groups;         /* bucket groups per window in the reduction; 0 = from par */
    size_t max_pairs;        /* pairs per sort batch (n * windows); 0 = default (2^30) */
    unsigned par;            /* threads the reduction should keep busy; 0 = 4096 */
};

ZP_HD unsigned msm_choose_c(size_t n)
{
    unsigned lg = 0;
    while (lg < 40 && ((size_t)1 << (lg + 1)) <= n) lg++;
    unsigned c = lg > 5 ? lg - 3 : 2;
    return c > 16 ? 16 : c;
}

ZP_HD unsigned msm_windows(unsigned r_bits, unsigned c) { return (r_bits + 1 + c - 1) / c; }

enum { MSM_FOLD = 16 };     /* partial sums added per thread in the tree over the groups */

/* every size msm_run allocates, from n and the knobs: the one place the memory budget and the
 * driver agree on (cu_exec.c sizes max_pairs from free device memory with it) */
struct msm_plan {
    unsigned c, nwin, wb, groups, s;
    uint32_t half, nbcap;
    size_t max_pairs, mcap, taskcap, npartial, npartial2, bytes;
};

inline msm_plan msm_make_plan(size_t n, unsigned r_bits, size_t xyzz_bytes, size_t jac_bytes, const msm_tune &tune)
{
    msm_plan p;
    p.c = tune.c ? tune.c : msm_choose_c(n);
    if (p.c < 2) p.c = 2;
    if (p.c > 20) p.c = 20;
    p.nwin = msm_windows(r_bits, p.c);
    p.half = 1u << (p.c - 1);
    p.s = tune.task ? tune.task : 16;
    if (p.s < 2) p.s = 2;
    p.max_pairs = tune.max_pairs ? tune.max_pairs : ((size_t)1 << 30);
    size_t wb = n ? p.max_pairs / n : 1;
    if (wb < 1) wb = 1;
    if (wb > p.nwin) wb = p.nwin;
    p.wb = (unsigned)wb;
    /* groups: a power of two dividing half, so that wb * groups threads fill the device */
    unsigned par = tune.par ? tune.par : 4096;
    if (tune.groups) {
        p.groups = tune.groups > p.half ? p.half : tune.groups;
        while (p.half % p.groups) p.groups--;
    } else {
        p.groups = 1;
        while (p.groups < p.half && (size_t)p.wb * p.groups * 2 <= par) p.groups *= 2;
    }
    p.mcap = n * p.wb;
    p.nbcap = p.wb * p.half;
    p.taskcap = p.mcap / p.s + p.nbcap + 1;
    p.npartial = (size_t)p.wb * p.groups;
    p.npartial2 = p.npartial / MSM_FOLD + 1;
    p.bytes = 4 * p.mcap * 4 + 5 * ((size_t)p.nbcap + 1) * 4 + 2 * p.taskcap * xyzz_bytes +
              (p.npartial + p.npartial2) * xyzz_bytes + (size_t)p.wb * jac_bytes;
    return p;
}

/* bits [bit, bit+c) of a 256-bit little-endian scalar, c <= 32 */
ZP_HD uint32_t scalar_bits(const uint64_t *k, unsigned bit, unsigned c)
{
    if (bit >= 256) return 0;
    unsigned limb = bit / 64, off = bit % 64;
    uint64_t v = k[limb] >> off;
    if (off + c > 64 && limb + 1 < 4) v |= k[limb + 1] << (64 - off);
    return (uint32_t)(v & (((uint64_t)1 << c) - 1));
}

/* ---- kernel bodies: each is a functor run for i in [0, count) by E::for_n ---- */

struct msm_digits_fn {
    const uint64_t *scalars;     /* n x 4 limbs */
    const uint64_t *points;      /* affine points (raw limbs) to test for infinity */
    unsigned limbs_per_point;    /* 2 * fq limbs */
    uint32_t *keys, *vals;       /* n * nw each: [window_in_batch * n + i] */
    size_t n;
    unsigned c, w0, nw, nb;      /* first window, windows in batch, sentinel NB */
    ZP_HD void operator()(size_t i) const
    {
        const uint64_t *k = scalars + 4 * i;
        const uint64_t *pt = points + (size_t)limbs_per_point * i;
        uint64_t any = 0;
        for (unsigned j = 0; j < limbs_per_point; j++) any |= pt[j];
        uint32_t half = 1u << (c - 1), carry = 0;
        for (unsigned w = 0; w < w0 + nw; w++) {
            uint32_t d = scalar_bits(k, w * c, c) + carry;
            bool neg = false;
            carry = 0;
            uint32_t mag = d;
            if (d > half) {          /* d - 2^c < 0 */
                mag = (1u << c) - d;
                neg = true;
                carry = 1;
            }
            if (w < w0) continue;
            size_t at = (size_t)(w - w0) * n + i;
            if (mag == 0 || any == 0) {
                keys[at] = nb;
                vals[at] = 0;
            } else {
                keys[at] = (w - w0) * half + mag - 1;
                vals[at] = (uint32_t)i | (neg ? 0x80000000u : 0);
            }
        }
    }
};

/* run bounds of the sorted keys: start[b] = first index, end[b] = last index + 1 */
struct msm_bounds_fn {
    const uint32_t *keys;
    size_t m;
    uint32_t nb;
    uint32_t *start, *end;
    ZP_HD void operator()(size_t i) const
    {
        uint32_t k = keys[i];
        if (k >= nb) return;
        if (i == 0 || keys[i - 1] != k) start[k] = (uint32_t)i;
        if (i + 1 == m || keys[i + 1] != k) end[k] = (uint32_t)(i + 1);
    }
};

struct msm_count_fn {          /* cnt[b] = end[b] - start[b] (both zeroed for empty runs) */
    const uint32_t *start, *end;
    uint32_t *cnt;
    ZP_HD void operator()(size_t b) const { cnt[b] = end[b] - start[b]; }
};

struct msm_ntask_fn {          /* nt[b] = ceil(cnt[b] / S); nt[nb] = 0 for the scan */
    const uint32_t *cnt;
    uint32_t *nt;
    uint32_t nb, s;
    ZP_HD void operator()(size_t b) const { nt[b] = b < nb ? (cnt[b] + s - 1) / s : 0; }
};

/* bucket of task t: the b with toff[b] <= t < toff[b+1] (toff non-decreasing, nb+1 entries) */
ZP_HD uint32_t msm_task_bucket(const uint32_t *toff, uint32_t nb, uint32_t t)
{
    uint32_t lo = 0, hi = nb;        /* invariant: toff[lo] <= t < toff[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (toff[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* level 0: task t sums up to S signed affine bases of its bucket */
template <class C> struct msm_acc0_fn {
    const uint32_t *toff, *off, *cnt, *vals;
    const g1_affine<C> *points;
    g1_xyzz<C> *out;
    uint32_t nb, s;
    ZP_HD void operator()(size_t t) const
    {
        uint32_t b = msm_task_bucket(toff, nb, (uint32_t)t);
        uint32_t j = (uint32_t)t - toff[b];
        uint32_t lo = off[b] + j * s, hi = lo + s;
        if (hi > off[b] + cnt[b]) hi = off[b] + cnt[b];
        g1_xyzz<C> acc;
        acc.set_inf();
        for (uint32_t e = lo; e < hi; e++) {
            uint32_t v = vals[e];
            xyzz_add_affine_signed<C>(acc, points[v & 0x7fffffffu], (v >> 31) != 0);
        }
        out[t] = acc;
    }
};

/* level >= 1: task t sums up to S xyzz partial sums of its bucket */
template <class C> struct msm_accn_fn {
    const uint32_t *toff, *off, *cnt;
    const g1_xyzz<C> *in;
    g1_xyzz<C> *out;
    uint32_t nb, s;
    ZP_HD void operator()(size_t t) const
    {
        uint32_t b = msm_task_bucket(toff, nb, (uint32_t)t);
        uint32_t j = (uint32_t)t - toff[b];
        uint32_t lo = off[b] + j * s, hi = lo + s;
        if (hi > off[b] + cnt[b]) hi = off[b] + cnt[b];
        g1_xyzz<C> acc = in[lo];
        for (uint32_t e = lo + 1; e < hi; e++) xyzz_add<C>(acc, in[e]);
        out[t] = acc;
    }
};

/* thread (window w, group g): sum over buckets j in the group of (j+1) * B_j */
template <class C> struct msm_reduce_fn {
    const g1_xyzz<C> *sums;      /* bucket b's sum at sums[toff[b]] when nt[b] == 1 */
    const uint32_t *toff, *nt;
    g1_xyzz<C> *partial;         /* [w * groups + g] */
    uint32_t half, groups;       /* buckets per window, groups per window */
    ZP_HD void operator()(size_t i) const
    {
        uint32_t w = (uint32_t)(i / groups), g = (uint32_t)(i % groups);
        uint32_t per = half / groups, lo = g * per;
        g1_xyzz<C> run, acc, t;
        run.set_inf();
        acc.set_inf();
        for (uint32_t j = lo + per; j-- > lo;) {
            uint32_t b = w * half + j;
            if (nt[b] != 0) xyzz_add<C>(run, sums[toff[b]]);
            xyzz_add<C>(acc, run);
        }
        /* acc = sum (j - lo + 1) B_j; add lo * sum B_j */
        if (lo != 0) {
            xyzz_mul_small<C>(t, run, lo);
            xyzz_add<C>(acc, t);
        }
        partial[i] = acc;
    }
};

/* one level of the tree over the groups of each window: out[i] = sum in[i*k .. i*k + k) */
template <class C> struct msm_fold_fn {
    const g1_xyzz<C> *in;
    g1_xyzz<C> *out;
    uint32_t k;
    ZP_HD void operator()(size_t i) const
    {
        g1_xyzz<C> acc = in[i * k];
        for (uint32_t j = 1; j < k; j++) xyzz_add<C>(acc, in[i * k + j]);
        out[i] = acc;
    }
};

template <class C> struct msm_winsum_fn {
    const g1_xyzz<C> *partial;
    g1_jac<C> *win;
    uint32_t groups;
    ZP_HD void operator()(size_t w) const
    {
        g1_xyzz<C> acc = partial[w * groups];
        for (uint32_t g = 1; g < groups; g++) xyzz_add<C>(acc, partial[w * groups + g]);
        xyzz_to_jac<C>(win[w], acc);
    }
};

/* ---- the driver ----
 * points, scalars: executor memory (device memory for the device executor). win_out: host
 * array of at least msm_windows(C::R_BITS, c) Jacobian points; *c_out = window bits used.
 * Window w's sum is win_out[w]; the MSM is sum_w 2^(c*w) win_out[w]. */
template <class C, class E>
int msm_run(E &ex, g1_jac<C> *win_out, unsigned *c_out, unsigned *batches, const g1_affine<C> *points,
            const uint64_t *scalars, size_t n, const msm_tune &tune)
{
    const msm_plan p = msm_make_plan(n, C::R_BITS, sizeof(g1_xyzz<C>), sizeof(g1_jac<C>), tune);
    const unsigned c = p.c, nwin = p.nwin, wb = p.wb;
    const uint32_t half = p.half, s = p.s, groups = p.groups;
    *c_out = c;
    *batches = 0;
    if (n == 0) {
        for (unsigned w = 0; w < nwin; w++) {
            win_out[w].x = C::fq::one();
            win_out[w].y = C::fq::one();
            win_out[w].z = C::fq::zero();
        }
        return 0;
    }
    const size_t mcap = p.mcap;
    const uint32_t nbcap = p.nbcap;

    int rc;
    uint32_t *keys = NULL, *vals = NULL, *keys2 = NULL, *vals2 = NULL;
    uint32_t *start = NULL, *end = NULL, *cnt_a = NULL, *cnt_b = NULL, *off_b = NULL;
    g1_xyzz<C> *acc_a = NULL, *acc_b = NULL, *partial = NULL, *partial2 = NULL;
    g1_jac<C> *win = NULL;
    if ((rc = ex.alloc((void **)&keys, mcap * 4)) || (rc = ex.alloc((void **)&vals, mcap * 4)) ||
        (rc = ex.alloc((void **)&keys2, mcap * 4)) || (rc = ex.alloc((void **)&vals2, mcap * 4)) ||
        (rc = ex.alloc((void **)&start, (nbcap + 1) * 4)) ||
        (rc = ex.alloc((void **)&end, (nbcap + 1) * 4)) ||
        (rc = ex.alloc((void **)&cnt_a, (nbcap + 1) * 4)) ||
        (rc = ex.alloc((void **)&cnt_b, (nbcap + 1) * 4)) ||
        (rc = ex.alloc((void **)&off_b, (nbcap + 1) * 4)) ||
        (rc = ex.alloc((void **)&acc_a, p.taskcap * sizeof(g1_xyzz<C>))) ||
        (rc = ex.alloc((void **)&acc_b, p.taskcap * sizeof(g1_xyzz<C>))) ||
        (rc = ex.alloc((void **)&partial, p.npartial * sizeof(g1_xyzz<C>))) ||
        (rc = ex.alloc((void **)&partial2, p.npartial2 * sizeof(g1_xyzz<C>))) ||
        (rc = ex.alloc((void **)&win, (size_t)wb * sizeof(g1_jac<C>))))
        goto out;

    for (unsigned w0 = 0; w0 < nwin; w0 += wb) {
        unsigned nw = nwin - w0 < wb ? nwin - w0 : wb;
        uint32_t nb = nw * half;
        size_t m = n * nw;
        unsigned key_bits = 1;
        while (key_bits < 32 && (1u << key_bits) <= nb) key_bits++;
        ++*batches;

        msm_digits_fn dfn = {scalars, (const uint64_t *)points, 2 * C::fq::N, keys, vals, n, c, w0, nw, nb};
        if ((rc = ex.for_n(n, dfn))) goto out;
        uint32_t *sk, *sv;   /* sorted keys / values (one of the two buffers) */
        if ((rc = ex.sort_pairs(&sk, &sv, keys, keys2, vals, vals2, m, key_bits))) goto out;
        if ((rc = ex.memset0(start, (size_t)(nb + 1) * 4)) || (rc = ex.memset0(end, (size_t)(nb + 1) * 4)))
            goto out;
        msm_bounds_fn bfn = {sk, m, nb, start, end};
        if ((rc = ex.for_n(m, bfn))) goto out;
        msm_count_fn cfn = {start, end, cnt_a};
        if ((rc = ex.for_n(nb, cfn))) goto out;
        uint32_t maxc = 0;
        if ((rc = ex.max_u32(&maxc, cnt_a, nb))) goto out;

        /* level 0: (cnt_a, start) -> tasks (cnt_b = nt, off_b = toff) */
        const uint32_t *cur_cnt = cnt_a, *cur_off = start;
        uint32_t *nt = cnt_b, *toff = off_b;
        msm_ntask_fn nfn = {cur_cnt, nt, nb, s};
        if ((rc = ex.for_n((size_t)nb + 1, nfn))) goto out;
        uint32_t ntasks = 0;
        if ((rc = ex.scan_excl(toff, nt, (size_t)nb + 1, &ntasks))) goto out;
        msm_acc0_fn<C> a0 = {toff, cur_off, cur_cnt, sv, points, acc_a, nb, s};
        if ((rc = ex.for_n(ntasks, a0))) goto out;
        g1_xyzz<C> *cur = acc_a, *other = acc_b;
        /* the arrays of the level just done become the next level's input */
        uint32_t *spare_cnt = cnt_a, *spare_off = end;     /* start/cnt_a are free now */
        maxc = (maxc + s - 1) / s;
        while (maxc > 1) {
            cur_cnt = nt;
            cur_off = toff;
            nt = spare_cnt;
            toff = spare_off;
            nfn.cnt = cur_cnt;
            nfn.nt = nt;
            if ((rc = ex.for_n((size_t)nb + 1, nfn))) goto out;
            if ((rc = ex.scan_excl(toff, nt, (size_t)nb + 1, &ntasks))) goto out;
            msm_accn_fn<C> an = {toff, cur_off, cur_cnt, cur, other, nb, s};
            if ((rc = ex.for_n(ntasks, an))) goto out;
            spare_cnt = (uint32_t *)cur_cnt;
            spare_off = (uint32_t *)cur_off;
            g1_xyzz<C> *tmp = cur;
            cur = other;
            other = tmp;
            maxc = (maxc + s - 1) / s;
        }
        /* now nt[b] is 0 or 1 and bucket b's sum is cur[toff[b]]; nw * groups threads reduce
         * the buckets, then a tree of MSM_FOLD-way sums over the groups of each window */
        msm_reduce_fn<C> rfn = {cur, toff, nt, partial, half, groups};
        if ((rc = ex.for_n((size_t)nw * groups, rfn))) goto out;
        g1_xyzz<C> *pin = partial, *pout = partial2;
        uint32_t g = groups;
        while (g >= 2 * MSM_FOLD) {
            msm_fold_fn<C> ffn = {pin, pout, MSM_FOLD};
            if ((rc = ex.for_n((size_t)nw * (g / MSM_FOLD), ffn))) goto out;
            g /= MSM_FOLD;
            g1_xyzz<C> *t = pin;
            pin = pout;
            pout = t;
        }
        msm_winsum_fn<C> wfn = {pin, win, g};
        if ((rc = ex.for_n(nw, wfn))) goto out;
        if ((rc = ex.to_host(win_out + w0, win, (size_t)nw * sizeof(g1_jac<C>)))) goto out;
    }
out:
    ex.free(win);
    ex.free(partial2);
    ex.free(partial);
    ex.free(acc_b);
    ex.free(acc_a);
    ex.free(off_b);
    ex.free(cnt_b);
    ex.free(cnt_a);
    ex.free(end);
    ex.free(start);
    ex.free(vals2);
    ex.free(keys2);
    ex.free(vals);
    ex.free(keys);
    return rc;
}

} /* namespace zpcu */
#endif
