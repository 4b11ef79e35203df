/* shm.h - the shared-memory arena of a zkpipe deployment: header, slot table, data extents.
 *
 * One arena per deployment: a named POSIX shared-memory object ("/zkpipe-<user>-<name>") or a
 * file in a hugetlbfs directory. One owner creates it (O_EXCL, mode 0600); every other process
 * opens it and checks it (magic, layout version, epoch, sizes; fstat before mmap, so a short
 * object is an error, never a SIGBUS). Everything read from the arena is untrusted: offsets
 * and lengths in a descriptor are validated against the slot extent before a pointer is made.
 *
 * Layout (all offsets from the start of the object; no pointers are ever stored):
 *   [0, 4096)                 zp_shm_hdr_t
 *   [table_off, +n*2048)      n_slots zp_shm_slot_t descriptors (table_off = 4096)
 *   [data_off, ...)           one extent per slot, class by class (slot size classes, smallest
 *                             first): class k has n_k slots of bytes_k each; data_off and every
 *                             extent multiples of 2 MiB (doc/memory.md: what a slot needs)
 *   [aux_off, +aux_bytes)     optional auxiliary region (e.g. a proving key), 2 MiB aligned
 *
 * The protocol built on these functions (who writes what at which generation, holders and
 * quarantine, leases, recovery) is written once in doc/slot-protocol.md.
 * The slot word: state (low 8 bits) | generation (upper 56 bits), changed only by CAS. Every
 * state change bumps the generation by exactly one; the generation is the fencing token:
 *   FREE -> SYNTH -> READY -> PROVING -> PROVED -> FINALIZING -> FINISHED -> FREE,
 *   FINALIZING -> FREE, any busy state -> FAILED, FAILED -> FREE (zp_shm_slot_transition
 *   enforces these edges); zp_shm_slot_reset moves a slot from any state to any state (recovery
 *   by the broker), also with a new generation. FINISHED: the finalizer committed the proof into
 *   the slot (proof area + zp_shm_final_t record); the broker frees the slot once it has
 *   journaled the proof, so a proof finished while the broker was down is not lost.
 *
 * Fenced writes: a stage writes its results with zp_shm_commit(): it checks the word is the
 * (state, gen) it was assigned, writes the area, stamps it with gen+1 and a checksum, then
 * CASes (state, gen) -> (new_state, gen+1). If the CAS fails (the slot was reset meanwhile)
 * the write is void and ZP_ESTALE is returned. Readers call zp_shm_area_read() with the
 * generation the commit produced (learned from the DONE message, never guessed): a late write
 * from a stale owner carries the wrong stamp, or (if it died mid-write) the wrong checksum,
 * and is refused. Long vector writes cannot be fenced byte by byte: a stage re-checks the word
 * (zp_shm_slot_check) between chunks, and the broker never gives a slot to a new holder while
 * the last one may still write (quarantine: doc/slot-protocol.md); the finalizer's pairing
 * check is the backstop.
 *
 * Threads/processes: the word, owner and lease are atomics; other descriptor fields are
 * written by the process that holds the slot at the current generation and published by
 * the CAS of the next transition (release) / read after an acquire load of the word.
 * Tests: tests/test_shm.c */
#ifndef ZP_SHM_H
#define ZP_SHM_H
#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct zp_pool zp_pool_t;   /* lib/util/util.h */

#define ZP_SHM_MAGIC 0x3130484d53504b5aULL  /* "ZKPSMH01" little-endian */
#define ZP_SHM_VERSION 2u   /* 2: slot size classes (version 1: one extent for all) */
#define ZP_SHM_HDR_BYTES 4096u
#define ZP_SHM_DESC_BYTES 2048u
#define ZP_SHM_ALIGN (2u << 20)            /* 2 MiB: data region, slot extents, aux region */
#define ZP_SHM_VEC_ALIGN 4096u             /* vectors inside an extent (zp_shm_slot_layout) */
#define ZP_SHM_MAX_SLOTS 65536u
#define ZP_SHM_NAME_MAX 200
#define ZP_SHM_MAX_CLASSES 16u

typedef enum {
    ZP_SLOT_FREE = 0, ZP_SLOT_SYNTH = 1, ZP_SLOT_READY = 2, ZP_SLOT_PROVING = 3,
    ZP_SLOT_PROVED = 4, ZP_SLOT_FINALIZING = 5, ZP_SLOT_FAILED = 6, ZP_SLOT_FINISHED = 7,
    ZP_SLOT_NSTATES = 8
} zp_slot_state_t;

/* vectors of a slot's extent: witness w (n_vars), a, b, c, h (domain_size each) */
enum { ZP_SHM_VEC_W = 0, ZP_SHM_VEC_A = 1, ZP_SHM_VEC_B = 2, ZP_SHM_VEC_C = 3, ZP_SHM_VEC_H = 4,
       ZP_SHM_NVEC = 5 };
#define ZP_SHM_VEC_MASK(v) (1u << (v))
/* payload_mask bit (not a vector): the descriptor's rs area (the caller's blinding, issue 30)
 * is covered by payload_sum; the finalizer uses it instead of fresh random r, s */
#define ZP_SHM_PAYLOAD_RS (1u << 15)
#define ZP_SHM_PAYLOAD_VALID (((1u << ZP_SHM_NVEC) - 1) | ZP_SHM_PAYLOAD_RS)

/* per-stage timestamps, ts[]: wall-clock microseconds (zp_wall_us) for events, ns for durations */
enum {
    ZP_TS_SUBMITTED = 0, ZP_TS_SYNTH_START = 1, ZP_TS_SYNTH_END = 2, ZP_TS_READY = 3,
    ZP_TS_GPU_START = 4, ZP_TS_GPU_END = 5, ZP_TS_FINAL_START = 6, ZP_TS_FINAL_END = 7,
    ZP_TS_H2D_NS = 8, ZP_TS_NTT_NS = 9, ZP_TS_MSM_NS = 10, ZP_TS_D2H_NS = 11,
    ZP_TS_MSM_G2_NS = 12, ZP_TS_CHECK_NS = 13, ZP_TS_SPARE0 = 14, ZP_TS_SPARE1 = 15,
    ZP_TS_N = 16
};

/* fenced areas of a descriptor (zp_shm_commit / zp_shm_area_read) */
typedef enum {
    ZP_SHM_AREA_RESULT = 0,   /* 4 Jacobian G1 points (A, B1, C, H), 144 bytes each (zp_g1_any_t) */
    ZP_SHM_AREA_PROOF = 1,    /* the partition's final proof (any encoding, <= 512 bytes) */
    ZP_SHM_AREA_ERR = 2,      /* error text for FAILED (<= 255 chars + NUL) */
    ZP_SHM_NAREA = 3
} zp_shm_area_t;
#define ZP_SHM_RESULT_BYTES (4u * 144u)
#define ZP_SHM_PROOF_BYTES 512u
#define ZP_SHM_ERR_BYTES 256u

/* ---- slot word ---- */
#define ZP_SHM_GEN_MASK ((UINT64_C(1) << 56) - 1)
static inline uint64_t zp_shm_word(unsigned state, uint64_t gen)
{
    return ((gen & ZP_SHM_GEN_MASK) << 8) | (uint64_t)(state & 0xffu);
}
static inline unsigned zp_shm_word_state(uint64_t w) { return (unsigned)(w & 0xffu); }
static inline uint64_t zp_shm_word_gen(uint64_t w) { return w >> 8; }

/* ---- shared structs (layout is ABI: static_asserts below) ---- */
typedef struct zp_shm_hdr {
    uint64_t magic;             /* ZP_SHM_MAGIC */
    uint32_t version;           /* ZP_SHM_VERSION */
    uint32_t hdr_bytes;         /* ZP_SHM_HDR_BYTES */
    uint64_t epoch;             /* random, non-zero, chosen at creation */
    uint64_t total_bytes;       /* size of the object */
    uint32_t n_slots;
    uint32_t desc_bytes;        /* ZP_SHM_DESC_BYTES */
    uint64_t table_off;         /* ZP_SHM_HDR_BYTES */
    uint64_t data_off;          /* 2 MiB aligned, >= table_off + n_slots * desc_bytes */
    uint64_t slot_bytes;        /* extent per slot, multiple of 2 MiB */
    uint64_t aux_off;           /* 0 if no aux region */
    uint64_t aux_bytes;
    uint64_t created_wall_us;
    uint32_t creator_pid;
    uint32_t flags;             /* ZP_SHM_F_* */
    char name[ZP_SHM_NAME_MAX + 8]; /* NUL-terminated, informational */
    /* slot size classes: slots [first_k, first_k + n_slots) of class k (first_k = the slots
     * of the classes before it) have extents of slot_bytes each, laid out one class after the
     * other from data_off; slot_bytes strictly ascending; hdr.slot_bytes = the largest */
    uint32_t n_classes;         /* 1..ZP_SHM_MAX_CLASSES */
    uint32_t pad0;
    struct { uint64_t slot_bytes; uint32_t n_slots; uint32_t pad; } classes[ZP_SHM_MAX_CLASSES];
    uint8_t reserved[ZP_SHM_HDR_BYTES - 96 - (ZP_SHM_NAME_MAX + 8) - 8 - 16 * ZP_SHM_MAX_CLASSES];
} zp_shm_hdr_t;
#define ZP_SHM_F_HUGETLB 1u

/* the caller's r and s (standard form, little-endian limbs) of a pre-synthesized partition that
 * brought them (lib/fmt/vecs.h ZP_VECS_F_RS): descriptor bytes 1712..1807 (issue 30; bytes
 * from 1808 on are another module's). Written by the synthesizer while it holds SYNTH(gen)
 * (zp_shm_slot_set_rs), sealed with the vectors (ZP_SHM_PAYLOAD_RS in the mask), read by the
 * finalizer from its own copy after the checksum (zp_shm_payload_verify_rs). */
typedef struct zp_shm_rs {
    uint8_t r[32];
    uint8_t s[32];
    uint8_t pad[32];                /* 0 */
} zp_shm_rs_t;

typedef struct zp_shm_slot {
    _Atomic uint64_t word;          /* state | gen << 8 */
    _Atomic uint64_t owner_pid;     /* process working on the slot, 0 = none */
    _Atomic uint64_t owner_inc;     /* its incarnation (random per process start) */
    _Atomic uint64_t lease_ns;      /* lease deadline, CLOCK_MONOTONIC ns (zp_now_ns); 0 = none */
    uint64_t job_id;
    uint32_t part_idx;              /* partition index within the job */
    uint32_t attempt;
    uint32_t curve;                 /* zp_curve_id_t */
    uint32_t circuit;               /* deployment's circuit index */
    uint32_t n_vars;
    uint32_t domain_size;
    uint32_t priority;
    uint32_t scalar_bytes;          /* bytes per vector element (32) */
    uint64_t vec_off[ZP_SHM_NVEC];  /* offsets inside the slot's extent */
    uint64_t vec_len[ZP_SHM_NVEC];  /* lengths in bytes */
    uint64_t payload_sum;           /* zp_shm_checksum of the sealed vectors (see payload_mask) */
    uint64_t payload_gen;           /* generation produced by the seal (zp_shm_payload_seal) */
    uint32_t payload_mask;          /* ZP_SHM_VEC_MASK bits covered by payload_sum */
    uint32_t pad0;
    uint64_t ts[ZP_TS_N];
    /* fenced areas: stamp = generation produced by the committing transition, 0 = none */
    uint64_t area_gen[ZP_SHM_NAREA];
    uint64_t area_sum[ZP_SHM_NAREA];
    uint32_t area_len[ZP_SHM_NAREA];
    uint32_t result_curve;          /* curve of the points in result[] */
    uint8_t result[ZP_SHM_RESULT_BYTES];
    uint8_t proof[ZP_SHM_PROOF_BYTES];
    char err[ZP_SHM_ERR_BYTES];
    zp_shm_rs_t rs;                 /* 1712..1807: the caller's blinding (issue 30) */
    uint8_t reserved[ZP_SHM_DESC_BYTES - 1808];
} zp_shm_slot_t;

static_assert(sizeof(zp_shm_hdr_t) == ZP_SHM_HDR_BYTES, "shm header size");
static_assert(offsetof(zp_shm_hdr_t, epoch) == 16, "hdr.epoch");
static_assert(offsetof(zp_shm_hdr_t, n_slots) == 32, "hdr.n_slots");
static_assert(offsetof(zp_shm_hdr_t, slot_bytes) == 56, "hdr.slot_bytes");
static_assert(offsetof(zp_shm_hdr_t, flags) == 92, "hdr.flags");
static_assert(offsetof(zp_shm_hdr_t, name) == 96, "hdr.name");
static_assert(offsetof(zp_shm_hdr_t, n_classes) == 304 && offsetof(zp_shm_hdr_t, classes) == 312, "hdr.classes");
static_assert(sizeof(zp_shm_slot_t) == ZP_SHM_DESC_BYTES, "slot descriptor size");
static_assert(sizeof(_Atomic uint64_t) == 8 && _Alignof(_Atomic uint64_t) == 8, "atomic u64");
static_assert(offsetof(zp_shm_slot_t, word) == 0, "slot.word");
static_assert(offsetof(zp_shm_slot_t, lease_ns) == 24, "slot.lease_ns");
static_assert(offsetof(zp_shm_slot_t, job_id) == 32, "slot.job_id");
static_assert(offsetof(zp_shm_slot_t, scalar_bytes) == 68, "slot.scalar_bytes");
static_assert(offsetof(zp_shm_slot_t, vec_off) == 72, "slot.vec_off");
static_assert(offsetof(zp_shm_slot_t, vec_len) == 112, "slot.vec_len");
static_assert(offsetof(zp_shm_slot_t, payload_sum) == 152, "slot.payload_sum");
static_assert(offsetof(zp_shm_slot_t, ts) == 176, "slot.ts");
static_assert(offsetof(zp_shm_slot_t, area_gen) == 304, "slot.area_gen");
static_assert(offsetof(zp_shm_slot_t, result_curve) == 364, "slot.result_curve");
static_assert(offsetof(zp_shm_slot_t, result) == 368, "slot.result");
static_assert(offsetof(zp_shm_slot_t, proof) == 944, "slot.proof");
static_assert(offsetof(zp_shm_slot_t, err) == 1456, "slot.err");
static_assert(sizeof(zp_shm_rs_t) == 96 && offsetof(zp_shm_slot_t, rs) == 1712, "slot.rs: bytes 1712..1807");
static_assert(offsetof(zp_shm_slot_t, reserved) == 1808, "slot.reserved");

/* ---- arena handle (process-local) ---- */
typedef struct zp_shm zp_shm_t;

/* one slot size class: n_slots extents of slot_bytes (rounded up to 2 MiB at creation) */
typedef struct zp_shm_class {
    uint32_t n_slots;
    uint64_t slot_bytes;
} zp_shm_class_t;

typedef struct zp_shm_cfg {
    const char *name;          /* POSIX shm name "/x" (one leading '/', no other '/'); with
                                  hugetlb_dir: the file name inside it (leading '/' optional) */
    const char *hugetlb_dir;   /* NULL = POSIX shm; else a hugetlbfs mount (or any dir, tests) */
    uint32_t n_slots;          /* 1..ZP_SHM_MAX_SLOTS (ignored when n_classes > 0) */
    uint64_t slot_bytes;       /* >= 1; rounded up to a multiple of 2 MiB (ignored when n_classes > 0) */
    uint64_t aux_bytes;        /* 0 = none; rounded up to 2 MiB */
    /* slot size classes (0 = one class of n_slots x slot_bytes): strictly ascending sizes
     * after rounding, 1..ZP_SHM_MAX_CLASSES, at most ZP_SHM_MAX_SLOTS slots in all */
    uint32_t n_classes;
    const zp_shm_class_t *classes;
} zp_shm_cfg_t;

/* Default name for a deployment: "/zkpipe-<user>-<deploy>" (user from getuid). */
int zp_shm_default_name(char *buf, size_t bufsize, const char *deploy);

/* Create (O_EXCL, 0600; -EEXIST if it exists), size, map, initialise: all slots FREE at
 * generation 1, fresh random epoch. MADV_DONTDUMP on the data and aux regions. */
int zp_shm_create(zp_shm_t **ap, const zp_shm_cfg_t *cfg);
/* Open and check an existing arena. expected_epoch: 0 = any, else must match (ZP_EMISMATCH).
 * Errors: -ENOENT, ZP_EFORMAT (bad magic, short object, inconsistent sizes), ZP_EVERSION. */
int zp_shm_open(zp_shm_t **ap, const char *name, const char *hugetlb_dir, uint64_t expected_epoch);
void zp_shm_close(zp_shm_t **ap);                       /* munmap; NULL-safe; nulls *ap */
int zp_shm_unlink(const char *name, const char *hugetlb_dir);

/* accessors */
uint32_t zp_shm_n_slots(const zp_shm_t *a);
uint64_t zp_shm_slot_bytes(const zp_shm_t *a);          /* the largest extent (of the last class) */
/* size classes (validated copies, smallest first): count, class k (false if k out of range),
 * the class of slot idx (n_classes if idx is out of range), and slot idx's extent in bytes (0
 * if idx is out of range). Slots of class k are [first, first + n_slots). */
uint32_t zp_shm_n_classes(const zp_shm_t *a);
bool zp_shm_class_get(const zp_shm_t *a, uint32_t k, zp_shm_class_t *c, uint32_t *first);
uint32_t zp_shm_slot_class(const zp_shm_t *a, uint32_t idx);
uint64_t zp_shm_slot_extent_bytes(const zp_shm_t *a, uint32_t idx);
uint64_t zp_shm_epoch(const zp_shm_t *a);
const zp_shm_hdr_t *zp_shm_header(const zp_shm_t *a);
/* whole mapping / data region / aux region (e.g. for cudaHostRegister); NULL if none */
void *zp_shm_base(const zp_shm_t *a, size_t *len);
void *zp_shm_data(const zp_shm_t *a, size_t *len);
void *zp_shm_aux(const zp_shm_t *a, size_t *len);
/* descriptor of slot idx; NULL if idx >= n_slots */
zp_shm_slot_t *zp_shm_slot(const zp_shm_t *a, uint32_t idx);
/* start of slot idx's extent (zp_shm_slot_extent_bytes long); NULL if idx out of range */
void *zp_shm_slot_extent(const zp_shm_t *a, uint32_t idx);

/* Bytes a slot needs for a circuit: w (n_vars) + a, b, c, h (domain_size each) of
 * scalar_bytes, each vector aligned to ZP_SHM_VEC_ALIGN, rounded up to 2 MiB. 0 on overflow. */
uint64_t zp_shm_slot_bytes_for(uint32_t n_vars, uint32_t domain_size, uint32_t scalar_bytes);

/* ---- slot state machine ---- */
const char *zp_shm_state_name(unsigned state);          /* "FREE", ..., "?" */
bool zp_shm_transition_valid(unsigned from, unsigned to);
uint64_t zp_shm_slot_word_load(const zp_shm_t *a, uint32_t idx); /* acquire; 0 if idx bad */
/* 0 if slot idx is (state, gen) now, else ZP_ESTALE (sets message); -EINVAL bad idx */
int zp_shm_slot_check(const zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen);

/* FREE -> SYNTH on slot idx: *gen = the new generation. Clears the descriptor's job fields,
 * vectors, stamps, timestamps and areas. ZP_ESTALE if the slot is not FREE. */
int zp_shm_slot_claim_at(zp_shm_t *a, uint32_t idx, uint64_t *gen);
/* The same on the first FREE slot found (scanning from a rotating hint): -EAGAIN if none. */
int zp_shm_slot_claim(zp_shm_t *a, uint32_t *idx, uint64_t *gen);
/* CAS (expected_state, expected_gen) -> (new_state, expected_gen + 1). ZP_ESTALE on mismatch,
 * ZP_ESTATE if the edge is not in the state machine. new_gen may be NULL. */
int zp_shm_slot_transition(zp_shm_t *a, uint32_t idx, unsigned expected_state, uint64_t expected_gen,
                           unsigned new_state, uint64_t *new_gen);
/* Recovery / requeue by the broker: (any state, expected_gen) -> (new_state, expected_gen + 1);
 * clears the lease, keeps the owner (the last holder may still write until the broker knows it
 * is gone: zp_shm_slot_clear_owner; doc/slot-protocol.md). ZP_ESTALE if the generation moved. */
int zp_shm_slot_reset(zp_shm_t *a, uint32_t idx, uint64_t expected_gen, unsigned new_state,
                      uint64_t *new_gen);
/* Record who works on the slot (fenced: ZP_ESTALE unless the word is (state, gen)). */
int zp_shm_slot_set_owner(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen,
                          uint64_t pid, uint64_t incarnation, uint64_t lease_ns);
/* The owner reported or is known gone: forget it (broker only). */
void zp_shm_slot_clear_owner(zp_shm_t *a, uint32_t idx);

/* ---- vectors ---- */
/* Standard layout of the extent: w, a, b, c, h one after another, each ZP_SHM_VEC_ALIGN
 * aligned; writes n_vars, domain_size, scalar_bytes, vec_off/len. ZP_ETOOBIG if it does not
 * fit the slot's extent. Fenced on (state, gen). */
int zp_shm_slot_layout(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, uint32_t n_vars,
                       uint32_t domain_size, uint32_t scalar_bytes);
/* Pointer to vector `which` of slot idx after validating the descriptor's offset and length
 * (read once) against the slot's extent: off + len <= its bytes, off aligned to 64. NULL and
 * zp_err_set(ZP_EFORMAT) if invalid; *len (may be NULL) gets the length in bytes. */
void *zp_shm_slot_vec(const zp_shm_t *a, uint32_t idx, unsigned which, size_t *len);

/* ---- checksum ---- */
/* A 64-bit non-cryptographic hash (4 lanes of multiply-rotate over 32-byte stripes, then an
 * avalanche); input read as little-endian words, any alignment. Detects corruption, not
 * adversaries. */
uint64_t zp_shm_checksum(const void *p, size_t n, uint64_t seed);

/* Seal the payload written while holding (state, gen): checksum the vectors in `mask`
 * (ZP_SHM_VEC_MASK bits; seed = gen + 1), record payload_sum/mask/gen = gen + 1, then CAS
 * (state, gen) -> (new_state, gen + 1). ZP_ESTALE if the slot moved (the payload is void). */
int zp_shm_payload_seal(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, uint32_t mask,
                        unsigned new_state, uint64_t *new_gen);
/* Check the sealed payload (sealed_gen: the new_gen returned by the successful seal, carried
 * in the synth's DONE): payload_gen == sealed_gen and the checksum matches the vectors
 * now. ZP_ESTALE (wrong generation) or ZP_EFORMAT (checksum/offsets) on failure. */
int zp_shm_payload_verify(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen);
/* The payload checksum is chunked (ZP_SHM_SUM_CHUNK bytes per chunk; the value does not depend
 * on the pool): these compute the chunks on `pool` (NULL: the caller's thread). One
 * zp_pool_run in flight per pool: a thread that runs beside another user of a pool brings its
 * own. */
#define ZP_SHM_SUM_CHUNK ((size_t)1 << 20)
int zp_shm_payload_seal_pool(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, uint32_t mask,
                             unsigned new_state, uint64_t *new_gen, zp_pool_t *pool);
int zp_shm_payload_verify_pool(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen, zp_pool_t *pool);
/* The caller's r, s into the descriptor's rs area, fenced on (state, gen) (the synthesizer,
 * before zp_shm_payload_seal with ZP_SHM_PAYLOAD_RS in the mask). ZP_ESTALE if the slot moved. */
int zp_shm_slot_set_rs(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, const uint8_t r[32],
                       const uint8_t s[32]);
/* zp_shm_payload_verify_pool that also hands out the rs area: it is copied into *rs first and
 * the checksum is computed over that copy (a peer writing the slot afterwards cannot change
 * what the caller uses). *has_rs: the seal covered it (ZP_SHM_PAYLOAD_RS); rs may be NULL. */
int zp_shm_payload_verify_rs(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen, zp_pool_t *pool,
                             zp_shm_rs_t *rs, bool *has_rs);
/* O(1): the seal stamp is sealed_gen and the mask and the vectors' offsets are valid; the
 * checksum itself is not computed (broker recovery: the stage that reads the payload verifies
 * it, off the broker's thread). ZP_ESTALE / ZP_EFORMAT. */
int zp_shm_payload_stamp(const zp_shm_t *a, uint32_t idx, uint64_t sealed_gen);

/* ---- fenced result areas ---- */
/* Fenced write: requires the word == (state, gen); writes len bytes into `area` (len <= the
 * area's size; for ZP_SHM_AREA_ERR the text is truncated and NUL-terminated), stamps it with
 * gen + 1 and a checksum, then CASes (state, gen) -> (new_state, gen + 1). ZP_ESTALE: the
 * slot was not (state, gen) before or after: nothing is valid. ZP_ESTATE: bad edge. */
int zp_shm_commit(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, unsigned new_state,
                  zp_shm_area_t area, const void *data, size_t len, uint64_t *new_gen);
/* Fail a slot: commit `msg` into the error area and move (state, gen) -> FAILED. */
int zp_shm_slot_fail(zp_shm_t *a, uint32_t idx, unsigned state, uint64_t gen, const char *msg,
                     uint64_t *new_gen);
/* Copy an area out if it was committed by the transition that produced `commit_gen` and its
 * checksum holds. commit_gen must be the new_gen returned by the SUCCESSFUL zp_shm_commit
 * (carried in its DONE message and kept by the broker, which passes it on in the next
 * ASSIGN): do not derive it from the current word (a reset in between changes the word).
 * *len gets the committed length (<= cap). ZP_ESTALE / ZP_EFORMAT otherwise. */
int zp_shm_area_read(const zp_shm_t *a, uint32_t idx, zp_shm_area_t area, uint64_t commit_gen,
                     void *out, size_t cap, size_t *len);

/* The current stamp of an area (0 = none). Untrusted: diagnostics / broker restart only. */
uint64_t zp_shm_area_gen(const zp_shm_t *a, uint32_t idx, zp_shm_area_t area);

/* ---- the finished proof (FINISHED) ----
 * The finalizer's output stays in the slot until the broker has journaled it: proof.json and
 * public.json (text, each <= ZP_SHM_FINAL_TEXT_MAX bytes, no NUL) one after the other in the
 * slot's extent from the H vector's offset on (h is dead after the GPU stage), and a record in
 * ZP_SHM_AREA_PROOF committed by FINALIZING(gen) -> FINISHED(gen + 1): magic, the two lengths,
 * the binary proof's length, a checksum of the text (seed gen + 1), then the binary proof. */
#define ZP_SHM_FINAL_MAGIC 0x314c4e46u      /* "FNL1" */
#define ZP_SHM_FINAL_TEXT_MAX 8192u
#define ZP_SHM_FINAL_HDR 24u
#define ZP_SHM_FINAL_BIN_MAX (ZP_SHM_PROOF_BYTES - ZP_SHM_FINAL_HDR)
/* Write the text, then commit the record (fenced on (FINALIZING, gen); ZP_ESTALE if the slot
 * moved, ZP_ETOOBIG if the text does not fit the extent or the limits, ZP_EFORMAT if the
 * slot's layout is invalid). */
int zp_shm_final_commit(zp_shm_t *a, uint32_t idx, uint64_t gen, const char *proof_json, size_t pj_len,
                        const char *public_json, size_t pub_len, const uint8_t *bin, size_t bin_len,
                        uint64_t *new_gen);
/* Read it back (commit_gen: the FINISHED generation), every length and the checksum checked:
 * *proof_json and *public_json are malloc'd NUL-terminated copies (caller frees), bin gets the
 * binary proof (*bin_len, <= bin_cap). ZP_ESTALE / ZP_EFORMAT / -ENOMEM; nothing allocated on error. */
int zp_shm_final_read(char **proof_json, char **public_json, uint8_t *bin, size_t bin_cap, size_t *bin_len,
                      const zp_shm_t *a, uint32_t idx, uint64_t commit_gen);

/* ---- statistics ---- */
typedef struct {
    uint32_t n_slots;
    uint32_t by_state[ZP_SLOT_NSTATES];
    uint32_t invalid;           /* words with a state >= ZP_SLOT_NSTATES */
} zp_shm_stats_t;
void zp_shm_stats(const zp_shm_t *a, zp_shm_stats_t *st);
#endif
