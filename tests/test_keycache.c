/* test_keycache.c - shm/keycache.c: the stages' proving-key and r1cs cache.
 * 1. Issue 9 item 1 (use after free): the cache used to keep the caller's path pointer in the
 *    opened zkey; the path is freed (and its memory reused) after the first task, and a later
 *    mismatch on the cached key (a witness of the other curve against the same zkey) printed
 *    that freed memory (under ASan the synthesizer aborted). The error must name the zkey.
 * 2. The same for the r1cs entry, and cache hits return the same entry.
 * 3. A changed file is reloaded.
 * 4. A missing file is an error naming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/util.h"
#include "shm/keycache.h"
#include "test_common.h"

/* a heap copy of s, as the stage harness makes of an ASSIGN's paths */
static char *heap_path(const char *s) { char *p = strdup(s); if (!p) abort(); return p; }
/* free p after scribbling over it, so a dangling reader sees garbage in any build */
static void drop_path(char *p) { memset(p, 'X', strlen(p)); free(p); }

int main(void)
{
    const char *bn = ZP_FIXTURES_DIR "/bn128_chain", *bls = ZP_FIXTURES_DIR "/bls12381_chain";
    char zkey[512], wtns_ok[512], wtns_other[512], r1cs[512];
    snprintf(zkey, sizeof zkey, "%s/circuit.zkey", bn);
    snprintf(wtns_ok, sizeof wtns_ok, "%s/witness-0.wtns", bn);
    snprintf(wtns_other, sizeof wtns_other, "%s/witness-0.wtns", bls);
    snprintf(r1cs, sizeof r1cs, "%s/circuit.r1cs", bn);
    zp_log_init("test");
    zp_keycache_t *kc = zp_keycache_new();
    CHECK(kc != NULL);

    /* 1: first task: matching job */
    zp_keyent_t *e1 = NULL, *e2 = NULL;
    char *p = heap_path(zkey);
    CHECK(zp_keycache_key(kc, p, false, &e1) == 0);
    zp_wtns_t w;
    CHECK(zp_wtns_open(&w, wtns_ok) == 0);
    CHECK(zp_check_wtns_zkey(&w, &e1->zkey) == 0);
    zp_wtns_close(&w);
    drop_path(p);                        /* the task ended */
    /* the allocator hands the same memory to the next task's strings */
    char *reuse = heap_path("/elsewhere/not-the-zkey-at-all.zkey.............................................");
    /* second task: a witness of the other curve against the same (cached) zkey */
    p = heap_path(zkey);
    CHECK(zp_keycache_key(kc, p, false, &e2) == 0);
    CHECK(e2 == e1);
    drop_path(p);
    CHECK(zp_wtns_open(&w, wtns_other) == 0);
    zp_err_clear();
    int rc = zp_check_wtns_zkey(&w, &e2->zkey);
    zp_wtns_close(&w);
    CHECK(rc < 0);
    fprintf(stderr, "mismatch: %s: %s\n", zp_strerror(rc), zp_err_msg());
    CHECK(strstr(zp_err_msg(), zkey) != NULL);   /* names the zkey, not freed memory */
    CHECK(strstr(zp_err_msg(), "XXXX") == NULL && strstr(zp_err_msg(), "elsewhere") == NULL);
    CHECK(strcmp(e2->path, zkey) == 0 && strcmp(e2->zkey.f.path ? e2->zkey.f.path : "", zkey) == 0);
    free(reuse);

    /* 2: r1cs entry owns its path too */
    const zp_r1cs_t *r1 = NULL, *r2 = NULL;
    p = heap_path(r1cs);
    CHECK(zp_keycache_r1cs(kc, p, &r1) == 0);
    drop_path(p);
    p = heap_path(r1cs);
    CHECK(zp_keycache_r1cs(kc, p, &r2) == 0);
    drop_path(p);
    CHECK(r1 == r2 && r1 && r1->f.path && strcmp(r1->f.path, r1cs) == 0);

    /* 3: a changed file (new mtime) is loaded again; unchanged, it is the same entry */
    char tmp[] = "/tmp/zp-test-keycache-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    FILE *in = fopen(zkey, "rb");
    char buf[65536];
    size_t k;
    while (in && (k = fread(buf, 1, sizeof buf, in)) > 0) CHECK(write(fd, buf, k) == (ssize_t)k);
    if (in) fclose(in);
    close(fd);
    zp_keyent_t *c1 = NULL, *c2 = NULL;
    CHECK(zp_keycache_key(kc, tmp, false, &c1) == 0);
    uint64_t id1[4];
    memcpy(id1, c1->file_id, sizeof id1);
    CHECK(zp_keycache_key(kc, tmp, false, &c2) == 0 && c2 == c1);
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    CHECK(utimensat(AT_FDCWD, tmp, ts, 0) == 0);
    CHECK(zp_keycache_key(kc, tmp, false, &c2) == 0 && memcmp(c2->file_id, id1, sizeof id1) != 0);
    CHECK(strcmp(c2->zkey.f.path, tmp) == 0);
    unlink(tmp);

    /* 4: a missing file is an error naming it; preload names the path */
    zp_keyent_t *e3;
    CHECK(zp_keycache_key(kc, "/nonexistent/zp-test.zkey", false, &e3) < 0);
    CHECK(zp_keycache_preload(kc, "/nonexistent/zp-test.zkey") < 0);
    CHECK(strstr(zp_err_msg(), "--preload /nonexistent/zp-test.zkey") != NULL);

    zp_keycache_destroy(&kc);
    CHECK(kc == NULL);
    zp_keycache_destroy(&kc);   /* NULL is fine */
    if (fails) { fprintf(stderr, "test_keycache: %d failure(s)\n", fails); return 1; }
    printf("test_keycache: OK\n");
    return 0;
}
