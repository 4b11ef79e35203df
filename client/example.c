/* example.c - the smallest complete libzkpipe-client program (README; installed tests build it
 * with `cc example.c $(pkg-config --cflags --libs zkpipe-client)`). Proves WTNS against ZKEY
 * on the running group and prints the snarkjs proof.json. The same six calls are what a Go
 * (cgo), Rust (bindgen / extern "C") or Python (ctypes) service makes: opaque handles, C
 * strings, integer result codes equal to the `zkpipe` exit statuses.
 *   example ZKEY WTNS [--inline]     exit status: the ZP_CLIENT_* code */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zkpipe-client.h>

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: example ZKEY WTNS [--inline]\n"); return ZP_CLIENT_USAGE; }
    zp_client_t *c = zp_client_new(NULL);             /* $ZP_RUNTIME_DIR or the default */
    zp_client_job_t *j = zp_client_job_new(argv[1]);
    if (!c || !j) return ZP_CLIENT_SYSTEM;
    if (argc > 3 && !strcmp(argv[3], "--inline")) {   /* the witness bytes, no shared storage */
        FILE *f = fopen(argv[2], "rb");
        static unsigned char buf[ZP_CLIENT_INLINE_WTNS_MAX];
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f) fclose(f);
        zp_client_job_add_wtns_data(j, buf, n);
    } else {
        zp_client_job_add_wtns(j, argv[2]);
    }
    uint64_t id = 0;
    int rc = zp_client_submit(c, j, &id, NULL);
    zp_client_result_t *r = NULL;
    if (rc == ZP_CLIENT_OK) rc = zp_client_await(c, id, 120000, &r);
    if (rc == ZP_CLIENT_OK) printf("%s\n", zp_client_result_proof(r, 0));
    else fprintf(stderr, "example: %s: %s\n", zp_client_strerror(rc), zp_client_errmsg(c));
    zp_client_result_free(&r);
    zp_client_job_free(&j);
    zp_client_destroy(&c);
    return rc;
}
