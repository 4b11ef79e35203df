/* test_c2.c - libzkpipe_c2 (c2/zkpipe_c2.h) in cuzk's role: a C caller that hands bellman-made
 * assignments (tests/fixtures/bellman/<name>/dump/, upstream bellman's ProvingAssignment) to
 * supraseal-c2's functions, linked against the shared library (only its exported symbols).
 *   - one proof at r = 5, s = 9 (fr_t Montgomery) == upstream bellman's proof_r5_s9.bin once
 *     encoded as bellman's 192 bytes, both fixtures, ZKPIPE_C2_MODE=inprocess and auto;
 *   - a batch of 3 (r, s per circuit); start, free a/b/c, finalize on another thread; destroy
 *     without finalize; SRS cache / clone / drop / evict refcounts;
 *   - bad input: NULL pointers, n = 0, |L|, |A|, |B|, bit_len, popcount, abc_size against the
 *     domain, non-canonical r, a path that is no parameters file, a handle finalized twice or
 *     after destroy, a dropped SRS, mode group with no group answering (a RustError naming the
 *     runtime directory; an SRS opened in-process keeps proving in-process) and an unknown mode. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_slurp.h"
#include "c2/zkpipe_c2.h"
#include "lib/groth16/assignment.h"
#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); exit(1); } } while (0)

/* dir/name, whole (tests/test_slurp.h); a missing fixture ends the test */
static void *slurp(const char *dir, const char *name, size_t *len)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    char *b = test_slurp(p, len);
    if (!b) { fprintf(stderr, "cannot read %s\n", p); exit(1); }
    return (void *)b;
}

static size_t meta_num(const char *meta, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(meta, k);
    CHECK(p);
    return strtoull(p + strlen(k), NULL, 10);
}

typedef struct {
    char dir[512];
    Assignment as;
    void *mem[8];
    uint8_t ref[192];
} fixture_t;

static void fixture_load(fixture_t *f, const char *name)
{
    size_t len, ml;
    char dd[600];
    snprintf(f->dir, sizeof f->dir, "%s/bellman/%s", ZP_FIXTURES_DIR, name);
    snprintf(dd, sizeof dd, "%s/dump", f->dir);
    char *meta = slurp(dd, "meta.json", &ml);
    meta[ml] = 0;
    Assignment *a = &f->as;
    memset(a, 0, sizeof *a);
    a->abc_size = meta_num(meta, "abc_size");
    a->inp_assignment_size = meta_num(meta, "n_inputs");
    a->aux_assignment_size = meta_num(meta, "n_aux");
    a->a_aux_bit_len = meta_num(meta, "a_aux_bit_len");
    a->a_aux_popcount = meta_num(meta, "a_aux_popcount");
    a->b_inp_bit_len = meta_num(meta, "b_inp_bit_len");
    a->b_inp_popcount = meta_num(meta, "b_inp_popcount");
    a->b_aux_bit_len = meta_num(meta, "b_aux_bit_len");
    a->b_aux_popcount = meta_num(meta, "b_aux_popcount");
    free(meta);
    a->a = f->mem[0] = slurp(dd, "a.bin", &len);
    CHECK(len == a->abc_size * 32);
    a->b = f->mem[1] = slurp(dd, "b.bin", &len);
    CHECK(len == a->abc_size * 32);
    a->c = f->mem[2] = slurp(dd, "c.bin", &len);
    CHECK(len == a->abc_size * 32);
    a->inp_assignment_data = f->mem[3] = slurp(dd, "inp.bin", &len);
    CHECK(len == a->inp_assignment_size * 32);
    a->aux_assignment_data = f->mem[4] = slurp(dd, "aux.bin", &len);
    CHECK(len == a->aux_assignment_size * 32);
    a->a_aux_density = f->mem[5] = slurp(dd, "a_aux.bits", &len);
    CHECK(len == (a->a_aux_bit_len + 63) / 64 * 8);
    a->b_inp_density = f->mem[6] = slurp(dd, "b_inp.bits", &len);
    CHECK(len == (a->b_inp_bit_len + 63) / 64 * 8);
    a->b_aux_density = f->mem[7] = slurp(dd, "b_aux.bits", &len);
    CHECK(len == (a->b_aux_bit_len + 63) / 64 * 8);
    uint8_t *ref = slurp(f->dir, "proof_r5_s9.bin", &len);
    CHECK(len == 192);
    memcpy(f->ref, ref, 192);
    free(ref);
}

static void fixture_free(fixture_t *f)
{
    for (int i = 0; i < 8; i++) free(f->mem[i]);
}

static fr_t fr_of(uint64_t v)
{
    zp_fr_bls12_381_t m;
    zp_fr_bls12_381_set_u64(&m, v);   /* Montgomery form, as bls12_381::Scalar holds it */
    fr_t r;
    memcpy(&r, &m, sizeof r);
    return r;
}

/* groth16_proof (blst affine) -> bellman's 192-byte Proof::write */
static void encode(uint8_t out[192], const groth16_proof *p)
{
    zp_g16_proof_t pr;
    memset(&pr, 0, sizeof pr);
    pr.curve = ZP_CURVE_BLS12_381;
    memcpy(&pr.a.bls12_381, &p->a, sizeof p->a);
    memcpy(&pr.b.bls12_381, &p->b, sizeof p->b);
    memcpy(&pr.c.bls12_381, &p->c, sizeof p->c);
    size_t n;
    CHECK(zp_g16_conv_bellman.proof_encode(out, 192, &n, &pr) == 0 && n == 192);
}

static void expect_err(RustError e, const char *needle, int line)
{
    if (e.code == 0 || !e.message || (needle && !strstr(e.message, needle))) {
        fprintf(stderr, "line %d: wanted an error naming '%s', got code %d: %s\n", line, needle ? needle : "",
                e.code, e.message ? e.message : "(null)");
        exit(1);
    }
    free(e.message);   /* as sppark's Rust side does */
}
#define EXPECT_ERR(e, needle) expect_err((e), (needle), __LINE__)
#define EXPECT_OK(e) do { RustError e_ = (e); if (e_.code) { fprintf(stderr, "line %d: %d %s\n", __LINE__, e_.code, e_.message ? e_.message : ""); exit(1); } CHECK(!e_.message); } while (0)

static void test_one(const char *name)
{
    fixture_t f;
    fixture_load(&f, name);
    char p[700];
    snprintf(p, sizeof p, "%s/circuit.params", f.dir);
    SRS srs;
    EXPECT_OK(create_SRS(&srs, p, false));
    fr_t r = fr_of(5), s = fr_of(9);
    groth16_proof pr;
    uint8_t bin[192];
    void *mtx = create_gpu_mutex();
    CHECK(mtx);
    uint64_t t0 = zp_now_ns();
    EXPECT_OK(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, &srs, mtx, -1));
    uint64_t t1 = zp_now_ns();
    encode(bin, &pr);
    CHECK(!memcmp(bin, f.ref, 192));
    /* proof_r5_s9.blst: the 384-byte groth16_proof for the Rust harness
     * (integrations/supraseal-c2/tests/c2.rs); pinned here to bellman's bytes */
    snprintf(p, sizeof p, "%s/proof_r5_s9.blst", f.dir);
    if (getenv("ZP_C2_WRITE_BLST")) {
        FILE *o = fopen(p, "wb");
        CHECK(o && fwrite(&pr, sizeof pr, 1, o) == 1 && fclose(o) == 0);
    }
    size_t bl;
    uint8_t *blst = slurp(f.dir, "proof_r5_s9.blst", &bl);
    CHECK(bl == sizeof pr && !memcmp(blst, &pr, sizeof pr));
    encode(bin, (const groth16_proof *)blst);
    CHECK(!memcmp(bin, f.ref, 192));
    free(blst);
    destroy_gpu_mutex(mtx);
    drop_SRS(&srs);
    fixture_free(&f);
    printf("%s: proof r5 s9 == bellman's (%.1f ms)\n", name, (t1 - t0) / 1e6);
}

typedef struct { void *h; groth16_proof pr[3]; RustError e; } fin_arg_t;
static void *fin_thread(void *arg)
{
    fin_arg_t *a = arg;
    a->e = finalize_groth16_proof_c(a->h, a->pr);
    return NULL;
}

static void test_async(void)
{
    fixture_t f;
    fixture_load(&f, "chain300");
    char p[700];
    snprintf(p, sizeof p, "%s/circuit.params", f.dir);

    /* cache: one key per path; clone = one more reference; evict + drops release it */
    SRS s1, s2, s3;
    EXPECT_OK(create_SRS(&s1, p, true));
    EXPECT_OK(create_SRS(&s2, p, true));
    CHECK(s1.ptr && s1.ptr == s2.ptr);
    s3 = clone_SRS(&s1);
    CHECK(s3.ptr == s1.ptr);
    drop_SRS(&s1);
    drop_SRS(&s2);
    evict_SRS(&s3);
    SRS s4;
    EXPECT_OK(create_SRS(&s4, p, true));   /* evicted: a fresh key */
    evict_SRS(&s4);
    drop_SRS(&s4);
    SRS srs = s3;                            /* still alive through the clone */

    /* a batch of 3 sharing one SRS, r and s per circuit */
    Assignment as3[3] = {f.as, f.as, f.as};
    fr_t r3[3] = {fr_of(5), fr_of(7), fr_of(5)}, s3v[3] = {fr_of(9), fr_of(11), fr_of(9)};
    groth16_proof pr3[3];
    uint8_t b0[192], b1[192], b2[192];
    EXPECT_OK(generate_groth16_proofs_c(as3, 3, r3, s3v, pr3, &srs, NULL, 0));
    encode(b0, &pr3[0]);
    encode(b1, &pr3[1]);
    encode(b2, &pr3[2]);
    CHECK(!memcmp(b0, f.ref, 192) && !memcmp(b2, f.ref, 192));
    CHECK(memcmp(b1, f.ref, 192));   /* other r, s: another (pairing-checked) proof */
    printf("batch of 3: ok\n");

    /* start here, free a/b/c right away, finalize on another thread */
    size_t nb = f.as.abc_size * 32;
    Assignment cp[3];
    void *copies[9];
    for (int i = 0; i < 3; i++) {
        cp[i] = f.as;
        for (int j = 0; j < 3; j++) {
            copies[i * 3 + j] = malloc(nb);
            CHECK(copies[i * 3 + j]);
        }
        memcpy(copies[i * 3], f.as.a, nb);
        memcpy(copies[i * 3 + 1], f.as.b, nb);
        memcpy(copies[i * 3 + 2], f.as.c, nb);
        cp[i].a = copies[i * 3];
        cp[i].b = copies[i * 3 + 1];
        cp[i].c = copies[i * 3 + 2];
    }
    void *h = NULL;
    EXPECT_OK(generate_groth16_proofs_start_c(cp, 3, r3, s3v, &srs, NULL, -1, &h));
    CHECK(h);
    for (int i = 0; i < 9; i++) {
        memset(copies[i], 0xa5, nb);   /* the contract: a, b, c are the caller's again */
        free(copies[i]);
    }
    fin_arg_t fa = {.h = h};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, fin_thread, &fa) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    EXPECT_OK(fa.e);
    encode(b0, &fa.pr[0]);
    encode(b1, &fa.pr[1]);
    encode(b2, &fa.pr[2]);
    CHECK(!memcmp(b0, f.ref, 192) && !memcmp(b2, f.ref, 192) && memcmp(b1, f.ref, 192));
    /* finalized twice: detected, not dereferenced */
    groth16_proof tmp[3];
    EXPECT_ERR(finalize_groth16_proof_c(h, tmp), "not a live pending proof");
    /* a newer handle (its memory may sit where the old one did) does not revive the old one */
    void *h1 = NULL;
    EXPECT_OK(generate_groth16_proofs_start_c(as3, 1, r3, s3v, &srs, NULL, -1, &h1));
    CHECK(h1 != h);
    EXPECT_ERR(finalize_groth16_proof_c(h, tmp), "not a live pending proof");
    EXPECT_OK(finalize_groth16_proof_c(h1, tmp));
    printf("start / finalize on another thread: ok\n");

    /* destroy without finalize; then finalize of the destroyed handle */
    void *h2 = NULL;
    EXPECT_OK(generate_groth16_proofs_start_c(as3, 3, r3, s3v, &srs, NULL, -1, &h2));
    destroy_pending_proof(h2);
    EXPECT_ERR(finalize_groth16_proof_c(h2, tmp), "not a live pending proof");
    destroy_pending_proof(h2);   /* twice: ignored */
    destroy_pending_proof(NULL);
    printf("destroy without finalize: ok\n");

    drop_SRS(&srs);
    /* the SRS is gone: a stale handle is refused, and dropping it again is ignored */
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, r3, s3v, pr3, &srs, NULL, -1), "not a live SRS");
    SRS dead = clone_SRS(&srs);
    CHECK(dead.ptr == NULL);
    SRS none = {NULL};
    drop_SRS(&none);   /* Rust drops SRS::default() after a failed try_new */
    fixture_free(&f);
}

static void test_bad(void)
{
    fixture_t f;
    fixture_load(&f, "poseidon2");
    char p[700];
    snprintf(p, sizeof p, "%s/circuit.params", f.dir);
    SRS srs, bad = {NULL};
    EXPECT_OK(create_SRS(&srs, p, false));
    fr_t r = fr_of(5), s = fr_of(9);
    groth16_proof pr;
    void *h = (void *)1;
    Assignment a;

    /* parameters files */
    EXPECT_ERR(create_SRS(NULL, p, false), "ret");
    EXPECT_ERR(create_SRS(&bad, NULL, false), "path");
    snprintf(p, sizeof p, "%s/dump/meta.json", f.dir);
    EXPECT_ERR(create_SRS(&bad, p, false), "not a bellman parameters file");
    CHECK(bad.ptr == NULL);
    EXPECT_ERR(create_SRS(&bad, "/nonexistent/c2.params", true), "create_SRS");
    snprintf(p, sizeof p, "%s/dump/a.bin", f.dir);   /* sniffs as bellman (first byte), fails to parse */
    RustError e = create_SRS(&bad, p, false);
    CHECK(e.code != 0 && e.message && bad.ptr == NULL);
    free(e.message);
    snprintf(p, sizeof p, "%s/circuit.vk", f.dir);   /* a verifying key alone cannot prove */
    e = create_SRS(&bad, p, false);
    CHECK(e.code != 0 && e.message && bad.ptr == NULL);
    free(e.message);

    /* NULL pointers and counts */
    EXPECT_ERR(generate_groth16_proofs_c(NULL, 1, &r, &s, &pr, &srs, NULL, -1), "provers");
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 0, &r, &s, &pr, &srs, NULL, -1), "num_circuits");
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, NULL, &s, &pr, &srs, NULL, -1), "r_s");
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, &r, NULL, &pr, &srs, NULL, -1), "s_s");
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, &r, &s, NULL, &srs, NULL, -1), "proofs");
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, NULL, NULL, -1), "srs");
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, &bad, NULL, -1), "srs");
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, &srs, NULL, -2), "gpu_index");
    EXPECT_ERR(generate_groth16_proofs_start_c(&f.as, 1, &r, &s, &srs, NULL, -1, NULL), "pending_out");
    EXPECT_ERR(generate_groth16_proofs_start_c(&f.as, 0, &r, &s, &srs, NULL, -1, &h), "num_circuits");
    CHECK(h == NULL);
    EXPECT_ERR(finalize_groth16_proof_c(NULL, &pr), "pending");
    EXPECT_ERR(finalize_groth16_proof_c(&f, &pr), "not a live pending proof");   /* never issued */
    destroy_pending_proof(&f);                                                     /* ignored */
    const char *ptrs[] = {"a_aux_density", "b_inp_density", "b_aux_density", "a", "b", "c", "inp_assignment_data",
                          "aux_assignment_data"};
    for (int i = 0; i < 8; i++) {
        a = f.as;
        switch (i) {
        case 0: a.a_aux_density = NULL; break;
        case 1: a.b_inp_density = NULL; break;
        case 2: a.b_aux_density = NULL; break;
        case 3: a.a = NULL; break;
        case 4: a.b = NULL; break;
        case 5: a.c = NULL; break;
        case 6: a.inp_assignment_data = NULL; break;
        case 7: a.aux_assignment_data = NULL; break;
        }
        char want[64];
        snprintf(want, sizeof want, "provers[0].%s is NULL", ptrs[i]);
        EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), want);
    }
    /* sizes that disagree with each other or with the key; the second circuit of a batch is named */
    Assignment two[2] = {f.as, f.as};
    fr_t r2[2] = {r, r}, s2[2] = {s, s};
    groth16_proof pr2[2];
    two[1].a_aux_popcount--;
    EXPECT_ERR(generate_groth16_proofs_c(two, 2, r2, s2, pr2, &srs, NULL, -1), "provers[1]: ");
    a = f.as;
    a.a_aux_popcount++;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "popcounts");
    a = f.as;
    a.b_aux_popcount--;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "popcounts");
    a = f.as;
    a.b_inp_bit_len++;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "b_inp_bit_len");
    a = f.as;
    a.a_aux_bit_len--;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "a_aux_bit_len");
    /* |L| != aux count: one aux fewer, bit lengths following */
    a = f.as;
    a.aux_assignment_size--;
    a.a_aux_bit_len--;
    a.b_aux_bit_len--;
    RustError el = generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1);
    CHECK(el.code && el.message && (strstr(el.message, "|L|") || strstr(el.message, "popcounts")));
    free(el.message);
    /* |A| != inputs + a_aux popcount: a bitmap with one bit cleared, its popcount following */
    size_t words = (f.as.a_aux_bit_len + 63) / 64;
    uint64_t *bits = malloc(words * 8);
    CHECK(bits);
    memcpy(bits, f.as.a_aux_density, words * 8);
    size_t bit = 0;
    while (!(bits[bit / 64] >> (bit % 64) & 1)) bit++;
    bits[bit / 64] &= ~(1ull << (bit % 64));
    a = f.as;
    a.a_aux_density = bits;
    a.a_aux_popcount--;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "|A|");
    /* |B| != b_inp + b_aux popcounts */
    memcpy(bits, f.as.b_aux_density, words * 8);
    bit = 0;
    while (!(bits[bit / 64] >> (bit % 64) & 1)) bit++;
    bits[bit / 64] &= ~(1ull << (bit % 64));
    a = f.as;
    a.b_aux_density = bits;
    a.b_aux_popcount--;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "|B");
    free(bits);
    /* abc_size beyond the key's domain (|H|), and zero */
    size_t big = f.as.abc_size * 4;
    fr_t *abc = calloc(big, sizeof *abc);
    CHECK(abc);
    a = f.as;
    a.a = a.b = a.c = abc;
    a.abc_size = big;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "|H|");
    a.abc_size = 0;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "abc_size");
    free(abc);
    /* r not a canonical fr_t */
    fr_t rbig = {{~0ull, ~0ull, ~0ull, ~0ull}};
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, &rbig, &s, &pr, &srs, NULL, -1), "r_s[0]");
    /* an assignment that fits the key's sizes but not the circuit: the proof is refused */
    fr_t *c2 = malloc(f.as.abc_size * sizeof *c2);
    CHECK(c2);
    memcpy(c2, f.as.c, f.as.abc_size * sizeof *c2);
    c2[0].l[0] ^= 1;
    a = f.as;
    a.c = c2;
    EXPECT_ERR(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1), "pairing");
    free(c2);

    /* modes */
    setenv("ZKPIPE_C2_MODE", "group", 1);
    setenv("ZP_RUNTIME_DIR", "/nonexistent/zkpipe-c2-test", 1);
    snprintf(p, sizeof p, "%s/circuit.params", f.dir);
    EXPECT_ERR(create_SRS(&bad, p, false), "no zkpipe group answers");
    CHECK(bad.ptr == NULL);
    EXPECT_ERR(create_SRS(&bad, p, true), "/nonexistent/zkpipe-c2-test");
    fr_t *ga, *gb, *gc;   /* the allocator in group mode: a, b, c in a /dev/shm vectors file */
    EXPECT_OK(zkpipe_c2_alloc_abc(f.as.abc_size, &ga, &gb, &gc));
    CHECK(ga && gb == ga + f.as.abc_size && gc == gb + f.as.abc_size);
    memcpy(ga, f.as.a, f.as.abc_size * 32);
    memcpy(gb, f.as.b, f.as.abc_size * 32);
    memcpy(gc, f.as.c, f.as.abc_size * 32);
    /* an SRS opened in-process proves in-process whatever the mode says now; the shared-memory
     * block is taken by reference there too */
    a = f.as;
    a.a = ga;
    a.b = gb;
    a.c = gc;
    size_t c0 = zkpipe_c2_bytes_copied();
    EXPECT_OK(generate_groth16_proofs_c(&a, 1, &r, &s, &pr, &srs, NULL, -1));
    CHECK(zkpipe_c2_bytes_copied() == c0);
    zkpipe_c2_free_abc(ga);
    setenv("ZKPIPE_C2_MODE", "gpu", 1);
    EXPECT_ERR(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, &srs, NULL, -1), "unknown mode");
    setenv("ZKPIPE_C2_MODE", "auto", 1);   /* no group at ZP_RUNTIME_DIR: in-process, at once */
    EXPECT_OK(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, &srs, NULL, -1));
    uint8_t bin[192];
    encode(bin, &pr);
    CHECK(!memcmp(bin, f.ref, 192));
    SRS as_auto;
    EXPECT_OK(create_SRS(&as_auto, p, false));
    EXPECT_OK(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, &as_auto, NULL, -1));
    encode(bin, &pr);
    CHECK(!memcmp(bin, f.ref, 192));
    drop_SRS(&as_auto);
    unsetenv("ZP_RUNTIME_DIR");
    setenv("ZKPIPE_C2_MODE", "inprocess", 1);
    drop_SRS(&srs);
    fixture_free(&f);
    printf("bad input: ok\n");
}

/* zkpipe_c2_alloc_abc: start takes the library's own a, b, c by reference (0 bytes copied),
 * the caller releases them right after start; plain buffers are copied (3 x abc_size x 32) */
static void test_alloc(void)
{
    fixture_t f;
    fixture_load(&f, "chain300");
    char p[700];
    snprintf(p, sizeof p, "%s/circuit.params", f.dir);
    SRS srs;
    EXPECT_OK(create_SRS(&srs, p, false));
    fr_t r = fr_of(5), s = fr_of(9), *a = NULL, *b = NULL, *c = NULL;
    size_t n = f.as.abc_size, nb = n * 32;
    EXPECT_ERR(zkpipe_c2_alloc_abc(0, &a, &b, &c), "n = 0");
    EXPECT_ERR(zkpipe_c2_alloc_abc(n, NULL, &b, &c), "NULL");
    EXPECT_OK(zkpipe_c2_alloc_abc(n, &a, &b, &c));
    CHECK(a && b == a + n && c == b + n && ((uintptr_t)a & 63) == 0);
    memcpy(a, f.as.a, nb);
    memcpy(b, f.as.b, nb);
    memcpy(c, f.as.c, nb);
    Assignment as = f.as;
    as.a = a;
    as.b = b;
    as.c = c;
    size_t c0 = zkpipe_c2_bytes_copied();
    void *h = NULL;
    EXPECT_OK(generate_groth16_proofs_start_c(&as, 1, &r, &s, &srs, NULL, -1, &h));
    size_t zero_copy = zkpipe_c2_bytes_copied() - c0;
    zkpipe_c2_free_abc(a);   /* the pending proof keeps its own reference */
    groth16_proof pr;
    uint8_t bin[192];
    EXPECT_OK(finalize_groth16_proof_c(h, &pr));
    encode(bin, &pr);
    CHECK(!memcmp(bin, f.ref, 192));
    CHECK(zero_copy == 0);
    /* plain buffers: copied */
    c0 = zkpipe_c2_bytes_copied();
    EXPECT_OK(generate_groth16_proofs_c(&f.as, 1, &r, &s, &pr, &srs, NULL, -1));
    size_t copied = zkpipe_c2_bytes_copied() - c0;
    CHECK(copied == 3 * nb);
    /* a block whose b is not where the library put it is not recognised: copied */
    EXPECT_OK(zkpipe_c2_alloc_abc(n, &a, &b, &c));
    memcpy(a, f.as.a, nb);
    memcpy(c, f.as.c, nb);
    fr_t *b2 = malloc(nb);
    CHECK(b2);
    memcpy(b2, f.as.b, nb);
    as.a = a;
    as.b = b2;
    as.c = c;
    c0 = zkpipe_c2_bytes_copied();
    EXPECT_OK(generate_groth16_proofs_c(&as, 1, &r, &s, &pr, &srs, NULL, -1));
    CHECK(zkpipe_c2_bytes_copied() - c0 == 3 * nb);
    encode(bin, &pr);
    CHECK(!memcmp(bin, f.ref, 192));
    free(b2);
    zkpipe_c2_free_abc(a);
    zkpipe_c2_free_abc(a);   /* already released: ignored */
    drop_SRS(&srs);
    fixture_free(&f);
    printf("alloc_abc: ok (bytes of a, b, c copied per partition: %zu with the allocator, %zu without)\n",
           zero_copy, copied);
}

int main(void)
{
    setenv("ZKPIPE_C2_MODE", "inprocess", 1);
    test_one("chain300");
    test_one("poseidon2");
    test_async();
    test_bad();
    test_alloc();
    printf("c2: ok\n");
    return 0;
}
