/* test_fmt.c - lib/fmt: every committed fixture parses with the counts of its meta.json; every
 * reader error is provoked with a file crafted in memory from a good fixture (truncations,
 * bad magic/version/protocol, missing/duplicate/oversized sections, huge counts, wrong primes,
 * non-canonical values, bad coef entries, mismatched witness/r1cs/zkey); JSON round trips are
 * byte-exact against the snarkjs files and JSON errors name the path.
 * Fixtures: $ZP_FIXTURES, else ZP_FIXTURES_DIR (compile time), else tests/fixtures. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fmt/fmt.h"
#include "lib/fmt/fmt_int.h"
#include "lib/util/util.h"
#include "test_slurp.h"

#ifndef ZP_FIXTURES_DIR
#define ZP_FIXTURES_DIR "tests/fixtures"
#endif

static int failures;
static char tmpdir[256];
static const char *fixdir;

#define CHECK(c)                                                                              \
    do {                                                                                      \
        if (!(c)) {                                                                           \
            fprintf(stderr, "%s:%d: CHECK(%s) failed [%s]\n", __FILE__, __LINE__, #c, zp_err_msg()); \
            failures++;                                                                       \
        }                                                                                     \
    } while (0)
#define EXPECT_ERR(expr, code, sub) expect_err((expr), (code), (sub), __LINE__, #expr)

static void expect_err(int rc, int code, const char *sub, int line, const char *what)
{
    if (getenv("ZP_TEST_VERBOSE")) printf("  %d: %s\n", line, zp_err_msg());
    if (rc != code || !strstr(zp_err_msg(), sub)) {
        fprintf(stderr, "%s:%d: %s: rc %d, msg \"%s\"; expected %d (%s) with \"%s\"\n", __FILE__, line, what, rc,
                zp_err_msg(), code, zp_strerror(code), sub);
        failures++;
    }
}

static void spit(const char *path, const void *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, len, f) != len) { perror(path); exit(1); }
    fclose(f);
}

static char *fpath(const char *fx, const char *file)
{
    static char buf[8][1024];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s/%s", fixdir, fx, file);
    return buf[k];
}

static long meta_num(const char *meta, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(meta, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/* ---- binfile surgery: split into sections, change, join ---- */
typedef struct { uint32_t id; uint8_t *d; uint64_t n; } tsec_t;
typedef struct { uint8_t head[12]; int n; tsec_t s[24]; } tfile_t;

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i); }

static void tsplit(tfile_t *t, const uint8_t *b, size_t len)
{
    memset(t, 0, sizeof *t);
    memcpy(t->head, b, 12);
    size_t pos = 12;
    while (pos < len) {
        tsec_t *s = &t->s[t->n++];
        s->id = zp_fmt_u32(b + pos);
        s->n = zp_fmt_u64(b + pos + 4);
        s->d = malloc(s->n + 1);
        memcpy(s->d, b + pos + 12, s->n);
        pos += 12 + s->n;
    }
}
static uint8_t *tjoin(const tfile_t *t, size_t *len)
{
    size_t n = 12;
    for (int i = 0; i < t->n; i++) n += 12 + t->s[i].n;
    uint8_t *b = malloc(n), *p = b + 12;
    memcpy(b, t->head, 12);
    put32(b + 8, (uint32_t)t->n);
    for (int i = 0; i < t->n; i++) {
        put32(p, t->s[i].id);
        put64(p + 4, t->s[i].n);
        memcpy(p + 12, t->s[i].d, t->s[i].n);
        p += 12 + t->s[i].n;
    }
    *len = n;
    return b;
}
static void tfree(tfile_t *t) { for (int i = 0; i < t->n; i++) free(t->s[i].d); t->n = 0; }
static tsec_t *tsec(tfile_t *t, uint32_t id)
{
    for (int i = 0; i < t->n; i++) if (t->s[i].id == id) return &t->s[i];
    fprintf(stderr, "no section %u\n", id);
    exit(1);
}
static void tresize(tsec_t *s, uint64_t n)
{
    s->d = realloc(s->d, n + 1);
    if (n > s->n) memset(s->d + s->n, 0, n - s->n);
    s->n = n;
}
static void tremove(tfile_t *t, uint32_t id)
{
    for (int i = 0; i < t->n; i++)
        if (t->s[i].id == id) {
            free(t->s[i].d);
            memmove(&t->s[i], &t->s[i + 1], (size_t)(t->n - i - 1) * sizeof t->s[0]);
            t->n--;
            return;
        }
}

typedef int (*parse_fn)(void *obj, const void *buf, size_t len, const char *name);
static int p_zkey(void *o, const void *b, size_t l, const char *n) { return zp_zkey_parse(o, b, l, n); }
static int p_wtns(void *o, const void *b, size_t l, const char *n) { return zp_wtns_parse(o, b, l, n); }
static int p_r1cs(void *o, const void *b, size_t l, const char *n) { return zp_r1cs_parse(o, b, l, n); }

/* parse a joined crafted file; the buffer is freed after the parse (objects are not used) */
static int tparse(parse_fn fn, const tfile_t *t, const char *name)
{
    union { zp_zkey_t z; zp_wtns_t w; zp_r1cs_t r; } o;
    size_t len;
    uint8_t *b = tjoin(t, &len);
    int rc = fn(&o, b, len, name);
    free(b);
    return rc;
}

/* every prefix shorter than the file must fail cleanly; sampled plus all boundaries */
static void truncations(parse_fn fn, const uint8_t *b, size_t len, const char *name)
{
    union { zp_zkey_t z; zp_wtns_t w; zp_r1cs_t r; } o;
    size_t step = len / 301 + 1;
    int n = 0;
    for (size_t cut = 0; cut < len; cut += (cut < 64 || len - cut < 64) ? 1 : step) {
        uint8_t *c = malloc(cut ? cut : 1);   /* exact-size copy: ASan catches any overread */
        memcpy(c, b, cut);
        int rc = fn(&o, c, cut, name);
        free(c);
        if (rc >= 0) { fprintf(stderr, "%s: truncated to %zu of %zu bytes accepted\n", name, cut, len); failures++; }
        n++;
    }
    /* cuts at every section boundary +- 1 */
    for (size_t pos = 12; pos + 12 <= len;) {
        uint64_t sz = zp_fmt_u64(b + pos + 4);
        for (int d = -1; d <= 13; d += 1) {
            size_t cut = pos + (size_t)(d < 0 ? 0 : d) - (d < 0 ? 1 : 0);
            if (cut >= len) continue;
            uint8_t *c = malloc(cut ? cut : 1);
            memcpy(c, b, cut);
            if (fn(&o, c, cut, name) >= 0) { fprintf(stderr, "%s: cut at %zu accepted\n", name, cut); failures++; }
            free(c);
            n++;
        }
        pos += 12 + sz;
    }
    (void)n;
}

/* random single-byte and 4-byte corruptions: never a crash or overread (run under ASan) */
static void corruptions(parse_fn fn, const uint8_t *b, size_t len, const char *name, unsigned rounds)
{
    union { zp_zkey_t z; zp_wtns_t w; zp_r1cs_t r; } o;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ len;
    uint8_t *c = malloc(len);
    unsigned rejected = 0;
    for (unsigned i = 0; i < rounds; i++) {
        memcpy(c, b, len);
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t pos = (size_t)(x % len);
        /* bias towards the headers, where the counts live */
        if (i % 2 == 0) pos = pos % (len < 1024 ? len : 1024);
        if (i % 3 == 0 && pos + 4 <= len) put32(c + pos, (uint32_t)(x >> 32));
        else c[pos] ^= (uint8_t)((x >> 40) | 1);
        if (fn(&o, c, len, name) < 0) rejected++;
    }
    free(c);
    CHECK(rejected > 0);
}

/* ================================================================ good fixtures */

static void le_dec(char *out, const uint8_t *le, size_t n8) { zp_fmt_le_to_dec(out, 160, le, n8); }

static void check_public_vs_witness(const char *fx, const char *pubfile, const char *wtnsfile, long npub)
{
    char (*sig)[100];
    size_t n;
    zp_wtns_t w;
    CHECK(zp_public_json_read(&sig, &n, fpath(fx, pubfile)) == 0);
    CHECK(zp_wtns_open(&w, fpath(fx, wtnsfile)) == 0);
    CHECK((long)n == npub);
    CHECK(zp_public_json_check(sig, n, w.curve, pubfile) == 0);
    for (size_t i = 0; i < n && i + 1 < w.n_witness; i++) {
        char dec[160];
        le_dec(dec, w.values + (i + 1) * w.n8, w.n8);
        CHECK(!strcmp(dec, sig[i]));
    }
    free(sig);
    zp_wtns_close(&w);
}

/* format(parse(file)) == file bytes */
static void check_proof_roundtrip(const char *fx, const char *file)
{
    size_t len;
    char *orig = test_slurp(fpath(fx, file), &len);
    zp_proof_json_t p;
    if (!orig || zp_proof_json_read(&p, fpath(fx, file))) {
        fprintf(stderr, "%s/%s: %s\n", fx, file, zp_err_msg());
        failures++;
        free(orig);
        return;
    }
    char buf[4096];
    size_t n = zp_proof_json_format(buf, sizeof buf, &p);
    CHECK(n == len && !memcmp(buf, orig, len));
    /* small buffers: snprintf semantics */
    char small[16];
    CHECK(zp_proof_json_format(small, sizeof small, &p) == len && strlen(small) == 15);
    /* written file has the same bytes */
    char out[600];
    snprintf(out, sizeof out, "%s/proof_out.json", tmpdir);
    CHECK(zp_proof_json_write(out, &p) == 0);
    size_t l2;
    char *again = test_slurp(out, &l2);
    CHECK(again && l2 == len && !memcmp(again, orig, len));
    free(again);
    free(orig);
}

static void check_public_roundtrip(const char *fx, const char *file)
{
    size_t len, n;
    char *orig = test_slurp(fpath(fx, file), &len);
    char (*sig)[100] = NULL;
    n = 0;
    if (!orig || zp_public_json_read(&sig, &n, fpath(fx, file))) {
        fprintf(stderr, "%s/%s: %s\n", fx, file, zp_err_msg());
        failures++;
        free(orig);
        return;
    }
    size_t need = zp_public_json_format(NULL, 0, sig, n);
    char *buf = malloc(need + 1);
    CHECK(zp_public_json_format(buf, need + 1, sig, n) == len && !memcmp(buf, orig, len));
    char out[600];
    snprintf(out, sizeof out, "%s/public_out.json", tmpdir);
    CHECK(zp_public_json_write(out, sig, n) == 0);
    size_t l2;
    char *again = test_slurp(out, &l2);
    CHECK(again && l2 == len && !memcmp(again, orig, len));
    free(again);
    free(buf);
    free(sig);
    free(orig);
}

static void check_fixture(const char *fx)
{
    size_t ml;
    char *meta = test_slurp(fpath(fx, "meta.json"), &ml);
    if (!meta) return;
    long nvars = meta_num(meta, "nVars"), npub = meta_num(meta, "nPublic"), dom = meta_num(meta, "domainSize"),
         ncons = meta_num(meta, "nConstraints");
    const char *curve = strstr(meta, "\"bls12381\"") ? "bls12381" : "bn128";
    zp_zkey_t z;
    zp_wtns_t w;
    zp_r1cs_t r;
    CHECK(zp_zkey_open(&z, fpath(fx, "circuit.zkey")) == 0);
    CHECK(zp_wtns_open(&w, fpath(fx, "witness.wtns")) == 0);
    CHECK(zp_r1cs_open(&r, fpath(fx, "circuit.r1cs")) == 0);
    CHECK(!strcmp(zp_curve_name(z.curve), curve) && w.curve == z.curve && r.curve == z.curve);
    CHECK(z.n_vars == nvars && z.n_public == npub && z.domain_size == dom && (1l << z.log_n) == dom);
    CHECK(z.n8q == (z.curve == ZP_CURVE_BN254 ? 32u : 48u) && z.n8r == 32);
    CHECK(w.n_witness == nvars && w.n8 == 32);
    CHECK(r.n_wires == nvars && r.n_pub_out + r.n_pub_in == npub && r.n_constraints == ncons);
    CHECK(z.n_coefs > z.n_public && z.points_h && z.ic && z.coefs);
    CHECK(zp_check_wtns_zkey(&w, &z) == 0);
    CHECK(zp_check_r1cs_zkey(&r, &z) == 0);
    CHECK(zp_zkey_check_points(&z) == 0);
    /* parse over memory gives the same view */
    zp_zkey_t zm;
    CHECK(zp_zkey_parse(&zm, z.f.map, z.f.size, "mem.zkey") == 0 && zm.n_coefs == z.n_coefs &&
          zm.points_h == z.points_h && zm.f.mapped == 0);
    zp_zkey_close(&zm);

    zp_vk_json_t vk;
    CHECK(zp_vk_json_read(&vk, fpath(fx, "verification_key.json")) == 0);
    CHECK(vk.curve == z.curve && vk.n_public == npub && vk.ic && vk.ic[npub][0][0]);
    zp_vk_json_free(&vk);

    const char *proofs[3] = {"proof.json", "proof_rs0.json", "proof_rs.json"};
    for (int i = 0; i < 3; i++) check_proof_roundtrip(fx, proofs[i]);
    check_public_roundtrip(fx, "public_rs0.json");
    if (npub > 0) check_public_roundtrip(fx, "public.json");   /* empty: the CLI writes "[\n]" */
    check_public_vs_witness(fx, "public.json", "witness.wtns", npub);

    /* multi-witness set */
    for (int i = 0; i < 8; i++) {
        char wf[32], pf[32], qf[32];
        snprintf(wf, sizeof wf, "witness-%d.wtns", i);
        snprintf(pf, sizeof pf, "public_rs0-%d.json", i);
        snprintf(qf, sizeof qf, "proof_rs0-%d.json", i);
        if (access(fpath(fx, wf), F_OK)) break;
        zp_wtns_t wi;
        CHECK(zp_wtns_open(&wi, fpath(fx, wf)) == 0 && zp_check_wtns_zkey(&wi, &z) == 0);
        CHECK(memcmp(wi.values, w.values, (size_t)w.n_witness * w.n8) != 0 || i == 0);
        zp_wtns_close(&wi);
        check_public_vs_witness(fx, pf, wf, npub);
        check_proof_roundtrip(fx, qf);
    }
    if (!access(fpath(fx, "witness-bad.wtns"), F_OK)) {   /* canonical, only unsatisfying */
        zp_wtns_t wb;
        CHECK(zp_wtns_open(&wb, fpath(fx, "witness-bad.wtns")) == 0 && zp_check_wtns_zkey(&wb, &z) == 0);
        zp_wtns_close(&wb);
    }
    zp_zkey_close(&z);
    zp_wtns_close(&w);
    zp_r1cs_close(&r);
    CHECK(z.f.map == NULL);
    zp_zkey_close(&z);   /* double close is harmless */
    free(meta);
}

/* ================================================================ crafted zkeys */

static void zkey_errors(const char *fx)
{
    size_t len;
    uint8_t *b = (uint8_t *)test_slurp(fpath(fx, "circuit.zkey"), &len);
    CHECK(b != NULL);
    zp_zkey_t z;
    CHECK(zp_zkey_parse(&z, b, len, "circuit.zkey") == 0);
    const uint32_t n8q = z.n8q, nv = z.n_vars, dom = z.domain_size;
    const bool bn = z.curve == ZP_CURVE_BN254;
    const zp_curve_id_t curve = z.curve;
    const uint32_t npub = z.n_public;
    truncations(p_zkey, b, len, "circuit.zkey");
    corruptions(p_zkey, b, len, "circuit.zkey", 3000);
    tfile_t t;
    const char *N = "circuit.zkey";
#define FRESH() do { tfree(&t); tsplit(&t, b, len); } while (0)
    t.n = 0;
    FRESH();
    CHECK(tparse(p_zkey, &t, N) == 0);   /* split/join is lossless */

    t.head[0] = 'Z';
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "circuit.zkey: bad magic \"Zkey\"");
    FRESH(); put32(t.head + 4, 3);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EVERSION, "zkey version 3 not supported");
    FRESH(); put32(t.head + 4, 0);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EVERSION, "version 0");
    FRESH(); put32(t.head + 4, 2);
    CHECK(tparse(p_zkey, &t, N) == 0);
    FRESH(); put32(tsec(&t, 1)->d, 2);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EVERSION, "PLONK zkey (protocol 2) not supported");
    FRESH(); put32(tsec(&t, 1)->d, 10);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EVERSION, "FFLONK");
    FRESH(); put32(tsec(&t, 1)->d, 7);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "unknown zkey protocol 7");
    FRESH(); tresize(tsec(&t, 1), 8);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "section 1 (header) is 8 bytes");
    for (uint32_t id = 1; id <= 9; id++) {
        char want[64];
        snprintf(want, sizeof want, "circuit.zkey: missing section %u", id);
        FRESH(); tremove(&t, id);
        EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, want);
    }
    FRESH(); tremove(&t, 10);
    CHECK(tparse(p_zkey, &t, N) == 0);   /* contributions are not needed */
    /* duplicate section */
    FRESH();
    t.s[t.n].id = 5; t.s[t.n].n = tsec(&t, 5)->n;
    t.s[t.n].d = malloc(t.s[t.n].n); memcpy(t.s[t.n].d, tsec(&t, 5)->d, t.s[t.n].n); t.n++;
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "duplicate section 5");
    /* unknown extra section ids are skipped */
    FRESH(); t.s[t.n].id = 77; t.s[t.n].n = 3; t.s[t.n].d = calloc(1, 3); t.n++;
    CHECK(tparse(p_zkey, &t, N) == 0);
    /* section size beyond the file, and one that would overflow offset + size */
    {
        uint64_t sizes[2] = {0, UINT64_MAX - 5};
        for (int i = 0; i < 2; i++) {
            uint8_t *c = malloc(len);
            memcpy(c, b, len);
            put64(c + 12 + 4, sizes[i] ? sizes[i] : len);   /* first section header */
            EXPECT_ERR(zp_zkey_parse(&z, c, len, N), ZP_EFORMAT, "beyond the end of the file");
            put32(c + 8, zp_fmt_u32(c + 8) + 1);              /* one section more than there is */
            put64(c + 12 + 4, zp_fmt_u64(b + 12 + 4));
            EXPECT_ERR(zp_zkey_parse(&z, c, len, N), ZP_EFORMAT, "runs past the end of the file");
            put32(c + 8, 0x7fffffff);
            EXPECT_ERR(zp_zkey_parse(&z, c, len, N), ZP_EFORMAT, "runs past the end");
            free(c);
        }
        uint8_t *c = malloc(len + 5);
        memcpy(c, b, len);
        memset(c + len, 0, 5);
        EXPECT_ERR(zp_zkey_parse(&z, c, len + 5, N), ZP_EFORMAT, "5 unexpected bytes after the last");
        free(c);
    }
    /* header section: field sizes, primes, counts */
    uint8_t *h;
    const size_t o_r = 8 + n8q, o_nv = o_r + 32, o_np = o_nv + 4, o_dom = o_np + 4;
    FRESH(); put32(tsec(&t, 2)->d, 40);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_ECURVE, "n8q = 40 bytes not supported");
    FRESH(); put32(tsec(&t, 2)->d + 4 + n8q, 48);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_ECURVE, "n8r = 48");
    FRESH(); tresize(tsec(&t, 2), tsec(&t, 2)->n + 1);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "section 2 (Groth16 header) is");
    FRESH(); tresize(tsec(&t, 2), 6);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "section 2 (Groth16 header) is 6 bytes, too short");
    FRESH(); tsec(&t, 2)->d[4] ^= 1;
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_ECURVE, "base field q is an unknown prime");
    FRESH(); h = tsec(&t, 2)->d; memcpy(h + o_r, h + 4, 32);   /* r := q (bn128) or low half of q */
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_ECURVE, "scalar field r is");
    {   /* r of the other curve */
        uint32_t n8;
        const uint8_t *other = zp_fmt_curve_r(bn ? ZP_CURVE_BLS12_381 : ZP_CURVE_BN254, &n8);
        FRESH(); memcpy(tsec(&t, 2)->d + o_r, other, 32);
        EXPECT_ERR(tparse(p_zkey, &t, N), ZP_ECURVE, bn ? "q is of bn128 but r is of bls12381" : "q is of bls12381 but r is of bn128");
    }
    FRESH(); put32(tsec(&t, 2)->d + o_nv, 0xffffffffu);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "points A) is");
    FRESH(); put32(tsec(&t, 2)->d + o_nv, npub);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "nVars");
    FRESH(); put32(tsec(&t, 2)->d + o_np, 0xffffffffu);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "< nPublic 4294967295 + 1");
    FRESH(); put32(tsec(&t, 2)->d + o_dom, dom + 1);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "not a power of two");
    FRESH(); put32(tsec(&t, 2)->d + o_dom, 0);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "domainSize 0 is not a power of two");
    FRESH(); put32(tsec(&t, 2)->d + o_dom, 1u << 31);
    if (bn) EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "exceeds the 2-adicity");
    else EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "section 9 (points H) is");
    FRESH(); put32(tsec(&t, 2)->d + o_dom, dom * 2);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "header says");
    /* point sections of the wrong size */
    for (uint32_t id = 3; id <= 9; id++) {
        if (id == 4) continue;
        char want[64];
        snprintf(want, sizeof want, "section %u (", id);
        FRESH(); tresize(tsec(&t, id), tsec(&t, id)->n - 1);
        EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, want);
        FRESH(); tresize(tsec(&t, id), tsec(&t, id)->n + 2 * n8q);
        EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, want);
    }
    /* coefs */
    const size_t esz = 44;
    FRESH(); put32(tsec(&t, 4)->d, 0xffffffffu);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "header says 4294967295 entries of 44 bytes");
    FRESH(); tresize(tsec(&t, 4), 3);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "too short for its count");
    FRESH(); tresize(tsec(&t, 4), tsec(&t, 4)->n - 1);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "section 4 (coefs) is");
    FRESH(); put32(tsec(&t, 4)->d + 4 + 2 * esz, 2);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "coef 2: matrix 2");
    FRESH(); put32(tsec(&t, 4)->d + 4 + 3 * esz + 4, dom);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "coef 3: row");
    FRESH(); put32(tsec(&t, 4)->d + 4 + 1 * esz + 8, nv);
    EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "coef 1: wire");
    {
        uint32_t n8;
        const uint8_t *r = zp_fmt_curve_r(curve, &n8);
        FRESH(); memcpy(tsec(&t, 4)->d + 4 + 12, r, 32);
        EXPECT_ERR(tparse(p_zkey, &t, N), ZP_EFORMAT, "coef 0: value not canonical");
        FRESH(); memcpy(tsec(&t, 4)->d + 4 + 12, r, 32); tsec(&t, 4)->d[4 + 12] -= 1;   /* r - 1: fine */
        CHECK(tparse(p_zkey, &t, N) == 0);
    }
    /* non-canonical point coordinate: accepted at open, caught by check_points */
    {
        uint32_t n8;
        const uint8_t *q = zp_fmt_curve_q(curve, &n8);
        FRESH(); memcpy(tsec(&t, 9)->d + 2 * n8q * 3 + n8q, q, n8q);
        size_t l2;
        uint8_t *c = tjoin(&t, &l2);
        zp_zkey_t z2;
        CHECK(zp_zkey_parse(&z2, c, l2, N) == 0);
        EXPECT_ERR(zp_zkey_check_points(&z2), ZP_EFORMAT, "H[3] coordinate 1 not canonical");
        free(c);
    }
    tfree(&t);
    /* open() paths */
    char p[600];
    snprintf(p, sizeof p, "%s/nonexistent.zkey", tmpdir);
    EXPECT_ERR(zp_zkey_open(&z, p), -ENOENT, "nonexistent.zkey: open");
    EXPECT_ERR(zp_zkey_open(&z, tmpdir), ZP_EFORMAT, "not a regular file");
    snprintf(p, sizeof p, "%s/empty.zkey", tmpdir);
    spit(p, "", 0);
    EXPECT_ERR(zp_zkey_open(&z, p), ZP_EFORMAT, "empty.zkey: empty file");
    snprintf(p, sizeof p, "%s/short.zkey", tmpdir);
    spit(p, b, 100);
    EXPECT_ERR(zp_zkey_open(&z, p), ZP_EFORMAT, "short.zkey: section");
    EXPECT_ERR(zp_wtns_open((zp_wtns_t *)&z, fpath(fx, "circuit.zkey")), ZP_EFORMAT, "bad magic \"zkey\", expected \"wtns\"");
#undef FRESH
    free(b);
}

/* ================================================================ crafted witnesses */

static void wtns_errors(const char *fx, const char *other_fx)
{
    size_t len;
    uint8_t *b = (uint8_t *)test_slurp(fpath(fx, "witness.wtns"), &len);
    zp_wtns_t w;
    CHECK(b && zp_wtns_parse(&w, b, len, "witness.wtns") == 0);
    const uint32_t nw = w.n_witness;
    uint32_t n8;
    const uint8_t *r = zp_fmt_curve_r(w.curve, &n8);
    truncations(p_wtns, b, len, "witness.wtns");
    corruptions(p_wtns, b, len, "witness.wtns", 3000);
    tfile_t t;
    const char *N = "witness.wtns";
    t.n = 0;
#define FRESH() do { tfree(&t); tsplit(&t, b, len); } while (0)
    FRESH(); CHECK(tparse(p_wtns, &t, N) == 0);
    FRESH(); memcpy(t.head, "wtnz", 4);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "witness.wtns: bad magic \"wtnz\", expected \"wtns\"");
    FRESH(); put32(t.head + 4, 1);   /* version 1: same layout, snarkjs/rapidsnark read it */
    CHECK(tparse(p_wtns, &t, N) == 0);
    FRESH(); put32(t.head + 4, 0);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EVERSION, "wtns version 0 not supported (1..2)");
    FRESH(); put32(t.head + 4, 3);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EVERSION, "version 3");
    FRESH(); tremove(&t, 1);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "witness.wtns: missing section 1 (header)");
    FRESH(); tremove(&t, 2);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "missing section 2 (values)");
    FRESH(); t.s[t.n] = t.s[0]; t.s[t.n].d = malloc(t.s[0].n); memcpy(t.s[t.n].d, t.s[0].d, t.s[0].n); t.n++;
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "duplicate section");
    FRESH(); put32(tsec(&t, 1)->d, 0);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "n8 = 0 bytes");
    FRESH(); put32(tsec(&t, 1)->d, 7);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "n8 = 7 bytes");
    FRESH(); put32(tsec(&t, 1)->d, 0xffffffe0u);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "n8 = 4294967264");
    FRESH(); put32(tsec(&t, 1)->d, 48);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "section 1 (header) is 40 bytes, expected 56 for n8 48");
    FRESH(); tresize(tsec(&t, 1), 2);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "too short");
    {   /* prime = q of bn128 (the classic mistake) */
        uint32_t nq;
        const uint8_t *q = zp_fmt_curve_q(ZP_CURVE_BN254, &nq);
        FRESH(); memcpy(tsec(&t, 1)->d + 4, q, 32);
        EXPECT_ERR(tparse(p_wtns, &t, N), ZP_ECURVE, "witness.wtns: prime is q of bn128, not r of bn128 or bls12381");
        FRESH(); tsec(&t, 1)->d[10] ^= 0x40;
        EXPECT_ERR(tparse(p_wtns, &t, N), ZP_ECURVE, "prime is an unknown prime");
    }
    {
        char want[160];
        FRESH(); put32(tsec(&t, 1)->d + 36, nw + 1);
        snprintf(want, sizeof want, "witness.wtns: section 2 is %u bytes but header says %u values of 32 bytes (%u)", nw * 32,
                 nw + 1, (nw + 1) * 32);
        EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, want);
        FRESH(); put32(tsec(&t, 1)->d + 36, 0xffffffffu);
        EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "header says 4294967295 values of 32 bytes (137438953440)");
        FRESH(); put32(tsec(&t, 1)->d + 36, 0);
        EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "0 witness values");
        FRESH(); tresize(tsec(&t, 2), tsec(&t, 2)->n - 32);
        EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "section 2 is");
    }
    FRESH(); memcpy(tsec(&t, 2)->d + 5 * 32, r, 32);
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "witness.wtns: value 5 is not canonical (>= r)");
    FRESH(); memset(tsec(&t, 2)->d + (nw - 1) * 32, 0xff, 32);
    {
        char want[80];
        snprintf(want, sizeof want, "value %u is not canonical", nw - 1);
        EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, want);
    }
    FRESH(); memcpy(tsec(&t, 2)->d + 3 * 32, r, 32); tsec(&t, 2)->d[3 * 32] -= 1;   /* r - 1 is canonical */
    CHECK(tparse(p_wtns, &t, N) == 0);
    FRESH(); tsec(&t, 2)->d[0] = 2;
    EXPECT_ERR(tparse(p_wtns, &t, N), ZP_EFORMAT, "value 0 (the constant wire) is not 1");
    if (nw > 8) {   /* unchecked open + the range check on pools of 1..4 threads: the smallest bad index */
        FRESH(); memcpy(tsec(&t, 2)->d + 7 * 32, r, 32); memset(tsec(&t, 2)->d + (nw - 1) * 32, 0xff, 32);
        size_t blen;
        uint8_t *bb = tjoin(&t, &blen);
        char path[] = "/tmp/zp_test_fmt_wtns_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0 && write(fd, bb, blen) == (ssize_t)blen);
        close(fd);
        free(bb);
        zp_wtns_t wu;
        CHECK(zp_wtns_open_unchecked(&wu, path) == 0);   /* header, sizes and w[0] only */
        for (unsigned th = 1; th <= 4; th++) {
            zp_pool_t *pool = zp_pool_new(th);
            EXPECT_ERR(zp_wtns_check_values(&wu, pool), ZP_EFORMAT, "value 7 is not canonical (>= r)");
            zp_pool_destroy(&pool);
        }
        EXPECT_ERR(zp_wtns_check_values(&wu, NULL), ZP_EFORMAT, "zp_test_fmt_wtns_");   /* names the file */
        zp_wtns_close(&wu);
        EXPECT_ERR(zp_wtns_open(&wu, path), ZP_EFORMAT, "value 7 is not canonical (>= r)");
        unlink(path);
    }
    /* witness vs zkey */
    zp_zkey_t z, zo;
    zp_wtns_t wo;
    CHECK(zp_zkey_open(&z, fpath(fx, "circuit.zkey")) == 0);
    CHECK(zp_check_wtns_zkey(&w, &z) == 0);
    CHECK(zp_zkey_open(&zo, fpath(other_fx, "circuit.zkey")) == 0);
    CHECK(zp_wtns_open(&wo, fpath(other_fx, "witness.wtns")) == 0);
    EXPECT_ERR(zp_check_wtns_zkey(&wo, &z), ZP_EMISMATCH, "witness values but");   /* length != nVars */
    {   /* a witness of the other curve with the right length */
        uint32_t no;
        const uint8_t *ro = zp_fmt_curve_r(w.curve == ZP_CURVE_BN254 ? ZP_CURVE_BLS12_381 : ZP_CURVE_BN254, &no);
        FRESH(); memcpy(tsec(&t, 1)->d + 4, ro, 32);
        memset(tsec(&t, 2)->d + 32, 0, tsec(&t, 2)->n - 32);   /* keep values canonical for the smaller r */
        size_t l2;
        uint8_t *c = tjoin(&t, &l2);
        zp_wtns_t wc;
        CHECK(zp_wtns_parse(&wc, c, l2, "other.wtns") == 0);
        EXPECT_ERR(zp_check_wtns_zkey(&wc, &z), ZP_EMISMATCH, "other.wtns: witness prime is r of");
        free(c);
    }
    zp_zkey_close(&z);
    zp_zkey_close(&zo);
    zp_wtns_close(&wo);
    tfree(&t);
#undef FRESH
    free(b);
}

/* ================================================================ crafted r1cs */

static void r1cs_errors(const char *fx, const char *other_fx)
{
    size_t len;
    uint8_t *b = (uint8_t *)test_slurp(fpath(fx, "circuit.r1cs"), &len);
    zp_r1cs_t r;
    CHECK(b && zp_r1cs_parse(&r, b, len, "circuit.r1cs") == 0);
    const uint32_t nwires = r.n_wires, ncons = r.n_constraints;
    uint32_t n8;
    const uint8_t *prime = zp_fmt_curve_r(r.curve, &n8);
    truncations(p_r1cs, b, len, "circuit.r1cs");
    corruptions(p_r1cs, b, len, "circuit.r1cs", 3000);
    tfile_t t;
    const char *N = "circuit.r1cs";
    t.n = 0;
#define FRESH() do { tfree(&t); tsplit(&t, b, len); } while (0)
    FRESH(); CHECK(tparse(p_r1cs, &t, N) == 0);
    FRESH(); memcpy(t.head, "R1CS", 4);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "bad magic");
    FRESH(); put32(t.head + 4, 2);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EVERSION, "r1cs version 2 not supported (only 1)");
    FRESH(); tremove(&t, 1);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "missing section 1 (header)");
    FRESH(); tremove(&t, 2);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "missing section 2 (constraints)");
    FRESH(); tremove(&t, 3);
    CHECK(tparse(p_r1cs, &t, N) == 0);   /* the label map is optional */
    FRESH(); tresize(tsec(&t, 3), 8ull * nwires - 8);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "section 3 (wire labels)");
    FRESH(); t.s[t.n].id = 2; t.s[t.n].n = 0; t.s[t.n].d = calloc(1, 1); t.n++;
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "duplicate section 2");
    FRESH(); put32(tsec(&t, 1)->d, 12);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "n8 = 12");
    FRESH(); tresize(tsec(&t, 1), tsec(&t, 1)->n + 4);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "section 1 (header) is 68 bytes, expected 64");
    FRESH(); tsec(&t, 1)->d[4 + 31] ^= 0x01;
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_ECURVE, "prime is an unknown prime");
    uint8_t *h = NULL;
    FRESH(); h = tsec(&t, 1)->d + 36; put32(h + 8, nwires);    /* nPubIn: more public signals than wires */
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "nWires");
    /* nPrvIn counts private inputs circom optimized away (unused): more than the wires is fine */
    FRESH(); h = tsec(&t, 1)->d + 36; put32(h + 12, nwires);
    CHECK(tparse(p_r1cs, &t, N) == 0);
    FRESH(); h = tsec(&t, 1)->d + 36; put32(h + 24, ncons + 1);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "term count runs past section 2");
    FRESH(); h = tsec(&t, 1)->d + 36; put32(h + 24, 0xffffffffu);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "runs past section 2");
    FRESH(); h = tsec(&t, 1)->d + 36; put32(h + 24, ncons - 1);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "bytes after the last of");
    FRESH(); tresize(tsec(&t, 2), tsec(&t, 2)->n + 4);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "section 2 has 4 bytes after the last");
    /* first constraint, LC A: nTerms huge; wire out of range; coef non-canonical */
    FRESH(); put32(tsec(&t, 2)->d, 0x7fffffffu);
    EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "constraint 0: LC A has 2147483647 terms");
    {
        uint8_t *c0 = NULL;
        FRESH(); c0 = tsec(&t, 2)->d;
        CHECK(zp_fmt_u32(c0) >= 1);
        put32(c0 + 4, nwires);
        char want[96];
        snprintf(want, sizeof want, "constraint 0: LC A term 0: wire %u >= nWires %u", nwires, nwires);
        EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, want);
        FRESH(); c0 = tsec(&t, 2)->d; memcpy(c0 + 8, prime, 32);
        EXPECT_ERR(tparse(p_r1cs, &t, N), ZP_EFORMAT, "constraint 0: LC A term 0: coefficient not canonical");
    }
    /* r1cs vs zkey */
    zp_zkey_t z;
    zp_r1cs_t ro;
    CHECK(zp_zkey_open(&z, fpath(fx, "circuit.zkey")) == 0);
    CHECK(zp_check_r1cs_zkey(&r, &z) == 0);
    CHECK(zp_r1cs_open(&ro, fpath(other_fx, "circuit.r1cs")) == 0);
    EXPECT_ERR(zp_check_r1cs_zkey(&ro, &z), ZP_EMISMATCH, "nWires");
    zp_r1cs_close(&ro);
    {
        size_t l2;
        uint8_t *c;
        zp_r1cs_t rc2;
        /* a wire id changed (still in range): the zkey coefs no longer follow the r1cs */
        FRESH(); uint8_t *c0 = tsec(&t, 2)->d; put32(c0 + 4, (zp_fmt_u32(c0 + 4) + 1) % nwires);
        c = tjoin(&t, &l2);
        CHECK(zp_r1cs_parse(&rc2, c, l2, "edited.r1cs") == 0);
        EXPECT_ERR(zp_check_r1cs_zkey(&rc2, &z), ZP_EMISMATCH, "edited.r1cs: coef 0 of");
        free(c);
        /* public split changed */
        FRESH(); h = tsec(&t, 1)->d + 36; put32(h + 8, zp_fmt_u32(h + 8) + 1); put32(h + 12, zp_fmt_u32(h + 12) - 1);
        c = tjoin(&t, &l2);
        CHECK(zp_r1cs_parse(&rc2, c, l2, "edited.r1cs") == 0);
        EXPECT_ERR(zp_check_r1cs_zkey(&rc2, &z), ZP_EMISMATCH, "nPublic");
        free(c);
        /* other curve: the same file with the other prime (coefs small enough for both) */
        uint32_t no;
        const uint8_t *other = zp_fmt_curve_r(r.curve == ZP_CURVE_BN254 ? ZP_CURVE_BLS12_381 : ZP_CURVE_BN254, &no);
        FRESH(); memcpy(tsec(&t, 1)->d + 4, other, 32);
        c = tjoin(&t, &l2);
        if (zp_r1cs_parse(&rc2, c, l2, "bls.r1cs") == 0)   /* coefs like r-1 of bls exceed bn's r */
            EXPECT_ERR(zp_check_r1cs_zkey(&rc2, &z), ZP_EMISMATCH, "prime is r of");
        else
            EXPECT_ERR(-1000, ZP_EFORMAT, "not canonical");
        free(c);
    }
    {   /* a zkey whose domain is twice too large for the r1cs (H section doubled to stay consistent) */
        size_t zl, l2;
        uint8_t *zb = (uint8_t *)test_slurp(fpath(fx, "circuit.zkey"), &zl);
        tfile_t tz;
        tsplit(&tz, zb, zl);
        uint8_t *hd = tsec(&tz, 2)->d;
        uint32_t n8q = zp_fmt_u32(hd);
        put32(hd + 8 + n8q + 32 + 8, z.domain_size * 2);
        tresize(tsec(&tz, 9), tsec(&tz, 9)->n * 2);
        uint8_t *c = tjoin(&tz, &l2);
        zp_zkey_t z2;
        CHECK(zp_zkey_parse(&z2, c, l2, "big.zkey") == 0);
        EXPECT_ERR(zp_check_r1cs_zkey(&r, &z2), ZP_EMISMATCH, "rows need a domain of");
        free(c);
        /* and one with an extra coef */
        tfree(&tz);
        tsplit(&tz, zb, zl);
        tsec_t *s4 = tsec(&tz, 4);
        tresize(s4, s4->n + 44);
        put32(s4->d, zp_fmt_u32(s4->d) + 1);
        c = tjoin(&tz, &l2);
        CHECK(zp_zkey_parse(&z2, c, l2, "extra.zkey") == 0);
        EXPECT_ERR(zp_check_r1cs_zkey(&r, &z2), ZP_EMISMATCH, "extra.zkey has");
        free(c);
        tfree(&tz);
        free(zb);
    }
    zp_zkey_close(&z);
    tfree(&t);
#undef FRESH
    free(b);
}

/* ================================================================ JSON */

static char *replace_once(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    if (!p) { fprintf(stderr, "replace_once: \"%.40s\" not found\n", from); exit(1); }
    size_t a = (size_t)(p - s), fl = strlen(from), tl = strlen(to), sl = strlen(s);
    char *o = malloc(sl - fl + tl + 1);
    memcpy(o, s, a);
    memcpy(o + a, to, tl);
    memcpy(o + a + tl, p + fl, sl - a - fl + 1);
    return o;
}

static int proof_text(const char *text, zp_proof_json_t *p) { return zp_proof_json_parse(p, text, strlen(text), "proof.json"); }

static void json_errors(const char *fx)
{
    size_t len;
    char *proof = test_slurp(fpath(fx, "proof.json"), &len);
    zp_proof_json_t p, p0;
    CHECK(proof && proof_text(proof, &p0) == 0);
    /* every strict prefix is rejected */
    for (size_t cut = 0; cut < len; cut++) {
        char *c = malloc(cut + 1);
        memcpy(c, proof, cut);
        c[cut] = 0;
        if (zp_proof_json_parse(&p, c, cut, "proof.json") == 0) { fprintf(stderr, "proof prefix %zu accepted\n", cut); failures++; }
        free(c);
    }
    /* equivalent JSON: compact, reordered, hex, 2-coordinate points, escapes, leading zeros */
    {
        char hex[200], *c1, *c2, *c3;
        uint8_t le[48];
        uint32_t n8;
        zp_fmt_curve_q(p0.curve, &n8);
        zp_fmt_text_to_le(le, n8, p0.a[0], strlen(p0.a[0]));
        int k = sprintf(hex, "\"0x");
        for (size_t i = n8; i--;) k += sprintf(hex + k, "%02X", le[i]);
        sprintf(hex + k, "\"");
        char from[160];
        snprintf(from, sizeof from, "\"%s\"", p0.a[0]);
        c1 = replace_once(proof, from, hex);
        CHECK(proof_text(c1, &p) == 0 && !memcmp(&p, &p0, sizeof p));
        snprintf(hex, sizeof hex, "\"000%s\"", p0.c[1]);
        snprintf(from, sizeof from, "\"%s\"", p0.c[1]);
        c2 = replace_once(c1, from, hex);
        CHECK(proof_text(c2, &p) == 0 && !memcmp(&p, &p0, sizeof p));
        c3 = replace_once(c2, ",\n  \"1\"\n ],\n \"pi_b\"", "\n ],\n \"pi_b\"");   /* pi_a without z */
        CHECK(proof_text(c3, &p) == 0 && !memcmp(&p, &p0, sizeof p));
        free(c1); free(c2); free(c3);
        char compact[2048];
        snprintf(compact, sizeof compact,
                 "{\"curve\":\"%s\",\"protocol\":\"groth16\",\"pi_c\":[\"%s\",\"%s\",\"1\"],\"pi_b\":[[\"%s\",\"%s\"],[\"%s\",\"%s\"]],"
                 "\"pi_a\":[\"%s\",\"%s\",\"\\u0031\"],\"extra\":[null,true,false,-1.5e+3,{}]}",
                 zp_curve_name(p0.curve), p0.c[0], p0.c[1], p0.b[0][0], p0.b[0][1], p0.b[1][0], p0.b[1][1], p0.a[0], p0.a[1]);
        CHECK(proof_text(compact, &p) == 0 && !memcmp(&p, &p0, sizeof p));
    }
    /* infinity in and out */
    {
        char *c = replace_once(proof, ",\n  \"1\"\n ],\n \"pi_b\"", ",\n  \"0\"\n ],\n \"pi_b\"");
        CHECK(proof_text(c, &p) == 0 && p.a[0][0] == 0 && p.a[1][0] == 0);
        char buf[4096];
        CHECK(zp_proof_json_format(buf, sizeof buf, &p) > 0 && strstr(buf, "\"pi_a\": [\n  \"0\",\n  \"1\",\n  \"0\"\n ]"));
        free(c);
        c = replace_once(proof, "[\n   \"1\",\n   \"0\"\n  ]", "[\n   \"0\",\n   \"0\"\n  ]");
        CHECK(proof_text(c, &p) == 0 && !p.b[0][0][0] && !p.b[1][1][0]);
        CHECK(zp_proof_json_format(buf, sizeof buf, &p) > 0 &&
              strstr(buf, "\"pi_b\": [\n  [\n   \"0\",\n   \"0\"\n  ],\n  [\n   \"1\",\n   \"0\"\n  ],\n  [\n   \"0\",\n   \"0\"\n  ]\n ]"));
        free(c);
    }
    /* errors with paths */
    struct { const char *from, *to; int code; const char *msg; } cases[] = {
        {",\n  \"1\"\n ],\n \"pi_b\"", ",\n  \"2\"\n ],\n \"pi_b\"", ZP_EFORMAT, "proof.json: pi_a[2]: projective z must be"},
        {"[\n   \"1\",\n   \"0\"\n  ]", "[\n   \"1\",\n   \"1\"\n  ]", ZP_EFORMAT, "proof.json: pi_b[2]: projective z"},
        {"\"groth16\"", "\"plonk\"", ZP_EFORMAT, "protocol: \"plonk\" is not supported"},
        {"\"groth16\"", "16", ZP_EFORMAT, "protocol: expected a string, got a number"},
        {"\"pi_c\"", "\"pi_x\"", ZP_EFORMAT, "proof.json: (top level): missing \"pi_c\""},
        {"\"pi_c\"", "\"pi_a\"", ZP_EFORMAT, "duplicate key"},
        {"\n}", ",\n}", ZP_EFORMAT, "expected a string key"},
        {"\"pi_a\": [", "\"pi_a\": [[", ZP_EFORMAT, "line"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"x", ZP_EFORMAT, "proof.json: pi_a[0]: not a decimal or 0x-hex string"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"-", ZP_EFORMAT, "pi_a[0]: not a decimal"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"\\u0000", ZP_EFORMAT, "pi_a[0]: not a decimal"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"\\x", ZP_EFORMAT, "invalid escape"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"\\ud800", ZP_EFORMAT, "lone high surrogate"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"\t", ZP_EFORMAT, "control character"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"\xff", ZP_EFORMAT, "invalid UTF-8"},
        {"\"pi_a\": [\n  \"", "\"pi_a\": [\n  \"9999999999999999999999999999999999999999999999999999999999999999999999999999999"
                              "9999999999999999999999999999999999999999999999999999999999999999999999999999999", ZP_EFORMAT,
         "pi_a[0]: number does not fit"},
        {"\"pi_c\": [\n  \"", "\"pi_c\": [\n  \"1\",\"", ZP_EFORMAT, "pi_c: array has 4 entries, expected 2..3"},
        {"\"pi_b\": [\n  [\n   \"", "\"pi_b\": [\n  [\n   \"0x\",\"", ZP_EFORMAT, "pi_b[0]: array has 3 entries"},
        {"\"pi_b\": [\n  [", "\"pi_b\": [\n  7, [", ZP_EFORMAT, "pi_b: array has 4 entries"},
        {"\"bn128\"", "\"bn254\"", ZP_ECURVE, "curve: \"bn254\" is not bn128 or bls12381"},
        {"\"bls12381\"", "\"bls12_381\"", ZP_ECURVE, "is not bn128 or bls12381"},
        {"{", "[", ZP_EFORMAT, "line 2 column 8: expected ',' or ']'"},
        {"{", "{} {", ZP_EFORMAT, "unexpected data after the JSON value"},
        {"\"protocol\": \"groth16\"", "\"protocol\": tru", ZP_EFORMAT, "unexpected character"},
        {"\"protocol\": \"groth16\"", "\"protocol\": 01", ZP_EFORMAT, "expected ',' or '}'"},
        {"\"protocol\": \"groth16\"", "\"protocol\": 1.", ZP_EFORMAT, "invalid number"},
    };
    {   /* no "curve" (older rapidsnark): read with curve NONE, the verifier takes the vk's;
         * coordinates still bounded by the larger q */
        char *c = replace_once(proof, "\"curve\"", "\"kurve\"");
        zp_proof_json_t p2;
        CHECK(proof_text(c, &p2) == 0 && p2.curve == ZP_CURVE_NONE && !strcmp(p2.a[0], p0.a[0]) &&
              !strcmp(p2.b[1][1], p0.b[1][1]) && !strcmp(p2.c[1], p0.c[1]));
        free(c);
        c = replace_once(proof, "\"pi_a\": [\n  \"", "\"kurve\": 1, \"pi_a\": [\n  \"9999999999999999999999999999999"
                                                 "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999");
        char *c2 = replace_once(c, "\"curve\"", "\"kurv\"");
        EXPECT_ERR(proof_text(c2, &p2), ZP_EFORMAT, "pi_a[0]: number does not fit");
        free(c2);
        free(c);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!strstr(proof, cases[i].from)) continue;   /* curve-specific cases */
        char *c = replace_once(proof, cases[i].from, cases[i].to);
        zp_err_clear();
        int rc = proof_text(c, &p);
        if (rc != cases[i].code || !strstr(zp_err_msg(), cases[i].msg)) {
            fprintf(stderr, "json case %zu: rc %d msg \"%s\", expected \"%s\"\n", i, rc, zp_err_msg(), cases[i].msg);
            failures++;
        }
        free(c);
    }
    {   /* coordinate = q is not canonical; q - 1 is */
        uint32_t n8;
        const uint8_t *q = zp_fmt_curve_q(p0.curve, &n8);
        char qd[160], from[160], to[170];
        zp_fmt_le_to_dec(qd, sizeof qd, q, n8);
        snprintf(from, sizeof from, "\"%s\"", p0.b[1][0]);
        snprintf(to, sizeof to, "\"%s\"", qd);
        char *c = replace_once(proof, from, to);
        EXPECT_ERR(proof_text(c, &p), ZP_EFORMAT, "proof.json: pi_b[1][0]: not canonical (>= q)");
        free(c);
    }
    {   /* nesting limit */
        char deep[200] = "";
        for (int i = 0; i < 40; i++) strcat(deep, "[");
        for (int i = 0; i < 40; i++) strcat(deep, "]");
        EXPECT_ERR(zp_proof_json_parse(&p, deep, strlen(deep), "deep.json"), ZP_EFORMAT, "deep.json: line 1 column 33: nesting deeper");
        EXPECT_ERR(zp_proof_json_parse(&p, "", 0, "e.json"), ZP_EFORMAT, "unexpected end of input");
        EXPECT_ERR(zp_proof_json_parse(&p, "  ", 2, "e.json"), ZP_EFORMAT, "unexpected end of input");
        char *big = malloc((2u << 20) + 1);
        memset(big, ' ', 2u << 20);
        EXPECT_ERR(zp_proof_json_parse(&p, big, 2u << 20, "big.json"), ZP_ETOOBIG, "big.json");
        char path[600];
        snprintf(path, sizeof path, "%s/big.json", tmpdir);
        spit(path, big, 2u << 20);
        EXPECT_ERR(zp_proof_json_read(&p, path), ZP_ETOOBIG, "more than the");
        free(big);
    }
    /* writer refuses what is not a canonical decimal */
    {
        char buf[4096];
        p = p0;
        strcpy(p.a[0], "12x");
        CHECK(zp_proof_json_format(buf, sizeof buf, &p) == 0);
        char path[600];
        snprintf(path, sizeof path, "%s/bad_out.json", tmpdir);
        EXPECT_ERR(zp_proof_json_write(path, &p), ZP_EFORMAT, "not a canonical decimal");
        p = p0;
        strcpy(p.c[1], "0123");
        CHECK(zp_proof_json_format(buf, sizeof buf, &p) == 0);
        p = p0;
        p.curve = ZP_CURVE_NONE;
        CHECK(zp_proof_json_format(buf, sizeof buf, &p) == 0);
        EXPECT_ERR(zp_proof_json_write("/nonexistent-dir/proof.json", &p0), -ENOENT, "/nonexistent-dir/proof.json.tmp");
    }
    free(proof);

    /* public.json */
    char (*sig)[100];
    size_t n;
    const char *pn = "public.json";
#define PUB(s) zp_public_json_parse(&sig, &n, (s), strlen(s), pn)
    CHECK(PUB("[\"\\u0031\\u0032\", \"0x10\", \"007\"]") == 0 && n == 3 && !strcmp(sig[0], "12") && !strcmp(sig[1], "16") &&
          !strcmp(sig[2], "7"));
    free(sig);
    CHECK(PUB("[]") == 0 && n == 0);
    free(sig);
    CHECK(PUB(" [\n]\n") == 0 && n == 0);
    free(sig);
    EXPECT_ERR(PUB("{}"), ZP_EFORMAT, "public.json: (top level): expected an array, got an object");
    /* JSON integers that JavaScript reads exactly: snarkjs accepts them (BigInt(3)) */
    CHECK(PUB("[\"1\", 3, 0, 9007199254740992]") == 0 && n == 4 && !strcmp(sig[1], "3") && !strcmp(sig[2], "0") &&
          !strcmp(sig[3], "9007199254740992"));
    free(sig);
    EXPECT_ERR(PUB("[\"1\", 9007199254740993]"), ZP_EFORMAT, "public.json: [1]: a number that is not an integer");
    EXPECT_ERR(PUB("[\"1\", -3]"), ZP_EFORMAT, "public.json: [1]: a number that is not an integer");
    EXPECT_ERR(PUB("[\"1\", 3.0]"), ZP_EFORMAT, "public.json: [1]: a number that is not an integer");
    EXPECT_ERR(PUB("[\"1\", 3e2]"), ZP_EFORMAT, "public.json: [1]: a number that is not an integer");
    EXPECT_ERR(PUB("[\"1\", true]"), ZP_EFORMAT, "public.json: [1]: expected a string, got true");
    EXPECT_ERR(PUB("[\"1\", \"\"]"), ZP_EFORMAT, "public.json: [1]: not a decimal");
    EXPECT_ERR(PUB("[\"1\", \"0x\"]"), ZP_EFORMAT, "[1]: not a decimal");
    EXPECT_ERR(PUB("[\"1\" \"2\"]"), ZP_EFORMAT, "expected ',' or ']'");
    EXPECT_ERR(PUB("[\"115792089237316195423570985008687907853269984665640564039457584007913129639936\"]"), ZP_EFORMAT,
               "[0]: number does not fit in 32 bytes");
    CHECK(PUB("[\"21888242871839275222246405745257275088548364400416034343698204186575808495617\", \"5\"]") == 0 && n == 2);
    EXPECT_ERR(zp_public_json_check(sig, n, ZP_CURVE_BN254, pn), ZP_EFORMAT, "public.json: [0]: not a canonical scalar of bn128");
    CHECK(zp_public_json_check(sig, n, ZP_CURVE_BLS12_381, pn) == 0);
    CHECK(zp_public_json_check(sig + 1, 1, ZP_CURVE_BN254, pn) == 0);
    {
        char buf[64];
        strcpy(sig[1], "5a");
        CHECK(zp_public_json_format(buf, sizeof buf, sig + 1, 1) == 0);
        CHECK(zp_public_json_format(buf, sizeof buf, sig, 0) == 2 && !strcmp(buf, "[]"));
    }
    free(sig);
#undef PUB

    /* verification_key.json: paths into IC */
    char *vkt = test_slurp(fpath(fx, "verification_key.json"), &len);
    zp_vk_json_t vk;
    CHECK(vkt && zp_vk_json_parse(&vk, vkt, len, "vk.json") == 0);
    if (vk.n_public >= 3) {
        char from[160];
        snprintf(from, sizeof from, "\"%s\"", vk.ic[3][1]);
        char *c = replace_once(vkt, from, "\"12a\"");
        zp_vk_json_t v2;
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "vk.json: IC[3][1]: not a decimal or 0x-hex string");
        free(c);
    }
    {
        char from[160], to[64];
        zp_vk_json_t v2;
        snprintf(from, sizeof from, "\"nPublic\": %u,", vk.n_public);
        snprintf(to, sizeof to, "\"nPublic\": %u,", vk.n_public + 1);
        char *c = replace_once(vkt, from, to);
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "vk.json: IC: ");
        free(c);
        c = replace_once(vkt, from, "\"nPublic\": -1,");
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "vk.json: nPublic: not a non-negative integer");
        free(c);
        c = replace_once(vkt, from, "\"nPublic\": \"2\",");
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "nPublic: expected a number, got a string");
        free(c);
        c = replace_once(vkt, from, "\"nPublic\": 99999999999,");
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "nPublic: too large");
        free(c);
        c = replace_once(vkt, "\"vk_gamma_2\"", "\"vk_gamma_3\"");
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "missing \"vk_gamma_2\"");
        free(c);
        /* snarkjs's verifier reads neither "protocol" nor "nPublic": both optional */
        c = replace_once(vkt, "\"protocol\": \"groth16\",", "");
        CHECK(zp_vk_json_parse(&v2, c, strlen(c), "vk.json") == 0 && v2.n_public == vk.n_public);
        zp_vk_json_free(&v2);
        free(c);
        c = replace_once(vkt, "\"protocol\": \"groth16\",", "\"protocol\": \"plonk\",");
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "protocol: \"plonk\" is not supported");
        free(c);
        c = replace_once(vkt, from, "");
        CHECK(zp_vk_json_parse(&v2, c, strlen(c), "vk.json") == 0 && v2.n_public == vk.n_public &&
              !strcmp(v2.ic[vk.n_public][1], vk.ic[vk.n_public][1]));
        zp_vk_json_free(&v2);
        free(c);
        {
            char *c2 = replace_once(vkt, from, "");
            char *ic = strstr(c2, "\"IC\": [");
            if (ic) {   /* "IC": [] without nPublic */
                char *end = strstr(ic, "\n ]");
                if (end) memmove(ic + 7, end + 2, strlen(end + 2) + 1);
                c = c2;
                EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "IC: no points");
            }
            free(c2);
        }
        snprintf(from, sizeof from, "\"%s\"", vk.delta2[1][1]);
        c = replace_once(vkt, from, "[]");
        EXPECT_ERR(zp_vk_json_parse(&v2, c, strlen(c), "vk.json"), ZP_EFORMAT, "vk.json: vk_delta_2[1][1]: expected a string, got an array");
        free(c);
    }
    zp_vk_json_free(&vk);
    zp_vk_json_free(&vk);
    free(vkt);
}

/* ================================================================ main */

static void misc(void)
{
    uint8_t le[32];
    char dec[160];
    CHECK(zp_fmt_text_to_le(le, 32, "0", 1) == 0 && zp_fmt_le_to_dec(dec, sizeof dec, le, 32) == 1 && !strcmp(dec, "0"));
    CHECK(zp_fmt_text_to_le(le, 32, "0x", 2) == -1 && zp_fmt_text_to_le(le, 32, "", 0) == -1);
    CHECK(zp_fmt_text_to_le(le, 2, "65535", 5) == 0 && le[0] == 0xff && le[1] == 0xff);
    CHECK(zp_fmt_text_to_le(le, 2, "65536", 5) == -2 && zp_fmt_text_to_le(le, 2, "0x10000", 7) == -2);
    CHECK(zp_fmt_text_to_le(le, 2, "0xAbC", 5) == 0 && le[0] == 0xbc && le[1] == 0x0a);
    CHECK(zp_fmt_le_to_dec(dec, 3, le, 2) == 4 && !strcmp(dec, "27"));   /* 2748, truncated like snprintf */
    CHECK(!strcmp(zp_curve_name(ZP_CURVE_BN254), "bn128") && !strcmp(zp_curve_name(ZP_CURVE_BLS12_381), "bls12381"));
    uint32_t n8;
    CHECK(zp_curve_from_r(zp_fmt_curve_r(ZP_CURVE_BN254, &n8), 32) == ZP_CURVE_BN254);
    CHECK(zp_curve_from_r(zp_fmt_curve_r(ZP_CURVE_BLS12_381, &n8), 32) == ZP_CURVE_BLS12_381);
    CHECK(zp_curve_from_q(zp_fmt_curve_q(ZP_CURVE_BLS12_381, &n8), 48) == ZP_CURVE_BLS12_381 && n8 == 48);
    CHECK(zp_curve_from_q(zp_fmt_curve_r(ZP_CURVE_BN254, &n8), 32) == ZP_CURVE_NONE);
    CHECK(zp_curve_from_r(NULL, 32) == ZP_CURVE_NONE);
    /* the known decimal values */
    zp_fmt_le_to_dec(dec, sizeof dec, zp_fmt_curve_r(ZP_CURVE_BN254, &n8), 32);
    CHECK(!strcmp(dec, "21888242871839275222246405745257275088548364400416034343698204186575808495617"));
    zp_fmt_le_to_dec(dec, sizeof dec, zp_fmt_curve_r(ZP_CURVE_BLS12_381, &n8), 32);
    CHECK(!strcmp(dec, "52435875175126190479447740508185965837690552500527637822603658699938581184513"));
    zp_fmt_le_to_dec(dec, sizeof dec, zp_fmt_curve_q(ZP_CURVE_BN254, &n8), 32);
    CHECK(!strcmp(dec, "21888242871839275222246405745257275088696311157297823662689037894645226208583"));
}

/* zp_fmt_align_inplace_pool (issue 31): the move split over 1, 2 and 3 threads lands the same
 * bytes as the one-thread move for every shift 1..7 and chunk sizes at and above the split's
 * minimum (a chunk boundary's saved bytes must land too), the pointer ends aligned, the bytes
 * around the payload are kept, a second move sharing the first one's page keeps both, the
 * file is unchanged */
static void align_pool(void)
{
    const size_t sizes[3] = {(size_t)1 << 16, ((size_t)3 << 20) + 5, ((size_t)1 << 20) * 2 + 4093};
    zp_pool_t *pools[3] = {NULL, zp_pool_new(2), zp_pool_new(3)};
    CHECK(pools[1] && pools[2]);
    char path[600];
    snprintf(path, sizeof path, "%s/align.bin", tmpdir);
    for (size_t si = 0; si < 3; si++) {
        size_t n = sizes[si] * 6;   /* 3 threads: 6 chunks, each at or above 64 KiB */
        uint8_t *want = malloc(n + 32);
        CHECK(want);
        if (!want) break;
        for (size_t i = 0; i < n + 32; i++) want[i] = (uint8_t)(i * 131 + (i >> 9) * 7 + si);
        for (size_t shift = 1; shift < 8; shift++) {
            FILE *f = fopen(path, "wb");
            CHECK(f && fwrite(want, 1, n + 32, f) == n + 32);
            if (f) fclose(f);
            for (int pi = 0; pi < 3; pi++) {
                zp_binfile_t bf;
                if (zp_fmt_map(&bf, path)) { CHECK(!"map align.bin"); continue; }
                /* the payload at an offset of 16 + shift (>= 12 bytes of "header" before it) */
                size_t off = 16 + shift;
                const uint8_t *p = bf.map + off;
                CHECK(zp_fmt_align_inplace_pool(&bf, &p, n, 8, pools[pi]) == 0);
                CHECK(p == bf.map + off - shift && (uintptr_t)p % 8 == 0);
                CHECK(!memcmp(p, want + off, n));
                /* around it, as an in-place move leaves them: the bytes before the payload's new
                 * place, the payload's last shift bytes, then the rest of the file */
                CHECK(!memcmp(bf.map, want, off - shift));
                CHECK(!memcmp(bf.map + off - shift + n, want + off - shift + n, n + 32 - (off - shift + n)));
                /* a second section that shares the first one's last page moves too (its head
                 * is read from the first move's new pages) */
                const uint8_t *q = bf.map + off + n + 4 + (shift & 1);
                size_t qoff = (size_t)(q - bf.map), m = n + 32 - qoff;   /* to the file's end */
                if ((uintptr_t)q % 8) {
                    CHECK(zp_fmt_align_inplace_pool(&bf, &q, m, 8, pools[pi]) == 0);
                    CHECK((uintptr_t)q % 8 == 0 && !memcmp(q, want + qoff, m));
                    CHECK(!memcmp(p, want + off, n));   /* the first payload is intact */
                }
                zp_fmt_unmap(&bf);
            }
            size_t len = 0;
            char *back = test_slurp(path, &len);
            CHECK(back && len == n + 32 && !memcmp(back, want, len));   /* the file is unchanged */
            free(back);
        }
        free(want);
    }
    unlink(path);
    zp_pool_destroy(&pools[1]);
    zp_pool_destroy(&pools[2]);
}

int main(int argc, char **argv)
{
    fixdir = getenv("ZP_FIXTURES");
    if (!fixdir || !*fixdir) fixdir = argc > 1 ? argv[1] : ZP_FIXTURES_DIR;
    snprintf(tmpdir, sizeof tmpdir, "%s/zp_test_fmt_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    misc();
    align_pool();
    DIR *dir = opendir(fixdir);
    if (!dir) {
        fprintf(stderr, "test_fmt: fixtures not found at %s (set ZP_FIXTURES)\n", fixdir);
        rmdir(tmpdir);
        return 1;
    }
    int nfx = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.' || access(fpath(e->d_name, "meta.json"), F_OK)) continue;
        check_fixture(e->d_name);
        nfx++;
    }
    closedir(dir);
    CHECK(nfx >= 12);
    const char *curves[2] = {"bn128", "bls12381"};
    for (int i = 0; i < 2; i++) {
        char fx[64], other[64];
        snprintf(fx, sizeof fx, "%s_chain", curves[i]);
        snprintf(other, sizeof other, "%s_dom_exact", curves[i]);
        zkey_errors(fx);
        wtns_errors(fx, other);
        r1cs_errors(fx, other);
        json_errors(fx);
        snprintf(fx, sizeof fx, "%s_manypub", curves[i]);
        json_errors(fx);
        zkey_errors(fx);
    }
    /* clean the temp dir */
    const char *tf[] = {"proof_out.json", "public_out.json", "empty.zkey", "short.zkey", "big.json"};
    for (size_t i = 0; i < sizeof tf / sizeof tf[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", tmpdir, tf[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    if (failures) {
        fprintf(stderr, "test_fmt: %d failures\n", failures);
        return 1;
    }
    printf("test_fmt: %d fixtures, all reader errors checked: ok\n", nfx);
    return 0;
}
