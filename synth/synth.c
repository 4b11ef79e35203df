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
 * Failure classes: errors in the job's inputs (missing file, wrong curve, bad witness, a
 * circuit larger than the arena's slots) are INPUT; anything else (memory, a stale slot) is
 * TRANSIENT. Tests: tests/ipc/. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
    if ((rc = zp_keycache_key(s->kc, t->zkey, true, &ke)) < 0) return zp_stage_fail(t, rc, "zkey");
    t->key = ke;   /* the runtime releases it when the task ends */
    if (*t->r1cs) {
        file_id(t->r1cs, rid);
        if ((rc = zp_keycache_r1cs(s->kc, t->r1cs, &r1cs)) < 0) return zp_stage_fail(t, rc, "r1cs");
        if ((rc = check_pair(y, r1cs, ke, rid, kid)) < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_INPUT, "r1cs");
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
    const zp_g16_key_t *k = &ke->key;
    rc = zp_shm_slot_layout(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen, k->n_vars, k->domain_size, 32);
    if (rc < 0) {
        zp_wtns_close(&wt);
        if (rc == ZP_ETOOBIG) return zp_stage_fail_as(t, rc, ZP_FAIL_INPUT, "circuit larger than the arena's slots");
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot layout");
    }
    size_t lw, la, lb, lc;
    zp_scalar_t *w = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_W, &lw);
    zp_scalar_t *va = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_A, &la);
    zp_scalar_t *vb = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_B, &lb);
    zp_scalar_t *vc = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_C, &lc);
    if (!w || !va || !vb || !vc || lw < (size_t)k->n_vars * 32 || la < (size_t)k->domain_size * 32 ||
        lb < (size_t)k->domain_size * 32 || lc < (size_t)k->domain_size * 32) {
        zp_wtns_close(&wt);
        return zp_stage_fail_as(t, ZP_EFORMAT, ZP_FAIL_TRANSIENT, "slot vectors");
    }
    copy_job_t cj = {w, wt.values, (size_t)k->n_vars * 32};
    zp_pool_run(s->pool, copy_run, &cj);
    zp_wtns_close(&wt);
    if ((rc = zp_shm_slot_check(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen)) < 0)
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot");
    uint64_t t0 = zp_now_ns();
    rc = zp_g16_synth_ctx(&y->sc, k, w, r1cs, va, vb, vc, s->pool);
    t->dt[ZP_DT_CHECK] = zp_now_ns() - t0;
    if (rc < 0) return zp_stage_fail(t, rc, "synth");
    rc = zp_shm_payload_seal_pool(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen,
                                  ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) |
                                      ZP_SHM_VEC_MASK(ZP_SHM_VEC_B) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_C),
                                  ZP_SLOT_READY, &t->new_gen, s->pool);   /* chunked, on the pool */
    if (rc < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "seal");
    t->ok = true;
}

static int init(zp_stage_t *s)
{
    synth_t *y = s->ctx;
    zp_g16_synth_ctx_init(&y->sc);
    return -1;
}

int main(int argc, char **argv)
{
    static synth_t Y;
    static const zp_stage_def_t def = {.role = ZP_ROLE_SYNTH, .prog = "zkpipe-synth", .log_role = "synth",
                                       .credits = 2, .caps = ZP_CAP_R1CS_CHECK, .init = init, .work = work,
                                       .ctx = &Y};
    return zp_stage_run(&def, argc, argv);
}
