/* test_witness.c - lib/witness: circom's FNV-1a names, input.json values as snarkjs reads them
 * (JSON numbers as doubles, BigInt strings, reduction mod p, errors naming the signal), and the
 * calculator on small hand-written modules (tests/fixtures/wasm, made by gen.py there):
 * a witness computed in the child and read back, the registration cache, and hostile modules:
 * an invalid module, a foreign import, a missing export, an endless loop (timeout), initial
 * memory over the cap, memory.grow past the cap, a trap, a failed assert with its message.
 * Each must give its error, and the calling process goes on. Needs wasm2c and cc (Debian's
 * wabt and gcc); exits 77 without them. The snarkjs byte-for-byte checks are in
 * tests/oracle/test_witness.sh. */
#include "tests/test_common.h"
#include "lib/util/util.h"
#include "lib/witness/witness.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const uint32_t R_BN[8] = {0xf0000001, 0x43e1f593, 0x79b97091, 0x2833e848,
                                 0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};

/* value i of the JSON text, reduced mod r; rc */
static int value_of(uint32_t out[8], const char *json, size_t i)
{
    zp_wc_input_t *in = NULL;
    int rc = zp_wc_input_parse(&in, json, strlen(json), "t.json");
    if (rc) return rc;
    rc = zp_wc_input_value(out, in, i, R_BN, 8);
    zp_wc_input_free(&in);
    return rc;
}

static bool eq_small(const uint32_t v[8], uint64_t x)
{
    return v[0] == (uint32_t)x && v[1] == (uint32_t)(x >> 32) && !v[2] && !v[3] && !v[4] && !v[5] && !v[6] && !v[7];
}

static void test_inputs(void)
{
    CHECK(zp_wc_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    CHECK(zp_wc_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    CHECK(zp_wc_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
    uint32_t v[8];
    CHECK(value_of(v, "{\"a\": 5}", 0) == 0 && eq_small(v, 5));
    CHECK(value_of(v, "{\"a\": \"0x10\"}", 0) == 0 && eq_small(v, 16));
    CHECK(value_of(v, "{\"a\": \" 0b101 \"}", 0) == 0 && eq_small(v, 5));
    CHECK(value_of(v, "{\"a\": \"0o17\"}", 0) == 0 && eq_small(v, 15));
    CHECK(value_of(v, "{\"a\": \"\"}", 0) == 0 && eq_small(v, 0));           /* BigInt("") = 0n */
    CHECK(value_of(v, "{\"a\": true, \"b\": false}", 0) == 0 && eq_small(v, 1));
    CHECK(value_of(v, "{\"a\": 1e3}", 0) == 0 && eq_small(v, 1000));
    CHECK(value_of(v, "{\"a\": \"+7\"}", 0) == 0 && eq_small(v, 7));
    /* JSON.parse rounds to a double: 12345678901234567890 -> 12345678901234567168 */
    CHECK(value_of(v, "{\"a\": 12345678901234567890}", 0) == 0 && eq_small(v, 12345678901234567168ull));
    /* nested arrays flatten row-major: value 3 of [[1,2],[3,[4]]] is 4 */
    CHECK(value_of(v, "{\"a\": [[1, 2], [3, [4]]]}", 3) == 0 && eq_small(v, 4));
    /* -1 is r - 1; r + 5 is 5; 2^300 mod r matches the long division */
    CHECK(value_of(v, "{\"a\": \"-1\"}", 0) == 0 && v[0] == R_BN[0] - 1 && !memcmp(v + 1, R_BN + 1, 28));
    CHECK(value_of(v, "{\"a\": \"21888242871839275222246405745257275088548364400416034343698204186575808495622\"}", 0) == 0 &&
          eq_small(v, 5));
    CHECK(value_of(v, "{\"a\": -0}", 0) == 0 && eq_small(v, 0));
    uint32_t w[8];
    /* (r * 2^40 + 9) mod r = 9, through the long division */
    CHECK(value_of(w, "{\"a\": \"0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f00000010000000009\"}", 0) == 0 &&
          eq_small(w, 9));
    /* errors name the signal and the value */
    CHECK(value_of(v, "{\"a\": [1, 1.5]}", 1) == ZP_EFORMAT && strstr(zp_err_msg(), "\"a\" value 1") &&
          strstr(zp_err_msg(), "not an integer"));
    CHECK(value_of(v, "{\"sig\": \"1e3\"}", 0) == ZP_EFORMAT && strstr(zp_err_msg(), "\"sig\""));
    CHECK(value_of(v, "{\"a\": null}", 0) == ZP_EFORMAT && strstr(zp_err_msg(), "null"));
    CHECK(value_of(v, "{\"a\": {\"b\": 1}}", 0) == ZP_EFORMAT);
    CHECK(value_of(v, "{\"a\": \"-0x5\"}", 0) == ZP_EFORMAT);
    CHECK(value_of(v, "{\"a\": \"0x\"}", 0) == ZP_EFORMAT);
    CHECK(value_of(v, "{\"a\": \"-\"}", 0) == ZP_EFORMAT);
    char big[1400];
    memset(big, '9', sizeof big);
    memcpy(big, "{\"a\": \"", 7);
    memcpy(big + sizeof big - 3, "\"}", 3);
    CHECK(value_of(v, big, 0) == ZP_ETOOBIG);
    zp_wc_input_t *in = NULL;
    CHECK(zp_wc_input_parse(&in, "[1, 2]", 6, "t.json") == ZP_EFORMAT && !in);
    CHECK(zp_wc_input_parse(&in, "{\"a\": 1", 7, "t.json") == ZP_EFORMAT && strstr(zp_err_msg(), "t.json"));
    CHECK(zp_wc_input_parse(&in, "{\"a\": [1, [2, 3]], \"b\": []}", 27, "t.json") == 0);
    if (in) {
        CHECK(zp_wc_input_signals(in) == 2 && zp_wc_input_values(in) == 3);
        zp_wc_input_free(&in);
    }
}

static char g_cache[256];

/* register + open fixture NAME; rc of the first failing step */
static int load(zp_wc_t **wc, const char *name, bool *cached)
{
    char wasm[512], so[1024];
    snprintf(wasm, sizeof wasm, "%s/wasm/%s.wasm", ZP_FIXTURES_DIR, name);
    int rc = zp_wc_register(so, sizeof so, cached, NULL, g_cache, wasm, NULL);
    return rc ? rc : zp_wc_open(wc, so);
}

static int calc(const char *name, const char *json, uint8_t *out, zp_wc_result_t *res, const zp_wc_limits_t *lim)
{
    zp_wc_t *wc = NULL;
    zp_wc_input_t *in = NULL;
    int rc = load(&wc, name, NULL);
    if (!rc) rc = zp_wc_input_parse(&in, json, strlen(json), "in.json");
    if (!rc) rc = zp_wc_calculate(res, out, 4096, wc, in, lim, -1);
    zp_wc_input_free(&in);
    zp_wc_close(&wc);
    return rc;
}

static void test_modules(void)
{
    uint8_t *out = zp_wc_shared_alloc(4096);
    CHECK(out != NULL);
    zp_wc_result_t res;
    /* the witness [1, a] computed in the child, straight into shared memory */
    memset(out, 0xee, 4096);
    int rc = calc("tiny", "{\"a\": \"-2\"}", out, &res, NULL);
    CHECK(rc == 0);
    if (!rc) {
        CHECK(res.n_witness == 2 && res.n8 == 32 && res.version == 2 && !memcmp(res.prime, R_BN, 32));
        uint32_t one[8] = {1}, want[8];
        memcpy(want, R_BN, 32);
        want[0] -= 2;
        CHECK(!memcmp(out, one, 32) && !memcmp(out + 32, want, 32));
        CHECK(out[64] == 0xee);   /* nothing past the witness */
    }
    bool cached = false;
    zp_wc_t *wc = NULL;
    CHECK(load(&wc, "tiny", &cached) == 0 && cached);    /* the second registration is a cache hit */
    zp_wc_close(&wc);
    {   /* two processes registering one new wasm at once: one compiles, the other waits and finds it */
        pid_t kids[2];
        for (int k = 0; k < 2; k++)
            if ((kids[k] = fork()) == 0) {
                bool c = false;
                zp_wc_t *w = NULL;
                int r = load(&w, "assert", &c);
                _exit(r ? 2 : c ? 1 : 0);
            }
        int st[2];
        for (int k = 0; k < 2; k++) waitpid(kids[k], &st[k], 0);
        CHECK(WIFEXITED(st[0]) && WIFEXITED(st[1]));
        CHECK(WEXITSTATUS(st[0]) + WEXITSTATUS(st[1]) == 1);   /* exactly one compiled */
    }
    zp_wc_close(&wc);
    /* the circuit refuses the input */
    CHECK(calc("tiny", "{\"b\": 1}", out, &res, NULL) == ZP_EUNSAT && strstr(zp_err_msg(), "\"b\" is not an input"));
    CHECK(calc("tiny", "{\"a\": [1, 2]}", out, &res, NULL) == ZP_EUNSAT && strstr(zp_err_msg(), "has 2 values"));
    CHECK(calc("tiny", "{}", out, &res, NULL) == ZP_EUNSAT && strstr(zp_err_msg(), "not all inputs"));
    CHECK(calc("assert", "{\"a\": 101}", out, &res, NULL) == ZP_EUNSAT && strstr(zp_err_msg(), "Assert Failed") &&
          strstr(zp_err_msg(), "Error in template Tiny_0 line: 7"));
    CHECK(calc("assert", "{\"a\": 100}", out, &res, NULL) == 0);
    /* hostile modules: refused at registration */
    CHECK(load(&wc, "invalid", NULL) == ZP_EFORMAT && strstr(zp_err_msg(), "wasm2c"));
    CHECK(load(&wc, "import", NULL) == ZP_EFORMAT && strstr(zp_err_msg(), "env"));
    CHECK(load(&wc, "noexport", NULL) == ZP_EFORMAT && strstr(zp_err_msg(), "getWitness"));
    /* ... or at calculation, and this process goes on */
    zp_wc_limits_t lim = {.timeout_ms = 1500};
    uint64_t t0 = zp_now_ns();
    CHECK(calc("loop", "{\"a\": 1}", out, &res, &lim) == ZP_ETIMEDOUT);
    CHECK(zp_now_ns() - t0 < 60ull * 1000000000ull);   /* bounded, not timed: the child was killed */
    zp_wc_limits_t small = {.mem_bytes = 64u << 20};
    CHECK(calc("bigmem", "{\"a\": 1}", out, &res, &small) == ZP_ETOOBIG && strstr(zp_err_msg(), "2048 wasm pages"));
    CHECK(calc("bigmem", "{\"a\": 1}", out, &res, NULL) == 0);           /* 128 MiB is within the default cap */
    CHECK(calc("grow", "{\"a\": 1}", out, &res, &small) == ZP_ETOOBIG && strstr(zp_err_msg(), "Not enough memory"));
    CHECK(calc("trap", "{\"a\": 1}", out, &res, NULL) == ZP_EUNSAT && strstr(zp_err_msg(), "trapped"));
    /* an output buffer too small */
    zp_wc_input_t *in = NULL;
    CHECK(load(&wc, "tiny", NULL) == 0 && zp_wc_input_parse(&in, "{\"a\": 1}", 8, "in.json") == 0);
    if (wc && in) CHECK(zp_wc_calculate(&res, out, 40, wc, in, NULL, -1) == ZP_ETOOBIG);
    zp_wc_input_free(&in);
    zp_wc_close(&wc);
    /* circom's log(): the shared memory's value and the line end to log_fd */
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    CHECK(load(&wc, "log", NULL) == 0 && zp_wc_input_parse(&in, "{\"a\": 1}", 8, "in.json") == 0);
    if (wc && in) {
        memset(out, 0, 64);
        CHECK(zp_wc_calculate(&res, out, 4096, wc, in, NULL, pfd[1]) == 0);
        char line[256] = "";
        ssize_t k = read(pfd[0], line, sizeof line - 1);
        CHECK(k > 0);
        CHECK(strstr(line, "Error in template Tiny_0 line: 7") != NULL);
    }
    close(pfd[0]);
    close(pfd[1]);
    zp_wc_input_free(&in);
    zp_wc_close(&wc);
    zp_wc_shared_free(out, 4096);
}

static bool have(const char *tool)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

int main(void)
{
    test_inputs();
    if (!have("wasm2c") || !have("cc")) {
        printf("test_witness: wasm2c or cc missing: module tests skipped\n");
        return fails ? 1 : 77;
    }
    snprintf(g_cache, sizeof g_cache, "/tmp/zp-test-witness.XXXXXX");
    if (!mkdtemp(g_cache)) return 1;
    test_modules();
    char rm[512];
    snprintf(rm, sizeof rm, "rm -rf '%s'", g_cache);
    if (system(rm)) {}
    printf("test_witness: %d failures\n", fails);
    return fails ? 1 : 0;
}
