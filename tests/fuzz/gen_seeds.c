/* gen_seeds.c - writes the synthesized seed corpora under DIR (tests/fuzz/corpus): one frame
 * per message type (frames/), supervisor channel messages (sup/), the first pages of real
 * arenas (arena/), a real key-store object of a fixture key (keystore/), and zkey+r1cs+wtns
 * triples of the fixtures (checks/). Run by `scripts/fuzz --seeds`; the output is committed.
 * The file-format corpora (zkey/, wtns/, r1cs/, json/) are fixture files copied by the script. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "lib/fmt/fmt.h"
#include "lib/util/util.h"
#include "proto/identity.h"
#include "proto/proto.h"
#include "shm/keystore.h"
#include "shm/shm.h"

static const char *g_dir;

static void put(const char *sub, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_dir, sub);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", g_dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) { fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(errno)); exit(1); }
    fclose(f);
}

static void frame(const char *name, int rc, uint8_t *b, size_t n)
{
    if (rc < 0) { fprintf(stderr, "gen_seeds: encode %s: %s\n", name, zp_err_msg()); exit(1); }
    put("frames", name, b, n);
    free(b);
}

#define FRAME(name, call) do { int rc_ = (call); frame(name, rc_, b, n); } while (0)
static void frames(void)
{
    uint8_t *b; size_t n;
    zp_msg_hello_t h = {.role = 1, .instance = 2, .incarnation = 77, .pid = 1234, .capabilities = 1, .credits = 2,
                        .name = zp_str("gpu-worker cpu"), .n_held = 1, .has_token = true};
    h.held[0] = (zp_held_t){3, 9};
    memset(h.token, 0x5a, sizeof h.token);
    FRAME("hello", zp_msg_hello_encode(&b, &n, &h));
    zp_msg_heartbeat_t hb = {.incarnation = 77, .busy = 1};
    FRAME("heartbeat", zp_msg_heartbeat_encode(&b, &n, &hb));
    zp_msg_done_t d = {.slot = 1, .gen = 4, .new_gen = 5, .job = 3, .part = 2, .t_start = 10, .t_end = 20,
                       .proof_json = zp_str("{\"pi_a\":[]}"), .public_json = zp_str("[\"1\"]"),
                       .proof_bin = (const uint8_t *)"\x01\x02\x03", .proof_bin_len = 3};
    d.dt[0] = 5;
    FRAME("done", zp_msg_done_encode(&b, &n, &d));
    zp_msg_fail_t fl = {.slot = 1, .gen = 4, .job = 3, .part = 2, .retryable = true, .code = -5, .t_start = 1,
                        .t_end = 2, .message = zp_str("device error"), .unstarted = true, .fail_class = ZP_FAIL_DEVICE};
    FRAME("fail", zp_msg_fail_encode(&b, &n, &fl));
    zp_msg_assign_t as = {.slot = 2, .gen = 10, .in_gen = 9, .payload_gen = 7, .stage = 1, .job = 5, .part = 3,
                          .attempt = 1, .priority = 2, .zkey = zp_str("/k.zkey"), .r1cs = zp_str("/k.r1cs"),
                          .wtns = zp_str("/w.wtns"), .epoch = 99};
    FRAME("assign", zp_msg_assign_encode(&b, &n, &as));
    zp_msg_ack_t ack = {.slot = 1, .gen = 2, .accepted = true};
    FRAME("ack", zp_msg_ack_encode(&b, &n, &ack));
    zp_msg_revoke_t rv = {.slot = 1, .gen = 2};
    FRAME("revoke", zp_msg_revoke_encode(&b, &n, &rv));
    zp_msg_reset_t rs = {.reason = zp_str("say HELLO")};
    FRAME("reset", zp_msg_reset_encode(&b, &n, &rs));
    static zp_msg_submit_t su;
    su.request_id = zp_str("req"); su.zkey = zp_str("/a.zkey"); su.r1cs = zp_str("/a.r1cs"); su.priority = 1;
    su.n_wtns = 2; su.wtns[0] = zp_str("/w0.wtns"); su.wtns[1] = zp_str("/w1.wtns");
    FRAME("submit", zp_msg_submit_encode(&b, &n, &su));
    zp_msg_status_t st = {.json = true};
    FRAME("status", zp_msg_status_encode(&b, &n, &st));
    zp_msg_await_t aw = {.job = 3, .timeout_ms = 100};
    FRAME("await", zp_msg_await_encode(&b, &n, &aw));
    zp_msg_cancel_t cn = {.job = 3};
    FRAME("cancel", zp_msg_cancel_encode(&b, &n, &cn));
    zp_msg_trace_t tr = {.max_parts = 10};
    FRAME("trace", zp_msg_trace_encode(&b, &n, &tr));
    zp_msg_metrics_t mx = {0};
    FRAME("metrics", zp_msg_metrics_encode(&b, &n, &mx));
    zp_msg_submitted_t sd = {.job = 3, .n_parts = 2, .existed = false};
    FRAME("submitted", zp_msg_submitted_encode(&b, &n, &sd));
    zp_msg_text_t tx = {.text = zp_str("status text")};
    FRAME("text", zp_msg_text_encode(&b, &n, &tx));
    zp_msg_part_result_t pr[2] = {{.state = ZP_PART_DONE, .attempts = 1, .proof_json = zp_str("{}"), .public_json = zp_str("[]"),
                                   .proof_bin = (const uint8_t *)"\x09", .proof_bin_len = 1},
                                  {.state = ZP_PART_FAILED, .attempts = 3, .error = zp_str("bad witness")}};
    zp_msg_result_t r = {.job = 3, .state = ZP_JOB_FAILED, .n_parts = 2, .parts = pr};
    FRAME("result", zp_msg_result_encode(&b, &n, &r));
    zp_msg_canceled_t cd = {.job = 3, .freed = 1};
    FRAME("canceled", zp_msg_canceled_encode(&b, &n, &cd));
    zp_msg_error_t er = {.code = -1, .message = zp_str("no")};
    FRAME("error", zp_msg_error_encode(&b, &n, &er));
}

static void sup(void)
{
    char buf[ZP_SUP_MSG_MAX];
    zp_sup_msg_t m = {.type = ZP_SUP_REG, .child = 2, .role = 1, .instance = 0, .pid = 4321};
    memset(m.token, 0xa7, sizeof m.token);
    int k = zp_sup_encode(buf, sizeof buf, &m);
    put("sup", "reg", buf, (size_t)k);
    m = (zp_sup_msg_t){.type = ZP_SUP_EXIT, .child = 2, .pid = 4321};
    k = zp_sup_encode(buf, sizeof buf, &m);
    put("sup", "exit", buf, (size_t)k);
    m = (zp_sup_msg_t){.type = ZP_SUP_FENCE, .child = 2, .pid = 4321};
    snprintf(m.reason, sizeof m.reason, "missed heartbeats (silent for 1500 ms)");
    k = zp_sup_encode(buf, sizeof buf, &m);
    put("sup", "fence", buf, (size_t)k);
    static const char pa[] = "localhost:1000:1000:4321";
    put("sup", "peer-address", pa, sizeof pa - 1);
}

/* the header page and slot table of a real arena (cfg, name set here), slots `used` (a bit mask)
 * synthesized and sealed, written as seed `seed` */
static void arena_seed(zp_shm_cfg_t cfg, const char *tag, uint32_t used, const char *seed)
{
    char name[64];
    snprintf(name, sizeof name, "/zkpipe-seed-%d-%s", (int)getpid(), tag);
    cfg.name = name;
    zp_shm_t *a;
    if (zp_shm_create(&a, &cfg) < 0) { fprintf(stderr, "gen_seeds: arena: %s\n", zp_err_msg()); exit(1); }
    for (uint32_t idx = 0; idx < zp_shm_n_slots(a) && idx < 32; idx++) {
        uint64_t gen, g2;
        if ((used >> idx & 1) && zp_shm_slot_claim_at(a, idx, &gen) == 0 &&
            zp_shm_slot_layout(a, idx, ZP_SLOT_SYNTH, gen, 8, 8, 32) == 0)
            zp_shm_payload_seal(a, idx, ZP_SLOT_SYNTH, gen, ZP_SHM_VEC_MASK(ZP_SHM_VEC_A), ZP_SLOT_READY, &g2);
    }
    int fd = shm_open(name, O_RDONLY, 0);
    size_t n = ZP_SHM_HDR_BYTES + zp_shm_n_slots(a) * (size_t)ZP_SHM_DESC_BYTES;
    uint8_t *p = malloc(n);
    if (fd < 0 || !p || pread(fd, p, n, 0) != (ssize_t)n) { fprintf(stderr, "gen_seeds: arena read\n"); exit(1); }
    put("arena", seed, p, n);
    close(fd);
    free(p);
    zp_shm_close(&a);
    zp_shm_unlink(name, NULL);
}

static void arena(void)
{
    arena_seed((zp_shm_cfg_t){.n_slots = 2, .slot_bytes = 2u << 20}, "arena", 1, "two-slots");
    /* slot size classes (2 and 4 MiB), a slot of each in use */
    static const zp_shm_class_t cl[2] = {{1, 2u << 20}, {2, 4u << 20}};
    arena_seed((zp_shm_cfg_t){.n_classes = 2, .classes = cl}, "arena2", 5, "two-classes");
}

static void keystore(const char *fix)
{
    char prefix[64], path[4096];
    snprintf(prefix, sizeof prefix, "/zkpipe-seed-%d", (int)getpid());
    snprintf(path, sizeof path, "%s/bn128_empty/circuit.zkey", fix);
    zp_zkey_t z;
    zp_keystore_key_t ks;
    if (zp_zkey_open(&z, path) < 0 || zp_keystore_get(&ks, prefix, &z, path, NULL) < 0) {
        fprintf(stderr, "gen_seeds: keystore: %s\n", zp_err_msg());
        exit(1);
    }
    uint8_t *copy = malloc(ks.map_len + 1);
    memcpy(copy + 1, ks.map, ks.map_len);
    copy[0] = 0;            /* the flag byte (fuzz_keystore.c): as is */
    put("keystore", "bn128-empty-raw", copy, ks.map_len + 1);
    copy[0] = 1;            /* the harness recomputes the checksums */
    put("keystore", "bn128-empty-fixup", copy, ks.map_len + 1);
    free(copy);
    zp_keystore_release(&ks);
    zp_zkey_close(&z);
    zp_keystore_unlink_all(prefix);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(errno)); exit(1); }
    fseek(f, 0, SEEK_END);
    long k = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)k + 1);
    if (!p || fread(p, 1, (size_t)k, f) != (size_t)k) exit(1);
    fclose(f);
    *n = (size_t)k;
    return p;
}

static void checks(const char *fix, const char *circ, const char *wtns)
{
    char p[4096];
    size_t nz, nr, nw;
    snprintf(p, sizeof p, "%s/%s/circuit.zkey", fix, circ);
    uint8_t *z = slurp(p, &nz);
    snprintf(p, sizeof p, "%s/%s/circuit.r1cs", fix, circ);
    uint8_t *r = slurp(p, &nr);
    snprintf(p, sizeof p, "%s/%s/%s", fix, circ, wtns);
    uint8_t *w = slurp(p, &nw);
    uint8_t *o = malloc(8 + nz + nr + nw);
    uint32_t lz = (uint32_t)nz, lr = (uint32_t)nr;
    memcpy(o, &lz, 4); memcpy(o + 4, &lr, 4);
    memcpy(o + 8, z, nz); memcpy(o + 8 + nz, r, nr); memcpy(o + 8 + nz + nr, w, nw);
    put("checks", circ, o, 8 + nz + nr + nw);
    free(z); free(r); free(w); free(o);
}

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: gen_seeds CORPUS_DIR FIXTURES_DIR\n"); return 2; }
    g_dir = argv[1];
    mkdir(g_dir, 0755);
    frames();
    sup();
    arena();
    keystore(argv[2]);
    checks(argv[2], "bn128_empty", "witness.wtns");
    checks(argv[2], "bls12381_empty", "witness.wtns");
    checks(argv[2], "bn128_chain", "witness-0.wtns");
    printf("gen_seeds: corpora written under %s\n", g_dir);
    return 0;
}
