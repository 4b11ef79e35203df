/* test_common.h - what the unit tests share: a CHECK that counts failures (the test ends with
 * `return test_done("name");`) and a seeded splitmix64 generator (deterministic, so a failure
 * reproduces; each test file picks its own seed with TEST_SEED before including this). */
#ifndef ZP_TEST_COMMON_H
#define ZP_TEST_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TEST_SEED
#define TEST_SEED 0x9e3779b97f4a7c15ULL
#endif

static int fails;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            fails++;                                                                 \
        }                                                                            \
    } while (0)

static uint64_t rng_state = TEST_SEED;
static inline uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* a zp_<F>_random-style source of bytes */
static inline int rnd_cb(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++) ((uint8_t *)buf)[i] = (uint8_t)rnd64();
    return 0;
}
/* a whole file, NUL-terminated (len excludes the NUL); NULL when it cannot be read */
static inline char *test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    if (!b) return NULL;
    b[n] = 0;
    if (len) *len = (size_t)n;
    return b;
}
/* remove a flat directory (the files in it, then it): tests' mkdtemp folders */
#include <dirent.h>
#include <string.h>
#include <unistd.h>
static inline void test_rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1200];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}
#endif
