/* driver.c - a stand-in for libFuzzer's main when the compiler is not clang: replay every file
 * of the corpus directories given, then run -runs=N mutations (default 2000) of them, seeded
 * (-seed=S, default 1) so a failure replays. Mutations: bit flips, random bytes, interesting
 * values (0, 0x7f, 0x80, 0xff, 32-bit edges) at random offsets, truncation, insertion, deletion,
 * duplication of a range and splicing two inputs. Inputs are capped at -max_len (default 1 MiB).
 * A harness that aborts is the failure; the last input is written to ./fuzz-crash-<pid> first. */
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"

typedef struct { uint8_t *p; size_t n; } buf_t;
static buf_t *g_corpus;
static size_t g_nc, g_cap;
static const uint8_t *g_cur;
static size_t g_cur_n;

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

static void on_abort(int sig)
{
    char name[64];
    snprintf(name, sizeof name, "fuzz-crash-%d", (int)getpid());
    FILE *f = fopen(name, "wb");
    if (f) { fwrite(g_cur, 1, g_cur_n, f); fclose(f); }
    fprintf(stderr, "driver: signal %d on a %zu-byte input, saved as %s\n", sig, g_cur_n, name);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void add(uint8_t *p, size_t n)
{
    if (g_nc == g_cap) {
        g_cap = g_cap ? 2 * g_cap : 64;
        g_corpus = realloc(g_corpus, g_cap * sizeof *g_corpus);
        if (!g_corpus) abort();
    }
    g_corpus[g_nc++] = (buf_t){p, n};
}

static void load_file(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) return;
    uint8_t *p = malloc(max ? max : 1);
    size_t n = p ? fread(p, 1, max, f) : 0;
    fclose(f);
    if (p) add(p, n);
}

static void load(const char *path, size_t max)
{
    struct stat st;
    if (stat(path, &st) < 0) { fprintf(stderr, "driver: %s: not found\n", path); exit(2); }
    if (!S_ISDIR(st.st_mode)) { load_file(path, max); return; }
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        load_file(p, max);
    }
    if (d) closedir(d);
}

static uint64_t g_rng;
static uint64_t rnd(void) { g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17; return g_rng; }
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static size_t mutate(uint8_t *b, size_t n, size_t cap)
{
    static const uint32_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x7fffffff,
                                           0x80000000u, 0xffffffffu};
    int ops = 1 + (int)below(4);
    for (int k = 0; k < ops; k++) {
        size_t at = below(n), len;
        switch (below(8)) {
        case 0: if (n) b[at] ^= (uint8_t)(1u << below(8)); break;
        case 1: if (n) b[at] = (uint8_t)rnd(); break;
        case 2: {   /* an interesting value, 1/2/4 bytes little-endian */
            uint32_t v = interesting[below(sizeof interesting / sizeof *interesting)];
            size_t w = (size_t)1 << below(3);
            for (size_t i = 0; i < w && at + i < n; i++) b[at + i] = (uint8_t)(v >> (8 * i));
            break;
        }
        case 3: n = below(n + 1); break;                              /* truncate */
        case 4: len = 1 + below(16);                                  /* insert random bytes */
            if (n + len <= cap) { memmove(b + at + len, b + at, n - at); for (size_t i = 0; i < len; i++) b[at + i] = (uint8_t)rnd(); n += len; }
            break;
        case 5: len = below(n - at + 1); memmove(b + at, b + at + len, n - at - len); n -= len; break;   /* delete */
        case 6: {   /* duplicate a range */
            size_t from = below(n), l = below(n - from + 1);
            if (n + l <= cap) { memmove(b + at + l, b + at, n - at); memmove(b + at, b + from + (from >= at ? l : 0), l); n += l; }
            break;
        }
        default: {  /* splice: the tail of another input */
            const buf_t *o = &g_corpus[below(g_nc)];
            size_t from = below(o->n), l = o->n - from;
            if (at + l > cap) l = cap - at;
            memcpy(b + at, o->p + from, l);
            n = at + l;
        }
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    long runs = 2000, seed = 1;
    size_t max = 1u << 20;
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "-runs=", 6)) runs = atol(argv[i] + 6);
        else if (!strncmp(argv[i], "-seed=", 6)) seed = atol(argv[i] + 6);
        else if (!strncmp(argv[i], "-max_len=", 9)) max = (size_t)atol(argv[i] + 9);
        else if (argv[i][0] == '-') { /* other libFuzzer flags: ignored */ }
        else load(argv[i], max);
    }
    signal(SIGABRT, on_abort);
    signal(SIGSEGV, on_abort);
    if (!g_nc) add(calloc(1, 1), 0);
    for (size_t i = 0; i < g_nc; i++) {
        g_cur = g_corpus[i].p; g_cur_n = g_corpus[i].n;
        LLVMFuzzerTestOneInput(g_cur, g_cur_n);
    }
    g_rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)seed * 0xbf58476d1ce4e5b9ull;
    uint8_t *b = malloc(max);
    if (!b) return 1;
    for (long r = 0; r < runs; r++) {
        const buf_t *s = &g_corpus[below(g_nc)];
        size_t n = s->n < max ? s->n : max;
        memcpy(b, s->p, n);
        n = mutate(b, n, max);
        uint8_t *in = malloc(n ? n : 1);   /* exact size: ASan sees every overread */
        memcpy(in, b, n);
        g_cur = in; g_cur_n = n;
        LLVMFuzzerTestOneInput(in, n);
        free(in);
    }
    printf("driver: %zu corpus inputs and %ld mutations (seed %ld): no finding\n", g_nc, runs, seed);
    free(b);
    for (size_t i = 0; i < g_nc; i++) free(g_corpus[i].p);
    free(g_corpus);
    return 0;
}
