/* synth.c - the synthesizer daemon (zkpipe-synth): witness -> a, b, c in a shared-memory slot.
 *
 * NOTES
 * The stage-worker harness (proto/peer.h) runs the zmq loop and heartbeats on the main
 * thread; work() below runs on the work thread: it opens the zkey (cached per process by
 * path), reads the witness, checks that they belong together, writes w into the slot, runs
 * zp_g16_synth into the slot's a, b, c (with the r1cs when the job has one: a witness that
 * does not satisfy the circuit fails the partition for good, naming the constraint), and
 * seals the payload (checksum + CAS SYNTH(g) -> READY(g+1)). Every write is fenced: the slot
 * word is re-checked between steps and the seal fails if the broker moved the slot.
 * Errors in the job's inputs (missing file, wrong curve, bad witness) are not retryable;
 * anything else (memory, a stale slot) is. Tests: tests/ipc/. */
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
} synth_t;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }
static void set_title(const char *t) { setproctitle("%s", t); }

static int ensure_arena(synth_t *s, uint64_t epoch)
{
    if (s->arena && zp_shm_epoch(s->arena) == epoch) return 0;
    zp_shm_close(&s->arena);
    int rc = zp_shm_open(&s->arena, s->arena_name, NULL, epoch);
    if (rc < 0) return zp_err_set(rc, "arena %s (epoch %016llx): %s", s->arena_name, (unsigned long long)epoch,
                                  zp_err_msg());
    return 0;
}

static void fail(zp_stage_task_t *t, int code, bool retryable, const char *what)
{
    t->ok = false;
    t->code = code;
    t->retryable = retryable;
    const char *m = zp_err_msg();
    snprintf(t->msg, sizeof t->msg, "%s: %s%s%s", what, zp_strerror(code), *m ? ": " : "", m);
}

static bool input_error(int rc)
{
    return rc == ZP_EFORMAT || rc == ZP_EMISMATCH || rc == ZP_ECURVE || rc == ZP_EVERSION || rc == ZP_EUNSAT ||
           rc == ZP_ETOOBIG || rc == -ENOENT || rc == -EACCES || rc == -EISDIR;
}

static void work(void *ctx, zp_stage_task_t *t)
{
    synth_t *s = ctx;
    const zp_msg_assign_t *a = &t->a;
    zp_keyent_t *ke;
    const zp_r1cs_t *r1cs = NULL;
    zp_wtns_t wt;
    int rc;

    zp_err_clear();
    if ((rc = ensure_arena(s, a->epoch)) < 0) return fail(t, rc, true, "arena");
    if ((rc = zp_keycache_key(s->kc, t->zkey, true, &ke)) < 0) return fail(t, rc, !input_error(rc), "zkey");
    if (*t->r1cs) {
        if ((rc = zp_keycache_r1cs(s->kc, t->r1cs, &r1cs)) < 0) return fail(t, rc, !input_error(rc), "r1cs");
        if ((rc = zp_check_r1cs_zkey(r1cs, &ke->zkey)) < 0) return fail(t, rc, false, "r1cs");
    }
    if ((rc = zp_wtns_open(&wt, t->wtns)) < 0) return fail(t, rc, !input_error(rc), "witness");
    if ((rc = zp_check_wtns_zkey(&wt, &ke->zkey)) < 0) { zp_wtns_close(&wt); return fail(t, rc, false, "witness"); }
    if (wt.n8 != sizeof(zp_scalar_t)) {
        zp_err_set(ZP_EFORMAT, "%u-byte witness values, expected %zu", wt.n8, sizeof(zp_scalar_t));
        zp_wtns_close(&wt);
        return fail(t, ZP_EFORMAT, false, "witness");
    }
    const zp_g16_key_t *k = &ke->key;
    rc = zp_shm_slot_layout(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen, k->n_vars, k->domain_size, 32);
    if (rc < 0) {
        zp_wtns_close(&wt);
        return fail(t, rc, rc != ZP_ETOOBIG, rc == ZP_ETOOBIG ? "circuit larger than the arena's slots" : "slot layout");
    }
    size_t lw, la, lb, lc;
    zp_scalar_t *w = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_W, &lw);
    zp_scalar_t *va = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_A, &la);
    zp_scalar_t *vb = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_B, &lb);
    zp_scalar_t *vc = zp_shm_slot_vec(s->arena, a->slot, ZP_SHM_VEC_C, &lc);
    if (!w || !va || !vb || !vc || lw < (size_t)k->n_vars * 32 || la < (size_t)k->domain_size * 32 ||
        lb < (size_t)k->domain_size * 32 || lc < (size_t)k->domain_size * 32) {
        zp_wtns_close(&wt);
        return fail(t, ZP_EFORMAT, true, "slot vectors");
    }
    memcpy(w, wt.values, (size_t)k->n_vars * 32);
    zp_wtns_close(&wt);
    if ((rc = zp_shm_slot_check(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen)) < 0) return fail(t, rc, true, "slot");
    uint64_t t0 = zp_now_ns();
    rc = zp_g16_synth(k, w, r1cs, va, vb, vc, s->pool);
    t->dt[ZP_DT_CHECK] = zp_now_ns() - t0;
    if (rc < 0) return fail(t, rc, !input_error(rc), "synth");
    rc = zp_shm_payload_seal(s->arena, a->slot, ZP_SLOT_SYNTH, a->gen,
                             ZP_SHM_VEC_MASK(ZP_SHM_VEC_W) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_A) |
                                 ZP_SHM_VEC_MASK(ZP_SHM_VEC_B) | ZP_SHM_VEC_MASK(ZP_SHM_VEC_C),
                             ZP_SLOT_READY, &t->new_gen);
    if (rc < 0) return fail(t, rc, true, "seal");
    t->ok = true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: zkpipe-synth [--runtime-dir DIR] [--arena NAME] [--instance N] [--credits N]\n"
               "                    [--threads N] [--heartbeat-ms MS]\n"
               ZP_KEYOPTS_USAGE);
}

int main(int argc, char **argv, char **envp)
{
    static synth_t S;
    zp_stage_opts_t o = {.prog = "zkpipe-synth", .arena = "default", .credits = 2, .hb = 500};
    char name[64];
    int ex;

    setproctitle_init(argc, argv, envp);
    zp_log_init("synth");
    if ((ex = zp_stage_opts_parse(&o, argc, argv, usage)) >= 0) return ex;
    if (zp_shm_default_name(S.arena_name, sizeof S.arena_name, o.arena) < 0) {
        fprintf(stderr, "zkpipe-synth: %s\n", zp_err_msg());
        return 1;
    }
    if ((ex = zp_stage_keys_setup(&o, S.arena_name, &S.kc, &S.pool, zp_keystore_get, zp_keystore_release)) >= 0)
        return ex;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    snprintf(name, sizeof name, "synth %u thread(s)", zp_pool_size(S.pool));
    zp_stage_def_t def = {.role = ZP_ROLE_SYNTH, .instance = o.instance, .credits = o.credits,
                          .caps = ZP_CAP_R1CS_CHECK, .name = name, .endpoint = o.endpoint,
                          .heartbeat_ms = (int)o.hb,
                          .ctx = &S, .work = work, .set_title = set_title, .stop = &g_stop};
    int rc = zp_stage_main(&def);
    if (rc < 0) fprintf(stderr, "zkpipe-synth: %s %s\n", zp_strerror(rc), zp_err_msg());
    zp_keycache_destroy(&S.kc);
    zp_pool_destroy(&S.pool);
    zp_shm_close(&S.arena);
    return rc < 0 ? 1 : 0;
}
