/* worker.c - the GPU worker daemon (zkpipe-gpu-worker): the G1 half of the proof.
 *
 * NOTES
 * Backend: CUDA when built and a device opens (--device N), else the CPU backend with a log
 * line that says so (--backend cpu|cuda|auto). The whole arena is registered with the
 * backend once (cudaHostRegister: every H2D copy is a DMA from pinned memory); each proving
 * key is loaded once per process and uploaded once per backend. HELLO announces 2 credits:
 * the next partition is already assigned (and its data in the slot) while one computes.
 * Per task (work thread): check the slot is (PROVING, gen), verify the synth's sealed payload
 * (checksum at the seal generation: a partition whose vectors were damaged goes back to
 * synthesis), run prove_g1 (h = (a*b - c) over the coset, MSMs A, B1, C, H), commit the four
 * Jacobian points into the slot's result area (fenced: PROVING(gen) -> PROVED(gen+1)).
 * The slot's vectors stay intact: the CPU backend clobbers a and b and writes h, so it works
 * on private copies (a retry of this stage reads the same payload); the CUDA backend reads the
 * host vectors only.
 * --device accepts N or N-K (a systemd instance name: zkpipe-gpu@N-K is worker K on device N,
 * `--device %i`); without --instance, N-K gives instance N*64+K, unique per (device, k).
 * Tests: tests/ipc/ (up_gpus.sh for the device arguments). */
#include <bsd/unistd.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/groth16/groth16.h"
#include "lib/util/util.h"
#include "proto/peer.h"
#include "shm/shm.h"
#ifdef ZP_HAVE_CUDA
#include "gpu-worker/cuda/backend_cuda.h"
#endif

static_assert(ZP_G16_NMSM * sizeof(zp_g1_any_t) <= ZP_SHM_RESULT_BYTES, "result area holds the 4 points");

typedef struct {
    char arena_name[ZP_SHM_NAME_MAX + 1];
    zp_shm_t *arena;
    void *registered;
    zp_keycache_t *kc;
    zp_pool_t *kpool;
    const zp_backend_ops_t *ops;
    zp_backend_t *be;
    bool private_vectors;        /* backend clobbers a, b: work on copies */
    zp_scalar_t *pa, *pb, *ph;   /* private copies (CPU backend) */
    size_t pcap;                 /* elements */
} gpu_t;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }
static void set_title(const char *t) { setproctitle("%s", t); }

static int ensure_arena(gpu_t *g, uint64_t epoch)
{
    if (g->arena && zp_shm_epoch(g->arena) == epoch) return 0;
    if (g->registered) { g->ops->host_unregister(g->be, g->registered); g->registered = NULL; }
    zp_shm_close(&g->arena);
    int rc = zp_shm_open(&g->arena, g->arena_name, NULL, epoch);
    if (rc < 0) return zp_err_set(rc, "arena %s: %s", g->arena_name, zp_err_msg());
    size_t len;
    void *base = zp_shm_base(g->arena, &len);
    uint64_t t0 = zp_now_ns();
    if ((rc = g->ops->host_register(g->be, base, len)) < 0) {
        zp_log(ZP_LOG_WARN, "host_register of the arena (%zu MiB) failed: %s %s; copies will be pageable",
               len >> 20, zp_strerror(rc), zp_err_msg());
    } else {
        g->registered = base;
        zp_log(ZP_LOG_INFO, "arena %s (%zu MiB) registered with the %s backend in %.1f ms", g->arena_name, len >> 20,
               g->ops->name, (zp_now_ns() - t0) / 1e6);
    }
    return 0;
}

/* keycache: a key's memory is about to go away: unpin it first */
static void key_release(void *ctx, zp_keyent_t *e)
{
    gpu_t *g = ctx;
    if (e->user && g->be) g->ops->host_unregister(g->be, e->user);
    e->user = NULL;
}

static void fail(zp_stage_task_t *t, int code, bool retryable, const char *what)
{
    const char *m = zp_err_msg();
    t->ok = false;
    t->code = code;
    t->retryable = retryable;
    snprintf(t->msg, sizeof t->msg, "%s: %s%s%s", what, zp_strerror(code), *m ? ": " : "", m);
}

static int ensure_private(gpu_t *g, size_t n)
{
    if (n <= g->pcap) return 0;
    free(g->pa); free(g->pb); free(g->ph);
    g->pa = aligned_alloc(64, n * sizeof(zp_scalar_t));
    g->pb = aligned_alloc(64, n * sizeof(zp_scalar_t));
    g->ph = aligned_alloc(64, n * sizeof(zp_scalar_t));
    g->pcap = g->pa && g->pb && g->ph ? n : 0;
    return g->pcap ? 0 : zp_err_set(-ENOMEM, "private vectors of %zu elements", n);
}

static void work(void *ctx, zp_stage_task_t *t)
{
    gpu_t *g = ctx;
    const zp_msg_assign_t *a = &t->a;
    zp_keyent_t *ke;
    int rc;

    zp_err_clear();
    if ((rc = ensure_arena(g, a->epoch)) < 0) return fail(t, rc, true, "arena");
    if ((rc = zp_keycache_key(g->kc, t->zkey, true, &ke)) < 0) return fail(t, rc, rc != ZP_EFORMAT && rc != -ENOENT, "zkey");
    const zp_g16_key_t *k = &ke->key;
    if (ke->backend_tag != g->be) {
        uint64_t t0 = zp_now_ns();
        if (ke->ks && !ke->user) {
            /* the shared key region: pinned once, so the upload below is a DMA */
            if ((rc = g->ops->host_register(g->be, ke->ks->data, ke->ks->data_len)) < 0)
                zp_log(ZP_LOG_WARN, "host_register of key %s (%zu MiB, read-only shm) failed: %s %s; its copies will be pageable",
                       t->zkey, ke->ks->data_len >> 20, zp_strerror(rc), zp_err_msg());
            else
                ke->user = ke->ks->data;
            zp_err_clear();
        }
        if ((rc = g->ops->load_key(g->be, k)) < 0) return fail(t, rc, true, "load_key");
        ke->backend_tag = g->be;
        zp_log(ZP_LOG_INFO, "proving key %s loaded into the %s backend in %.1f ms", t->zkey, g->ops->name,
               (zp_now_ns() - t0) / 1e6);
    }
    if ((rc = zp_shm_slot_check(g->arena, a->slot, ZP_SLOT_PROVING, a->gen)) < 0) return fail(t, rc, true, "slot");
    uint64_t t0 = zp_now_ns();
    if ((rc = zp_shm_payload_verify(g->arena, a->slot, a->payload_gen)) < 0) {
        fail(t, rc, true, "synthesized payload");
        t->payload_bad = true;
        return;
    }
    t->dt[ZP_DT_VERIFY_IN] = zp_now_ns() - t0;
    const zp_shm_slot_t *d = zp_shm_slot(g->arena, a->slot);
    size_t lw, la, lb, lc, lh;
    zp_scalar_t *w = zp_shm_slot_vec(g->arena, a->slot, ZP_SHM_VEC_W, &lw);
    zp_scalar_t *va = zp_shm_slot_vec(g->arena, a->slot, ZP_SHM_VEC_A, &la);
    zp_scalar_t *vb = zp_shm_slot_vec(g->arena, a->slot, ZP_SHM_VEC_B, &lb);
    zp_scalar_t *vc = zp_shm_slot_vec(g->arena, a->slot, ZP_SHM_VEC_C, &lc);
    zp_scalar_t *vh = zp_shm_slot_vec(g->arena, a->slot, ZP_SHM_VEC_H, &lh);
    size_t n = k->domain_size, nb = n * sizeof(zp_scalar_t);
    if (!w || !va || !vb || !vc || !vh || d->n_vars != k->n_vars || d->domain_size != k->domain_size ||
        lw < (size_t)k->n_vars * 32 || la < nb || lb < nb || lc < nb || lh < nb) {
        zp_err_set(ZP_EFORMAT, "slot %u vectors do not fit the key (%u vars, domain %u)", a->slot, k->n_vars, k->domain_size);
        fail(t, ZP_EFORMAT, true, "slot");
        t->payload_bad = true;
        return;
    }
    if (g->private_vectors) {
        if ((rc = ensure_private(g, n)) < 0) return fail(t, rc, true, "memory");
        memcpy(g->pa, va, nb);
        memcpy(g->pb, vb, nb);
        va = g->pa; vb = g->pb; vh = g->ph;
    }
    zp_g1_any_t out[ZP_G16_NMSM];
    zp_g16_times_t tm;
    memset(out, 0, sizeof out);
    memset(&tm, 0, sizeof tm);
    if ((rc = g->ops->prove_g1(g->be, k, w, va, vb, vc, vh, out, &tm)) < 0) {
        fail(t, rc, true, "prove_g1");
        if (rc == ZP_EDEVICE) g_stop = 1;   /* a broken device context: exit and be restarted clean */
        return;
    }
    t->dt[ZP_DT_H2D] = tm.h2d_ns;
    t->dt[ZP_DT_NTT] = tm.ntt_ns;
    t->dt[ZP_DT_MSM] = tm.msm_ns[0] + tm.msm_ns[1] + tm.msm_ns[2] + tm.msm_ns[3];
    t->dt[ZP_DT_D2H] = tm.d2h_ns;
    rc = zp_shm_commit(g->arena, a->slot, ZP_SLOT_PROVING, a->gen, ZP_SLOT_PROVED, ZP_SHM_AREA_RESULT, out, sizeof out,
                       &t->new_gen);
    if (rc < 0) return fail(t, rc, true, "commit");
    t->ok = true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: zkpipe-gpu-worker [--runtime-dir DIR] [--arena NAME] [--instance N] [--credits N]\n"
               "                         [--device N|N-K] [--backend auto|cuda|cpu] [--threads N] [--heartbeat-ms MS]\n"
               "  --device N-K: worker K on CUDA device N (as systemd's zkpipe-gpu@N-K passes it);\n"
               "                the default instance is then N*64+K (K < 64)\n"
               "  --backends:    print the backends this build has (\"cuda cpu\" or \"cpu\") and exit\n"
               ZP_KEYOPTS_USAGE);
}

/* "N" or "N-K": device ordinal N (after CUDA_VISIBLE_DEVICES), per-device index K */
static int parse_device(const char *s, int *dev, int *k)
{
    char *e;
    errno = 0;
    long d = strtol(s, &e, 10);
    if (errno || e == s || d < 0 || d > 4095 || (*e && *e != '-')) return -1;
    *dev = (int)d;
    *k = -1;
    if (*e == '-') {
        const char *ks = e + 1;
        long kv = strtol(ks, &e, 10);
        if (errno || e == ks || *e || kv < 0 || kv > 63 || *ks == '-' || *ks == '+') return -1;
        *k = (int)kv;
    }
    return 0;
}

static int open_backend(gpu_t *g, const char *which, int device, unsigned threads, char *name, size_t nn)
{
    zp_backend_cfg_t cfg = {.threads = threads, .device = device};
    int rc;
#ifdef ZP_HAVE_CUDA
    if (strcmp(which, "cpu")) {
        rc = zp_backend_cuda.open(&g->be, &cfg);
        if (rc == 0) {
            g->ops = &zp_backend_cuda;
            g->private_vectors = false;
            snprintf(name, nn, "cuda:%d", device);
            return 0;
        }
        if (!strcmp(which, "cuda")) return rc;
        zp_log(ZP_LOG_WARN, "no usable CUDA device %d (%s %s): using the CPU backend", device, zp_strerror(rc),
               zp_err_msg());
    }
#else
    if (!strcmp(which, "cuda")) return zp_err_set(ZP_ENODEV, "this build has no CUDA backend");
    zp_log(ZP_LOG_WARN, "built without CUDA: using the CPU backend");
#endif
    if ((rc = zp_backend_cpu.open(&g->be, &cfg)) < 0) return rc;
    g->ops = &zp_backend_cpu;
    g->private_vectors = true;
    snprintf(name, nn, "cpu");
    return 0;
}

int main(int argc, char **argv, char **envp)
{
    static gpu_t G;
    const char *rundir_opt = NULL, *arena = "default", *backend = "auto";
    unsigned instance = 0, credits = 2, threads = 0, hb = 500;
    int device = 0, dev_k = -1;
    bool have_instance = false;
    char rundir[512], ep[600], bname[32], name[96];

    setproctitle_init(argc, argv, envp);
    zp_log_init("gpu-worker");
    static const struct option opts[] = {
        {"runtime-dir", 1, 0, 'r'}, {"arena", 1, 0, 'a'}, {"instance", 1, 0, 'i'}, {"credits", 1, 0, 'c'},
        {"device", 1, 0, 'd'}, {"backend", 1, 0, 'b'}, {"threads", 1, 0, 't'}, {"heartbeat-ms", 1, 0, 'H'},
        {"backends", 0, 0, 'B'}, ZP_KEYOPTS_LONG, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    zp_keyopts_t ko = {0};
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': rundir_opt = optarg; break;
        case 'a': arena = optarg; break;
        case 'i': instance = (unsigned)strtoul(optarg, NULL, 10); have_instance = true; break;
        case 'c': credits = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'd':
            if (parse_device(optarg, &device, &dev_k) < 0) {
                fprintf(stderr, "zkpipe-gpu-worker: --device '%s': expected N or N-K (K < 64)\n", optarg);
                return 2;
            }
            break;
        case 'b': backend = optarg; break;
        case 't': threads = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'H': hb = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'h': usage(stdout); return 0;
        case 'B':   /* for `zkpipe up`: the backends this build has */
#ifdef ZP_HAVE_CUDA
            puts("cuda cpu");
#else
            puts("cpu");
#endif
            return 0;
        default:
            if (zp_keyopts_parse(&ko, c, optarg)) break;
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || credits < 1 || credits > ZP_MSG_MAX_CREDITS || hb < 10 || device < 0 ||
        (strcmp(backend, "auto") && strcmp(backend, "cuda") && strcmp(backend, "cpu"))) {
        usage(stderr);
        return 2;
    }
    if (dev_k >= 0 && !have_instance) instance = (unsigned)device * 64u + (unsigned)dev_k;
    if (zp_runtime_dir(rundir, sizeof rundir, rundir_opt, false) < 0 || zp_broker_endpoint(ep, sizeof ep, rundir) < 0 ||
        zp_shm_default_name(G.arena_name, sizeof G.arena_name, arena) < 0) {
        fprintf(stderr, "zkpipe-gpu-worker: %s\n", zp_err_msg());
        return 1;
    }
    int rc = open_backend(&G, backend, device, threads, bname, sizeof bname);
    if (rc < 0) {
        fprintf(stderr, "zkpipe-gpu-worker: backend %s: %s %s\n", backend, zp_strerror(rc), zp_err_msg());
        return 1;
    }
    zp_log(ZP_LOG_INFO, "backend %s", bname);
    G.kc = zp_keycache_new();
    G.kpool = zp_pool_new(threads);   /* for filling the shared key (copy + point checks) */
    if (!G.kc || !G.kpool) return 1;
    zp_keycache_set_release(G.kc, key_release, &G);
    if (ko.too_many) {
        fprintf(stderr, "zkpipe-gpu-worker: more than %d --preload keys\n", ZP_PRELOAD_MAX);
        return 2;
    }
    if (!ko.no_store) zp_keycache_set_store(G.kc, G.arena_name, zp_keystore_get, zp_keystore_release, G.kpool);
    if (zp_keycache_preload(G.kc, ko.paths, ko.n) < 0) {   /* before HELLO: READY means the keys are loaded */
        fprintf(stderr, "zkpipe-gpu-worker: %s\n", zp_err_msg());
        zp_keycache_destroy(&G.kc);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    snprintf(name, sizeof name, "gpu-worker %s", bname);
    zp_stage_def_t def = {.role = ZP_ROLE_GPU, .instance = instance, .credits = credits,
                          .caps = strcmp(bname, "cpu") ? ZP_CAP_CUDA : 0, .name = name, .endpoint = ep,
                          .heartbeat_ms = (int)hb, .ctx = &G, .work = work, .set_title = set_title, .stop = &g_stop};
    rc = zp_stage_main(&def);
    if (rc < 0) fprintf(stderr, "zkpipe-gpu-worker: %s %s\n", zp_strerror(rc), zp_err_msg());
    if (G.registered) G.ops->host_unregister(G.be, G.registered);
    zp_keycache_destroy(&G.kc);   /* before the backend: it may hold device copies keyed by these */
    zp_pool_destroy(&G.kpool);
    G.ops->close(&G.be);
    zp_shm_close(&G.arena);
    free(G.pa); free(G.pb); free(G.ph);
    return rc < 0 ? 1 : 0;
}
