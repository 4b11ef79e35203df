/* synth.c - the synthesizer daemon (zkpipe-synth): witness -> a, b, c in a shared-memory slot.
 *
 * NOTES
 * The stage runtime (stage/stage.h) owns options, signals, the key cache, the loop and the
 * work thread; work() below runs on the work thread: it opens the zkey (cached per process by
 * path), reads the witness, checks that they belong together, writes w into the slot, runs
 * zp_g16_synth into the slot's a, b, c (with the r1cs when the job has one: a witness that
 * does not satisfy the circuit fails the partition for good, naming the constraint), and
 * seals the payload (checksum + CAS SYNTH(g) -> READY(g+1)). Every write is fenced: the slot
 * word is re-checked between steps and the seal fails if the broker moved the slot.
 * No per-partition heap allocation and no serial O(n) pass of ours (issue 10 item 7): the
 * witness is copied into the slot on the pool, zp_g16_synth_ctx keeps the r1cs check's index
 * in this process's synth_t, and the r1cs/zkey pairing check (zp_check_r1cs_zkey, a scan of
 * every coefficient) runs once per (r1cs, zkey) pair: it is remembered with both files'
 * identities (device, inode, size, mtime: taken before the key cache looks, so a file that
 * changes meanwhile is checked again next time) and the cache entries it was done on. (The
 * witness file's own range check at open is lib/fmt's: still one serial pass.)
 * Inputs (issue 28): when the assignment names a witness generator (ASSIGN key 15, circom's
 * .wasm), t->wtns is the partition's input.json and the witness is computed from it straight
 * into the slot's w vector (lib/witness: a forked child writes into the MAP_SHARED slot; no
 * .wtns file in between). The wasm is registered once per content (wasm2c + cc, cached under
 * --wasm-cache, default <state dir>/wasm) and the loaded module kept per process (keyed by
 * the file's identity). Time: dt[ZP_DT_WITNESS] (the input's parse, the calculation; the
 * registration is logged apart). Limits: --witness-timeout-ms, --witness-max-memory-mib.
 * Failure classes: errors in the job's inputs (missing file, wrong curve, bad witness, a
 * circuit larger than the arena's slots; a wasm that does not register, an input the circuit
 * refuses with circom's message, a calculation that times out or crashes in its child) are
 * INPUT; anything else (memory, a stale slot) is TRANSIENT. Tests: tests/ipc/. */
#include <errno.h>
#include <stdatomic.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/fmt/fmt.h"
#include "lib/fmt/vecs.h"
#include "lib/witness/witness.h"

#include "lib/groth16/groth16.h"
#include "lib/util/util.h"
#include "stage/stage.h"

typedef struct {
    zp_g16_synth_ctx_t sc;      /* the r1cs check's index, reused by every partition */
    /* the (r1cs, zkey) pair last found to belong together */
    const zp_r1cs_t *pair_r1cs;
    const zp_keyent_t *pair_ke;
    uint64_t pair_rid[4], pair_kid[4];
    uint64_t pair_checks;       /* zp_check_r1cs_zkey runs (the rest were remembered) */
    /* witness generators loaded by this process (issue 28), least recently used evicted */
    struct { char *path; uint64_t id[4]; zp_wc_t *wc; uint64_t used; } gen[8];
    uint64_t gen_clock;
    char wasm_cache[1024];      /* --wasm-cache (default: <state dir>/wasm) */
    zp_wc_limits_t lim;         /* --witness-timeout-ms, --witness-max-memory-mib */
} synth_t;

static void file_id(const char *path, uint64_t id[4])
{
    struct stat st;
    memset(id, 0, 4 * sizeof id[0]);
    if (stat(path, &st) < 0) return;   /* the key cache reports the error */
    id[0] = st.st_dev; id[1] = st.st_ino; id[2] = (uint64_t)st.st_size;
    id[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
}

/* zp_check_r1cs_zkey, once per pair of unchanged files */
static int check_pair(synth_t *y, const zp_r1cs_t *r1cs, const zp_keyent_t *ke, const uint64_t rid[4],
                      const uint64_t kid[4])
{
    if (y->pair_r1cs == r1cs && y->pair_ke == ke && (rid[0] | rid[1]) && !memcmp(y->pair_rid, rid, sizeof y->pair_rid) &&
        !memcmp(y->pair_kid, kid, sizeof y->pair_kid) && !memcmp(ke->file_id, kid, sizeof y->pair_kid))
        return 0;
    y->pair_r1cs = NULL;
    y->pair_checks++;
    int rc = zp_check_r1cs_zkey(r1cs, &ke->zkey);
    if (rc < 0) return rc;
    y->pair_r1cs = r1cs;
    y->pair_ke = ke;
    memcpy(y->pair_rid, rid, sizeof y->pair_rid);
    memcpy(y->pair_kid, kid, sizeof y->pair_kid);
    return 0;
}

typedef struct { void *dst; const void *src; size_t n; } copy_job_t;
static void copy_run(void *arg, unsigned tid, unsigned nt)
{
    copy_job_t *j = arg;
    size_t lo, hi;
    zp_split(j->n, tid, nt, &lo, &hi);
    memcpy((uint8_t *)j->dst + lo, (const uint8_t *)j->src + lo, hi - lo);
}

/* the loaded generator of wasm (registered first if this process has not loaded it) */
static int generator(synth_t *y, const char *wasm, zp_wc_t **out, uint64_t *reg_ns)
{
    uint64_t id[4];
    file_id(wasm, id);
    unsigned victim = 0;
    for (unsigned i = 0; i < sizeof y->gen / sizeof y->gen[0]; i++) {
        if (y->gen[i].path && !strcmp(y->gen[i].path, wasm) && !memcmp(y->gen[i].id, id, sizeof id) && (id[0] | id[1])) {
            y->gen[i].used = ++y->gen_clock;
            *out = y->gen[i].wc;
            return 0;
        }
        if (y->gen[i].used < y->gen[victim].used) victim = i;
    }
    char so[4600];
    bool cached = false;
    double ms = 0;
    uint64_t t0 = zp_now_ns();
    int rc = zp_wc_register(so, sizeof so, &cached, &ms, y->wasm_cache, wasm, &y->lim);
    if (rc) return rc;
    zp_wc_t *wc = NULL;
    if ((rc = zp_wc_open(&wc, so))) return rc;
    char *sym = zp_wc_find_sym(wasm);   /* circom's .sym beside it: errors name missing signals */
    if (sym && zp_wc_set_sym(wc, sym) < 0)
        zp_log(ZP_LOG_WARN, "witness generator %s: %s not used: %s", wasm, sym, zp_err_msg());
    free(sym);
    zp_err_clear();
    *reg_ns = zp_now_ns() - t0;
    zp_log(ZP_LOG_INFO, "witness generator %s: %s %s in %.0f ms", wasm, cached ? "cached module" : "registered as", so,
           (double)*reg_ns / 1e6);
    if (y->gen[victim].wc) zp_wc_close(&y->gen[victim].wc);
    free(y->gen[victim].path);
    y->gen[victim].path = strdup(wasm);
    if (!y->gen[victim].path) { zp_wc_close(&wc); return zp_err_set(-ENOMEM, "out of memory"); }
    memcpy(y->gen[victim].id, id, sizeof id);
    y->gen[victim].wc = wc;
    y->gen[victim].used = ++y->gen_clock;
    *out = wc;
    return 0;
}

/* lib/witness codes: every ZP_E* (ZP_EFORMAT .. ZP_EVERSION, -1000 and below) is the job's
 * input, and so is a missing or unreadable file; any other -errno is this host's (TRANSIENT) */
static zp_fail_class_t wc_class(int rc)
{
    return rc <= ZP_EFORMAT || rc == -ENOENT || rc == -EACCES || rc == -EISDIR || rc == -ENOTDIR ? ZP_FAIL_INPUT
                                                                                                 : ZP_FAIL_TRANSIENT;
}

/* the witness of the input t->wtns computed into the slot (issue 28); the slot is laid out */
static void work_input(zp_stage_t *s, zp_stage_task_t *t, const zp_g16_key_t *k, zp_curve_id_t curve, zp_scalar_t *w,
                       size_t lw)
{
    synth_t *y = s->ctx;
    uint64_t reg_ns = 0;
    zp_wc_t *wc = NULL;
    zp_wc_input_t *inp = NULL;
    int rc = generator(y, t->wasm, &wc, &reg_ns);   /* its time is logged, not in the witness time */
    if (rc) return zp_stage_fail_as(t, rc, wc_class(rc), "witness generator");
    uint64_t t0 = zp_now_ns();
    if ((rc = zp_wc_input_load(&inp, t->wtns))) return zp_stage_fail_as(t, rc, wc_class(rc), "input");
    zp_wc_result_t res;
    rc = zp_wc_calculate(&res, w, lw, wc, inp, &y->lim, -1);
    zp_wc_input_free(&inp);
    t->dt[ZP_DT_WITNESS] = zp_now_ns() - t0;
    if (rc) return zp_stage_fail_as(t, rc, wc_class(rc), "witness");
    if (res.n8 != sizeof(zp_scalar_t)) {
        zp_err_set(ZP_EMISMATCH, "%s: %u-byte witness values, expected %zu", t->wasm, res.n8, sizeof(zp_scalar_t));
        return zp_stage_fail_as(t, ZP_EMISMATCH, ZP_FAIL_INPUT, "witness");
    }
    zp_curve_id_t wcurve = zp_curve_from_r(res.prime, res.n8);
    if (wcurve != curve) {
        zp_err_set(ZP_EMISMATCH, "%s: its prime is not r of %s, the key's curve", t->wasm, zp_curve_name(curve));
        return zp_stage_fail_as(t, ZP_EMISMATCH, ZP_FAIL_INPUT, "witness");
    }
    if (res.n_witness != k->n_vars) {
        zp_err_set(ZP_EMISMATCH, "%s: %u witness values but %s has nVars %u", t->wasm, res.n_witness, t->zkey, k->n_vars);
        return zp_stage_fail_as(t, ZP_EMISMATCH, ZP_FAIL_INPUT, "witness");
    }
    (void)reg_ns;
    t->ok = true;   /* provisionally: work() goes on */
}

static void synth_slot(zp_stage_t *s, zp_stage_task_t *t, const zp_g16_key_t *k, const zp_r1cs_t *r1cs);

/* ---- pre-synthesized partitions (issue 30, lib/fmt/vecs.h): the client's w, a, b, c ---- */
/* the copy of a vectors file into the slot, checked there (what the GPU reads is what was
 * checked): w standard and a, b, c Montgomery, each < r; a[i] * b[i] == c[i] for every row
 * (each row is one constraint's A.w, B.w, C.w: a row that fails is an assignment that does
 * not satisfy the circuit); the rows past abc_size up to the domain zeroed */
/* ---- the slot, one way for every input kind (wtns, vectors file, input.json) ---- */
/* the laid-out slot's w, a, b, c (v[4]), each checked to hold key k's sizes; *lw (may be NULL):
 * w's room. < 0: t failed already. */
static int slot_vectors(zp_stage_t *s, zp_stage_task_t *t, const zp_g16_key_t *k, zp_scalar_t *v[4], size_t *lw)
{
    static const unsigned which[4] = {ZP_SHM_VEC_W, ZP_SHM_VEC_A, ZP_SHM_VEC_B, ZP_SHM_VEC_C};
    for (unsigned i = 0; i < 4; i++) {
        size_t len, need = (size_t)(i ? k->domain_size : k->n_vars) * 32;
        v[i] = zp_shm_slot_vec(s->arena, t->a.slot, which[i], &len);
        if (!v[i] || len < need) {
            zp_stage_fail_as(t, ZP_EFORMAT, ZP_FAIL_TRANSIENT, "slot vectors");
            return ZP_EFORMAT;
        }
        if (!i && lw) *lw = len;
    }
    return 0;
}

/* lays the slot out for key k, then slot_vectors. < 0: t failed already. */
static int slot_open(zp_stage_t *s, zp_stage_task_t *t, const zp_g16_key_t *k, zp_scalar_t *v[4], size_t *lw)
{
    int rc = zp_shm_slot_layout(s->arena, t->a.slot, ZP_SLOT_SYNTH, t->a.gen, k->n_vars, k->domain_size, 32);
    if (rc < 0) {
        if (rc == ZP_ETOOBIG) zp_stage_fail_as(t, rc, ZP_FAIL_INPUT, "circuit larger than the arena's slots");
        else zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot layout");
        return rc;
    }
    return slot_vectors(s, t, k, v, lw);
}

/* seals w, a, b, c (chunked, on the pool) and, with extra = ZP_SHM_PAYLOAD_RS, the caller's
 * r, s written into the descriptor: SYNTH -> READY; t->ok on success */
static void slot_seal(zp_stage_t *s, zp_stage_task_t *t, uint32_t extra)
{
    int rc = zp_shm_payload_seal_pool(s->arena, t->a.slot, ZP_SLOT_SYNTH, t->a.gen,
                                      ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) |
                                          ZP_SHM_VEC_MASK(ZP_SHM_VEC_B) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_C) | extra,
                                      ZP_SLOT_READY, &t->new_gen, s->pool);
    if (rc < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "seal");
    t->ok = true;
}

typedef struct {
    const zp_vecs_t *v;
    zp_scalar_t *w, *a, *b, *c;
    size_t domain;
    zp_curve_id_t curve;
    _Atomic size_t bad_w, bad_abc, bad_row;   /* first index + 1 of each failure, 0 none */
} vecs_job_t;

static bool fr_ok(zp_curve_id_t c, const zp_scalar_t *x)
{
    return c == ZP_CURVE_BN254 ? zp_fr_bn254_is_canonical((const zp_fr_bn254_t *)x)
                               : zp_fr_bls12_381_is_canonical((const zp_fr_bls12_381_t *)x);
}

static bool row_ok(zp_curve_id_t c, const zp_scalar_t *a, const zp_scalar_t *b, const zp_scalar_t *cc)
{
    zp_scalar_t p;
    if (c == ZP_CURVE_BN254)
        zp_fr_bn254_mul((zp_fr_bn254_t *)&p, (const zp_fr_bn254_t *)a, (const zp_fr_bn254_t *)b);
    else
        zp_fr_bls12_381_mul((zp_fr_bls12_381_t *)&p, (const zp_fr_bls12_381_t *)a, (const zp_fr_bls12_381_t *)b);
    return !memcmp(&p, cc, sizeof p);
}

static void note_first(_Atomic size_t *slot, size_t i)
{
    size_t cur = atomic_load(slot);
    while ((cur == 0 || cur > i + 1) && !atomic_compare_exchange_weak(slot, &cur, i + 1)) {}
}

static void vecs_run(void *arg, unsigned tid, unsigned nt)
{
    vecs_job_t *j = arg;
    const zp_vecs_t *v = j->v;
    size_t lo, hi;
    zp_split(v->n_w, tid, nt, &lo, &hi);
    memcpy(j->w + lo, v->w + 4 * lo, (hi - lo) * 32);
    for (size_t i = lo; i < hi; i++)
        if (!fr_ok(j->curve, &j->w[i])) { note_first(&j->bad_w, i); break; }
    zp_split(j->domain, tid, nt, &lo, &hi);
    size_t n = v->abc_size, top = hi < n ? hi : n;
    if (lo < top) {
        memcpy(j->a + lo, v->a + 4 * lo, (top - lo) * 32);
        memcpy(j->b + lo, v->b + 4 * lo, (top - lo) * 32);
        memcpy(j->c + lo, v->c + 4 * lo, (top - lo) * 32);
        for (size_t i = lo; i < top; i++) {
            if (!fr_ok(j->curve, &j->a[i]) || !fr_ok(j->curve, &j->b[i]) || !fr_ok(j->curve, &j->c[i])) {
                note_first(&j->bad_abc, i);
                break;
            }
            if (!row_ok(j->curve, &j->a[i], &j->b[i], &j->c[i])) { note_first(&j->bad_row, i); break; }
        }
    }
    size_t z = lo > n ? lo : n;
    if (z < hi) {
        memset(j->a + z, 0, (hi - z) * 32);
        memset(j->b + z, 0, (hi - z) * 32);
        memset(j->c + z, 0, (hi - z) * 32);
    }
}

/* t->wtns is a vectors file: checked against the key, copied into the slot, sealed */
static void work_vecs(zp_stage_t *s, zp_stage_task_t *t, const zp_g16_key_t *k)
{
    const zp_msg_assign_t *a = &t->a;
    zp_vecs_t v;
    int rc;
    uint64_t t0 = zp_now_ns();
    if ((rc = zp_vecs_open(&v, t->wtns)) < 0) return zp_stage_fail_as(t, rc, wc_class(rc), "vectors");
    if (v.curve != (uint32_t)k->curve || v.n_w != k->n_vars || v.n_inputs != (uint64_t)k->n_public + 1 ||
        v.abc_size > k->domain_size) {
        zp_err_set(ZP_EMISMATCH, "%s: curve %u, n_w %llu, n_inputs %llu, abc_size %llu; %s has curve %u, nVars %u, "
                   "%u inputs, domain %u", t->wtns, v.curve, (unsigned long long)v.n_w, (unsigned long long)v.n_inputs,
                   (unsigned long long)v.abc_size, t->zkey, (unsigned)k->curve, k->n_vars, k->n_public + 1,
                   k->domain_size);
        zp_vecs_close(&v);
        return zp_stage_fail_as(t, ZP_EMISMATCH, ZP_FAIL_INPUT, "vectors");
    }
    /* the caller's blinding (ZP_VECS_F_RS, its checksum checked at open): canonical for the key's
     * curve, then into the slot's rs area, sealed with the vectors; zero is used as given */
    bool has_rs = v.has_rs;
    zp_scalar_t rs[2];
    if (has_rs) {
        memcpy(&rs[0], v.r, 32);
        memcpy(&rs[1], v.s, 32);
        for (int i = 0; i < 2; i++)
            if (!fr_ok(k->curve, &rs[i])) {
                zp_err_set(ZP_EFORMAT, "%s: r/s field: %s is not a canonical %s scalar (standard form, < r)", t->wtns,
                           i ? "s" : "r", zp_curve_name(k->curve));
                zp_vecs_close(&v);
                return zp_stage_fail_as(t, ZP_EFORMAT, ZP_FAIL_INPUT, "vectors");
            }
    }
    zp_scalar_t *sv[4];
    if (slot_open(s, t, k, sv, NULL) < 0) {
        zp_vecs_close(&v);
        return;
    }
    vecs_job_t j = {.v = &v, .w = sv[0], .a = sv[1], .b = sv[2], .c = sv[3], .domain = k->domain_size, .curve = k->curve};
    if ((rc = zp_shm_slot_check(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen)) < 0) {
        zp_vecs_close(&v);
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot");
    }
    zp_pool_run(s->pool, vecs_run, &j);
    zp_vecs_close(&v);
    t->dt[ZP_DT_CHECK] = zp_now_ns() - t0;
    size_t bw = atomic_load(&j.bad_w), ba = atomic_load(&j.bad_abc), br = atomic_load(&j.bad_row);
    if (bw || ba || br) {
        if (bw) zp_err_set(ZP_EFORMAT, "%s: w[%zu] is not a canonical field element (standard form, < r)", t->wtns, bw - 1);
        else if (ba) zp_err_set(ZP_EFORMAT, "%s: a, b or c[%zu] is not a canonical field element (Montgomery, < r)", t->wtns, ba - 1);
        else zp_err_set(ZP_EUNSAT, "%s: row %zu: a * b != c (the assignment does not satisfy the circuit)", t->wtns, br - 1);
        return zp_stage_fail_as(t, bw || ba ? ZP_EFORMAT : ZP_EUNSAT, ZP_FAIL_INPUT, "vectors");
    }
    if (has_rs && (rc = zp_shm_slot_set_rs(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen, (const uint8_t *)&rs[0],
                                           (const uint8_t *)&rs[1])) < 0)
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot");
    slot_seal(s, t, has_rs ? ZP_SHM_PAYLOAD_RS : 0);
}

static void work(zp_stage_t *s, zp_stage_task_t *t)
{
    synth_t *y = s->ctx;
    const zp_msg_assign_t *a = &t->a;
    zp_keyent_t *ke;
    const zp_r1cs_t *r1cs = NULL;
    zp_wtns_t wt;
    int rc;

    uint64_t kid[4], rid[4];

    zp_err_clear();
    if ((rc = zp_stage_arena(s, a->epoch)) < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "arena");
    file_id(t->zkey, kid);   /* before the cache looks: see check_pair */
    if ((rc = zp_keycache_key_r1cs(s->kc, t->zkey, t->r1cs, true, &ke)) < 0) return zp_stage_fail(t, rc, "zkey");
    t->key = ke;   /* the runtime releases it when the task ends */
    /* issue 30: w, a, b, c from the client (any key; a bellman key from a density file too) */
    if (!*t->wasm && zp_vecs_is(t->wtns)) return work_vecs(s, t, &ke->key);
    if (ke->r1cs && ke->key.n_coefs == 0)   /* issue 29: a bellman key laid out from a density file */
        return zp_stage_fail_as(t, zp_err_set(ZP_EFORMAT, "%s: a bellman key imported with a density file (%s), "
                                              "not its r1cs: it has no coefficients, so it proves pre-synthesized "
                                              "vectors only, not a witness (give --r1cs circuit.r1cs)",
                                              t->zkey, ke->r1cs),
                                ZP_FAIL_INPUT, "zkey");
    if (*t->r1cs) {
        file_id(t->r1cs, rid);
        if ((rc = zp_keycache_r1cs(s->kc, t->r1cs, &r1cs)) < 0) return zp_stage_fail(t, rc, "r1cs");
        /* a bellman key was laid out from this very r1cs (the key cache keys it by both files) */
        if (!ke->r1cs && (rc = check_pair(y, r1cs, ke, rid, kid)) < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_INPUT, "r1cs");
    }
    const zp_g16_key_t *k = &ke->key;
    if (*t->wasm) {   /* issue 28: computed from the input.json into the slot */
        zp_scalar_t *sv[4];
        size_t lw;
        if (slot_open(s, t, k, sv, &lw) < 0) return;
        work_input(s, t, k, ke->zkey.curve, sv[0], lw);
        if (!t->ok) return;
        t->ok = false;
        return synth_slot(s, t, k, r1cs);
    }
    /* values unchecked here: zp_g16_synth_ctx checks the copy in the slot on the pool (the copy
     * is what the proof reads; the file could change between a check and the copy) */
    if ((rc = zp_wtns_open_unchecked(&wt, t->wtns)) < 0) return zp_stage_fail(t, rc, "witness");
    if ((rc = zp_check_wtns_zkey(&wt, &ke->zkey)) < 0) {
        zp_wtns_close(&wt);
        return zp_stage_fail_as(t, rc, ZP_FAIL_INPUT, "witness");
    }
    if (wt.n8 != sizeof(zp_scalar_t)) {
        zp_err_set(ZP_EFORMAT, "%u-byte witness values, expected %zu", wt.n8, sizeof(zp_scalar_t));
        zp_wtns_close(&wt);
        return zp_stage_fail_as(t, ZP_EFORMAT, ZP_FAIL_INPUT, "witness");
    }
    zp_scalar_t *sv[4];
    if (slot_open(s, t, k, sv, NULL) < 0) {
        zp_wtns_close(&wt);
        return;
    }
    copy_job_t cj = {sv[0], wt.values, (size_t)k->n_vars * 32};
    zp_pool_run(s->pool, copy_run, &cj);
    zp_wtns_close(&wt);
    synth_slot(s, t, k, r1cs);
}

/* w is in the slot: a, b, c and the seal */
static void synth_slot(zp_stage_t *s, zp_stage_task_t *t, const zp_g16_key_t *k, const zp_r1cs_t *r1cs)
{
    synth_t *y = s->ctx;
    const zp_msg_assign_t *a = &t->a;
    int rc;
    zp_scalar_t *sv[4];
    if (slot_vectors(s, t, k, sv, NULL) < 0) return;
    if ((rc = zp_shm_slot_check(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen)) < 0)
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot");
    uint64_t t0 = zp_now_ns();
    rc = zp_g16_synth_ctx(&y->sc, k, sv[0], r1cs, sv[1], sv[2], sv[3], s->pool);
    t->dt[ZP_DT_CHECK] = zp_now_ns() - t0;
    if (rc < 0) return zp_stage_fail(t, rc, "synth");
    slot_seal(s, t, 0);
}

static int init(zp_stage_t *s)
{
    synth_t *y = s->ctx;
    zp_g16_synth_ctx_init(&y->sc);
    if (!y->wasm_cache[0]) {   /* the broker's state directory rules (broker/journal.c), + /wasm */
        const char *e;
        int n;
        if ((e = getenv("ZP_STATE_DIR")) && *e) n = snprintf(y->wasm_cache, sizeof y->wasm_cache, "%s/wasm", e);
        else if ((e = getenv("XDG_STATE_HOME")) && *e) n = snprintf(y->wasm_cache, sizeof y->wasm_cache, "%s/zkpipe/wasm", e);
        else if ((e = getenv("HOME")) && *e) n = snprintf(y->wasm_cache, sizeof y->wasm_cache, "%s/.local/state/zkpipe/wasm", e);
        else n = snprintf(y->wasm_cache, sizeof y->wasm_cache, "%s/wasm", s->rundir);
        if (n < 0 || (size_t)n >= sizeof y->wasm_cache) {
            fprintf(stderr, "zkpipe-synth: the wasm cache path is too long (set --wasm-cache)\n");
            return 2;
        }
    }
    return -1;
}

enum { OPT_WASM_CACHE = 3001, OPT_WTIMEOUT = 3002, OPT_WMEM = 3003 };
static const struct option k_opts[] = {{"wasm-cache", 1, 0, OPT_WASM_CACHE}, {"witness-timeout-ms", 1, 0, OPT_WTIMEOUT},
                                       {"witness-max-memory-mib", 1, 0, OPT_WMEM}, {0, 0, 0, 0}};

static int opt(zp_stage_t *s, int c, const char *arg)
{
    synth_t *y = s->ctx;
    char *end;
    unsigned long long v;
    switch (c) {
    case OPT_WASM_CACHE:
        if (!*arg || snprintf(y->wasm_cache, sizeof y->wasm_cache, "%s", arg) >= (int)sizeof y->wasm_cache) {
            fprintf(stderr, "zkpipe-synth: --wasm-cache: empty or too long\n");
            return 2;
        }
        return -1;
    case OPT_WTIMEOUT:
    case OPT_WMEM:
        errno = 0;
        v = strtoull(arg, &end, 10);
        if (errno || *end || !*arg || v == 0 || v > (c == OPT_WTIMEOUT ? 86400000ull : 4096ull)) {
            fprintf(stderr, "zkpipe-synth: --%s must be an integer in [1, %s], got '%s'\n",
                    c == OPT_WTIMEOUT ? "witness-timeout-ms" : "witness-max-memory-mib",
                    c == OPT_WTIMEOUT ? "86400000" : "4096", arg);
            return 2;
        }
        if (c == OPT_WTIMEOUT) y->lim.timeout_ms = (uint32_t)v;
        else y->lim.mem_bytes = v << 20;
        return -1;
    }
    return 2;
}

int main(int argc, char **argv)
{
    /* registration (wasm2c + cc) under 9 minutes: it fails cleanly before the synth's lease (the
     * broker adds 10 minutes for jobs with inputs, broker/slots.c) would end the process */
    static synth_t Y = {.lim = {.timeout_ms = 120000, .compile_timeout_ms = 540000}};
    static const zp_stage_def_t def = {.role = ZP_ROLE_SYNTH, .prog = "zkpipe-synth", .log_role = "synth",
                                       .credits = 2, .caps = ZP_CAP_R1CS_CHECK, .init = init, .work = work,
                                       .opts = k_opts, .opt = opt,
                                       .usage_args = "[--wasm-cache DIR] [--witness-timeout-ms N] [--witness-max-memory-mib N]",
                                       .usage_text = "--wasm-cache: where registered witness generators are kept (default\n"
                                                     "  <state dir>/wasm); --witness-timeout-ms: per witness (default 120000);\n"
                                                     "  --witness-max-memory-mib: the wasm's memory cap (default 4096)\n",
                                       .ctx = &Y};
    return zp_stage_run(&def, argc, argv);
}
