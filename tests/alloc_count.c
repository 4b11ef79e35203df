/* alloc_count.c - an LD_PRELOAD shim for tests and benchmarks (no ltrace): every heap
 * allocation of at least $ZP_ALLOC_MIN bytes (malloc, calloc, realloc, aligned_alloc,
 * posix_memalign, memalign, valloc) appends "pid bytes\n" to $ZP_ALLOC_LOG (O_APPEND, one
 * write per line, so the processes of a group can share the file). Unset variables: counts
 * nothing. Allocations are passed to glibc's own __libc_* functions; nothing here allocates.
 * Not for sanitizer builds (ASan replaces malloc itself). Used by tests/ipc/stages_limit.sh
 * and doc/readme-stages.md's before/after numbers. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t a, size_t b);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t al, size_t n);

static atomic_int g_state;      /* 0 not set up, 1 setting up, 2 ready */
static int g_fd = -1;
static size_t g_min = SIZE_MAX;

static void setup(void)
{
    int z = 0;
    if (!atomic_compare_exchange_strong(&g_state, &z, 1)) return;
    const char *path = getenv("ZP_ALLOC_LOG"), *min = getenv("ZP_ALLOC_MIN");
    if (path && *path && min && *min) {
        size_t m = 0;
        for (const char *c = min; *c >= '0' && *c <= '9'; c++) m = m * 10 + (size_t)(*c - '0');
        g_min = m;
        g_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    }
    atomic_store(&g_state, 2);
}

static char *utoa(char *end, uint64_t v)
{
    do { *--end = (char)('0' + v % 10); v /= 10; } while (v);
    return end;
}

static void note(size_t n)
{
    if (atomic_load(&g_state) != 2) { setup(); if (atomic_load(&g_state) != 2) return; }
    if (g_fd < 0 || n < g_min) return;
    char buf[48], *e = buf + sizeof buf, *p;
    *--e = '\n';
    p = utoa(e, n);
    *--p = ' ';
    p = utoa(p, (uint64_t)getpid());
    int saved = errno;
    ssize_t r = write(g_fd, p, (size_t)(buf + sizeof buf - p));
    (void)r;
    errno = saved;
}

void *malloc(size_t n) { note(n); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(b && a > SIZE_MAX / b ? SIZE_MAX : a * b); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(n); return __libc_realloc(p, n); }
void *memalign(size_t al, size_t n) { note(n); return __libc_memalign(al, n); }
void *aligned_alloc(size_t al, size_t n) { note(n); return __libc_memalign(al, n); }
void *valloc(size_t n) { note(n); return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n); }
int posix_memalign(void **out, size_t al, size_t n)
{
    if (al < sizeof(void *) || (al & (al - 1))) return EINVAL;
    note(n);
    void *p = __libc_memalign(al, n);
    if (!p && n) return ENOMEM;
    *out = p;
    return 0;
}
