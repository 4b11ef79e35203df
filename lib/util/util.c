/* util.c - errors, logging, clocks, randomness. See util.h. Tests: tests/test_util.c */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char err_detail[1024];
int zp_log_level = ZP_LOG_INFO;
static char log_role[32] = "zkpipe";

const char *zp_strerror(int err)
{
    switch (err) {
    case 0: return "success";
#define ZP_ERR_CASE(name, num, msg) case ZP_##name: return msg;
        ZP_ERRNO_MAP(ZP_ERR_CASE)
#undef ZP_ERR_CASE
    default: break;
    }
    if (err < 0 && err > -1000) return strerror(-err);
    return "unknown error";
}

int zp_err_set(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_detail, sizeof err_detail, fmt, ap);
    va_end(ap);
    return err;
}

const char *zp_err_msg(void) { return err_detail; }
void zp_err_clear(void) { err_detail[0] = 0; }

void zp_log_init(const char *role)
{
    if (role) snprintf(log_role, sizeof log_role, "%s", role);
    const char *e = getenv("ZP_LOG");
    if (!e) return;
    if (!strcasecmp(e, "debug")) zp_log_level = ZP_LOG_DEBUG;
    else if (!strcasecmp(e, "info")) zp_log_level = ZP_LOG_INFO;
    else if (!strcasecmp(e, "warn")) zp_log_level = ZP_LOG_WARN;
    else if (!strcasecmp(e, "error")) zp_log_level = ZP_LOG_ERROR;
}

void zp_log_write(int level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    char line[2048];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%02d:%02d:%02d.%03ld %s[%d] %s: ", tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, log_role, (int)getpid(),
                     names[level < 0 ? 0 : level > 3 ? 3 : level]);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    if (len + 1 < sizeof line) { line[len++] = '\n'; line[len] = 0; }
    (void)!write(STDERR_FILENO, line, len); /* one write per line: no interleaving between processes */
}

uint64_t zp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t zp_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

int zp_random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len) {
        ssize_t r = getrandom(p, len, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return zp_err_set(-errno, "getrandom: %s", strerror(errno));
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

void zp_sbuf_printf(zp_sbuf_t *s, const char *fmt, ...)
{
    if (s->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(s->p ? s->p + s->n : NULL, s->p ? s->cap - s->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { s->oom = true; return; }
        if (s->p && s->n + (size_t)k < s->cap) { s->n += (size_t)k; return; }
        size_t nc = (s->cap ? s->cap * 2 : 4096) + (size_t)k;
        char *np = realloc(s->p, nc);
        if (!np) { s->oom = true; return; }
        s->p = np;
        s->cap = nc;
    }
}

char *zp_sbuf_take(zp_sbuf_t *s)
{
    char *p = s->p;
    bool oom = s->oom;
    *s = (zp_sbuf_t){0};
    if (oom) { free(p); return NULL; }
    return p ? p : strdup("");
}
