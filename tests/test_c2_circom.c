/* test_c2_circom.c ZKPIPE POWER... - libzkpipe_c2 in cuzk's role on circom circuits: for each
 * 2^POWER, `zkpipe testkey --curve bls12-381 --witnesses 3 --insecure-known-tau` writes an r1cs,
 * three witnesses and the bellman circuit.params/.vk; the harness builds supraseal's Assignment
 * from r1cs + wtns (zp_g16_assign_from_r1cs, what bellperson's synthesis would hand over) and
 * proves through the library's exported symbols only:
 *   - a batch of 3 (three witnesses, one SRS, r and s per circuit) with generate_groth16_proofs_c;
 *   - the same batch through start here, a, b, c freed at once, finalize on another thread;
 *   - a, b, c from zkpipe_c2_alloc_abc (bytes copied: 0 with it, 3 x abc_size x 32 without);
 *   - start then destroy without finalize (no leak under ASan), then finalize of that handle,
 *     finalize twice, finalize with proofs NULL (the handle stays live and finalizes after);
 *   - bad input the dump-based test (test_c2) does not reach: |IC| (inp_assignment_size),
 *     b_aux_bit_len, a circuit of another size against this SRS, the r1cs of another circuit as
 *     the parameters path, an assignment of the right sizes that does not satisfy the circuit
 *     (no proof: the pairing check in-process, the synthesizer's row check in the group), a
 *     truncated .params, and
 *     the library (and the group) keeps proving after each.
 * Every proof is pairing-checked here (zp_g16_verify against the .params' verifying key, the
 * public inputs from the witness) and must equal, byte for byte in bellman's 192-byte form,
 * `ZP_TEST_FIXED_RS=1 zkpipe prove circuit.params witness-i.wtns ... --r1cs --r R --s S`.
 * The mode is ZKPIPE_C2_MODE from the environment (meson: inprocess). Tests 'c2_circom'
 * (unit: 2^10..2^14) and 'c2_circom_slow' (slow: 2^15, 2^16).
 * ZKPIPE_C2_MODE=group (tests/ipc/c2_group.sh, a running group without any test hook): the
 * caller's r, s travel in the vectors files to the group's finalizer, so every group proof
 * must equal zkpipe prove's byte for byte too; section 6 (group mode only) proves one circuit
 * at r = s = 0 and one at other r, s both through the group and in-process (a second SRS made
 * with ZKPIPE_C2_MODE=inprocess) and the two must be byte-identical. ZKPIPE_C2_MODE=auto with
 * ZP_C2_EXPECT_GROUP=1: checked as group mode. ZP_C2_SYNC_DIR=DIR: around the start of section 2 the harness touches
 * DIR/ready and waits for DIR/go, then touches DIR/started and waits for DIR/finalize (the
 * shell kills group members in between). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test_slurp.h"
#include "c2/zkpipe_c2.h"
#include "lib/fmt/bellman.h"
#include "lib/groth16/assignment.h"
#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); exit(1); } } while (0)
#define NW 3

static uint64_t R_OF[NW] = {0x1d2c3b4a59687f01ull, 5, 0xfedcba9876543210ull};
static uint64_t S_OF[NW] = {0x0123456789abcdefull, 9, 0x7777777777777777ull};
static bool group_mode;
static const char *sync_dir;   /* ZP_C2_SYNC_DIR: the shell kills group members around section 2 */

/* touch sync_dir/mine, then wait for sync_dir/theirs */
static void sync_step(const char *mine, const char *theirs)
{
    if (!sync_dir) return;
    char p[600];
    snprintf(p, sizeof p, "%s/%s", sync_dir, mine);
    FILE *f = fopen(p, "w");
    CHECK(f && fclose(f) == 0);
    snprintf(p, sizeof p, "%s/%s", sync_dir, theirs);
    for (int i = 0; access(p, F_OK) != 0; i++) {
        CHECK(i < 6000);   /* 10 minutes: a safety net */
        usleep(100000);
    }
}

static void expect_err(RustError e, const char *needle, int line)
{
    if (e.code == 0 || !e.message || (needle && !strstr(e.message, needle))) {
        fprintf(stderr, "line %d: wanted an error naming '%s', got code %d: %s\n", line, needle ? needle : "",
                e.code, e.message ? e.message : "(null)");
        exit(1);
    }
    free(e.message);
}
#define EXPECT_ERR(e, needle) expect_err((e), (needle), __LINE__)
#define EXPECT_OK(e) do { RustError e_ = (e); if (e_.code) { fprintf(stderr, "line %d: %d %s\n", __LINE__, e_.code, e_.message ? e_.message : ""); exit(1); } CHECK(!e_.message); } while (0)

static fr_t fr_of(uint64_t v)
{
    zp_fr_bls12_381_t m;
    zp_fr_bls12_381_set_u64(&m, v);
    fr_t r;
    memcpy(&r, &m, sizeof r);
    return r;
}

static void run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
        exit(1);
    }
}

typedef struct {
    char dir[256];
    zp_r1cs_t r1;
    zp_wtns_t wt[NW];
    zp_g16_assign_buf_t ab[NW];
    Assignment as[NW];
    uint8_t ref[NW][192];     /* zkpipe prove's proofs at (R_OF[i], S_OF[i]) */
    zp_bkey_t bk;
    zp_g16_vk_t vk;
    bool ref_check;           /* check_proof compares with ref[] (off: pairing check only) */
} circ_t;

static void circ_load(circ_t *c, const char *zkpipe, const char *tmp, unsigned power, zp_pool_t *pool)
{
    char cmd[2048], p[512];
    memset(c, 0, sizeof *c);
    snprintf(c->dir, sizeof c->dir, "%s/p%u", tmp, power);
    snprintf(cmd, sizeof cmd, "'%s' testkey --curve bls12-381 --power %u --publics 2 --witnesses %d --seed %u "
             "--out '%s' --insecure-known-tau 2>/dev/null", zkpipe, power, NW, 30 + power, c->dir);
    run(cmd);
    snprintf(p, sizeof p, "%s/circuit.r1cs", c->dir);
    CHECK(zp_r1cs_open(&c->r1, p) == 0);
    for (int i = 0; i < NW; i++) {
        snprintf(p, sizeof p, "%s/witness-%d.wtns", c->dir, i);
        CHECK(zp_wtns_open(&c->wt[i], p) == 0);
        CHECK(zp_g16_assign_from_r1cs(&c->ab[i], &c->r1, &c->wt[i], pool) == 0);
        memcpy(&c->as[i], &c->ab[i].v, sizeof c->as[i]);
        snprintf(cmd, sizeof cmd, "ZP_TEST_FIXED_RS=1 '%s' prove '%s/circuit.params' '%s' '%s/ref%d.bin' "
                 "'%s/ref%d.json' --r1cs '%s/circuit.r1cs' --r 0x%llx --s 0x%llx", zkpipe, c->dir, p, c->dir, i,
                 c->dir, i, c->dir, (unsigned long long)R_OF[i], (unsigned long long)S_OF[i]);
        run(cmd);
        snprintf(p, sizeof p, "%s/ref%d.bin", c->dir, i);
        size_t len;
        char *b = test_slurp(p, &len);
        CHECK(b && len == 192);
        memcpy(c->ref[i], b, 192);
        free(b);
    }
    snprintf(p, sizeof p, "%s/circuit.params", c->dir);
    CHECK(zp_bkey_open(&c->bk, p, 0) == 0);
    zp_g16_bkey_t k;
    zp_g16_bkey_from_fmt(&k, &c->bk);
    CHECK(zp_g16_vk_from_bkey(&c->vk, &k) == 0);
    c->ref_check = true;
}

static void circ_free(circ_t *c)
{
    zp_g16_vk_free(&c->vk);
    zp_bkey_close(&c->bk);
    for (int i = 0; i < NW; i++) {
        zp_g16_assign_free(&c->ab[i]);
        zp_wtns_close(&c->wt[i]);
    }
    zp_r1cs_close(&c->r1);
}

/* proof i of the batch: pairing-checked against the key, equal to zkpipe prove's at (r_i, s_i) */
static void check_proof(const circ_t *c, int i, const groth16_proof *g, const char *what)
{
    zp_g16_proof_t pr;
    memset(&pr, 0, sizeof pr);
    pr.curve = ZP_CURVE_BLS12_381;
    memcpy(&pr.a.bls12_381, &g->a, sizeof g->a);
    memcpy(&pr.b.bls12_381, &g->b, sizeof g->b);
    memcpy(&pr.c.bls12_381, &g->c, sizeof g->c);
    size_t npub = c->as[i].inp_assignment_size - 1;
    zp_scalar_t pub[8];
    CHECK(npub == c->vk.n_public && npub < 8);
    for (size_t j = 0; j < npub; j++) {
        zp_fr_bls12_381_t st;
        zp_fr_bls12_381_from_mont(&st, (const zp_fr_bls12_381_t *)&c->as[i].inp_assignment_data[j + 1]);
        memcpy(&pub[j], &st, sizeof pub[j]);
    }
    int v = zp_g16_verify(&c->vk, pub, npub, &pr);
    if (v != 0) {
        fprintf(stderr, "%s: proof %d does not verify (%d)\n", what, i, v);
        exit(1);
    }
    if (!c->ref_check) return;
    uint8_t bin[192];
    size_t n;
    CHECK(zp_g16_conv_bellman.proof_encode(bin, 192, &n, &pr) == 0 && n == 192);
    if (memcmp(bin, c->ref[i], 192)) {
        fprintf(stderr, "%s: proof %d differs from zkpipe prove's at the same r, s\n", what, i);
        exit(1);
    }
}

typedef struct { void *h; groth16_proof pr[NW]; RustError e; } fin_arg_t;
static void *fin_thread(void *arg)
{
    fin_arg_t *a = arg;
    a->e = finalize_groth16_proof_c(a->h, a->pr);
    return NULL;
}

static void test_power(const char *zkpipe, const char *tmp, unsigned power, zp_pool_t *pool, const circ_t *other)
{
    circ_t *c = calloc(1, sizeof *c);
    CHECK(c);
    uint64_t t0 = zp_now_ns();
    circ_load(c, zkpipe, tmp, power, pool);
    uint64_t t1 = zp_now_ns();
    char p[512];
    snprintf(p, sizeof p, "%s/circuit.params", c->dir);
    char p0[512];
    snprintf(p0, sizeof p0, "%s", p);
    SRS srs;
    EXPECT_OK(create_SRS(&srs, p, true));
    fr_t r[NW], s[NW];
    for (int i = 0; i < NW; i++) {
        r[i] = fr_of(R_OF[i]);
        s[i] = fr_of(S_OF[i]);
    }
    void *mtx = create_gpu_mutex();
    CHECK(mtx);

    /* 1. a batch of 3, one call */
    groth16_proof pr[NW];
    memset(pr, 0, sizeof pr);
    EXPECT_OK(generate_groth16_proofs_c(c->as, NW, r, s, pr, &srs, mtx, -1));
    for (int i = 0; i < NW; i++) check_proof(c, i, &pr[i], "batch");
    uint64_t t2 = zp_now_ns();

    /* 2. start here on copies of a, b, c, free them at once, finalize on another thread */
    size_t n = c->as[0].abc_size;
    Assignment cp[NW];
    void *mem[NW];
    for (int i = 0; i < NW; i++) {
        CHECK(c->as[i].abc_size == n);
        cp[i] = c->as[i];
        CHECK((mem[i] = malloc(3 * n * sizeof(fr_t))));
        fr_t *m = mem[i];
        memcpy(m, c->as[i].a, n * sizeof *m);
        memcpy(m + n, c->as[i].b, n * sizeof *m);
        memcpy(m + 2 * n, c->as[i].c, n * sizeof *m);
        cp[i].a = m;
        cp[i].b = m + n;
        cp[i].c = m + 2 * n;
    }
    size_t c0 = zkpipe_c2_bytes_copied();
    fin_arg_t fa = {0};
    sync_step("ready", "go");
    EXPECT_OK(generate_groth16_proofs_start_c(cp, NW, r, s, &srs, NULL, 0, &fa.h));
    size_t copied = zkpipe_c2_bytes_copied() - c0;
    sync_step("started", "finalize");   /* the shell kills the GPU worker, restarts the broker */
    for (int i = 0; i < NW; i++) {
        memset(mem[i], 0x5a, 3 * n * sizeof(fr_t));
        free(mem[i]);
    }
    pthread_t th;
    CHECK(pthread_create(&th, NULL, fin_thread, &fa) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    EXPECT_OK(fa.e);
    for (int i = 0; i < NW; i++) check_proof(c, i, &fa.pr[i], "start/finalize on another thread");
    CHECK(copied == NW * 3 * n * sizeof(fr_t));
    groth16_proof junk[NW];
    EXPECT_ERR(finalize_groth16_proof_c(fa.h, junk), "not a live pending proof");   /* finalized twice */

    /* 3. zero copy: a, b, c written into the library's block */
    fr_t *a, *b, *cc;
    EXPECT_OK(zkpipe_c2_alloc_abc(n, &a, &b, &cc));
    memcpy(a, c->as[1].a, n * sizeof *a);
    memcpy(b, c->as[1].b, n * sizeof *b);
    memcpy(cc, c->as[1].c, n * sizeof *cc);
    Assignment z = c->as[1];
    z.a = a;
    z.b = b;
    z.c = cc;
    void *h = NULL;
    c0 = zkpipe_c2_bytes_copied();
    EXPECT_OK(generate_groth16_proofs_start_c(&z, 1, &r[1], &s[1], &srs, NULL, -1, &h));
    size_t zero = zkpipe_c2_bytes_copied() - c0;
    zkpipe_c2_free_abc(a);
    /* proofs NULL: refused, the handle stays live and finalizes after */
    EXPECT_ERR(finalize_groth16_proof_c(h, NULL), "proofs is NULL");
    EXPECT_OK(finalize_groth16_proof_c(h, &pr[1]));
    check_proof(c, 1, &pr[1], "zkpipe_c2_alloc_abc");
    CHECK(zero == 0);

    /* 4. destroy without finalize (the batch may be running); the handle is dead after */
    h = NULL;
    EXPECT_OK(generate_groth16_proofs_start_c(c->as, NW, r, s, &srs, mtx, -1, &h));
    destroy_pending_proof(h);
    EXPECT_ERR(finalize_groth16_proof_c(h, junk), "not a live pending proof");
    destroy_pending_proof(h);

    /* 5. bad input the dump test does not reach; the library keeps proving after each */
    Assignment bad = c->as[0];
    bad.inp_assignment_size--;   /* |IC| != inputs (b_inp_bit_len following, so the size check passes) */
    bad.b_inp_bit_len--;
    RustError e = generate_groth16_proofs_c(&bad, 1, r, s, pr, &srs, NULL, -1);
    CHECK(e.code && e.message && (strstr(e.message, "IC") || strstr(e.message, "b_inp")));
    free(e.message);
    bad = c->as[0];
    bad.b_aux_bit_len++;
    EXPECT_ERR(generate_groth16_proofs_c(&bad, 1, r, s, pr, &srs, NULL, -1), "b_aux_bit_len");
    Assignment mix[2] = {c->as[0], other ? other->as[0] : c->as[0]};
    if (other) {   /* a circuit of another size in the batch: named, nothing proved */
        EXPECT_ERR(generate_groth16_proofs_c(mix, 2, r, s, pr, &srs, NULL, -1), "provers[1]");
    }
    snprintf(p, sizeof p, "%s/circuit.r1cs", c->dir);
    SRS none = {NULL};
    EXPECT_ERR(create_SRS(&none, p, false), "not a bellman parameters file");
    /* a .params cut 200000 bytes short: refused naming the file (in group mode by the count
     * walk, which does not read the points) */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "f='%s/circuit.params'; head -c $(( $(stat -c %%s \"$f\") - 200000 )) \"$f\" > '%s/cut.params'",
             c->dir, c->dir);
    run(cmd);
    snprintf(p, sizeof p, "%s/cut.params", c->dir);
    EXPECT_ERR(create_SRS(&none, p, false), "cut.params");
    CHECK(none.ptr == NULL);
    CHECK(none.ptr == NULL);
    h = NULL;
    EXPECT_ERR(generate_groth16_proofs_start_c(c->as, NW, r, s, &none, NULL, -1, &h), "srs");
    CHECK(h == NULL);
    /* sizes right, values wrong (one c changed): no proof (in-process the pairing check
     * refuses it; in the group the synthesizer's row check, an input failure, not retried) */
    fr_t *c_bad = malloc(n * sizeof *c_bad);
    CHECK(c_bad);
    memcpy(c_bad, c->as[0].c, n * sizeof *c_bad);
    c_bad[1].l[0] ^= 1;
    bad = c->as[0];
    bad.c = c_bad;
    e = generate_groth16_proofs_c(&bad, 1, r, s, pr, &srs, NULL, -1);
    if (!e.code || !e.message || (!strstr(e.message, "pairing") && !strstr(e.message, "does not satisfy"))) {
        fprintf(stderr, "an unsatisfying assignment: %d %s\n", e.code, e.message ? e.message : "(null)");
        exit(1);
    }
    free(e.message);
    free(c_bad);
    EXPECT_OK(generate_groth16_proofs_c(&c->as[2], 1, &r[2], &s[2], pr, &srs, NULL, -1));
    check_proof(c, 2, &pr[0], "after bad input");

    /* 6. group mode: the caller's r, s as given (r = s = 0 included, as supraseal takes them)
     * give the in-process library's proofs byte for byte */
    if (group_mode) {
        fr_t rz[2] = {fr_of(0), fr_of(0x31415926535ull)}, sz[2] = {fr_of(0), fr_of(0x27182818284ull)};
        groth16_proof pg[2], pi[2];
        Assignment two[2] = {c->as[0], c->as[1]};
        EXPECT_OK(generate_groth16_proofs_c(two, 2, rz, sz, pg, &srs, NULL, -1));
        char *mode = strdup(getenv("ZKPIPE_C2_MODE"));
        CHECK(mode && setenv("ZKPIPE_C2_MODE", "inprocess", 1) == 0);
        SRS ip;
        EXPECT_OK(create_SRS(&ip, p0, false));
        EXPECT_OK(generate_groth16_proofs_c(two, 2, rz, sz, pi, &ip, NULL, -1));
        drop_SRS(&ip);
        CHECK(setenv("ZKPIPE_C2_MODE", mode, 1) == 0);
        free(mode);
        c->ref_check = false;   /* other r, s than ref[]: pairing-checked here, compared below */
        for (int i = 0; i < 2; i++) {
            check_proof(c, i, &pg[i], "group, the caller's r, s");
            if (memcmp(&pg[i], &pi[i], sizeof pg[i])) {
                fprintf(stderr, "circuit %d: the group's proof at the caller's r, s differs from the in-process one\n", i);
                exit(1);
            }
        }
        c->ref_check = true;
    }
    uint64_t t3 = zp_now_ns();

    destroy_gpu_mutex(mtx);
    evict_SRS(&srs);
    drop_SRS(&srs);
    printf("2^%u (abc_size %zu, %s): batch of %d, start/finalize on another thread, alloc_abc, destroy, bad input: "
           "ok; every proof pairing-checked%s; bytes copied per partition %zu without the "
           "allocator, %zu with; setup + CLI %.1f s, batch of 3 %.1f s, all %.1f s\n",
           power, n, group_mode ? "group" : "in-process", NW,
           group_mode ? " and == zkpipe prove's at the same r, s (the caller's, in the group too; == in-process at r = s = 0)"
                      : " and == zkpipe prove's at the same r, s",
           copied / NW, zero, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t0) / 1e9);
    fflush(stdout);
    circ_free(c);
    free(c);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_c2_circom ZKPIPE POWER...\n");
        return 2;
    }
    if (!getenv("ZKPIPE_C2_MODE")) setenv("ZKPIPE_C2_MODE", "inprocess", 1);
    const char *eg = getenv("ZP_C2_EXPECT_GROUP");   /* auto with a group expected: checked as group mode */
    group_mode = !strcmp(getenv("ZKPIPE_C2_MODE"), "group") ||
                 (eg && !strcmp(eg, "1") && !strcmp(getenv("ZKPIPE_C2_MODE"), "auto"));
    sync_dir = getenv("ZP_C2_SYNC_DIR");
    char tmp[] = "/tmp/zp_c2_circom_XXXXXX";
    CHECK(mkdtemp(tmp));
    zp_pool_t *pool = zp_pool_new(2);
    CHECK(pool);
    /* a small second circuit for the "another size in the batch" case */
    circ_t *other = calloc(1, sizeof *other);
    CHECK(other);
    circ_load(other, argv[1], tmp, 6, pool);
    for (int i = 2; i < argc; i++) {
        unsigned power = (unsigned)atoi(argv[i]);
        CHECK(power >= 6 && power <= 24);
        test_power(argv[1], tmp, power, pool, power != 6 ? other : NULL);
    }
    circ_free(other);
    free(other);
    zp_pool_destroy(&pool);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmp);
    printf("c2_circom: ok\n");
    return 0;
}
