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
 * Failure classes: errors in the job's inputs (missing file, wrong curve, bad witness, a
 * circuit larger than the arena's slots) are INPUT; anything else (memory, a stale slot) is
 * TRANSIENT. Tests: tests/ipc/. */
#include <stdio.h>
#include <string.h>

#include "lib/groth16/groth16.h"
#include "lib/util/util.h"
#include "stage/stage.h"

static void work(zp_stage_t *s, zp_stage_task_t *t)
{
    const zp_msg_assign_t *a = &t->a;
    zp_keyent_t *ke;
    const zp_r1cs_t *r1cs = NULL;
    zp_wtns_t wt;
    int rc;

    zp_err_clear();
    if ((rc = zp_stage_arena(s, a->epoch)) < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "arena");
    if ((rc = zp_keycache_key(s->kc, t->zkey, true, &ke)) < 0) return zp_stage_fail(t, rc, "zkey");
    if (*t->r1cs) {
        if ((rc = zp_keycache_r1cs(s->kc, t->r1cs, &r1cs)) < 0) return zp_stage_fail(t, rc, "r1cs");
        if ((rc = zp_check_r1cs_zkey(r1cs, &ke->zkey)) < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_INPUT, "r1cs");
    }
    if ((rc = zp_wtns_open(&wt, t->wtns)) < 0) return zp_stage_fail(t, rc, "witness");
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
    memcpy(w, wt.values, (size_t)k->n_vars * 32);
    zp_wtns_close(&wt);
    if ((rc = zp_shm_slot_check(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen)) < 0)
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot");
    uint64_t t0 = zp_now_ns();
    rc = zp_g16_synth(k, w, r1cs, va, vb, vc, s->pool);
    t->dt[ZP_DT_CHECK] = zp_now_ns() - t0;
    if (rc < 0) return zp_stage_fail(t, rc, "synth");
    rc = zp_shm_payload_seal_pool(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen,
                                  ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) |
                                      ZP_SHM_VEC_MASK(ZP_SHM_VEC_B) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_C),
                                  ZP_SLOT_READY, &t->new_gen, s->pool);   /* chunked, on the pool */
    if (rc < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "seal");
    t->ok = true;
}

int main(int argc, char **argv)
{
    static const zp_stage_def_t def = {.role = ZP_ROLE_SYNTH, .prog = "zkpipe-synth", .log_role = "synth",
                                       .credits = 2, .caps = ZP_CAP_R1CS_CHECK, .work = work};
    return zp_stage_run(&def, argc, argv);
}
