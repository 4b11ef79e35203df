/* cu_api.h - the C boundary of the CUDA code: every function the .cu files export, all
 * extern "C", plain C types only (no project headers, no CUDA headers), so that
 * backend_cuda.c (the zp_backend_cuda ops table) and the tests stay plain C.
 *
 * Memory conventions: field elements and points are lib/ff / lib/ec layouts (little-endian
 * 64-bit limbs, Montgomery form); scalars are 4 limbs, standard form. Curves are
 * zp_curve_id_t values (1 = BN254, 2 = BLS12-381). Errors: 0, or a negative ZP_E* / -errno
 * with zp_err_set detail (ZP_ENODEV: no usable device; ZP_EDEVICE: a CUDA call failed, the
 * message names the call, file and line; the process should exit and be restarted clean).
 * Device code: cu_device.cu; host emulation for tests: cu_hostemu.cu. */
#ifndef ZP_CU_API_H
#define ZP_CU_API_H
#include <stddef.h>
#include <stdint.h>

#include "cu_consts.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ZP_CU_MAX_WIN = 130 };   /* windows of an MSM: ceil(256 / 2) + 2 */
enum { ZP_CU_NSTREAMS_API = 2 };  /* streams of the executor: 0 compute, 1 copy (cu_int.h ZP_CU_S_*) */

/* window sums of one MSM: the result is sum_w 2^(c*w) win[w] (Jacobian, lib/ec layout:
 * x, y, z of N limbs each at the start of win[w]) */
typedef struct {
    unsigned c, nwin;
    unsigned batches;       /* sort batches the windows were split into (memory budget) */
    size_t max_pairs;       /* the budget those batches were cut for */
    uint64_t win[ZP_CU_MAX_WIN][ZP_CU_JAC_LIMBS];
} zp_cu_msm_out_t;

/* tuning knobs (0 = default); see cu_msm.cuh. par: threads the reduction should have (the
 * executor sets it from the device: SMs x threads per SM) */
typedef struct {
    unsigned c, task, groups;
    size_t max_pairs;
    unsigned par;
} zp_cu_msm_tune_t;

/* the memory of one MSM (msm_run of cu_msm.cuh, all its buffers; CUB scratch not included) */
typedef struct {
    unsigned c, nwin, wb, groups, task;   /* window bits, windows, windows per batch, groups, S */
    size_t max_pairs, bytes;
} zp_cu_msm_plan_t;
int zp_cu_msm_plan(int curve, size_t n, const zp_cu_msm_tune_t *tune, zp_cu_msm_plan_t *plan);

/* mirrors zp_g16_times_t (lib/groth16/groth16.h) */
typedef struct {
    uint64_t h2d_ns, ntt_ns, msm_ns[4], d2h_ns, total_ns;
} zp_cu_times_t;

/* power tables of the NTT (host memory, Montgomery Fr): value(i) = hi[i >> k1] * lo[i & mask] */
typedef struct {
    const uint64_t *lo, *hi;
    unsigned k1;            /* lo has 2^k1 entries */
    size_t nhi;             /* entries of hi */
} zp_cu_pow_table_t;

/* one proof's G1 part (compute_h when w == NULL).
 * conv 0 (snarkjs): h_i = (a b - c)(g w^i), the evaluations on the coset g = w[log_n + 1].
 * conv 1 (bellman, issue 29 item 4): w bellman's root, a, b, c to the coset 7<w> (cs = 7^i / n),
 *   (a b - c) there, then back to coefficients: h = the inverse transform scaled by ics =
 *   7^-i (7^n - 1)^-1 / n; h[n-1] (0 for a satisfied witness) meets the key's identity point. */
typedef struct {
    int curve;
    unsigned log_n;
    uint32_t n_vars, n_public;
    unsigned conv;          /* 0 snarkjs, 1 bellman (BLS12-381 only) */
    zp_cu_pow_table_t tw;   /* w^i, i < n/2 (w = w[log_n], or bellman's root) */
    zp_cu_pow_table_t cs;   /* g^i / n, i < n (g = w[log_n + 1]; bellman: g = 7) */
    zp_cu_pow_table_t ics;  /* bellman only: 7^-i (7^n - 1)^-1 / n, i < n */
    const uint64_t *w;      /* n_vars scalars (standard) or NULL */
    const uint64_t *a, *b, *c;  /* n Montgomery each (host) */
    uint64_t *h;            /* n out, standard form (host) */
    uintptr_t key_id;       /* (added) the loaded key whose bases the MSMs use; 0 = the last loaded */
    /* (added) a compacted key (bellman's A / B as in the .params): the key's bases 0 and 1 hold
     * n_a / n_b points; the wire-level bitmaps and prefix counts (host, the key's memory: n_vars
     * bits, ceil(n_vars/64) + 1 counts) are key data, on the device with the key (uploaded once:
     * zp_cu_load_bases_dens, stage_in, or the first proof), and a gather kernel on the compute
     * stream makes the A and B1 MSMs' scalars from w there */
    unsigned compact;
    uint32_t n_a, n_b;
    const uint64_t *dens_a, *dens_b;
    const uint32_t *pfx_a, *pfx_b;
} zp_cu_prove_args_t;

typedef struct zp_cu zp_cu_t;

/* spec: the device, an ordinal ("0") or a UUID ("GPU-5e3f...", as nvidia-smi -L prints it);
 * ordinals count in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID is set unless the environment
 * says otherwise), after CUDA_VISIBLE_DEVICES, so they match nvidia-smi. desc: the one-line
 * banner for the log (device, PCI id, memory, compute capability, driver, runtime), may be NULL. */
int zp_cu_open(zp_cu_t **cu, const char *spec, char *desc, size_t desc_cap);
void zp_cu_close(zp_cu_t **cu);

/* A device spec parsed (no CUDA call): *ordinal >= 0 for a number, else uuid[16] holds the UUID
 * (with or without the "GPU-" prefix, dashes anywhere). ZP_EFORMAT with the reason otherwise. */
int zp_cu_parse_device(const char *spec, int *ordinal, unsigned char uuid[16]);

/* The host emulation of the device runtime (cu_hostemu.cu), for tests and `gpu-check
 * --dry-run`: the executor of cu_exec.c runs unchanged on plain memory, the kernels run as
 * loops, the memory pool has a capacity, faults can be injected and stream order is checked. */
typedef struct {
    size_t mem_total;          /* emulated device memory; 0 = 1 GiB */
    size_t mem_report_extra;   /* cudaMemGetInfo reports this much more free than there is */
    unsigned long fail_at;     /* the fail_at-th runtime call fails (1-based; 0 = none) */
    int fail_oom;              /* ... as out-of-memory if it allocates (not sticky); else a sticky device error */
    unsigned sms;              /* reported SMs; 0 = 4 */
} zp_cu_emu_cfg_t;
/* (added) The emulation is thread-safe (one lock around every runtime call). Test hold: after
 * zp_cu_emu_hold(cu, s), the next kernel launched on stream s blocks (holding no lock) until
 * zp_cu_emu_release; zp_cu_emu_wait_held waits (up to a generous safety timeout) until one is
 * blocked. While it is blocked the checker counts, in the stats: ops enqueued on other streams
 * that the held kernel does not order (hold_ops_free: they may run now), ops ordered after it
 * (hold_ops_behind: on its stream, or waiting for it; serialized behind the held compute), and
 * host waits for it (hold_syncs: a stream sync or device sync that would block until it ends). */
int zp_cu_emu_hold(zp_cu_t *cu, int stream);
int zp_cu_emu_wait_held(zp_cu_t *cu);
int zp_cu_emu_release(zp_cu_t *cu);
typedef struct {
    unsigned long calls;            /* runtime calls (the numbers fail_at counts) */
    unsigned long violations;       /* stream-order violations seen */
    char first_violation[200];
    size_t live_bytes, live_allocs, peak_bytes, pool_reserved;
    unsigned pending;               /* streams with host-visible work not yet synchronized */
    int poisoned;                   /* a sticky device error was injected */
    /* (added) the test hold (zp_cu_emu_hold) */
    int held;
    unsigned long hold_ops_free, hold_ops_behind, hold_syncs;
    unsigned long h2d_calls[ZP_CU_NSTREAMS_API];   /* H2D copies per stream (0 compute, 1 copy) */
} zp_cu_emu_stats_t;
int zp_cu_open_emulated(zp_cu_t **cu, const zp_cu_emu_cfg_t *cfg, char *desc, size_t desc_cap);
int zp_cu_emu_stats(zp_cu_t *cu, zp_cu_emu_stats_t *st);   /* ZP_ESTATE on a real device */
/* device allocations and host registrations emulated devices still held when closed (all
 * emulated devices of this process so far; 0 = no leak) */
unsigned long zp_cu_emu_leaks(void);

/* test hooks: reach at small sizes the paths only big inputs reach */
typedef struct {
    int force_streamed;        /* bases never resident (copied per proof) */
    zp_cu_msm_tune_t tune;     /* applied to every MSM (0 fields = automatic) */
} zp_cu_hooks_t;
void zp_cu_set_hooks(zp_cu_t *cu, const zp_cu_hooks_t *h);
typedef struct {
    int resident;                   /* bases of the current (last loaded) key on the device */
    unsigned long msm_retries;      /* MSMs retried with a smaller budget after out-of-memory */
    unsigned long msm_batches;      /* sort batches of all MSMs */
    unsigned long pool_trims;
    size_t last_max_pairs;          /* budget of the last MSM */
    /* (added, issue 10 items 2 and 4) */
    unsigned keys;                  /* keys in the table (resident or streamed) */
    unsigned keys_resident;         /* of them with their bases on the device */
    unsigned long key_uploads;      /* bases uploads (one per key made resident) */
    unsigned long key_evictions;    /* keys evicted (least recently used, unreferenced) */
    size_t keys_bytes;              /* device bytes of the resident keys' bases */
    unsigned long staged;           /* stage-ins into a device buffer set (H2D queued ahead) */
    unsigned long staged_deferred;  /* stage-ins left to the compute (one buffer set: memory short) */
    unsigned sets_live;             /* device buffer sets holding a staged partition now */
    unsigned sets_peak;             /* most at once */
    int one_set;                    /* the memory model fell back to one buffer set (last decision) */
} zp_cu_stats_t;
void zp_cu_stats(const zp_cu_t *cu, zp_cu_stats_t *st);
/* "pool used X reserved Y, device free Z of T" into buf */
int zp_cu_mem_report(zp_cu_t *cu, char *buf, size_t cap);

/* Pin host memory for DMA: pre-fault, then cudaHostRegister in chunks of chunk bytes (0 = 64
 * GiB), falling back to read-only registration for a PROT_READ mapping. Registering the same
 * (p, len) again is a no-op, so the worker can pin at start and its tasks can re-check.
 * The step form registers at most max_bytes more of [p, p + len) from *done on (so a caller can
 * keep its loop alive); the range counts as registered when *done reaches len. unregister
 * takes the same p. */
int zp_cu_host_register(zp_cu_t *cu, void *p, size_t len);
int zp_cu_host_register_step(zp_cu_t *cu, void *p, size_t len, size_t chunk, size_t *done, size_t max_bytes);
int zp_cu_host_unregister(zp_cu_t *cu, void *p);
/* make the four G1 base arrays (A, B1, C, H; affine, host) resident on the device if they fit
 * next to the working memory of a proof of 2^log_n and a second staged buffer set (else of one
 * proof: one set) (the pool trimmed first, so its cache does not count as used), evicting least
 * recently used unreferenced keys of the table (ZP_CU_MAX_KEYS) for room; *resident = 1 if they
 * are being uploaded (cudaMemcpyAsync on the copy stream, the compute stream waits for it), 0 if
 * they will be copied per proof instead. key_id identifies the key so a second call for the same
 * key does nothing (it stays resident until evicted). */
int zp_cu_load_bases(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n,
                     const void *const bases[4], const size_t counts[4], int *resident);
/* (added) the same for a compacted key: its bitmaps and prefix counts (from dens: compact,
 * n_vars, n_a, n_b, dens_*, pfx_*; the rest unused) go onto the device with it, once, and stay
 * there until the key is evicted (a proof's w no longer carries them); the memory model counts
 * the key's wires (not |A|) and the gathered A / B1 scalars. A compacted proof of a key loaded
 * without them (zp_cu_load_bases) uploads them at its first proof. */
int zp_cu_load_bases_dens(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n, const void *const bases[4],
                          const size_t counts[4], const zp_cu_prove_args_t *dens, int *resident);
/* MSM over host points / scalars */
int zp_cu_msm_g1(zp_cu_t *cu, int curve, zp_cu_msm_out_t *out, const void *points,
                 const uint64_t *scalars, size_t n, const zp_cu_msm_tune_t *tune);
/* the G1 part of a proof with the bases of key args->key_id (0: the last zp_cu_load_bases;
 * curve must match; the key is referenced while the proof runs).
 * args->w != NULL: out = 4 MSMs (A, B1, C, H); h stays on the device (args->h is not written).
 * args->w == NULL: compute_h only, h copied into args->h. */
int zp_cu_prove(zp_cu_t *cu, const zp_cu_prove_args_t *args, zp_cu_msm_out_t out[4], zp_cu_times_t *t);
/* (added, issue 10 item 2) Staged proofs, real double buffering: zp_cu_stage_in loads the key
 * (as zp_cu_load_bases: resident when it fits, LRU eviction of unreferenced keys, else
 * streamed), references it (never evicted while referenced) and queues the H2D of args' a, b,
 * c, w and coset tables into device buffer set `set` (0 .. ZP_CU_SET_SLOTS - 1) on the copy
 * stream, one event per vector, and returns without waiting for anything (args->w required;
 * the host vectors must stay unchanged until the set is released; registered memory makes the
 * copies DMA). When a second set does not fit next to the keys and the working memory of the
 * running proof (or set >= the sets with events), the set is "deferred": its copies run at the
 * start of its compute (one set; logged once). zp_cu_prove_set computes a staged set (the
 * compute stream waits for the set's events, then the NTTs and MSMs of zp_cu_prove) and frees
 * its device buffers; zp_cu_release_set gives the set back (after prove_set, or instead of it:
 * it then waits for the set's copies first) and drops the key reference. Thread safety:
 * stage_in / release_set on one thread while prove_set runs on another, on the same context.
 * Errors: ZP_EDEVICE as zp_cu_prove; after any error the set holds no device memory (release
 * still drops the reference). */
enum { ZP_CU_SET_SLOTS = 64 };
int zp_cu_stage_in(zp_cu_t *cu, unsigned set, const zp_cu_prove_args_t *args, const void *const bases[4],
                   const size_t counts[4]);
int zp_cu_prove_set(zp_cu_t *cu, unsigned set, zp_cu_msm_out_t out[4], zp_cu_times_t *t);
int zp_cu_release_set(zp_cu_t *cu, unsigned set);
/* (added) the key table: up to cap entries (key_id, resident, refs, bytes); returns the count */
typedef struct { uintptr_t key_id; int curve; unsigned log_n; int resident; unsigned refs; size_t bytes; } zp_cu_key_info_t;
unsigned zp_cu_keys(zp_cu_t *cu, zp_cu_key_info_t *out, unsigned cap);
/* H2D bandwidth of a bytes-long copy from pageable and from registered host memory, GB/s */
int zp_cu_bench_h2d(zp_cu_t *cu, size_t bytes, double *gbps_pageable, double *gbps_pinned);

/* ---- host emulation (cu_hostemu.cu): the same templates run on the CPU, for tests ---- */
enum { ZP_CU_OP_ADD, ZP_CU_OP_SUB, ZP_CU_OP_NEG, ZP_CU_OP_DBL, ZP_CU_OP_MUL, ZP_CU_OP_SQR,
       ZP_CU_OP_TO_MONT, ZP_CU_OP_FROM_MONT };
/* field: ZP_CU_FR_BN254 ... (cu_consts.h); r = a op b */
void zp_cu_host_fp(int field, int op, uint64_t *r, const uint64_t *a, const uint64_t *b);
enum {
    ZP_CU_G1_SUM_MIXED,   /* r = p[0] + ... + p[k-1] by mixed adds into one xyzz */
    ZP_CU_G1_SUM_FULL,    /* r = (mixed sum of the first half) + (of the second half), full add */
    ZP_CU_G1_DBL,         /* r = 2 * (mixed sum of p[0..k)) with xyzz_dbl */
    ZP_CU_G1_MUL_SMALL,   /* r = k32 * (mixed sum of p[0..k)) */
    ZP_CU_G1_SUM_SIGNED,  /* r = sum (-1)^i p[i], mixed adds with the sign flag */
};
/* affine points in, Jacobian (lib/ec layout) out */
void zp_cu_host_g1(int curve, int op, uint64_t *r_jac, const void *p_aff, size_t k, uint32_t k32);
int zp_cu_host_msm(int curve, zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars,
                   size_t n, const zp_cu_msm_tune_t *tune);
/* a <- h = fft(coset(ifft(a))) * ... (the whole compute_h): a, b clobbered; h written */
int zp_cu_host_compute_h(int curve, unsigned log_n, const zp_cu_pow_table_t *tw,
                         const zp_cu_pow_table_t *cs, uint64_t *a, uint64_t *b, const uint64_t *c,
                         uint64_t *h);

#ifdef __cplusplus
}
#endif
#endif
