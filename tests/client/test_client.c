/* test_client.c - libzkpipe-client's own test program, run by tests/client/lib.sh against a
 * real process group (ZP_RUNTIME_DIR set by the script). Uses only the public header.
 *   test_client OUTDIR ZKEY WTNS_A WTNS_B
 * Submits a job of three partitions (WTNS_A by path, WTNS_B by path, WTNS_A's bytes inline),
 * awaits it with a progress callback, writes proof-I.json / public-I.json to OUTDIR (the
 * script verifies them with `zkpipe verify` and snarkjs), and checks the error paths: an
 * empty request id, an over-limit inline witness, a missing file, an unknown job, a repeated
 * request id, result accessors out of range, status / metrics / trace texts. (cancel: ipc_client.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zkpipe-client.h"
#include "../test_slurp.h"

static int fails;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            fails++;                                                       \
        }                                                                  \
    } while (0)

static unsigned n_progress, last_total;
static void progress(void *ctx, uint32_t done, uint32_t failed, uint32_t total)
{
    (void)ctx; (void)done; (void)failed;
    n_progress++;
    last_total = total;
}

static void write_text(const char *dir, const char *name, uint32_t i, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%u.json", dir, name, i);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) { fprintf(stderr, "cannot write %s\n", path); fails++; }
}

int main(int argc, char **argv)
{
    if (argc != 5) { fprintf(stderr, "usage: test_client OUTDIR ZKEY WTNS_A WTNS_B\n"); return 2; }
    const char *out = argv[1], *zkey = argv[2], *wa = argv[3], *wb = argv[4];
    zp_client_t *c = zp_client_new(NULL);
    CHECK(c != NULL, "zp_client_new");
    CHECK(zp_client_connect(c) == ZP_CLIENT_OK, "connect: %s", zp_client_errmsg(c));
    CHECK(!strcmp(zp_client_strerror(ZP_CLIENT_UNREACHABLE), "broker unreachable"), "strerror");

    /* a job: two paths and one witness in memory */
    size_t len = 0;
    char *bytes = test_slurp(wa, &len);
    CHECK(bytes != NULL, "read %s", wa);
    zp_client_job_t *j = zp_client_job_new(zkey);
    char rid[64];
    snprintf(rid, sizeof rid, "libtest-%ld", (long)getpid());
    CHECK(zp_client_job_set_request_id(j, rid) == 0, "request id");
    CHECK(zp_client_job_set_priority(j, "high") == 0, "priority");
    CHECK(zp_client_job_add_wtns(j, wa) == 0, "add %s: %s", wa, zp_client_job_errmsg(j));
    CHECK(zp_client_job_add_wtns(j, wb) == 0, "add %s", wb);
    CHECK(zp_client_job_add_wtns_data(j, bytes, len) == 0, "inline: %s", zp_client_job_errmsg(j));
    uint64_t id = 0;
    bool existed = true;
    int rc = zp_client_submit(c, j, &id, &existed);
    CHECK(rc == ZP_CLIENT_OK && id > 0 && !existed, "submit rc %d: %s", rc, zp_client_errmsg(c));

    zp_client_set_progress(c, progress, NULL, 200);
    zp_client_result_t *r = NULL;
    rc = zp_client_await(c, id, 300000, &r);
    CHECK(rc == ZP_CLIENT_OK, "await rc %d: %s", rc, zp_client_errmsg(c));
    CHECK(r && zp_client_result_parts(r) == 3 && zp_client_result_done(r) == 3, "3 partitions proved");
    CHECK(r && !strcmp(zp_client_result_state(r), "done"), "state %s", r ? zp_client_result_state(r) : "-");
    CHECK(n_progress >= 1 && last_total == 3, "progress called %u times, total %u", n_progress, last_total);
    for (uint32_t i = 0; r && i < zp_client_result_parts(r); i++) {
        CHECK(!strcmp(zp_client_result_part_state(r, i), "done"), "part %u state", i);
        CHECK(zp_client_result_proof(r, i) && zp_client_result_public(r, i), "part %u texts", i);
        if (zp_client_result_proof(r, i)) write_text(out, "proof", i, zp_client_result_proof(r, i));
        if (zp_client_result_public(r, i)) write_text(out, "public", i, zp_client_result_public(r, i));
        CHECK(zp_client_result_error(r, i) == NULL, "part %u has an error", i);
    }
    CHECK(r && zp_client_result_proof(r, 3) == NULL && zp_client_result_part_state(r, 99) == NULL, "out of range");
    /* the inline partition proves the same statement as partition 0 */
    CHECK(r && zp_client_result_public(r, 0) && zp_client_result_public(r, 2) &&
              !strcmp(zp_client_result_public(r, 0), zp_client_result_public(r, 2)), "inline public differs");
    char pub0[4096] = "";
    if (r && zp_client_result_public(r, 0)) snprintf(pub0, sizeof pub0, "%s", zp_client_result_public(r, 0));
    zp_client_result_free(&r);
    CHECK(r == NULL, "result_free nulls");

    /* inputs (issue 28): the zkey's folder has circuit.wasm and input-0.json (= witness A's input) */
    {
        char dir[4096], wasm[4200], in0[4200];
        snprintf(dir, sizeof dir, "%s", zkey);
        char *sl = strrchr(dir, '/');
        if (sl) *sl = 0;
        snprintf(wasm, sizeof wasm, "%s/circuit.wasm", sl ? dir : ".");
        snprintf(in0, sizeof in0, "%s/input-0.json", sl ? dir : ".");
        size_t il = 0;
        char *itext = test_slurp(in0, &il);
        CHECK(itext != NULL, "read %s", in0);
        zp_client_job_t *ji = zp_client_job_new(zkey);
        CHECK(zp_client_job_add_input_file(ji, in0) == 0, "add input file: %s", zp_client_job_errmsg(ji));
        CHECK(itext && zp_client_job_add_input(ji, itext, il) == 0, "add input text: %s", zp_client_job_errmsg(ji));
        uint64_t idi = 0;
        CHECK(zp_client_submit(c, ji, &idi, NULL) == ZP_CLIENT_USAGE && strstr(zp_client_errmsg(c), "wasm"),
              "inputs without a wasm: %s", zp_client_errmsg(c));
        CHECK(zp_client_job_add_wtns(ji, wa) == ZP_CLIENT_USAGE, "a witness beside inputs accepted");
        zp_client_job_free(&ji);
        ji = zp_client_job_new(zkey);
        CHECK(zp_client_job_set_wasm(ji, wasm) == 0, "wasm: %s", zp_client_job_errmsg(ji));
        CHECK(zp_client_job_add_input_file(ji, in0) == 0, "add input file: %s", zp_client_job_errmsg(ji));
        CHECK(itext && zp_client_job_add_input(ji, itext, il) == 0, "add input text");
        rc = zp_client_submit(c, ji, &idi, NULL);
        CHECK(rc == ZP_CLIENT_OK, "submit inputs rc %d: %s", rc, zp_client_errmsg(c));
        rc = zp_client_await(c, idi, 300000, &r);
        CHECK(rc == ZP_CLIENT_OK && r && zp_client_result_done(r) == 2, "inputs job rc %d: %s", rc, zp_client_errmsg(c));
        for (uint32_t i = 0; r && i < 2; i++)
            CHECK(zp_client_result_public(r, i) && !strcmp(zp_client_result_public(r, i), pub0),
                  "input partition %u: public differs from the witness's", i);
        zp_client_result_free(&r);
        zp_client_job_free(&ji);
        free(itext);
        ji = zp_client_job_new(zkey);
        CHECK(zp_client_job_set_wasm(ji, "/nonexistent/c.wasm") == ZP_CLIENT_USAGE, "missing wasm accepted");
        CHECK(zp_client_job_add_input(ji, "", 0) == ZP_CLIENT_USAGE, "empty input accepted");
        zp_client_job_free(&ji);
    }

    /* the same request id again: the same job, nothing new */
    uint64_t id2 = 0;
    rc = zp_client_submit(c, j, &id2, &existed);
    CHECK(rc == 0 && id2 == id && existed, "repeat: rc %d id %llu existed %d", rc, (unsigned long long)id2, existed);
    zp_client_job_free(&j);
    CHECK(j == NULL, "job_free nulls");

    /* bad input is caught before anything is sent */
    j = zp_client_job_new(zkey);
    CHECK(zp_client_job_set_request_id(j, "") == ZP_CLIENT_USAGE, "empty request id accepted");
    CHECK(strstr(zp_client_job_errmsg(j), "request id is empty") != NULL, "msg: %s", zp_client_job_errmsg(j));
    CHECK(zp_client_submit(c, j, &id2, NULL) == ZP_CLIENT_USAGE, "submit after a bad request id");
    zp_client_job_free(&j);
    j = zp_client_job_new(zkey);
    char *big = calloc(1, ZP_CLIENT_INLINE_WTNS_MAX + 1);
    CHECK(zp_client_job_add_wtns_data(j, big, ZP_CLIENT_INLINE_WTNS_MAX + 1) == ZP_CLIENT_USAGE, "over-limit inline");
    CHECK(zp_client_job_add_wtns(j, "/nonexistent/w.wtns") == ZP_CLIENT_USAGE, "missing file");
    free(big);
    zp_client_job_free(&j);
    j = zp_client_job_new("/nonexistent/k.zkey");
    zp_client_job_add_wtns(j, wa);
    CHECK(zp_client_submit(c, j, &id2, NULL) == ZP_CLIENT_USAGE, "missing zkey");
    CHECK(strstr(zp_client_errmsg(c), "/nonexistent/k.zkey") != NULL, "msg: %s", zp_client_errmsg(c));
    zp_client_job_free(&j);

    rc = zp_client_await(c, 987654321, 1000, &r);
    CHECK(rc == ZP_CLIENT_REFUSED && r == NULL, "unknown job: rc %d", rc);

    char *text = NULL;
    CHECK(zp_client_status(c, true, &text) == 0 && text && text[0] == '{', "status json");
    zp_client_free(text);
    CHECK(zp_client_metrics(c, &text) == 0 && text && strstr(text, "zkpipe_jobs_submitted_total"), "metrics");
    zp_client_free(text);
    CHECK(zp_client_trace(c, 0, &text) == 0 && text && strstr(text, "traceEvents"), "trace");
    zp_client_free(text);
    zp_client_destroy(&c);
    CHECK(c == NULL, "destroy nulls");

    /* unreachable: a runtime directory without a broker */
    zp_client_t *d = zp_client_new("/nonexistent-zkpipe-rundir");
    zp_client_set_timeout(d, 300);
    CHECK(zp_client_status(d, false, &text) == ZP_CLIENT_UNREACHABLE, "no broker: %s", zp_client_errmsg(d));
    zp_client_destroy(&d);
    free(bytes);
    if (fails) fprintf(stderr, "test_client: %d failure(s)\n", fails);
    else printf("test_client: ok (job %llu, %u progress reports)\n", (unsigned long long)id, n_progress);
    return fails ? 1 : 0;
}
