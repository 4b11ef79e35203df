/* test_slurp.h - a whole file into memory, for the unit tests (test_common.h includes it; tests
 * with their own CHECK macros include only this) */
#ifndef ZP_TEST_SLURP_H
#define ZP_TEST_SLURP_H
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* a whole file, NUL-terminated (len excludes the NUL); NULL when it cannot be read */
static inline char *test_slurp(const char *path, size_t *len)
{
    if (len) *len = 0;
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
