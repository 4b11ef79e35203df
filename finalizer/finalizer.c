/* finalizer.c - the finalizer daemon (zkpipe-finalizer): PROVED slot -> checked proof.
 *
 * NOTES
 * Per task (work thread): check the slot is (FINALIZING, gen); read the GPU's four G1 points
 * from the result area with the generation its commit produced (a late or torn write by a
 * stale owner is refused); verify the synth's sealed payload (w is read from the slot);
 * zp_g16_finalize: G2 MSM for B, blinding with fresh r, s, assembly and the pairing check
 * against the key's verification key (a bad proof never leaves: ZP_EVERIFY; the broker redoes
 * the partition from synthesis once, and a second failure is an input error: doc/slot-protocol.md). The proof (proof.json / public.json text in the
 * extent, the compressed binary in the proof area: zp_shm_final_commit) is committed into the
 * slot, which moves it to FINISHED (fenced); the same goes to the broker in DONE, and the broker
 * frees the slot after journaling the proof (or journals it from the slot after a restart).
 * A bellman key (k->conv, issue 29 item 4: a .params kept compacted at import) is finalized the
 * same way (the G2 MSM over B's scalars gathered from w, assembly and check against its own vk); its binary proof is bellman's
 * Proof::write (192 bytes), written by the key's conventions table.
 * The blinding: a pre-synthesized partition that brought its caller's r and s (libzkpipe_c2:
 * supraseal-c2's r_s[i], s_s[i]; lib/fmt/vecs.h ZP_VECS_F_RS) has them in the slot's rs area,
 * sealed with the vectors (ZP_SHM_PAYLOAD_RS): the finalizer takes them from the copy that the
 * payload checksum covered, as given (zero included, as supraseal does); every other partition
 * gets fresh r, s from the OS CSPRNG.
 * Test hook: ZP_TEST_FIXED_RS=1 with ZP_TEST_R and ZP_TEST_S (decimal) in the finalizer's
 * environment fixes the blinding of partitions without the caller's (tests compare with `zkpipe
 * prove --r --s`); logged loudly.
 * Options, signals, key cache, loop: the stage runtime (stage/stage.h).
 * Tests: tests/ipc/ (bellman: tests/ipc/bellman_submit.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/groth16/assignment.h"
#include "lib/groth16/groth16.h"
#include "lib/util/util.h"
#include "stage/stage.h"

typedef struct {
    zp_g16_fin_ctx_t fin_ctx;   /* G2 MSM scratch, grown once, reused by every partition
                                   (work() runs on the single stage work thread) */
    char (*sig)[100];           /* public signals as decimals, grown to the largest key seen */
    size_t sig_cap;
    unsigned test_extra_ms;     /* $ZP_TEST_FINAL_EXTRA_MS: each task takes this much longer (tests only) */
    const char *test_r, *test_s;/* $ZP_TEST_FIXED_RS=1: $ZP_TEST_R, $ZP_TEST_S (tests only) */
} fin_t;

/* f->sig with room for n signals (grown, never shrunk: no allocation per partition) */
static int sig_room(fin_t *f, size_t n)
{
    if (n <= f->sig_cap && f->sig) return 0;
    void *p = realloc(f->sig, (n ? n : 1) * sizeof *f->sig);
    if (!p) return -ENOMEM;
    f->sig = p;
    f->sig_cap = n ? n : 1;
    return 0;
}

static bool scalar_ok(zp_curve_id_t c, const zp_scalar_t *x)
{
    return c == ZP_CURVE_BN254 ? zp_fr_bn254_is_canonical((const zp_fr_bn254_t *)x)
                               : zp_fr_bls12_381_is_canonical((const zp_fr_bls12_381_t *)x);
}

static void work(zp_stage_t *s, zp_stage_task_t *t)
{
    fin_t *f = s->ctx;
    const zp_msg_assign_t *a = &t->a;
    zp_keyent_t *ke;
    int rc;

    zp_err_clear();
    if (f->test_extra_ms) usleep(f->test_extra_ms * 1000u);   /* test hook: a slow finalizer (tests/ipc/up_resize.sh) */
    if ((rc = zp_stage_arena(s, a->epoch)) < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "arena");
    if ((rc = zp_keycache_key_r1cs(s->kc, t->zkey, t->r1cs, true, &ke)) < 0) return zp_stage_fail(t, rc, "zkey");
    t->key = ke;   /* the runtime releases it when the task ends */
    const zp_g16_key_t *k = &ke->key;
    if ((rc = zp_shm_slot_check(s->arena, a->slot, ZP_SLOT_FINALIZING, a->gen)) < 0)
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "slot");
    zp_g1_any_t part[ZP_G16_NMSM];
    size_t len = 0;
    if ((rc = zp_shm_area_read(s->arena, a->slot, ZP_SHM_AREA_RESULT, a->in_gen, part, sizeof part, &len)) < 0 ||
        len != sizeof part) {
        /* the G1 result is unusable: redo the partition (not ZP_EVERIFY: the broker reads that as a
         * failed pairing check, and a second one as an input error) */
        zp_stage_fail_as(t, rc < 0 ? rc : ZP_EFORMAT, ZP_FAIL_TRANSIENT, "G1 result area");
        t->payload_bad = true;
        return;
    }
    uint64_t t0 = zp_now_ns();
    zp_shm_rs_t crs;   /* the caller's r, s (issue 30): our copy, the one the checksum covered */
    bool caller_rs = false;
    if ((rc = zp_shm_payload_verify_rs(s->arena, a->slot, a->payload_gen, s->pool, &crs, &caller_rs)) < 0) {
        zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "synthesized payload");
        t->payload_bad = true;
        return;
    }
    t->dt[ZP_DT_VERIFY_IN] = zp_now_ns() - t0;
    size_t lw;
    const zp_scalar_t *w = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_W, &lw);
    if (!w || lw < (size_t)k->n_vars * sizeof(zp_scalar_t)) {
        zp_stage_fail_as(t, ZP_EFORMAT, ZP_FAIL_TRANSIENT, "witness vector");
        t->payload_bad = true;
        return;
    }
    zp_g16_proof_t proof;
    zp_g16_fin_times_t ft;
    memset(&ft, 0, sizeof ft);
    zp_scalar_t rs[2];
    bool fixed = f->test_r && f->test_s;
    if (caller_rs) {   /* a pre-synthesized partition's own blinding (sealed with the vectors) */
        memcpy(&rs[0], crs.r, 32);
        memcpy(&rs[1], crs.s, 32);
        if (!scalar_ok(k->curve, &rs[0]) || !scalar_ok(k->curve, &rs[1])) {
            zp_err_set(ZP_EFORMAT, "slot %u: the caller's r/s field is not canonical for %s", a->slot,
                       zp_curve_name(k->curve));
            zp_stage_fail_as(t, ZP_EFORMAT, ZP_FAIL_TRANSIENT, "caller's r, s");
            t->payload_bad = true;
            return;
        }
        fixed = true;
    } else if (fixed && ((rc = zp_g16_scalar_from_dec(&rs[0], k->curve, f->test_r)) < 0 ||
                  (rc = zp_g16_scalar_from_dec(&rs[1], k->curve, f->test_s)) < 0))
        return zp_stage_fail_as(t, rc, ZP_FAIL_INPUT, "ZP_TEST_R/ZP_TEST_S");
    if ((rc = zp_g16_finalize_ctx(&f->fin_ctx, k, w, part, fixed ? &rs[0] : NULL, fixed ? &rs[1] : NULL, &proof,
                                  s->pool, &ft)) < 0)
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, rc == ZP_EVERIFY ? "proof failed its pairing check" : "finalize");
    t->dt[ZP_DT_MSM_G2] = ft.msm_g2_ns;
    t->dt[ZP_DT_CHECK] = ft.check_ns;

    /* the JSON texts, from the slot's w, before the commit frees the slot */
    zp_proof_json_t pj;
    size_t cap = 4096 + (size_t)k->n_public * 110;
    /* the two texts go to the runtime (it frees them after DONE): O(n_public), not O(n) */
    t->proof_json = malloc(4096);
    t->public_json = malloc(cap);
    if (sig_room(f, k->n_public) < 0 || !t->proof_json || !t->public_json)
        return zp_stage_fail_as(t, -ENOMEM, ZP_FAIL_TRANSIENT, "memory");
    char (*sig)[100] = f->sig;
    if ((rc = zp_g16_proof_to_json(&pj, &proof)) < 0 || (rc = zp_g16_public_to_json(sig, k, w)) < 0)
        return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "encoding");
    size_t n1 = zp_proof_json_format(t->proof_json, 4096, &pj);
    size_t n2 = zp_public_json_format(t->public_json, cap, sig, k->n_public);
    if (!n1 || n1 >= 4096 || !n2 || n2 >= cap || n1 > ZP_MSG_JSON_MAX || n2 > ZP_MSG_JSON_MAX) {
        zp_err_set(ZP_ETOOBIG, "proof.json %zu / public.json %zu bytes", n1, n2);
        return zp_stage_fail_as(t, ZP_ETOOBIG, ZP_FAIL_INPUT, "encoding");
    }
    const zp_g16_conv_t *conv = zp_g16_conv((zp_g16_conv_id_t)k->conv);   /* bound keys carry a known id */
    if (!conv || (rc = conv->proof_encode(t->proof_bin, sizeof t->proof_bin, &t->proof_bin_len, &proof)) < 0) {
        t->proof_bin_len = 0;
        return zp_stage_fail_as(t, rc < 0 ? rc : ZP_ETOOBIG, ZP_FAIL_TRANSIENT, "binary proof");
    }
    /* FINALIZING -> FINISHED with the proof kept in the slot: the broker frees the slot once it
     * has journaled the proof (a DONE lost to a broker restart is recovered from the slot). */
    rc = zp_shm_final_commit(s->arena, a->slot, a->gen, t->proof_json, n1, t->public_json, n2, t->proof_bin,
                             t->proof_bin_len, &t->new_gen);
    if (rc == ZP_ETOOBIG) {
        /* no room after the vectors (a slot sized exactly for its circuit): the proof goes in
         * DONE only and the slot is freed now, as before FINISHED existed */
        zp_log(ZP_LOG_WARN, "job %llu part %u: %s: freeing the slot without keeping the proof in it",
               (unsigned long long)a->job, a->part, zp_err_msg());
        rc = zp_shm_commit(s->arena, a->slot, ZP_SLOT_FINALIZING, a->gen, ZP_SLOT_FREE, ZP_SHM_AREA_PROOF,
                           t->proof_bin, t->proof_bin_len, &t->new_gen);
    }
    if (rc < 0) return zp_stage_fail_as(t, rc, ZP_FAIL_TRANSIENT, "commit");
    t->ok = true;
}

static int init(zp_stage_t *s)
{
    fin_t *f = s->ctx;
    zp_g16_fin_ctx_init(&f->fin_ctx);
    const char *x = getenv("ZP_TEST_FINAL_EXTRA_MS");
    if (x && *x) {
        char *e;
        unsigned long v = strtoul(x, &e, 10);
        if (!*e && v <= 60000) f->test_extra_ms = (unsigned)v;
        else zp_log(ZP_LOG_WARN, "ZP_TEST_FINAL_EXTRA_MS='%s' ignored: expected 0..60000", x);
    }
    x = getenv("ZP_TEST_FIXED_RS");
    if (x && !strcmp(x, "1") && getenv("ZP_TEST_R") && getenv("ZP_TEST_S")) {
        f->test_r = getenv("ZP_TEST_R");
        f->test_s = getenv("ZP_TEST_S");
        zp_log(ZP_LOG_WARN, "TEST HOOK: every proof uses the fixed blinding r=%s s=%s (ZP_TEST_FIXED_RS): not zero-knowledge",
               f->test_r, f->test_s);
    }
    snprintf(s->name, sizeof s->name, "finalizer %u thread(s)", zp_pool_size(s->pool));
    return -1;
}

static void fini(zp_stage_t *s)
{
    fin_t *f = s->ctx;
    zp_g16_fin_ctx_close(&f->fin_ctx);
    free(f->sig);
    f->sig = NULL;
    f->sig_cap = 0;
}

int main(int argc, char **argv)
{
    static fin_t F;
    /* credits 1: a queued task would hold a slot idle */
    static const zp_stage_def_t def = {.role = ZP_ROLE_FINAL, .prog = "zkpipe-finalizer", .log_role = "finalizer",
                                       .credits = 1, .init = init, .work = work, .fini = fini, .ctx = &F};
    return zp_stage_run(&def, argc, argv);
}
