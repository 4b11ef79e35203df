/* finalizer.c - the finalizer daemon (zkpipe-finalizer): PROVED slot -> checked proof.
 *
 * NOTES
 * Per task (work thread): check the slot is (FINALIZING, gen); read the GPU's four G1 points
 * from the result area with the generation its commit produced (a late or torn write by a
 * stale owner is refused); verify the synth's sealed payload (w is read from the slot);
 * zp_g16_finalize: G2 MSM for B, blinding with fresh r, s, assembly and the pairing check
 * against the key's verification key (a bad proof never leaves: ZP_EVERIFY, and the broker
 * sends the partition back to the GPU stage). The proof (proof.json / public.json text in the
 * extent, the compressed binary in the proof area: zp_shm_final_commit) is committed into the
 * slot, which moves it to FINISHED (fenced); the same goes to the broker in DONE, and the broker
 * frees the slot after journaling the proof (or journals it from the slot after a restart).
 * Tests: tests/ipc/. */
#include <bsd/unistd.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/groth16/groth16.h"
#include "lib/util/util.h"
#include "proto/peer.h"
#include "shm/shm.h"

typedef struct {
    char arena_name[ZP_SHM_NAME_MAX + 1];
    zp_shm_t *arena;
    zp_keycache_t *kc;
    zp_pool_t *pool;
    zp_g16_fin_ctx_t fin_ctx;   /* G2 MSM scratch, grown once, reused by every partition
                                   (work() runs on the single stage work thread) */
} fin_t;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }
static void set_title(const char *t) { setproctitle("%s", t); }

static int ensure_arena(fin_t *f, uint64_t epoch)
{
    if (f->arena && zp_shm_epoch(f->arena) == epoch) return 0;
    zp_shm_close(&f->arena);
    int rc = zp_shm_open(&f->arena, f->arena_name, NULL, epoch);
    return rc < 0 ? zp_err_set(rc, "arena %s: %s", f->arena_name, zp_err_msg()) : 0;
}

static void fail(zp_stage_task_t *t, int code, bool retryable, const char *what)
{
    const char *m = zp_err_msg();
    t->ok = false;
    t->code = code;
    t->retryable = retryable;
    snprintf(t->msg, sizeof t->msg, "%s: %s%s%s", what, zp_strerror(code), *m ? ": " : "", m);
}

static void work(void *ctx, zp_stage_task_t *t)
{
    fin_t *f = ctx;
    const zp_msg_assign_t *a = &t->a;
    zp_keyent_t *ke;
    int rc;

    zp_err_clear();
    if ((rc = ensure_arena(f, a->epoch)) < 0) return fail(t, rc, true, "arena");
    if ((rc = zp_keycache_key(f->kc, t->zkey, true, &ke)) < 0) return fail(t, rc, rc != ZP_EFORMAT && rc != -ENOENT, "zkey");
    const zp_g16_key_t *k = &ke->key;
    if ((rc = zp_shm_slot_check(f->arena, a->slot, ZP_SLOT_FINALIZING, a->gen)) < 0) return fail(t, rc, true, "slot");
    zp_g1_any_t part[ZP_G16_NMSM];
    size_t len = 0;
    if ((rc = zp_shm_area_read(f->arena, a->slot, ZP_SHM_AREA_RESULT, a->in_gen, part, sizeof part, &len)) < 0 ||
        len != sizeof part) {
        /* the G1 result is unusable: the GPU stage must run again */
        fail(t, rc < 0 ? rc : ZP_EFORMAT, true, "G1 result area");
        t->code = ZP_EVERIFY;
        return;
    }
    uint64_t t0 = zp_now_ns();
    if ((rc = zp_shm_payload_verify(f->arena, a->slot, a->payload_gen)) < 0) {
        fail(t, rc, true, "synthesized payload");
        t->payload_bad = true;
        return;
    }
    t->dt[ZP_DT_VERIFY_IN] = zp_now_ns() - t0;
    size_t lw;
    const zp_scalar_t *w = zp_shm_slot_vec(f->arena, a->slot, ZP_SHM_VEC_W, &lw);
    if (!w || lw < (size_t)k->n_vars * sizeof(zp_scalar_t)) {
        fail(t, ZP_EFORMAT, true, "witness vector");
        t->payload_bad = true;
        return;
    }
    zp_g16_proof_t proof;
    zp_g16_fin_times_t ft;
    memset(&ft, 0, sizeof ft);
    if ((rc = zp_g16_finalize_ctx(&f->fin_ctx, k, w, part, NULL, NULL, &proof, f->pool, &ft)) < 0)
        return fail(t, rc, true, rc == ZP_EVERIFY ? "proof failed its pairing check" : "finalize");
    t->dt[ZP_DT_MSM_G2] = ft.msm_g2_ns;
    t->dt[ZP_DT_CHECK] = ft.check_ns;

    /* the JSON texts, from the slot's w, before the commit frees the slot */
    zp_proof_json_t pj;
    char (*sig)[100] = calloc(k->n_public ? k->n_public : 1, sizeof *sig);
    size_t cap = 4096 + (size_t)k->n_public * 110;
    t->proof_json = malloc(4096);
    t->public_json = malloc(cap);
    if (!sig || !t->proof_json || !t->public_json) { free(sig); return fail(t, -ENOMEM, true, "memory"); }
    if ((rc = zp_g16_proof_to_json(&pj, &proof)) < 0 || (rc = zp_g16_public_to_json(sig, k, w)) < 0) {
        free(sig);
        return fail(t, rc, true, "encoding");
    }
    size_t n1 = zp_proof_json_format(t->proof_json, 4096, &pj);
    size_t n2 = zp_public_json_format(t->public_json, cap, sig, k->n_public);
    free(sig);
    if (!n1 || n1 >= 4096 || !n2 || n2 >= cap || n1 > ZP_MSG_JSON_MAX || n2 > ZP_MSG_JSON_MAX) {
        zp_err_set(ZP_ETOOBIG, "proof.json %zu / public.json %zu bytes", n1, n2);
        return fail(t, ZP_ETOOBIG, false, "encoding");
    }
    t->proof_bin_len = zp_g16_proof_bin_size(k->curve);
    if (t->proof_bin_len > sizeof t->proof_bin || (rc = zp_g16_proof_to_bin(t->proof_bin, &proof)) < 0) {
        t->proof_bin_len = 0;
        return fail(t, rc < 0 ? rc : ZP_ETOOBIG, true, "binary proof");
    }
    /* FINALIZING -> FINISHED with the proof kept in the slot: the broker frees the slot once it
     * has journaled the proof (a DONE lost to a broker restart is recovered from the slot). */
    rc = zp_shm_final_commit(f->arena, a->slot, a->gen, t->proof_json, n1, t->public_json, n2, t->proof_bin,
                             t->proof_bin_len, &t->new_gen);
    if (rc == ZP_ETOOBIG) {
        /* no room after the vectors (a slot sized exactly for its circuit): the proof goes in
         * DONE only and the slot is freed now, as before FINISHED existed */
        zp_log(ZP_LOG_WARN, "job %llu part %u: %s: freeing the slot without keeping the proof in it",
               (unsigned long long)a->job, a->part, zp_err_msg());
        rc = zp_shm_commit(f->arena, a->slot, ZP_SLOT_FINALIZING, a->gen, ZP_SLOT_FREE, ZP_SHM_AREA_PROOF,
                           t->proof_bin, t->proof_bin_len, &t->new_gen);
    }
    if (rc < 0) return fail(t, rc, true, "commit");
    t->ok = true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: zkpipe-finalizer [--runtime-dir DIR] [--arena NAME] [--instance N] [--credits N]\n"
               "                        [--threads N] [--heartbeat-ms MS]\n"
               ZP_KEYOPTS_USAGE);
}

int main(int argc, char **argv, char **envp)
{
    static fin_t F;
    /* credits 1: a queued task would hold a slot idle */
    zp_stage_opts_t o = {.prog = "zkpipe-finalizer", .arena = "default", .credits = 1, .hb = 500};
    char name[64];
    int ex;

    setproctitle_init(argc, argv, envp);
    zp_log_init("finalizer");
    if ((ex = zp_stage_opts_parse(&o, argc, argv, usage)) >= 0) return ex;
    if (zp_shm_default_name(F.arena_name, sizeof F.arena_name, o.arena) < 0) {
        fprintf(stderr, "zkpipe-finalizer: %s\n", zp_err_msg());
        return 1;
    }
    if ((ex = zp_stage_keys_setup(&o, F.arena_name, &F.kc, &F.pool, zp_keystore_get, zp_keystore_release)) >= 0)
        return ex;
    zp_g16_fin_ctx_init(&F.fin_ctx);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    snprintf(name, sizeof name, "finalizer %u thread(s)", zp_pool_size(F.pool));
    zp_stage_def_t def = {.role = ZP_ROLE_FINAL, .instance = o.instance, .credits = o.credits, .name = name,
                          .endpoint = o.endpoint, .heartbeat_ms = (int)o.hb, .ctx = &F, .work = work,
                          .set_title = set_title, .stop = &g_stop};
    int rc = zp_stage_main(&def);
    if (rc < 0) fprintf(stderr, "zkpipe-finalizer: %s %s\n", zp_strerror(rc), zp_err_msg());
    zp_g16_fin_ctx_close(&F.fin_ctx);
    zp_keycache_destroy(&F.kc);
    zp_pool_destroy(&F.pool);
    zp_shm_close(&F.arena);
    return rc < 0 ? 1 : 0;
}
